"""``gpufleet whatif``: a snapshot (``kubectl get ... -o json`` per kind, as ``gpufleet snapshot`` writes
it) simulated forward as it is and with changes, side by side. Each change kind changes the outcome
as the upstream behaviour it brings in says it must."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpufleet.cli import app

H100 = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}


def node(name: str, gpus: int = 8, labels: dict[str, str] | None = None) -> dict[str, Any]:
    capacity = {"cpu": "96", "memory": "768Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {**H100, "kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def pod(
    name: str,
    gpus: int = 8,
    on: str | None = None,
    job: str | None = None,
    priority_class: str | None = None,
    scheduler: str | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ml", "uid": f"uid-{name}"}
    if job is not None:
        meta["labels"] = {"batch.kubernetes.io/job-name": job}
        meta["ownerReferences"] = [
            {"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": f"uid-{job}", "controller": True}
        ]
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "c",
                "image": "pytorch/pytorch",
                # CPU and memory in proportion to the GPUs, as seed 004's pods ask: what spreading scores
                "resources": {
                    "requests": {"cpu": str(8 * gpus), "memory": f"{64 * gpus}Gi"},
                    "limits": {"nvidia.com/gpu": str(gpus)},
                },
            }
        ],
    }
    if on is not None:
        spec["nodeName"] = on
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Running" if on else "Pending"},
    }


def snapshot(directory: Path, *objects: dict[str, Any]) -> Path:
    """One ``kind: List`` file per kind, as ``kubectl get <kind> -A -o json`` writes it."""
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for obj in objects:
        by_kind[obj["kind"].lower() + "s"].append(obj)
    directory.mkdir(parents=True, exist_ok=True)
    for name, found in by_kind.items():
        listed = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": found}
        (directory / f"{name}.json").write_text(json.dumps(listed, indent=1))
    return directory


def whatif(
    tmp_path: Path, snap: Path, *changes: str, extra: tuple[str, ...] = ()
) -> tuple[int, str, dict[str, Any]]:
    files = []
    for i, text in enumerate(changes):
        files.append(tmp_path / f"change-{i}.yaml")
        files[-1].write_text(text)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["whatif", str(snap), *map(str, files), "--out", str(out), *extra])
    document = json.loads((out / "whatif.json").read_text()) if result.exit_code == 0 else {}
    return result.exit_code, result.output, document


def rows(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["pod"]: row for row in document["pods"]}


MOST_ALLOCATED = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: nvidia.com/gpu, weight: 10}
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
"""


def test_most_allocated_scheduler_config_lets_the_16_gpu_job_start_that_spreading_fragments(
    tmp_path: Path,
) -> None:
    """NodeResourcesFit's default LeastAllocated scoring (``pkg/scheduler/framework/plugins/noderesources``
    ``least_allocated.go``) spreads two 4-GPU pods over two nodes, leaving one whole 8-GPU node for a
    16-GPU job; MostAllocated (``most_allocated.go``) packs them onto one and both 8-GPU pods start."""
    snap = snapshot(
        tmp_path / "snap",
        *(node(f"gpu-{i}") for i in range(3)),
        pod("small-a", 4),
        pod("small-b", 4),
        pod("train-0", 8, job="train"),
        pod("train-1", 8, job="train"),
    )
    code, output, document = whatif(tmp_path, snap, MOST_ALLOCATED)
    assert code == 0, output
    by_pod = rows(document)
    assert by_pod["ml/small-a"]["baseline"]["node"] != by_pod["ml/small-b"]["baseline"]["node"]
    assert by_pod["ml/small-a"]["changed"]["node"] == by_pod["ml/small-b"]["changed"]["node"]
    pending_before = [k for k, r in by_pod.items() if r["baseline"]["state"] == "pending"]
    assert len(pending_before) == 1 and pending_before[0].startswith("ml/train-")
    assert "Insufficient nvidia.com/gpu" in by_pod[pending_before[0]]["baseline"]["message"]
    assert all(r["changed"]["state"] == "started" for r in by_pod.values())
    assert (document["baseline"]["pods_started"], document["changed"]["pods_started"]) == (3, 4)
    assert (document["baseline"]["gpus_allocated"], document["changed"]["gpus_allocated"]) == (16, 24)
    assert document["changed"]["cost"] is None  # a snapshot's Nodes have no price
    assert "no price" in output and "pods started (of 4 pending in the snapshot)" in output


