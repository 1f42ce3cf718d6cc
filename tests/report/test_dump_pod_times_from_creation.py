"""A dump's pod in ``summary.json`` is created at its ``metadata.creationTimestamp`` on the run's clock
(``model.node_readiness.created_on_clock``: negative, before the run), so its pending-to-working, its
stages (``before_snapshot`` first), its job's wait and its Age in ``describe`` count the time it waited
before the snapshot, as kubectl's Age does (``describeNodeResource``:
``translateTimestampSince(pod.CreationTimestamp)``).
A pod already running when the run began started before it, when the dump does not say: it is left out of
the pending-to-working figures and job waits (``running_at_start``)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import pods_by_name, simulated, write
from gpufleet.cli import app
from gpufleet.report import render_html
from gpufleet.report.schema import SummaryInvalid, validate_summary

HEAD = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 10m, startTime: "2026-12-06T05:00:00Z"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}}
"""


def dump(train_created: str = "", serve_created: str = "") -> str:
    """A node whose 8 GPUs a running pod holds for the run's first 2 minutes, an 8-GPU training pod
    pending in the dump, and a server running there since ``serve_created``."""
    train = f", creationTimestamp: {train_created!r}" if train_created else ""
    serve = f", creationTimestamp: {serve_created!r}" if serve_created else ""
    return f"""{HEAD}
---
apiVersion: v1
kind: Node
metadata: {{name: gpu-1}}
status: {{capacity: {{cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: busy, namespace: ml, annotations: {{gpufleet.io/duration: 2m}}}}
spec:
  nodeName: gpu-0
  restartPolicy: Never
  containers: [{{name: c, image: llm, resources: {{limits: {{nvidia.com/gpu: "8"}}}}}}]
status: {{phase: Running}}
---
apiVersion: v1
kind: Pod
metadata: {{name: serve, namespace: ml{serve}}}
spec:
  nodeName: gpu-1
  containers: [{{name: c, image: llm, resources: {{limits: {{nvidia.com/gpu: "8"}}}}}}]
status: {{phase: Running}}
---
apiVersion: v1
kind: Pod
metadata: {{name: train, namespace: ml{train}}}
spec:
  restartPolicy: Never
  containers: [{{name: c, image: llm, resources: {{limits: {{nvidia.com/gpu: "8"}}}}}}]
"""


AN_HOUR_BEFORE = "2026-12-06T04:00:00Z"
A_DAY_BEFORE = "2026-12-05T05:00:00Z"


def test_a_pod_pending_an_hour_before_the_snapshot_that_starts_at_120_s_waited_3720_s(tmp_path: Path) -> None:
    """The training pod, created 3,600 s before the run, binds when the busy pod ends at 120 s: its
    pending to working is 3,720 s, in stages of 3,600 s before the snapshot and 120 s scheduling that add
    up to ``working_s - created_s``; its 8-GPU job waited as long (``job_waits``: bound - created)."""
    summary = simulated(write(tmp_path, dump(train_created=AN_HOUR_BEFORE)))
    train = pods_by_name(summary)["train"]
    assert (train["created_s"], train["bound_s"], train["working_s"]) == (-3600.0, 120.0, 120.0)
    assert train["stages"] == {"before_snapshot": 3600.0, "scheduling": 120.0}
    assert sum(train["stages"].values()) == train["working_s"] - train["created_s"]
    by_workload = {w["workload"]: w for w in summary["latency"]["by_workload"]}
    assert by_workload["Pod/ml/train"]["p50"] == 3720.0
    assert summary["latency"]["pending_to_working_s"]["p99"] == 3720.0
    assert summary["latency"]["stages"]["before_snapshot"]["p99"] == 3600.0
    (eight,) = summary["jobs"]["by_gpus"]
    assert (eight["gpus"], eight["max_wait_s"]) == ("5-8", 3720.0)


def test_a_pod_running_since_a_day_before_the_run_is_left_out_of_pending_to_working_and_job_waits(
    tmp_path: Path,
) -> None:
    """The server created a day before the run was running when it began: it is created at -86,400 s (its
    Age), marked ``running_at_start``, and neither its pending to working nor its job's wait (both unknown:
    before the run) is counted; the busy pod, without a ``creationTimestamp``, counts as before (0 s)."""
    summary = simulated(write(tmp_path, dump(serve_created=A_DAY_BEFORE)))
    serve = pods_by_name(summary)["serve"]
    assert (serve["created_s"], serve.get("running_at_start")) == (-86400.0, True)
    assert serve["stages"] == {"before_snapshot": 86400.0}
    workloads = [w["workload"] for w in summary["latency"]["by_workload"]]
    assert workloads == ["Pod/ml/busy", "Pod/ml/train"]
    assert summary["latency"]["pending_to_working_s"]["count"] == 2
    (eight,) = summary["jobs"]["by_gpus"]
    assert (eight["count"], eight["max_wait_s"]) == (2, 120.0)


