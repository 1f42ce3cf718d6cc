"""Kueue's ``Topology`` (``kueue.x-k8s.io/v1alpha1|v1beta1|v1beta2``) and Topology-Aware Scheduling at
admission, through a ResourceFlavor's ``topologyName``.

Rules from ``kubernetes-sigs/kueue``: ``apis/kueue/v1beta2/topology_types.go`` (levels widest first,
1 to 16, ``kubernetes.io/hostname`` only as the lowest), ``pkg/cache/scheduler/clusterqueue.go``
(a TAS flavor whose Topology is missing leaves the ClusterQueue inactive),
``pkg/scheduler/flavorassigner/tas_flavorassigner.go`` (``Flavor "f" does not support
TopologyAwareScheduling``, ``Flavor "f" does not contain the requested level``) and
``pkg/cache/scheduler/tas_flavor_snapshot.go`` (``topology "t" doesn't allow to fit any of N pod(s)``,
``allows to fit only K out of N``). The published example is
``site/static/examples/tas/sample-{gpu-queues,job-required}.yaml``.
"""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings

from conftest import kueue_queues, pods_by_name, queued_job, simulated, simulated_text
from shared_files import UPSTREAM, needs_upstream

TOPOLOGY = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: default}
spec:
  levels:
  - nodeLabel: example.com/block
  - nodeLabel: example.com/rack
  - nodeLabel: kubernetes.io/hostname
"""


def node(name: str, block: str, rack: str, gpus: int = 8) -> str:
    return f"""
---
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{kubernetes.io/hostname: {name}, example.com/block: {block}, example.com/rack: {rack}, pool: tas}}
status:
  capacity: {{cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "{gpus}"}}
"""


QUEUES = "\n---" + kueue_queues(
    "tas", 64, "queue", "default", flavor_spec="  nodeLabels: {pool: tas}\n  topologyName: default"
)
CLUSTER = node("n0", "b1", "r1") + node("n1", "b1", "r1") + node("n2", "b1", "r2") + node("n3", "b2", "r3")


def job(name: str, pods: int, gpus: int, annotation: str, at: str = "0s") -> str:
    spec = f"  parallelism: {pods}\n  completions: {pods}\n"
    return queued_job(name, at, gpus, annotations=f"{annotation}, gpufleet.io/duration: 1h", spec=spec)


REQUIRED_RACK = "kueue.x-k8s.io/podset-required-topology: example.com/rack"


def test_topology_levels_are_read_widest_first(tmp_path: Path) -> None:
    scenario = load(tmp_path, TOPOLOGY + QUEUES)
    assert scenario.kueue.topologies["default"].levels == (
        "example.com/block",
        "example.com/rack",
        "kubernetes.io/hostname",
    )
    assert scenario.kueue.flavors["tas"].topology == "default"


def test_topology_level_rules_and_a_missing_topology(tmp_path: Path) -> None:
    """The CRD: hostname only at the lowest level, distinct labels, at least one level."""
    text = """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Topology
metadata: {name: a}
spec:
  levels: [{nodeLabel: kubernetes.io/hostname}, {nodeLabel: rack}, {nodeLabel: rack}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: b}
