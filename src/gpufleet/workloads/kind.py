"""The workload-kind protocol: how a kind of workload expands into pods and gangs, how its
controller reacts when one of its pods ends, and how its manifest is read, so that the simulator,
explain, the manifest reader (and later the live side) handle every kind the same way.

A kind is one module of ``gpufleet.workloads`` that defines its controller and registers it with
``@register_kind(<model class>)``. The controller is made from the workload object, says which
pods it wants now (``wanted``, given the nodes that exist, for kinds that place a pod per node)
and which PodGroups (gangs) they form (``pod_groups``), and learns when one of its pods ended
(``finished``; a ``BacksOff`` controller then says how long it waits before it creates again)
or was taken away by a queueing system to be created again later (``suspended``),
and which pods it wants on a node that joins (``node_added``). A controller of a kind a cluster
snapshot holds also adopts the pods it already made there (``Adopts``). A ``WatchesPods`` controller
also hears when its pods are bound and start, and a ``DeletesPods`` one deletes pods it made
(``unwanted``: a JobSet's restart).

A kind the manifest reader does not know already (anything but Jobs, Deployments and DaemonSets)
brings its reader too: ``@register_kind(<model class>, api=(group, version, kind), read=...)``.
``read`` builds the workload object from a ``ManifestReader``, which reads pod templates and
counts as for every workload and reports problems at a field path (errors end the run with exit
status 2; unmodelled fields are warnings).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

from gpufleet.model.node import Node
from gpufleet.model.owned import Owned
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import Created, PodGroup, Workload

#: a kind's ``apiVersion`` group, version and ``kind``
GVK = tuple[str, str, str]

#: the pod restart policies a controller that replaces its pods accepts, and one whose pods complete
CONTROLLER_RESTART_POLICIES = ("Always",)
COMPLETING_RESTART_POLICIES = ("OnFailure", "Never")


class WorkloadController(Protocol):
    #: the ``ownerReferences`` kind its pods carry
    kind: ClassVar[str]
    #: whether it places pods on each node that joins (a DaemonSet): only then is ``node_added`` asked
    per_node: ClassVar[bool]

    @property
    def key(self) -> str:
        """``namespace/name`` of the workload."""
        ...

    def wanted(self, nodes: Sequence[Node]) -> list[Pod]:
        """The pods to create now (named as the controller names them)."""
        ...

    def pod_groups(self) -> list[PodGroup]:
        """The gangs its pods form (each labelled ``scheduling.x-k8s.io/pod-group``); none for most kinds."""
        ...

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        """One of its pods ended (Succeeded, or Failed and gone); True when it may want pods again
        (the driver then reconciles it)."""
        ...

    def node_added(self, node: Node) -> list[Pod]:
        """A node joined: the pods it wants there (asked of a ``per_node`` kind only)."""
        ...

    def suspended(self, pod: Pod) -> None:
        """One of its pods was deleted by a queueing system that will admit the workload again
        (Kueue's eviction): it is created again later, not counted as failed."""
        ...


@runtime_checkable
class BacksOff(Protocol):
    """A controller that waits before it creates a failed pod's replacement: asked right after
    ``finished`` returned True for a pod that failed. Without it the replacement is created at once."""

    def retry_delay_s(self) -> float:
        """Seconds until it reconciles again."""
        ...


@runtime_checkable
class WatchesPods(Protocol):
    """A controller that acts on its pods' progress, not only on their ends (a JobSet: an exclusive
    Job's followers wait for their leader's node; an ``InOrder`` start waits until a replicated Job's
    pods run). Each returns True when it may want pods (or deletions) again: the driver reconciles it."""

    def pod_bound(self, pod: Pod, node: Node) -> bool:
        """One of its pods was bound to ``node``."""
        ...

    def pod_running(self, pod: Pod) -> bool:
        """One of its pods' containers started (Running; Ready, as gpufleet has no readiness probes)."""
        ...


@runtime_checkable
class DeletesPods(Protocol):
    """A controller that deletes pods it made (a JobSet that restarts deletes its Jobs, and their pods,
    foreground): asked after each ``wanted``. A deleted pod that was bound gets its grace period and
    then ends, and ``finished`` hears of it as of any pod."""

    def unwanted(self) -> list[tuple[str, str]]:
        """Its pods to delete now: each one's key and the reason its record keeps."""
        ...


#: client-go's ``DefaultControllerRateLimiter``: a failed item waits 5 ms doubling to 1000 s
#: (``ItemExponentialFailureRateLimiter``), the wait of an operator's work queue (controller-runtime's too)
WORK_QUEUE_BASE_S, WORK_QUEUE_MAX_S = 0.005, 1000.0


def work_queue_delay_s(requeues: int) -> float:
    """The work queue's wait before the ``requeues``-th retry of one item (0 for the first try)."""
    return min(WORK_QUEUE_BASE_S * 2.0 ** min(requeues, 64), WORK_QUEUE_MAX_S)


@runtime_checkable
class Adopts(Protocol):
    """A controller that adopts the pods a cluster snapshot holds of it (Jobs, ReplicaSets,
    Deployments, DaemonSets): asked before its first ``wanted``."""

    def adopt(self, owned: Owned) -> None:
        """Its pods of the snapshot (``PodControllerRefManager.ClaimPods``) count as its own, so that
        it creates only what is missing."""
        ...


class ManifestReader(Protocol):
    """One manifest of a registered kind, as its ``read`` sees it (``kube.load`` implements it)."""

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def labels(self) -> Mapping[str, str]:
        """The object's ``metadata.labels``."""
        ...

    @property
    def annotations(self) -> Mapping[str, str]:
        """The object's ``metadata.annotations``."""
        ...

    def value(self, path: str) -> object:
        """The value at ``spec.<path>`` (dotted; ``replicatedJobs[0].name`` indexes a list), None when
        absent; a field read is no warning."""
        ...

    def template(self, path: str, restart_policies: tuple[str, ...]) -> tuple[Pod, Created]:
        """The pod template at ``spec.<path>`` (``template``, ``replicaSpecs.Worker.template``), read
        and checked as every workload's, and when the workload is created."""
        ...

    def count(self, path: str, default: int) -> int:
        """A count at ``spec.<path>`` that must not be negative; ``default`` when absent."""
        ...

    def unmodelled(self, fields: Sequence[str]) -> None:
        """Those of ``spec``'s fields that are given are not modelled: a warning each (as is any
        field of ``spec`` the reader did not read). A dotted field (``runPolicy.suspend``) is looked
        up below ``spec``."""
        ...

    def selector(self, what: str) -> None:
        """Check ``spec.selector`` as an ``apps/v1`` controller's (not empty, matches the template's
        labels: pkg/apis/apps/validation); ``what`` names the kind in the message (``replicaset``)."""
        ...

    def error(self, path: str, message: str) -> None:
        """A problem at ``spec.<path>``: the manifest is rejected."""
        ...


Factory = Callable[[Any], WorkloadController]
Reader = Callable[[ManifestReader], Workload]
