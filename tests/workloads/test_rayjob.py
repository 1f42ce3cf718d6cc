"""KubeRay's RayJob (``gpufleet.workloads.rayjob``): its reader, the cluster and submitter Job it
creates and when, how it ends and what goes then (ray-operator/controllers/ray/rayjob_controller.go
``Reconcile``, ``handleShutdownAfterJobFinishes``, ``checkBackoffLimitAndUpdateStatusIfNeeded``,
common/job.go ``GetDefaultSubmitterContainer``, utils/validation.go ``ValidateRayJobSpec``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import NODE_N0, only_controller, pods_by_name, simulated, write
from gpufleet.cli import app
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.workloads.job_backoff import MAX_POD_FAILURE_BACKOFF_S
from gpufleet.workloads.rayjob import RayJobController
from shared_files import UPSTREAM

ROOT = Path(__file__).resolve().parents[2]


CLUSTER_SPEC = """
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.46.0
            resources: {limits: {cpu: "2", memory: 8Gi}}
    workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      minReplicas: 2
      maxReplicas: 2
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.46.0
            resources: {limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: "1"}}"""


def rayjob(extra: str = "", duration: str = "10m", cluster: bool = True) -> str:
    spec = f"  rayClusterSpec:{CLUSTER_SPEC}" if cluster else ""
    return f"""
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rj
  namespace: ml
  annotations: {{gpufleet.io/duration: {duration}}}
spec:
  entrypoint: python train.py
{extra}
{spec}
"""


def run(tmp_path: Path, *texts: str, duration_s: float | None = None) -> dict[str, dict[str, Any]]:
    return pods_by_name(simulated(write(tmp_path, NODE_N0, *texts), duration_s=duration_s))


def controller(tmp_path: Path, text: str) -> RayJobController:
    return only_controller(write(tmp_path, NODE_N0, text), RayJobController)


def test_the_cluster_comes_first_and_the_submitter_once_it_is_ready(tmp_path: Path) -> None:
    """``GenerateRayClusterName``: ``<rayjob>-<5 chars>``; the submitter Job ``<rayjob>`` is created once
    the cluster is Ready (requeue every 3 s), its pod named as gpufleet names a Job's (``<job>-0``) with
    the default submitter's requests (cpu 500m, memory 200Mi)."""
    c = controller(tmp_path, rayjob())
    pods = c.wanted([])
    assert c.cluster_name is not None and c.cluster_name.startswith("rj-") and len(c.cluster_name) == 8
    assert [p.name.rsplit("-", 1)[0] for p in pods] == [f"{c.cluster_name}-head"] + [
        f"{c.cluster_name}-gpu-worker"
    ] * 2
    assert {(p.owner.kind, p.owner.name) for p in pods if p.owner} == {("RayCluster", c.cluster_name)}
    assert c.status == "Initializing" and c.submitter is None
    run_pods = run(tmp_path, rayjob(), duration_s=60)
    submitter = run_pods["rj-0"]
    assert submitter["created_s"] == 3.0 and submitter["phase"] == "Running"
    assert {p["created_s"] for n, p in run_pods.items() if n != "rj-0"} == {0.0}


def test_the_job_ends_with_its_submitter_and_shutdown_deletes_the_cluster_after_the_ttl(
    tmp_path: Path,
) -> None:
    """The submitter runs ``gpufleet.io/duration`` (10 min from 3 s); the next requeue finds the Job
    complete (603 s); ``ttlSecondsAfterFinished`` 60 later the cluster is deleted: its pods get SIGTERM
    (30 s grace). The submitter Job is kept."""
    pods = run(tmp_path, rayjob("  shutdownAfterJobFinishes: true\n  ttlSecondsAfterFinished: 60"))
    assert pods["rj-0"]["phase"] == "Succeeded" and pods["rj-0"]["finished_s"] == 603.0
    cluster = [p for n, p in pods.items() if n != "rj-0"]
    assert len(cluster) == 3 and {p["reason"] for p in cluster} == {"Deleted"}
    assert {p["deleted_s"] for p in cluster} == {663.0 + 30.0}


