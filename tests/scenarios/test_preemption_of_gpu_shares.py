"""Preemption on shared GPUs: a GPU comes back whole in the victim search only when every share on
it is a victim (``SelectVictimsOnNode`` on gpufleet's per-GPU share ledger), so the fewest shares go:
the ones on one GPU, reprieved most important first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import pods_by_name, simulated

HEAD = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata:
  name: a100-0
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.memory: "81920"}
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "2"}
"""
SHARE = """---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{gpu-fraction: "0.5", gpufleet.io/duration: 2h, gpufleet.io/submit-at: {at}}}
spec:
  restartPolicy: Never
  containers: [{{name: app, image: r/i:v1, resources: {{requests: {{cpu: "1", memory: 4Gi}}}}}}]
"""
URGENT = """---
apiVersion: v1
kind: Pod
metadata: {{name: urgent, annotations: {{gpufleet.io/submit-at: 60s, gpufleet.io/duration: 1h{extra}}}}}
spec:
  priorityClassName: high
  restartPolicy: Never
  containers: [{{name: app, image: r/t:v1, resources: {{requests: {{cpu: "1"}}{limits}}}}}]
"""


def run(tmp_path: Path, urgent: str) -> dict[str, dict[str, Any]]:
    shares = "".join(SHARE.format(name=n, at=f"{k}s") for k, n in enumerate(("s-a", "s-b", "s-c", "s-d")))
    path = tmp_path / "scenario.yaml"
    path.write_text(HEAD + shares + urgent)
    return pods_by_name(simulated([path], seed=0))


@pytest.mark.parametrize(
    "urgent",
    [
        URGENT.format(extra="", limits=", limits: {nvidia.com/gpu: 1}"),  # a whole GPU
        URGENT.format(extra=', gpu-fraction: "0.75"', limits=""),  # a share no open GPU has room for
    ],
    ids=["whole-gpu", "fraction"],
)
def test_a_preemptor_evicts_only_the_shares_of_one_gpu(tmp_path: Path, urgent: str) -> None:
    pods = run(tmp_path, urgent)
    # four halves fill both GPUs (s-a, s-b on one, s-c, s-d on the other); the two latest go
    assert [n for n, p in sorted(pods.items()) if p["reason"] == "Preempted"] == ["s-c", "s-d"]
    assert pods["s-a"]["phase"] == pods["s-b"]["phase"] == "Succeeded"
    assert pods["urgent"]["node"] == "a100-0" and pods["urgent"]["bound_s"] == 90.0  # 30 s grace
