"""The ``DefaultTolerationSeconds`` admission plugin (Kubernetes 1.34,
``plugin/pkg/admission/defaulttolerationseconds/admission.go``): every pod is admitted with a
``NoExecute`` toleration of ``--default-not-ready-toleration-seconds`` for ``node.kubernetes.io/not-ready``
and of ``--default-unreachable-toleration-seconds`` for ``node.kubernetes.io/unreachable`` (300 s each),
unless one of its own tolerations has that key (or none) and the ``NoExecute`` effect (or none)."""

from __future__ import annotations

from gpufleet.model.node import NO_EXECUTE, Toleration
from gpufleet.model.node_readiness import NOT_READY_TAINT_KEY, UNREACHABLE_TAINT_KEY

DEFAULT_TOLERATION_S = 300


def with_default_tolerations(tolerations: tuple[Toleration, ...]) -> tuple[Toleration, ...]:
    """The pod's tolerations as ``DefaultTolerationSeconds`` admits it: the two added after its own, where
    it has none for their key."""
    out = tolerations
    for key in (NOT_READY_TAINT_KEY, UNREACHABLE_TAINT_KEY):
        if not any(t.key in (key, "") and t.effect in (NO_EXECUTE, "") for t in tolerations):
            out += (Toleration(key, "Exists", effect=NO_EXECUTE, toleration_seconds=DEFAULT_TOLERATION_S),)
    return out
