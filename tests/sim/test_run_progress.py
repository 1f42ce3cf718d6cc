"""Simulation.run tells a progress observer how far it got (sim.run_progress): every EVERY_EVENTS
events and once at the end, with the horizon; the run's results do not depend on being observed."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write
from gpufleet.kube import load_scenario
from gpufleet.report import finished_summary
from gpufleet.sim.run_progress import EVERY_EVENTS
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

BURSTS = Path(__file__).parents[2] / "examples" / "experiments" / "bursts.yaml"

TWO_PODS = """apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations: {gpufleet.io/duration: 2h}
spec:
  restartPolicy: Never
  containers: [{name: c, resources: {requests: {nvidia.com/gpu: "4"}, limits: {nvidia.com/gpu: "4"}}}]
"""


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[float, float | None, int]] = []

    def advanced(self, now_s: float, horizon_s: float | None, events: int) -> None:
        self.calls.append((now_s, horizon_s, events))


def summary_text(sim: Simulation) -> str:
    return json.dumps(finished_summary(build_summary(sim)), sort_keys=True)


def test_a_run_reports_every_n_events_and_its_end_with_the_scenario_duration_as_horizon() -> None:
    sim = Simulation(load_scenario([BURSTS]))
    recorder = Recorder()
    sim.run(progress=recorder)
    events = [e for _, _, e in recorder.calls]
    assert sim.loop.steps > 2 * EVERY_EVENTS  # the example is long enough to be reported on midway
    assert events[:-1] == list(range(EVERY_EVENTS, sim.loop.steps + 1, EVERY_EVENTS))
    assert recorder.calls[-1] == (sim.end_time, 5400.0, sim.loop.steps)
    assert {h for _, h, _ in recorder.calls} == {5400.0}
    times = [t for t, _, _ in recorder.calls]
    assert times == sorted(times) and 0 < times[0] < times[-1]


def test_a_run_without_a_duration_reports_no_horizon(tmp_path: Path) -> None:
    sim = Simulation(load_scenario(write(tmp_path, TWO_PODS)))
    recorder = Recorder()
    sim.run(progress=recorder)
    assert recorder.calls == [(7200.0, None, sim.loop.steps)]  # a short run: its end only


def test_results_are_the_same_with_and_without_progress() -> None:
    scenario = load_scenario([BURSTS])
    plain, observed = Simulation(scenario), Simulation(scenario)
    plain.run()
    observed.run(progress=Recorder())
    assert summary_text(plain) == summary_text(observed)
