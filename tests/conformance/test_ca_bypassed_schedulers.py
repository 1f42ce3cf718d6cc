"""cluster-autoscaler 1.34's ``TestStaticAutoscalerRunOnceWithBypassedSchedulers`` (tag
``cluster-autoscaler-1.34.5``, ``cluster-autoscaler/core/static_autoscaler_test.go``), row by row, through a
simulated run: ``--bypassed-scheduler-names`` names ``default-scheduler`` and ``bypassed-scheduler``; node n1
(1000m cpu) holds p1 (600m); each row adds one pending pod without a ``PodScheduled`` condition, and its one
``RunOnce`` is the loop at 0 s, before the run's kube-scheduler first tries the pod. A scale-up of ng1 by one
node is expected where ``SchedulerUnprocessedPods`` (``utils/kubernetes/listers.go``) lists the pod and no
node fits it: p3 (600m, ``default-scheduler``) and p4 (600m, ``bypassed-scheduler``); none for p2 (100m, fits
n1) and p5 (600m, ``non-bypassed-scheduler``, never listed). In gpufleet, n1 is a node of the dump beside the
pool ng1 (its template a 1000m node), and only ``default-scheduler`` is simulated."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_simulation, write

SCENARIO = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 1m, autoscaler: {bypassedSchedulerNames: [default-scheduler, bypassed-scheduler]}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: 1000m, memory: "1000", pods: "110"}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: ng1}
spec:
  max: 10
  template:
    status:
      capacity: {cpu: 1000m, memory: "1000", pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: c:1, resources: {requests: {cpu: 600m, memory: "100"}}}]
status: {phase: Running}
"""


def pending(name: str, millicpu: int, scheduler: str) -> str:
    """``BuildTestPod(name, millicpu, 100, AddSchedulerName(scheduler))``: pending, no condition."""
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  schedulerName: {scheduler}
  containers: [{{name: c, image: c:1, resources: {{requests: {{cpu: {millicpu}m, memory: "100"}}}}}}]
status: {{phase: Pending}}
"""


@pytest.mark.parametrize(
    ("pod", "scale_up"),
    [
        pytest.param(
            pending("p2", 100, "bypassed-scheduler"),
            [],
            id="Unprocessed pod with bypassed scheduler doesn't cause a scale-up when there's capacity",
        ),
        pytest.param(
            pending("p3", 600, "default-scheduler"),
            [("ng1", 1)],
            id="Unprocessed pod with bypassed scheduler causes a scale-up when there's no capacity - "
            "Default Scheduler",
        ),
        pytest.param(
            pending("p4", 600, "bypassed-scheduler"),
            [("ng1", 1)],
            id="Unprocessed pod with bypassed scheduler causes a scale-up when there's no capacity - "
            "Non-default Scheduler",
        ),
        pytest.param(
            pending("p5", 600, "non-bypassed-scheduler"),
            [],
            id="Unprocessed pod with non-bypassed scheduler doesn't cause a scale-up when there's no "
            "capacity",
        ),
    ],
)
def test_static_autoscaler_run_once_with_bypassed_schedulers(
    tmp_path: Path, pod: str, scale_up: list[tuple[str, int]]
) -> None:
    sim = run_simulation(write(tmp_path, SCENARIO, pod))
    first_loop = [e for e in sim.autoscaler.events if e.kind == "scale-up" and e.t_s == 0.0]
    assert [(e.pool, len(e.nodes)) for e in first_loop] == scale_up
