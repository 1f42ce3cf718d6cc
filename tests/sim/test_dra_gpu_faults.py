"""A GPU fault on a GPU published as a DRA device: the pods whose claims hold it fail (the XID kills their
processes), and the NVIDIA DRA driver's health check (``kubernetes-sigs/dra-driver-nvidia-gpu``,
``DeviceHealthCheck``) taints the device ``NoSchedule`` in its ResourceSlice (KEP-5055 device taints):
the scheduler's allocator skips it until the GPU reset."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import pods_by_name, simulated, write
from tests.scenarios.test_dra import GPU_CLASS, claim_template, simulation
from tests.sim.test_faults import faults

SCENARIO = (
    """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 1
  gpu: {model: H100-80GB, count: 2, publishResourceSlices: true}
  template:
    status:
      capacity: {cpu: "96", memory: 1Ti, pods: "110"}
"""
    + GPU_CLASS
    + claim_template("one-gpu", 1)
    + simulation("4h")
    + "---"
    + faults("{at: 1h, node: h100-0, gpu: 0, kind: xid-48}")
)


def job(name: str, at: str) -> str:
    return f"""---
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, annotations: {{gpufleet.io/submit-at: {at}}}}}
spec:
  template:
    metadata:
      annotations: {{gpufleet.io/duration: 2h}}
    spec:
      restartPolicy: Never
      resourceClaims:
      - {{name: gpus, resourceClaimTemplateName: one-gpu}}
      containers:
      - name: c
        image: x
        resources:
          claims: [{{name: gpus}}]
"""


def test_a_faulty_dra_gpu_fails_its_claims_pods_and_is_tainted_until_its_reset(tmp_path: Path) -> None:
    """The pod on gpu-0 fails at 1 h; its Job's retry takes gpu-1 (gpu-0 is tainted); a Job created at
    1h 2m waits for gpu-0 until its reset at 1h 5m."""
    summary = simulated(write(tmp_path, SCENARIO, job("a", "0s"), job("b", "1h2m")))
    (fault,) = summary["faults"]["faults"]
    assert fault["note"] is None and fault["pods_hit"] == ["default/a-0"] and fault["gpus_out"] == 1
    assert fault["time_to_recovery_s"] == 300
    pods = pods_by_name(summary)
    assert pods["a-0"]["phase"] == "Failed" and pods["a-0"]["devices"] == ["gpu.nvidia.com/h100-0/gpu-0"]
    assert pods["a-0-r1"]["devices"] == ["gpu.nvidia.com/h100-0/gpu-1"]
    assert pods["b-0"]["bound_s"] == 3600 + 300 and pods["b-0"]["devices"] == ["gpu.nvidia.com/h100-0/gpu-0"]


def test_a_node_fault_counts_the_gpus_the_node_publishes_as_dra_devices(tmp_path: Path) -> None:
    """A NIC fault reboots the node: its 2 DRA GPUs are out of service for the reboot (10 min)."""
    scenario = SCENARIO.replace("kind: xid-48", "kind: nic")
    (fault,) = simulated(write(tmp_path, scenario, job("a", "0s")))["faults"]["faults"]
    assert fault["pods_hit"] == ["default/a-0"] and fault["gpus_out"] == 2
    assert fault["gpu_hours_lost"] == round(2 * 600 / 3600, 6)


def test_a_hang_on_a_dra_gpu_hangs_the_pod_whose_claim_holds_it(tmp_path: Path) -> None:
    scenario = SCENARIO.replace("kind: xid-48", "kind: process-hang")
    (fault,) = simulated(write(tmp_path, scenario, job("a", "0s")))["faults"]["faults"]
    assert fault["pods_hit"] == ["default/a-0"] and fault["detection_s"] is None  # no livenessProbe
