"""DRA admin access and network-attached devices end to end: a monitoring pod's admin-access claim on
every GPU of a node leaves those GPUs to the training pods, and a pool of network-attached devices
(a ResourceSlice with a ``nodeSelector``) serves pods only on the nodes it selects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary


def node(name: str, labels: str = "{}") -> str:
    return f"""---
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {labels}}}
status:
  capacity: {{cpu: "32", memory: 256Gi, pods: "110"}}
"""


def device_class(name: str, driver: str) -> str:
    return f"""---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {name}}}
spec:
  selectors:
  - cel: {{expression: 'device.driver == "{driver}"'}}
"""


def template(name: str, namespace: str, device_class_name: str, exactly: str) -> str:
    return f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  spec:
    devices:
      requests:
      - name: devices
        exactly: {{deviceClassName: {device_class_name}, {exactly}}}
"""


def pod(name: str, at: str, claim: str, namespace: str = "default", spec: str = "") -> str:
    """A pod of one hour with one claim; ``claim`` is ``resourceClaimTemplateName: x`` or
    ``resourceClaimName: x``."""
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  annotations: {{gpufleet.io/submit-at: {at}, gpufleet.io/duration: 1h}}
spec:{spec}
  resourceClaims:
  - {{name: devices, {claim}}}
  containers:
  - name: app
    image: app:v1
    resources:
      requests: {{cpu: "1", memory: 1Gi}}
      claims: [{{name: devices}}]
"""


SIMULATION = """---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: dra}
spec: {duration: 30m}
"""
GPU_SLICE = """---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-0-gpus}
spec:
  driver: gpu.nvidia.com
  nodeName: gpu-0
  pool: {name: gpu-0, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}, {name: gpu-3}]
"""
MONITORING = """---
apiVersion: v1
kind: Namespace
metadata:
  name: monitoring
  labels: {resource.kubernetes.io/admin-access: "true"}
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
"""


def run(tmp_path: Path, text: str) -> tuple[Simulation, dict[str, dict[str, Any]]]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    sim = Simulation(load_scenario([path]))
    sim.run()
    return sim, {p["name"]: p for p in build_summary(sim)["pods"]}


def test_a_monitoring_pod_with_admin_access_to_every_gpu_runs_beside_the_training_pods(
    tmp_path: Path,
) -> None:
    """The monitor's ``All`` admin-access claim takes the GPU trainer-0 holds and the three free ones;
    trainer-1, after it, still gets two of those: admin-access results are not allocated devices
    (``foreachAllocatedDevice``)."""
    text = (
        SIMULATION
        + MONITORING
        + node("gpu-0")
        + GPU_SLICE
        + device_class("gpu.nvidia.com", "gpu.nvidia.com")
        + template("two-gpus", "default", "gpu.nvidia.com", "count: 2")
        + template("every-gpu", "monitoring", "gpu.nvidia.com", "allocationMode: All, adminAccess: true")
        + pod("trainer-0", "0s", "resourceClaimTemplateName: two-gpus")
        + pod("monitor", "30s", "resourceClaimTemplateName: every-gpu", namespace="monitoring")
        + pod("trainer-1", "60s", "resourceClaimTemplateName: two-gpus")
    )
    sim, pods = run(tmp_path, text)
    monitor, trainers = pods["monitoring/monitor"], [pods[f"default/trainer-{i}"] for i in range(2)]
    assert all(p["node"] == "gpu-0" and p["phase"] == "Running" for p in (monitor, *trainers))
    every = [f"gpu.nvidia.com/gpu-0/gpu-{i}" for i in range(4)]
    assert sorted(monitor["devices"]) == every
    assert sorted(trainers[0]["devices"] + trainers[1]["devices"]) == every
    dra = sim.state.dra
    assert dra is not None and all(
        r.admin_access for r in dra.allocated["monitoring/monitor-devices"].results
    )


FABRIC_SLICE = """---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric-r1}
spec:
  driver: fabric.example.com
  nodeSelector:
    nodeSelectorTerms:
    - matchExpressions: [{key: rack, operator: In, values: [r1]}]
  pool: {name: fabric-r1, generation: 1, resourceSliceCount: 1}
  devices: [{name: nic-0}, {name: nic-1}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-nic}
spec:
  devices:
    requests:
    - name: nic
      exactly: {deviceClassName: fabric}
"""
PREFER_R2 = """
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        preference: {matchExpressions: [{key: rack, operator: In, values: [r2]}]}"""
ONLY_R2 = """
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [r2]}]}]"""


def test_a_network_attached_pool_serves_pods_only_on_the_nodes_its_slice_selects(tmp_path: Path) -> None:
    """A NIC pool a slice publishes for ``rack: r1``: pods claiming a NIC land on r1 nodes though they
    prefer r2; the shared claim's allocation carries the slice's ``nodeSelector``, so its second
    consumer lands on an r1 node too; a pod that may only run on r2 gets no NIC and waits."""
    text = (
        SIMULATION
        + node("r1-0", "{rack: r1}")
        + node("r2-0", "{rack: r2}")
        + node("r2-1", "{rack: r2}")
        + FABRIC_SLICE
        + device_class("fabric", "fabric.example.com")
        + template("one-nic", "default", "fabric", "count: 1")
        + pod("own-nic", "0s", "resourceClaimTemplateName: one-nic", spec=PREFER_R2)
        + pod("first", "10s", "resourceClaimName: shared-nic")
        + pod("second", "20s", "resourceClaimName: shared-nic", spec=PREFER_R2)
        + pod("r2-only", "30s", "resourceClaimTemplateName: one-nic", spec=ONLY_R2)
    )
    sim, pods = run(tmp_path, text)
    for name in ("own-nic", "first", "second"):
        assert pods[f"default/{name}"]["node"] == "r1-0", name
    dra = sim.state.dra
    assert dra is not None
    allocation = dra.allocated["default/shared-nic"]
    assert allocation.node_name is None and allocation.node_selector[0].matches(sim.state.nodes[0])
    waiting = pods["default/r2-only"]
    assert waiting["phase"] == "Pending" and "cannot allocate all claims" in waiting["message"]
