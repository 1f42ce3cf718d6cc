"""The API resources a snapshot reads, as kubectl names them: group, the versions tried in order
(the first one the server serves is used, as kubectl picks a served version through discovery),
plural, kind and scope.

Built-in kinds are always served by a conformant API server; the others come from CRDs
(scheduler-plugins' and Volcano's PodGroups, Volcano's and KAI's Queues, KEDA, Kueue) or from a
feature that may be off (DRA), and a snapshot skips them with a warning when the server does not
serve them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KindRef:
    group: str
    versions: tuple[str, ...]
    plural: str
    kind: str
    namespaced: bool
    #: always served by an API server (a missing one is an error); others come from a CRD or an
    #: API group that may be off, and a snapshot skips them with a warning
    builtin: bool = True

    @property
    def resource(self) -> str:
        """``plural.group`` as RBAC rules and kubectl name it (``pods``, ``jobs.batch``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


_KUEUE = ("kueue.x-k8s.io", ("v1beta2", "v1beta1"))
_DRA = ("resource.k8s.io", ("v1", "v1beta2", "v1beta1"))


def _optional(api: tuple[str, tuple[str, ...]], plural: str, kind: str, namespaced: bool = True) -> KindRef:
    return KindRef(api[0], api[1], plural, kind, namespaced, builtin=False)


#: every kind a snapshot reads, in the order it writes them; the key is the file's stem
KINDS: dict[str, KindRef] = {
    "namespaces": KindRef("", ("v1",), "namespaces", "Namespace", False),
    "nodes": KindRef("", ("v1",), "nodes", "Node", False),
    "priorityclasses": KindRef("scheduling.k8s.io", ("v1",), "priorityclasses", "PriorityClass", False),
    "pods": KindRef("", ("v1",), "pods", "Pod", True),
    "poddisruptionbudgets": KindRef("policy", ("v1",), "poddisruptionbudgets", "PodDisruptionBudget", True),
    "deployments": KindRef("apps", ("v1",), "deployments", "Deployment", True),
    "replicasets": KindRef("apps", ("v1",), "replicasets", "ReplicaSet", True),
    "statefulsets": KindRef("apps", ("v1",), "statefulsets", "StatefulSet", True),
    "daemonsets": KindRef("apps", ("v1",), "daemonsets", "DaemonSet", True),
    "jobs": KindRef("batch", ("v1",), "jobs", "Job", True),
    "horizontalpodautoscalers": KindRef(
        "autoscaling", ("v2",), "horizontalpodautoscalers", "HorizontalPodAutoscaler", True
    ),
    "events": KindRef("", ("v1",), "events", "Event", True),
    "podgroups": _optional(("scheduling.x-k8s.io", ("v1alpha1",)), "podgroups", "PodGroup"),
    "volcano-podgroups": _optional(("scheduling.volcano.sh", ("v1beta1",)), "podgroups", "PodGroup"),
    "scaledobjects": _optional(("keda.sh", ("v1alpha1",)), "scaledobjects", "ScaledObject"),
    "scaledjobs": _optional(("keda.sh", ("v1alpha1",)), "scaledjobs", "ScaledJob"),
    "resourceflavors": _optional(_KUEUE, "resourceflavors", "ResourceFlavor", False),
    "clusterqueues": _optional(_KUEUE, "clusterqueues", "ClusterQueue", False),
    "localqueues": _optional(_KUEUE, "localqueues", "LocalQueue"),
    "cohorts": _optional(_KUEUE, "cohorts", "Cohort", False),
    "workloadpriorityclasses": _optional(_KUEUE, "workloadpriorityclasses", "WorkloadPriorityClass", False),
    "workloads": _optional(_KUEUE, "workloads", "Workload"),
    "topologies": _optional(
        ("kueue.x-k8s.io", ("v1beta2", "v1beta1", "v1alpha1")), "topologies", "Topology", False
    ),
    "volcano-queues": _optional(("scheduling.volcano.sh", ("v1beta1",)), "queues", "Queue", False),
    "kai-queues": _optional(("scheduling.run.ai", ("v2",)), "queues", "Queue", False),
    "deviceclasses": _optional(_DRA, "deviceclasses", "DeviceClass", False),
    "resourceslices": _optional(_DRA, "resourceslices", "ResourceSlice", False),
    "resourceclaims": _optional(_DRA, "resourceclaims", "ResourceClaim"),
    "resourceclaimtemplates": _optional(_DRA, "resourceclaimtemplates", "ResourceClaimTemplate"),
}
