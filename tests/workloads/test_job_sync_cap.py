"""``MaxPodCreateDeletePerSync`` (``pkg/controller/job/job_controller.go`` v1.34.10, ``manageJob``): one sync
of the Job controller creates at most 500 pods (``diff`` capped; its slow-start batches, 1 then doubling, all
go out within that sync when no creation fails) and deletes at most 500 found too many
(``activePodsForRemoval``, ``podsToDelete`` capped). The rest is left to the next sync, which comes once the
creations or deletions are observed: ``addPod`` and ``deletePod`` enqueue the Job ``enqueueSyncJobBatched``,
``SyncJobBatchPeriod`` (1 s) later."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from test_adoption import NS, dump, job, node

from conftest import pods_by_name, run_simulation
from gpufleet.model.owned import Owned, OwnedPod
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.workloads import Job
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.job import JobController

SIMULATION = {
    "apiVersion": "gpufleet.io/v1alpha1",
    "kind": "Simulation",
    "metadata": {"name": "s"},
    "spec": {"duration": "10s"},
}


def test_a_job_of_parallelism_1200_creates_500_pods_a_sync_one_sync_per_batch_period(tmp_path: Path) -> None:
    """``manageJob``: ``diff`` (1,200 wanted) is capped at ``MaxPodCreateDeletePerSync``; the 500 pods'
    add events bring the next sync ``SyncJobBatchPeriod`` later (``enqueueSyncJobBatched``): 500 pods at
    0 s, 500 at 1 s, the last 200 at 2 s."""
    sim = run_simulation(dump(tmp_path, node("gpu-0"), job(1200, 1200), SIMULATION))
    pods = pods_by_name(build_summary(sim))
    assert Counter(p["created_s"] for p in pods.values()) == {0.0: 500, 1.0: 500, 2.0: 200}


def test_a_snapshots_job_deletes_500_surplus_pods_a_sync_and_the_rest_at_the_next() -> None:
    """``manageJob``: of 503 active pods of a Job of ``parallelism`` 1, 502 are too many
    (``activePodsForRemoval``); ``podsToDelete`` is capped at ``MaxPodCreateDeletePerSync``: 500 are deleted
    in the first sync, which creates nothing, and the 2 left (still active, counted) in the next, which
    comes ``SyncJobBatchPeriod`` later."""
    template = Pod("", restart_policy="Never")
    controller = JobController(Job("train", NS, template, 1, 1, 6))
    pods = [
        OwnedPod(Pod(f"train-{i}", namespace=NS, owner=OwnerRef("Job", "train")), "Running")
        for i in range(503)
    ]
    controller.adopt(Owned(pods))

    first = controller.doomed()
    assert (len(first), controller.wanted()) == (500, [])
    assert (controller.status_counts()["active"], controller.sync_again_s()) == (3, 1.0)
    assert controller.sync_again_s() is None  # armed once
    controller.next_sync()
    second = controller.doomed()
    assert [key for key, _ in second if (key, "Deleted") not in first] == [
        f"{NS}/train-500",
        f"{NS}/train-501",
    ]
    assert controller.sync_again_s() is None