spec: {levels: []}
"""
    lines = problems(tmp_path, text)
    assert lines[0].startswith(
        "scenario.yaml: document 1 (Topology/a): spec.levels[0].nodeLabel: Invalid value"
    )
    assert "can only be used at the lowest level" in lines[0]
    assert lines[1].startswith("scenario.yaml: document 1 (Topology/a): spec.levels[2].nodeLabel: Duplicate")
    assert lines[2].startswith("scenario.yaml: document 2 (Topology/b): spec.levels: Invalid value: 0")
    assert warnings(tmp_path, QUEUES) == [
        'scenario.yaml: document 1 (ResourceFlavor/tas): spec.topologyName: no Topology "default": '
        "the ClusterQueues using this flavor are inactive, admit nothing"
    ]


def test_required_rack_places_every_pod_in_one_rack(tmp_path: Path) -> None:
    """12 pods of 1 GPU need one rack: r1 (two nodes, 16 GPUs) holds them, r2 and r3 (8) do not."""
    pods = pods_by_name(
        simulated_text(tmp_path, TOPOLOGY + QUEUES + CLUSTER + job("train", 12, 1, REQUIRED_RACK))
    )
    nodes = {p["node"] for name, p in pods.items() if name.startswith("train-")}
    assert nodes == {"n0", "n1"}
    assert all(p["bound_s"] == 0.0 for p in pods.values())


def test_required_rack_waits_rather_than_spread_with_kueues_message(tmp_path: Path) -> None:
    """20 GPUs fit the cluster (32) but no rack (16 at most): the Job is not admitted."""
    pods = pods_by_name(
        simulated_text(tmp_path, TOPOLOGY + QUEUES + CLUSTER + job("big", 20, 1, REQUIRED_RACK))
    )
    assert pods["big-0"]["phase"] == "Pending"
    assert pods["big-0"]["message"] == (
        'couldn\'t assign flavors to pod set main: topology "default" allows to fit only 16 out of 20 pod(s)'
    )


def test_preferred_rack_climbs_to_the_block_when_no_rack_holds_the_pod_set(tmp_path: Path) -> None:
    """``podset-preferred-topology``: no rack holds 20 GPUs, so the next level up: block b1 (24)."""
    preferred = "kueue.x-k8s.io/podset-preferred-topology: example.com/rack"
    pods = pods_by_name(simulated_text(tmp_path, TOPOLOGY + QUEUES + CLUSTER + job("big", 20, 1, preferred)))
    assert all(pods[f"big-{i}"]["bound_s"] == 0.0 for i in range(20))
    assert {pods[f"big-{i}"]["node"] for i in range(20)} == {"n0", "n1", "n2"}  # the next level: block b1


def test_a_level_the_topology_lacks_and_a_flavor_without_topology(tmp_path: Path) -> None:
    unknown = "kueue.x-k8s.io/podset-required-topology: example.com/zone"
    pods = pods_by_name(simulated_text(tmp_path, TOPOLOGY + QUEUES + CLUSTER + job("z", 2, 1, unknown)))
    assert (
        pods["z-0"]["message"]
        == 'couldn\'t assign flavors to pod set main: Flavor "tas" does not contain the requested level'
    )
    plain = QUEUES.replace("  topologyName: default\n", "")
    pods = pods_by_name(simulated_text(tmp_path, TOPOLOGY + plain + CLUSTER + job("r", 2, 1, REQUIRED_RACK)))
    assert pods["r-0"]["message"] == (
        'couldn\'t assign flavors to pod set main: Flavor "tas" does not support TopologyAwareScheduling'
    )


def test_a_second_workload_takes_the_rooms_the_first_left(tmp_path: Path) -> None:
    """Two 16-GPU pod sets requiring one rack: the first takes r1; the second fits no rack (r2 and r3
    have 8 each) and waits until the first ends."""
    text = TOPOLOGY + QUEUES + CLUSTER + job("a", 2, 8, REQUIRED_RACK) + job("b", 2, 8, REQUIRED_RACK, "1s")
    pods = pods_by_name(simulated_text(tmp_path, text))
    assert {pods["a-0"]["node"], pods["a-1"]["node"]} == {"n0", "n1"}
    assert pods["b-0"]["bound_s"] == 3600.0
    assert {pods["b-0"]["node"], pods["b-1"]["node"]} == {"n0", "n1"}


@needs_upstream
def test_kueue_tas_sample_admits_the_job_into_one_rack() -> None:
    """Scenario ``kueue-tas-gpu``: the sample Job's 10 pods require one ``topology-rack``; the two
    H100 nodes are racks r1 and r2, so all 10 run on one node."""
    summary = simulated(
        [
            UPSTREAM / "_clusters/h100-nodes.yaml",
            UPSTREAM / "_clusters/sim-1h.yaml",
            UPSTREAM / "kueue/tas/sample-gpu-queues.yaml",
            UPSTREAM / "kueue/tas/sample-job-required.yaml",
        ]
    )
    pods = [p for p in summary["pods"] if "tas-sample-required" in p["name"]]
    assert len(pods) == 10 and all(p["phase"] == "Running" for p in pods)
    assert len({p["node"] for p in pods}) == 1
