"""The workload-kind protocol: how a kind of workload expands into pods and how its controller
reacts when one of them ends, so that the simulator (and later the live side) drives every kind
the same way.

A kind is one module of ``gpufleet.workloads`` that defines its controller and registers it with
``@register_kind(<model class>)``: the controller is made from the workload object the manifest
reader produced, says which pods it wants now (``wanted``, given the nodes that exist, for kinds
that place a pod per node), and learns when one of its pods ended (``finished``) or was taken
away by a queueing system to be created again later (``suspended``), and which pods it wants on a
node that joins (``node_added``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol

from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import Created


class Workload(Protocol):
    """A workload object read from a manifest (``model.workloads``)."""

    name: str
    namespace: str
    template: Pod
    created: Created

    @property
    def key(self) -> str: ...


class WorkloadController(Protocol):
    #: the ``ownerReferences`` kind its pods carry
    kind: ClassVar[str]

    @property
    def key(self) -> str:
        """``namespace/name`` of the workload."""
        ...

    def wanted(self, nodes: Sequence[Node]) -> list[Pod]:
        """The pods to create now (named as the controller names them)."""
        ...

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        """One of its pods ended (Succeeded, or Failed and gone); True when it may want pods again
        (the driver then reconciles it)."""
        ...

    def node_added(self, node: Node) -> list[Pod]:
        """A node joined: the pods it wants there (a per-node kind's; others want none)."""
        ...

    def suspended(self, pod: Pod) -> None:
        """One of its pods was deleted by a queueing system that will admit the workload again
        (Kueue's eviction): it is created again later, not counted as failed."""
        ...


Factory = Callable[[Any], WorkloadController]
