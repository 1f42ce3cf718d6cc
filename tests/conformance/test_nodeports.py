"""Upstream's ``pkg/scheduler/framework/plugins/nodeports/node_ports_test.go`` (Kubernetes v1.34.10),
case by case, against gpufleet's NodePorts plugin. Each pod is written as a ``PodSpec`` and read by
``kube.host_ports`` (``util.GetHostPorts``), as upstream's ``newPod("m1", "UDP/127.0.0.1/8080")``
and ``st.MakePod().InitContainerPort(...)`` build it; the pods already on the node are assigned to
node ``m1`` (``framework.NewNodeInfo(pods...)``).
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import hint_of

from gpufleet.cluster.state import ClusterState
from gpufleet.kube.host_ports import host_ports
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling.events import EventPod
from gpufleet.scheduling.framework import Code, PodContext
from gpufleet.scheduling.plugins.node_ports import REASON, NodePorts, after_pod_deleted

UPSTREAM = "nodeports/node_ports_test.go"
NODE = Node("m1", capacity={"pods": 110, "cpu": 4000, "memory": 2**33})


def port_spec(*infos: str) -> dict[str, Any]:
    """``newPod``: each ``PROTOCOL/hostIP/hostPort`` one port of the pod's one container."""
    ports = []
    for info in infos:
        protocol, ip, port = info.split("/")
        ports.append({"hostIP": ip, "hostPort": int(port), "protocol": protocol})
    return {"containers": [{"name": "c", "image": "pause", "ports": ports}]}


def sidecar_spec(sidecar: bool) -> dict[str, Any]:
    """``InitContainerPort(sidecar, [{ContainerPort: 8001, HostPort: 8001, Protocol: TCP}])``."""
    init: dict[str, Any] = {
        "name": "init",
        "image": "pause",
        "ports": [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}],
    }
    if sidecar:
        init["restartPolicy"] = "Always"
    return {"initContainers": [init], "containers": [{"name": "c", "image": "pause"}]}


def pod(name: str, spec: dict[str, Any]) -> Pod:
    return Pod(name, host_ports=host_ports(spec))


CASES = [
    ("skip filter", {"containers": []}, None, "skip"),
    ("other port", port_spec("UDP/127.0.0.1/8080"), port_spec("UDP/127.0.0.1/9090"), "fits"),
    ("same udp port", port_spec("UDP/127.0.0.1/8080"), port_spec("UDP/127.0.0.1/8080"), "conflict"),
    ("same tcp port", port_spec("TCP/127.0.0.1/8080"), port_spec("TCP/127.0.0.1/8080"), "conflict"),
    ("different host ip", port_spec("TCP/127.0.0.1/8080"), port_spec("TCP/127.0.0.2/8080"), "fits"),
    ("different protocol", port_spec("UDP/127.0.0.1/8080"), port_spec("TCP/127.0.0.1/8080"), "fits"),
    (
        "second udp port conflict",
        port_spec("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        port_spec("UDP/127.0.0.1/8080"),
        "conflict",
    ),
    (
        "first tcp port conflict",
        port_spec("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        port_spec("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
        "conflict",
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        port_spec("TCP/0.0.0.0/8001"),
        port_spec("TCP/127.0.0.1/8001"),
        "conflict",
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        port_spec("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        port_spec("TCP/127.0.0.1/8001"),
        "conflict",
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        port_spec("TCP/127.0.0.1/8001"),
        port_spec("TCP/0.0.0.0/8001"),
        "conflict",
    ),
    ("second different protocol", port_spec("UDP/127.0.0.1/8001"), port_spec("TCP/0.0.0.0/8001"), "fits"),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        port_spec("UDP/127.0.0.1/8001"),
        port_spec("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
        "conflict",
    ),
    ("non-sidecar initContainer using hostPort", sidecar_spec(False), port_spec("TCP/0.0.0.0/8001"), "skip"),
    (
        "TCP hostPort conflict from sidecar initContainer",
        sidecar_spec(True),
        port_spec("TCP/0.0.0.0/8001"),
        "conflict",
    ),
]


@pytest.mark.parametrize(
    ("spec", "existing", "want"), [pytest.param(*c[1:], id=f"TestNodePorts/{c[0]}") for c in CASES]
)
def test_node_ports(spec: dict[str, Any], existing: dict[str, Any] | None, want: str) -> None:
    state = ClusterState([NODE])
    if existing is not None:
        state.assign(pod("existing", existing), "m1", 0.0)
    pre = NodePorts().pre_filter_pods(PodContext(pod("incoming", spec), state))
    if want == "skip":
        assert pre is None  # PreFilter's Skip: the Filter does not run
        return
    assert pre is not None
    assert pre.reject(0) == (None if want == "fits" else (REASON, Code.UNSCHEDULABLE))


def test_pre_filter_disabled() -> None:
    pytest.skip(
        f"{UPSTREAM} TestPreFilterDisabled: Filter run without PreFilter's cycle state is an internal "
        "error upstream; gpufleet's filter reads the pod itself and has no cycle state to miss"
    )


def host_port(port: int) -> dict[str, Any]:
    """``st.MakePod().HostPort(port)``: one container with that host port (TCP, every IP)."""
    return {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": port, "hostPort": port}]}]}


def deleted(node: str, spec: dict[str, Any]) -> EventPod:
    """The pod deleted (``st.MakePod().Node(node)...``): on ``node``, '' when unscheduled."""
    return EventPod(pod("deleted", spec), node)


WANTS_8080 = pod("incoming", host_port(8080))
DELETED_CASES: list[Any] = [
    ("backoff-wrong-old-object", "not-a-pod", "error"),
    ("skip-queue-on-unscheduled", deleted("", {"containers": []}), "QueueSkip"),
    ("skip-queue-on-non-hostport", deleted("fake-node", {"containers": []}), "QueueSkip"),
    ("skip-queue-on-unrelated-hostport", deleted("fake-node", host_port(8081)), "QueueSkip"),
    ("queue-on-released-hostport", deleted("fake-node", host_port(8080)), "Queue"),
]


@pytest.mark.parametrize(
    ("old", "want"),
    [pytest.param(*c[1:], id=f"Test_isSchedulableAfterPodDeleted/{c[0]}") for c in DELETED_CASES],
)
def test_is_schedulable_after_pod_deleted(old: object, want: str) -> None:
    assert hint_of(after_pod_deleted, WANTS_8080, old, None) == want
