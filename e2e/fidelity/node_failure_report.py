"""The node lifecycle's section of the fidelity report (``e2e.fidelity.report``): each case of
``e2e.fidelity.node_failure_cases`` with its note, each side's timeline (seconds after the kill) and where
they differ beyond the tolerances of ``e2e.fidelity.node_failure_run``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from e2e.components import KUBERNETES_VERSION
from e2e.fidelity.node_failure_cases import NODE_FAILURE_CASES
from e2e.fidelity.node_failure_run import EARLY_S, FOLLOW_S, LATE_S, NodeFailureResult, Timeline

NODE_LIFECYCLE_NOT_RUN = (
    "not run with these cases (`make fidelity` runs and reports them; `make test` checks them in "
    "tests/fidelity/test_node_lifecycle_fidelity.py)"
)


def _side(timeline: Timeline | None) -> dict[str, Any] | None:
    return None if timeline is None else asdict(timeline)


def node_failure_summary(results: list[NodeFailureResult] | None, seconds: float = 0.0) -> dict[str, Any]:
    """The section's JSON: the totals and each case (``None``: the cases did not run)."""
    if results is None:
        return {"cases_compared": 0, "cases_agreeing": 0, "status": NODE_LIFECYCLE_NOT_RUN}
    cases = {c.name: c for c in NODE_FAILURE_CASES}
    rows = [
        {
            "name": r.name,
            "note": cases[r.name].note,
            "agrees": r.agrees,
            "error": r.error or None,
            "differences": list(r.differences),
            "kube_controller_manager": _side(r.real),
            "gpufleet": _side(r.gpufleet),
        }
        for r in results
    ]
    ran = [row for row in rows if not row["error"]]
    return {
        "version": KUBERNETES_VERSION,
        "status": (
            f"run: kube-controller-manager {KUBERNETES_VERSION}'s node lifecycle, taint eviction and "
            "ReplicaSet controllers (a second kwok playing the nodes that fail, killed), "
            f"{len(results)} cases side by side"
        ),
        "tolerances_s": {"not_ready_early": EARLY_S, "not_ready_late": LATE_S, "after_not_ready": FOLLOW_S},
        "run_s": round(seconds, 1),
        "cases_compared": len(ran),
        "cases_agreeing": sum(row["agrees"] for row in ran),
        "cases_failed": len(rows) - len(ran),
        "cases": rows,
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


def node_failure_markdown(section: dict[str, Any], pct: str) -> list[str]:
    """The section's lines in ``fidelity.md`` (``pct``: the agreeing share as the report writes it)."""
    lines = ["## Node lifecycle (kube-controller-manager)", "", section["status"] + ".", ""]
    if "cases" not in section:
        return lines
    t = section["tolerances_s"]
    lines += [
        f"**{section['cases_agreeing']} of {section['cases_compared']} cases agree** ({pct}): when each "
        f"failing node went NotReady after its kubelet stopped (tolerance -{t['not_ready_early']:g}/"
        f"+{t['not_ready_late']:g} s: the Lease renew interval, the monitor period), then, gpufleet's fault "
        f"placed where the real NotReady says, its taints, each pod's Ready False and deletion, the "
        f"replacements and where (within {t['after_not_ready']:g} s); cases failed to run: "
        f"{section['cases_failed']}; {section['run_s']} s. Times in seconds after the kill.",
        "",
        "| case | note | kube-controller-manager | gpufleet | agrees |",
        "|---|---|---|---|---|",
    ]
    for c in section["cases"]:
        verdict = "error" if c["error"] else ("yes" if c["agrees"] else "**no**")
        real, ours = c["kube_controller_manager"], c["gpufleet"]
        lines.append(
            f"| {c['name']} | {c['note']} | {_nodes_text(real)}; {_pods_text(real)} | "
            f"{_nodes_text(ours)}; {_pods_text(ours)} | {verdict} |"
        )
    differing = [c for c in section["cases"] if c["differences"]]
    if differing:
        lines += ["", "Differences:", ""]
        lines += [f"- {c['name']}: {'; '.join(c['differences'])}" for c in differing]
    errors = [c for c in section["cases"] if c["error"]]
    if errors:
        lines += ["", "Failed to run:", ""]
        lines += [f"- {c['name']}: {c['error'].splitlines()[0]}" for c in errors]
    lines.append("")
    return lines