def test_unchanged_side_equals_simulate_of_the_snapshot_alone(tmp_path: Path) -> None:
    snap = snapshot(tmp_path / "snap", node("gpu-0"), pod("serve", 4, on="gpu-0"), pod("a", 4), pod("b", 4))
    code, output, _ = whatif(tmp_path, snap, MOST_ALLOCATED, extra=("--for", "30m", "--seed", "3"))
    assert code == 0, output
    simulation = tmp_path / "simulation.yaml"
    simulation.write_text(
        "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {duration: 30m}\n"
    )
    plain = tmp_path / "plain"
    result = CliRunner().invoke(
        app, ["simulate", str(snap), str(simulation), "--out", str(plain), "--seed", "3"]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "baseline" / "summary.json").read_bytes() == (
        plain / "summary.json"
    ).read_bytes()
    assert (tmp_path / "out" / "changed" / "summary.json").exists()
    assert "gpufleet whatif" in (tmp_path / "out" / "report.html").read_text()


ADD_TWO_LIKE_GPU_0 = """
apiVersion: gpufleet.io/v1alpha1
kind: Change
metadata: {name: two-more}
spec:
  addNodes:
  - like: gpu-0
    count: 2
    pricePerHour: 98.32
"""


def test_two_more_nodes_like_a_node_start_the_pods_that_cannot_fit_and_cost_their_price(
    tmp_path: Path,
) -> None:
    snap = snapshot(
        tmp_path / "snap",
        node("gpu-0"),
        pod("serve", 8, on="gpu-0"),
        pod("train-0", 8, job="train"),
        pod("train-1", 8, job="train"),
    )
    code, output, document = whatif(tmp_path, snap, ADD_TWO_LIKE_GPU_0, extra=("--for", "1h"))
    assert code == 0, output
    by_pod = rows(document)
    assert {r["baseline"]["state"] for r in by_pod.values()} == {"pending"}
    assert {r["changed"]["node"] for r in by_pod.values()} == {"gpu-0-whatif-0", "gpu-0-whatif-1"}
    assert all(r["changed"]["time_to_start_s"] == 0 for r in by_pod.values())
    changed = document["changed"]
    assert (changed["nodes_added"], changed["gpus_total"], changed["gpus_allocated"]) == (2, 24, 24)
    assert changed["cost"] == pytest.approx(2 * 98.32)  # two nodes, one hour
    assert changed["nodes_without_price"] == 1  # gpu-0, from the snapshot
    assert document["baseline"]["cost"] is None
    assert "196.64 (+ 1 node with no price)" in output


GANGS_ON = """
apiVersion: gpufleet.io/v1alpha1
kind: Change
metadata: {name: gangs}
spec:
  gangs:
  - names: [train]
"""


