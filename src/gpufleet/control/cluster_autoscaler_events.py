"""The events cluster-autoscaler's loop logs (``ScaleEvent``): what it and its parts
(``control.cluster_autoscaler_health``, ``control.cluster_autoscaler_provisioning``,
``control.cluster_autoscaler_soft_taints``) did at each scan, as the summary's ``autoscaler_events``
list them. Upstream records them as Kubernetes Events and log lines."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass
class ScaleEvent:
    t_s: float
    #: scale-up | scale-up-failed | scale-down | scale-down-failed (a deletion given back: why in
    #: ``reason``) | provision-timeout | delete-unregistered | spot-reclaim |
    #: no-scale-up | cluster-unhealthy | cluster-healthy | soft-taint | soft-taint-removed |
    #: provisioning-request (a ProvisioningRequest's condition set: its key in ``pods``,
    #: ``Type=Status Reason: Message`` in ``reason``; or ``deleted``)
    kind: str
    pool: str | None
    nodes: tuple[str, ...]
    pods: tuple[str, ...] = ()
    reason: str = ""
    #: a cluster-unhealthy or cluster-healthy event's node counts (``HealthCondition.node_counts``)
    node_counts: Mapping[str, int] | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {
            "t_s": self.t_s,
            "kind": self.kind,
            "pool": self.pool,
            "nodes": list(self.nodes),
            "pods": list(self.pods),
            "reason": self.reason,
        }
        if self.node_counts is not None:
            out["node_counts"] = dict(self.node_counts)
        return out
