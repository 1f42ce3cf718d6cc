"""``spec.schedulingGates`` and the ``gpufleet.io/ungate-at`` annotation that removes them.

The API server's rules (Kubernetes 1.34, ``validateSchedulingGates``, ``ValidatePodCreate``): each
gate name is a qualified name, a name appears once, and a pod with ``spec.nodeName`` cannot carry
gates (``cannot be set until all schedulingGates have been cleared``). A gate is removed by whoever
placed it (a controller, a user); in a scenario ``gpufleet.io/ungate-at`` says when: one duration
from the start for every gate, or a mapping of gate name to duration for each (only gates of
``spec.schedulingGates``). Without it the gates stay and the pod stays Pending (``SchedulingGated``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.objects import items
from gpufleet.kube.pod_annotations import UNGATE_AT
from gpufleet.kube.problems import Reporter
from gpufleet.model.label_syntax import qualified_name_problems
from gpufleet.model.pod import ALL_GATES, Behavior


def scheduling_gates(spec: Mapping[str, Any], behavior: Behavior, report: Reporter) -> tuple[str, ...]:
    """The gate names, in order; problems go to ``report`` (positioned above ``spec`` and ``metadata``)."""
    gates: list[str] = []
    for i, gate in enumerate(items(spec.get("schedulingGates"))):
        name = gate.get("name")
        path = f"spec.schedulingGates[{i}].name"
        if not isinstance(name, str) or not name:
            report.error(path, "Required value")
            continue
        for problem in qualified_name_problems(name):
            report.error(path, f"Invalid value: {name!r}: {problem}")
        if name in gates:
            report.error(f"spec.schedulingGates[{i}]", f"Duplicate value: {name!r}")
        gates.append(name)
    if gates and spec.get("nodeName"):
        report.error("spec.nodeName", "Forbidden: cannot be set until all schedulingGates have been cleared")
    annotation = f"metadata.annotations.{UNGATE_AT}"
    for named, _ in behavior.ungate_at:
        if not gates:
            report.error(annotation, "the pod has no spec.schedulingGates to remove")
            break
        if named != ALL_GATES and named not in gates:
            report.error(annotation, f"{named!r} is not one of spec.schedulingGates {gates}")
    return tuple(gates)
