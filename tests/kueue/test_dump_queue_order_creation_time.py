"""A dump's Kueue Workloads and pod groups queue by their ``metadata.creationTimestamp``, on the run's clock
(time 0: the latest time the dump's Nodes show, ``model.node_readiness.created_on_clock``), not by when they
arrive in the run (time 0 for all, then file order or name):

- Kueue orders a ClusterQueue's pending Workloads by priority, then by
  ``workload.Ordering.GetQueueOrderTimestamp`` (kueue v0.19.2 ``pkg/workload/workload.go``: the Workload's
  ``CreationTimestamp``, made when its Job, or its plain pod, is created);
- scheduler-plugins' Coscheduling ``Less`` compares priority, then ``PodGroupManager.GetCreationTimestamp``
  (the PodGroup's ``CreationTimestamp``);
- Volcano's ``Session.JobOrderFn`` falls back to the job's ``CreationTimestamp``, its PodGroup's
  (``JobInfo.SetPodGroup``: ``pg.GetCreationTimestamp()``), then its UID;
- KAI Scheduler's ``jobOrderCreationFallback`` orders PodGroups by ``CreationTimestamp``, then UID; its pod
  grouper makes a pod's PodGroup when it sees the pod.

In each dump the newer object comes first in the file and first by name, so arrival order would put it
first. A ``creationTimestamp`` that is no RFC 3339 time is an error, as a Node's times are
(``kube.nodes.unix_time``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import coscheduling, run_simulation, write
from gpufleet.kube import load_scenario
from gpufleet.kube.problems import ScenarioError
from gpufleet.sim.simulation import Simulation

#: the dump's time: the latest time its Node shows
T0 = "2026-12-06T05:00:00Z"
OLD = "2026-12-06T04:00:00Z"  # an hour before the dump
NEW = "2026-12-06T04:30:00Z"  # half an hour before the dump

NODE = f"""
apiVersion: v1
kind: Node
metadata:
  name: dump-1
  creationTimestamp: "2026-12-01T00:00:00Z"
status:
  capacity: {{cpu: "4", memory: 16Gi, pods: "110", nvidia.com/gpu: "8"}}
  conditions:
  - {{type: Ready, status: "True", lastHeartbeatTime: "{T0}", lastTransitionTime: "2026-12-01T00:01:00Z"}}
"""

KUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 100}
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
"""

SIMULATION = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 1h}
"""


def stamp(created: str | None) -> str:
    return "" if created is None else f'\n  creationTimestamp: "{created}"'


def kueue_job(name: str, created: str | None) -> str:
    """A suspended Job of Kueue's queue ``q``: one pod of all 8 GPUs, for 10 minutes."""
    return f"""
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default{stamp(created)}
  labels: {{kueue.x-k8s.io/queue-name: q}}
spec:
  suspend: true
  template:
    metadata:
      annotations: {{gpufleet.io/duration: 10m}}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: main:1
        resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""


def pending_pod(
    name: str, created: str, meta: str = "", spec: str = "", annotations: str = "", gpus: int = 8
) -> str:
    """A Pending pod of the dump: ``gpus`` (all 8), for 10 minutes."""
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default{stamp(created)}{meta}
  annotations: {{gpufleet.io/duration: 10m{annotations}}}
spec:
  restartPolicy: Never{spec}
  containers:
  - name: main
    image: main:1
    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
status: {{phase: Pending}}
"""


def bound_at(sim: Simulation, *keys: str) -> list[float | None]:
    return [sim.records[k].bound_s for k in keys]


def test_the_older_kueue_job_is_admitted_first_by_its_workloads_creation_timestamp(tmp_path: Path) -> None:
    """Kueue ``StrictFIFO`` (``GetQueueOrderTimestamp``: the Workload's creationTimestamp): the Job created an
    hour before the dump is admitted at once, the one created half an hour before waits for its quota."""
    sim = run_simulation(
        write(tmp_path, NODE, KUEUE, kueue_job("a-new", NEW), kueue_job("b-old", OLD), SIMULATION)
    )
    old, new = sim.kueue.workloads["Job/default/b-old"], sim.kueue.workloads["Job/default/a-new"]
    assert (old.admissions, new.admissions) == ([0.0], [600.0])
    assert (old.created_s, new.created_s) == (-3600.0, -1800.0)


def test_a_kueue_job_without_a_creation_timestamp_counts_as_created_at_its_arrival(tmp_path: Path) -> None:
    """No ``creationTimestamp``: the Job's Workload is created as the Job arrives (time 0), after one of the
    dump created before it, though it comes first in the file."""
    sim = run_simulation(
        write(tmp_path, NODE, KUEUE, kueue_job("a-new", None), kueue_job("b-old", OLD), SIMULATION)
    )
    old, new = sim.kueue.workloads["Job/default/b-old"], sim.kueue.workloads["Job/default/a-new"]
    assert (old.admissions, new.admissions) == ([0.0], [600.0])
    assert (old.created_s, new.created_s) == (-3600.0, 0.0)


def test_the_older_plain_pod_is_admitted_first_by_its_workloads_creation_timestamp(tmp_path: Path) -> None:
    """Kueue's pod integration: a plain pod's Workload is made as the pod is created; ``StrictFIFO`` admits
    the older pod's first."""
    queued = "\n  labels: {kueue.x-k8s.io/queue-name: q}"
    sim = run_simulation(
        write(
            tmp_path,
            NODE,
            KUEUE,
            pending_pod("a-new", NEW, queued),
            pending_pod("b-old", OLD, queued),
            SIMULATION,
        )
    )
    assert bound_at(sim, "default/b-old", "default/a-new") == [0.0, 600.0]
    assert sim.kueue.workloads["Pod/default/b-old"].created_s == -3600.0


