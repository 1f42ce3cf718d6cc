"""A dump's pod's bound and finish times in ``summary.json``, on the run's clock (negative: before the run,
``model.node_readiness.created_on_clock``; ``kube.pod_times``):

- bound: its ``PodScheduled=True`` condition's ``lastTransitionTime``, which the binding subresource stamps as
  it binds (Kubernetes v1.34 ``pkg/registry/core/pod/storage/storage.go`` ``setPodNodeAndMetadata``:
  ``podutil.UpdatePodCondition`` sets it now), not ``status.startTime``, which the kubelet sets later, at its
  first status of the pod (``pkg/kubelet/status/status_manager.go`` ``updateStatusInternal``); without the
  condition (a pod written with ``spec.nodeName``), its ``startTime``. A running-at-start pod's stages split
  at it: pending (``scheduling``) from its creation, then ``before_snapshot`` to the run's start;
- a Succeeded or Failed pod: created at its ``creationTimestamp`` and finished at its containers' latest
  ``state.terminated.finishedAt`` (``getFinishedTime``, ``pkg/controller/job/backoff_utils.go``).
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from conftest import pods_by_name, simulated, write
from gpufleet.cli import app

HEAD = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 10m, startTime: "2026-12-06T05:00:00Z"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}}
"""


def pod(name: str, status: str, created: str = "2026-12-05T05:00:00Z", node: str = "gpu-1") -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ml, creationTimestamp: "{created}"}}
spec:
  nodeName: {node}
  restartPolicy: Never
  containers:
  - {{name: a, image: llm, resources: {{limits: {{nvidia.com/gpu: "4"}}}}}}
  - {{name: b, image: llm}}
status:
{status}"""


#: bound a day less an hour before the run (PodScheduled), taken up by the kubelet 2 s later (startTime)
SERVING = """  phase: Running
  startTime: "2026-12-05T06:00:02Z"
  conditions:
  - {type: PodScheduled, status: "True", lastTransitionTime: "2026-12-05T06:00:00Z"}
"""


def test_a_pod_running_since_a_day_before_is_bound_at_its_pod_scheduled_time_and_its_stages_split_there(
    tmp_path: Path,
) -> None:
    """Created 86,400 s before the run, bound 82,800 s before it (``PodScheduled``, not the kubelet's
    ``startTime`` 2 s later): ``bound_s`` -82,800, and its stages 3,600 s pending (``scheduling``) then
    82,800 s before the snapshot, adding up to its arrival less its creation; still left out of
    pending-to-working."""
    summary = simulated(write(tmp_path, HEAD, pod("serve", SERVING)))
    serve = pods_by_name(summary)["serve"]
    assert (serve["created_s"], serve["bound_s"], serve.get("running_at_start")) == (-86400.0, -82800.0, True)
    assert serve["stages"] == {"scheduling": 3600.0, "before_snapshot": 82800.0}
    assert summary["latency"]["pending_to_working_s"]["count"] == 0


def test_a_pod_without_a_pod_scheduled_condition_is_bound_at_its_start_time(tmp_path: Path) -> None:
    """A pod written with ``spec.nodeName`` never went through a binding: its ``startTime`` says when."""
    status = '  phase: Running\n  startTime: "2026-12-05T06:00:02Z"\n'
    serve = pods_by_name(simulated(write(tmp_path, HEAD, pod("serve", status))))["serve"]
    assert serve["bound_s"] == -82798.0


def test_a_pending_pod_bound_before_the_run_waits_from_its_binding(tmp_path: Path) -> None:
    """A Pending pod bound 60 s before the run (its containers not started): its job's wait is bound less
    created (``job_waits``: 3,540 s, not 3,600 s to its arrival)."""
    status = (
        "  phase: Pending\n  conditions:\n"
        '  - {type: PodScheduled, status: "True", lastTransitionTime: "2026-12-06T04:59:00Z"}\n'
    )
    summary = simulated(write(tmp_path, HEAD, pod("train", status, created="2026-12-06T04:00:00Z")))
    train = pods_by_name(summary)["train"]
    assert (train["created_s"], train["bound_s"]) == (-3600.0, -60.0)
    assert train["stages"]["scheduling"] == 3540.0 and train["stages"]["before_snapshot"] == 60.0
    (four,) = summary["jobs"]["by_gpus"]
    assert four["max_wait_s"] == 3540.0


FINISHED = """  phase: Succeeded
  conditions:
  - {type: PodScheduled, status: "True", lastTransitionTime: "2026-12-06T03:00:05Z"}
  containerStatuses:
  - name: a
    image: llm
    imageID: llm@sha256:0
    ready: false
    restartCount: 0
    state: {terminated: {exitCode: 0, reason: Completed, finishedAt: "2026-12-06T04:00:00Z"}}
  - name: b
    image: llm
    imageID: llm@sha256:0
    ready: false
    restartCount: 0
    state: {terminated: {exitCode: 0, reason: Completed, finishedAt: "2026-12-06T04:10:00Z"}}
"""


def test_a_succeeded_pod_is_created_at_its_creation_and_finished_at_its_latest_container(
    tmp_path: Path,
) -> None:
    """Created two hours before the run, bound 5 s later, its containers ended 60 and 50 minutes before it:
    ``created_s`` -7,200, ``bound_s`` -7,195, ``finished_s`` -3,000 (the later ``finishedAt``), not 0."""
    done = pods_by_name(simulated(write(tmp_path, HEAD, pod("done", FINISHED, "2026-12-06T03:00:00Z"))))[
        "done"
    ]
    assert (done["phase"], done["created_s"], done["bound_s"], done["finished_s"]) == (
        "Succeeded",
        -7200.0,
        -7195.0,
        -3000.0,
    )


def test_a_bound_time_that_is_no_time_exits_2_naming_its_field(tmp_path: Path) -> None:
    status = '  phase: Running\n  startTime: "yesterday"\n'
    files = write(tmp_path, HEAD, pod("serve", status))
    result = CliRunner().invoke(app, ["validate", *map(str, files)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "(Pod/ml/serve): status.startTime: Invalid value" in result.output


def test_describe_pod_marks_the_binding_after_the_pending_time_it_ends(tmp_path: Path) -> None:
    """The start-up rows of a pod created an hour before the run and bound at 2 minutes: the time before the
    snapshot, pending from 0, then the binding at 2m (it came before the pending row)."""
    busy = """
apiVersion: v1
kind: Pod
metadata: {name: busy, namespace: ml, annotations: {gpufleet.io/duration: 2m}}
spec:
  nodeName: gpu-1
  restartPolicy: Never
  containers: [{name: c, image: llm, resources: {limits: {nvidia.com/gpu: "8"}}}]
"""
    train = """
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml, creationTimestamp: "2026-12-06T04:00:00Z"}
spec:
  restartPolicy: Never
  containers: [{name: c, image: llm, resources: {limits: {nvidia.com/gpu: "8"}}}]
"""
    result = CliRunner().invoke(
        app, ["describe", "pod", "ml/train", *map(str, write(tmp_path, HEAD, busy, train))]
    )
    assert result.exit_code == 0, result.output
    rows = result.output.split("Start-up (gpufleet, simulated):", 1)[1].splitlines()[2:5]
    assert [r.split("  ")[1].strip() for r in rows] == [
        "before the snapshot (since its creation)",
        "pending (scheduling)",
        "bound to gpu-1",
    ]
