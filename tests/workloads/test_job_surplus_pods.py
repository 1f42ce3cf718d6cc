"""A snapshot's Job with more active pods than it wants, or (Indexed) pods of an invalid or duplicated
index, deletes them as ``manageJob`` does (``pkg/controller/job`` v1.34.10): ``activePodsForRemoval`` picks
them, first those ``controller.ActivePods`` ranks first (not scheduled, then Pending, not Ready, Ready for
less time, more restarts, newer), and ``deleteJobPods`` removes their tracking finalizer before deleting
them: they terminate through their grace period, are never counted and are not replaced; a pod of the lowest
pending index takes their place (``firstPendingIndexes``). A Job being deleted
(``metadata.deletionTimestamp``) runs no ``manageJob``: it creates and deletes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_adoption import JOB_POD, dump, job, node, pod

from conftest import pods_by_name, run_simulation
from gpufleet.experiments.overrides import editor
from gpufleet.kube import load_scenario
from gpufleet.model.owned import JOB_COMPLETION_INDEX, Owned, OwnedPod
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.workloads import REPLACE_FAILED, REPLACE_TERMINATING_OR_FAILED, Job
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.job import JobController

SIMULATION = {
    "apiVersion": "gpufleet.io/v1alpha1",
    "kind": "Simulation",
    "metadata": {"name": "s"},
    "spec": {"duration": "2h"},
}


def ready(body: dict[str, Any], since: str) -> dict[str, Any]:
    """``body`` Ready since ``since`` (its ``Ready`` condition's ``lastTransitionTime``)."""
    body["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": since}]
    return body


def run(tmp_path: Path, train: dict[str, Any], *pods: dict[str, Any]) -> tuple[dict[str, Any], JobController]:
    sim = run_simulation(dump(tmp_path, node("gpu-0"), train, *pods, SIMULATION))
    controller = sim.controllers["Job/ml/train"]
    assert isinstance(controller, JobController)
    return pods_by_name(build_summary(sim)), controller


def test_surplus_pods_are_deleted_in_active_pods_order_and_never_counted(tmp_path: Path) -> None:
    """``manageJob``: 3 active pods, ``parallelism`` 1 (``completions`` 1): 2 deleted, in ``ActivePods``
    order: the pod not scheduled first, then of the two Ready ones the one Ready for less time
    (``podReadyTime``, later first); the pod Ready longest runs on. Each deleted pod goes through its grace
    period (30 s), is neither counted (``deleteJobPods`` removed its finalizer) nor replaced, and the Job
    completes once the one left succeeds."""
    pods, train = run(
        tmp_path,
        job(1, 1),
        ready(pod("train-older", JOB_POD, restart="Never"), "2026-01-01T10:00:00Z"),
        ready(pod("train-newer", JOB_POD, restart="Never"), "2026-01-01T10:05:00Z"),
        pod("train-unscheduled", JOB_POD, "Pending", node_name=None, restart="Never"),
    )
    assert (pods["train-unscheduled"]["deleted_s"], pods["train-unscheduled"]["reason"]) == (0.0, "Deleted")
    assert (pods["train-newer"]["deleted_s"], pods["train-newer"]["reason"]) == (30.0, "Deleted")
    assert pods["train-older"]["phase"] == "Succeeded"
    assert set(pods) == {"train-older", "train-newer", "train-unscheduled"}  # nothing created
    assert (train.succeeded, train.failed, train.done) == (1, 0, True)


def test_an_indexed_jobs_duplicate_and_invalid_pods_are_deleted_and_the_lowest_pending_index_made(
    tmp_path: Path,
) -> None:
    """``appendDuplicatedIndexPodsForRemoval``: of index 0's two pods the Pending one goes (``ActivePods``:
    Pending before Running), the pod of no valid index too; once the deletions are observed the next sync
    creates the pending indexes 1 and 2 (``firstPendingIndexes``), at once (``TerminatingOrFailed``)."""
    indexed = job(3, 3, mode="Indexed")
    at = {JOB_COMPLETION_INDEX: "0"}
    pods, train = run(
        tmp_path,
        indexed,
        pod("train-0-aaaaa", JOB_POD, restart="Never", annotations=at),
        pod("train-0-bbbbb", JOB_POD, "Pending", node_name=None, restart="Never", annotations=at),
        pod("train-x-ccccc", JOB_POD, restart="Never", annotations={JOB_COMPLETION_INDEX: "x"}),
    )
    assert pods["train-0-bbbbb"]["deleted_s"] == 0.0
    assert pods["train-x-ccccc"]["deleted_s"] == 30.0
    assert pods["train-0-aaaaa"]["phase"] == "Succeeded"
    assert (pods["train-1"]["created_s"], pods["train-2"]["created_s"]) == (0.0, 0.0)
    assert (train.succeeded, train.failed, train.status_indexes()) == (3, 0, {"completedIndexes": "0-2"})


def controller_with_surplus(policy: str) -> tuple[JobController, list[Pod]]:
    """A Job (``parallelism`` 2, ``completions`` 4, ``podReplacementPolicy`` ``policy``) adopting 3 running
    pods; the one it deletes is terminating (its deletion heard)."""
    pods = [Pod(f"train-{c}", namespace="ml", owner=OwnerRef("Job", "train")) for c in "abc"]
    controller = JobController(Job("train", "ml", Pod(""), 2, 4, pod_replacement_policy=policy))
    controller.adopt(Owned([OwnedPod(p, "Running") for p in pods]))
    ((key, _),) = controller.doomed()
    assert controller.wanted() == []  # pod deletion takes precedence: nothing created in that sync
    assert controller.pod_terminating(next(p for p in pods if p.key == key))
    return controller, [p for p in pods if p.key != key]


