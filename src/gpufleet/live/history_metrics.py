"""The kube-state-metrics (v2.18.0) series ``gpufleet history`` reads, and how their label names map
back to Kubernetes names.

kube-state-metrics writes a resource name as a Prometheus label value with every character outside
``[a-zA-Z0-9_]`` replaced by ``_`` (``internal/store/utils.go`` ``SanitizeLabelName``:
``nvidia.com/gpu`` -> ``nvidia_com_gpu``), and a Kubernetes label as a Prometheus label named
``label_`` + that, in snake case (``labelName``: ``batch.kubernetes.io/job-name`` ->
``label_batch_kubernetes_io_job_name``), and only for the keys ``--metric-labels-allowlist`` names.
Both are lossy; the names below are mapped back exactly, any other one only where it has no ``_``
(then nothing was replaced). The rest are reported, never guessed.
"""

from __future__ import annotations

import re

#: Pod labels that keep the grouping of pods into Jobs and gangs visible (Job controller:
#: ``batch.kubernetes.io/job-name``, ``job-name``, ``batch.kubernetes.io/controller-uid``;
#: scheduler-plugins' Coscheduling: ``scheduling.x-k8s.io/pod-group``; Volcano; Kueue), and common
#: application labels.
POD_LABELS = (
    "job-name",
    "batch.kubernetes.io/job-name",
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-completion-index",
    "scheduling.x-k8s.io/pod-group",
    "volcano.sh/job-name",
    "kueue.x-k8s.io/queue-name",
    "app",
    "app.kubernetes.io/name",
)
#: Node labels that say what a node is: well-known labels, GPU Feature Discovery's, node pools'.
NODE_LABELS = (
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "node.kubernetes.io/instance-type",
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.memory",
    "nvidia.com/mig.strategy",
    "karpenter.sh/nodepool",
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool",
    "gpufleet.io/node-pool",
)

#: Opt-in metrics to enable (``--metric-opt-in-list``): pods' node selectors.
OPT_IN = "kube_pod_nodeselectors"

#: Resource names that kube-state-metrics' sanitising makes ambiguous, mapped back.
_RESOURCES = {
    "cpu": "cpu",
    "memory": "memory",
    "pods": "pods",
    "ephemeral_storage": "ephemeral-storage",
    "nvidia_com_gpu": "nvidia.com/gpu",
    "nvidia_com_gpu_shared": "nvidia.com/gpu.shared",
    "amd_com_gpu": "amd.com/gpu",
}
_MIG = re.compile(r"nvidia_com_mig_(\d+)g_(\d+)gb")  # nvidia.com/mig-<g>g.<m>gb (the device plugin)
_HUGEPAGES = re.compile(r"hugepages_(\d+[KMG]i)")  # hugepages-2Mi


def labels_allowlist() -> str:
    """kube-state-metrics' ``--metric-labels-allowlist`` value that exports the labels above."""
    return f"pods=[{','.join(POD_LABELS)}],nodes=[{','.join(NODE_LABELS)}]"


def _snake(text: str) -> str:
    return re.sub("([a-z0-9])([A-Z])", r"\1_\2", text).lower()


def prometheus_label(key: str) -> str:
    """The Prometheus label kube-state-metrics writes a Kubernetes label key as (``labelName``)."""
    return "label_" + _snake(re.sub(r"[^a-zA-Z0-9_]", "_", key))


_KNOWN_LABELS = {prometheus_label(k): k for k in (*POD_LABELS, *NODE_LABELS)}


def kubernetes_label(name: str) -> str | None:
    """The Kubernetes label key a ``label_*`` Prometheus label stands for, or None where
    kube-state-metrics' sanitising makes it ambiguous."""
    if name in _KNOWN_LABELS:
        return _KNOWN_LABELS[name]
    rest = name.removeprefix("label_")
    return rest if rest != name and rest and "_" not in rest else None


def resource_name(sanitised: str) -> str | None:
    """The Kubernetes resource name a ``resource`` label value stands for, or None if ambiguous."""
    if sanitised in _RESOURCES:
        return _RESOURCES[sanitised]
    if mig := _MIG.fullmatch(sanitised):
        return f"nvidia.com/mig-{mig.group(1)}g.{mig.group(2)}gb"
    if huge := _HUGEPAGES.fullmatch(sanitised):
        return f"hugepages-{huge.group(1)}"
    return None
