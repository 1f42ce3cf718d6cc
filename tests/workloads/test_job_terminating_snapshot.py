"""A snapshot's pod being deleted (``metadata.deletionTimestamp``, not yet Failed) terminates in the run: it
is deleted at its arrival and ends once its grace period is over (the API server sets ``deletionTimestamp``
to the deletion's time plus its grace period, ``BeforeDelete``; what remains is ``deletionTimestamp`` less
the Simulation's ``spec.startTime``). Its Job counts it as ``syncJob`` does (``pkg/controller/job``
v1.34.10): failed at once and replaced under ``TerminatingOrFailed`` (``isPodFailed``), counted and replaced
only once it ended Failed under ``Failed`` (``onlyReplaceFailedPods``, the default with a
``podFailurePolicy``: ``manageJob`` creates ``wantActive - terminating - active``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_adoption import JOB_POD, dump, job, node, pod

from conftest import pods_by_name, run_simulation
from gpufleet.kube import load_scenario
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.job import JobController

START = "2026-01-01T00:00:00Z"
ENDS = "2026-01-01T00:00:20Z"  # its grace period ends 20 s into the run
TRACKING = ("batch.kubernetes.io/job-tracking",)


def simulation(start: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"duration": "1h"}
    if start is not None:
        spec["startTime"] = start
    return {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "Simulation",
        "metadata": {"name": "s"},
        "spec": spec,
    }


def snapshot(
    tmp_path: Path, spec: dict[str, Any], start: str | None = START, grace_s: int = 30
) -> list[Path]:
    """A Job ``train`` of one pod (its ``spec`` besides) whose one pod runs on ``gpu-0`` being deleted, with a
    grace period of ``grace_s`` (``deletionGracePeriodSeconds``, which the API server sets with
    ``deletionTimestamp``: 30 s, so its deletion began 10 s before the run)."""
    train = job(1, 1)
    train["spec"] |= spec
    leaving = pod("train-aaaaa", JOB_POD, finalizers=TRACKING, restart="Never")
    leaving["metadata"]["deletionTimestamp"] = ENDS
    leaving["metadata"]["deletionGracePeriodSeconds"] = grace_s
    return dump(tmp_path, node("gpu-0"), train, leaving, simulation(start))


def run(paths: list[Path]) -> tuple[dict[str, dict[str, Any]], JobController]:
    sim = run_simulation(paths)
    controller = sim.controllers["Job/ml/train"]
    assert isinstance(controller, JobController)
    return pods_by_name(build_summary(sim)), controller


def test_a_terminating_snapshot_pod_is_failed_and_replaced_at_once_by_default(tmp_path: Path) -> None:
    """``TerminatingOrFailed`` (no ``podFailurePolicy``): the pod counts failed from the start and its
    replacement comes at once, the pod failure backoff (10 s from its deletion's start, ``getFinishedTime``:
    ``deletionTimestamp`` less ``deletionGracePeriodSeconds``) over; the pod itself ends 20 s in, at its
    ``deletionTimestamp``."""
    pods, train = run(snapshot(tmp_path, {}))
    assert (pods["train-aaaaa"]["deleted_s"], pods["train-aaaaa"]["reason"]) == (20.0, "Deleted")
    assert pods["train-0"]["created_s"] == 0.0
    assert train.failed == 1 and train.status_counts()["terminating"] == 0


def test_a_terminating_snapshot_pod_deleted_at_the_snapshot_is_replaced_after_the_backoff(
    tmp_path: Path,
) -> None:
    """``TerminatingOrFailed``, the pod's deletion begun at the snapshot (a grace period of 20 s): its failure
    is that recent (``getFinishedTime``: ``deletionTimestamp`` less ``deletionGracePeriodSeconds``), and its
    replacement waits the pod failure backoff, 10 s (``manageJob``: ``getRemainingTime``)."""
    pods, train = run(snapshot(tmp_path, {}, grace_s=20))
    assert pods["train-0"]["created_s"] == 10.0
    assert train.failed == 1


def test_a_terminating_snapshot_pod_holds_its_replacement_under_the_failed_policy(tmp_path: Path) -> None:
    """``podReplacementPolicy: Failed``: nothing is created while the pod terminates; it counts failed when it
    ended (20 s) and its replacement follows the pod failure backoff (30 s)."""
    pods, train = run(snapshot(tmp_path, {"podReplacementPolicy": "Failed"}))
    assert pods["train-aaaaa"]["deleted_s"] == 20.0
    (replacement,) = (name for name in pods if name != "train-aaaaa")
    assert pods[replacement]["created_s"] == 30.0
    assert train.failed == 1


def test_a_terminating_snapshot_pod_ends_at_once_without_the_start_time(tmp_path: Path) -> None:
    """Without ``spec.startTime`` what remains of the grace period is not known: the pod ends at the start,
    and a warning says so."""
    paths = snapshot(tmp_path, {"podReplacementPolicy": "Failed"}, start=None)
    warnings = load_scenario(paths).warnings
    assert any("metadata.deletionTimestamp" in w and "spec.startTime" in w for w in warnings)
    pods, train = run(paths)
    assert pods["train-aaaaa"]["deleted_s"] == 0.0
    assert train.failed == 1
