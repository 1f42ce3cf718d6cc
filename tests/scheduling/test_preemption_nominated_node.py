"""Pods nominated by preemption hold their node against lower-priority pods
(kube-scheduler ``RunFilterPluginsWithNominatedPods``/``addNominatedPods``: nominated pods of
equal or higher priority count on their node while another pod is filtered)."""

from __future__ import annotations

from preemption_setup import Cluster, pod

from conftest import gpu_pod
from gpufleet.model.host_ports import HostPort
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_affinity import PodAffinity, PodAffinityTerm
from gpufleet.scheduling.events import EVERYTHING
from gpufleet.scheduling.plugins.pod_topology_spread import HOSTNAME


def test_a_lower_priority_pod_cannot_take_the_room_a_nominated_pod_freed() -> None:
    c = Cluster("a")
    c.place(pod("victim", 8, priority=1), "a")
    out = c.preemption(pod("urgent", 8, priority=1000))
    assert (out.node, out.victims) == ("a", ("default/victim",))
    c.state.unassign("default/victim")  # the victim is gone before the preemptor's retry
    outcomes = c.schedule(pod("small", 1, priority=500), now=101.0)
    small = [o for o in outcomes if o.pod.name == "small"]
    assert [o.kind for o in small] == ["unschedulable"]  # not on a: urgent's 8 GPUs are held there
    assert c.state.assignments.keys() == set()


def test_a_higher_priority_pod_ignores_a_lower_nominated_pod() -> None:
    c = Cluster("a")
    c.place(pod("victim", 8, priority=1), "a")
    c.preemption(pod("urgent", 8, priority=500))
    c.state.unassign("default/victim")
    outcomes = c.schedule(pod("critical", 8, priority=2000), now=101.0)
    assert [(o.pod.name, o.kind, o.node) for o in outcomes if o.pod.name == "critical"] == [
        ("critical", "bound", "a")
    ]


EXPORTER_PORT = (HostPort("0.0.0.0", "TCP", 9400),)
TRAINER = {"app": "trainer"}
AWAY_FROM_TRAINER = PodAffinity(
    anti_required=(PodAffinityTerm((Requirement("app", "In", ("trainer",)),), HOSTNAME),)
)
NEAR_TRAINER = PodAffinity(required=(PodAffinityTerm((Requirement("app", "In", ("trainer",)),), HOSTNAME),))


def nominated_on_a(urgent: Pod) -> Cluster:
    """``urgent`` (4 GPUs) nominated to node a, whose victim is gone; node b held by a pod it cannot
    preempt. Node a has 4 GPUs to spare beside what ``urgent`` holds."""
    c = Cluster("a", "b")
    c.place(pod("victim", 8, priority=1), "a")
    c.place(pod("keeper", 8, priority=5000), "b")
    out = c.preemption(urgent)
    assert (out.node, out.victims) == ("a", ("default/victim",))
    c.state.unassign("default/victim")
    return c


def test_a_nominated_pod_holds_its_host_ports_on_its_node() -> None:
    """``addNominatedPods`` adds the whole pod to the node's copy (``NodeInfo.AddPodInfo``): its host
    ports are in use there for a pod of no higher priority."""
    c = nominated_on_a(gpu_pod("urgent", 4, priority=1000, host_ports=EXPORTER_PORT))
    exporter = gpu_pod("exporter", 1, priority=500, host_ports=EXPORTER_PORT)
    [outcome] = [o for o in c.schedule(exporter, now=101.0) if o.pod.name == "exporter"]
    assert outcome.kind == "unschedulable"
    assert outcome.message.startswith(
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, "
        "1 node(s) didn't have free ports for the requested pod ports."
    )


def test_a_nominated_pods_labels_repel_a_pod_that_shuns_them() -> None:
    """``addNominatedPods`` runs InterPodAffinity's ``AddPod``: a pod of no higher priority with required
    anti-affinity to the nominated pod's labels is kept off its node."""
    c = nominated_on_a(gpu_pod("urgent", 4, priority=1000, labels=TRAINER))
    loner = gpu_pod("loner", 1, priority=500, pod_affinity=AWAY_FROM_TRAINER)
    [outcome] = [o for o in c.schedule(loner, now=101.0) if o.pod.name == "loner"]
    assert outcome.kind == "unschedulable"
    assert "1 node(s) didn't match pod anti-affinity rules" in outcome.message


def test_a_nominated_pod_does_not_satisfy_an_affinity_the_placed_pods_do_not() -> None:
    """``RunFilterPluginsWithNominatedPods`` runs the filters again without the nominated pods where they
    passed with them: a pod that must be near a trainer does not go where only a nominated trainer is."""
    c = nominated_on_a(gpu_pod("urgent", 4, priority=1000, labels=TRAINER))
    follower = gpu_pod("follower", 1, priority=500, pod_affinity=NEAR_TRAINER)
    [outcome] = [o for o in c.schedule(follower, now=101.0) if o.pod.name == "follower"]
    assert outcome.kind == "unschedulable"
    assert "1 node(s) didn't match pod affinity rules" in outcome.message


def test_a_preemptor_binds_on_its_nominated_node_when_it_fits_there() -> None:
    """``evaluateNominatedNode`` (``schedule_one.go`` ``findNodesThatFitPod``, PreferNominatedNode GA
    since 1.24): a pod nominated by preemption has its nominated node filtered first and, when that
    node passes every filter, it is the only feasible node: the pod binds there without scoring,
    even where another node has since come free and would score higher (node b, emptier than a)."""
    c = Cluster("a", "b")
    c.place(pod("resident", 2, priority=5000), "a")
    c.place(pod("victim", 6, priority=1), "a")
    c.place(pod("keeper", 8, priority=5000), "b")
    out = c.preemption(pod("urgent", 6, priority=1000))
    assert (out.node, out.victims) == ("a", ("default/victim",))
    c.state.unassign("default/victim")
    c.state.unassign("default/keeper")  # b is free now, and LeastAllocated would prefer it
    c.scheduler.cluster_event(EVERYTHING, 101.0)
    bound = [(o.pod.name, o.node) for o in c.scheduler.run(200.0) if o.kind == "bound"]
    assert bound == [("urgent", "a")]