def test_a_deleted_surplus_pod_holds_a_replacement_back_under_the_failed_policy() -> None:
    """``manageJob``: ``wantActive - terminating - active`` under ``podReplacementPolicy: Failed``
    (``onlyReplaceFailedPods``): while the deleted pod terminates, a pod that succeeded is not replaced; under
    ``TerminatingOrFailed`` it is at once. The deleted pod counts as terminating, never as failed."""
    for policy, want in ((REPLACE_FAILED, 0), (REPLACE_TERMINATING_OR_FAILED, 1)):
        controller, left = controller_with_surplus(policy)
        assert controller.status_counts() == {"active": 2, "succeeded": 0, "failed": 0, "terminating": 1}
        controller.finished(left[0], succeeded=True)
        assert len(controller.wanted()) == want


def test_a_failed_policy_replacement_takes_the_lowest_pending_index() -> None:
    """``firstPendingIndexes`` under ``podReplacementPolicy: Failed``: a terminating pod's index becomes
    pending only once the pod ended; with room for one pod and indexes 3 and 1 pending (3 ended first), the
    lowest, 1, is created."""
    job = Job("train", "ml", Pod(""), 2, 4, indexed=True, pod_replacement_policy=REPLACE_FAILED)
    owner = OwnerRef("Job", "train")

    def indexed(name: str, index: int) -> Pod:
        return Pod(name, namespace="ml", owner=owner, annotations={JOB_COMPLETION_INDEX: str(index)})

    three, one = indexed("train-3-a", 3), indexed("train-1-b", 1)
    adopted = [
        OwnedPod(indexed("train-0-c", 0), "Running"),
        OwnedPod(three, "Running", terminating=True),
        OwnedPod(one, "Running", terminating=True),
    ]
    controller = JobController(job)
    controller.adopt(Owned(adopted, succeeded=1, completed_indexes=frozenset({2})))
    assert controller.wanted() == []  # both indexes held back while their pods terminate
    controller.finished(three, succeeded=False)
    assert controller.wanted() == []  # room for none: index 1's pod still terminates
    controller.finished(one, succeeded=False)
    controller.tick(20.0)  # after the pod failure backoff of two failures (10 s, doubled)
    (created,) = controller.wanted()
    assert controller.active[created.key] == 1


def test_a_job_being_deleted_creates_no_pods_and_says_so(tmp_path: Path) -> None:
    """``syncJob`` runs ``manageJob`` only for a Job without a ``deletionTimestamp``: the Job being deleted
    creates no pods (its one pod runs on and succeeds; 1 of 4 completions, not complete), and a warning says
    what gpufleet does with it (a finalizer of another's holds it under background deletion: the garbage
    collector waits for it to go, ``model.job_deletion``)."""
    deleting = job(2, 4)
    deleting["metadata"] |= {"deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["example.com/hold"]}
    paths = dump(tmp_path, node("gpu-0"), deleting, pod("train-aaaaa", JOB_POD, restart="Never"), SIMULATION)
    assert any(
        "metadata.deletionTimestamp" in w and "being deleted" in w for w in load_scenario(paths).warnings
    )
    sim = run_simulation(paths)
    train = sim.controllers["Job/ml/train"]
    assert isinstance(train, JobController)
    pods = pods_by_name(build_summary(sim))
    assert set(pods) == {"train-aaaaa"}
    assert pods["train-aaaaa"]["phase"] == "Succeeded"
    assert (train.succeeded, train.done) == (1, False)


def test_a_parameter_lowering_a_snapshot_jobs_parallelism_deletes_the_surplus(tmp_path: Path) -> None:
    """A scenario parameter (``experiments.overrides``: ``Job/ml/train.spec.parallelism=1``) lowers a
    snapshot Job's ``parallelism`` below its 2 running pods: its first sync deletes one (``manageJob``,
    ``ActivePods``: the one not Ready) and the Job goes on with one pod at a time, the deleted pod not
    counted."""
    train = job(2, 3)
    paths = dump(
        tmp_path,
        node("gpu-0"),
        train,
        ready(pod("train-ready", JOB_POD, restart="Never"), "2026-01-01T10:00:00Z"),
        pod("train-starting", JOB_POD, restart="Never"),
        SIMULATION,
    )
    scenario = load_scenario(paths, edit=editor([("Job/ml/train.spec.parallelism", 1)]))
    sim = Simulation(scenario)
    sim.run()
    pods = pods_by_name(build_summary(sim))
    controller = sim.controllers["Job/ml/train"]
    assert isinstance(controller, JobController)
    assert (pods["train-starting"]["deleted_s"], pods["train-starting"]["reason"]) == (30.0, "Deleted")
    assert pods["train-ready"]["phase"] == "Succeeded"
    created = sorted(name for name in pods if name not in ("train-ready", "train-starting"))
    assert [pods[name]["created_s"] for name in created] == [3600.0, 7200.0]
    assert (controller.succeeded, controller.failed) == (2, 0)
