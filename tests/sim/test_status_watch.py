"""The watch on a Deployment's pod records (``sim.status_watch``): ``Simulation.target_pods_version``
stands only while the target's pods, and each one's object and status as the HPA controller reads
them, are as they were; and the HPA's syncs that keep the pods they read decide as syncs that read
every pod."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.day import scenario  # noqa: E402

from gpufleet.control.workload_autoscalers import HPA_READS, READ  # noqa: E402
from gpufleet.model.pod import Pod  # noqa: E402
from gpufleet.sim.simulation import Simulation  # noqa: E402
from gpufleet.sim.status_watch import StatusWatch, WatchedPodRecord  # noqa: E402

TARGET = "Deployment/serving/inference"


def read(sim: Simulation) -> list[Any]:
    controller = sim.scale_target(TARGET)
    assert controller is not None
    return [READ(sim.records[k]) for k in sorted(controller.active)]


def test_the_version_stands_only_while_every_pod_reads_as_it_did() -> None:
    """Two hours of the day bench's cluster at a small size: the inference Deployment's pods start,
    become ready, are scaled up and down under its HPA; after every event, an unchanged version means
    unchanged pods."""
    sim = Simulation(scenario(20, 10, 120, 2.0))
    seen: list[tuple[object, list[Any]]] = []
    step = sim.loop.step

    def checked() -> bool:
        ran = step()
        version = sim.target_pods_version(TARGET)
        if version is not None:
            if seen and seen[-1][0] == version:
                assert seen[-1][1] == read(sim)
            seen.append((version, read(sim)))
        return ran

    sim.loop.step = checked  # type: ignore[method-assign]
    sim.run()
    versions = [v for v, _ in seen]
    assert len(versions) > 100 and len(set(versions)) < len(versions) / 2  # mostly kept, and it moves
    assert all(isinstance(sim.records[k], WatchedPodRecord) for k in sim.records if k.startswith("serving/"))


def test_syncs_that_keep_the_pods_read_decide_as_syncs_that_read_every_pod() -> None:
    """The same run with no version kept (every sync reads every pod) scales the Deployment alike."""
    kept = Simulation(scenario(20, 10, 120, 2.0))
    fresh = Simulation(scenario(20, 10, 120, 2.0))
    fresh.target_pods_version = lambda target: None  # type: ignore[method-assign]
    kept.run()
    fresh.run()
    assert kept.replicas_timeline == fresh.replicas_timeline and kept.samples == fresh.samples


def test_a_write_to_each_field_the_hpa_reads_moves_the_watch_and_others_do_not() -> None:
    watch = StatusWatch()
    rec = WatchedPodRecord(Pod("web-0", namespace="serving"), "default-scheduler", 0.0)
    rec.watch = watch
    moved = []
    for name in HPA_READS:
        before = watch.version
        setattr(rec, name, replace(rec.pod) if name == "pod" else getattr(rec, name))
        moved.append(watch.version > before)
    before = watch.version
    rec.message, rec.node, rec.done_s = "waiting", "n0", 5.0
    assert all(moved) and watch.version == before
