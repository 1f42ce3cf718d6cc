"""A DeviceClass whose selector reads an attribute the devices lack, in a simulation: kube-scheduler's
DynamicResources Filter returns an Error status for the CEL runtime error (``statusError``), so the
attempt fails with the error's words, the PodScheduled condition's reason is ``SchedulerError``, no pod
is preempted for it, and cluster-autoscaler, which looks only at ``Unschedulable`` pods, ignores it."""

from __future__ import annotations

from pathlib import Path

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dra" / "claim-h100.yaml"
CLASS_SELECTOR = 'expression: device.driver == "gpu.nvidia.com"'
BROKEN = 'expression: device.attributes["gpu.nvidia.com"].healthy'
CEL_ERROR = (
    'running "DynamicResources" filter plugin: class gpu.nvidia.com: selector #0: '
    "CEL runtime error: no such key: healthy"
)


def test_a_class_selector_reading_a_missing_attribute_fails_every_attempt_with_the_cel_error(
    tmp_path: Path,
) -> None:
    text = EXAMPLE.read_text()
    assert CLASS_SELECTOR in text
    scenario = tmp_path / "broken-class.yaml"
    scenario.write_text(text.replace(CLASS_SELECTOR, BROKEN))
    sim = Simulation(load_scenario([scenario]))
    sim.run()
    pods = {p["name"]: p for p in build_summary(sim)["pods"]}
    for name in ("default/trainer", "default/too-big"):
        assert pods[name]["phase"] == "Pending" and pods[name]["node"] is None
        assert pods[name]["message"] == CEL_ERROR
        assert pods[name]["reason"] == "SchedulerError"
    assert sim.unschedulable_pods() == []
    assert sim.state.dra is not None and sim.state.dra.allocated == {}
