"""Kueue assigns flavors to each pod set of a workload (``gpufleet.scheduling.kueue.flavors``), and
each admitted pod gets its own pod set's flavors (``gpufleet.control.kueue_queues``).

Upstream rules (``kubernetes-sigs/kueue``): ``pkg/scheduler/flavorassigner/flavorassigner.go``
(``assignFlavors``, ``findFlavorForPodSets``, ``checkFlavorForPodSets``, ``fitsResourceQuota``): each pod
set gets a flavor per resource, matched against its own template's nodeSelector, node affinity and
tolerations; what the earlier pod sets took of a flavor counts against the later ones
(``assignment.Usage``); a resource group without a flavor for a pod set ends the assignment ``NoFit``
and ``Assignment.Message`` names that pod set. ``pkg/controller/jobframework/reconciler.go``
(``getPodSetsInfoFromStatus``) and ``pkg/util/podset`` (``Merge``): each pod set's pods get its
flavors' nodeLabels and tolerations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import pods_by_name, run_simulation, simulated
from gpufleet.control.port import QueuedInParts
from gpufleet.model.kueue import ClusterQueue, FlavorQuotas, ResourceFlavor, ResourceGroup, ResourceQuota
from gpufleet.model.pod import Pod
from gpufleet.scheduling.kueue.admission import schedule
from gpufleet.scheduling.kueue.flavors import Mode, assign_flavors, no_simulation
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.topology import GROUP, PREFERRED, REQUIRED, group_of
from gpufleet.scheduling.kueue.workload import Admitted, PodSetResources, Workload
from shared_files import UPSTREAM, needs_upstream

GPU = "nvidia.com/gpu"
FLAVORS = {
    "h100": ResourceFlavor("h100", {"pool": "h100"}),
    "a100": ResourceFlavor("a100", {"pool": "a100"}),
    "cpu": ResourceFlavor("cpu", {"pool": "cpu"}),
}
EXAMPLE = Path(__file__).parents[2] / "examples" / "kueue" / "pod-set-flavors.yaml"


def quotas(flavor: str, amounts: dict[str, int]) -> FlavorQuotas:
    return FlavorQuotas(flavor, {r: ResourceQuota(v) for r, v in amounts.items()})


def queue(*flavors: FlavorQuotas, within: str = "Never") -> ClusterQueue:
    """``team``: one resource group of ``flavors``, covering what they name."""
    covered = tuple(dict.fromkeys(r for f in flavors for r in f.resources))
    group = ResourceGroup(covered, flavors)
    return ClusterQueue("team", None, (), resource_groups=(group,), within_cluster_queue=within)


def pod_set(
    name: str, count: int, each: dict[str, int], selector: dict[str, str] | None = None
) -> PodSetResources:
    """``count`` pods asking ``each``, of a template selecting ``selector``."""
    total = {r: v * count for r, v in each.items()}
    return PodSetResources(name, count, total, Pod(name, node_selector=selector or {}))


def job(key: str, *pod_sets: PodSetResources, priority: int = 0) -> Workload:
    return Workload(f"MPIJob/default/{key}", "team", priority, 0.0, 0, pod_sets)


#: a CPU-only launcher that selects the CPU nodes, and two 8-GPU workers
LAUNCHER = pod_set("launcher", 1, {"cpu": 2000}, {"pool": "cpu"})
WORKERS = pod_set("worker", 2, {"cpu": 32000, GPU: 8})
CPU_AND_H100 = queue(quotas("h100", {"cpu": 192000, GPU: 16}), quotas("cpu", {"cpu": 32000, GPU: 0}))


def test_each_pod_set_is_matched_against_its_own_template() -> None:
    """``checkFlavorForPodSets``: a flavor is checked against the pod set's own template. The launcher's
    nodeSelector rules out h100 and it gets cpu; the workers, selecting nothing, get h100 (the first
    flavor) for their cpu and GPUs. What the workload uses is summed per (flavor, resource)."""
    snapshot = QuotaSnapshot({"team": CPU_AND_H100}, {})
    got = assign_flavors(job("x", LAUNCHER, WORKERS), CPU_AND_H100, FLAVORS, snapshot, no_simulation)
    assert got.mode is Mode.FIT
    assert got.flavors == {"launcher": {"cpu": "cpu"}, "worker": {"cpu": "h100", GPU: "h100"}}
    assert got.usage == {("cpu", "cpu"): 2000, ("h100", "cpu"): 64000, ("h100", GPU): 16}


def test_a_later_pod_set_sees_the_quota_an_earlier_one_took_in_the_same_flavor() -> None:
    """``fitsResourceQuota``: a pod set's request is checked on top of what the earlier pod sets took of
    the flavor (``assignment.Usage``). The master's 4 GPUs take half of h100's 8; the worker's 8 no longer
    fit there (a preemption without targets: ``TryNextFlavor``, the default) and go to a100. Summed, as
    one, the 12 GPUs would fit neither."""
    cq = queue(quotas("h100", {GPU: 8}), quotas("a100", {GPU: 8}))
    pytorch = job("p", pod_set("master", 1, {GPU: 4}), pod_set("worker", 1, {GPU: 8}))
    got = assign_flavors(pytorch, cq, FLAVORS, QuotaSnapshot({"team": cq}, {}), no_simulation)
    assert got.mode is Mode.FIT
    assert got.flavors == {"master": {GPU: "h100"}, "worker": {GPU: "a100"}}
    assert got.usage == {("h100", GPU): 4, ("a100", GPU): 8}


def test_a_workload_whose_one_pod_set_does_not_fit_waits_and_the_message_names_that_pod_set() -> None:
    """``assignFlavors``/``Assignment.Message``: the launcher fits, the 24 GPUs of three workers exceed
    what the queue could ever hold; the workload is not admitted and the ``QuotaReserved`` message names
    the worker pod set only, with what the launcher took of each flavor (``previously considered podsets
    requests``)."""
    three = pod_set("worker", 3, {"cpu": 32000, GPU: 8})
    result = schedule([job("x", LAUNCHER, three)], [], {"team": CPU_AND_H100}, FLAVORS, set())
    assert result.admitted == [] and result.inadmissible == ["MPIJob/default/x"]
    assert result.messages["MPIJob/default/x"] == (
        "couldn't assign flavors to pod set worker: "
        "insufficient quota for cpu in flavor cpu, previously considered podsets requests (2) + "
        "current podset request (96) > maximum capacity (32), "
        "insufficient quota for nvidia.com/gpu in flavor cpu, previously considered podsets requests (0) + "
        "current podset request (24) > maximum capacity (0), "
        "insufficient quota for nvidia.com/gpu in flavor h100, previously considered podsets requests (0) + "
        "current podset request (24) > maximum capacity (16)"
    )


def test_a_pod_set_that_needs_preemption_evicts_for_its_flavor_and_the_admission_records_each_pod_sets() -> (
    None
):
    """The preemption oracle and the preemption run on the pod sets' summed usage: the workers need h100's
    GPUs held by a lower-priority workload (``withinClusterQueue: LowerPriority``), which is evicted; once
    it is gone the workload is admitted, each pod set with its own flavors (``podSetAssignments``) and the
    usage summed per (flavor, resource)."""
    cq = queue(
        quotas("h100", {"cpu": 192000, GPU: 16}),
        quotas("cpu", {"cpu": 32000, GPU: 0}),
        within="LowerPriority",
    )
    low = job("low", pod_set("main", 1, {GPU: 8}), priority=-1)
    running = [Admitted(low, {"main": {GPU: "h100"}}, {("h100", GPU): 8}, 0.0)]
    urgent = job("urgent", LAUNCHER, WORKERS)
    first = schedule([urgent], running, {"team": cq}, FLAVORS, set())
    assert [(p.key, t.key) for p, t in first.preemptions] == [("MPIJob/default/urgent", "MPIJob/default/low")]
    assert first.messages["MPIJob/default/urgent"] == (
        "couldn't assign flavors to pod set worker: insufficient quota for cpu in flavor cpu, previously "
        "considered podsets requests (2) + current podset request (64) > maximum capacity (32), "
        "insufficient quota for nvidia.com/gpu in flavor cpu, previously considered podsets requests (0) + "
        "current podset request (16) > maximum capacity (0), "
        "insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"
        ". Pending the preemption of 1 workload(s)"
    )
    second = schedule([urgent], [], {"team": cq}, FLAVORS, set())
    [(_, admitted)] = second.admitted
    assert admitted.flavors == {"launcher": {"cpu": "cpu"}, "worker": {"cpu": "h100", GPU: "h100"}}
    assert admitted.usage == {("cpu", "cpu"): 2000, ("h100", "cpu"): 64000, ("h100", GPU): 16}


def test_a_pod_set_group_is_named_only_with_a_required_or_preferred_topology() -> None:
    """``podSetTopologyRequestBuilder``: ``kueue.x-k8s.io/podset-group-name`` puts a pod set in a group
    (assigned flavors together with the group's other pod sets) only beside a required or preferred
    topology level."""
    assert group_of({GROUP: "lws", REQUIRED: "rack"}) == group_of({GROUP: "lws", PREFERRED: "rack"}) == "lws"
    assert group_of({GROUP: "lws"}) is None


def pods(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return pods_by_name(summary, namespaced=True)


def test_an_mpijobs_cpu_launcher_and_gpu_workers_get_two_flavors_and_land_on_their_nodes() -> None:
    """``examples/kueue/pod-set-flavors.yaml``: the launcher (nodeSelector ``pool: cpu``) gets flavor cpu,
    the 8-GPU workers h100; the MPIJob is admitted whole at once and each pod gets its own pod set's
    flavor's nodeLabels (``podset.Merge``): the launcher runs on the CPU node, the workers on the H100s."""
    summary = simulated([EXAMPLE])
    got = pods(summary)
    nodes = {name: (p["node"], p["bound_s"]) for name, p in got.items()}
    assert nodes == {
        "default/allreduce-launcher-0": ("cpu-0", 0.0),
        "default/allreduce-worker-0": ("h100-0", 0.0),
        "default/allreduce-worker-1": ("h100-1", 0.0),
    }
    usage = summary["kueue"]["cluster_queues"]["training"]["usage"]
    peaks = {key: u["peak"] for key, u in usage.items() if u["peak"]}
    assert peaks == {
        "cpu/cpu": 2000.0,
        "cpu/memory": 4.0 * 2**30,
        "h100/cpu": 64000.0,
        "h100/memory": 512.0 * 2**30,
        "h100/nvidia.com/gpu": 16.0,
    }


def test_an_mpijob_whose_workers_do_not_fit_waits_with_a_message_naming_the_worker_pod_set(
    tmp_path: Path,
) -> None:
    """Three 8-GPU workers exceed the queue's 16 GPUs: no pod of the MPIJob starts, and their message is
    the Workload's, naming the pod set ``worker`` (the launcher fits)."""
    path = tmp_path / "scenario.yaml"
    text = EXAMPLE.read_text()
    assert text.count("      replicas: 2\n") == 1
    path.write_text(text.replace("      replicas: 2\n", "      replicas: 3\n"))
    summary = simulated([path], duration_s=600)
    (workload,) = summary["kueue"]["workloads"]
    assert workload["admissions"] == []
    message = workload["message"]
    assert message == (
        "couldn't assign flavors to pod set worker: "
        "insufficient quota for cpu in flavor cpu, previously considered podsets requests (2) + "
        "current podset request (96) > maximum capacity (32), "
        "insufficient quota for memory in flavor cpu, previously considered podsets requests (4Gi) + "
        "current podset request (768Gi) > maximum capacity (128Gi), "
        "insufficient quota for nvidia.com/gpu in flavor cpu, previously considered podsets requests (0) + "
        "current podset request (24) > maximum capacity (0), "
        "insufficient quota for nvidia.com/gpu in flavor h100, previously considered podsets requests (0) + "
        "current podset request (24) > maximum capacity (16)"
    )
    assert {(p["phase"], p["message"]) for p in pods(summary).values()} == {("Pending", message)}


@needs_upstream
def test_every_pod_of_each_kueue_integration_belongs_to_exactly_one_of_its_pod_sets() -> None:
    """Each integration's ``pod_sets`` tell their pods apart (``PodSet.selector``), as upstream's
    ``kueue.x-k8s.io/podset`` label does: a LeaderWorkerSet group's leader and workers, an MPIJob's
    launcher and workers, a PyTorchJob's master and workers, a RayJob's head, worker group and
    submitter, a JobSet's replicated Jobs."""
    scenario = [
        UPSTREAM / p
        for p in (
            "_clusters/cpu-nodes.yaml",
            "_clusters/sim-1h.yaml",
            "kueue/getting-started/quick-start-setup.yaml",
            "kueue/jobs/sample-pytorchjob.yaml",
            "kueue/jobs/sample-jobset.yaml",
            "kueue/jobs/ray-job-sample.yaml",
            "kueue/jobs/sample-mpijob.yaml",
            "kueue/serving-workloads/sample-leaderworkerset.yaml",
        )
    ]
    sim = run_simulation(scenario)
    held: dict[str, set[str]] = {}
    for rec in sim.pods.values():
        found = sim.queued_workload(rec.pod)
        assert found is not None
        key, controller = found
        part = controller.queued_part(rec.pod) if isinstance(controller, QueuedInParts) else found
        assert part is not None
        sets = [s.name for s in part[1].pod_sets() if s.holds(rec.pod)]
        assert len(sets) == 1, (rec.pod.key, sets)
        held.setdefault(key.split("/")[0], set()).update(sets)
    assert held == {
        "JobSet": {"driver", "workers"},
        "LeaderWorkerSet": {"leader", "worker"},
        "MPIJob": {"launcher", "worker"},
        "PyTorchJob": {"master", "worker"},
        "RayJob": {"head", "small-group", "submitter"},
    }
