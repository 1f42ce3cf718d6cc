"""DefaultPreemption end to end (kube-scheduler 1.34 ``pkg/scheduler/framework/preemption``)."""

from __future__ import annotations

from pathlib import Path

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "priority" / "preemption.yaml"


def test_higher_priority_pod_evicts_the_lower_one_after_its_grace_period() -> None:
    sim = Simulation(load_scenario([EXAMPLE]), seed=0)
    sim.run()
    pods = {p["name"]: p for p in build_summary(sim)["pods"]}
    victim, urgent, retry = pods["default/batch-0"], pods["default/urgent-0"], pods["default/batch-0-r1"]
    assert victim["reason"] == "Preempted" and victim["phase"] == "Failed"
    assert victim["disruptions"] == [60.0]
    assert victim["deleted_s"] == 90.0  # terminationGracePeriodSeconds 30
    assert urgent["bound_s"] == 90.0 and urgent["node"] == "gpu-0"
    assert urgent["finished_s"] == 90.0 + 1800 and urgent["reason"] == "Completed"
    # the Job controller recreated its pod after the pod failure backoff (DefaultJobPodFailureBackOff
    # 10 s) from the preemption, while the victim still terminated (podReplacementPolicy
    # TerminatingOrFailed, the default without a podFailurePolicy); it waits for the urgent job, then runs
    assert retry["created_s"] == 70.0 and retry["bound_s"] == 1890.0 and retry["working"]
    assert retry["stages"] == {"scheduling": 1820.0}
    # 60 s of work, checkpointed every 20 s: nothing lost beyond the last checkpoint at 60 s
    assert sim.work_lost_gpu_s == 0.0
