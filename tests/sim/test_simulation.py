"""Behaviours of the simulator, end to end from scenario YAML, and of the ``gpufleet`` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.report import validate_summary
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

ROOT = Path(__file__).resolve().parents[2]


# -- YAML builders ---------------------------------------------------------------------------
def node(name: str, gpus: int = 8, cpu: int = 96, labels: str = "", taints: str = "") -> str:
    meta = f"  labels: {labels}\n" if labels else ""
    spec = f"spec:\n  taints: {taints}\n" if taints else ""
    return (
        f"apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n{meta}{spec}status:\n"
        f'  capacity: {{cpu: "{cpu}", memory: 768Gi, pods: "110", nvidia.com/gpu: "{gpus}"}}\n'
    )


def pod_spec(gpus: int, cpu: int | str, indent: str, extra: str = "") -> str:
    limits = f"\n{indent}    limits: {{nvidia.com/gpu: {gpus}}}" if gpus else ""
    return (
        f"{indent}restartPolicy: Never\n{extra}{indent}containers:\n{indent}- name: c\n"
        f"{indent}  image: busybox\n{indent}  resources:\n"
        f'{indent}    requests: {{cpu: "{cpu}", memory: 1Gi}}{limits}\n'
    )


def pod(
    name: str,
    gpus: int = 0,
    cpu: int | str = 1,
    at: str | None = None,
    duration: str | None = None,
    labels: str = "",
    spec: str = "",
) -> str:
    notes = ""
    if at is not None:
        notes += f"    gpufleet.io/submit-at: {at}\n"
    if duration is not None:
        notes += f"    gpufleet.io/duration: {duration}\n"
    meta = (f"  annotations:\n{notes}" if notes else "") + (f"  labels: {labels}\n" if labels else "")
    return f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n{meta}spec:\n" + pod_spec(
        gpus, cpu, "  ", spec
    )


def pod_group(name: str, min_member: int) -> str:
    return (
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
        f"metadata:\n  name: {name}\nspec:\n  minMember: {min_member}\n"
    )


def simulation(duration: str | None = None) -> str:
    spec = f"spec:\n  duration: {duration}\n" if duration else "spec: {}\n"
    return f"apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata:\n  name: s\n{spec}"


def run(tmp_path: Path, *docs: str, seed: int = 0) -> dict[str, Any]:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(docs))
    sim = Simulation(load_scenario([path]), seed=seed)
    sim.run()
    summary = build_summary(sim)
    validate_summary(summary)
    return summary


def by_name(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"].split("/", 1)[1]: p for p in summary["pods"]}


# -- workloads -------------------------------------------------------------------------------
def test_job_runs_completions_in_waves_of_parallelism(tmp_path: Path) -> None:
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: job\nspec:\n  completions: 5\n  parallelism: 2\n"
        "  template:\n    metadata:\n      annotations:\n        gpufleet.io/duration: 10m\n    spec:\n"
        + pod_spec(1, 1, "      ")
    )
    summary = run(tmp_path, node("n1", gpus=2), job)
    pods = by_name(summary)
    assert sorted(pods) == [f"job-{i}" for i in range(5)]
    assert all(p["phase"] == "Succeeded" and p["reason"] == "Completed" for p in pods.values())
    assert summary["end_time_s"] == 1800  # three waves of 10 minutes: 2 + 2 + 1
    assert max(summary["timeline"]["gpus_allocated"]) == 2
    assert max(summary["timeline"]["gpus_working"]) == 2
    assert sorted(p["finished_s"] for p in pods.values()) == [600, 600, 1200, 1200, 1800]
    assert summary["totals"]["pods_succeeded"] == 5


def test_deployment_replicas_keep_running_until_the_end(tmp_path: Path) -> None:
    dep = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n"
        "  selector:\n    matchLabels: {app: web}\n"
        "  template:\n    metadata:\n      labels: {app: web}\n    spec:\n"
        "      containers:\n      - name: c\n        image: busybox\n        resources:\n"
        '          requests: {cpu: "1", memory: 1Gi}\n          limits: {nvidia.com/gpu: 1}\n'
    )
    summary = run(tmp_path, node("n1"), dep, simulation("1h"))
    pods = by_name(summary)
    assert sorted(pods) == ["web-0", "web-1", "web-2"]
    for p in pods.values():
        assert p["phase"] == "Running" and p["working"] and p["finished_s"] is None
        assert p["working_s"] == 0 and p["node"] == "n1"
    assert summary["end_time_s"] == 3600
    assert summary["totals"]["gpus_working"] == 3
    assert summary["totals"]["pods_running"] == 3


def test_daemonset_places_one_pod_per_matching_untainted_node_and_uses_its_cpu(tmp_path: Path) -> None:
    ds = (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n"
        "  selector:\n    matchLabels: {app: agent}\n"
        "  template:\n    metadata:\n      labels: {app: agent}\n    spec:\n"
        "      nodeSelector: {role: gpu}\n"
        "      containers:\n      - name: c\n        image: busybox\n        resources:\n"
        '          requests: {cpu: "8", memory: 1Gi}\n'
    )
    summary = run(
        tmp_path,
        node("gpu-a", labels="{role: gpu}"),
        node("gpu-b", labels="{role: gpu}", taints="[{key: dedicated, value: x, effect: NoSchedule}]"),
        node("cpu-c"),
        ds,
        pod("big", cpu=96, at="10s"),  # needs a whole node's cpu: not gpu-a (agent), not gpu-b (taint)
        simulation("1h"),
    )
    pods = by_name(summary)
    assert sorted(pods) == ["agent-gpu-a", "big"]
    assert pods["agent-gpu-a"]["node"] == "gpu-a" and pods["agent-gpu-a"]["phase"] == "Running"
    assert pods["big"]["node"] == "cpu-c"


def test_daemonset_pod_cpu_keeps_a_whole_node_pod_pending(tmp_path: Path) -> None:
    ds = (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n"
        "  selector:\n    matchLabels: {app: agent}\n"
        "  template:\n    metadata:\n      labels: {app: agent}\n    spec:\n"
        "      containers:\n      - name: c\n        image: busybox\n        resources:\n"
        '          requests: {cpu: "8", memory: 1Gi}\n'
    )
    summary = run(tmp_path, node("only"), ds, pod("big", cpu=96, at="10s"), simulation("1h"))
    pods = by_name(summary)
    assert pods["agent-only"]["node"] == "only"
    assert pods["big"]["phase"] == "Pending"
    assert "Insufficient cpu" in pods["big"]["message"]


def test_job_with_a_duration_runs_every_completion(tmp_path: Path) -> None:
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: job\nspec:\n  completions: 5\n  parallelism: 2\n"
        "  template:\n    metadata:\n      annotations:\n        gpufleet.io/duration: 10m\n    spec:\n"
        + pod_spec(1, 1, "      ")
    )
    summary = run(tmp_path, node("n1", gpus=2), job, simulation("1h"))
    pods = by_name(summary)
    assert sorted(pods) == [f"job-{i}" for i in range(5)]
    assert all(p["phase"] == "Succeeded" for p in pods.values())
    assert max(p["finished_s"] for p in pods.values()) == 1800
    assert max(summary["timeline"]["gpus_allocated"]) == 2


# -- bare pods -------------------------------------------------------------------------------
def test_pod_with_node_name_that_does_not_fit_fails_with_out_of_gpu(tmp_path: Path) -> None:
    summary = run(
        tmp_path,
        node("n1", gpus=8),
        pod("too-big", gpus=16, spec="  nodeName: n1\n"),
        simulation("10m"),
    )
    p = by_name(summary)["too-big"]
    assert p["phase"] == "Failed"
    assert p["reason"] == "OutOfnvidia.com/gpu"
    assert p["finished_s"] == 0 and p["bound_s"] is None and p["working_s"] is None
    assert summary["totals"]["pods_failed"] == 1
    assert summary["totals"]["gpus_allocated"] == 0


def test_pod_with_node_name_that_fits_runs_there_without_a_scheduler(tmp_path: Path) -> None:
    summary = run(
        tmp_path,
        node("n1", gpus=8),
        node("n2", gpus=8),
        pod("pinned", gpus=4, spec="  nodeName: n2\n  schedulerName: nobody\n"),
        simulation("10m"),
    )
    p = by_name(summary)["pinned"]
    assert p["phase"] == "Running" and p["node"] == "n2" and p["working"]
    assert p["bound_s"] == 0
    assert summary["totals"]["gpus_allocated"] == 4


def test_pod_naming_an_unknown_scheduler_stays_pending_with_a_message(tmp_path: Path) -> None:
    summary = run(
        tmp_path, node("n1"), pod("lost", gpus=1, spec="  schedulerName: volcano\n"), simulation("1h")
    )
    p = by_name(summary)["lost"]
    assert p["phase"] == "Pending" and p["node"] is None
    assert "volcano" in p["message"]
    assert summary["totals"]["pods_pending"] == 1


def test_equal_submit_times_keep_document_order(tmp_path: Path) -> None:
    summary = run(
        tmp_path,
        node("n1", gpus=8),
        pod("first", gpus=8, at="30s"),
        pod("second", gpus=8, at="30s"),
        simulation("1h"),
    )
    pods = by_name(summary)
    assert pods["first"]["node"] == "n1" and pods["first"]["bound_s"] == 30
    assert pods["second"]["phase"] == "Pending" and pods["second"]["created_s"] == 30


def test_submit_at_orders_arrivals_before_document_order(tmp_path: Path) -> None:
    summary = run(
        tmp_path,
        node("n1", gpus=8),
        pod("written-first", gpus=8, at="2m"),
        pod("submitted-first", gpus=8, at="1m"),
        simulation("1h"),
    )
    pods = by_name(summary)
    assert pods["submitted-first"]["node"] == "n1" and pods["submitted-first"]["bound_s"] == 60
    assert pods["written-first"]["phase"] == "Pending" and pods["written-first"]["created_s"] == 120


def test_pending_pod_is_retried_when_a_running_pod_completes(tmp_path: Path) -> None:
    summary = run(
        tmp_path,
        node("n1", gpus=8),
        pod("running", gpus=8, duration="1h"),
        pod("waiting", gpus=8, duration="1h"),
    )
    pods = by_name(summary)
    assert pods["running"]["finished_s"] == 3600
    w = pods["waiting"]
    assert w["bound_s"] == 3600 and w["working_s"] == 3600 and w["node"] == "n1"
    assert w["stages"] == {"scheduling": 3600}
    assert summary["end_time_s"] == 7200


# -- gangs -----------------------------------------------------------------------------------
def gang_member(name: str, group: str, gpus: int = 8, at: str | None = None) -> str:
    return pod(
        name, gpus=gpus, cpu=8, at=at, duration="2h", labels=f"{{scheduling.x-k8s.io/pod-group: {group}}}"
    )


def test_gang_with_room_binds_and_works_together_at_once(tmp_path: Path) -> None:
    summary = run(
        tmp_path,
        node("n1"),
        node("n2"),
        pod_group("g", 2),
        gang_member("g-0", "g"),
        gang_member("g-1", "g"),
        simulation("1h"),
    )
    pods = by_name(summary)
    for name in ("g-0", "g-1"):
        assert pods[name]["bound_s"] == 0 and pods[name]["working_s"] == 0 and pods[name]["working"]
    assert {pods["g-0"]["node"], pods["g-1"]["node"]} == {"n1", "n2"}
    assert summary["totals"]["gpus_working"] == 16


def test_gang_member_bound_alone_does_not_work(tmp_path: Path) -> None:
    summary = run(
        tmp_path,
        node("n1", gpus=8),
        node("n2", gpus=4),  # too small for the second member
        pod_group("g", 2),
        gang_member("g-0", "g"),
        gang_member("g-1", "g"),
        simulation("1h"),
    )
    pods = by_name(summary)
    bound = [p for p in pods.values() if p["node"] is not None]
    assert len(bound) == 1 and bound[0]["node"] == "n1"
    assert bound[0]["phase"] == "Running" and not bound[0]["working"] and bound[0]["working_s"] is None
    assert summary["totals"]["gpus_allocated"] == 8
    assert summary["totals"]["gpus_working"] == 0
    assert max(summary["timeline"]["gpus_working"]) == 0


def test_gang_member_waits_for_its_rank_then_records_gang_wait(tmp_path: Path) -> None:
    summary = run(
        tmp_path,
        node("n1", gpus=8),
        node("n2", gpus=8),
        pod("blocker", gpus=8, duration="1h", spec="  nodeName: n2\n"),
        pod_group("g", 2),
        gang_member("g-0", "g", at="10s"),
        gang_member("g-1", "g", at="10s"),
    )
    pods = by_name(summary)
    first = next(p for p in pods.values() if p["name"].startswith("default/g-") and p["bound_s"] == 10)
    second = next(p for p in pods.values() if p["name"].startswith("default/g-") and p is not first)
    assert first["node"] == "n1" and second["node"] == "n2"
    assert second["bound_s"] == 3600
    assert first["working_s"] == second["working_s"] == 3600
    assert first["stages"] == {"gang_wait": 3590}
    assert second["stages"] == {"scheduling": 3590}
    t = summary["timeline"]
    before = [i for i, s in enumerate(t["t_s"]) if 10 < s < 3600]
    # only the blocker computes while the gang holds n1 and waits for n2
    assert before and all(t["gpus_working"][i] == 8 and t["gpus_allocated"][i] == 16 for i in before)
    assert summary["end_time_s"] == 3600 + 7200


# -- the run ---------------------------------------------------------------------------------
def test_run_without_duration_stops_at_the_last_completion(tmp_path: Path) -> None:
    summary = run(
        tmp_path,
        node("n1"),
        pod("a", gpus=4, duration="20m"),
        pod("b", gpus=4, at="5m", duration="30m"),
        simulation(),
    )
    assert summary["end_time_s"] == 2100
    assert max(p["finished_s"] for p in summary["pods"]) == summary["end_time_s"]
    assert summary["timeline"]["t_s"][-1] == 2100
    assert summary["totals"]["pods_succeeded"] == 2


# -- the command -----------------------------------------------------------------------------
runner = CliRunner()


def test_cli_simulate_writes_summary_and_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["simulate", str(ROOT / "examples/seed-004/default-scheduler.yaml"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    validate_summary(summary)
    assert summary["totals"]["gpus_allocated"] == 16 and summary["totals"]["gpus_working"] == 8
    assert (out / "report.html").read_text().lstrip().lower().startswith("<!doctype html")


def test_cli_validate_reports_a_misspelt_field_with_its_location(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(pod("typo", gpus=1).replace("restartPolicy", "restartPolicyy"))
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith(f"{bad}: document 1 (Pod/")]
    assert lines and "restartPolicyy" in lines[0], result.output
    assert "Traceback" not in result.output


def test_cli_validate_malformed_yaml_exits_2_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n")
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert str(bad) in result.output


def kubectl_node(name: str) -> dict[str, Any]:
    capacity = {"cpu": "96", "memory": "768Gi", "pods": "110", "nvidia.com/gpu": "8"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def kubectl_pod(name: str, gpus: int, node_name: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "resources": {
                    "requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": str(gpus)},
                    "limits": {"nvidia.com/gpu": str(gpus)},
                },
            }
        ],
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def test_cli_explain_a_kubectl_list(tmp_path: Path) -> None:
    state = {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [
            kubectl_node("gpu-1"),
            kubectl_node("gpu-2"),
            kubectl_pod("a", 6, "gpu-1"),
            kubectl_pod("b", 4, "gpu-2"),
            kubectl_pod("want-8", 8, None),
        ],
    }
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(state))
    result = runner.invoke(app, ["explain", str(path)])
    assert result.exit_code == 0, result.output
    assert "0/2 nodes are available: 2 Insufficient nvidia.com/gpu." in result.output
    result = runner.invoke(app, ["explain", str(path), "--json"])
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.output)
    assert entry["pod"] == "ml/want-8"
    assert entry["schedulable_now"] is None
    assert entry["message"].startswith("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")
    assert entry["diagnosis"]["largest_free_gpus"] == 4


def test_backoff_stays_capped_after_many_failed_attempts() -> None:
    from gpufleet.scheduling.queue import SchedulingQueue

    queue = SchedulingQueue(lambda qp: (0,), 1.0, 10.0)
    assert queue.backoff_duration(3) == 4.0
    assert queue.backoff_duration(2000) == 10.0


def test_a_simulation_keeps_every_attribute_it_sets_in_its_slots() -> None:
    """``Simulation.__slots__`` names what it sets: with more than 30 attributes in a dictionary of its own,
    every attribute read of the event loop's hottest object would look that dictionary up."""
    from gpufleet.cli import default_scenario_path

    sim = Simulation(load_scenario([default_scenario_path()]))
    sim.run()
    assert sim.records and vars(sim) == {}
