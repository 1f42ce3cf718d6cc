"""A snapshot's Job being deleted (``metadata.deletionTimestamp``) goes as the garbage collector deletes it
(``pkg/controller/garbagecollector`` v1.34.10, ``model.job_deletion``), by the finalizer the API server put on
it for the deletion's ``propagationPolicy``: ``foregroundDeletion`` (``processDeletingDependentsItem``: its
pods first, each through its grace period, then the Job), ``orphan`` (``orphanDependents``: the Job at once,
its pods run on) or none (background: the Job at once, then ``attemptToDeleteItem`` deletes its pods, whose
owner is absent). The Job controller creates nothing for it meanwhile (``syncJob`` skips ``manageJob``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_adoption import JOB_POD, dump, job, node, pod

from conftest import pods_by_name, run_simulation
from gpufleet.kube import load_scenario
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.job import JobController

SIMULATION = {
    "apiVersion": "gpufleet.io/v1alpha1",
    "kind": "Simulation",
    "metadata": {"name": "s"},
    "spec": {"duration": "2h"},
}


def deleted_job(*finalizers: str) -> dict[str, Any]:
    """A Job (``parallelism`` 2, ``completions`` 4) deleted with ``finalizers`` left on it."""
    body = job(2, 4)
    body["metadata"] |= {"deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": list(finalizers)}
    return body


def run(tmp_path: Path, *finalizers: str) -> tuple[dict[str, Any], JobController, float | None, list[str]]:
    """The Job deleted with ``finalizers`` and its one running pod (1 h of work) simulated: the pods, the
    controller, when the Job was gone and the scenario's warnings."""
    paths = dump(
        tmp_path,
        node("gpu-0"),
        deleted_job(*finalizers),
        pod("train-aaaaa", JOB_POD, restart="Never"),
        SIMULATION,
    )
    warnings = load_scenario(paths).warnings
    sim = run_simulation(paths)
    controller = sim.controllers["Job/ml/train"]
    assert isinstance(controller, JobController)
    return (
        pods_by_name(build_summary(sim)),
        controller,
        sim.workload_status["Job/ml/train"].deleted_s,
        warnings,
    )


def test_foreground_deletion_deletes_the_jobs_pods_through_their_grace_period_then_the_job(
    tmp_path: Path,
) -> None:
    """``foregroundDeletion``: the collector deletes the running pod at once
    (``processDeletingDependentsItem``), which ends after its 30 s grace period, Failed, counted by the Job
    (still there: ``syncJob`` counts it, ``isPodFailed``) and not replaced; the Job is gone then, its
    finalizer removed."""
    pods, train, gone_s, warnings = run(tmp_path, "foregroundDeletion")
    assert set(pods) == {"train-aaaaa"}
    assert (pods["train-aaaaa"]["deleted_s"], pods["train-aaaaa"]["phase"]) == (30.0, "Failed")
    assert (train.succeeded, train.failed) == (0, 1)
    assert gone_s == 30.0
    assert any("metadata.deletionTimestamp" in w and "foreground deletion" in w for w in warnings)


def test_orphan_deletion_removes_the_job_at_once_and_its_pod_runs_on_uncounted(tmp_path: Path) -> None:
    """``orphan``: the collector orphans the pod (``orphanDependents``) and lets the Job go at once; the pod
    runs its hour and succeeds, counted by no Job."""
    pods, train, gone_s, warnings = run(tmp_path, "orphan")
    assert set(pods) == {"train-aaaaa"}
    assert (pods["train-aaaaa"]["deleted_s"], pods["train-aaaaa"]["phase"]) == (None, "Succeeded")
    assert (train.succeeded, train.failed, gone_s) == (0, 0, 0.0)
    assert any("orphan deletion" in w for w in warnings)


def test_background_deletion_removes_the_job_at_once_then_deletes_its_pod_uncounted(tmp_path: Path) -> None:
    """No finalizer (background): the Job is gone at once; the collector then deletes its pod, whose owner is
    absent (``attemptToDeleteItem``), through its 30 s grace period; no Job counts it."""
    pods, train, gone_s, warnings = run(tmp_path)
    assert set(pods) == {"train-aaaaa"}
    assert (pods["train-aaaaa"]["deleted_s"], pods["train-aaaaa"]["phase"]) == (30.0, "Failed")
    assert (train.succeeded, train.failed, gone_s) == (0, 0, 0.0)
    assert any("background deletion: the Job is gone at once" in w for w in warnings)


def test_foreground_deletion_held_by_another_finalizer_deletes_the_pods_and_the_job_stays(
    tmp_path: Path,
) -> None:
    """``foregroundDeletion`` and a finalizer of another controller's, which nothing in the run removes: the
    collector deletes the pod (counted failed), and the Job stays."""
    pods, train, gone_s, _ = run(tmp_path, "foregroundDeletion", "example.com/hold")
    assert pods["train-aaaaa"]["deleted_s"] == 30.0
    assert (train.failed, gone_s) == (1, None)
