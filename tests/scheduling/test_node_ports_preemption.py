"""NodePorts with DefaultPreemption: a rejection for a taken host port is ``Unschedulable`` (not
unresolvable), so upstream's dry run removes the lower-priority pods of the node and finds the port
free (``SelectVictimsOnNode`` runs the filters with the victims removed from the NodeInfo, whose
``UsedPorts`` go with them)."""

from __future__ import annotations

from gpufleet.cluster.state import ClusterState
from gpufleet.model.host_ports import HostPort
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.node_ports import REASON
from gpufleet.scheduling.scheduler import Scheduler

PORT = (HostPort("0.0.0.0", "TCP", 9400),)


def cluster() -> Scheduler:
    state = ClusterState([Node("n", capacity={"cpu": 8000, "memory": 2**34, "pods": 110})])
    state.assign(Pod("low", requests={"cpu": 1000}, host_ports=PORT), "n", 0.0)
    state.assign(Pod("other", requests={"cpu": 1000}, host_ports=(HostPort("0.0.0.0", "TCP", 80),)), "n", 0.0)
    return Scheduler(SchedulerConfig("default-scheduler"), state, GangView(state))


def test_a_higher_priority_pod_preempts_the_holder_of_its_host_port_only() -> None:
    scheduler = cluster()
    scheduler.add(Pod("urgent", requests={"cpu": 1000}, host_ports=PORT, priority=100), 0.0)
    failed, preempting = scheduler.run(0.0)
    assert failed.kind == "unschedulable"
    assert failed.message == f"0/1 nodes are available: 1 {REASON}."
    assert (preempting.kind, preempting.node, preempting.victims) == ("preempting", "n", ("default/low",))


def test_an_equal_priority_pod_finds_no_victims() -> None:
    scheduler = cluster()
    scheduler.add(Pod("same", requests={"cpu": 1000}, host_ports=PORT), 0.0)
    (failed,) = scheduler.run(0.0)
    assert failed.message == (
        f"0/1 nodes are available: 1 {REASON}. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
