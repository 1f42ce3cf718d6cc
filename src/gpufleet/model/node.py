"""Nodes, taints and tolerations as kube-scheduler sees them.

Taint matching mirrors ``k8s.io/api/core/v1`` ``Toleration.ToleratesTaint``: an empty
toleration effect matches every effect, an empty key with ``Exists`` matches every taint,
``Equal`` (or no operator) compares values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.model.replacer import replacer
from gpufleet.model.resources import Resources

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"


@dataclass(frozen=True)
class Taint:
    """A node taint (``spec.taints``): pods that do not tolerate it are kept off the node (``NoSchedule``,
    ``NoExecute``) or avoided (``PreferNoSchedule``)."""

    key: str
    value: str = ""
    effect: str = NO_SCHEDULE

    def describe(self) -> str:
        """``{key: value}``, as kube-scheduler 1.34's TaintToleration filter prints it."""
        return f"{{{self.key}: {self.value}}}"


@dataclass(frozen=True)
class Toleration:
    """A pod toleration (``spec.tolerations``): the taints it tolerates, as ``v1.Toleration.ToleratesTaint``
    matches them; ``toleration_seconds`` bounds how long a ``NoExecute`` taint lets the pod stay."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


def tolerated(taint: Taint, tolerations: tuple[Toleration, ...]) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


@dataclass
class Node:
    """A node: labels, taints, and allocatable resources in canonical units."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    capacity: Resources = field(default_factory=dict)
    allocatable: Resources = field(default_factory=dict)
    pool: str | None = None
    #: the images on the node by every name they go by, with their size in bytes (``status.images``,
    #: then what the simulated kubelet pulls)
    images: dict[str, int] = field(default_factory=dict)
    #: annotated ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"``
    scale_down_disabled: bool = False
    #: annotated ``delay-deletion.cluster-autoscaler.kubernetes.io/<anything>``: cluster-autoscaler waits for
    #: the annotation to go before deleting the node, up to ``--node-deletion-delay-timeout``
    delay_deletion: bool = False
    #: its Ready condition's status: ``True``, or ``False`` / ``Unknown`` (NotReady: its kubelet says it is
    #: not ready, or has not posted its status within the node lifecycle controller's grace period)
    ready: str = "True"
    #: Unix seconds, as a Node object read from a cluster dump gives them (None where absent): its Ready
    #: condition's ``lastTransitionTime``, its ``metadata.creationTimestamp`` (when it registered), and the
    #: latest time the object shows (a condition's ``lastHeartbeatTime`` or ``lastTransitionTime``, its
    #: creation): ``model.node_readiness`` maps them onto a run's clock
    ready_since_unix: float | None = None
    created_unix: float | None = None
    observed_unix: float | None = None

    def __post_init__(self) -> None:
        if not self.allocatable:
            self.allocatable = dict(self.capacity)
        self.labels.setdefault("kubernetes.io/hostname", self.name)


#: ``dataclasses.replace`` of a node at a third of its cost (an FGD-protocol replay copies its trace's nodes)
replace_node = replacer(Node)