def test_without_shutdown_the_cluster_runs_on(tmp_path: Path) -> None:
    pods = run(tmp_path, rayjob(), duration_s=1200)
    assert pods["rj-0"]["phase"] == "Succeeded"
    assert {p["phase"] for n, p in pods.items() if n != "rj-0"} == {"Running"}


def test_http_mode_has_no_submitter_pod_and_ends_after_its_duration(tmp_path: Path) -> None:
    extra = "  submissionMode: HTTPMode\n  shutdownAfterJobFinishes: true"
    pods = run(tmp_path, rayjob(extra, duration="5m"))
    assert "rj-0" not in pods and len(pods) == 3
    assert {p["deleted_s"] for p in pods.values()} == {303.0 + 30.0}


def test_active_deadline_fails_the_job_and_its_cluster_goes(tmp_path: Path) -> None:
    """``checkActiveDeadlineAndUpdateStatusIfNeeded``: Failed (DeadlineExceeded) past the deadline from
    the job's start; the submitter, whose cluster is gone, goes with it."""
    extra = "  shutdownAfterJobFinishes: true\n  activeDeadlineSeconds: 120"
    pods = run(tmp_path, rayjob(extra, duration="1h"))
    assert {p["deleted_s"] for p in pods.values()} == {120.0 + 30.0}


def test_a_failed_job_is_retried_on_a_new_cluster_within_backoff_limit(tmp_path: Path) -> None:
    """``checkBackoffLimitAndUpdateStatusIfNeeded``: Failed with failed < backoffLimit + 1 is Retrying:
    the cluster and submitter are deleted, a new cluster under a new name comes; past it, Failed."""
    c = controller(tmp_path, rayjob("  backoffLimit: 1\n  shutdownAfterJobFinishes: true"))
    first = c.cluster_name
    ready = {key: _Ready() for key in (p.key for p in c.wanted([]))}
    c.sync(0.0, ready)
    assert c.status == "Running" and c.submitter is not None
    (submitter,) = c.submitter.wanted([])
    for attempt in range(3):  # the submitter Job's backoffLimit 2: its third failure fails it
        c.finished(submitter, succeeded=False)
        assert c.status == ("Failed" if attempt == 2 else "Running")
        if attempt < 2:
            c.tick(c.submitter.now_s + MAX_POD_FAILURE_BACKOFF_S)  # the Job's pod failure backoff passed
            (submitter,) = c.submitter.wanted([])
    assert not c.done  # a retry is coming
    deleted = c.sync(10.0, ready)
    assert len(deleted) == 3 and c.status == "Initializing" and c.cluster_name != first
    assert c.submitter is None
    ready = {key: _Ready() for key in (p.key for p in c.wanted([]))}
    c.sync(13.0, ready)
    (submitter,) = c.submitter.wanted([])
    for _ in range(3):
        c.finished(submitter, succeeded=False)
        c.tick(c.submitter.now_s + MAX_POD_FAILURE_BACKOFF_S)
        submitter = next(iter(c.submitter.wanted([])), submitter)
    c.sync(16.0, ready)
    assert c.status == "Failed" and c.done and c.failed == 2


class _Ready:
    phase = "Running"
    ready = True


def test_a_suspended_job_creates_nothing(tmp_path: Path) -> None:
    c = controller(tmp_path, rayjob("  suspend: true\n  shutdownAfterJobFinishes: true"))
    assert c.wanted([]) == [] and c.status == "Suspended"


