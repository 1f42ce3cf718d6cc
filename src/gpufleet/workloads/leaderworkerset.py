"""LeaderWorkerSet (``leaderworkerset.x-k8s.io/v1``, kubernetes-sigs/lws): ``replicas`` groups of
``size`` pods, a leader and ``size - 1`` workers, driven as lws's two controllers drive them
(``pkg/controllers/leaderworkerset_controller.go``, ``pkg/controllers/pod_controller.go``) with its
webhooks' defaults, validation and pod labels (``pkg/webhooks``).

Read as the webhook reads it (``LeaderWorkerSetWebhook.Default`` / ``generalValidate``):

- ``replicas`` defaults to 1 (0 to 1000000); ``leaderWorkerTemplate.size`` to 1 (at least 1);
  ``restartPolicy`` to ``RecreateGroupOnPodRestart`` (``Default`` is the deprecated name of ``None``);
  ``startupPolicy`` to ``LeaderCreated``; the name must be a DNS-1035 label (it names a Service).
- ``rolloutStrategy`` (``RollingUpdate``; ``maxUnavailable`` 1 and ``maxSurge`` 0 by default, each an
  int or a percent, not both 0; ``partition`` >= 0) is validated and read: it acts only when the
  templates change (a rolling update, ``rollingUpdateParameters``), which a scenario, written once, does
  not do, so it changes nothing simulated and is no warning.
- ``subGroupPolicy`` is validated (``validateUpdateSubGroupPolicy``) and its labels and exclusive
  placement are modelled (below); ``networkConfig`` (the headless Services) changes nothing scheduled
  and is read silently; ``volumeClaimTemplates`` and ``persistentVolumeClaimRetentionPolicy`` are
  warnings.

Objects and names (``constructLeaderStatefulSetApplyConfiguration``,
``constructWorkerStatefulSetApplyConfiguration``, the pod webhook's ``Default``): the leader
StatefulSet ``<lws>`` has the leaders ``<lws>-<group>``; each leader owns the worker StatefulSet
``<lws>-<group>`` whose pods are ``<lws>-<group>-<worker>``, worker 1 to ``size - 1`` (ordinals start
at 1). Pods carry ``leaderworkerset.sigs.k8s.io/{name,group-index,worker-index,group-key,
template-revision-hash}`` (``group-key``: SHA-1 of ``<namespace>/<leader name>``) and the annotation
``leaderworkerset.sigs.k8s.io/size`` (workers also ``leader-name``). Leaders are owned by the
StatefulSet ``<lws>``, workers by ``<lws>-<group>``; as StatefulSet pods, each also carries the
StatefulSet controller's ``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index``
(``workloads.stateful_pods``). The revision hash upstream is the FNV hash of
a ControllerRevision's Go dump; here it is the FNV-32a of the ``leaderWorkerTemplate`` as JSON,
encoded the same way (``rand.SafeEncodeString``): the same shape, not the same value.

Behaviour:

- Workers are created with their leader (``LeaderCreated``), or once it is Ready (``LeaderReady``).
- ``RecreateGroupOnPodRestart``: a pod of a group whose container the kubelet restarts (its pods are
  under ``restartPolicy: Always``: a process that exits, 0 too, a failed liveness probe; upstream's
  ``ContainerRestarted``) or that ends (is evicted or preempted: a deletion, ``PodDeleted``), as
  ``handleRestartPolicy`` reads it, deletes the group's leader, and with it (the worker
  StatefulSet is the leader's) every worker; once they are gone, the group is created again under the
  same names. ``RecreateGroupAfterStart`` (or the annotation
  ``leaderworkerset.sigs.k8s.io/experimental-recreate-group-after-start``) does so only when no pod
  of the group is Pending (``pendingPodsInGroup``; here: every pod exists and has been bound).
  ``None``: a restarted container restarts in place, and only a pod that ended is created again -- but a
  leader that ends takes its workers with it under every policy (the garbage collector deletes the
  worker StatefulSet it owns).
- Exclusive placement (annotation ``leaderworkerset.sigs.k8s.io/exclusive-topology: <key>``): the
  leader gets the pod webhook's required affinity to its own group (``group-key In [<key>]``) and
  anti-affinity to every other group (``group-key Exists, NotIn [<key>]``) on that topology key
  (``SetExclusiveAffinities``); its workers are created once it is scheduled, with a nodeSelector on
  the leader's node's value of the key (``setNodeSelectorForWorkerPods``). With ``subGroupPolicy``,
  ``leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology`` does the same per subgroup
  (``subgroup-index``, ``subgroup-key`` labels; ``getSubGroupIndex``).
- A gang: lws makes a Volcano PodGroup per group only when its controller is deployed with
  ``gangSchedulingManagement.schedulerProvider: volcano`` (a setting of the controller, not of the
  object), not modelled; a ``scheduling.x-k8s.io/pod-group`` label the templates carry is kept, so
  the scenario's PodGroup gangs the pods (Coscheduling).
- Scale subresource (``Scalable``): an HPA or a KEDA ScaledObject aimed at ``LeaderWorkerSet/<name>``
  sets ``replicas`` (groups); its selector (``status.hpaPodSelector``) selects the leaders only
  (``worker-index=0``), so an HPA averages the leaders' metrics. Scaling down deletes the highest
  groups whole (the leader StatefulSet's highest ordinals, their workers with them), reason
  ``ScaledDown``. A Traffic aimed at the LWS is served by its groups whose pods all work, and its
  per-pod metrics are the leaders'.
- Kueue (``kueue.x-k8s.io/queue-name`` on the LWS): as Kueue's integration (``pkg/controller/jobs/
  leaderworkerset``), each group is a workload of its own (``<lws>-<group>``), admitted on its own,
  so a LeaderWorkerSet grows and shrinks group by group: pod sets ``leader`` (1) and ``worker``
  (``size - 1``) with a leaderTemplate, else ``main`` (``size``). A group scaled away is done and its
  quota is released once its pods are gone. The LeaderWorkerSet itself is never ``done``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_affinity import PodAffinity, PodAffinityTerm
from gpufleet.model.workloads import Created, PodGroup, PodSet, labelled
from gpufleet.workloads import register_kind
from gpufleet.workloads.kind import CONTROLLER_RESTART_POLICIES, ManifestReader, ReplicaBound
from gpufleet.workloads.pytorchjob import invalid, unsupported
from gpufleet.workloads.stateful_pods import stateful_pod

API = ("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet")
PREFIX = "leaderworkerset.sigs.k8s.io/"
EXCLUSIVE_TOPOLOGY = PREFIX + "exclusive-topology"
SUBGROUP_EXCLUSIVE_TOPOLOGY = PREFIX + "subgroup-exclusive-topology"
RECREATE_AFTER_START = PREFIX + "experimental-recreate-group-after-start"
NAME_LABEL = PREFIX + "name"
GROUP_INDEX_LABEL = PREFIX + "group-index"
WORKER_INDEX_LABEL = PREFIX + "worker-index"
GROUP_KEY_LABEL = PREFIX + "group-key"
REVISION_LABEL = PREFIX + "template-revision-hash"
SUBGROUP_INDEX_LABEL = PREFIX + "subgroup-index"
SUBGROUP_KEY_LABEL = PREFIX + "subgroup-key"
SIZE_ANNOTATION = PREFIX + "size"
LEADER_NAME_ANNOTATION = PREFIX + "leader-name"
SUBGROUP_SIZE_ANNOTATION = PREFIX + "subgroup-size"
SUBGROUP_TYPE_ANNOTATION = PREFIX + "subgroup-policy-type"

RECREATE_ON_RESTART, RECREATE_AFTER_START_POLICY, NONE = (
    "RecreateGroupOnPodRestart",
    "RecreateGroupAfterStart",
    "None",
)
RESTART_POLICIES = ("Default", RECREATE_ON_RESTART, RECREATE_AFTER_START_POLICY, NONE)
LEADER_CREATED, LEADER_READY = "LeaderCreated", "LeaderReady"
STARTUP_POLICIES = (LEADER_CREATED, LEADER_READY)
LEADER_WORKER, LEADER_EXCLUDED = "LeaderWorker", "LeaderExcluded"
SUBGROUP_TYPES = (LEADER_WORKER, LEADER_EXCLUDED)
SUBDOMAIN_POLICIES = ("Shared", "UniquePerReplica")
MAX_REPLICAS = 1_000_000
MAX_INT32 = 2**31 - 1
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_PERCENT = re.compile(r"[0-9]+%")
_PERCENT_MESSAGE = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
    "regex used for validation is '[0-9]+%')"
)
#: ``k8s.io/apimachinery/pkg/util/rand`` ``alphanums``, as ``SafeEncodeString`` maps bytes
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


@dataclass
class LeaderWorkerSet:
    name: str
    namespace: str
    leader_template: Pod  # the worker template when there is no leaderTemplate
    worker_template: Pod
    created: Created
    replicas: int = 1
    size: int = 1
    restart_policy: str = RECREATE_ON_RESTART
    startup_policy: str = LEADER_CREATED
    revision: str = ""
    exclusive_topology: str | None = None
    subgroup_size: int | None = None
    subgroup_type: str = LEADER_WORKER
    subgroup_exclusive_topology: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def template(self) -> Pod:
        return self.leader_template


def sha1(text: str) -> str:
    """``utils.Sha1Hash``."""
    return hashlib.sha1(text.encode()).hexdigest()


def revision_hash(template: object) -> str:
    """FNV-32a of the template as JSON, as ``rand.SafeEncodeString`` encodes its decimal value."""
    value = 0x811C9DC5
    for byte in json.dumps(template, sort_keys=True, default=str).encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHANUMS[b % len(_ALPHANUMS)] for b in str(value).encode())


def scaled_value(value: object, total: int, round_up: bool) -> int | None:
    """``intstr.GetScaledValueFromIntOrPercent``; None for a value that is neither."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _PERCENT.fullmatch(value):
        scaled = int(value[:-1]) * total
        return -(-scaled // 100) if round_up else scaled // 100
    return None


def subgroup_index(size: int, subgroup_size: int, worker: int) -> int:
    """``getSubGroupIndex``: with ``size - 1`` divisible (and ``size`` not), the leader is the extra pod
    of the first subgroup."""
    if (size - 1) % subgroup_size == 0 and size % subgroup_size != 0:
        return (worker - 1) // subgroup_size
    return worker // subgroup_size


def _int_or_percent(manifest: ManifestReader, path: str, value: object) -> None:
    """``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``."""
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            manifest.error(path, invalid(value, _PERCENT_MESSAGE))
        elif int(value[:-1]) > 100:
            manifest.error(path, invalid(value, "must not be greater than 100%"))
    elif not isinstance(value, int) or isinstance(value, bool):
        manifest.error(path, invalid(value, "must be an integer or percentage (e.g '5%')"))
    elif value < 0:
        manifest.error(path, invalid(value, "must be greater than or equal to 0"))


def _enum(manifest: ManifestReader, path: str, allowed: tuple[str, ...], default: str) -> str:
    value = manifest.value(path)
    if value is None:
        return default
    if value not in allowed:
        manifest.error(path, unsupported(value, allowed))
        return default
    return str(value)


def _rollout(manifest: ManifestReader, replicas: int) -> None:
    """``rolloutStrategy``, defaulted and validated (``Default``, ``generalValidate``); read only."""
    _enum(manifest, "rolloutStrategy.type", ("RollingUpdate",), "RollingUpdate")
    config = manifest.value("rolloutStrategy.rollingUpdateConfiguration")
    config = config if isinstance(config, dict) else {}
    at = "rolloutStrategy.rollingUpdateConfiguration"
    unavailable, surge = config.get("maxUnavailable", 1), config.get("maxSurge", 0)
    _int_or_percent(manifest, f"{at}.maxUnavailable", unavailable)
    _int_or_percent(manifest, f"{at}.maxSurge", surge)
    partition = config.get("partition", 0)
    if not isinstance(partition, int) or partition < 0:
        manifest.error(f"{at}.partition", invalid(partition, "must be greater than or equal to 0"))
    if (
        replicas
        and scaled_value(unavailable, replicas, False) == 0
        and scaled_value(surge, replicas, True) == 0
    ):
        manifest.error(f"{at}.maxUnavailable", invalid(unavailable, "must not be 0 when `maxSurge` is 0"))


def _subgroups(manifest: ManifestReader, size: int) -> tuple[int | None, str]:
    """``subGroupPolicy`` (``validateUpdateSubGroupPolicy``): its size, or None, and its type."""
    policy = manifest.value("leaderWorkerTemplate.subGroupPolicy")
    if policy is None:
        if SUBGROUP_EXCLUSIVE_TOPOLOGY in manifest.annotations:
            manifest.metadata_error(
                f"annotations.{SUBGROUP_EXCLUSIVE_TOPOLOGY}",
                invalid(
                    manifest.annotations[SUBGROUP_EXCLUSIVE_TOPOLOGY],
                    "cannot have subgroup-exclusive-topology without subGroupSize set",
                ),
            )
        return None, LEADER_WORKER
    at = "leaderWorkerTemplate.subGroupPolicy"
    kind = _enum(manifest, f"{at}.subGroupPolicyType", SUBGROUP_TYPES, LEADER_WORKER)
    sub = manifest.value(f"{at}.subGroupSize")
    path = f"{at}.subGroupSize"
    if not isinstance(sub, int) or isinstance(sub, bool) or sub < 1:
        manifest.error(path, invalid(sub, "subGroupSize must be equal or greater than 1"))
        return None, kind
    if size % sub != 0 and (size - 1) % sub != 0:
        manifest.error(path, invalid(sub, "size or size - 1 must be divisible by subGroupSize"))
    if size < sub:
        manifest.error(path, invalid(sub, "subGroupSize cannot be larger than size"))
    if kind == LEADER_EXCLUDED and (size - 1) % sub != 0:
        manifest.error(
            path, invalid(sub, "size-1 must be divisible by subGroupSize when using LeaderExcluded")
        )
    return sub, kind


def read_leader_worker_set(manifest: ManifestReader) -> LeaderWorkerSet:
    """A ``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet, defaulted and validated as lws's webhook does."""
    if not _DNS1035.fullmatch(manifest.name) or len(manifest.name) > 63:
        manifest.metadata_error("name", invalid(manifest.name, _DNS1035_MESSAGE))
    replicas = manifest.count("replicas", 1)
    if replicas > MAX_REPLICAS:
        manifest.error("replicas", invalid(replicas, "replicas must be equal or less than 1000000"))
    size = manifest.value("leaderWorkerTemplate.size")
    if size is None:
        size = 1
    elif not isinstance(size, int) or isinstance(size, bool) or size < 1:
        manifest.error("leaderWorkerTemplate.size", invalid(size, "size must be equal or greater than 1"))
        size = 1
    if replicas * size > MAX_INT32:
        detail = f"the product of replicas and worker replicas must not exceed {MAX_INT32}"
        manifest.error("replicas", invalid(replicas, detail))
    policy = _enum(manifest, "leaderWorkerTemplate.restartPolicy", RESTART_POLICIES, RECREATE_ON_RESTART)
    policy = NONE if policy == "Default" else policy  # the deprecated name
    if RECREATE_AFTER_START in manifest.annotations and policy == RECREATE_ON_RESTART:
        policy = RECREATE_AFTER_START_POLICY
    startup = _enum(manifest, "startupPolicy", STARTUP_POLICIES, LEADER_CREATED)
    _rollout(manifest, replicas)
    _enum(manifest, "networkConfig.subdomainPolicy", SUBDOMAIN_POLICIES, "Shared")  # headless Services
    subgroup_size, subgroup_type = _subgroups(manifest, size)
    manifest.unmodelled(
        [
            "leaderWorkerTemplate.volumeClaimTemplates",
            "leaderWorkerTemplate.persistentVolumeClaimRetentionPolicy",
        ]
    )

    worker, created = manifest.template("leaderWorkerTemplate.workerTemplate", CONTROLLER_RESTART_POLICIES)
    leader = worker
    if manifest.value("leaderWorkerTemplate.leaderTemplate") is not None:
        leader, _ = manifest.template("leaderWorkerTemplate.leaderTemplate", CONTROLLER_RESTART_POLICIES)
    exclusive = manifest.annotations.get(EXCLUSIVE_TOPOLOGY) or None
    sub_exclusive = manifest.annotations.get(SUBGROUP_EXCLUSIVE_TOPOLOGY) or None
    return LeaderWorkerSet(
        manifest.name,
        manifest.namespace,
        leader,
        worker,
        created,
        replicas,
        size,
        policy,
        startup,
        revision_hash(manifest.value("leaderWorkerTemplate")),
        exclusive,
        subgroup_size,
        subgroup_type,
        sub_exclusive if subgroup_size is not None else None,
    )


def exclusive_affinity(pod: Pod, key: str, topology: str, label: str) -> Pod:
    """``SetExclusiveAffinities``: required affinity to the pods whose ``label`` is ``key`` and
    anti-affinity to those with another value, on ``topology``."""
    together = PodAffinityTerm((Requirement(label, "In", (key,)),), topology)
    apart = PodAffinityTerm((Requirement(label, "Exists"), Requirement(label, "NotIn", (key,))), topology)
    have = pod.pod_affinity or PodAffinity()
    if any(t.topology_key == topology for t in have.required) and any(
        t.topology_key == topology for t in have.anti_required
    ):
        return pod  # exclusiveAffinityApplied
    affinity = replace(have, required=(*have.required, together), anti_required=(*have.anti_required, apart))
    return replace(pod, pod_affinity=affinity)


@dataclass
class _Group:
    """One group's pods as the controllers see them."""

    leader: str | None = None  # the leader's key while it exists
    workers: dict[str, int] = field(default_factory=dict)  # worker key -> worker index
    workers_created: bool = False  # its worker StatefulSet exists
    leader_ready: bool = False
    leader_node: Node | None = None
    bound: set[str] = field(default_factory=set)  # its pods past Pending

    def pods(self) -> list[str]:
        return ([self.leader] if self.leader else []) + sorted(self.workers)


@register_kind(LeaderWorkerSet, api=API, read=read_leader_worker_set)
class LeaderWorkerSetController:
    """lws's LeaderWorkerSet and pod controllers for one LeaderWorkerSet: ``replicas`` groups of
    ``size`` pods, each group recreated whole (its restart policy permitting) when one of its pods
    ends."""

    kind: ClassVar[str] = "LeaderWorkerSet"
    api_version: ClassVar[str] = "/".join(API[:2])
    per_node: ClassVar[bool] = False

    def __init__(self, lws: LeaderWorkerSet) -> None:
        self.lws = lws
        self._replicas = lws.replicas
        self.groups: dict[int, _Group] = {}
        self.leaving: dict[str, int] = {}  # pods deleted, not yet gone -> their group
        self._doomed: list[tuple[str, str]] = []
        self.recreated: dict[int, int] = {}  # group -> times it was recreated whole

    @property
    def key(self) -> str:
        return self.lws.key

    # -- pods ------------------------------------------------------------------------------
    def _labels(self, group: int, leader_name: str) -> dict[str, str]:
        lws = self.lws
        return {
            NAME_LABEL: lws.name,
            GROUP_INDEX_LABEL: str(group),
            GROUP_KEY_LABEL: sha1(f"{lws.namespace}/{leader_name}"),
            REVISION_LABEL: lws.revision,
        }

    def _subgroup(self, pod: Pod, leader_name: str, worker: int) -> Pod:
        """The pod webhook's subgroup labels (and exclusive placement), for a pod in a subgroup."""
        lws = self.lws
        if lws.subgroup_size is None or (worker == 0 and lws.subgroup_type == LEADER_EXCLUDED):
            return pod
        index = str(0 if worker == 0 else subgroup_index(lws.size, lws.subgroup_size, worker))
        key = sha1(f"{leader_name}/{index}")
        pod.labels.update({SUBGROUP_INDEX_LABEL: index, SUBGROUP_KEY_LABEL: key})
        pod.annotations.update({SUBGROUP_SIZE_ANNOTATION: str(lws.subgroup_size)})
        pod.annotations[SUBGROUP_TYPE_ANNOTATION] = lws.subgroup_type
        if lws.subgroup_exclusive_topology is not None:
            return exclusive_affinity(pod, key, lws.subgroup_exclusive_topology, SUBGROUP_KEY_LABEL)
        return pod

    def _annotations(self, pod: Pod) -> None:
        pod.annotations[SIZE_ANNOTATION] = str(self.lws.size)
        if self.lws.exclusive_topology is not None:
            pod.annotations[EXCLUSIVE_TOPOLOGY] = self.lws.exclusive_topology

    def _leader(self, group: int) -> Pod:
        lws = self.lws
        name = f"{lws.name}-{group}"
        labels = {**self._labels(group, name), WORKER_INDEX_LABEL: "0"}
        pod = stateful_pod(lws.leader_template, lws.name, lws.namespace, group, labels)
        self._annotations(pod)
        if lws.exclusive_topology is not None:
            pod = exclusive_affinity(pod, labels[GROUP_KEY_LABEL], lws.exclusive_topology, GROUP_KEY_LABEL)
        return self._subgroup(pod, name, 0)

    def _worker(self, group: int, worker: int, state: _Group) -> Pod:
        lws = self.lws
        leader_name = f"{lws.name}-{group}"
        labels = {**self._labels(group, leader_name), WORKER_INDEX_LABEL: str(worker)}
        pod = stateful_pod(lws.worker_template, leader_name, lws.namespace, worker, labels)
        self._annotations(pod)
        pod.annotations[LEADER_NAME_ANNOTATION] = leader_name
        topology = lws.exclusive_topology
        if topology is not None and state.leader_node is not None:
            pod = replace(
                pod, node_selector={**pod.node_selector, topology: state.leader_node.labels[topology]}
            )
        return self._subgroup(pod, leader_name, worker)

    def _workers_due(self, state: _Group) -> bool:
        """``PodReconciler.Reconcile``: the worker StatefulSet is created once the leader exists (is
        Ready under ``LeaderReady``; is scheduled, on a node with the topology label, under exclusive
        placement); with size 1 there are no workers."""
        lws = self.lws
        if state.workers_created:
            return True
        if lws.size == 1 or state.leader is None:
            return False
        if lws.startup_policy == LEADER_READY and not state.leader_ready:
            return False
        topology = lws.exclusive_topology
        return topology is None or (state.leader_node is not None and topology in state.leader_node.labels)

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        out: list[Pod] = []
        busy = set(self.leaving.values())
        for group in range(self._replicas):
            if group in busy:  # the group's old pods are still going: same names
                continue
            state = self.groups.setdefault(group, _Group())
            if state.leader is None:
                leader = self._leader(group)
                state.leader = leader.key
                out.append(leader)
            if self._workers_due(state):
                state.workers_created = True
                have = set(state.workers.values())
                for worker in range(1, self.lws.size):
                    if worker not in have:
                        pod = self._worker(group, worker, state)
                        state.workers[pod.key] = worker
                        out.append(pod)
        return out

    def pod_groups(self) -> list[PodGroup]:
        return []

    # -- pods that end ---------------------------------------------------------------------
    def _find(self, key: str) -> tuple[int, _Group] | None:
        for group, state in self.groups.items():
            if key == state.leader or key in state.workers:
                return group, state
        return None

    def _delete_group(self, group: int, reason: str) -> None:
        """Every pod of the group goes (its leader, and with it its worker StatefulSet)."""
        state = self.groups.pop(group)
        for key in state.pods():
            self.leaving[key] = group
            self._doomed.append((key, reason))

    def _recreates_group(self, state: _Group) -> bool:
        policy = self.lws.restart_policy
        if policy == NONE:
            return False
        if policy == RECREATE_AFTER_START_POLICY:  # pendingPodsInGroup: not while any is Pending
            pods = state.pods()
            return len(pods) + 1 >= self.lws.size and all(k in state.bound for k in pods)
        return True

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        key = pod.key
        if key in self.leaving:
            group = self.leaving.pop(key)
            return group not in self.leaving.values()  # the last of them: the group comes back
        found = self._find(key)
        if found is None:
            return False
        group, state = found
        if key == state.leader:
            state.leader = None
            self._delete_group(group, "RecreateGroup")  # its workers go with it (garbage collection)
        elif self._recreates_group(state):
            del state.workers[key]
            self._delete_group(group, "RecreateGroup")
        else:
            del state.workers[key]  # the worker StatefulSet creates it again
            state.bound.discard(key)
            return True
        self.recreated[group] = self.recreated.get(group, 0) + 1
        return True

    def restarted(self, pod: Pod) -> None:
        """``kind.CountsRestarts``: ``handleRestartPolicy`` reads ``ContainerRestarted`` (a restart count
        above 0): under ``RecreateGroupOnPodRestart`` (``RecreateGroupAfterStart``: not while a pod of the
        group is Pending) the kubelet's restart of any container of a group deletes its leader, and its
        workers with it; the group comes back once they are gone. Under ``None`` the pod restarts in place."""
        found = self._find(pod.key)
        if found is None or not self._recreates_group(found[1]):
            return
        group = found[0]
        self._delete_group(group, "RecreateGroup")
        self.recreated[group] = self.recreated.get(group, 0) + 1

    def doomed(self) -> list[tuple[str, str]]:
        out, self._doomed = self._doomed, []
        return out

    def suspended(self, pod: Pod) -> None:
        """Kueue took the pod away to admit it again later: created again, not a restart."""
        self.leaving.pop(pod.key, None)
        found = self._find(pod.key)
        if found is None:
            return
        _, state = found
        if pod.key == state.leader:
            state.leader, state.leader_ready, state.leader_node = None, False, None
        else:
            state.workers.pop(pod.key, None)
        state.bound.discard(pod.key)

    def node_added(self, node: Node) -> list[Pod]:
        return []

    # -- pods that progress (kind.WatchesPods) -------------------------------------------------
    def pod_bound(self, pod: Pod, node: Node) -> bool:
        found = self._find(pod.key)
        if found is None:
            return False
        _, state = found
        state.bound.add(pod.key)
        if pod.key != state.leader:
            return False
        state.leader_node = node
        return not state.workers_created and self._workers_due(state)

    def pod_ready(self, pod: Pod) -> bool:
        found = self._find(pod.key)
        if found is None or pod.key != found[1].leader:
            return False
        state = found[1]
        state.leader_ready = True
        return not state.workers_created and self._workers_due(state)

    # -- the scale subresource (kind.Scalable) -------------------------------------------------
    @property
    def replicas(self) -> int:
        return self._replicas

    @property
    def active(self) -> Collection[str]:
        """The leaders (``status.hpaPodSelector``: ``worker-index=0``)."""
        return [s.leader for _, s in sorted(self.groups.items()) if s.leader is not None]

    def scale(self, replicas: int) -> None:
        """The leader StatefulSet's replicas: groups past the new count go whole, highest first."""
        self._replicas = replicas
        for group in sorted((g for g in self.groups if g >= replicas), reverse=True):
            self._delete_group(group, "ScaledDown")

    def replica_bounds(self) -> list[ReplicaBound]:
        """``kind.BoundsReplicas``: groups only of an index below ``replicas`` (the leader StatefulSet's
        ordinals), each of at most ``size`` pods."""
        top = max(self.groups, default=-1) + 1
        out = [ReplicaBound("groups", len(self.groups), 0, self._replicas)]
        out.append(ReplicaBound("groups up to the highest index", top, 0, self._replicas))
        size = self.lws.size
        return out + [
            ReplicaBound(f"pods of group {g}", len(s.pods()), 0, size) for g, s in sorted(self.groups.items())
        ]

    def serving(self, working: Callable[[str], bool]) -> int:
        """Groups whose every pod exists and works."""
        size = self.lws.size
        return sum(
            1
            for state in self.groups.values()
            if len(pods := state.pods()) == size and all(working(k) for k in pods)
        )

    # -- Kueue (control.port.QueuedWorkload, QueuedInParts) ----------------------------------
    @property
    def done(self) -> bool:
        """A LeaderWorkerSet serves until it is deleted."""
        return False

    def pod_sets(self) -> list[PodSet]:
        """Every group's pod sets (each group is admitted as a workload of its own: ``queued_part``)."""
        return [replace(s, count=s.count * self._replicas) for s in group_pod_sets(self.lws)]

    def queued_part(self, pod: Pod) -> tuple[str, GroupWorkload] | None:
        """Kueue's LeaderWorkerSet integration: each group is a workload (``filterWorkloads``; named
        ``<lws>-<group>`` as ``workloadname.Get`` names it, before its hash)."""
        group = pod.labels.get(GROUP_INDEX_LABEL)
        if group is None:
            return None
        return f"{self.kind}/{self.lws.namespace}/{self.lws.name}-{group}", GroupWorkload(self, int(group))


def group_pod_sets(lws: LeaderWorkerSet) -> list[PodSet]:
    """Kueue's ``podSets`` of one group: ``leader`` (1) and ``worker`` (size - 1) with a leaderTemplate,
    else one ``main`` set of ``size`` pods."""
    if lws.leader_template is lws.worker_template:
        return [PodSet("main", lws.size, lws.worker_template)]
    sets = [PodSet("leader", 1, lws.leader_template, labelled(WORKER_INDEX_LABEL, "0"))]
    if lws.size > 1:
        workers = (Requirement(WORKER_INDEX_LABEL, "NotIn", ("0",)),)
        sets.append(PodSet("worker", lws.size - 1, lws.worker_template, workers))
    return sets


@dataclass(frozen=True)
class GroupWorkload:
    """One group as Kueue admits it: done once scaled away (its Workload loses its owner,
    ``removeOwnerReference``), its pods the group's."""

    controller: LeaderWorkerSetController
    group: int

    @property
    def done(self) -> bool:
        return self.group >= self.controller.replicas

    @property
    def active(self) -> Collection[str]:
        state = self.controller.groups.get(self.group)
        leaving = [k for k, g in self.controller.leaving.items() if g == self.group]
        return (state.pods() if state is not None else []) + leaving

    def pod_sets(self) -> list[PodSet]:
        return group_pod_sets(self.controller.lws)
