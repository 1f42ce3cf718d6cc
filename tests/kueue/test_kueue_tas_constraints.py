"""Kueue's TAS with what the workload's pod template and its ClusterQueue say, as gpufleet's
``scheduling.kueue`` and ``control.kueue_queues`` run it:

* implied TAS (``tas_flavorassigner.go``, ``isTASImplied``): in a ClusterQueue whose flavors are all TAS
  flavors a pod set without a TAS annotation is placed unconstrained; a TAS flavor refuses a pod set that
  asks for no TAS where the queue has others (``Flavor "f" supports only TopologyAwareScheduling``);
* the search's node filters (``pkg/cache/scheduler/scheduling_simulator_default.go``,
  ``FindFeasibleNodes``): the pod template's and the flavor's tolerations against the nodes' taints, the
  pod template's ``nodeSelector`` and required node affinity against their labels, where the Topology's
  lowest level is the hostname, each counted in the exclusion stats;
* partial admission (``PodSetReducer`` over the flavor assigner, ``pkg/scheduler/scheduler.go``
  ``getInitialAssignments``): the count shrinks until the TAS placement fits, not only the quota.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conftest import kueue_queues, pods_by_name, queued_job, simulated_text
from gpufleet.model.kueue import (
    ClusterQueue,
    FlavorQuotas,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Topology,
)
from gpufleet.model.node import Taint, Toleration
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.scheduling.kueue.admission import schedule
from gpufleet.scheduling.kueue.topology import NodeRoom, TopologyRequest, place
from gpufleet.scheduling.kueue.workload import PodSetResources, Workload

RACK = "example.com/rack"
HOST = "kubernetes.io/hostname"
GPU = "nvidia.com/gpu"
HOSTS = Topology("t", (RACK, HOST))
RACKS = Topology("r", (RACK,))
GPU_TAINT = Taint(GPU, "present")


def _node(name: str, gpus: int, rack: str = "r1", taints: tuple[Taint, ...] = (), **labels: str) -> NodeRoom:
    room = NodeRoom({RACK: rack, HOST: name, **labels}, {GPU: gpus})
    return replace(room, taints=taints) if taints else room


def _queue(*flavors: str) -> ClusterQueue:
    group = ResourceGroup((GPU,), tuple(FlavorQuotas(f, {GPU: ResourceQuota(16)}) for f in flavors))
    return ClusterQueue("cq", None, (), resource_groups=(group,))


FLAVORS = {"tas": ResourceFlavor("tas", topology="t"), "plain": ResourceFlavor("plain")}


def _workload(*pod_sets: PodSetResources) -> Workload:
    return Workload("Job/default/j", "cq", 0, 0.0, 0, pod_sets)


def test_an_untolerated_taint_leaves_the_node_out_of_the_search() -> None:
    """``a`` holds both pods but is tainted: only ``b`` is searched, and the refusal counts the taint."""
    nodes = {"a": _node("a", 8, taints=(GPU_TAINT,)), "b": _node("b", 4)}
    ask = TopologyRequest("main", 2, {GPU: 4}, HOST)
    assert place([ask], HOSTS, nodes) == (
        'couldn\'t assign flavors to pod set main: topology "t" allows to fit only 1 out of 2 pod(s). '
        'Total nodes: 2; excluded: taint "nvidia.com/gpu=present:NoSchedule": 1'
    )
    tolerated = TopologyRequest("main", 2, {GPU: 4}, HOST, tolerations=(Toleration(GPU, "Exists"),))
    assert place([tolerated], HOSTS, nodes) == {"main": ["a", "a"]}


def test_a_prefer_no_schedule_taint_does_not_leave_the_node_out() -> None:
    """``IsSchedulingTaint``: only ``NoSchedule`` and ``NoExecute`` taints exclude a node."""
    nodes = {"a": _node("a", 8, taints=(Taint(GPU, "present", "PreferNoSchedule"),))}
    assert place([TopologyRequest("main", 2, {GPU: 4}, HOST)], HOSTS, nodes) == {"main": ["a", "a"]}


def test_the_pod_templates_node_selector_and_required_affinity_leave_nodes_out() -> None:
    nodes = {"a": _node("a", 8, gen="h100"), "b": _node("b", 8, gen="a100"), "c": _node("c", 8)}
    selector = TopologyRequest("main", 2, {GPU: 4}, HOST, node_selector=(("gen", "a100"),))
    assert place([selector], HOSTS, nodes) == {"main": ["b", "b"]}
    term = SelectorTerm((Requirement("gen", "In", ("h100",)),))
    affinity = TopologyRequest("main", 3, {GPU: 4}, HOST, affinity=(term,))
    assert place([affinity], HOSTS, nodes) == (
        'couldn\'t assign flavors to pod set main: topology "t" allows to fit only 2 out of 3 pod(s). '
        "Total nodes: 3; excluded: affinity: 2"
    )


def test_the_filters_apply_only_where_the_lowest_level_is_the_hostname() -> None:
    """``isLowestLevelNode``: a Topology whose leaves are racks searches every node of the flavor."""
    nodes = {"a": _node("a", 8, taints=(GPU_TAINT,)), "b": _node("b", 8, rack="r2", gen="a100")}
    ask = TopologyRequest("main", 2, {GPU: 4}, RACK, node_selector=(("gen", "a100"),))
    placed = place([ask], RACKS, nodes)
    assert not isinstance(placed, str) and len(placed["main"]) == 2


def test_a_tas_only_queue_places_a_pod_set_that_asks_for_no_tas() -> None:
    """``isTASImplied``: unconstrained, the least free node that holds it (``b``)."""
    pod_set = PodSetResources("main", 1, {GPU: 4}, Pod("main"))
    nodes = {"a": _node("a", 8), "b": _node("b", 4)}
    result = schedule(
        [_workload(pod_set)], [], {"cq": _queue("tas")}, FLAVORS, set(), None, {"t": HOSTS}, nodes
    )
    assert [a.flavors["main"] for _, a in result.admitted] == [{GPU: "tas"}]
    assert result.placements["Job/default/j"] == {"main": ["b"]}


def test_a_tas_flavor_refuses_a_pod_set_that_asks_for_no_tas() -> None:
    """Where the queue also has a plain flavor, a pod set without a TAS annotation skips the TAS one; where
    that plain flavor has no quota left, the TAS flavor's refusal is among the reasons."""
    pod_set = PodSetResources("main", 1, {GPU: 4}, Pod("main"))
    nodes = {"a": _node("a", 8)}
    result = schedule(
        [_workload(pod_set)], [], {"cq": _queue("tas", "plain")}, FLAVORS, set(), None, {"t": HOSTS}, nodes
    )
    assert [a.flavors["main"] for _, a in result.admitted] == [{GPU: "plain"}]
    assert "Job/default/j" not in result.placements
    quotas = (FlavorQuotas("tas", {GPU: ResourceQuota(16)}), FlavorQuotas("plain", {GPU: ResourceQuota(0)}))
    full = {"cq": ClusterQueue("cq", None, (), resource_groups=(ResourceGroup((GPU,), quotas),))}
    refused = schedule([_workload(pod_set)], [], full, FLAVORS, set(), None, {"t": HOSTS}, nodes)
    assert refused.admitted == []
    assert 'Flavor "tas" supports only TopologyAwareScheduling' in refused.messages["Job/default/j"]


