"""KEDA's ``cron`` trigger through the simulator, and how ``cpu``/``memory`` triggers take part in a
ScaledObject's activation (KEDA v2.20.2).

Cron: ``cron_scaler.go`` ``GetMetricsAndActivity`` reports ``desiredReplicas`` inside the window
(active) and 0 outside it; the HPA KEDA writes has a target of 1 per replica, so it proposes
``desiredReplicas``. The run's time 0 is the Simulation's ``startTime`` (default the Unix epoch,
1970-01-01T00:00:00Z, a Thursday).

cpu/memory: ``scale_handler.go`` ``getScalerState`` skips a trigger with no External metric (neither
active nor failing), and ``getScaledObjectState`` makes an object whose triggers are all cpu/memory
active unless another trigger fails.
"""

from __future__ import annotations

from pathlib import Path

from conftest import simulated
from gpufleet.autoscaling.keda import KedaReason, ScaledObjectState
from gpufleet.model.keda import ScaledObjectSpec, ScaleTargetRef, ScaleTrigger

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "keda" / "cron-business-hours.yaml"
TARGET = "Deployment/default/llm-server"


def _changes(summary: dict[str, object]) -> list[tuple[float, float]]:
    """(time, replicas) at each sample where the Deployment's replicas changed."""
    timeline = summary["timeline"]
    assert isinstance(timeline, dict)
    out: list[tuple[float, float]] = []
    for t, replicas in zip(timeline["t_s"], timeline["replicas"][TARGET], strict=True):
        if not out or out[-1][1] != replicas:
            out.append((t, replicas))
    return out


def test_a_cron_trigger_scales_from_zero_at_the_window_start_and_back_after_it() -> None:
    """The example: 09:00-17:00 Europe/Berlin on a Monday, the run starting at 08:00 there. At 1 h KEDA
    activates the Deployment and its HPA reads 3 (desiredReplicas) against a target of 1: 3 replicas;
    at 9 h the scaler reports 0 and is inactive, and once the cooldown (300 s) has passed KEDA scales
    to 0."""
    summary = simulated([EXAMPLE])
    assert _changes(summary) == [(0.0, 0.0), (3600.0, 3.0), (32400.0 + 300.0, 0.0)]


def test_without_a_start_time_the_run_starts_at_the_unix_epoch(tmp_path: Path) -> None:
    """No ``startTime``: time 0 is 1970-01-01T00:00:00Z, so a 01:00-02:30 UTC window opens at 1 h."""
    text = EXAMPLE.read_text()
    text = text.replace('  startTime: "2026-12-07T07:00:00Z"\n', "").replace("duration: 10h", "duration: 4h")
    text = text.replace("timezone: Europe/Berlin", "timezone: Etc/UTC")
    text = text.replace("start: 0 9 * * 1-5", "start: 0 1 * * *").replace(
        "end: 0 17 * * 1-5", "end: 30 2 * * *"
    )
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    assert _changes(simulated([path])) == [(0.0, 0.0), (3600.0, 3.0), (9000.0 + 300.0, 0.0)]


def _cpu() -> ScaleTrigger:
    return ScaleTrigger.parse("cpu", {"value": "60"}, "Utilization")


def _redis() -> ScaleTrigger:
    return ScaleTrigger.parse("redis", {"address": "redis:6379", "listName": "jobs"})


def _spec(*triggers: ScaleTrigger, min_replica_count: int = 0) -> ScaledObjectSpec:
    return ScaledObjectSpec(
        "so", "default", ScaleTargetRef("app"), triggers, min_replica_count=min_replica_count
    )


def test_a_cpu_trigger_takes_no_part_in_activation_beside_another_trigger() -> None:
    """With a redis trigger beside it, the cpu trigger neither activates the object (it scales to 0 after
    the cooldown when the list is empty) nor fails it (its value, none, is not an error)."""
    state = ScaledObjectState(_spec(_cpu(), _redis()), created_at=0.0)
    first = state.poll(0.0, [None, 0.0], current_replicas=2)
    assert (first.active, first.error, first.reason) == (False, False, KedaReason.DEACTIVATED)
    assert first.scale_to == 0
    assert state.poll(30.0, [None, 4.0], current_replicas=0).reason is KedaReason.ACTIVATED


def test_only_cpu_memory_triggers_make_the_object_always_active() -> None:
    state = ScaledObjectState(_spec(_cpu(), min_replica_count=1), created_at=0.0)
    decision = state.poll(0.0, [None], current_replicas=3)
    assert (decision.active, decision.error, decision.reason) == (True, False, KedaReason.ACTIVE)
    assert decision.scale_to is None and decision.hpa_enabled
