"""``gpufleet describe node``: kubectl's ``describe node`` layout (``k8s.io/kubectl`` v0.34.10
``pkg/describe/describe.go`` ``describeNode``, ``describeNodeResource``) for a simulated node, a node of
a kubectl dump and a saved summary.json, then gpufleet's own part: which pod holds each GPU device and
what keeps each pending pod off the node (``explain``'s ``node_needs``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from conftest import write
from gpufleet.cli import app

runner = CliRunner()

SCENARIO = """
{apiVersion: gpufleet.io/v1alpha1, kind: Simulation, metadata: {name: describe-node}, spec: {duration: 10m}}
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-0
  labels: {node-role.kubernetes.io/gpu-worker: "", nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
spec:
  taints: [{key: example.com/maintenance, value: soon, effect: PreferNoSchedule}]
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Pod
metadata: {name: serve, namespace: ml}
spec:
  containers:
  - {name: c, image: llm, resources: {requests: {cpu: "5", memory: 64Gi}, limits: {nvidia.com/gpu: "3"}}}
---
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  containers:
  - name: c
    image: trainer
    resources: {requests: {cpu: "10", memory: 174Gi}, limits: {nvidia.com/gpu: "4"}}
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: ml}
spec:
  containers:
  - {name: c, image: trainer, resources: {limits: {nvidia.com/gpu: "4"}}}
"""


def describe(*args: str) -> str:
    result = runner.invoke(app, ["describe", "node", *args])
    assert result.exit_code == 0, result.output
    return str(result.output)


def field(output: str, label: str) -> str:
    """The value of ``Label:`` in the layout (the first such line)."""
    line = next(line for line in output.splitlines() if line.startswith(f"{label}:"))
    return line.split(":", 1)[1].strip()


def table(output: str, title: str) -> dict[str, list[str]]:
    """The rows under ``title`` until the next unindented line, by their first cell, split on runs of
    two spaces or more."""
    lines = output.split(f"\n{title}")[1].splitlines()[1:]
    rows = {}
    for line in lines:
        if not line.startswith("  "):
            break
        cells = [c for c in line.strip().split("  ") if c.strip()]
        rows[cells[0].strip()] = [c.strip() for c in cells[1:]]
    return rows


def test_a_simulated_node_shows_kubectls_fields_pods_and_allocated_resources(tmp_path: Path) -> None:
    """``describeNode``: Roles from ``node-role.kubernetes.io/<role>`` (``findNodeRoles``), Taints as
    ``Taint.ToString``; ``describeNodeResource``: each pod's CPU and memory requests with their share of
    allocatable cut by ``int64(float64)`` (5/32 cpu = 15.6 %: 15 %; 174Gi/256Gi = 67.97 %: 67 %), the totals
    (15/32 = 46.9 %: 46 %; 238Gi/256Gi = 92.97 %: 92 %), nvidia.com/gpu without a share (an extended
    resource); gpufleet models no CPU or memory limits, and a GPU's limit is its request."""
    output = describe("gpu-0", *map(str, write(tmp_path, SCENARIO)))
    assert (field(output, "Name"), field(output, "Roles")) == ("gpu-0", "gpu-worker")
    assert field(output, "Taints") == "example.com/maintenance=soon:PreferNoSchedule"
    assert (field(output, "Unschedulable"), field(output, "Annotations")) == ("false", "<not modelled>")
    assert field(output, "CreationTimestamp") == "t=0 s (simulated)"
    assert "Non-terminated Pods:  (2 in total)" in output
    rows = [line.split() for line in output.splitlines() if line.startswith("  ml ")]
    assert [r[1:4] for r in rows] == [["serve", "5", "(15%)"], ["train", "10", "(31%)"]]
    assert rows[1][6:8] == ["174Gi", "(67%)"] and rows[0][-1] == "10m"  # aged at the end of the run
    allocated = table(
        output, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)"
    )
    assert allocated["cpu"] == ["15 (46%)", "<not modelled>"]
    assert allocated["memory"] == ["238Gi (92%)", "<not modelled>"]
    assert allocated["nvidia.com/gpu"] == ["7", "7"]
    assert field(output, "Events") == "<not modelled>"


