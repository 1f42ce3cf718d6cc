"""Seed 001: KEDA on a Redis list of training work, on a T4 pool that grows from zero.

A ScaledObject scales the workers on the list's length; workers pop an item when they start
it, so the list empties while they still train, and ``cooldownPeriod`` later KEDA scales them
to zero (KEDA ``scale_scaledobjects.go``: inactive for the cooldown -> minReplicaCount). A
ScaledJob on the same queue runs one Job per item and completes every item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "seed-001"


def simulate(name: str) -> dict[str, Any]:
    sim = Simulation(load_scenario([EXAMPLES / "t4-pool.yaml", EXAMPLES / name]))
    sim.run()
    return build_summary(sim)


def test_scaled_object_scales_workers_to_zero_while_they_still_train() -> None:
    summary = simulate("scaled-object.yaml")
    replicas = summary["timeline"]["replicas"]["Deployment/ai-train/train-worker"]
    assert max(replicas) == 3 and replicas[-1] == 0  # 3 items, listLength 1 -> 3 workers, then 0
    workers = summary["pods"]
    assert len(workers) == 3
    for pod in workers:
        assert pod["reason"] == "ScaledDown" and pod["working_s"] is not None
        assert (
            pod["disruptions"] and pod["disruptions"][0] < pod["working_s"] + 3600
        )  # before its hour of work
    # the last poll that saw an item was at most one polling interval after the workers started
    last_start = max(p["working_s"] for p in workers)
    assert all(last_start + 300 - 30 <= p["disruptions"][0] <= last_start + 300 + 60 for p in workers)
    assert summary["work_items"]["train:jobs"] == {
        "fed": 3,
        "started": 3,
        "completed": 0,
        "lost": 3,
        "requeued": 0,
        "queued": 0,
        "in_progress": 0,
    }
    assert summary["totals"]["pods_disrupted"] == 3
    assert summary["totals"]["work_lost_s"] > 0  # up to the 10-minute checkpoint of each worker
    assert {e["kind"] for e in summary["autoscaler_events"]} >= {"scale-up", "scale-down"}


def test_scaled_job_completes_every_item() -> None:
    summary = simulate("scaled-job.yaml")
    assert summary["work_items"]["train:jobs"]["completed"] == 3
    assert summary["work_items"]["train:jobs"]["lost"] == 0
    assert summary["totals"]["pods_succeeded"] == 3 and summary["totals"]["pods_disrupted"] == 0
    for pod in summary["pods"]:
        assert pod["finished_s"] - pod["working_s"] == 3600.0
        assert (
            pod["stages"]["node_provisioning"] > 0 and pod["stages"]["image_pull"] == 30.0
        )  # 6 GB at 200 MB/s


def test_scaled_object_hpa_follows_its_advanced_behavior(tmp_path: Path) -> None:
    """KEDA writes ``advanced.horizontalPodAutoscalerConfig.behavior`` into the HPA it owns:
    with scaleUp limited to 1 pod per 60 s, 8 queued items take the workers up one a minute."""
    text = (
        (EXAMPLES / "scaled-object.yaml")
        .read_text()
        .replace(
            "  cooldownPeriod: 300\n",
            "  cooldownPeriod: 300\n  advanced:\n    horizontalPodAutoscalerConfig:\n      behavior:\n"
            "        scaleUp:\n          policies: [{type: Pods, value: 1, periodSeconds: 60}]\n",
        )
        .replace("maxReplicaCount: 4", "maxReplicaCount: 8")
    )
    feed = (EXAMPLES / "t4-pool.yaml").read_text().replace("count: 3", "count: 8").replace("max: 4", "max: 8")
    (tmp_path / "so.yaml").write_text(text)
    (tmp_path / "pool.yaml").write_text(feed)
    sim = Simulation(load_scenario([tmp_path / "pool.yaml", tmp_path / "so.yaml"]))
    sim.run()
    summary = build_summary(sim)
    t, replicas = (
        summary["timeline"]["t_s"],
        summary["timeline"]["replicas"]["Deployment/ai-train/train-worker"],
    )
    by_time = dict(zip(t, replicas, strict=True))
    assert by_time[0.0] == 1  # KEDA activates 0 -> 1
    assert by_time[60.0] <= 3 and by_time[120.0] <= 4  # then one more per minute at most
    assert max(replicas) >= 5


def _scaled_object_with(tmp_path: Path, annotations: str) -> dict[str, Any]:
    text = (
        (EXAMPLES / "scaled-object.yaml")
        .read_text()
        .replace(
            '        gpufleet.io/consumes: "train:jobs"\n',
            f'        gpufleet.io/consumes: "train:jobs"\n{annotations}',
        )
    )
    (tmp_path / "so.yaml").write_text(text)
    sim = Simulation(load_scenario([EXAMPLES / "t4-pool.yaml", tmp_path / "so.yaml"]))
    sim.run()
    return build_summary(sim)


def test_workers_that_requeue_on_sigterm_push_their_items_back(tmp_path: Path) -> None:
    """requeue-on-sigterm: a terminated worker pushes its item back, so nothing is lost; KEDA sees
    the list grow again and scales the workers back up."""
    summary = _scaled_object_with(tmp_path, '        gpufleet.io/requeue-on-sigterm: "true"\n')
    items = summary["work_items"]["train:jobs"]
    assert items["lost"] == 0 and items["requeued"] >= 3
    assert items["fed"] == items["completed"] + items["lost"] + items["queued"] + items["in_progress"]


def test_checkpoint_on_sigterm_loses_no_work(tmp_path: Path) -> None:
    """checkpoint-on-sigterm: SIGTERM saves a checkpoint within the grace period; no work is lost."""
    summary = _scaled_object_with(tmp_path, '        gpufleet.io/checkpoint-on-sigterm: "true"\n')
    assert summary["totals"]["pods_disrupted"] >= 3
    assert summary["totals"]["work_lost_s"] == 0.0
