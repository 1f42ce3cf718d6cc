"""Upstream's default plugins (``pkg/scheduler/apis/config/v1/default_plugins.go``, Kubernetes
1.34) that gpufleet accepts in a configuration but does not simulate: naming one is a warning,
not an error. The plugins gpufleet implements are in ``scheduling.registry``; any other name is
an error, as kube-scheduler rejects an unknown plugin.

``OUT_OF_TREE`` names the plugins that other schedulers built on the framework register (a
scheduler-plugins build, ``cmd/scheduler/main.go``, sample plugins included) and that gpufleet does
not model: a configuration written for that scheduler names them, so they are warnings saying
whose they are, not unknown names.
"""

from __future__ import annotations

NOT_MODELLED = frozenset(
    {
        "VolumeRestrictions",
        "EBSLimits",
        "GCEPDLimits",
        "NodeVolumeLimits",
        "AzureDiskLimits",
        "VolumeBinding",
        "VolumeZone",
    }
)

#: plugin name -> the project that defines it
OUT_OF_TREE: dict[str, str] = {
    name: "scheduler-plugins"
    for name in (
        "CapacityScheduling",
        "CrossNodePreemption",
        "LoadVariationRiskBalancing",
        "LowRiskOverCommitment",
        "NetworkOverhead",
        "NodeResourceTopologyMatch",
        "NodeResourcesAllocatable",
        "NodeResourcesFitPlus",
        "Peaks",
        "PodState",
        "PreemptionToleration",
        "QOSSort",
        "ScarceResourceAvoidance",
        "SySched",
        "TargetLoadPacking",
        "TopologicalSort",
    )
}
