"""The report's view of Deployment rollouts (``summary["rollouts"]``, ``gpufleet.sim.rollouts``): a terminal
row per rollout and a small HTML table, each saying when the template changed, when the Deployment was
complete (``DeploymentComplete``: every replica updated and available) and how long that took, or that it
was not complete by the run's end. Durations read as people read them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.report._format import human_duration
from gpufleet.report.page import table

HEAD = ["Deployment", "Rollout", "ReplicaSet", "strategy", "started", "complete", "took"]


def rollout_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``rollout <ns/deployment>``: ``<rollout> (<strategy>) at <t> · complete at <t>, took <d>``."""
    rows = []
    for r in summary.get("rollouts") or ():
        started = float(r["started_s"])
        done = r.get("completed_s")
        end = "not complete by the end" if done is None else _complete(started, float(done))
        text = f"{r['rollout']} ({r['strategy']}) at {human_duration(started)} · {end}"
        rows.append((f"rollout {r['deployment']}", text))
    return rows


def rollout_section(summary: Mapping[str, Any]) -> str:
    """The HTML table of the rollouts, empty where the run had none."""
    rollouts = summary.get("rollouts") or ()
    rows = []
    for r in rollouts:
        started, done = float(r["started_s"]), r.get("completed_s")
        rows.append(
            [
                str(r["deployment"]),
                str(r["rollout"]),
                str(r["replica_set"]),
                str(r["strategy"]),
                human_duration(started),
                "not by the end" if done is None else human_duration(float(done)),
                "" if done is None else human_duration(float(done) - started),
            ]
        )
    return table(HEAD, rows, css="narrow", numeric_from=4) if rows else ""


def _complete(started: float, done: float) -> str:
    return f"complete at {human_duration(done)}, took {human_duration(done - started)}"
