"""What a serving team reads: request waits, timeouts and drops per Traffic in summary.json and the
terminal table, the simulated DCGM_FI_DEV_GPU_UTIL, pending-to-working per workload, jobs that are
jobs (not Deployment replicas), ``--select`` / ``--namespace``, and compare's per-variant figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.report.latency import workload_figures
from gpufleet.report.serving_rows import request_rows, selection_rows, workload_rows

EXAMPLE = Path(__file__).parents[2] / "examples" / "serving" / "bounded-queue.yaml"


def simulate(out: Path, *args: str, example: Path = EXAMPLE) -> tuple[Any, dict[str, Any]]:
    result = CliRunner().invoke(app, ["simulate", str(example), "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    return result, json.loads((out / "summary.json").read_text())


def test_requests_that_time_out_or_find_the_queue_full_are_counted_and_shown(tmp_path: Path) -> None:
    result, summary = simulate(tmp_path)
    chat = summary["traffic"]["serving/vllm"]
    # 10/s for 40 min plus 30/s more for 10 min; nobody serves for the first 73 s, and only the last
    # 30 s of arrivals (300) may wait; from 10m, 16/s beyond capacity fill the 600-request queue in
    # 37.5 s, then 16/s are refused for 562.5 s
    assert chat["requests"] == 42000.0
    assert chat["timed_out"] == 430.0 and chat["dropped"] == 9000.0
    assert chat["requests"] == chat["served"] + chat["timed_out"] + chat["dropped"]
    assert chat["p99_wait_s"] == 30.0  # the timeout
    assert chat["p95_wait_s"] == 25.0  # 600 waiting for 24/s
    assert 0 < chat["dcgm_gpu_util_pct"] < 100
    assert summary["totals"]["dcgm_gpu_util_pct"] == chat["dcgm_gpu_util_pct"]  # the only Traffic
    assert len(chat["timeline"]) == len(summary["timeline"]["t_s"])
    assert chat["timeline"][0] == [0.0, 10.0, 0.0, None, 0.0, None]
    assert [900.0, 40.0, 600.0, 25.0, 2.0, 100.0] in chat["timeline"]
    rows = request_rows(summary)
    # half the served requests met no queue (16,627 of 32,570: 10/s once both replicas drained the first
    # backlog until 10m, and from 43 s after 20m, 600 drained at 24 - 10 = 14/s): p50 0 s
    assert rows[0] == (
        "requests serving/vllm",
        "wait p50 0 s · p95 25 s · p99 30 s · timed out 430 · dropped 9,000 of 42,000",
    )
    assert rows[1] == (
        "DCGM_FI_DEV_GPU_UTIL (simulated)",
        f"{chat['dcgm_gpu_util_pct']:.1f} % (mean over the serving GPUs)",
    )
    assert "requests serving/vllm" in result.output and "DCGM_FI_DEV_GPU_UTIL (simulated)" in result.output


def test_percentiles_per_workload_and_deployment_replicas_are_not_jobs(tmp_path: Path) -> None:
    result, summary = simulate(tmp_path)
    by = {w["workload"]: w for w in summary["latency"]["by_workload"]}
    assert sorted(by) == [
        "DaemonSet/monitoring/dcgm-exporter",
        "Deployment/serving/vllm",
        "Job/training/finetune",
    ]
    vllm = by["Deployment/serving/vllm"]
    assert (vllm["namespace"], vllm["count"], vllm["p50"]) == ("serving", 2, 73.0)
    assert vllm["stages"]["model_load"] == {"p50": 32.0, "p95": 32.0}  # 16 GB at 1 GB/s shared by two
    assert by["DaemonSet/monitoring/dcgm-exporter"]["p95"] == 1.0
    # the overall p50 mixes them; the wait by job size counts the fine-tuning Job alone
    assert summary["latency"]["pending_to_working_s"]["count"] == 5
    assert [(c["gpus"], c["count"]) for c in summary["jobs"]["by_gpus"]] == [("2-4", 1)]
    pods = {p["name"]: p["workload"] for p in summary["pods"]}
    assert pods["training/finetune-0"] == "Job/training/finetune"
    assert workload_rows(summary) == [  # slowest p95 first
        ("pending → working Deployment/serving/vllm", "p50 1m 13s · p95 1m 13s (2 pods)"),
        ("pending → working Job/training/finetune", "p50 1m 1s · p95 1m 1s (1 pod)"),
        ("pending → working DaemonSet/monitoring/dcgm-exporter", "p50 1 s · p95 1 s (2 pods)"),
    ]
    assert "Job/training/finetune" in result.output


def test_select_restricts_the_pod_figures_to_the_selected_pods(tmp_path: Path) -> None:
    result, summary = simulate(tmp_path / "vllm", "--select", "app in (vllm)")
    assert summary["selection"] == "app in (vllm)"
    assert {p["workload"] for p in summary["pods"]} == {"Deployment/serving/vllm"}
    assert summary["latency"]["pending_to_working_s"]["p50"] == 73.0  # the DaemonSet no longer sets it
    assert summary["totals"]["gpus_total"] == 8.0  # the cluster's figures stay whole
    assert "serving/vllm" in summary["traffic"]
    assert selection_rows(summary) == [
        ("selected pods", "app in (vllm) (GPUs, nodes and cost: the whole cluster)")
    ]
    assert "selected pods" in result.output
    _, training = simulate(tmp_path / "training", "-n", "training", "-l", "!app")
    assert training["selection"] == "namespace training, !app"
    assert [p["name"] for p in training["pods"]] == ["training/finetune-0"]
    assert training["traffic"] == {} and training["totals"]["dcgm_gpu_util_pct"] is None


@pytest.mark.parametrize(
    ("selector", "problem"),
    [
        ("app in", "--select: app in: unable to parse requirement: found '', expected: '('"),
        ("app=vllm,", "--select: app=vllm,: unable to parse requirement: found '', expected: identifier"),
        (
            "a b",
            "--select: a b: unable to parse requirement: found 'b', expected: "
            "'=', '!=', '==', 'in', 'notin', '>' or '<'",
        ),
    ],
)
def test_a_selector_that_does_not_parse_exits_2_in_one_line(
    tmp_path: Path, selector: str, problem: str
) -> None:
    result = CliRunner().invoke(app, ["simulate", str(EXAMPLE), "--out", str(tmp_path), "--select", selector])
    assert result.exit_code == 2
    assert result.output.strip() == problem
    assert not (tmp_path / "summary.json").exists()


@pytest.mark.parametrize(
    ("field", "problem"),
    [
        ("timeoutSeconds: 0", "spec.timeoutSeconds: Invalid value: 0: must be greater than 0"),
        ("maxQueue: -1", "spec.maxQueue: Invalid value: -1: must be greater than or equal to 0"),
    ],
)
def test_bad_timeout_or_queue_bound_exits_2_naming_the_field(
    tmp_path: Path, field: str, problem: str
) -> None:
    key = field.split(":")[0]
    scenario = tmp_path / "scenario.yaml"
    text = EXAMPLE.read_text()
    scenario.write_text(
        "\n".join(f"  {field}" if line.startswith(f"  {key}:") else line for line in text.split("\n"))
    )
    result = CliRunner().invoke(app, ["simulate", str(scenario), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.strip() == f"{scenario}: document 4 (Traffic/serving/chat): {problem}"


def test_compare_gives_each_variant_makespan_job_waits_and_request_figures(tmp_path: Path) -> None:
    unbounded = tmp_path / "unbounded.yaml"
    unbounded.write_text(EXAMPLE.read_text().replace("  timeoutSeconds: 30\n  maxQueue: 600\n", ""))
    out = tmp_path / "out"
    args = ["compare", "--out", str(out), "--scenario", str(EXAMPLE), "--scenario", str(unbounded)]
    result = CliRunner().invoke(app, [*args, "--seeds", "0", "--jobs", "1", "-n", "training"])
    assert result.exit_code == 0, result.output
    document = json.loads((out / "compare.json").read_text())
    runs = {run["variant"]: run for run in document["runs"]}
    bounded = runs["bounded-queue"]
    assert bounded["selection"] == "namespace training"
    # the fine-tuning Job: pulled and started in 61 s, computes 25 min
    assert bounded["makespan_s"] == 61.0 + 25 * 60
    assert bounded["p95_wait_s_jobs_2-4"] == 0.0 and bounded["pending_to_working_p95_s"] == 61.0
    assert bounded["request_p95_wait_s"] is None  # the training namespace has no Traffic
    whole = CliRunner().invoke(app, [*args, "--seeds", "0", "--jobs", "1", "--out", str(tmp_path / "all")])
    assert whole.exit_code == 0, whole.output
    runs = {r["variant"]: r for r in json.loads((tmp_path / "all" / "compare.json").read_text())["runs"]}
    assert (runs["bounded-queue"]["requests_dropped"], runs["bounded-queue"]["requests_timed_out"]) == (
        9000,
        430,
    )
    assert runs["bounded-queue"]["requests_failed_pct"] == pytest.approx(100 * 9430 / 42000, abs=1e-4)
    assert runs["unbounded"]["requests_failed_pct"] == 0.0
    assert runs["unbounded"]["request_p95_wait_s"] > runs["bounded-queue"]["request_p95_wait_s"]
    text = " ".join(whole.output.split())
    assert "requests dropped+timed out 22.5±0.0 %" in text and "makespan 1561.0±0.0 s" in text


def test_select_on_a_trace_replay_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "compare",
            "--out",
            str(tmp_path),
            "--nodes",
            "n.csv",
            "--pods",
            "p.csv",
            "--policy",
            "fgd",
            "-l",
            "a=b",
        ],
    )
    assert result.exit_code == 2
    assert (
        "--select, --namespace: select the pods of scenarios (--scenario, --grid), not of trace replays"
        in (result.output)
    )


def test_pods_whose_record_names_no_workload_are_left_out_of_the_per_workload_figures() -> None:
    measured = {"name": "serving/vllm-abc", "created_s": 0.0, "working_s": 30.0, "stages": {}}
    owned = {**measured, "name": "serving/vllm-0", "workload": "Deployment/serving/vllm"}
    assert [w["workload"] for w in workload_figures([measured, owned])] == ["Deployment/serving/vllm"]
