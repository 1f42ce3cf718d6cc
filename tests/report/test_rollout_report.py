"""A run's Deployment rollouts in the terminal table (a row each) and the HTML report (a table): when the
template changed, when the Deployment was complete and how long it took, or that it was not complete by the
run's end; a run without a Rollout shows none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from tests.conftest import run_simulation

from gpufleet.report.html import render_html
from gpufleet.report.table import summary_table
from gpufleet.sim.summary import build_summary

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/serving/rollout.yaml"


def table_text(summary: dict[str, Any]) -> str:
    console = Console(width=200, record=True)
    console.print(summary_table(summary))
    return console.export_text()


def example() -> dict[str, Any]:
    return build_summary(run_simulation([EXAMPLE]))


def test_the_table_says_when_the_rollout_started_and_how_long_it_took() -> None:
    text = table_text(example())
    assert "rollout serving/vllm" in text
    assert "vllm-v0-8 (RollingUpdate) at 10m · complete at 15m 37s, took 5m 37s" in text


def test_a_rollout_not_complete_by_the_end_is_said_so() -> None:
    summary = example()
    summary["rollouts"][0]["completed_s"] = None
    assert "vllm-v0-8 (RollingUpdate) at 10m · not complete by the end" in table_text(summary)


def test_the_html_report_has_a_rollouts_table() -> None:
    html = render_html(example())
    assert "<h2>Rollouts</h2>" in html
    assert "vllm-78cf9d8788" in html and "5m 37s" in html


def test_a_run_without_a_rollout_shows_none(tmp_path: Path) -> None:
    summary = example()
    del summary["rollouts"]
    assert "rollout" not in table_text(summary)
    assert "Rollouts" not in render_html(summary)
