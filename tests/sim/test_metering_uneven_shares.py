"""The meter counts a GPU shared by fractional requests as its allocation does: by the larger of its
working shares' summed compute and summed memory (HAMi's ``gpucores``/``gpumem``), so the GPUs working
never exceed those allocated. Found by the ``metering-adds-up`` invariant: two shares of 60 % compute
and 20 % memory, and 20 % and 60 %, were metered 1.2 GPUs working on 0.8 allocated."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import simulated_text

NODE = """
apiVersion: v1
kind: Node
metadata:
  name: a100-0
  labels:
    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
    nvidia.com/gpu.memory: "81920"
    nvidia.com/gpu.count: "1"
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "1"}
"""


def share(name: str, memory_mib: int, cores: int, duration: str) -> str:
    """A pod of one HAMi vGPU with ``memory_mib`` of the GPU's 80 GiB and ``cores`` % of its compute."""
    limits = f"nvidia.com/gpu: 1, nvidia.com/gpumem: {memory_mib}, nvidia.com/gpucores: {cores}"
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpufleet.io/duration: {duration}}}}}
spec:
  restartPolicy: Never
  containers: [{{name: app, image: infer, resources: {{limits: {{{limits}}}}}}}]
"""


def uneven(memory_heavy_for: str) -> str:
    """60 % compute and 20 % memory for an hour beside 20 % compute and 60 % memory."""
    pods = [share("compute-heavy", 16384, 60, "1h"), share("memory-heavy", 49152, 20, memory_heavy_for)]
    return "---".join([NODE, *pods])


def test_shares_uneven_in_compute_and_memory_work_no_more_of_a_gpu_than_they_hold(tmp_path: Path) -> None:
    totals = simulated_text(tmp_path, uneven("1h"))["totals"]
    assert totals["gpu_hours_allocated"] == pytest.approx(0.8)
    assert totals["gpu_hours_working"] == pytest.approx(0.8)  # both work the hour: 80 % of the GPU


def test_a_share_that_stops_gives_back_only_what_the_gpu_no_longer_works(tmp_path: Path) -> None:
    totals = simulated_text(tmp_path, uneven("30m"))["totals"]
    # 30 min of both (0.8 of the GPU), then 30 min of compute-heavy alone (0.6)
    assert totals["gpu_hours_working"] == pytest.approx(0.5 * 0.8 + 0.5 * 0.6)
