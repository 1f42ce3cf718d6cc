"""How ``gpufleet history`` turns kube-state-metrics' series into a scenario, without a cluster: the
label and resource names kube-state-metrics sanitises (``internal/store/utils.go``), the window's
arithmetic, and what the notes say the metrics could not hold."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import pods_by_name, simulated
from gpufleet.experiments.history_command import gang_stretch, parse_time, read_priority_classes
from gpufleet.kube import load_scenario
from gpufleet.live.history import build_scenario
from gpufleet.live.history_metrics import kubernetes_label, prometheus_label, resource_name
from gpufleet.live.history_read import Container, History, NodeRecord, PodRecord
from gpufleet.model.quantity import QuantityError, parse_duration, parse_window

START, END = 1_000_000.0, 1_003_600.0


def test_label_keys_are_named_as_kube_state_metrics_labelName_writes_them_and_mapped_back() -> None:
    """``labelName``: ``label_`` + ``SanitizeLabelName`` (``[^a-zA-Z0-9_]`` -> ``_``) in snake case."""
    assert prometheus_label("batch.kubernetes.io/job-name") == "label_batch_kubernetes_io_job_name"
    assert prometheus_label("scheduling.x-k8s.io/pod-group") == "label_scheduling_x_k8s_io_pod_group"
    assert prometheus_label("myLabel") == "label_my_label"
    assert kubernetes_label("label_batch_kubernetes_io_job_name") == "batch.kubernetes.io/job-name"
    assert kubernetes_label("label_team") == "team"  # nothing was replaced
    assert kubernetes_label("label_cost_center") is None  # cost-center, cost.center or cost_center


def test_resource_names_sanitised_by_kube_state_metrics_map_back_or_are_refused() -> None:
    """``kube_pod_container_resource_requests`` ``resource`` label: ``SanitizeLabelName`` of the name."""
    assert resource_name("nvidia_com_gpu") == "nvidia.com/gpu"
    assert resource_name("ephemeral_storage") == "ephemeral-storage"
    assert resource_name("nvidia_com_mig_1g_10gb") == "nvidia.com/mig-1g.10gb"
    assert resource_name("hugepages_2Mi") == "hugepages-2Mi"
    assert resource_name("example_com_foo") is None


def test_since_is_a_go_duration_or_days_and_until_rfc3339_or_unix_seconds() -> None:
    assert parse_window("7d") == 7 * 86400
    assert parse_window("1d12h") == 36 * 3600
    assert parse_window("90m") == 5400
    with pytest.raises(QuantityError):
        parse_window("7x")
    assert parse_time("2026-12-01T00:00:00Z") == parse_time("1796083200")
    with pytest.raises(ValueError, match="--until: not an RFC 3339 time or Unix seconds: 'yesterday'"):
        parse_time("yesterday")


def _pod(name: str, created: float, **kw: object) -> PodRecord:
    pod = PodRecord("ml", name, f"uid-{name}", created=created, **{"last_seen": END, **kw})  # type: ignore[arg-type]
    pod.containers[(False, "main")] = Container(
        "main", "img", requests={"cpu": 0.5, "nvidia.com/gpu": 1}, limits={"nvidia.com/gpu": 1}
    )
    return pod


def _history() -> History:
    h = History(START, END)
    pods = [
        _pod("before", START - 100, started=START - 50, completed=START + 100, phase="Succeeded"),
        _pod("gone", START + 200, started=START + 210, last_seen=START + 500, phase="Running"),
        _pod("serving", START + 300, started=START + 305, phase="Running"),
        _pod("waiting", START + 400, phase="Pending"),
        _pod("old", START - 900, started=START - 800, completed=START - 700, phase="Succeeded"),
        _pod("urgent", START + 10, started=START + 11, completed=START + 71, priority_class="high"),
        _pod("rs-abcde", START + 20, owner=("ReplicaSet", "rs")),
        _pod("agent", START + 25, priority_class="system-node-critical"),
        _pod("job-x", START + 30, owner=("Job", "job"), labels={"job-name": "job"}),
    ]
    again = _pod("again", START + 40, started=START + 40, completed=START + 50)
    again.uid = "uid-again-1"
    h.pods = {p.uid: p for p in pods} | {"uid-again-1": again}
    h.pods["uid-again-2"] = PodRecord(**{**again.__dict__, "uid": "uid-again-2", "created": START + 60})
    h.nodes["late"] = NodeRecord("late", created=START + 100, last_seen=END, capacity={"nvidia.com/gpu": 8})
    h.nodes["late"].allocatable = {"cpu": 96.0, "memory": 2.0**40, "pods": 110, "nvidia.com/gpu": 8}
    return h


def test_each_pod_is_replayed_from_its_times_in_the_window(tmp_path: Path) -> None:
    scenario = build_scenario(_history(), lambda members, gpus, product: 1.0)
    docs = {d["metadata"]["name"]: d["metadata"]["annotations"] for d in scenario.files["pods.yaml"]}
    assert "old" not in docs  # completed before the window
    assert docs["before"]["gpufleet.io/submit-at"] == "0s"
    assert docs["before"]["gpufleet.io/duration"] == "100s"  # from the window's start
    assert docs["before"]["history.gpufleet.io/ended"].endswith("(started before the window: the part in it)")
    assert docs["gone"]["gpufleet.io/delete-at"] == "500s" and "gpufleet.io/duration" not in docs["gone"]
    assert (
        docs["gone"]["history.gpufleet.io/ended"]
        == "deleted while running (last seen 3100 s before the window's end)"
    )
    assert "gpufleet.io/duration" not in docs["serving"] and "gpufleet.io/delete-at" not in docs["serving"]
    assert docs["serving"]["history.gpufleet.io/ended"] == "still Running at the window's end (runs on)"
    assert docs["waiting"]["history.gpufleet.io/ended"] == "still Pending at the window's end"
    assert {"again-uid-again-1", "again-uid-again-2"} <= set(docs) and "again" not in docs
    assert docs["urgent"]["history.gpufleet.io/priority-class"] == "high"
    assert docs["rs-abcde"]["history.gpufleet.io/owner"] == "ReplicaSet/rs"
    # the built-in classes (pkg/apis/scheduling SystemPriorityClasses) are the same in every cluster
    agent = next(d for d in scenario.files["pods.yaml"] if d["metadata"]["name"] == "agent")
    assert agent["spec"]["priorityClassName"] == "system-node-critical"
    assert any(
        n.startswith("priority classes high: kube-state-metrics exports no PriorityClass")
        for n in scenario.notes
    )
    assert any(
        n.startswith("Jobs job: the label batch.kubernetes.io/controller-uid is not exported")
        for n in scenario.notes
    )
    assert any(
        n.startswith("1 node(s) were created or deleted during the window (e.g. late)")
        for n in scenario.notes
    )

    for name, documents in scenario.files.items():
        (tmp_path / name).write_text(yaml.safe_dump_all(documents, sort_keys=False))
    assert load_scenario([tmp_path]).warnings == []
    pods = pods_by_name(simulated([tmp_path]))
    # deleted when last seen, then gone after the default grace period (DefaultTerminationGracePeriodSeconds)
    assert pods["gone"]["deleted_s"] == 500.0 + 30.0
    assert pods["before"]["finished_s"] - pods["before"]["working_s"] == 100.0
    assert pods["serving"]["phase"] == "Running"


def test_a_pod_that_completed_with_no_restart_policy_exported_is_replayed_under_never() -> None:
    """Under the API's default ``restartPolicy: Always`` the kubelet restarts a container that exits 0 too
    (``ShouldContainerBeRestarted``) and the pod never completes: a pod that completed ran under ``Never``
    or ``OnFailure``; with ``kube_pod_restart_policy`` not exported it is replayed under ``Never`` (so its
    replay ends), and a pod still running keeps the default."""
    scenario = build_scenario(_history(), lambda members, gpus, product: 1.0)
    specs = {d["metadata"]["name"]: d["spec"] for d in scenario.files["pods.yaml"]}
    assert specs["before"]["restartPolicy"] == "Never"
    assert "restartPolicy" not in specs["serving"]


def test_a_gang_split_over_nodes_replays_as_long_as_it_ran(tmp_path: Path) -> None:
    """gpufleet.io/duration is a gang's time on the fewest nodes (sim.placement_quality stretches a
    split one), so a gang that really ran split has its measured time divided by that stretch: the
    replay on the same placement lasts as measured."""
    h = History(START, END)
    for i in range(2):
        node = f"n{i}"
        h.nodes[node] = NodeRecord(node, created=START - 1, last_seen=END)
        h.nodes[node].labels = {
            "kubernetes.io/hostname": node,
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        }
        h.nodes[node].capacity = h.nodes[node].allocatable = {"cpu": 32.0, "pods": 110, "nvidia.com/gpu": 4}
        pod = _pod(f"rank-{i}", START + 5, started=START + 5, completed=START + 605, phase="Succeeded")
        pod.node, pod.node_selector = node, {"kubernetes.io/hostname": node}
        pod.labels = {"scheduling.x-k8s.io/pod-group": "ring"}
        h.pods[pod.uid] = pod
    scenario = build_scenario(h, gang_stretch)
    annotations = [d["metadata"]["annotations"] for d in scenario.files["pods.yaml"]]
    stretch = float(annotations[0]["history.gpufleet.io/stretch"])
    assert stretch > 1.0
    assert parse_duration(annotations[0]["gpufleet.io/duration"]) == pytest.approx(600 / stretch, abs=0.001)
    assert any(n.startswith("gangs ml/ring ran on more than one node") for n in scenario.notes)
    for name, documents in scenario.files.items():
        (tmp_path / name).write_text(yaml.safe_dump_all(documents, sort_keys=False))
    pods = pods_by_name(simulated([tmp_path]))
    for rank in ("rank-0", "rank-1"):
        assert pods[rank]["finished_s"] - pods[rank]["working_s"] == pytest.approx(600.0, abs=0.5)


def test_given_priority_classes_are_written_and_their_pods_keep_the_name(tmp_path: Path) -> None:
    """kube-state-metrics exports only a pod's PriorityClass name (kube_pod_info priority_class);
    with the cluster's PriorityClasses (kubectl's List) the pods keep it and priorities replay."""
    listing = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "high", "uid": "u", "resourceVersion": "7"},
                "value": 100000,
                "preemptionPolicy": "PreemptLowerPriority",
            }
        ],
    }
    (tmp_path / "pc.yaml").write_text(yaml.safe_dump(listing))
    classes = read_priority_classes(tmp_path / "pc.yaml")
    assert classes == {
        "high": {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 100000,
            "preemptionPolicy": "PreemptLowerPriority",
        }
    }
    scenario = build_scenario(_history(), lambda members, gpus, product: 1.0, classes)
    urgent = next(d for d in scenario.files["pods.yaml"] if d["metadata"]["name"] == "urgent")
    assert urgent["spec"]["priorityClassName"] == "high"
    assert "history.gpufleet.io/priority-class" not in urgent["metadata"]["annotations"]
    assert scenario.files["priorityclasses.yaml"] == [classes["high"]]
    assert not any(n.startswith("priority classes") for n in scenario.notes)
    out = tmp_path / "scenario"
    out.mkdir()
    for name, documents in scenario.files.items():
        (out / name).write_text(yaml.safe_dump_all(documents, sort_keys=False))
    assert load_scenario([out]).warnings == []

    (tmp_path / "none.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n")
    with pytest.raises(ValueError, match=r"^--priority-classes .*none.yaml: no PriorityClass in it$"):
        read_priority_classes(tmp_path / "none.yaml")


def test_a_node_keeps_the_taints_it_had_when_last_scraped_not_one_that_ended_in_the_window() -> None:
    """A node registers with the node lifecycle controller's ``node.kubernetes.io/not-ready:NoSchedule``,
    which goes once its kubelet reports Ready: its ``kube_node_spec_taint`` series ends while the node's
    go on. ``last_over_time`` over the window still answers it, so the taints kept are those whose series
    were scraped with the node's last scrape (``query_range``'s last point: Prometheus ends a series that
    left a target's scrape with a staleness marker)."""
    import json

    from tests.fuzz.fuzz_surfaces import _Answers

    from gpufleet.live.history_read import read_history

    def vector(*series: tuple[dict[str, str], float]) -> dict[str, object]:
        result = [{"metric": m, "value": [END, str(v)]} for m, v in series]
        return {"status": "success", "data": {"resultType": "vector", "result": result}}

    def matrix(*series: tuple[dict[str, str], float]) -> dict[str, object]:
        result = [{"metric": m, "values": [[t, "1"]]} for m, t in series]
        return {"status": "success", "data": {"resultType": "matrix", "result": result}}

    node = {"node": "gpu-0"}
    gpu = node | {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    not_ready = node | {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
    answers = {
        "seen:kube_node_created": matrix((node, END)),
        "kube_node_created": vector((node, START - 60)),
        "seen:kube_node_spec_taint": matrix((gpu, END), (not_ready, START + 30)),
        "kube_node_spec_taint": vector((gpu, 1), (not_ready, 1)),
    }
    history = read_history(_Answers.of(json.dumps(answers).encode()), START, END)
    assert history.nodes["gpu-0"].taints == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]
