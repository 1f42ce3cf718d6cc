"""The month bench (``bench/month.py``) at a small size: its scenario holds what it says, and under faults
at a thousand times the default rates every invariant of ``--check-invariants`` holds after every
event; outcomes and printed figures, never times."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])  # bench/ lives beside src/, outside the package
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.month import (  # noqa: E402
    CHECKPOINT_S,
    GANG_PODS,
    MonthResult,
    describe_month,
    run_month,
    scenario,
)

from gpufleet.model.faults import DEFAULT_RATES  # noqa: E402


def test_month_scenario_is_the_cluster_its_load_and_the_default_fault_rates() -> None:
    sc = scenario(scale=0.1, days=7)
    assert len(sc.nodes) == 20 and [(p.name, p.max) for p in sc.node_pools] == [("h100", 80)]
    training = [j for j in sc.jobs if j.name.startswith("train-")]
    gangs = [j for j in sc.jobs if j.name.startswith("pretrain-")]
    assert len(training) == 2_100 and len(gangs) == 1
    assert all(j.template.behavior.checkpoint_interval_s == CHECKPOINT_S for j in sc.jobs)
    assert gangs[0].parallelism == GANG_PODS and sc.pod_groups["research/pretrain-0"].min_member == GANG_PODS
    assert sc.fault_model is not None
    assert sc.fault_model.rates_for("NVIDIA-H100-80GB-HBM3") == {
        k: rate for k, (rate, _) in DEFAULT_RATES.items()
    }
    orders = [w.created.order for w in sc.workloads()]
    assert len(set(orders)) == len(orders)  # a distinct creation order for every workload


def test_month_under_frequent_faults_keeps_every_invariant_and_prints_its_figures() -> None:
    result = run_month(scale=0.02, days=0.5, fault_factor=1000, check_invariants=True)
    assert isinstance(result, MonthResult)
    assert result.faults > 0 and result.events > 0 and result.succeeded > 0
    assert result.goodput is not None and 0 < result.goodput <= 1
    line = describe_month(result)
    assert "1000x the default fault rates" in line
    assert re.search(r"[\d,]+ events = [\d,]+ events/s, peak RSS \d+ MiB; \d+ faults, goodput [\d.]+ %", line)
