"""A scenario: everything a simulation or an explanation starts from."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.dra import DraObjects
from gpufleet.model.faults import FaultModel
from gpufleet.model.hpa import HorizontalPodAutoscalerSpec
from gpufleet.model.kai import KaiQueue
from gpufleet.model.keda import ScaledJobSpec, ScaledObjectSpec
from gpufleet.model.kueue import KueueObjects
from gpufleet.model.load import QueueFeed, Traffic
from gpufleet.model.node import Node
from gpufleet.model.owned import Owned
from gpufleet.model.pod import Pod
from gpufleet.model.provisioning_request import ProvisioningRequest
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.model.scheduler_records import PodEvent, Recorded
from gpufleet.model.simulation import NodePool, SimulationSettings
from gpufleet.model.workloads import Created, DaemonSet, Deployment, Job, PodGroup, PriorityClass, Workload


@dataclass
class BarePod:
    """A pod written directly (not through a controller), with its creation time."""

    pod: Pod
    created: Created = field(default_factory=Created)
    bound_node: str | None = None  # a pod already bound in a snapshot (status / spec.nodeName)
    phase: str = "Pending"
    uid: str = ""  # metadata.uid, where the dump has it
    #: its PodScheduled=False condition (its scheduler's last word), whatever its reason: the pending pod's
    #: condition when it arrives in the run, until a scheduler of the run tries it; to the end for a pod of a
    #: scheduler the run does not simulate (``sim.pod_scheduled``)
    scheduled: Recorded | None = None
    #: its ``status.nominatedNodeName`` (the node a preemption chose for it), kept in the run where no
    #: scheduler of the run serves the pod (``Simulation.nominated_nodes``)
    nominated_node: str | None = None
    #: being deleted (``metadata.deletionTimestamp``): deleted at its arrival, its ``termination_grace_s``
    #: what remains of its grace period (``kube.pod_deletion``)
    deleting: bool = False
    #: its ``metadata.creationTimestamp`` (Unix seconds), where the dump has one: put on the run's clock by
    #: ``model.node_readiness.created_on_clock``
    created_unix: float | None = None
    #: a bound pod's: when it was bound (``kube.pod_times.bound_time``, Unix seconds), on the run's clock as
    #: its creation is
    bound_unix: float | None = None
    #: a Succeeded or Failed pod's: when it finished (``kube.adoption.finished_time``: its containers' latest
    #: ``state.terminated.finishedAt``, ...; Unix seconds)
    finished_unix: float | None = None


@dataclass
class Scenario:
    nodes: list[Node] = field(default_factory=list)
    pods: list[BarePod] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    deployments: list[Deployment] = field(default_factory=list)
    daemonsets: list[DaemonSet] = field(default_factory=list)
    #: workloads of the kinds registered with a manifest reader in ``gpufleet.workloads``
    other_workloads: list[Workload] = field(default_factory=list)
    #: what each controller of a snapshot already made (its pods here, a Job's counts), by
    #: ``Kind/namespace/name``: it adopts them (``kube.adoption``)
    owned: dict[str, Owned] = field(default_factory=dict)
    pod_groups: dict[str, PodGroup] = field(default_factory=dict)  # key: ns/name
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    #: the labels of the ``v1`` Namespace objects given (InterPodAffinity's ``namespaceSelector``)
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    schedulers: list[SchedulerConfig] = field(default_factory=list)
    node_pools: list[NodePool] = field(default_factory=list)
    simulation: SimulationSettings = field(default_factory=SimulationSettings)
    hpas: list[tuple[str, HorizontalPodAutoscalerSpec]] = field(default_factory=list)  # (ns/name, spec)
    scaled_objects: list[ScaledObjectSpec] = field(default_factory=list)
    scaled_jobs: list[tuple[ScaledJobSpec, Job]] = field(default_factory=list)  # with the Job it stamps
    queue_feeds: list[QueueFeed] = field(default_factory=list)
    traffic: list[Traffic] = field(default_factory=list)
    fault_model: FaultModel | None = None  # GPU and node faults (``model.faults``)
    budgets: list[DisruptionBudget] = field(default_factory=list)
    dra: DraObjects = field(default_factory=DraObjects)
    kueue: KueueObjects = field(default_factory=KueueObjects)  # Kueue's flavors and queues
    kai_queues: dict[str, KaiQueue] = field(default_factory=dict)  # KAI Scheduler's queues, by name
    #: cluster-autoscaler's ProvisioningRequests, their PodTemplates resolved
    provisioning_requests: list[ProvisioningRequest] = field(default_factory=list)
    #: cluster-autoscaler's priority expander: (priority, node-group name expression)
    expander_priorities: tuple[tuple[int, str], ...] = ()
    #: FailedScheduling Events of a cluster dump (``explain`` shows each pod's latest)
    events: list[PodEvent] = field(default_factory=list)
    #: each workload's and PodGroup's ``metadata.creationTimestamp`` (Unix seconds), where the dump has one,
    #: by ``stamp_key``: put on the run's clock by ``model.node_readiness.created_on_clock``
    creation_timestamps: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def creation_timestamp(self, obj: Workload | PodGroup) -> float | None:
        """The workload's or PodGroup's ``metadata.creationTimestamp`` (Unix s), where the dump has one (a
        scenario written by hand has none: no key is made)."""
        if not self.creation_timestamps:
            return None
        return self.creation_timestamps.get(stamp_key(obj))

    def workloads(self) -> list[Workload]:
        """Every workload whose controller creates pods (``gpufleet.workloads`` drives each kind)."""
        return [*self.jobs, *self.deployments, *self.daemonsets, *self.other_workloads]


def stamp_key(obj: Workload | PodGroup) -> str:
    """How ``Scenario.creation_timestamps`` files a workload or PodGroup: ``<type>/<ns>/<name>``."""
    return f"{type(obj).__name__}/{obj.key}"
