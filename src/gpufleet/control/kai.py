"""KAI Scheduler installed: its scheduler process and its pod grouper.

"KAI installed" means the scenario has a KAI ``Queue`` (``scheduling.run.ai/v2``); without one, a
pod with ``schedulerName: kai-scheduler`` stays Pending as for any scheduler gpufleet does not run.
With one, gpufleet runs a scheduler process named ``kai-scheduler`` made of gpufleet's plugins:
kube-scheduler's defaults (and GpuShare, which places KAI's ``gpu-fraction``/``gpu-memory`` pods),
Coscheduling for the gangs (queue sort, all-or-nothing Permit) and KaiQueueLimit for the queues'
limits (``scheduling.plugins.kai_queue``), without kube-scheduler's DefaultPreemption. KAI's own
actions (its fair-share division of resources over quota, preempt, reclaim, consolidation, its
topology-aware placement) are not modelled: a KAI pod never preempts.

The pod grouper (``NVIDIA/KAI-Scheduler: pkg/podgrouper``) makes each pod's PodGroup from its top
owner and writes its name on the pod (annotation ``pod-group-name``):

* a Job's pod: ``pg-<pod>-<job uid>``, minMember 1 (``job_grouper.go``: each pod of a batch Job
  is its own group); a Deployment's (or ReplicaSet's) pod or a bare pod: ``pg-<pod>-<pod uid>``,
  minMember 1 (``deployment_grouper.go``, ``podjob.go``);
* a Kubeflow training job's pod (PyTorchJob, TFJob, MPIJob, XGBoostJob, JAXJob):
  ``pg-<job>-<job uid>``, minMember ``runPolicy.schedulingPolicy.minAvailable`` when given (the
  gang the controller declares), else every replica of every replica type
  (``kubeflow/distributed_common.go`` ``calcJobNumOfPods``);
* any other kind: ``pg-<owner>-<owner uid>``, minMember 1 (``defaultgrouper``).

UIDs are not in manifests: gpufleet derives each one from the object's kind, namespace and name
(a name-based UUID), so names are the same on every run.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace

from gpufleet.control.port import QueuedWorkload
from gpufleet.model.kai import KAI_SCHEDULER, POD_GROUP_ANNOTATION, KaiQueue
from gpufleet.model.pod import Pod
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.model.workloads import Created, PodGroup
from gpufleet.scheduling.gangs import GangView
from gpufleet.workloads.kind import WorkloadController

#: kinds whose grouper gangs every replica (``kubeflow.KubeflowDistributedGrouper``)
KUBEFLOW_KINDS = frozenset({"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "JAXJob"})
#: kinds whose grouper makes one group per pod, named after the pod and its uid
PER_POD = frozenset({"Deployment", "ReplicaSet"})


def scheduler_config(queues: Mapping[str, KaiQueue]) -> SchedulerConfig:
    """The ``kai-scheduler`` process: defaults, Coscheduling's gangs, the queues' limits; without
    kube-scheduler's DefaultPreemption (KAI preempts by its own actions, not modelled)."""
    coscheduling = (PluginRef("Coscheduling"),)
    plugins = {
        "multiPoint": PluginSet((*coscheduling, PluginRef("KaiQueueLimit")), ("DefaultPreemption",)),
        "queueSort": PluginSet(coscheduling, ("*",)),
    }
    profile = ProfileConfig(KAI_SCHEDULER, plugins, {"KaiQueueLimit": {"queues": dict(queues)}})
    return SchedulerConfig(KAI_SCHEDULER, [profile])


def scheduler_configs(
    configs: list[SchedulerConfig], queues: Mapping[str, KaiQueue]
) -> list[SchedulerConfig]:
    """The scenario's scheduler processes and, where KAI is installed (a Queue) and no
    KubeSchedulerConfiguration defines ``kai-scheduler``, KAI's."""
    if not queues or any(p.scheduler_name == KAI_SCHEDULER for c in configs for p in c.profiles):
        return list(configs)
    return [*configs, scheduler_config(queues)]


def grouped(pod: Pod, controller: WorkloadController | None, now: float, gangs: GangView) -> Pod:
    """A pod of ``kai-scheduler`` with its pod group (added to ``gangs``), any other pod as it is."""
    if pod.scheduler_name != KAI_SCHEDULER or pod.pod_group is not None:
        return pod
    pod, made = group(pod, controller, now)
    if made.key not in gangs.groups:
        gangs.add_group(made)
    return pod


def uid(kind: str, namespace: str, name: str) -> str:
    """A stable stand-in for an object's ``metadata.uid``."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"gpufleet:{kind}/{namespace}/{name}"))


def group(pod: Pod, controller: WorkloadController | None, now: float) -> tuple[Pod, PodGroup]:
    """The pod with its ``pod-group-name`` and the PodGroup KAI's pod grouper makes for it, created at
    ``now`` (a dump's pod: its ``creationTimestamp`` on the run's clock, what KAI's job order,
    ``jobOrderCreationFallback``, counts from); ``controller``: its top owner's (None for a bare pod)."""
    minimum = 1
    if controller is None or controller.kind in PER_POD:
        name = f"pg-{pod.name}-{uid('Pod', pod.namespace, pod.name)}"
    else:
        owner = controller.key.rsplit("/", 1)[-1]
        base = pod.name if controller.kind == "Job" else owner
        name = f"pg-{base}-{uid(controller.kind, pod.namespace, owner)}"
        if controller.kind in KUBEFLOW_KINDS:
            declared = controller.pod_groups()
            if declared:
                minimum = declared[0].min_member
            elif isinstance(controller, QueuedWorkload):
                minimum = sum(p.count for p in controller.pod_sets())
    annotated = replace(pod, annotations={**pod.annotations, POD_GROUP_ANNOTATION: name})
    return annotated, PodGroup(name, pod.namespace, minimum, None, Created(now))
