"""Which ``apiVersion``/``kind`` a document has, and what the loader does with it.

A kind gpufleet models is converted (a workload kind registered with its reader in
``gpufleet.workloads`` too); any other kind Kubernetes 1.34 serves, and any kind of an API group
gpufleet does not know (other controllers' custom resources), is a warning.
KEDA's ``keda.sh`` group is not "known" in that sense: its ScaledObject and ScaledJob are
modelled, its other kinds (TriggerAuthentication, ...) are warnings. A
kind that does not exist in a group gpufleet knows is an error, as the API server answers
``no matches for kind "Deploymnet" in version "apps/v1"``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gpufleet.kube.dra_versions import BETA_VERSIONS
from gpufleet.kube.schema_check import KUBERNETES_VERSION, standard_kinds
from gpufleet.workloads import manifest_readers

POD = ("", "v1", "Pod")
NODE = ("", "v1", "Node")
JOB = ("batch", "v1", "Job")
DEPLOYMENT = ("apps", "v1", "Deployment")
DAEMONSET = ("apps", "v1", "DaemonSet")
PRIORITY_CLASS = ("scheduling.k8s.io", "v1", "PriorityClass")
#: its labels only, for InterPodAffinity's ``namespaceSelector``
NAMESPACE = ("", "v1", "Namespace")
POD_GROUP = ("scheduling.x-k8s.io", "v1alpha1", "PodGroup")
SCHEDULER_CONFIG = ("kubescheduler.config.k8s.io", "v1", "KubeSchedulerConfiguration")
SIMULATION = ("gpufleet.io", "v1alpha1", "Simulation")
NODE_POOL = ("gpufleet.io", "v1alpha1", "NodePool")
QUEUE_FEED = ("gpufleet.io", "v1alpha1", "QueueFeed")
TRAFFIC = ("gpufleet.io", "v1alpha1", "Traffic")
#: GPU and node faults (``gpufleet.kube.fault_model``)
FAULT_MODEL = ("gpufleet.io", "v1alpha1", "FaultModel")
#: a Deployment's pod template changed at a given time (``gpufleet.kube.rollout``)
ROLLOUT = ("gpufleet.io", "v1alpha1", "Rollout")
#: read by ``gpufleet whatif`` only (``gpufleet.kube.change_kind``): not part of a scenario
CHANGE = ("gpufleet.io", "v1alpha1", "Change")
HPA = ("autoscaling", "v2", "HorizontalPodAutoscaler")
#: read as the API server converts it to v2 (``gpufleet.kube.hpa_v1``)
HPA_V1 = ("autoscaling", "v1", "HorizontalPodAutoscaler")
POD_DISRUPTION_BUDGET = ("policy", "v1", "PodDisruptionBudget")
#: kube-scheduler's FailedScheduling Events in a dump, both versions (``gpufleet.kube.scheduler_records``)
EVENTS = (("", "v1", "Event"), ("events.k8s.io", "v1", "Event"))
SCALED_OBJECT = ("keda.sh", "v1alpha1", "ScaledObject")
SCALED_JOB = ("keda.sh", "v1alpha1", "ScaledJob")
DEVICE_CLASS = ("resource.k8s.io", "v1", "DeviceClass")
RESOURCE_SLICE = ("resource.k8s.io", "v1", "ResourceSlice")
RESOURCE_CLAIM = ("resource.k8s.io", "v1", "ResourceClaim")
RESOURCE_CLAIM_TEMPLATE = ("resource.k8s.io", "v1", "ResourceClaimTemplate")
DRA = (DEVICE_CLASS, RESOURCE_SLICE, RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE)
#: the same kinds in the beta versions 1.34 still serves, read as converted to v1 (``kube.dra_versions``)
DRA_BETA = tuple((group, beta, kind) for beta in BETA_VERSIONS for group, _, kind in DRA)
DRA_NAMESPACED = frozenset(
    gvk for gvk in (*DRA, *DRA_BETA) if gvk[2] in ("ResourceClaim", "ResourceClaimTemplate")
)
#: Kueue's ResourceFlavor, ClusterQueue, LocalQueue, Cohort, WorkloadPriorityClass, AdmissionCheck,
#: ProvisioningRequestConfig and Topology, in the versions served (``gpufleet.kube.kueue``), and a dump's
#: Workloads (``gpufleet.kube.kueue_workloads``).
KUEUE = (
    *(
        ("kueue.x-k8s.io", version, kind)
        for version in ("v1beta1", "v1beta2")
        for kind in (
            "ResourceFlavor",
            "ClusterQueue",
            "LocalQueue",
            "Cohort",
            "WorkloadPriorityClass",
            "AdmissionCheck",
            "ProvisioningRequestConfig",
            "Topology",
            "Workload",
        )
    ),
    ("kueue.x-k8s.io", "v1alpha1", "Topology"),
)
#: Kueue's manager Configuration, both versions (``gpufleet.kube.kueue_config``): no metadata, at most one.
KUEUE_CONFIG = tuple(
    ("config.kueue.x-k8s.io", version, "Configuration") for version in ("v1beta1", "v1beta2")
)
#: KAI Scheduler's Queue (``gpufleet.kube.kai``).
KAI_QUEUE = ("scheduling.run.ai", "v2", "Queue")
KUEUE_NAMESPACED = frozenset(gvk for gvk in KUEUE if gvk[2] in ("LocalQueue", "Workload"))
#: Kubeflow Trainer v2's runtimes, which TrainJobs name (``gpufleet.kube.training_runtimes``)
CLUSTER_TRAINING_RUNTIME = ("trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime")
TRAINING_RUNTIME = ("trainer.kubeflow.org", "v1alpha1", "TrainingRuntime")
#: Volcano's PodGroup (namespaced) and Queue (cluster-scoped) (``gpufleet.kube.volcano``); its Job is a
#: registered workload kind (``gpufleet.workloads.volcano_job``)
#: cluster-autoscaler's ProvisioningRequest and the PodTemplates its pod sets name
#: (``gpufleet.kube.provisioning_requests``)
PROVISIONING_REQUEST = ("autoscaling.x-k8s.io", "v1", "ProvisioningRequest")
POD_TEMPLATE = ("", "v1", "PodTemplate")
VOLCANO_POD_GROUP = ("scheduling.volcano.sh", "v1beta1", "PodGroup")
VOLCANO_QUEUE = ("scheduling.volcano.sh", "v1beta1", "Queue")

MODELLED = frozenset(
    {
        POD,
        NODE,
        JOB,
        DEPLOYMENT,
        DAEMONSET,
        PRIORITY_CLASS,
        NAMESPACE,
        POD_GROUP,
        SCHEDULER_CONFIG,
        SIMULATION,
        NODE_POOL,
        QUEUE_FEED,
        TRAFFIC,
        FAULT_MODEL,
        ROLLOUT,
        HPA,
        HPA_V1,
        POD_DISRUPTION_BUDGET,
        SCALED_OBJECT,
        SCALED_JOB,
        *EVENTS,
        *DRA,
        *DRA_BETA,
        *KUEUE,
        *KUEUE_CONFIG,
        CLUSTER_TRAINING_RUNTIME,
        TRAINING_RUNTIME,
        VOLCANO_POD_GROUP,
        VOLCANO_QUEUE,
        KAI_QUEUE,
        PROVISIONING_REQUEST,
        POD_TEMPLATE,
    }
)
#: Namespaced kinds among those modelled; the others are cluster-scoped.
NAMESPACED = frozenset(
    {
        *DRA_NAMESPACED,
        POD,
        JOB,
        DEPLOYMENT,
        DAEMONSET,
        POD_GROUP,
        QUEUE_FEED,
        TRAFFIC,
        ROLLOUT,
        HPA,
        HPA_V1,
        POD_DISRUPTION_BUDGET,
        SCALED_OBJECT,
        SCALED_JOB,
        *EVENTS,
        *KUEUE_NAMESPACED,
        TRAINING_RUNTIME,
        VOLCANO_POD_GROUP,
        PROVISIONING_REQUEST,
        POD_TEMPLATE,
    }
)

#: Kinds outside the Kubernetes schemas that exist in the groups gpufleet knows but are not modelled
#: (scheduler-plugins' ElasticQuota; the Training Operator v1's MPIJob, whose v2beta1 is modelled;
#: Volcano's CronJob; Kueue's other kinds; KAI Scheduler's PodGroup and BindRequest; the deprecated v1beta1
#: ProvisioningRequest).
_KNOWN_UNMODELLED = frozenset(
    {
        ("scheduling.x-k8s.io", "v1alpha1", "ElasticQuota"),
        ("kubeflow.org", "v1", "MPIJob"),
        ("batch.volcano.sh", "v1alpha1", "CronJob"),
        *(
            ("kueue.x-k8s.io", version, kind)
            for version in ("v1beta1", "v1beta2")
            for kind in (
                "MultiKueueCluster",
                "MultiKueueConfig",
            )
        ),
        ("scheduling.run.ai", "v2alpha2", "PodGroup"),
        ("scheduling.run.ai", "v1alpha2", "BindRequest"),
        ("autoscaling.x-k8s.io", "v1beta1", "ProvisioningRequest"),
    }
)

#: API groups in which a kind gpufleet does not know is a misspelling.
KNOWN_GROUPS = frozenset(
    {
        "",
        "apps",
        "batch",
        "scheduling.k8s.io",
        "scheduling.x-k8s.io",
        "kubescheduler.config.k8s.io",
        "gpufleet.io",
        "resource.k8s.io",
        "scheduling.volcano.sh",
        "kueue.x-k8s.io",
        "config.kueue.x-k8s.io",
        "scheduling.run.ai",
        "autoscaling.x-k8s.io",
    }
)


class Handling(enum.Enum):
    MODEL = "model"
    IGNORE = "ignore"
    REJECT = "reject"


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    handling: Handling
    path: str = ""  # for REJECT: the field at fault
    message: str = ""  # for REJECT: the error; for IGNORE: the warning

    @property
    def gvk(self) -> tuple[str, str, str]:
        return (self.group, self.version, self.kind)


def classify(api_version: str, kind: str) -> Kind:
    group, _, version = api_version.rpartition("/")
    gvk = (group, version, kind)
    registered = manifest_readers()  # workload kinds that bring their reader (gpufleet.workloads)
    if gvk == CHANGE:
        message = "a Change edits a snapshot: give it to gpufleet whatif SNAPSHOT CHANGE.yaml"
        return Kind(group, version, kind, Handling.REJECT, "kind", message)
    if gvk in MODELLED or gvk in registered:
        return Kind(group, version, kind, Handling.MODEL)
    known_groups = KNOWN_GROUPS | {g for g, _, _ in registered}
    if gvk in standard_kinds() or gvk in _KNOWN_UNMODELLED or group not in known_groups:
        return Kind(
            group, version, kind, Handling.IGNORE, "", f"kind {api_version}/{kind} is not modelled; ignored"
        )
    served = sorted(
        {
            f"{g}/{v}" if g else v
            for g, v, k in (*standard_kinds(), *MODELLED, *_KNOWN_UNMODELLED, *registered)
            if (g, k) == (group, kind)
        }
    )
    if served:
        minor = KUBERNETES_VERSION.rsplit(".", 1)[0]
        served_in = ", ".join(served)
        message = f"kind {kind} is not served in {api_version} (with Kubernetes {minor}: {served_in})"
        return Kind(group, version, kind, Handling.REJECT, "apiVersion", message)
    return Kind(group, version, kind, Handling.REJECT, "kind", f'unknown kind "{kind}" in {api_version}')


def namespaced(gvk: tuple[str, str, str]) -> bool:
    """Whether objects of a modelled kind live in a namespace (a registered workload kind's do)."""
    return gvk in NAMESPACED or gvk in manifest_readers()
