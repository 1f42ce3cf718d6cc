"""The faults of a run in the terminal table (two rows), the HTML report (one table) and the figures
``gpufleet sweep`` and ``compare`` keep (goodput in percent, MTTR); a run without a FaultModel shows none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from tests.conftest import simulated, write
from tests.sim.test_faults import faults, job, pool

from gpufleet.experiments.scenario_runs import scenario_figures
from gpufleet.report.html import render_html
from gpufleet.report.table import summary_table


def run(tmp_path: Path, *extra: str) -> dict[str, Any]:
    return simulated(write(tmp_path, pool(), job("train", 2, 8, "4h", checkpoint="1h", gang=True), *extra))


def table_text(summary: dict[str, Any]) -> str:
    console = Console(width=200, record=True)
    console.print(summary_table(summary))
    return console.export_text()


def test_the_table_shows_the_faults_mttr_and_goodput(tmp_path: Path) -> None:
    summary = run(tmp_path, faults("{at: 150m, node: h100-1, gpu: 0, kind: xid-79}"))
    text = table_text(summary)
    assert (
        "1 fault (xid-node-reboot 1) · 1 pod hit · 1.33 GPU-hours out of service · 8 GPU-hours of work lost"
        in text
    )
    goodput = 100 * summary["faults"]["totals"]["goodput"]
    assert f"MTTR 10m (1 recovered) · goodput {goodput:.1f} %" in text


def test_the_html_report_has_one_fault_table(tmp_path: Path) -> None:
    summary = run(tmp_path, faults("{at: 150m, node: h100-1, gpu: 0, kind: xid-79}"))
    html = render_html(summary)
    assert "<h2>Faults</h2>" in html
    assert "<td>2h 30m</td><td>h100-1</td><td>xid-node-reboot (XID 79)</td><td>reboot</td>" in html


def test_the_fault_table_says_when_kubernetes_acted_on_a_node_whose_kubelet_went_down(tmp_path: Path) -> None:
    """A reboot (XID 79): the node lifecycle controller set it NotReady and tainted it 50 s after the fault
    (``--node-monitor-grace-period``), the taint eviction controller deleted its pods 300 s later
    (``DefaultTolerationSeconds``), and they were gone when the kubelet came back, 10 minutes after."""
    summary = run(tmp_path, faults("{at: 150m, node: h100-1, gpu: 0, kind: xid-79}"))
    html = render_html(summary)
    assert "<th>Kubernetes after the fault</th>" in html
    assert "NotReady 50 s · NoExecute taint 50 s · pods deleted 5m 50s · pods gone 10m</td>" in html


def test_the_fault_table_has_no_kubernetes_column_where_no_kubelet_went_down(tmp_path: Path) -> None:
    """A GPU reset (XID 48's response): the node stays Ready; no column for steps that never happened."""
    summary = run(tmp_path, faults("{at: 150m, node: h100-1, gpu: 0, kind: xid-48}"))
    assert "Kubernetes after the fault" not in render_html(summary)


def test_sweeps_keep_goodput_in_percent_and_mttr(tmp_path: Path) -> None:
    summary = run(tmp_path, faults("{at: 150m, node: h100-1, gpu: 0, kind: xid-79}"))
    figures = scenario_figures(summary)
    assert figures["faults"] == 1 and figures["mttr_s"] == 600
    assert figures["goodput_pct"] == round(100 * summary["faults"]["totals"]["goodput"], 4)


def test_a_run_without_a_fault_model_shows_no_faults(tmp_path: Path) -> None:
    summary = run(tmp_path)
    assert "faults" not in summary
    assert "fault" not in table_text(summary)
    assert "<h2>Faults</h2>" not in render_html(summary)
    assert scenario_figures(summary)["goodput_pct"] is None


def test_the_table_shows_the_gpu_hours_spent_writing_checkpoints(tmp_path: Path) -> None:
    """Two 8-GPU ranks, 4 h of work, a checkpoint every hour taking 6 min: 3 saves each, 4.8 GPU-hours."""
    training = job("train", 2, 8, "4h", checkpoint="1h", gang=True).replace(
        "gpufleet.io/checkpoint-interval: 1h",
        "gpufleet.io/checkpoint-interval: 1h, gpufleet.io/checkpoint-save: 6m",
    )
    summary = simulated(write(tmp_path, pool(), training, faults()))
    assert summary["faults"]["totals"]["checkpoint_save_gpu_hours"] == 4.8
    assert "· 4.8 GPU-hours writing checkpoints" in table_text(summary)