def test_gpufleets_part_shows_which_pod_holds_each_gpu_and_which_are_free(tmp_path: Path) -> None:
    output = describe("gpu-0", *map(str, write(tmp_path, SCENARIO)))
    ours = output.split("gpufleet (not part of kubectl describe node):")[1]
    devices = {
        row.split()[0]: row.split()[4:]
        for row in ours.splitlines()
        if row.startswith("    ") and row.split()[1:2] == ["nvidia.com/gpu"]
    }
    assert devices == {
        **{str(g): ["held", "ml/serve"] for g in range(3)},
        **{str(g): ["held", "ml/train"] for g in range(3, 7)},
        "7": ["free"],
    }
    assert "free:            1 of 8" in ours
    assert "model:           NVIDIA-H100-80GB-HBM3" in ours


def test_a_pending_pod_says_what_keeps_it_off_this_node(tmp_path: Path) -> None:
    """``explain``'s per-node answer for the pending pod: 3 more GPUs here, freed if ml/train were gone;
    beside it the scheduler's message for the whole cluster."""
    output = describe("gpu-0", *map(str, write(tmp_path, SCENARIO)))
    pending = output.split("Pending pods, and what keeps each off this node:")[1].splitlines()
    assert pending[1:3] == [
        "    ml/big (GPUs: 4):",
        "      here: needs 3 more nvidia.com/gpu (e.g. if ml/train were gone)",
    ]
    assert pending[3].startswith(
        "      whole cluster: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    )


def dump(tmp_path: Path) -> Path:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "gpu-1",
            "creationTimestamp": "2025-06-01T08:00:00Z",
            "labels": {"kubernetes.io/role": "worker", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}], "unschedulable": True},
        "status": {
            "capacity": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "4"},
            "allocatable": {"cpu": "63", "memory": "500Gi", "pods": "110", "nvidia.com/gpu": "4"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": "2025-06-01T10:00:00Z",
                    "lastTransitionTime": "2025-06-01T08:01:00Z",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
        },
    }
    tolerate = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    running = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "infer", "namespace": "ml", "creationTimestamp": "2025-06-01T09:00:00Z"},
        "spec": {
            "nodeName": "gpu-1",
            "tolerations": tolerate,
            "containers": [
                {
                    "name": "c",
                    "image": "vllm",
                    "resources": {
                        "requests": {"cpu": "2", "memory": "16Gi", "nvidia.com/gpu": "2"},
                        "limits": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "2"},
                    },
                }
            ],
        },
        "status": {"phase": "Running"},
    }
    done = {**running, "metadata": {"name": "old", "namespace": "ml"}, "status": {"phase": "Succeeded"}}
    waiting = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "wide", "namespace": "ml"},
        "spec": {
            "tolerations": tolerate,
            "containers": [{"name": "c", "image": "t", "resources": {"limits": {"nvidia.com/gpu": "4"}}}],
        },
        "status": {"phase": "Pending"},
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "gpu-1.cordon", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": "gpu-1"},
        "type": "Normal",
        "reason": "NodeNotSchedulable",
        "message": "Node gpu-1 status is now: NodeNotSchedulable",
        "source": {"component": "kubelet"},
        "lastTimestamp": "2025-06-01T09:30:00Z",
    }
    path = tmp_path / "dump.json"
    items = [node, running, done, waiting, event]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def test_a_kubectl_dump_node_is_described_as_the_dump_has_it(tmp_path: Path) -> None:
    """``describeNode`` on a dump: CreationTimestamp and the conditions' times in ``time.RFC1123Z``, the
    role of ``kubernetes.io/role``, a taint without a value (``key:effect``), the pods bound to it that
    have not terminated (kubectl's field selector leaves Succeeded and Failed out) with their limits over
    allocatable (2/63 cpu = 3.17 %: 3 %; 4/63 = 6.3 %: 6 %), its Events (``involvedObject`` the Node)."""
    output = describe("gpu-1", str(dump(tmp_path)))
    assert field(output, "Roles") == "worker"
    assert field(output, "CreationTimestamp") == "Sun, 01 Jun 2025 08:00:00 +0000"
    assert field(output, "Taints") == "nvidia.com/gpu:NoSchedule"
    assert field(output, "Unschedulable") == "true"
    assert field(output, "Annotations") == "node.alpha.kubernetes.io/ttl=0"
    ready = next(line for line in output.splitlines() if line.startswith("  Ready "))
    assert ready.split()[:2] == ["Ready", "True"] and "Sun, 01 Jun 2025 08:01:00 +0000" in ready
    assert ready.endswith("KubeletReady   kubelet is posting ready status")
    assert "Non-terminated Pods:  (1 in total)" in output
    infer = next(line for line in output.splitlines() if line.startswith("  ml ")).split()
    assert infer[1:10] == ["infer", "2", "(3%)", "4", "(6%)", "16Gi", "(3%)", "32Gi", "(6%)"]
    allocated = table(
        output, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)"
    )
    assert allocated["nvidia.com/gpu"] == ["2", "2"]
    assert allocated["cpu"] == ["2 (3%)", "4 (6%)"]
    event = next(line for line in output.splitlines() if "NodeNotSchedulable" in line).split()
    assert event[:2] == ["Normal", "NodeNotSchedulable"] and "kubelet" in event


