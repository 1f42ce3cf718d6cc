"""The node lifecycle's section of the fidelity report (``e2e.fidelity.report``, in the shape of
``e2e.fidelity.section``): each case of ``e2e.fidelity.node_failure_cases`` with its note, each side's
timeline (seconds after the kill) and where they differ beyond the tolerances of
``e2e.fidelity.node_failure_run``."""

from __future__ import annotations

from typing import Any

from e2e.fidelity import section
from e2e.fidelity.node_failure_cases import NODE_FAILURE_CASES
from e2e.fidelity.node_failure_run import EARLY_S, FOLLOW_S, LATE_S, NodeFailureResult

_CASES = {c.name: c for c in NODE_FAILURE_CASES}


def _row(r: NodeFailureResult) -> dict[str, Any]:
    return {
        "name": r.name,
        "note": _CASES[r.name].note,
        "agrees": r.agrees,
        "error": r.error or None,
        "differences": list(r.differences),
        "reruns": r.reruns,
        "rerun_why": list(r.rerun_why),
        "kube_controller_manager": section.as_json(r.real),
        "gpufleet": section.as_json(r.gpufleet),
    }


def _nodes_text(side: dict[str, Any] | None) -> str:
    if side is None:
        return "-"
    return "; ".join(
        f"{n['node']}: NotReady {n['not_ready_s']}, NoExecute {n['no_execute_s']}" for n in side["nodes"]
    )


def _pods_text(side: dict[str, Any] | None) -> str:
    if side is None:
        return "-"
    out = []
    for p in side["pods"]:
        made = "" if p["created_s"] is None else f" made {p['created_s']}"
        deleted = "" if p["deleting_s"] is None else f" deleted {p['deleting_s']}"
        out.append(f"{p['pod']} on {p['node']}{made}{deleted}")
    return "; ".join(out)


def _compared(nodes: dict[str, Any]) -> str:
    t = nodes["tolerances_s"]
    return (
        "when each failing node went NotReady after its kubelet stopped (tolerance "
        f"-{t['not_ready_early']:g}/+{t['not_ready_late']:g} s: the Lease renew interval, the monitor "
        "period), then, gpufleet's fault placed where the real NotReady says, its taints, each pod's Ready "
        f"False and deletion, the replacements and where (within {t['after_not_ready']:g} s)"
    )


def _cells(c: dict[str, Any]) -> list[str]:
    real, ours = c["kube_controller_manager"], c["gpufleet"]
    return [
        c["name"],
        c["note"],
        f"{_nodes_text(real)}; {_pods_text(real)}",
        f"{_nodes_text(ours)}; {_pods_text(ours)}",
        section.verdict(c),
    ]


def _notes(cases: list[dict[str, Any]]) -> list[str]:
    """Where the sides differ, and the cases run again (a taint request the real controller dropped on a
    stale cache: ``e2e.fidelity.node_failure_run``)."""
    out = []
    differing = [c for c in cases if c["differences"]]
    if differing:
        out += ["", "Differences:", "", *(f"- {c['name']}: {'; '.join(c['differences'])}" for c in differing)]
    again = [c for c in cases if c.get("reruns")]
    if again:
        out += ["", "Run again:", "", *(f"- {c['name']}: {'; '.join(c['rerun_why'])}" for c in again)]
    return out


NODES: section.Section[NodeFailureResult] = section.Section(
    "Node lifecycle",
    "node lifecycle, taint eviction and ReplicaSet controllers (a second kwok playing the nodes that fail, "
    "killed)",
    "test_node_lifecycle_fidelity.py",
    _row,
    _compared,
    ("case", "note", "kube-controller-manager", "gpufleet", "agrees"),
    _cells,
    tolerances={
        "tolerances_s": {"not_ready_early": EARLY_S, "not_ready_late": LATE_S, "after_not_ready": FOLLOW_S}
    },
    notes=_notes,
    coda=" Times in seconds after the kill.",
)
NODE_LIFECYCLE_NOT_RUN = NODES.not_run
node_failure_summary = NODES.summary
node_failure_markdown = NODES.markdown