def test_gangs_on_make_a_jobs_pods_wait_all_or_nothing_instead_of_holding_gpus(tmp_path: Path) -> None:
    """scheduler-plugins' Coscheduling (``pkg/coscheduling``: PreFilter refuses a group short of
    ``minMember``, Permit holds members until ``minMember`` are placed) with a PodGroup of the Job's
    size: the Job no longer holds one node's GPUs with half its pods, and the pod after it starts."""
    snap = snapshot(
        tmp_path / "snap",
        node("gpu-0"),
        node("gpu-1"),
        pod("serve", 8, on="gpu-1"),
        pod("train-0", 8, job="train"),
        pod("train-1", 8, job="train"),
        pod("eval", 8),
    )
    code, output, document = whatif(tmp_path, snap, GANGS_ON)
    assert code == 0, output
    by_pod = rows(document)
    baseline = {k: r["baseline"]["state"] for k, r in by_pod.items()}
    changed = {k: r["changed"]["state"] for k, r in by_pod.items()}
    assert baseline == {"ml/train-0": "started", "ml/train-1": "pending", "ml/eval": "pending"}
    assert changed == {"ml/train-0": "pending", "ml/train-1": "pending", "ml/eval": "started"}
    assert by_pod["ml/eval"]["changed"]["node"] == "gpu-0"
    groups = json.loads((tmp_path / "out" / "changed" / "summary.json").read_text())["pods"]
    assert {p["name"] for p in groups if p["phase"] == "Pending"} == {"ml/train-0", "ml/train-1"}


HIGH_PRIORITY = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 100000
---
apiVersion: gpufleet.io/v1alpha1
kind: Change
metadata: {name: urgent-eval}
spec:
  pods:
  - selector: {namespace: ml, names: [eval]}
    set: {priorityClassName: urgent}
"""


def test_a_higher_priority_makes_the_pending_pod_preempt_the_running_one(tmp_path: Path) -> None:
    """DefaultPreemption (``pkg/scheduler/framework/plugins/defaultpreemption``): a pod of higher
    priority evicts a lower-priority pod whose removal lets it fit, then is bound there."""
    snap = snapshot(tmp_path / "snap", node("gpu-0"), pod("batch", 8, on="gpu-0"), pod("eval", 8))
    code, output, document = whatif(tmp_path, snap, HIGH_PRIORITY)
    assert code == 0, output
    row = rows(document)["ml/eval"]
    assert row["baseline"]["state"] == "pending"
    assert row["changed"]["state"] == "started" and row["changed"]["node"] == "gpu-0"
    assert (document["baseline"]["pods_preempted"], document["changed"]["pods_preempted"]) == (0, 1)


AUTOSCALING_POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  min: 0
  max: 2
  pricePerHour: 98.32
  template:
    metadata:
      labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
  provisioning:
    boot: 3m
    join: 1m
    devicePlugin: 1m
"""


def test_warm_nodes_shorten_the_time_to_start_under_an_autoscaling_pool(tmp_path: Path) -> None:
    """A warm node is started, GPU-ready and empty before the pod comes (DESIGN.md NodePool ``warm``);
    without it, cluster-autoscaler launches one and the pod waits the node's whole start chain."""
    snap = snapshot(tmp_path / "snap", node("gpu-0"), pod("serve", 8, on="gpu-0"), pod("train", 8))
    (snap / "pool.yaml").write_text(AUTOSCALING_POOL)
    # the pool as the change file gives it replaces the snapshot's pool of the same name
    code, output, document = whatif(
        tmp_path, snap, AUTOSCALING_POOL.replace("  max: 2\n", "  max: 2\n  warm: 1\n")
    )
    assert code == 0, output
    row = rows(document)["ml/train"]
    assert row["baseline"]["time_to_start_s"] >= 300  # boot, join, device plugin: 5 minutes
    assert row["changed"]["time_to_start_s"] < 60
    assert document["changed"]["time_to_start_p95_s"] < document["baseline"]["time_to_start_p95_s"]


TWO_POOLS = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: a-h100-x8}
spec:
  max: 2
  pricePerHour: 98.32
  template:
    metadata: {labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
    status: {capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}}
  provisioning: {boot: 2m}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: b-h100-x4}
