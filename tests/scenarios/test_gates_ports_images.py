"""examples/scheduling/gates-ports-images.yaml, and a pulled image drawing the next pod: the default
plugins SchedulingGates, NodePorts and ImageLocality in the simulator, over several seeds (no outcome
rests on a tie)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import pods_by_name, simulated
from gpufleet.kube import load_scenario
from gpufleet.kube.explain import explain_scenario
from gpufleet.scheduling.plugins.node_ports import REASON as PORTS_TAKEN

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scheduling" / "gates-ports-images.yaml"
SEEDS = [0, 1, 2]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_gated_pod_is_pending_with_scheduling_gated_and_never_tried(seed: int) -> None:
    """The API server's condition (``applySchedulingGatedCondition``), not a FailedScheduling message."""
    pods = pods_by_name(simulated([EXAMPLE], seed=seed, duration_s=300.0))
    for name in ("train-0", "train-1"):
        assert pods[name]["phase"] == "Pending" and pods[name]["node"] is None
        assert pods[name]["reason"] == "SchedulingGated"
        assert pods[name]["message"] == "Scheduling is blocked due to non-empty scheduling gates"


@pytest.mark.parametrize("seed", SEEDS)
def test_gates_removed_at_ungate_at_release_the_pods(seed: int) -> None:
    pods = pods_by_name(simulated([EXAMPLE], seed=seed))
    for name in ("train-0", "train-1"):
        assert pods[name]["bound_s"] == 600.0 and pods[name]["reason"] == "Completed"
        assert pods[name]["stages"] == {"scheduling_gated": 600.0}


@pytest.mark.parametrize("seed", SEEDS)
def test_image_locality_puts_the_server_where_its_image_is_and_it_starts_without_a_pull(seed: int) -> None:
    serve = pods_by_name(simulated([EXAMPLE], seed=seed, duration_s=300.0))["serve"]
    assert serve["node"] == "node-a"
    assert serve["running_s"] == serve["created_s"] == 0.0 and "image_pull" not in serve["stages"]


@pytest.mark.parametrize("seed", SEEDS)
def test_one_host_port_per_node_and_the_fourth_exporter_waits(seed: int) -> None:
    pods = pods_by_name(simulated([EXAMPLE], seed=seed, duration_s=300.0))
    exporters = [p for name, p in sorted(pods.items()) if name.startswith("dcgm-exporter-")]
    placed = sorted(p["node"] for p in exporters if p["node"] is not None)
    assert placed == ["node-a", "node-b", "node-c"]
    (waiting,) = [p for p in exporters if p["node"] is None]
    assert waiting["message"].startswith(f"0/3 nodes are available: 3 {PORTS_TAKEN}. ")


PULLED = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: pulled}
spec: {registry: {bandwidth: 1GB/s}, duration: 10m}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  replicas: 3
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Pod
metadata:
  name: first
  annotations: {gpufleet.io/image-size: 10GB}
spec:
  nodeSelector: {kubernetes.io/hostname: gpu-1}
  containers: [{name: c, image: "nvcr.io/nvidia/pytorch:24.05", resources: {limits: {nvidia.com/gpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: second
  annotations: {gpufleet.io/image-size: 10GB, gpufleet.io/submit-at: 60s}
spec:
  containers: [{name: c, image: "nvcr.io/nvidia/pytorch:24.05", resources: {limits: {nvidia.com/gpu: "1"}}}]
"""


@pytest.mark.parametrize("seed", SEEDS)
def test_an_image_the_kubelet_pulled_draws_the_next_pod_that_needs_it(tmp_path: Path, seed: int) -> None:
    """The first pod pulls 10 GB onto gpu-1 (10 s); the second, a minute later, scores ImageLocality 100
    there (10 GB x 1/3 of the nodes is above 1000 MiB) against 0, and starts without a pull."""
    path = tmp_path / "pulled.yaml"
    path.write_text(PULLED)
    pods = pods_by_name(simulated([path], seed=seed))
    assert pods["first"]["stages"].get("image_pull") == 10.0
    second = pods["second"]
    assert second["node"] == "gpu-1" and second["running_s"] == 60.0 and "image_pull" not in second["stages"]


def test_explain_says_a_gated_pod_cannot_be_scheduled_yet_and_who_holds_a_host_port() -> None:
    explained = {e["pod"]: e for e in explain_scenario(load_scenario([EXAMPLE]))}
    gated = explained["default/train-0"]
    assert gated["schedulable_now"] is None
    assert gated["message"].startswith("cannot be scheduled yet: scheduling gates [example.com/quota] ")
    fourth = explained["default/dcgm-exporter-3"]
    assert fourth["message"].startswith(f"0/3 nodes are available: 3 {PORTS_TAKEN}. ")
    needs = ["host port 0.0.0.0:9400/TCP free"]
    held = {"node": "node-a", "needs": needs, "evict": ["default/dcgm-exporter-0"]}
    assert held in fourth["closest_nodes"]


GATED_ON_EMPTY_POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: gated-pool}
spec: {duration: 30m}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  max: 2
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Pod
metadata:
  name: gated
  annotations: {gpufleet.io/ungate-at: 10m}
spec:
  schedulingGates: [{name: example.com/quota}]
  containers: [{name: c, image: trainer, resources: {limits: {nvidia.com/gpu: "8"}}}]
"""


def test_cluster_autoscaler_launches_nothing_for_a_gated_pod_until_its_gate_goes(tmp_path: Path) -> None:
    """cluster-autoscaler scales up for pods whose PodScheduled condition is Unschedulable; a gated
    pod's is SchedulingGated. Once the gate goes at 10 min, the pod fails to fit and a node comes."""
    path = tmp_path / "gated.yaml"
    path.write_text(GATED_ON_EMPTY_POOL)
    summary = simulated([path])
    launched = [n["created_s"] for n in summary["nodes"]]
    assert launched and min(launched) >= 600.0
    assert pods_by_name(summary)["gated"]["node"] == "gpu-0"


DEPLOYMENT_AND_BAKED_IMAGE = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: per-gate}
spec: {duration: 10m, registry: {bandwidth: 1GB/s}}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: baked}
spec:
  replicas: 1
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
      images: [{names: ["vllm/vllm-openai:v0.6.3"], sizeBytes: 15000000000}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: serve}
spec:
  replicas: 1
  selector: {matchLabels: {app: serve}}
  template:
    metadata:
      labels: {app: serve}
      annotations:
        gpufleet.io/ungate-at: '{example.com/a: 1m, example.com/b: 3m}'
        gpufleet.io/image-size: 15GB
    spec:
      schedulingGates: [{name: example.com/a}, {name: example.com/b}]
      containers: [{name: vllm, image: "vllm/vllm-openai:v0.6.3", resources: {limits: {nvidia.com/gpu: "1"}}}]
"""


def test_a_deployments_pod_waits_for_its_last_gate_and_a_baked_image_needs_no_pull(tmp_path: Path) -> None:
    """Each gate of ``ungate-at`` goes at its own time; the pod stays SchedulingGated until the last
    (3 min). The pool's template carries the image (``status.images``), so it starts without a pull."""
    path = tmp_path / "per-gate.yaml"
    path.write_text(DEPLOYMENT_AND_BAKED_IMAGE)
    assert pods_by_name(simulated([path], duration_s=150.0))["serve-0"]["reason"] == "SchedulingGated"
    serve = pods_by_name(simulated([path]))["serve-0"]
    assert (serve["node"], serve["bound_s"], serve["running_s"]) == ("baked-0", 180.0, 180.0)
    assert serve["stages"] == {"scheduling_gated": 180.0}
