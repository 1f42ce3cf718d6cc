"""The ReplicaSet controller's section of the fidelity report (``e2e.fidelity.report``, in the shape of
``e2e.fidelity.section``): each case of ``e2e.fidelity.replicaset_cases`` with its note, the pods each side
left and made, and whether they agree."""

from __future__ import annotations

from typing import Any

from e2e.fidelity import section
from e2e.fidelity.replicaset_cases import REPLICASET_CASES
from e2e.fidelity.replicaset_run import ReplicaSetResult

_CASES = {c.name: c for c in REPLICASET_CASES}


def _row(r: ReplicaSetResult) -> dict[str, Any]:
    return {
        "name": r.name,
        "kind": _CASES[r.name].kind,
        "note": _CASES[r.name].note,
        "agrees": r.agrees,
        "error": r.error or None,
        "stepped_s": [round(t, 2) for t in r.stepped_s],
        "kube_controller_manager": section.as_json(r.real),
        "gpufleet": section.as_json(r.gpufleet),
        "real_s": round(r.real_s, 2),
    }


def _outcome_text(side: dict[str, Any] | None) -> str:
    if side is None:
        return "-"
    left = ", ".join(f"{node or 'pending'}/{step}" for node, step in side["left"]) or "none"
    return f"left {left}; made {side['made']}"


def _cells(c: dict[str, Any]) -> list[str]:
    real, ours = c["kube_controller_manager"], c["gpufleet"]
    return [c["name"], c["kind"], c["note"], _outcome_text(real), _outcome_text(ours), section.verdict(c)]


REPLICASETS: section.Section[ReplicaSetResult] = section.Section(
    "ReplicaSet controller",
    "ReplicaSet and Deployment controllers (kube-scheduler placing, kwok playing the pods)",
    "test_replicaset_controller_fidelity.py",
    _row,
    lambda _: (
        "the pods left (each as its node, then the steps made before its creation) and how many were made"
    ),
    ("case", "kind", "note", "kube-controller-manager", "gpufleet", "agrees"),
    _cells,
)
REPLICASET_CONTROLLER_NOT_RUN = REPLICASETS.not_run
replicaset_summary = REPLICASETS.summary
replicaset_markdown = REPLICASETS.markdown
