"""kube-controller-manager's node lifecycle flags (Kubernetes 1.34): ``NodeLifecycleControllerConfiguration``
(``pkg/controller/nodelifecycle/config/types.go``, its defaults ``config/v1alpha1/defaults.go`` and the flags
of ``cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go``) and ``--node-monitor-period``
(``KubeCloudShared``, k8s.io/cloud-provider ``config/v1alpha1/defaults.go``), with upstream's defaults.

- ``--node-monitor-grace-period`` (50 s): how long a node's kubelet may be silent before the node lifecycle
  controller sets its Ready condition ``Unknown`` (``tryUpdateNodeHealth``); ``sim.unreachable_nodes``.
- ``--node-monitor-period`` (5 s): how often ``monitorNodeHealth`` runs. The controller's comment asks that it
  be lower than the grace period (``Controller.nodeMonitorPeriod``); gpufleet takes a node NotReady the grace
  period after its kubelet stopped, not at the next pass, so it reads this only to check that.
- ``--node-startup-grace-period`` (1 minute): the grace of a node whose kubelet never posted its Ready
  condition; every node of gpufleet registers Ready, so nothing reads it.
- the zones' eviction rates and thresholds: ``model.node_lifecycle_zones.EvictionRates``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.model.node_lifecycle_zones import EvictionRates


@dataclass(frozen=True)
class NodeLifecycleConfig:
    node_monitor_grace_period_s: float = 50.0
    node_monitor_period_s: float = 5.0
    node_startup_grace_period_s: float = 60.0
    eviction: EvictionRates = field(default_factory=EvictionRates)
