"""``gpufleet explain`` on manifests: the pods a Job would create are explained like pending pods."""

from __future__ import annotations

from pathlib import Path

from gpufleet.kube import load_scenario
from gpufleet.kube.explain import explain_scenario

SCENARIO = """
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: big}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: i
        resources: {limits: {nvidia.com/gpu: 16}}
"""


def test_job_pods_are_explained_with_kube_schedulers_message(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    [entry] = explain_scenario(load_scenario([path]))
    assert entry["pod"] == "default/big-0"
    assert entry["message"] == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert entry["closest_nodes"] == [
        {"node": "gpu-0", "needs": ["node has too little nvidia.com/gpu in total"], "evict": []}
    ]