def test_a_dumps_node_shows_its_lease_addresses_system_info_and_pod_cidrs(tmp_path: Path) -> None:
    """``describeNode``: Lease (``describeNodeLease``: the dump's ``kube-node-lease/<node>``) after
    Unschedulable, Addresses after the Conditions, System Info (``status.nodeInfo``, every field, empty ones
    too) after Allocatable, then PodCIDR, PodCIDRs and ProviderID where set; a simulated node has none of
    them."""
    path = dump(tmp_path)
    listed = json.loads(path.read_text())
    node = listed["items"][0]
    node["status"]["addresses"] = [
        {"type": "InternalIP", "address": "10.0.3.7"},
        {"type": "Hostname", "address": "gpu-1"},
    ]
    node["status"]["nodeInfo"] = {
        "machineID": "m1",
        "systemUUID": "",
        "bootID": "b1",
        "kernelVersion": "6.8.0",
        "osImage": "Ubuntu 24.04",
        "operatingSystem": "linux",
        "architecture": "amd64",
        "containerRuntimeVersion": "containerd://2.0.4",
        "kubeletVersion": "v1.34.10",
        "kubeProxyVersion": "",
    }
    node["spec"].update(podCIDR="10.244.3.0/24", podCIDRs=["10.244.3.0/24"], providerID="aws:///i-0abc")
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "gpu-1", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "gpu-1", "renewTime": "2025-06-01T10:00:05.000000Z"},
    }
    listed["items"].append(lease)
    path.write_text(json.dumps(listed))
    lines = describe("gpu-1", str(path)).splitlines()
    start = lines.index("Lease:")
    assert lines[start + 1 : start + 4] == [
        "  HolderIdentity:  gpu-1",
        "  AcquireTime:     <unset>",
        "  RenewTime:       Sun, 01 Jun 2025 10:00:05 +0000",
    ]
    unschedulable = next(i for i, line in enumerate(lines) if line.startswith("Unschedulable:"))
    assert start == unschedulable + 1
    addresses = lines.index("Addresses:")
    assert lines[addresses + 1 : addresses + 3] == ["  InternalIP:  10.0.3.7", "  Hostname:    gpu-1"]
    assert addresses > lines.index("Conditions:")
    info = lines.index("System Info:")
    assert info > lines.index("Allocatable:")
    assert lines[info + 1].split() == ["Machine", "ID:", "m1"]
    assert "  System UUID:" in lines[info + 2] and lines[info + 2].strip() == "System UUID:"
    assert lines[info + 8].split()[-1] == "containerd://2.0.4"
    assert lines[info + 9].split()[-1] == "v1.34.10"
    assert lines[info + 11 : info + 14] == [
        "PodCIDR:     10.244.3.0/24",
        "PodCIDRs:    10.244.3.0/24",
        "ProviderID:  aws:///i-0abc",
    ]
    simulated = describe("gpu-0", *map(str, write(tmp_path, SCENARIO))).splitlines()
    assert "Addresses:  <not modelled>" in simulated and "System Info:  <not modelled>" in simulated
    assert "Lease:" not in simulated


def test_a_dumps_pending_pod_and_the_gpus_held_without_their_devices(tmp_path: Path) -> None:
    """A dump holds no device assignment: the GPUs held are counted; the pending pod is ruled out here by
    NodeUnschedulable (a cordoned node), as ``explain`` judges it."""
    output = describe("gpu-1", str(dump(tmp_path)))
    ours = output.split("gpufleet (not part of kubectl describe node):")[1]
    assert "free:            2 of 4" in ours
    assert "a kubectl dump does not say which device each pod holds" in ours
    assert "    ml/infer  2     <unknown>" in ours
    pending = ours.split("Pending pods, and what keeps each off this node:")[1].splitlines()
    assert pending[1:3] == [
        "    ml/wide (GPUs: 4):",
        "      here: ruled out: node(s) were unschedulable",
    ]