def test_a_dump_without_creation_timestamps_counts_from_the_runs_start(tmp_path: Path) -> None:
    """Without ``creationTimestamp``s every pod is created at its arrival (time 0): no ``before_snapshot``
    stage, no ``running_at_start``, the training pod's wait the run's 120 s."""
    summary = simulated(write(tmp_path, dump()))
    pods = pods_by_name(summary)
    assert {name: p["created_s"] for name, p in pods.items()} == {"busy": 0.0, "serve": 0.0, "train": 0.0}
    assert all("running_at_start" not in p and "before_snapshot" not in p["stages"] for p in pods.values())
    assert pods["train"]["stages"] == {"scheduling": 120.0}
    assert summary["latency"]["pending_to_working_s"]["count"] == 3


def _summary_file(tmp_path: Path, text: str) -> Path:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["simulate", *map(str, write(tmp_path, text)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out / "summary.json"


def _ages(output: str) -> dict[str, str]:
    rows = [line.split(maxsplit=2)[1:] for line in output.splitlines() if line.startswith("  ml ")]
    return {name: rest.rsplit("  ", 1)[-1].strip() for name, rest in rows}


def test_describe_node_of_a_saved_summary_ages_a_dump_pod_from_its_creation_timestamp(tmp_path: Path) -> None:
    """``describe node --summary``: at the run's end (10 minutes) the server created a day before is 24h
    old (kubectl's ``duration.HumanDuration``), as ``describe node`` of the simulation says."""
    saved = _summary_file(tmp_path, dump(serve_created=A_DAY_BEFORE))
    result = CliRunner().invoke(app, ["describe", "node", "gpu-1", "--summary", str(saved)])
    assert result.exit_code == 0, result.output
    assert _ages(result.output) == {"serve": "24h"}


def test_describe_pod_of_a_saved_summary_dates_its_failed_scheduling_from_its_creation(
    tmp_path: Path,
) -> None:
    """A dump's pod still pending at the end: its FailedScheduling event (kube-scheduler's, first at its
    creation, ``handleSchedulingFailure``) is first seen 70 minutes before the run's end."""
    text = dump(train_created=AN_HOUR_BEFORE).replace("gpufleet.io/duration: 2m", "gpufleet.io/duration: 1h")
    saved = _summary_file(tmp_path, text)
    result = CliRunner().invoke(app, ["describe", "pod", "ml/train", "--summary", str(saved)])
    assert result.exit_code == 0, result.output
    (event,) = [line for line in result.output.splitlines() if "FailedScheduling" in line]
    assert event.split()[2] == "70m"


def test_describe_pod_of_a_simulated_dump_lists_the_time_before_the_snapshot_first(tmp_path: Path) -> None:
    """The start-up stages from the pod's log begin with the hour it waited before the run (a scenario whose
    pods carry no ``status``: simulated, not read as a kubectl dump)."""
    pod = f"""
apiVersion: v1
kind: Pod
metadata: {{name: train, namespace: ml, creationTimestamp: {AN_HOUR_BEFORE!r}}}
spec:
  containers: [{{name: c, image: llm, resources: {{limits: {{nvidia.com/gpu: "8"}}}}}}]
"""
    result = CliRunner().invoke(app, ["describe", "pod", "ml/train", *map(str, write(tmp_path, HEAD, pod))])
    assert result.exit_code == 0, result.output
    stages = result.output.split("Start-up (gpufleet, simulated):", 1)[1].splitlines()
    assert stages[2].strip().split("  ")[0] == "before the snapshot (since its creation)"
    assert stages[2].split()[-2:] == ["t=-1h", "1h"]


def _broken(summary: dict[str, Any], pod: str, **fields: Any) -> dict[str, Any]:
    changed = copy.deepcopy(summary)
    next(p for p in changed["pods"] if p["name"] == pod).update(fields)
    return changed


def test_the_schema_takes_negative_creation_times_and_refuses_what_it_refused(tmp_path: Path) -> None:
    """``simulated`` validated the summary with ``created_s`` -3,600 and -86,400; a negative stage, a
    ``created_s`` that is no number and a ``running_at_start`` that is no boolean are refused."""
    text = dump(train_created=AN_HOUR_BEFORE, serve_created=A_DAY_BEFORE)
    summary = simulated(write(tmp_path, text))
    validate_summary(_broken(summary, "ml/train", created_s=-7200.5))
    for fields in (
        {"stages": {"before_snapshot": -1.0}},
        {"created_s": "an hour ago"},
        {"running_at_start": "yes"},
    ):
        with pytest.raises(SummaryInvalid):
            validate_summary(_broken(summary, "ml/serve", **fields))


def test_the_pod_tables_note_says_a_negative_time_is_before_the_run_where_one_is(tmp_path: Path) -> None:
    """The pod table's times note: a dump's pod created an hour before the run shows ``-1h`` as created, and
    the note says what a negative time is; a run without one keeps the note as it was."""
    page = render_html(simulated(write(tmp_path, dump(train_created=AN_HOUR_BEFORE))))
    assert '<td class="num">-1h</td>' in page
    assert "a negative time is before it (a dump&#x27;s pod created before the snapshot)" in page
    (tmp_path / "plain").mkdir()
    plain = render_html(simulated(write(tmp_path / "plain", dump())))
    assert "time from the start of the run." in plain and "a negative time" not in plain
