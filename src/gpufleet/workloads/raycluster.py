"""KubeRay's ``RayCluster`` (``ray.io/v1``): a Ray head pod and worker groups, kept as
ray-project/kuberay's operator keeps them (``ray-operator/controllers/ray/raycluster_controller.go``
``reconcilePods``, ``common/pod.go``, ``utils/util.go``, ``apis/ray/v1/raycluster_types.go``).

Pods: one head, ``<cluster>-head-<5 chars>`` (``utils.PodName(..., isGenerateName=true)``: the API
server's ``generateName``; ``ENABLE_DETERMINISTIC_HEAD_POD_NAME`` is off by default), and per worker
group ``replicas x numOfHosts`` workers ``<cluster>-<group>-worker-<5 chars>``. The 5 characters come
from a hash of the namespace, the cluster and the pod's ordinal (``model.generated_names``), never a
name given before, so a scenario names its pods the same way on every run. Labels (``labelPod``):
``ray.io/cluster``, ``ray.io/node-type`` (``head``/``worker``), ``ray.io/group`` (``headgroup`` for
the head), ``ray.io/is-ray-node: "yes"``, ``ray.io/identifier`` (``<cluster>-head``/``-worker``),
``app.kubernetes.io/name: kuberay``, ``app.kubernetes.io/created-by: kuberay-operator``. Pods are
owned by the RayCluster.

Replicas (``GetWorkerGroupDesiredReplicas``): ``replicas`` (default: ``minReplicas``) held within
``[minReplicas, maxReplicas]`` (defaults 0 and 2^31-1), times ``numOfHosts`` (default 1); 0 for a group
with ``suspend: true``; none at all for a cluster with ``spec.suspend: true``. A head or worker pod
that ends (Succeeded or Failed: ``shouldDeletePod``) is deleted and created again under a new name,
after the operator's work-queue retry (``kind.work_queue_delay_s``); under ``restartPolicy: Always`` (the
templates' default) a pod never ends so: the kubelet restarts its container in place, whatever its exit
code, and KubeRay leaves it.

With ``enableInTreeAutoscaling: true`` the Ray autoscaler (``autoscaling.ray_autoscaler``, driven by
``control.kuberay``) changes each group's ``replicas`` between its min and max on the cluster's Ray
demand (the ``gpufleet.io/ray-demand`` annotation, ``model.ray``), and deletes the idle workers it
names (``scaleStrategy.workersToDelete``); KubeRay never deletes surplus workers itself then
(``ENABLE_RANDOM_POD_DELETE`` off). ``autoscalerOptions``: ``upscalingMode`` (``Default``,
``Aggressive``, ``Conservative``), ``idleTimeoutSeconds`` (default 60), and per group
``idleTimeoutSeconds``; ``version`` v1 and v2 are modelled alike (after v2). Each group's Ray resources
are its ``rayStartParams`` (``num-cpus``, ``num-gpus``, ``memory``) or group ``resources``, else its
first container's limits, else requests, rounded up (``autoscaling_config.py``).

Gang (``batchscheduler/scheduler-plugins``): with the operator run as ``--batch-scheduler=
scheduler-plugins``, a cluster labelled ``ray.io/gang-scheduling-enabled`` gets a scheduler-plugins
PodGroup named after the cluster with ``minMember`` = desired workers + 1 (the head), its pods the
``scheduling.x-k8s.io/pod-group`` label and ``schedulerName: scheduler-plugins-scheduler`` (a scenario
must run that scheduler, e.g. a KubeSchedulerConfiguration profile with Coscheduling). Here the
label alone stands for that operator configuration. Volcano's (``batchscheduler/volcano``: the operator
run as ``--batch-scheduler=volcano`` and the cluster, or RayJob, labelled ``ray.io/scheduler-name:
volcano``): a Volcano PodGroup ``ray-<cluster or RayJob>-pg`` in the queue of the label
``volcano.sh/queue-name`` (else ``default``), ``minMember`` = the desired workers + 1 (with the
autoscaler, the minimum workers + 1), its pods ``schedulerName: volcano`` and the annotations
``scheduling.k8s.io/group-name`` and ``volcano.sh/task-spec`` (their group). YuniKorn's and KAI's
integrations are not modelled: their labels are a warning and make no gang.

Kueue (``pkg/controller/jobs/raycluster``): a pod set ``head`` of 1 and one per worker group (its
name, ``replicas x numOfHosts`` pods). A RayCluster never finishes.

Not modelled, a warning each: ``headGroupSpec.headService``, ``enableIngress``, ``serviceType``,
``gcsFaultToleranceOptions``, ``upgradeStrategy``, ``authOptions``, ``tlsOptions``, ``networkPolicy``,
``historyServerOptions``, ``managedBy``, ``headServiceAnnotations``, ``workerGroupSpecs[].scaleStrategy``
and any other field. ``rayVersion`` and the other ``rayStartParams`` change nothing scheduled.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Protocol

from gpufleet.model.generated_names import unique_name
from gpufleet.model.node import Node
from gpufleet.model.pod import POD_GROUP_LABEL, VOLCANO_GROUP_ANNOTATION, OwnerRef, Pod
from gpufleet.model.quantity import QuantityError, parse_quantity
from gpufleet.model.ray import RAY_DEMAND, RayDemand
from gpufleet.model.workloads import Created, PodGroup, PodSet, labelled
from gpufleet.workloads import register_kind
from gpufleet.workloads.kind import ManifestReader, ReplicaBound, work_queue_delay_s
from gpufleet.workloads.pytorchjob import invalid, unsupported

API = ("ray.io", "v1", "RayCluster")
HEAD_GROUP = "headgroup"  # RayNodeHeadGroupLabelValue; the autoscaler's head node type
CLUSTER_LABEL = "ray.io/cluster"
NODE_TYPE_LABEL = "ray.io/node-type"
GROUP_LABEL = "ray.io/group"
IS_RAY_NODE_LABEL = "ray.io/is-ray-node"
IDENTIFIER_LABEL = "ray.io/identifier"
GANG_LABEL = "ray.io/gang-scheduling-enabled"  # utils.RayGangSchedulingEnabled
GANG_SCHEDULER = "scheduler-plugins-scheduler"  # scheduler_plugins.go schedulerInstanceName
SCHEDULER_NAME_LABEL = "ray.io/scheduler-name"  # utils.RaySchedulerName
VOLCANO_QUEUE_LABEL = "volcano.sh/queue-name"  # volcano_scheduler.go QueueNameLabelKey
VOLCANO_TASK_SPEC = "volcano.sh/task-spec"  # volcanobatchv1alpha1.TaskSpecKey
#: the labels of the batch-scheduler integrations not modelled (yunikorn, kai-scheduler; volcano's
#: priority class)
_OTHER_SCHEDULER_LABELS = (
    "ray.io/priority-class-name",
    "yunikorn.apache.org/queue",
    "kai.scheduler/queue",
)
APP_NAME_LABEL, APP_NAME = "app.kubernetes.io/name", "kuberay"
CREATED_BY_LABEL, CREATED_BY = "app.kubernetes.io/created-by", "kuberay-operator"
MAX_REPLICAS = 2**31 - 1
UPSCALING_MODES = ("Default", "Aggressive", "Conservative")
DEFAULT_IDLE_TIMEOUT_S = 60.0
_NO_CONTAINER = "{} should have at least one container"
#: fields of a cluster spec read here; the others given are warnings
_UNMODELLED = (
    "upgradeStrategy",
    "authOptions",
    "managedBy",
    "headServiceAnnotations",
    "gcsFaultToleranceOptions",
    "historyServerOptions",
    "networkPolicy",
    "tlsOptions",
    "headGroupSpec.headService",
    "headGroupSpec.enableIngress",
    "headGroupSpec.ingressOptions",
    "headGroupSpec.serviceType",
    "headGroupSpec.labels",
)


@dataclass(frozen=True)
class WorkerGroup:
    name: str
    replicas: int  # spec replicas within [min, max] (the autoscaler changes the controller's copy)
    min_replicas: int
    max_replicas: int
    num_of_hosts: int
    template: Pod
    resources: Mapping[str, float]  # the Ray resources of one of its pods
    suspend: bool = False
    idle_timeout_s: float | None = None


@dataclass(frozen=True)
class RayClusterSpec:
    head: Pod
    head_resources: Mapping[str, float]
    groups: tuple[WorkerGroup, ...]
    autoscaling: bool = False
    upscaling_mode: str = "Default"
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    suspend: bool = False
    gang: bool = False  # ray.io/gang-scheduling-enabled under the scheduler-plugins batch scheduler
    #: ``ray.io/scheduler-name: volcano``: the Volcano PodGroup's queue (``volcano.sh/queue-name``,
    #: else ``default``); None for no Volcano gang
    volcano_queue: str | None = None


@dataclass
class RayCluster:
    name: str
    namespace: str
    spec: RayClusterSpec
    created: Created
    demand: tuple[RayDemand, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def template(self) -> Pod:
        return self.spec.head


def _round_up(value: object) -> float:
    return float(math.ceil(parse_quantity(value)))


def _mapping(value: object) -> dict[str, object]:
    return {str(k): v for k, v in value.items() if v is not None} if isinstance(value, dict) else {}


def ray_resources(manifest: ManifestReader, at: str) -> dict[str, float]:
    """A group's Ray resources as the autoscaler derives them (``_get_ray_resources_from_group_spec``):
    ``rayStartParams`` first, then the group's ``resources``, then the Ray container's limits, then its
    requests, rounded up. An amount that is not a quantity is an error at its field (the container's
    own are the pod template's errors already) and is left out."""
    params = _mapping(manifest.value(f"{at}.rayStartParams"))
    own = _mapping(manifest.value(f"{at}.resources"))
    containers = manifest.value(f"{at}.template.spec.containers")
    first = _mapping(containers[0] if isinstance(containers, list) and containers else None)
    resources = _mapping(first.get("resources"))
    limits, requests = _mapping(resources.get("limits")), _mapping(resources.get("requests"))

    def amount(values: dict[str, object], key: str, where: str | None) -> float | None:
        try:
            return _round_up(values[key])
        except QuantityError as exc:
            if where is not None:
                manifest.error(f"{at}.{where}.{key}", str(exc))
            return None

    out: dict[str, float] = {}
    for ray, param, k8s in (("CPU", "num-cpus", "cpu"), ("memory", "memory", "memory")):
        given: float | None = None
        if param in params:
            given = amount(params, param, "rayStartParams")
        elif ray in own:
            given = amount(own, ray, "resources")
        elif k8s in limits or k8s in requests:
            given = amount(limits if k8s in limits else requests, k8s, None)
        if given is not None:
            out[ray] = given
    gpu: float | None = None
    if "num-gpus" in params:
        gpu = amount(params, "num-gpus", "rayStartParams")
    elif "GPU" in own:
        gpu = amount(own, "GPU", "resources")
    else:
        named = next(((v, k) for v in (limits, requests) for k in v if k.endswith("gpu")), None)
        gpu = amount(*named, None) if named is not None else None
    if gpu is not None and gpu > 0:
        out["GPU"] = gpu
    for key in own:
        if key not in ("CPU", "GPU", "memory") and (custom := amount(own, key, "resources")) is not None:
            out[key] = custom
    return out


def _flag(manifest: ManifestReader, path: str) -> bool:
    value = manifest.value(path)
    if value is not None and not isinstance(value, bool):
        manifest.error(path, invalid(value, "must be a boolean"))
    return value is True


def read_cluster_spec(manifest: ManifestReader, prefix: str = "") -> tuple[RayClusterSpec, Created]:
    """A RayCluster spec at ``spec.<prefix>`` (``""`` for a RayCluster, ``rayClusterSpec.`` for a
    RayJob's), defaulted and validated as the operator does (``utils/validation.go``)."""
    manifest.value(f"{prefix}rayVersion")
    manifest.unmodelled([prefix + f for f in _UNMODELLED])
    head_at = f"{prefix}headGroupSpec"
    if not manifest.value(f"{head_at}.template.spec.containers"):
        manifest.error(
            f"{head_at}.template.spec.containers", "headGroupSpec should have at least one container"
        )
    head, created = manifest.template(f"{head_at}.template", ("Always", "OnFailure", "Never"))
    autoscaling = _flag(manifest, f"{prefix}enableInTreeAutoscaling")
    options = manifest.value(f"{prefix}autoscalerOptions")
    options = options if isinstance(options, dict) else {}
    mode = options.get("upscalingMode") or "Default"
    if mode not in UPSCALING_MODES:
        manifest.error(f"{prefix}autoscalerOptions.upscalingMode", unsupported(mode, UPSCALING_MODES))
    idle = options.get("idleTimeoutSeconds")
    if isinstance(idle, int) and idle < 0:
        detail = f"autoscalerOptions.idleTimeoutSeconds must be non-negative, got {idle}"
        manifest.error(f"{prefix}autoscalerOptions.idleTimeoutSeconds", invalid(idle, detail))
    rest = [f for f in options if f not in ("upscalingMode", "idleTimeoutSeconds", "version")]
    manifest.unmodelled([f"{prefix}autoscalerOptions.{f}" for f in rest])

    groups = []
    specs = manifest.value(f"{prefix}workerGroupSpecs")
    names: set[str] = set()
    for i, raw in enumerate(specs if isinstance(specs, list) else []):
        at = f"{prefix}workerGroupSpecs[{i}]"
        name = str(raw.get("groupName") or "") if isinstance(raw, dict) else ""
        if not name or name in names:
            manifest.error(
                f"{at}.groupName", invalid(name, "worker group names must be non-empty and unique")
            )
        names.add(name)
        if not manifest.value(f"{at}.template.spec.containers"):
            manifest.error(
                f"{at}.template.spec.containers", "workerGroupSpec should have at least one container"
            )
        low = manifest.count(f"{at}.minReplicas", 0)
        high = manifest.count(f"{at}.maxReplicas", MAX_REPLICAS)
        if low > high:
            detail = f"worker group {name} has minReplicas {low} greater than maxReplicas {high}"
            manifest.error(f"{at}.minReplicas", invalid(low, detail))
        replicas = min(max(manifest.count(f"{at}.replicas", low), low), high)
        hosts = max(1, manifest.count(f"{at}.numOfHosts", 1))
        suspend = _flag(manifest, f"{at}.suspend")
        if suspend and autoscaling:
            manifest.error(
                f"{at}.suspend", f"worker group {name} cannot be suspended with Autoscaler enabled"
            )
        timeout = manifest.value(f"{at}.idleTimeoutSeconds")
        template, _ = manifest.template(f"{at}.template", ("Always", "OnFailure", "Never"))
        manifest.unmodelled([f"{at}.scaleStrategy", f"{at}.labels", f"{at}.priority"])
        groups.append(
            WorkerGroup(
                name,
                replicas,
                low,
                high,
                hosts,
                template,
                ray_resources(manifest, at),
                suspend,
                float(timeout) if isinstance(timeout, int) else None,
            )
        )
    scheduler = manifest.labels.get(SCHEDULER_NAME_LABEL)
    volcano_queue = manifest.labels.get(VOLCANO_QUEUE_LABEL) or "default" if scheduler == "volcano" else None
    others = [*_OTHER_SCHEDULER_LABELS, *((SCHEDULER_NAME_LABEL,) if scheduler != "volcano" else ())]
    for label in others:
        if label in manifest.labels:
            manifest.unmodelled_label(label, note="YuniKorn's and KAI's gangs are not modelled")
    spec = RayClusterSpec(
        head,
        ray_resources(manifest, head_at),
        tuple(groups),
        autoscaling,
        str(mode),
        float(idle) if isinstance(idle, int) and idle >= 0 else DEFAULT_IDLE_TIMEOUT_S,
        _flag(manifest, f"{prefix}suspend"),
        GANG_LABEL in manifest.labels,
        volcano_queue,
    )
    return spec, created


def read_ray_cluster(manifest: ManifestReader) -> RayCluster:
    """A ``ray.io/v1`` RayCluster."""
    spec, created = read_cluster_spec(manifest)
    demand = manifest.annotation(RAY_DEMAND)
    return RayCluster(
        manifest.name, manifest.namespace, spec, created, demand if isinstance(demand, tuple) else ()
    )


class PodView(Protocol):
    """What the operator reads of one of its pods (``control.port.PodStatus`` has it)."""

    @property
    def phase(self) -> str: ...
    @property
    def ready(self) -> bool: ...


@dataclass
class ClusterPods:
    """The operator's reconcile of one RayCluster's pods (``reconcilePods``), for a RayCluster and for
    the cluster a RayJob creates: ``owner`` is what its pods name as their owner."""

    name: str
    namespace: str
    spec: RayClusterSpec
    owner: OwnerRef
    replicas: dict[str, int] = field(default_factory=dict)  # group -> replicas, as the autoscaler sets them
    active: dict[str, str] = field(default_factory=dict)  # pod key -> group (HEAD_GROUP for the head)
    names: set[str] = field(default_factory=set)
    recreations: int = 0
    deleted: bool = False  # the RayCluster is gone: nothing more is created
    #: the object the Volcano PodGroup is named after (``getAppPodGroupName``: the RayJob that made
    #: the cluster, else the cluster)
    app: str = ""

    def __post_init__(self) -> None:
        self.replicas = {g.name: g.replicas for g in self.spec.groups}

    def desired(self, group: WorkerGroup) -> int:
        """``GetWorkerGroupDesiredReplicas``: replicas within min and max, times numOfHosts."""
        if group.suspend:
            return 0
        return (
            min(max(self.replicas[group.name], group.min_replicas), group.max_replicas) * group.num_of_hosts
        )

    def _pod(self, group: WorkerGroup | None) -> Pod:
        node_type = "head" if group is None else "worker"
        group_name = HEAD_GROUP if group is None else group.name
        base = f"{self.name}-head-" if group is None else f"{self.name}-{group.name}-worker-"
        ordinal = len(self.names)
        name = unique_name(base, f"{self.namespace}/{self.name}/{ordinal}", self.names)
        self.names.add(name)
        labels = {
            IS_RAY_NODE_LABEL: "yes",
            CLUSTER_LABEL: self.name,
            NODE_TYPE_LABEL: node_type,
            GROUP_LABEL: group_name,
            IDENTIFIER_LABEL: f"{self.name}-{node_type}",
            APP_NAME_LABEL: APP_NAME,
            CREATED_BY_LABEL: CREATED_BY,
        }
        template = self.spec.head if group is None else group.template
        if self.spec.gang:
            labels[POD_GROUP_LABEL] = self.name
            template = replace(template, scheduler_name=GANG_SCHEDULER)
        elif self.spec.volcano_queue is not None:  # addSchedulerName, populateAnnotations
            volcano = {VOLCANO_GROUP_ANNOTATION: self.volcano_group, VOLCANO_TASK_SPEC: group_name}
            template = replace(
                template, scheduler_name="volcano", annotations={**template.annotations, **volcano}
            )
        pod = template.stamped(name, self.owner, labels, namespace=self.namespace)
        self.active[pod.key] = group_name
        return pod

    def wanted(self) -> list[Pod]:
        if self.spec.suspend or self.deleted:
            return []
        out = []
        if HEAD_GROUP not in self.active.values():
            out.append(self._pod(None))
        for group in self.spec.groups:
            have = sum(1 for g in self.active.values() if g == group.name)
            out += [self._pod(group) for _ in range(self.desired(group) - have)]
        return out

    def total_desired(self) -> int:
        return sum(self.desired(g) for g in self.spec.groups)

    @property
    def volcano_group(self) -> str:
        return f"ray-{self.app or self.name}-pg"

    def pod_group(self, created: Created) -> PodGroup | None:
        """``createPodGroup``: minMember = the desired workers + 1 (the head); Volcano's with the
        autoscaler: the minimum workers + 1 (``calculatePodGroupParams``)."""
        spec = self.spec
        if spec.gang:
            return PodGroup(self.name, self.namespace, self.total_desired() + 1, None, created)
        if spec.volcano_queue is None:
            return None
        workers = self.total_desired()
        if spec.autoscaling:
            workers = sum(0 if g.suspend else g.min_replicas * g.num_of_hosts for g in spec.groups)
        return PodGroup(self.volcano_group, self.namespace, workers + 1, None, created, spec.volcano_queue)

    def pod_sets(self) -> list[PodSet]:
        sets = [PodSet("head", 1, self.spec.head, labelled(NODE_TYPE_LABEL, "head"))]
        workers = labelled(NODE_TYPE_LABEL, "worker")
        return sets + [
            PodSet(g.name, self.desired(g), g.template, workers + labelled(GROUP_LABEL, g.name))
            for g in self.spec.groups
        ]

    def ready(self, pods: Mapping[str, PodView]) -> bool:
        """``calculateStatus``'s ``Ready``: the head and every desired worker exist, Running and ready."""
        if len(self.active) != self.total_desired() + 1:
            return False
        return all(k in pods and pods[k].phase == "Running" and pods[k].ready for k in self.active)

    def finished(self, pod: Pod) -> bool:
        """A pod ended: ``shouldDeletePod`` deletes it and the next reconcile creates its replacement."""
        if self.active.pop(pod.key, None) is None:
            return False
        self.recreations += 1
        return not self.deleted

    def forget(self, key: str) -> None:
        """One of its pods is deleted on purpose (``workersToDelete``, the cluster's deletion)."""
        self.active.pop(key, None)

    def scale(self, group: str, delta: int, remove: Sequence[str] = ()) -> None:
        """The autoscaler's patch: ``replicas`` of ``group`` changed by ``delta`` pods (whole replicas of
        ``numOfHosts``), with the workers it deletes."""
        spec = next(g for g in self.spec.groups if g.name == group)
        self.replicas[group] = max(0, self.replicas[group] + delta // spec.num_of_hosts)
        for key in remove:
            self.forget(key)

    def replica_bounds(self) -> list[ReplicaBound]:
        """``kind.BoundsReplicas``: each worker group's workers at most what KubeRay wants of it
        (``desired``: ``replicas`` clamped to ``minReplicas``/``maxReplicas``, times ``numOfHosts``). The
        ``replicas`` field itself may pass ``maxReplicas`` (the Ray autoscaler launches for a worker that
        died before KubeRay made it again); the clamp keeps the pods within it."""
        return [
            ReplicaBound(
                f"worker group {g.name} pods",
                sum(1 for k in self.active.values() if k == g.name),
                0,
                self.desired(g),
            )
            for g in self.spec.groups
        ]

    def delete(self) -> list[str]:
        """The RayCluster is deleted: its pods go (SIGTERM), nothing is created again."""
        self.deleted = True
        keys = sorted(self.active)
        self.active.clear()
        return keys

    def retry_delay_s(self) -> float:
        return work_queue_delay_s(self.recreations - 1)


@register_kind(RayCluster, api=API, read=read_ray_cluster, annotations=frozenset({RAY_DEMAND}))
class RayClusterController:
    kind: ClassVar[str] = "RayCluster"
    per_node: ClassVar[bool] = False

    def __init__(self, cluster: RayCluster) -> None:
        self.cluster = cluster
        self.pods = ClusterPods(
            cluster.name, cluster.namespace, cluster.spec, OwnerRef(self.kind, cluster.name)
        )
        self.demand = cluster.demand

    @property
    def key(self) -> str:
        return self.cluster.key

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        return self.pods.wanted()

    def pod_groups(self) -> list[PodGroup]:
        group = self.pods.pod_group(self.cluster.created)
        return [] if group is None else [group]

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        return self.pods.finished(pod)

    def retry_delay_s(self) -> float:
        return self.pods.retry_delay_s()

    def node_added(self, node: Node) -> list[Pod]:
        return []

    def suspended(self, pod: Pod) -> None:
        self.pods.forget(pod.key)

    def replica_bounds(self) -> list[ReplicaBound]:
        return self.pods.replica_bounds()

    # Kueue's RayCluster integration
    @property
    def done(self) -> bool:
        return False

    @property
    def active(self) -> list[str]:
        return sorted(self.pods.active)

    def pod_sets(self) -> list[PodSet]:
        return self.pods.pod_sets()
