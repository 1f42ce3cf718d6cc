"""A gang's preemption dry run judges each member with the profile's pod-aware filters
(InterPodAffinity, PodTopologySpread, NodePorts) over the cluster as the dry run leaves it: the
members it already put counted, the victims it already evicted gone.

Upstream, a gang's members each go through a whole scheduling cycle, Filter included, with the
members before them assumed in the scheduler's cache (scheduler-plugins' Coscheduling holds them at
Permit; Volcano's and KAI's allocate and preempt actions pipeline each task onto a node of the
session's snapshot before the next one is tried): a member's PodTopologySpread counts the members
before it, its InterPodAffinity their labels and their required anti-affinity, its NodePorts their
host ports. A dry run that leaves these out admits gangs whose members then cannot all be placed,
after their victims were evicted.
"""

from __future__ import annotations

from preemption_setup import Cluster, pod

from conftest import gpu_pod
from gpufleet.model.host_ports import HostPort
from gpufleet.model.pod import POD_GROUP_LABEL, Pod, Requirement
from gpufleet.model.pod_affinity import (
    DO_NOT_SCHEDULE,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
)
from gpufleet.scheduling.events import EVERYTHING
from gpufleet.scheduling.plugins.pod_topology_spread import HOSTNAME, ZONE

URGENT = 1000
GANG_REFUSAL = "preemption: gang default/train would not fit whole after preemption."
TRAIN = {"job": "train"}
OF_TRAIN = (Requirement("job", "In", ("train",)),)


def labelled(*names: str, zones: dict[str, str] | None = None) -> Cluster:
    """Nodes ``names`` with their hostname label (and zone, where given), each running an 8-GPU pod
    of priority 1 (``low-<node>``), and the gang ``train``."""
    labels = {n: {HOSTNAME: n, **({ZONE: zones[n]} if zones else {})} for n in names}
    c = Cluster(*names, labels=labels)
    for n in names:
        c.place(pod(f"low-{n}", 8, priority=1), n)
    return c


def member(k: int, gpus: int = 2, labels: dict[str, str] | None = None, **kw: object) -> Pod:
    """``train-<k>`` of the gang ``train`` (labelled ``job: train``), at priority ``URGENT``."""
    every = {**TRAIN, POD_GROUP_LABEL: "train", **(labels or {})}
    return gpu_pod(f"train-{k}", gpus, priority=URGENT, labels=every, **kw)


def test_members_with_hostname_anti_affinity_to_each_other_do_not_start_on_fewer_nodes() -> None:
    """Four 2-GPU members with required ``kubernetes.io/hostname`` anti-affinity to each other, on
    three 8-GPU nodes held by lower-priority pods: each member needs a node of its own
    (``satisfyPodAntiAffinity`` counts the members before it), the fourth finds none, so the gang
    preempts nothing and stays pending with the gang's reason. (Leaving InterPodAffinity out, the
    dry run put all four on node a beside each other and evicted a's pod for a gang that cannot run.)"""
    c = labelled("a", "b", "c")
    c.gang("train", 4)
    apart = PodAffinity(anti_required=(PodAffinityTerm(OF_TRAIN, HOSTNAME),))
    outcomes = c.schedule(*(member(k, pod_affinity=apart) for k in range(4)))
    assert [o.kind for o in outcomes] == ["unschedulable"] * 4
    assert all((o.message or "").endswith(GANG_REFUSAL) for o in outcomes)
    assert c.scheduler.nominated == {}