spec:
  max: 2
  pricePerHour: 30
  template:
    metadata: {labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
    status: {capacity: {cpu: "48", memory: 384Gi, pods: "110", nvidia.com/gpu: "4"}}
  provisioning: {boot: 2m}
"""


def test_another_expander_picks_another_pool(tmp_path: Path) -> None:
    """cluster-autoscaler's expanders: ``least-waste`` (``expander/waste``; the default of
    ``--expander``, ``config/flags/flags.go``) picks the 4-GPU pool for a 4-GPU pod (no GPU left idle);
    ``priority`` (``expander/priority``, with its ConfigMap ``cluster-autoscaler-priority-expander``
    given in the change file) picks the pool it ranks highest, the 8-GPU one, which costs more."""
    snap = snapshot(tmp_path / "snap", node("gpu-0", 4), pod("serve", 4, on="gpu-0"), pod("train", 4))
    (snap / "pools.yaml").write_text(TWO_POOLS)
    change = """
apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-autoscaler-priority-expander, namespace: kube-system}
data:
  priorities: |-
    50:
      - a-.*
    10:
      - b-.*
---
apiVersion: gpufleet.io/v1alpha1
kind: Change
metadata: {name: priority-expander}
spec:
  set:
    Simulation.spec.autoscaler.expander: priority
"""
    code, output, document = whatif(tmp_path, snap, change)
    assert code == 0, output
    row = rows(document)["ml/train"]
    assert row["baseline"]["node"].startswith("b-h100-x4-")
    assert row["changed"]["node"].startswith("a-h100-x8-")
    assert document["changed"]["cost"] > document["baseline"]["cost"]


BAD_CHANGE = """
apiVersion: gpufleet.io/v1alpha1
kind: Change
metadata: {name: bad}
spec:
  addNodes:
  - {like: gpu-9, count: 2}
  - {count: 1}
  pods:
  - selector: {names: [nobody]}
    set: {priorityClassName: urgent}
  delete:
  - {kind: Node, name: gpu-7}
  set:
    NodePool/none.spec.warm: 1
  gangz: []
"""


def test_bad_change_documents_give_one_line_errors_and_exit_2(tmp_path: Path) -> None:
    snap = snapshot(tmp_path / "snap", node("gpu-0"), pod("a", 4))
    code, output, _ = whatif(tmp_path, snap, BAD_CHANGE)
    assert code == 2
    where = f"{tmp_path / 'change-0.yaml'}: document 1 (Change/bad): "
    assert output.splitlines() == [
        where + "spec.gangz: Additional properties are not allowed ('gangz' was unexpected)"
    ]
    fixed = BAD_CHANGE.replace("  gangz: []\n", "")
    code, output, _ = whatif(tmp_path, snap, fixed)
    assert code == 2
    assert output.splitlines() == [
        where + "spec.addNodes[1]: Forbidden: give exactly one of like and likeSelector"
    ]
    fixed = fixed.replace("  - {count: 1}\n", "")
    code, output, _ = whatif(tmp_path, snap, fixed)
    assert code == 2
    assert output.splitlines() == [
        where + 'spec.delete[0]: Invalid value: "Node/gpu-7": no such object in the snapshot',
        where + 'spec.addNodes[0].like: Invalid value: "gpu-9": no Node of this name in the snapshot',
        where + 'spec.pods[0].selector: Invalid value: {"names": ["nobody"]}: selects no Pod of the snapshot',
        where + "spec.set: NodePool/none.spec.warm: the scenario has no NodePool",
    ]


def test_bad_documents_in_a_change_file_and_bad_options_are_reported_like_any_scenario_input(
    tmp_path: Path,
) -> None:
    snap = snapshot(tmp_path / "snap", node("gpu-0"), pod("a", 4))
    code, output, _ = whatif(
        tmp_path,
        snap,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml}\nspec: {containerz: []}\n",
    )
    assert code == 2
    assert f"{tmp_path / 'change-0.yaml'}: document 1 (Pod/ml/a): spec.containerz" in output
    code, output, _ = whatif(tmp_path, snap, MOST_ALLOCATED, extra=("--for", "soon"))
    assert code == 2 and output.startswith("--for: ")
    (tmp_path / "c.yaml").write_text(GANGS_ON)
    result = CliRunner().invoke(app, ["validate", str(snap), str(tmp_path / "c.yaml")])
    assert result.exit_code == 2
    assert "kind: a Change edits a snapshot: give it to gpufleet whatif SNAPSHOT CHANGE.yaml" in result.output


def test_a_snapshots_job_adopts_its_pod_instead_of_creating_another(tmp_path: Path) -> None:
    """``PodControllerRefManager.ClaimPods``: the snapshot's Job (parallelism 1) adopts its pending pod,
    so each side simulates that one pod and no copy of it; no caveat is needed."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml", "uid": "uid-train"},
        "spec": {"parallelism": 1, "completions": 1, "template": {"spec": pod("x", 4)["spec"]}},
        "status": {"active": 1},
    }
    snap = snapshot(tmp_path / "snap", node("gpu-0"), job, pod("train-abcde", 4, job="train"))
    code, output, document = whatif(tmp_path, snap, MOST_ALLOCATED)
    assert code == 0, output
    for side in ("baseline", "changed"):
        summary = json.loads((tmp_path / "out" / side / "summary.json").read_text())
        assert [p["name"] for p in summary["pods"]] == ["ml/train-abcde"]
    assert "controllers_with_pods" not in document and "cannot judge" not in output


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "whatif"


