"""``gpufleet whatif``: a snapshot, and the snapshot with changes, simulated forward side by side.

Both sides start from the snapshot's moment as time 0 (bound pods stay where they are; pods without
``gpufleet.io/duration`` run on) and run for the same duration (``--for``; else the snapshot's
Simulation ``spec.duration``; else 1 h) with the same seed (``--seed``; else the snapshot's
``spec.seed``). The unchanged side is what ``gpufleet simulate`` makes of the snapshot with that
duration; the changed side applies the change files (``whatif_changes``). Each side's figures are
read from its ``summary.json`` (``gpufleet.summary/v1``), over the pods the snapshot holds unbound
and unfinished ("its pending pods"): which start (``bound_s``, ``working_s``) or are still pending at
the end (with the scheduler's message), percentiles (nearest rank, as the summary's) of the time to
start (and to working) from each pod's creation (``created_s``: a pod with a ``creationTimestamp``
before the snapshot counts the time it waited before it, on both sides), GPUs allocated at the end,
nodes added (every node that was not in the snapshot), and cost: the summary's ``totals.cost`` over the
nodes of pools with a price, ``None`` ("no price") when no node had one, and how many nodes had none (a
snapshot's Nodes have no price).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gpufleet.collector import collector_paused
from gpufleet.experiments.whatif_changes import apply_changes, set_duration
from gpufleet.kube.documents import Document, manifest_files, read_documents
from gpufleet.kube.load import scenario_from_documents
from gpufleet.kube.objects import mapping
from gpufleet.kube.problems import Location, Problems
from gpufleet.model.scenario import Scenario
from gpufleet.report import finished_summary
from gpufleet.report.latency import pending_to_working, percentiles
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

SCHEMA = "gpufleet.whatif/v1"
DEFAULT_FOR = "1h"
SIDES = ("baseline", "changed")
_SIMULATION = ("gpufleet.io/v1alpha1", "Simulation")
#: Where the synthesised Simulation (the duration) comes from, should a message ever name it.
_FOR = Location("--for", -1)


@dataclass(frozen=True)
class Side:
    """One side: its scenario, as loaded, and its finished summary."""

    scenario: Scenario
    summary: dict[str, Any]


def load_sides(
    snapshot: Sequence[Path], changes: Sequence[Path], duration: str | None
) -> tuple[Scenario, Scenario]:
    """The unchanged and the changed scenario; ``ScenarioError`` lists what is wrong with either (the
    unchanged side's first). The files are read once: the unchanged side is made of the snapshot's
    documents, the changed side of its own copies of them (``apply_changes``) and the change files'. The
    collector is paused throughout: the documents and both scenarios live to the command's end."""
    with collector_paused():
        read = Problems()
        documents, sources = read_documents([*snapshot, *changes], read)
        snapshot_files = manifest_files(snapshot)
        first_change = len(snapshot_files)  # (the change files follow the snapshot's in the reading)
        chosen: list[object] = []

        def baseline(documents: list[Document]) -> None:
            given = next(
                (
                    mapping(d.body.get("spec")).get("duration")
                    for d in documents
                    if (d.body.get("apiVersion"), d.body.get("kind")) == _SIMULATION
                ),
                None,
            )
            chosen.append(duration or given or DEFAULT_FOR)
            set_duration(documents, chosen[0], _FOR)

        named = set(snapshot_files)
        unchanged = scenario_from_documents(
            [d for d in documents if d.location.file_index < first_change],
            [s for s in sources if s in named],
            read.of_files_before(first_change),
            edit=baseline,
        )
        roots = [p.resolve() for p in changes]

        @cache  # (once per file: a snapshot has tens of thousands of documents)
        def is_change_file(source: str) -> bool:
            path = Path(source).resolve()
            return any(path == root or root in path.parents for root in roots)

        def from_change(document: Document) -> bool:
            return is_change_file(document.location.source)

        changed = scenario_from_documents(
            documents,
            sources,
            read.of_files_before(),
            edit=lambda docs: apply_changes(docs, from_change, chosen[0], _FOR),
        )
    return unchanged, changed


def simulate(scenario: Scenario, seed: int) -> dict[str, Any]:
    """The finished summary of ``scenario``, as ``gpufleet simulate`` writes it (``ProfileError``)."""
    sim = Simulation(scenario, seed=seed)
    sim.run()
    return finished_summary(build_summary(sim))


def pending_keys(snapshot: Scenario) -> list[str]:
    """The snapshot's pods that are neither bound nor finished (``ns/name``), in document order."""
    return [b.pod.key for b in snapshot.pods if b.bound_node is None and b.phase == "Pending"]


def outcome(record: Mapping[str, Any] | None) -> dict[str, Any]:
    """What became of one pod on one side: ``started`` (bound), ``pending`` at the end, another
    phase it ended in, or ``absent`` (a change deleted it)."""
    if record is None:
        return {"state": "absent"}
    bound = record["bound_s"]
    state = "started" if bound is not None else "pending" if record["phase"] == "Pending" else "ended"
    return {
        "state": state,
        "phase": record["phase"],
        "reason": record["reason"],
        "node": record["node"],
        "bound_s": bound,
        "working_s": record["working_s"],
        "time_to_start_s": None if bound is None else round(bound - record["created_s"], 3),
        "time_to_working_s": pending_to_working(record),
        "message": record["message"] if state == "pending" else None,
    }


def side_figures(
    summary: Mapping[str, Any], keys: Sequence[str], snapshot_nodes: set[str], prices: Mapping[str, float]
) -> dict[str, Any]:
    """One side's key figures over the snapshot's pending pods ``keys``, and its cluster."""
    records = {p["name"]: p for p in summary["pods"]}
    mine = [records[k] for k in keys if k in records]
    started = [p for p in mine if p["bound_s"] is not None]
    to_start = percentiles([p["bound_s"] - p["created_s"] for p in started])
    to_work = percentiles([t for t in map(pending_to_working, mine) if t is not None])
    nodes = summary["nodes"]
    unpriced = sum(1 for n in nodes if not prices.get(n["pool"] or "", 0.0))
    totals = summary["totals"]
    return {
        "pods_started": len(started),
        "pods_pending_at_end": sum(1 for p in mine if p["phase"] == "Pending" and p["deleted_s"] is None),
        "pods_absent": len(keys) - len(mine),
        "time_to_start_p50_s": to_start["p50"],
        "time_to_start_p95_s": to_start["p95"],
        "time_to_working_p50_s": to_work["p50"],
        "time_to_working_p95_s": to_work["p95"],
        "pods_preempted": sum(1 for p in summary["pods"] if p["reason"] == "Preempted"),
        "final_states": totals["final_states"],
        "gpus_total": totals["gpus_total"],
        "gpus_allocated": totals["gpus_allocated"],
        "gpu_hours_allocated": totals["gpu_hours_allocated"],
        "gpu_hours_working": totals["gpu_hours_working"],
        "nodes_added": sum(1 for n in nodes if n["name"] not in snapshot_nodes),
        "nodes_at_end": sum(1 for n in nodes if n["deleted_s"] is None),
        "cost": totals["cost"] if unpriced < len(nodes) else None,
        "nodes_without_price": unpriced,
    }


def whatif_document(
    snapshot: Sequence[Path],
    changes: Sequence[Path],
    seed: int,
    sides: Mapping[str, Side],
) -> dict[str, Any]:
    """``whatif.json``'s content: both sides' key figures and the per-pod table."""
    base = sides["baseline"].scenario
    keys = pending_keys(base)
    nodes = {n.name for n in base.nodes}
    figures = {}
    for name, side in sides.items():
        prices = {p.name: p.price_per_hour for p in side.scenario.node_pools}
        figures[name] = side_figures(side.summary, keys, nodes, prices)
    records = {name: {p["name"]: p for p in side.summary["pods"]} for name, side in sides.items()}
    pods = []
    for key in keys:
        row: dict[str, Any] = {"pod": key, "gpus": records["baseline"][key]["gpus"]}
        row.update({name: outcome(records[name].get(key)) for name in sides})
        row["differs"] = row["baseline"] != row["changed"]
        pods.append(row)
    return {
        "schema": SCHEMA,
        "snapshot": [str(p) for p in snapshot],
        "changes": [str(p) for p in changes],
        "seed": seed,
        "duration_s": base.simulation.duration_s,
        "pending_in_snapshot": len(keys),
        **figures,
        "pods": pods,
        "warnings": {name: side.scenario.warnings for name, side in sides.items()},
    }
