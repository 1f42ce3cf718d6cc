"""Smoke test of ``python -m bench --quick``: outcomes and printed figures, never times."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[1])  # bench/ lives beside src/, outside the package
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.__main__ import main  # noqa: E402
from bench.scheduling import SINGLE, Case, Result, adaptive_cost, cases, run_case, size_cost, table  # noqa: E402


@pytest.fixture(scope="module")
def results() -> list[Result]:
    return [run_case(case) for case in cases(quick=True)]


def test_quick_cases_bind_every_pod_and_gang(results: list[Result]) -> None:
    assert [r.case.nodes for r in results] == [200] * 9
    for r in results:
        assert r.bound == r.case.total_pods > 0
        assert r.gangs_bound == r.case.gangs
    assert results[-1].gangs_bound == 10


def test_figures_are_positive(results: list[Result]) -> None:
    for r in results:
        assert r.seconds > 0 and r.cpu_seconds > 0 and r.pods_per_s > 0 and r.peak_rss_mib > 0
        assert (r.ms_per_gang > 0) == (r.case.gangs > 0)
    rows = table(results).splitlines()[1:]
    assert len(rows) == len(results)
    for row in rows:
        _, nodes, pods, _, bound, seconds, cpu, per_s, ms_gang, _, peak = row.split()
        assert bound == f"{pods}/{pods}"
        assert all(float(x) > 0 for x in (nodes, pods, seconds, cpu, per_s, peak))
        assert ms_gang == "-" or float(ms_gang) > 0


def test_main_prints_table_and_succeeds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick", "--in-process"]) == 0
    out = capsys.readouterr().out
    assert "1,600/1,600 bound" in out
    assert "10/10 gangs bound" in out
    rates = [float(x.replace(",", "")) for x in re.findall(r"= ([\d,]+) pods/s", out)]
    # 9 scheduler cases (whole GPUs, shares, bare and spread zoned pods: each at 100 % and adaptive;
    # gangs) + the simulator's
    assert len(rates) == 10 and all(rate > 0 for rate in rates)
    assert "3,200/3,200 bound" in out  # half-GPU shares: two per GPU
    assert "1,200/1,200 bound" in out  # 1,200 zoned pods, bare and spread by a Deployment's defaults
    assert re.search(r"default topology spreading: .*[\d.]+x", out)
    assert re.search(r"device level: .* [\d.]+x the time per pod of whole GPUs", out)
    assert "1,600/1,600 bound with a device" in out


def test_each_adaptive_case_is_set_against_the_same_case_at_100_percent(results: list[Result]) -> None:
    lines = adaptive_cost(results)
    assert len(lines) == 4  # whole GPUs, half-GPU shares, bare and spread zoned pods (gangs: adaptive only)
    for line in lines:
        assert re.search(r"[\d,]+ vs [\d,]+ pods per CPU-second at 100%, [\d.]+x the CPU time$", line)


def test_cluster_size_cost_sets_each_size_against_the_smallest_of_the_same_case() -> None:
    """Issue 18: linear in cluster size. One line per case and setting run at several sizes (the pods in
    proportion), each size's CPU a pod against the smallest's; a case at one size, or gangs, gives none."""
    small, large = Case(SINGLE, 50, pods=400, percentage=100), Case(SINGLE, 100, pods=800, percentage=100)
    lone = Case(SINGLE, 100, pods=800)  # adaptive, at one size only
    results = [run_case(c) for c in (large, lone, small)]
    (line,) = size_cost(results)
    assert line.startswith(f"cluster size: {SINGLE}, percentageOfNodesToScore 100%: CPU a pod 50 nodes ")
    figures = re.fullmatch(r".*: CPU a pod 50 nodes ([\d.]+) us, 100 nodes ([\d.]+) us \(([\d.]+)x\)", line)
    assert figures is not None
    first, second, ratio = map(float, figures.groups())
    assert first > 0 and second > 0
    assert ratio == pytest.approx(second / first, abs=0.02)