def test_partial_admission_shrinks_the_count_until_the_topology_holds_it() -> None:
    """Quota holds all 4 pods, the one host only 2: admitted with 2, not refused at 4."""
    ask = TopologyRequest("main", 4, {GPU: 4}, HOST)
    pod_set = PodSetResources("main", 4, {GPU: 16}, Pod("main"), ask, min_count=1)
    nodes = {"a": _node("a", 8)}
    result = schedule(
        [_workload(pod_set)], [], {"cq": _queue("tas")}, FLAVORS, set(), None, {"t": HOSTS}, nodes
    )
    assert [w.pod_sets[0].count for w, _ in result.admitted] == [2]
    assert result.placements["Job/default/j"] == {"main": ["a", "a"]}


TOPOLOGY_AND_NODES = (
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\n"
    "spec:\n  levels:\n  - nodeLabel: kubernetes.io/hostname\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n0\n"
    "  labels: {kubernetes.io/hostname: n0, pool: tas}\n"
    'status:\n  capacity: {cpu: "64", memory: 512Gi, pods: "2", nvidia.com/gpu: "8"}\n'
    "\n---"
)
TAS_QUEUES = kueue_queues(
    "tas", 64, "queue", "default", flavor_spec="  nodeLabels: {pool: tas}\n  topologyName: t"
)
REQUIRED_HOST = "kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname"


