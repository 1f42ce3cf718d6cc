"""What a Pod and a Node say for SchedulingGates, NodePorts and ImageLocality: ``spec.schedulingGates``
under the API server's rules (``validateSchedulingGates``, ``ValidatePodCreate``) with gpufleet's
``gpufleet.io/ungate-at``; host ports as ``util.GetHostPorts`` collects them (with ``hostNetwork``'s
defaulting, ``defaultHostNetworkPorts``); container images normalised and a node's ``status.images``."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, pod, problems

from gpufleet.model.host_ports import HostPort

LABEL = "scenario.yaml: document 1 (Pod/default/p)"
GATE_A = "schedulingGates: [{name: a}]"


def test_scheduling_gates_and_their_removal_times_are_read(tmp_path: Path) -> None:
    text = pod(
        spec="schedulingGates: [{name: example.com/quota}, {name: b}]",
        metadata="annotations: {gpufleet.io/ungate-at: '{example.com/quota: 10m, b: 90s}'}",
    )
    read = load(tmp_path, text).pods[0].pod
    assert read.scheduling_gates == ("example.com/quota", "b")
    assert read.behavior.ungate_at == (("example.com/quota", 600.0), ("b", 90.0))
    one = load(tmp_path, pod(spec=GATE_A, metadata="annotations: {gpufleet.io/ungate-at: 2m}"))
    assert one.pods[0].pod.behavior.ungate_at == (("*", 120.0),)
    assert load(tmp_path, text).warnings == []


def test_scheduling_gate_rules_are_the_api_servers(tmp_path: Path) -> None:
    """validateSchedulingGates: qualified names, no duplicates; ValidatePodCreate: no nodeName while gated."""
    lines = problems(tmp_path, pod(spec="nodeName: n1\nschedulingGates: [{name: a}, {name: a}, {name: -x}]"))
    assert f"{LABEL}: spec.schedulingGates[1]: Duplicate value: 'a'" in lines
    invalid = f"{LABEL}: spec.schedulingGates[2].name: Invalid value: '-x': "
    assert any(line.startswith(invalid) for line in lines)
    forbidden = "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"
    assert f"{LABEL}: {forbidden}" in lines


def test_ungate_at_must_name_the_pods_own_gates(tmp_path: Path) -> None:
    annotation = "metadata.annotations.gpufleet.io/ungate-at"
    lines = problems(tmp_path, pod(spec=GATE_A, metadata="annotations: {gpufleet.io/ungate-at: '{b: 1m}'}"))
    assert lines == [f"{LABEL}: {annotation}: 'b' is not one of spec.schedulingGates ['a']"]
    lines = problems(tmp_path, pod(metadata="annotations: {gpufleet.io/ungate-at: 1m}"))
    assert lines == [f"{LABEL}: {annotation}: the pod has no spec.schedulingGates to remove"]


def test_host_ports_of_containers_and_sidecars_only(tmp_path: Path) -> None:
    """GetHostPorts: app containers and restartPolicy Always init containers; hostIP 0.0.0.0 and TCP
    by default; hostPort 0 asks for nothing."""
    text = pod(
        spec="""
        initContainers:
        - {name: setup, image: busybox, ports: [{containerPort: 1, hostPort: 7001}]}
        - name: proxy
          image: envoy
          restartPolicy: Always
          ports: [{containerPort: 2, hostPort: 7002, protocol: UDP}]
        """
    ).replace(
        "    image: busybox\n",
        "    image: busybox\n    ports: [{containerPort: 9400, hostPort: 9400, hostIP: 10.0.0.1}, "
        "{containerPort: 80}]\n",
    )
    read = load(tmp_path, text)
    want = (HostPort("0.0.0.0", "UDP", 7002), HostPort("10.0.0.1", "TCP", 9400))
    assert read.pods[0].pod.host_ports == want
    assert read.warnings == []


def test_host_network_defaults_each_host_port_to_its_container_port(tmp_path: Path) -> None:
    text = pod(spec="hostNetwork: true").replace(
        "    image: busybox\n", "    image: busybox\n    ports: [{containerPort: 9400}]\n"
    )
    assert load(tmp_path, text).pods[0].pod.host_ports == (HostPort("0.0.0.0", "TCP", 9400),)


def test_images_are_normalised_and_a_nodes_images_are_read_by_every_name(tmp_path: Path) -> None:
    text = (
        pod(spec="initContainers: [{name: init, image: 'gcr.io/init:v1'}]")
        + """---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "8", memory: 32Gi}
  images:
  - names: ["busybox:latest", "docker.io/library/busybox@sha256:abc"]
    sizeBytes: 4000000
"""
    )
    scenario = load(tmp_path, text)
    assert scenario.pods[0].pod.images == ("gcr.io/init:v1", "busybox:latest")
    digest = "docker.io/library/busybox@sha256:abc"
    assert scenario.nodes[0].images == {"busybox:latest": 4000000, digest: 4000000}
