"""A gang member waiting at Permit, preempted or deleted. A preemption victim is rejected back to the
queue, not deleted (kube-scheduler ``prepareCandidate``: ``waitingPod.Reject(pluginName, "preempted")``),
so the preemptor binds at once instead of waiting for the gang's Permit timeout. A member deleted goes at
once, and its gang's other waiting members let their room go with it (``RejectWaitingPod``, then
Coscheduling's Unreserve)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import coscheduling, pods_by_name, simulated

SCENARIO = (
    """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "9"}
---
"""
    + coscheduling("gang-scheduler")
    + """---
# ten 1-GPU members on a 9-GPU node: nine are assumed and wait at Permit; the tenth fails, but
# within 10 % of minMember Coscheduling keeps the nine waiting (until scheduleTimeoutSeconds)
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g}
spec: {minMember: 10, scheduleTimeoutSeconds: 300}
---
apiVersion: batch/v1
kind: Job
metadata: {name: g}
spec:
  parallelism: 10
  completions: 10
  template:
    metadata:
      labels: {scheduling.x-k8s.io/pod-group: g}
      annotations: {gpufleet.io/duration: 10m}
    spec:
      schedulerName: gang-scheduler
      restartPolicy: Never
      containers:
      - name: c
        image: registry.example.com/c:v1
        resources:
          limits: {nvidia.com/gpu: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: urgent
  annotations: {gpufleet.io/submit-at: 10s, gpufleet.io/duration: 20m}
spec:
  schedulerName: gang-scheduler
  priorityClassName: urgent
  containers:
  - name: c
    image: registry.example.com/c:v1
    resources:
      limits: {nvidia.com/gpu: 9}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: waiting-victim}
spec: {duration: 1h}
"""
)


def run(tmp_path: Path) -> dict[str, dict[str, Any]]:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    return pods_by_name(simulated([path], seed=0))


def test_gang_members_waiting_at_permit_are_rejected_not_deleted_when_preempted(tmp_path: Path) -> None:
    pods = run(tmp_path)
    urgent = pods["urgent"]
    members = [p for name, p in pods.items() if name.startswith("g-")]
    assert len(members) == 10  # none deleted and recreated by the Job controller
    # the nine waiting members held the GPUs at 10 s; rejected, they free them at once (not at the
    # 300 s Permit timeout, nor after a grace period: nothing ran)
    assert urgent["node"] == "gpu-0" and urgent["bound_s"] is not None and urgent["bound_s"] < 60.0
    for member in members:  # back in the queue, pending: the gang never fits a 9-GPU node
        assert member["phase"] == "Pending" and member["reason"] != "Preempted"
        assert member["deleted_s"] is None and member["disruptions"] == []


def member(i: int) -> str:
    deleted = ", gpufleet.io/delete-at: 1m" if i == 0 else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: m{i}
  labels: {{scheduling.x-k8s.io/pod-group: g}}
  annotations: {{gpufleet.io/duration: 10m{deleted}}}
spec:
  schedulerName: gang-scheduler
  containers:
  - {{name: c, image: c, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
"""


def test_a_gang_member_deleted_while_it_waits_at_permit_goes_at_once_and_its_gang_lets_go(
    tmp_path: Path,
) -> None:
    """Ten 1-GPU members of a bare-pod gang on a 9-GPU node: m0 to m8 are assumed and wait at Permit (a
    tenth missing is within Coscheduling's 10 %). m0 is deleted at 1 min: a pod with no node goes at once
    (the API server), kube-scheduler rejects it at Permit (``deletePodFromSchedulingQueue``:
    ``RejectWaitingPod``) and Coscheduling's Unreserve rejects the other waiting members, so their GPUs
    are free at once, not at the 300 s Permit timeout nor at the next try of the tenth: the 9-GPU pod
    waiting since 30 s binds then."""
    config = SCENARIO.split("# ten 1-GPU")[0]
    text = (
        config
        + "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n"
        + "spec: {minMember: 10, scheduleTimeoutSeconds: 300}\n"
        + "".join(member(i) for i in range(10))
        + """---
apiVersion: v1
kind: Pod
metadata:
  name: after
  annotations: {gpufleet.io/submit-at: 30s, gpufleet.io/duration: 5m}
spec:
  containers:
  - {name: c, image: c, resources: {limits: {nvidia.com/gpu: 9}}}
"""
    )
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    pods = pods_by_name(simulated([path], seed=0))
    assert (pods["m0"]["deleted_s"], pods["m0"]["reason"], pods["m0"]["bound_s"]) == (60.0, "Deleted", None)
    assert pods["after"]["bound_s"] == 60.0
    assert all(pods[f"m{i}"]["phase"] == "Pending" for i in range(1, 10))  # nine: never minMember again