def test_an_unknown_node_is_one_line_and_status_2(tmp_path: Path) -> None:
    scenario = runner.invoke(app, ["describe", "node", "nope", *map(str, write(tmp_path, SCENARIO))])
    dumped = runner.invoke(app, ["describe", "node", "nope", str(dump(tmp_path))])
    assert (scenario.exit_code, dumped.exit_code) == (2, 2)
    assert scenario.output.strip() == "no node named nope (nodes: gpu-0)"
    assert dumped.output.strip() == "no node named nope (nodes: gpu-1)"


def test_bad_input_is_its_file_and_field_and_status_2(tmp_path: Path) -> None:
    bad = SCENARIO.replace('cpu: "32"', "cpu: lots")
    result = runner.invoke(app, ["describe", "node", "gpu-0", *map(str, write(tmp_path, bad))])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "0.yaml" in result.output and "capacity.cpu" in result.output
    (tmp_path / "summary.json").write_text("{}")
    saved = runner.invoke(app, ["describe", "node", "gpu-0", "--summary", str(tmp_path / "summary.json")])
    assert saved.exit_code == 2
    assert saved.output.startswith(f"--summary {tmp_path / 'summary.json'}: not a gpufleet summary.json")


def test_output_json_and_yaml_are_the_same_record(tmp_path: Path) -> None:
    paths = [str(p) for p in write(tmp_path, SCENARIO)]
    as_json = json.loads(describe("gpu-0", *paths, "-o", "json"))
    as_yaml = yaml.safe_load(describe("gpu-0", *paths, "-o", "yaml"))
    assert as_json == as_yaml
    assert [p["name"] for p in as_json["pods"]] == ["serve", "train"]
    assert as_json["allocated"][0] == {"resource": "cpu", "requests": "15 (46%)", "limits": "<not modelled>"}
    assert [p["pod"] for p in as_json["gpufleet"]["pending"]] == ["ml/big"]
    assert as_json["gpufleet"]["pending"][0]["needs_here"] == ["3 more nvidia.com/gpu"]


def test_a_saved_summary_says_what_it_does_not_hold(tmp_path: Path) -> None:
    paths = write(tmp_path, SCENARIO)
    out = tmp_path / "out"
    assert runner.invoke(app, ["simulate", str(paths[0]), "--out", str(out)]).exit_code == 0
    output = describe("gpu-0", "--summary", str(out / "summary.json"))
    for label in ("Labels", "Taints", "Capacity", "Allocated resources", "Events"):
        assert field(output, label) == "<not in summary.json>"
    assert "Non-terminated Pods:  (2 in total)" in output
    ours = output.split("gpufleet (not part of kubectl describe node):")[1]
    assert "    ml/serve  3     0, 1, 2" in ours and "free:            1 of 8" in ours
    assert "summary.json keeps no per-node reasons" in ours


def test_a_gpu_carrying_fractional_shares_lists_each_share_and_its_holder(tmp_path: Path) -> None:
    """KAI ``gpu-fraction`` and HAMi shares on GPU 0 (``examples/gpu-sharing/fractions.yaml``, every pod
    running to the end): GPU 0 holds shares, each a row with its size; GPU 1 a whole-GPU pod."""
    example = Path(__file__).resolve().parents[2] / "examples" / "gpu-sharing" / "fractions.yaml"
    text = re.sub(r"gpufleet.io/duration: \w+", "gpufleet.io/duration: 1000h", example.read_text())
    output = describe("a100-0", *map(str, write(tmp_path, text)))
    rows = [line.split(None, 5) for line in output.split("Held by\n")[1].split("  Pending")[0].splitlines()]
    assert rows == [
        ["0", "nvidia.com/gpu", "0", "1", "shares", "default/half-a, default/hami-c, default/quarter-b"],
        ["1", "nvidia.com/gpu", "1", "1", "held", "default/train-whole"],
        ["0:500m", "share", "0", "0.5", "held", "default/half-a"],
        ["0:250m", "share", "0", "0.25", "held", "default/hami-c"],
        ["0:250m", "share", "0", "0.25", "held", "default/quarter-b"],
    ]
