"""Seed 004's starving gang (examples/seed-004-backfill): Coscheduling alone against Backfill.

The same work (three 8-GPU nodes, a small job every 5 minutes for 4 hours, a 2 x 8-GPU gang at
30 minutes) under both schedulers, for several seeds: no outcome rests on a tie. Backfill follows
Slurm's rule (``sched/backfill``): the head job gets a reservation from the running jobs'
declared time limits; others start only beside it or if their own limit ends before it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import pods_by_name, simulated
from gpufleet.kube import load_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seed-004-backfill"
SEEDS = [0, 1, 2, 42]
LAST_SMALL_JOB_S = 4 * 3600.0
GANG_ARRIVES_S = 1800.0
RESERVED_FROM_S = 4800.0
#: how long the gang waits under Coscheduling alone, by seed: its members reject each other at Permit and
#: retry 11 s apart (the 10 s backoff from a whole-second failure ends with its 1-second window), so the
#: retry after the last small jobs' GPUs free falls 5 s later for seed 0
GANG_WAIT_S = {0: 14705.0, 1: 14700.0, 2: 14700.0, 42: 14700.0}


def simulate(config: str, seed: int = 0, until_s: float | None = None) -> dict[str, Any]:
    return simulated([EXAMPLE / "work.yaml", EXAMPLE / config], seed=seed, duration_s=until_s)


def pods(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return pods_by_name(summary)


def gang_class(summary: dict[str, Any]) -> dict[str, Any]:
    (figures,) = [c for c in summary["jobs"]["by_gpus"] if c["gpus"] == "9-16"]
    return figures


@pytest.mark.parametrize("seed", SEEDS)
def test_under_coscheduling_alone_the_gang_waits_until_the_stream_of_small_jobs_stops(seed: int) -> None:
    summary = simulate("coscheduling.yaml", seed)
    p = pods(summary)
    started = max(p["t16-0"]["bound_s"], p["t16-1"]["bound_s"])
    assert started > LAST_SMALL_JOB_S
    assert gang_class(summary)["max_wait_s"] == started - GANG_ARRIVES_S == GANG_WAIT_S[seed]


def test_the_gang_is_told_its_reservation_while_it_waits() -> None:
    p = pods(simulate("backfill.yaml", until_s=2000.0))
    for member in ("t16-0", "t16-1"):
        assert p[member]["phase"] == "Pending"
        assert p[member]["message"].endswith(
            f"; reserved node-a, node-b from {RESERVED_FROM_S:g}s (backfill)"
        )


@pytest.mark.parametrize("seed", SEEDS)
def test_with_backfill_the_gang_starts_by_its_reservation_and_small_jobs_still_backfill(seed: int) -> None:
    summary = simulate("backfill.yaml", seed)
    p = pods(summary)
    started = max(p["t16-0"]["bound_s"], p["t16-1"]["bound_s"])
    assert GANG_ARRIVES_S < started <= RESERVED_FROM_S  # jobs ended before their limits: a little early
    assert gang_class(summary)["max_wait_s"] == started - GANG_ARRIVES_S
    gang_nodes = {p["t16-0"]["node"], p["t16-1"]["node"]}
    backfilled = [
        q for name, q in p.items() if name.startswith("small") and GANG_ARRIVES_S < q["bound_s"] < started
    ]
    # started while the gang waited: beside the reservation, or on its nodes ending before it
    assert any(q["node"] not in gang_nodes for q in backfilled)
    assert any(q["node"] in gang_nodes for q in backfilled)
    assert all(q["node"] not in gang_nodes or q["finished_s"] <= started for q in backfilled)


def test_backfill_trades_small_job_waits_for_the_gangs_and_allocates_more_of_the_run() -> None:
    plain, backfill = simulate("coscheduling.yaml"), simulate("backfill.yaml")
    assert gang_class(plain)["max_wait_s"] == GANG_WAIT_S[0]
    assert gang_class(backfill)["max_wait_s"] == 2700.0
    assert plain["totals"]["gpu_allocated_pct"] == pytest.approx(64, abs=0.5)
    assert backfill["totals"]["gpu_allocated_pct"] == pytest.approx(79, abs=0.5)
    small = {c["gpus"]: c["mean_wait_s"] for c in backfill["jobs"]["by_gpus"]}
    assert small["2-4"] > {c["gpus"]: c["mean_wait_s"] for c in plain["jobs"]["by_gpus"]}["2-4"]


def test_the_same_work_runs_under_both_schedulers() -> None:
    """Only the KubeSchedulerConfiguration differs: Backfill added next to Coscheduling."""
    plain = load_scenario([EXAMPLE / "work.yaml", EXAMPLE / "coscheduling.yaml"])
    backfill = load_scenario([EXAMPLE / "work.yaml", EXAMPLE / "backfill.yaml"])
    assert plain.pods == backfill.pods and plain.jobs == backfill.jobs
    names = [
        [ref.name for ref in p.plugins["multiPoint"].enabled]
        for s in (plain, backfill)
        for p in s.schedulers[0].profiles
    ]
    assert names == [["Coscheduling"], ["Coscheduling", "Backfill"]]
    assert not [w for w in backfill.warnings if "time-limit" in w]