def test_a_job_without_a_tas_annotation_in_a_tas_only_queue_waits_for_the_topology(tmp_path: Path) -> None:
    """The node has GPUs for 3 pods but room for 2: implied TAS does not admit the Job."""
    text = (
        TOPOLOGY_AND_NODES
        + TAS_QUEUES
        + queued_job("j", "0s", 1, spec="  parallelism: 3\n  completions: 3\n")
    )
    pods = pods_by_name(simulated_text(tmp_path, text))
    assert pods["j-0"]["phase"] == "Pending"
    assert pods["j-0"]["message"] == (
        'couldn\'t assign flavors to pod set main: topology "t" allows to fit only 2 out of 3 pod(s)'
    )


def test_a_partially_admissible_job_runs_the_pods_the_topology_holds(tmp_path: Path) -> None:
    """``job-min-parallelism``: admitted with the 2 pods the node has room for, not held at 3."""
    job = queued_job(
        "j",
        "0s",
        1,
        annotations=f"{REQUIRED_HOST}, gpufleet.io/duration: 1h",
        spec="  parallelism: 3\n  completions: 3\n",
    ).replace(
        "{gpufleet.io/submit-at: 0s}", '{gpufleet.io/submit-at: 0s, kueue.x-k8s.io/job-min-parallelism: "1"}'
    )
    summary = simulated_text(tmp_path, TOPOLOGY_AND_NODES + TAS_QUEUES + job)
    workload = next(w for w in summary["kueue"]["workloads"] if w["name"] == "Job/default/j")
    assert workload["admitted_counts"][0] == {"main": 2}
    assert pods_by_name(summary)["j-0"]["phase"] == "Succeeded"


def test_a_job_the_only_big_enough_node_does_not_tolerate_waits_with_the_taint_counted(
    tmp_path: Path,
) -> None:
    """n0 holds the pod but has a taint neither the pod nor the flavor tolerates, n1 is too small: Kueue
    does not admit the Job (the kube-scheduler could not bind it to n0), and says why."""
    nodes = (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\n"
        "spec:\n  levels:\n  - nodeLabel: kubernetes.io/hostname\n"
        "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n0\n  labels: {pool: tas}\n"
        "spec:\n  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\n"
        'status:\n  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}\n'
        "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {pool: tas}\n"
        'status:\n  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "4"}\n'
        "\n---"
    )
    job = queued_job("j", "0s", 8, annotations=f"{REQUIRED_HOST}, gpufleet.io/duration: 1h")
    pods = pods_by_name(simulated_text(tmp_path, nodes + TAS_QUEUES + job))
    assert pods["j-0"]["phase"] == "Pending"
    assert pods["j-0"]["message"] == (
        "couldn't assign flavors to pod set main: topology \"t\" doesn't allow to fit any of 1 pod(s). "
        'Total nodes: 2; excluded: resource "nvidia.com/gpu": 1, taint "nvidia.com/gpu=present:NoSchedule": 1'
    )
