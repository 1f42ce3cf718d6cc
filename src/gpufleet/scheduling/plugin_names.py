"""Names of the scheduler plugins a ``KubeSchedulerConfiguration`` may mention.

``MODELLED`` plugins are implemented by gpufleet. ``NOT_MODELLED`` are upstream's default
plugins (``pkg/scheduler/apis/config/v1/default_plugins.go``, Kubernetes 1.34) that
gpufleet accepts in a configuration but does not simulate; naming one is a warning, not an
error. Any other name is an error, as kube-scheduler rejects an unknown plugin.
"""

from __future__ import annotations

#: kube-scheduler's own plugins that gpufleet implements
IN_TREE_MODELLED = frozenset(
    {
        "PrioritySort",
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "DefaultPreemption",
        "DefaultBinder",
        "DynamicResources",
    }
)

MODELLED = IN_TREE_MODELLED | frozenset(
    {
        "Coscheduling",  # scheduler-plugins'
        "GpuMemoryFit",
        "GpuShare",
        "FGD",
        "FGDSupply",
        "GpuTopology",
        "Backfill",
        "BestFit",
        "DotProd",
        "GpuPacking",
        "GpuClustering",
        "Random",
    }
)

NOT_MODELLED = frozenset(
    {
        "SchedulingGates",
        "NodePorts",
        "VolumeRestrictions",
        "EBSLimits",
        "GCEPDLimits",
        "NodeVolumeLimits",
        "AzureDiskLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "ImageLocality",
    }
)

KNOWN = MODELLED | NOT_MODELLED

#: kube-scheduler's own (in-tree) plugins: the others are scheduler-plugins' (Coscheduling) or gpufleet's
IN_TREE = IN_TREE_MODELLED | NOT_MODELLED
