"""PriorityClass objects and a pod's priority, as the ``Priority`` admission plugin sets it.

Mirrors ``plugin/pkg/admission/priority``: a pod's ``spec.priorityClassName`` names a class
(the scenario's, or the built-in ``system-cluster-critical`` = 2000000000 and
``system-node-critical`` = 2000001000); without a name, the class marked ``globalDefault``
applies, else priority 0; an unknown name is rejected with
``no PriorityClass with name X was found``. ``preemptionPolicy`` comes from the pod, else
from its class. Unlike admission, a pod that already carries ``spec.priority`` (every pod
of a ``kubectl get -o json`` snapshot does) keeps it, so snapshots load without their
classes. PriorityClass validation follows ``pkg/apis/scheduling/validation``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpufleet.kube.problems import Reporter, invalid, required, unsupported
from gpufleet.model.workloads import PriorityClass

PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
#: ``scheduling.HighestUserDefinablePriority``
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PREFIX = "system-"
BUILT_IN = {
    "system-cluster-critical": PriorityClass("system-cluster-critical", 2_000_000_000),
    "system-node-critical": PriorityClass("system-node-critical", 2_000_001_000),
}


def preemption_policy(value: object, report: Reporter, path: str) -> str | None:
    """``value`` if it is a valid policy; None when absent or (after reporting it) invalid."""
    if value is None or value in PREEMPTION_POLICIES:
        return value
    report.error(path, unsupported(value, PREEMPTION_POLICIES))
    return None


def priority_class(name: str, body: Mapping[str, Any], report: Reporter) -> PriorityClass:
    """A ``scheduling.k8s.io/v1`` PriorityClass, checked as ``ValidatePriorityClass`` does."""
    value = body.get("value")
    if not isinstance(value, int):
        report.error("value", required())
        value = 0
    built_in = BUILT_IN.get(name)
    if name.startswith(SYSTEM_PREFIX) and (built_in is None or built_in.value != value):
        report.error(
            "metadata.name", invalid(name, "priority class names with 'system-' prefix are reserved")
        )
    elif built_in is None and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        limit = HIGHEST_USER_DEFINABLE_PRIORITY
        report.error("value", invalid(value, f"maximum allowed value of a user defined priority is {limit}"))
    policy = preemption_policy(body.get("preemptionPolicy"), report, "preemptionPolicy")
    return PriorityClass(name, value, bool(body.get("globalDefault")), policy or PREEMPTION_POLICIES[0])


@dataclass(frozen=True)
class Priority:
    value: int
    class_name: str | None
    preemption_policy: str


class Priorities:
    """Resolves pods' priorities against the scenario's classes and the built-in ones."""

    def __init__(self, classes: Mapping[str, PriorityClass]) -> None:
        self._classes = {**BUILT_IN, **classes}
        self._default = next((c for c in classes.values() if c.global_default), None)

    def resolve(self, spec: Mapping[str, Any], report: Reporter) -> Priority:
        """``spec`` is a pod spec; ``report`` is positioned at it."""
        name = spec.get("priorityClassName") or None
        given = spec.get("priority")
        own_policy = preemption_policy(spec.get("preemptionPolicy"), report, "preemptionPolicy")
        cls = self._default if name is None else self._classes.get(name)
        if name is not None and cls is None and given is None:
            report.error("priorityClassName", f"no PriorityClass with name {name} was found")
        value = given if given is not None else (cls.value if cls else 0)
        policy = own_policy or (cls.preemption_policy if cls else PREEMPTION_POLICIES[0])
        return Priority(value, name or (cls.name if cls else None), policy)
