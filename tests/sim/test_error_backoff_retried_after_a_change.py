"""A pod whose attempt failed with no plugin named (``no nodes available to schedule pods``: an error, not
unschedulable) backs off and is tried again (``handleSchedulingFailure``: the backoff queue). The run stops
early once only retries that would fail alike are left (``Simulation._futile``); a node that joined after the
failure makes the retry a new one (``SchedulingQueue.note_change``), even when the scheduling pass that
followed the join came before the pod's backoff was over."""

from __future__ import annotations

from pathlib import Path

from conftest import run_simulation, write

SCENARIO = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 0
  min: 1
  max: 1
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  completions: 1
  parallelism: 1
  template:
    metadata:
      annotations: {gpufleet.io/duration: 10m}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          limits: {nvidia.com/gpu: 8}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 1h, autoscaler: {bypassedSchedulerNames: [default-scheduler]}}
"""


def test_a_pod_failed_for_want_of_nodes_runs_on_the_node_that_joined_during_its_backoff(
    tmp_path: Path,
) -> None:
    """No node at 0 s: the pod fails (``no nodes available to schedule pods``) and backs off; the pool's scale
    to its min adds a node that joins at once (no start chain), the pass right after finds the pod still
    backing off. Its retry binds it there and it succeeds; the node, at its pool's
    min, gives cluster-autoscaler nothing to look at, and the run no longer stops at 0 s with the pod
    pending. (``bypassedSchedulerNames`` set: cluster-autoscaler does not wait for the new GPU pod to be 30 s
    old, ``allPodsAreNew``, so the node joins within the pod's backoff.)"""
    sim = run_simulation(write(tmp_path, SCENARIO))
    assert [(e.t_s, e.kind, e.nodes) for e in sim.autoscaler.events] == [(0.0, "scale-up", ("h100-0",))]
    record = sim.records["default/train-0"]
    assert record.phase == "Succeeded" and record.message is None
    assert sim.end_time == 3600.0
