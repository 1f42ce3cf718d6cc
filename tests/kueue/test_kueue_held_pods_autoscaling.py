"""Pods Kueue holds trigger no scale-up: a plain pod waiting for its workload's admission carries Kueue's
scheduling gate (``kueue.x-k8s.io/admission``), so kube-scheduler never marks it Unschedulable, and a
suspended Job has no pods at all; cluster-autoscaler only looks at pods whose ``PodScheduled`` condition
has reason ``Unschedulable`` (``kubernetes/autoscaler: cluster-autoscaler/utils/kubernetes/listers.go``,
``isUnschedulable``). gpufleet shows a waiting workload's pods gated (``gpufleet.control.kueue_queues``);
``Simulation.unschedulable_pods`` leaves them out.
"""

from __future__ import annotations

from pathlib import Path

from conftest import simulated_text

SCENARIO = """\
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: held}
spec: {duration: 10m}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: queue, namespace: ml}
spec: {clusterQueue: team}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 1
  max: 4
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
"""
JOB = """\
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: ml
  labels: {{kueue.x-k8s.io/queue-name: queue}}
spec:
  template:
    metadata:
      annotations: {{gpufleet.io/duration: 1h}}
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: registry.example.com/trainer:v1
        resources:
          limits: {{nvidia.com/gpu: 8}}
"""


def test_a_job_waiting_for_kueue_quota_triggers_no_scale_up(tmp_path: Path) -> None:
    """The first Job takes the 8-GPU quota and the one node; the second waits for quota (its pod gated):
    cluster-autoscaler adds no node for it."""
    summary = simulated_text(tmp_path, SCENARIO + JOB.format(name="first") + JOB.format(name="second"))
    assert not [e for e in summary["autoscaler_events"] if e["kind"] == "scale-up"]
    waiting = next(w for w in summary["kueue"]["workloads"] if w["name"] == "Job/ml/second")
    assert waiting["admissions"] == []