def test_a_cluster_selector_runs_the_job_on_an_existing_cluster_never_deleted(tmp_path: Path) -> None:
    existing = f"""
apiVersion: ray.io/v1
kind: RayCluster
metadata: {{name: shared, namespace: ml}}
spec:{CLUSTER_SPEC.replace(chr(10) + "  ", chr(10))}
"""
    job = rayjob("  clusterSelector: {ray.io/cluster: shared}", cluster=False)
    pods = run(tmp_path, existing, job, duration_s=900)
    assert pods["rj-0"]["phase"] == "Succeeded"
    cluster = [p for n, p in pods.items() if n.startswith("shared-")]
    assert len(cluster) == 3 and {p["phase"] for p in cluster} == {"Running"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (rayjob(cluster=False), "spec.rayClusterSpec: Required value: The RayJob spec is invalid: one of"),
        (
            rayjob("  suspend: true"),
            "spec.suspend: Invalid value: true: The RayJob spec is invalid: a RayJob with "
            "shutdownAfterJobFinishes set to false is not allowed to be suspended",
        ),
        (rayjob("  submissionMode: Batch"), 'spec.submissionMode: Unsupported value: "Batch"'),
        (rayjob("  ttlSecondsAfterFinished: -1"), "TTLSecondsAfterFinished must be a non-negative integer"),
        (rayjob("  activeDeadlineSeconds: 0"), "activeDeadlineSeconds must be a positive integer"),
    ],
)
def test_a_bad_manifest_is_an_error_at_its_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, NODE_N0, text))
    assert message in str(caught.value)


def test_gpufleet_validate_exits_2_on_a_bad_rayjob(tmp_path: Path) -> None:
    (path,) = write(tmp_path, rayjob("  submissionMode: Batch"))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "(RayJob/ml/rj): spec.submissionMode" in result.output and "Traceback" not in result.output


def test_explain_says_where_the_job_pods_would_go(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["explain", *map(str, write(tmp_path, NODE_N0, rayjob()))])
    assert result.exit_code == 0, result.output
    assert "-head-" in result.output and "would be placed on n0" in result.output


def test_what_is_not_modelled_is_a_warning(tmp_path: Path) -> None:
    extra = (
        "  entrypointNumGpus: 1\n  deletionStrategy: {onSuccess: {policy: DeleteCluster}}\n"
        "  runtimeEnvYAML: 'pip: []'"
    )
    warned = "\n".join(load_scenario(write(tmp_path, NODE_N0, rayjob(extra))).warnings)
    for field in ("entrypointNumGpus", "deletionStrategy"):
        assert f"spec.{field} is not modelled; ignored" in warned, field
    assert "runtimeEnvYAML" not in warned and "entrypoint:" not in warned


def test_kueue_pod_sets_are_head_worker_groups_and_submitter(tmp_path: Path) -> None:
    """Kueue's RayJob integration (pkg/controller/jobs/rayjob): ``head``, each group, ``submitter``."""
    c = controller(tmp_path, rayjob())
    assert [(s.name, s.count) for s in c.pod_sets()] == [("head", 1), ("gpu", 2), ("submitter", 1)]
    assert not c.done


def test_the_published_kueue_ray_job_sample_runs_under_kueue() -> None:
    """kueue/jobs/ray-job-sample.yaml (Kueue's docs) on the scenario's CPU nodes with its LocalQueue:
    admitted whole, its head, worker and submitter run (the sample gives no duration: the job runs on)."""
    paths = [
        UPSTREAM / "_clusters/cpu-nodes.yaml",
        UPSTREAM / "kueue/getting-started/quick-start-setup.yaml",
        UPSTREAM / "kueue/jobs/ray-job-sample.yaml",
    ]
    if not all(p.exists() for p in paths):
        pytest.skip("no upstream manifests")
    pods = pods_by_name(simulated(paths, duration_s=600))
    assert pods["rayjob-sample-0"]["phase"] == "Running"
    names = sorted(n.rsplit("-", 1)[0] for n in pods if n != "rayjob-sample-0")
    cluster = next(n for n in pods if "-head-" in n).split("-head-")[0]
    assert names == [f"{cluster}-head", f"{cluster}-small-group-worker"]
    assert {p["phase"] for p in pods.values()} == {"Running"}