def test_a_kueue_pod_groups_workload_is_as_old_as_its_newest_pod(tmp_path: Path) -> None:
    """Kueue's pod integration makes a pod group's Workload once the group's pods exist
    (``Pod.ConstructComposableWorkload``): it is no older than its newest pod, so a plain pod created between
    the group's two pods is admitted before the group, though the group comes first in the file."""
    grouped = "\n  labels: {kueue.x-k8s.io/queue-name: q, scheduling.x-k8s.io/pod-group: gang}"
    queued = "\n  labels: {kueue.x-k8s.io/queue-name: q}"
    sim = run_simulation(
        write(
            tmp_path,
            NODE,
            KUEUE,
            pod_group("scheduling.x-k8s.io/v1alpha1", "gang", OLD).replace("minMember: 1", "minMember: 2"),
            pending_pod("gang-0", OLD, grouped, gpus=4),
            pending_pod("gang-1", NEW, grouped, gpus=4),
            pending_pod("single", "2026-12-06T04:15:00Z", queued),
            SIMULATION,
        )
    )
    assert bound_at(sim, "default/single", "default/gang-0", "default/gang-1") == [0.0, 600.0, 600.0]
    assert sim.kueue.workloads["PodGroup/default/gang"].created_s == -1800.0


def pod_group(api: str, name: str, created: str) -> str:
    return f"""
apiVersion: {api}
kind: PodGroup
metadata:
  name: {name}
  namespace: default{stamp(created)}
spec: {{minMember: 1}}
"""


def test_coscheduling_sorts_the_older_pod_group_first(tmp_path: Path) -> None:
    """Coscheduling's ``Less``: equal priorities, then ``GetCreationTimestamp``, the PodGroup's
    creationTimestamp: the older group's pod is placed, the newer one's waits for the GPUs."""
    api = "scheduling.x-k8s.io/v1alpha1"
    member = "\n  labels: {{scheduling.x-k8s.io/pod-group: {}}}"
    sim = run_simulation(
        write(
            tmp_path,
            NODE,
            coscheduling(),
            pod_group(api, "a-new", NEW),
            pod_group(api, "b-old", OLD),
            pending_pod("a-new-0", T0, member.format("a-new")),
            pending_pod("b-old-0", T0, member.format("b-old")),
            SIMULATION,
        )
    )
    assert bound_at(sim, "default/b-old-0", "default/a-new-0") == [0.0, 600.0]
    assert sim.gangs.groups["default/b-old"].created.submit_at_s == -3600.0


def test_volcano_orders_the_older_pod_groups_job_first(tmp_path: Path) -> None:
    """Volcano's ``JobOrderFn`` (no job order plugin deciding): the job of the older PodGroup first."""
    api = "scheduling.volcano.sh/v1beta1"
    member, volcano = ", scheduling.k8s.io/group-name: {}", "\n  schedulerName: volcano"
    sim = run_simulation(
        write(
            tmp_path,
            NODE,
            pod_group(api, "a-new", NEW),
            pod_group(api, "b-old", OLD),
            pending_pod("a-new-0", T0, spec=volcano, annotations=member.format("a-new")),
            pending_pod("b-old-0", T0, spec=volcano, annotations=member.format("b-old")),
            SIMULATION,
        )
    )
    assert bound_at(sim, "default/b-old-0", "default/a-new-0") == [0.0, 600.0]


def test_kai_orders_the_pod_group_of_the_older_pod_first(tmp_path: Path) -> None:
    """KAI's pod grouper makes each bare pod's PodGroup as it sees the pod (its creationTimestamp); the job
    order (``jobOrderCreationFallback``) puts the older pod's group first."""
    queue = """
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec:
  resources:
    gpu: {quota: 0, limit: -1, overQuotaWeight: 1}
    cpu: {quota: 0, limit: -1, overQuotaWeight: 1}
    memory: {quota: 0, limit: -1, overQuotaWeight: 1}
"""
    labelled, kai = "\n  labels: {kai.scheduler/queue: team}", "\n  schedulerName: kai-scheduler"
    sim = run_simulation(
        write(
            tmp_path,
            NODE,
            queue,
            pending_pod("a-new", NEW, labelled, kai),
            pending_pod("b-old", OLD, labelled, kai),
            SIMULATION,
        )
    )
    assert bound_at(sim, "default/b-old", "default/a-new") == [0.0, 600.0]


@pytest.mark.parametrize(
    "document",
    [
        kueue_job("j", "yesterday"),
        pod_group("scheduling.x-k8s.io/v1alpha1", "g", "yesterday"),
        pod_group("scheduling.volcano.sh/v1beta1", "g", "yesterday"),
    ],
    ids=["job", "coscheduling-pod-group", "volcano-pod-group"],
)
def test_a_creation_timestamp_that_is_no_time_is_an_error(tmp_path: Path, document: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        load_scenario(write(tmp_path, NODE, KUEUE, document))
    assert any(
        "metadata.creationTimestamp" in line and "must be an RFC 3339 time" in line
        for line in str(raised.value).splitlines()
    )
