"""The ``DefaultTolerationSeconds`` admission plugin (Kubernetes 1.34,
``plugin/pkg/admission/defaulttolerationseconds/admission.go``): every pod is admitted with a
``NoExecute`` toleration of ``--default-not-ready-toleration-seconds`` for ``node.kubernetes.io/not-ready``
and of ``--default-unreachable-toleration-seconds`` for ``node.kubernetes.io/unreachable`` (300 s each),
unless one of its own tolerations has that key (or none) and the ``NoExecute`` effect (or none). The two
flags (``admission.go``'s ``flag.Int64``, unchecked: 0 or less, the pod is deleted at once, as
``getMinTolerationTime`` reads it) are a ``DefaultTolerationSeconds``, set by a Simulation's
``spec.apiServer``."""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.model.node import NO_EXECUTE, Toleration
from gpufleet.model.node_readiness import NOT_READY_TAINT_KEY, UNREACHABLE_TAINT_KEY

DEFAULT_TOLERATION_S = 300


@dataclass(frozen=True)
class DefaultTolerationSeconds:
    """``--default-not-ready-toleration-seconds`` and ``--default-unreachable-toleration-seconds``."""

    not_ready_s: int = DEFAULT_TOLERATION_S
    unreachable_s: int = DEFAULT_TOLERATION_S


def with_default_tolerations(
    tolerations: tuple[Toleration, ...], defaults: DefaultTolerationSeconds = DefaultTolerationSeconds()
) -> tuple[Toleration, ...]:
    """The pod's tolerations as ``DefaultTolerationSeconds`` admits it: the two added after its own, where
    it has none for their key."""
    out = tolerations
    for key, seconds in (
        (NOT_READY_TAINT_KEY, defaults.not_ready_s),
        (UNREACHABLE_TAINT_KEY, defaults.unreachable_s),
    ):
        if not any(t.key in (key, "") and t.effect in (NO_EXECUTE, "") for t in tolerations):
            out += (Toleration(key, "Exists", effect=NO_EXECUTE, toleration_seconds=seconds),)
    return out
