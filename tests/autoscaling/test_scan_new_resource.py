"""cluster-autoscaler's scan over a pod that asks for a resource no node has had yet (a MIG profile of
a pool with no node, a pod Kueue holds): no node has any of it free, so the scan places it nowhere and
the run goes on (it used to stop on NumPy arrays of different widths)."""

from __future__ import annotations

from pathlib import Path

from conftest import kueue_queues, simulated, write

MIG_POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: mig}
spec:
  min: 0
  max: 1
  replicas: 0
  gpu:
    {model: A100-80GB, count: 1, migStrategy: mixed, migLayout: [3g.40gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb]}
  provisioning: {boot: 30s, devicePlugin: 30s}
  template:
    status:
      capacity: {cpu: "64", memory: 512Gi, pods: "110"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: notebook, labels: {kueue.x-k8s.io/queue-name: queue}}
spec:
  template:
    metadata:
      annotations: {gpufleet.io/duration: 5m}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: notebook
        resources: {limits: {nvidia.com/mig-1g.10gb: 1}}
"""


def test_a_held_pod_asking_for_a_resource_no_node_has_yet_stays_pending(tmp_path: Path) -> None:
    queues = kueue_queues("default-flavor", 2, "queue", "default")
    summary = simulated(write(tmp_path, MIG_POOL, queues), duration_s=600.0)
    (pod,) = summary["pods"]
    assert pod["final_state"] == "Pending"
    assert "nvidia.com/mig-1g.10gb" in pod["message"]
