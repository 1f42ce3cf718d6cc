"""Upstream's default plugins (``pkg/scheduler/apis/config/v1/default_plugins.go``, Kubernetes
1.34) that gpufleet accepts in a configuration but does not simulate: naming one is a warning,
not an error. The plugins gpufleet implements are in ``scheduling.registry``; any other name is
an error, as kube-scheduler rejects an unknown plugin.
"""

from __future__ import annotations

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