def test_members_with_a_hostname_spread_take_one_node_each_and_all_bind_there() -> None:
    """A hostname spread (maxSkew 1, DoNotSchedule) over the gang's labels: PodTopologySpread counts
    the members the dry run put before, so after the first on node a the next would make a's skew 2;
    each member preempts on a node of its own. Once those victims are gone every member binds on the
    node the dry run planned for it (``evaluateNominatedNode``). (Leaving the spread out, the dry run
    put all four on a and evicted only a's pod; once it was gone the first member bound there and the
    others, turned away from a by the spread, were nominated to a again with no victims, for good:
    the gang was admitted and then failed member by member.)"""
    c = labelled("a", "b", "c", "d")
    c.gang("train", 4)
    spread = (TopologySpreadConstraint(1, HOSTNAME, DO_NOT_SCHEDULE, OF_TRAIN),)
    outcomes = c.schedule(*(member(k, spread_constraints=spread) for k in range(4)))
    preempting = [o for o in outcomes if o.kind == "preempting"]  # each member's attempt: its node
    assert {o.pod.name: o.node for o in preempting} == {f"train-{k}": n for k, n in enumerate("abcd")}
    assert c.scheduler.nominated == {f"default/train-{k}": n for k, n in enumerate("abcd")}
    assert set(preempting[0].victims) == {f"default/low-{n}" for n in "abcd"}
    for victim in preempting[0].victims:  # the victims leave
        c.state.unassign(victim)
    c.scheduler.cluster_event(EVERYTHING, 200.0)
    bound = {o.pod.name: o.node for o in c.scheduler.run(300.0) if o.kind == "bound"}
    assert bound == {f"train-{k}": n for k, n in enumerate("abcd")}  # each on its nominated node


def test_members_with_required_zone_affinity_to_each_other_are_planned_in_one_zone() -> None:
    """Two 8-GPU members with required pod affinity to each other on ``topology.kubernetes.io/zone``:
    the first may go anywhere (no pod matches yet, and it matches its own term), the second only to
    its zone (``satisfyPodAffinity`` counts the first). Victims ranked by priority alone would put
    the second on node c of the other zone; it preempts on b, beside the first, and both bind in
    zone one once their victims are gone."""
    zones = {"a": "one", "b": "one", "c": "two", "d": "two"}
    labels = {n: {HOSTNAME: n, ZONE: z} for n, z in zones.items()}
    c = Cluster(*zones, labels=labels)
    for n, priority in zip("acbd", (1, 2, 3, 4), strict=True):  # the cheapest victims: a, then c
        c.place(pod(f"low-{n}", 8, priority=priority), n)
    c.gang("train", 2)
    together = PodAffinity(required=(PodAffinityTerm(OF_TRAIN, ZONE),))
    outcomes = c.schedule(*(member(k, gpus=8, pod_affinity=together) for k in range(2)))
    assert c.scheduler.nominated == {"default/train-0": "a", "default/train-1": "b"}
    [first] = [o for o in outcomes if o.kind == "preempting" and o.pod.name == "train-0"]
    assert set(first.victims) == {"default/low-a", "default/low-b"}
    for victim in first.victims:
        c.state.unassign(victim)
    c.scheduler.cluster_event(EVERYTHING, 200.0)
    bound = {o.pod.name: o.node for o in c.scheduler.run(300.0) if o.kind == "bound"}
    assert bound == {"train-0": "a", "train-1": "b"}


def test_a_member_keeps_off_the_node_of_a_member_whose_anti_affinity_selects_it() -> None:
    """``train-0`` has required hostname anti-affinity to ``role: ps``; ``train-1`` carries that
    label and no terms of its own. No placed pod has anti-affinity, so ``train-1``'s PreFilter over
    the cluster alone would Skip; with ``train-0`` put, InterPodAffinity's check of the existing pods'
    anti-affinity keeps ``train-1`` off ``train-0``'s node."""
    c = labelled("a", "b")
    c.gang("train", 2)
    shuns_ps = PodAffinity(anti_required=(PodAffinityTerm((Requirement("role", "In", ("ps",)),), HOSTNAME),))
    c.schedule(member(0, pod_affinity=shuns_ps), member(1, labels={"role": "ps"}))
    assert c.scheduler.nominated == {"default/train-0": "a", "default/train-1": "b"}


def test_members_binding_one_host_port_take_one_node_each() -> None:
    """NodePorts in the dry run: a member's host port is in use on the node of the member put
    before it (``NodeInfo.UsedPorts``), so the second preempts on another node."""
    c = labelled("a", "b")
    c.gang("train", 2)
    port = (HostPort("0.0.0.0", "TCP", 29500),)
    c.schedule(*(member(k, host_ports=port) for k in range(2)))
    assert c.scheduler.nominated == {"default/train-0": "a", "default/train-1": "b"}