def _example(tmp_path: Path, snap: str, *changes: str) -> dict[str, Any]:
    out = tmp_path / "-".join(changes)
    paths = [str(EXAMPLES / snap), *(str(EXAMPLES / c) for c in changes)]
    result = CliRunner().invoke(app, ["whatif", *paths, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return dict(json.loads((out / "whatif.json").read_text()))


def test_the_examples_of_docs_whatif_give_what_the_docs_say(tmp_path: Path) -> None:
    more = _example(tmp_path, "snapshot", "two-more-h100.yaml")
    assert (more["baseline"]["pods_started"], more["changed"]["pods_started"]) == (0, 2)
    assert more["changed"]["cost"] == pytest.approx(196.64)
    urgent = _example(tmp_path, "snapshot", "urgent-eval.yaml")
    assert rows(urgent)["ml/eval-urgent"]["changed"]["time_to_start_s"] == 30  # the victim's grace period
    assert urgent["changed"]["pods_preempted"] == 1
    binpack = _example(tmp_path, "last-week", "bin-packing.yaml")
    train = rows(binpack)["ml/train-1-q9d4m"]
    assert (train["baseline"]["time_to_start_s"], train["changed"]["time_to_start_s"]) == (6600, 0)
    gangs = _example(tmp_path, "last-week", "gangs.yaml")
    # the docs' 92 GPU-hours, rounded: the gangs' members retry 11 s apart (a 10 s backoff from a whole
    # second ends with its 1-second window), so train starts at 13808 s, not 13800 s
    assert (gangs["baseline"]["gpu_hours_working"], gangs["changed"]["gpu_hours_working"]) == (108, 91.964444)
    both = _example(tmp_path, "last-week", "bin-packing.yaml", "gangs.yaml")
    assert both["pods"] == binpack["pods"]


def test_nodes_like_the_ones_a_label_selects_and_a_deleted_node_takes_its_pods_along(tmp_path: Path) -> None:
    """``likeSelector`` copies the first Node it selects (by name); deleting a Node deletes the pods
    bound to it, as the pod garbage collector deletes orphaned pods (``pkg/controller/podgc``)."""
    snap = snapshot(
        tmp_path / "snap",
        node("cpu-0", 0, {"pool": "cpu"}),
        node("gpu-b", 8, {"pool": "big"}),
        node("gpu-a", 8, {"pool": "big"}),
        pod("serve", 8, on="gpu-a"),
        pod("batch", 8, on="gpu-b"),
        pod("train", 8),
    )
    change = """
apiVersion: gpufleet.io/v1alpha1
kind: Change
metadata: {name: swap}
spec:
  delete:
  - {kind: Node, name: gpu-b}
  addNodes:
  - likeSelector: {matchLabels: {pool: big}}
    count: 1
"""
    code, output, document = whatif(tmp_path, snap, change)
    assert code == 0, output
    row = rows(document)["ml/train"]
    assert row["baseline"]["state"] == "pending"
    assert row["changed"]["node"] == "gpu-a-whatif-0"
    changed = json.loads((tmp_path / "out" / "changed" / "summary.json").read_text())
    assert "ml/batch" not in {p["name"] for p in changed["pods"]}
    assert {n["name"] for n in changed["nodes"]} == {"cpu-0", "gpu-a", "gpu-a-whatif-0"}


def test_a_changed_documents_copy_shares_no_dict_or_list_with_the_snapshot() -> None:
    """The changed side edits its own copies (``whatif_changes.json_copy``): every dict and list anew,
    the strings and numbers shared, and a YAML alias (one object in two places) two objects, as Kubernetes
    reads YAML into JSON."""
    from gpufleet.experiments.whatif_changes import json_copy

    alias = {"k": "v"}
    body: dict[str, Any] = {
        "spec": {"containers": [{"name": "c"}]},
        "n": 1.5,
        "x": None,
        "pair": [alias, alias],
    }
    copied = json_copy(body)
    assert copied == body
    assert copied["spec"]["containers"][0]["name"] is body["spec"]["containers"][0]["name"]
    copied["spec"]["containers"][0]["name"] = "d"
    copied["pair"][0]["k"] = "w"
    assert body == {"spec": {"containers": [{"name": "c"}]}, "n": 1.5, "x": None, "pair": [alias, alias]}
    assert alias == {"k": "v"}
    assert copied["pair"] == [{"k": "w"}, {"k": "v"}]


def test_each_file_is_read_once_and_the_changes_edit_only_the_changed_sides_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both sides come from one reading: the unchanged side from the snapshot's documents alone, the
    changed side from its own copies of them and the change files' documents."""
    from gpufleet.experiments.whatif import load_sides
    from gpufleet.kube import documents

    snap = snapshot(tmp_path / "snap", node("gpu-0"), pod("batch", 8, on="gpu-0"), pod("eval", 8))
    change = tmp_path / "change.yaml"
    change.write_text(HIGH_PRIORITY)
    read: list[Path] = []
    reading = documents._read

    def counted(path: Path) -> str:
        read.append(path)
        return reading(path)

    monkeypatch.setattr(documents, "_read", counted)
    unchanged, changed = load_sides([snap], [change], "10m")
    assert sorted(read) == sorted([*snap.iterdir(), change])
    assert unchanged.sources == [str(p) for p in sorted(snap.iterdir())]
    assert changed.sources == [*unchanged.sources, str(change)]
    before, after = (next(b.pod for b in side.pods if b.pod.name == "eval") for side in (unchanged, changed))
    assert (before.priority_class_name, after.priority_class_name) == (None, "urgent")
    assert list(unchanged.priority_classes) == []
    assert list(changed.priority_classes) == ["urgent"]
    assert unchanged.simulation.duration_s == changed.simulation.duration_s == 600


def test_a_broken_snapshot_file_is_reported_alone_and_a_broken_change_file_once_the_snapshot_reads(
    tmp_path: Path,
) -> None:
    """The unchanged side is checked first, with the snapshot's files only (as when each side read its
    own files)."""
    snap = snapshot(tmp_path / "snap", node("gpu-0"), pod("a", 4))
    (snap / "broken.json").write_text("{")
    code, output, _ = whatif(tmp_path, snap, "kind: [")
    assert code == 2
    assert output.splitlines() == [
        f"{snap / 'broken.json'}: document 1: invalid JSON: "
        "Expecting property name enclosed in double quotes at line 1, column 2"
    ]
    (snap / "broken.json").unlink()
    code, output, _ = whatif(tmp_path, snap, "kind: [")
    assert code == 2
    assert [line.partition(":")[0] for line in output.splitlines()] == [str(tmp_path / "change-0.yaml")]
