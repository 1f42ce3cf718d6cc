"""GPU sharing and memory truth (``gpufleet.io/gpu-memory``), from examples/gpu-sharing.

Time-slicing gives each replica 1/replicas of a GPU and no memory isolation; a MIG instance
counts its compute slices over 7 and holds only its own memory (NVIDIA k8s-device-plugin and
MIG user guide). A process that cannot allocate its memory fails at start with CUDA
out-of-memory: Failed under ``restartPolicy: Never``, CrashLoopBackOff under ``Always``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpufleet.kube import load_scenario
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "gpu-sharing"


def simulate(name: str) -> dict[str, Any]:
    sim = Simulation(load_scenario([EXAMPLES / name]))
    sim.run()
    return build_summary(sim)


def test_second_10gb_pod_on_a_time_sliced_16gb_t4_fails_out_of_memory() -> None:
    summary = simulate("time-slicing-oom.yaml")
    pods = {p["name"]: p for p in summary["pods"]}
    first, second = pods["default/infer-a"], pods["default/infer-b"]
    assert first["reason"] == "Completed" and first["devices"] == ["0::0"] and first["gpus"] == 0.25
    assert second["phase"] == "Failed" and second["reason"] == "OOMKilled"
    assert second["devices"] == ["0::1"]  # another replica of the same physical GPU
    assert "CUDA out of memory" in second["message"]
    assert summary["totals"]["gpus_total"] == 1  # one physical GPU, advertised as 4 replicas
    assert summary["totals"]["gpu_hours_provisioned"] == 2.0  # billed as one GPU for 2 h, not four


def test_7b_bf16_model_fails_on_1g10gb_and_runs_on_1g20gb() -> None:
    """Seed 004: 7e9 parameters x 2 bytes = 14 GB: no fit in 10 GB, about 6 GB left in 20 GB."""
    summary = simulate("mig-7b-model.yaml")
    pods = {p["name"]: p for p in summary["pods"]}
    small, fits = pods["default/llm-7b-small-0"], pods["default/llm-7b-0"]
    assert small["reason"] == "CrashLoopBackOff" and not small["working"] and small["phase"] == "Running"
    assert fits["working"] and fits["devices"][0].startswith("1g.20gb")
    assert fits["gpus"] == pytest.approx(1 / 7, abs=1e-6)  # one compute slice of seven
    assert summary["totals"]["gpus_working"] == pytest.approx(1 / 7, abs=1e-6)
    assert summary["totals"]["gpu_hours_provisioned"] == 0.5  # the MIG GPU counts whole (30 min)


def test_gpu_memory_fit_refuses_the_small_instance_with_a_clear_message(tmp_path: Path) -> None:
    """With GpuMemoryFit enabled, the 7B model is not placed on 1g.10gb: it stays Pending, saying why."""
    config = """---
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: GpuMemoryFit
"""
    (tmp_path / "scheduler.yaml").write_text(config)
    sim = Simulation(load_scenario([EXAMPLES / "mig-7b-model.yaml", tmp_path / "scheduler.yaml"]))
    sim.run()
    pods = {p["name"]: p for p in build_summary(sim)["pods"]}
    small = pods["default/llm-7b-small-0"]
    assert small["phase"] == "Pending" and small["devices"] == []
    assert small["message"] == (
        "0/1 nodes are available: 1 node(s) didn't have enough GPU memory per device (GpuMemoryFit). "
        "no new claims to deallocate, preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling."
    )
    assert pods["default/llm-7b-0"]["working"]
