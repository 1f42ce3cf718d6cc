"""``gpufleet describe job``: kubectl's ``describe job`` layout (``k8s.io/kubectl`` v0.34.10
``pkg/describe/describe.go`` ``describeJob``) for a simulated Job, a saved summary.json and a Job of a kubectl
dump, with the Events kube-controller-manager's Job controller records (``SuccessfulCreate``,
``SuccessfulDelete``, ``Completed``, the failure's reason: ``recordJobFinished``), then gpufleet's part: the
conditions with their times, each pod, and why a pending pod waits."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from conftest import write
from gpufleet.cli import app
from gpufleet.report._format import MISSING
from gpufleet.report.describe_job import capped_indexes, selector_text

runner = CliRunner()

SCENARIO = """
{apiVersion: gpufleet.io/v1alpha1, kind: Simulation, metadata: {name: describe-job}, spec: {duration: 10m}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status: {capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml, labels: {team: vision}}
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 3
  ttlSecondsAfterFinished: 60
  template:
    metadata: {annotations: {gpufleet.io/duration: 60s}}
    spec:
      restartPolicy: Never
      containers:
      - {name: trainer, image: pytorch, resources: {limits: {nvidia.com/gpu: "2"}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: crash, namespace: ml}
spec:
  backoffLimit: 0
  template:
    metadata: {annotations: {gpufleet.io/duration: 30s, gpufleet.io/exit-code: "3"}}
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: broken, resources: {limits: {nvidia.com/gpu: "1"}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: huge, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: big, resources: {limits: {nvidia.com/gpu: "16"}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: crash, namespace: other}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: x}
"""

DUMP = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: gpu-0}
  status:
    capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "1"}
    allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "1"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: sweep
    namespace: ml
    uid: 0b5e
    ownerReferences:
    - {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: sweep, uid: 7c1d, controller: true}
  spec:
    parallelism: 2
    completions: 2
    completionMode: NonIndexed
    suspend: false
    backoffLimit: 6
    selector:
      matchLabels: {batch.kubernetes.io/controller-uid: 0b5e}
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: c, image: sweep, resources: {limits: {nvidia.com/gpu: "1"}, requests: {nvidia.com/gpu: "1"}}}
  status: {startTime: "2026-12-01T10:00:00Z", active: 2, ready: 1, succeeded: 0, failed: 1}
- apiVersion: v1
  kind: Pod
  metadata:
    name: sweep-abcde
    namespace: ml
    creationTimestamp: "2026-12-01T10:00:05Z"
    ownerReferences: [{apiVersion: batch/v1, kind: Job, name: sweep, uid: 0b5e, controller: true}]
  spec:
    nodeName: gpu-0
    restartPolicy: Never
    containers:
    - {name: c, image: sweep, resources: {limits: {nvidia.com/gpu: "1"}, requests: {nvidia.com/gpu: "1"}}}
  status:
    phase: Running
    containerStatuses:
    - name: c
      image: sweep
      imageID: ""
      ready: true
      restartCount: 0
      state: {running: {startedAt: "2026-12-01T10:00:09Z"}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: sweep-fghij
    namespace: ml
    creationTimestamp: "2026-12-01T10:00:05Z"
    ownerReferences: [{apiVersion: batch/v1, kind: Job, name: sweep, uid: 0b5e, controller: true}]
  spec:
    restartPolicy: Never
    containers:
    - {name: c, image: sweep, resources: {limits: {nvidia.com/gpu: "1"}, requests: {nvidia.com/gpu: "1"}}}
  status:
    phase: Pending
    conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]
- apiVersion: v1
  kind: Event
  metadata: {name: sweep.1, namespace: ml}
  involvedObject: {kind: Job, name: sweep, namespace: ml}
  reason: SuccessfulCreate
  type: Normal
  message: "Created pod: sweep-fghij"
  source: {component: job-controller}
  lastTimestamp: "2026-12-01T10:00:05Z"
"""


def describe(*args: str) -> str:
    result = runner.invoke(app, ["describe", "job", *args])
    assert result.exit_code == 0, result.output
    return str(result.output)


def field(output: str, label: str) -> str:
    line = next(line for line in output.splitlines() if line.startswith(f"{label}:"))
    return line.split(":", 1)[1].strip()


def rows(output: str, title: str) -> dict[str, list[str]]:
    """The rows of the table under ``title`` by their first cell (cells split on two spaces or more)."""
    lines = output.split(title, 1)[1].splitlines()[2:]
    out = {}
    for line in lines:
        if not line.startswith("  ") or not line.strip():
            break
        cells = [c.strip() for c in line.strip().split("  ") if c.strip()]
        out.setdefault(cells[0], cells[1:])
    return out


def events(output: str) -> list[list[str]]:
    lines = output.split("Events (ages at the end of the run):", 1)[1].splitlines()[3:]
    out = []
    for line in lines:
        if not line.startswith("  "):
            break
        out.append([c.strip() for c in line.strip().split("  ") if c.strip()])
    return out


def test_an_indexed_job_that_completed_shows_describe_jobs_fields_and_its_completed_indexes(
    tmp_path: Path,
) -> None:
    """``describeJob``: the spec after defaults (Suspend false, Backoff Limit 6), TTL Seconds After
    Finished, Start Time, Completed At, Duration, Pods Statuses and Completed Indexes."""
    output = describe("ml/train", *map(str, write(tmp_path, SCENARIO)))
    assert field(output, "Labels") == "team=vision"
    assert field(output, "Parallelism") == "3"
    assert field(output, "Completions") == "3"
    assert field(output, "Completion Mode") == "Indexed"
    assert field(output, "Suspend") == "false"
    assert field(output, "Backoff Limit") == "6"
    assert field(output, "TTL Seconds After Finished") == "60"
    assert field(output, "Start Time") == "t=0 s (simulated)"
    assert field(output, "Completed At") == "t=1m (simulated)"
    assert field(output, "Duration") == "60s"  # duration.HumanDuration: seconds below 2 minutes
    assert field(output, "Pods Statuses") == "0 Active (0 Ready) / 3 Succeeded / 0 Failed"
    assert field(output, "Completed Indexes") == "0-2"
    assert "batch.kubernetes.io/controller-uid=<not modelled" in field(output, "Selector")
    assert "Image:      pytorch" in output
    assert "nvidia.com/gpu:  2" in output


def test_a_simulated_jobs_events_are_the_job_controllers(tmp_path: Path) -> None:
    """``RealPodControl.CreatePods``' ``SuccessfulCreate`` "Created pod: NAME" per pod, then
    ``recordJobFinished``: ``Completed`` "Job completed" for a Job that completed; for one that failed a
    Warning with its Failed condition's reason and message."""
    paths = list(map(str, write(tmp_path, SCENARIO)))
    done = events(describe("ml/train", *paths))
    assert [e[1] for e in done] == ["SuccessfulCreate"] * 3 + ["Completed"]
    assert {e[-1] for e in done[:3]} == {
        "Created pod: train-0",
        "Created pod: train-1",
        "Created pod: train-2",
    }
    assert done[-1] == ["Normal", "Completed", "9m", "job-controller", "Job completed"]
    failed = events(describe("ml/crash", *paths))
    assert failed[-1] == [
        "Warning",
        "BackoffLimitExceeded",
        "9m30s",
        "job-controller",
        "Job has reached the specified backoff limit",
    ]


def test_gpufleet_lists_each_pod_with_its_exit_code_and_the_conditions_with_their_times(
    tmp_path: Path,
) -> None:
    output = describe("ml/crash", *map(str, write(tmp_path, SCENARIO)))
    conditions = rows(output, "  Conditions:")
    assert conditions["FailureTarget"][:3] == ["True", "BackoffLimitExceeded", "t=30 s"]
    assert conditions["Failed"][:3] == ["True", "BackoffLimitExceeded", "t=30 s"]
    pods = rows(output, "  Pods (simulated):")
    assert pods["crash-0"] == ["gpu-0", "t=0 s", "t=30 s", "Failed", "3", "0"]


def test_a_pending_pod_of_the_job_says_why_it_waits(tmp_path: Path) -> None:
    output = describe("ml/huge", *map(str, write(tmp_path, SCENARIO)))
    assert field(output, "Pods Statuses") == "1 Active (0 Ready) / 0 Succeeded / 0 Failed"
    assert "huge-0 is pending: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu." in output


def test_a_job_its_ttl_deleted_says_when(tmp_path: Path) -> None:
    """``ttlSecondsAfterFinished: 60``: the Job completed at 60 s is deleted at 120 s; its pods' ends stay
    when they finished."""
    output = describe("ml/train", *map(str, write(tmp_path, SCENARIO)))
    assert "the Job was deleted at t=2m (ttlSecondsAfterFinished)" in output
    assert rows(output, "  Pods (simulated):")["train-0"][2] == "t=1m"
    assert "the Job was deleted at t=2m (ttlSecondsAfterFinished)" in describe(
        "ml/train", *map(str, write(tmp_path, SCENARIO))
    )


def test_a_job_from_a_saved_summary_says_what_summary_json_does_not_keep(tmp_path: Path) -> None:
    paths = list(map(str, write(tmp_path, SCENARIO)))
    out = tmp_path / "out"
    assert runner.invoke(app, ["simulate", *paths, "--out", str(out)]).exit_code == 0
    output = describe("ml/train", "--summary", str(out / "summary.json"))
    assert field(output, "Parallelism") == "<not in summary.json>"
    assert field(output, "Labels") == "<not in summary.json>"
    assert field(output, "Completed Indexes") == "0-2"
    assert field(output, "Pods Statuses") == "0 Active (0 Ready) / 3 Succeeded / 0 Failed"
    assert [e[1] for e in events(output)][-1] == "Completed"
    assert "summary.json keeps the Job's status and pods, not its spec" in output


def test_a_job_of_a_kubectl_dump_is_described_as_the_api_has_it(tmp_path: Path) -> None:
    """The dump's spec, status, selector, owner and Events; its pods as the dump has them, and its pending
    pod explained."""
    output = describe("sweep", *map(str, write(tmp_path, DUMP)))
    assert field(output, "Namespace") == "ml"
    assert field(output, "Selector") == "batch.kubernetes.io/controller-uid=0b5e"
    assert field(output, "Controlled By") == "JobSet/sweep"
    assert field(output, "Start Time") == "2026-12-01T10:00:00Z"
    assert field(output, "Pods Statuses") == "2 Active (1 Ready) / 0 Succeeded / 1 Failed"
    assert "Completed Indexes" not in output  # a NonIndexed Job
    assert "SuccessfulCreate" in output and "Created pod: sweep-fghij" in output
    pods = rows(output, "  Pods (ages now):")
    assert pods["sweep-abcde"] == ["gpu-0", "2026-12-01T10:00:05Z", MISSING, "Running", MISSING, "0"]
    assert "sweep-fghij is pending: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu." in output


def test_json_output_holds_the_record(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["describe", "job", "ml/train", *map(str, write(tmp_path, SCENARIO)), "-o", "json"]
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["spec"]["completion_mode"] == "Indexed"
    assert record["completed_indexes"] == "0-2"
    assert [c["type"] for c in record["gpufleet"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]


def test_an_unknown_or_ambiguous_job_is_an_error_with_exit_status_2(tmp_path: Path) -> None:
    paths = list(map(str, write(tmp_path, SCENARIO)))
    unknown = runner.invoke(app, ["describe", "job", "nope", *paths])
    assert unknown.exit_code == 2
    assert "no Job named nope in any namespace" in unknown.output
    both = runner.invoke(app, ["describe", "job", "crash", *paths])
    assert both.exit_code == 2
    assert "2 Jobs have this name, give one as NS/NAME: ml/crash, other/crash" in both.output
    assert "Traceback" not in both.output


def test_selector_text_is_label_selector_as_selectors_string() -> None:
    """``metav1.LabelSelectorAsSelector(...).String()``: requirements sorted by key."""
    selector = {
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["y", "x"]},
            {"key": "gpu", "operator": "Exists"},
            {"key": "spot", "operator": "DoesNotExist"},
            {"key": "tier", "operator": "NotIn", "values": ["dev"]},
        ],
    }
    assert selector_text(selector) == "a=1,b=2,gpu,!spot,tier notin (dev),zone in (x,y)"
    assert selector_text(None) == "<none>"


def test_completed_indexes_are_capped_as_kubectl_caps_them() -> None:
    """``capIndexesListOrNone``: past 50 characters the list is cut at the next comma, ``,...`` added."""
    long = ",".join(str(i) for i in range(0, 80, 2))
    capped = capped_indexes(long)
    assert capped.endswith(",...") and len(capped.removesuffix(",...")) >= 50
    assert capped_indexes("") == "<none>"
    assert capped_indexes("0-9") == "0-9"
