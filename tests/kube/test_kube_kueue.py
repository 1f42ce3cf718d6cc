"""Kueue's ResourceFlavor, ClusterQueue and LocalQueue read from manifests (``gpufleet.kube.kueue``).

Field names and rules follow ``kubernetes-sigs/kueue: apis/kueue/v1beta{1,2}`` (v1beta1
``spec.cohort``, v1beta2 ``spec.cohortName``; ``namespaceSelector`` null selects nothing) and
its webhooks (covered resources per flavor, limits need a cohort, lendingLimit <= nominalQuota).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import load, problems, warnings

from gpufleet.model.kueue import FlavorFungibility, ResourceQuota
from gpufleet.model.node import Taint, Toleration


def cluster_queue(version: str, spec: str, name: str = "team-a") -> str:
    return f"""
apiVersion: kueue.x-k8s.io/{version}
kind: ClusterQueue
metadata:
  name: {name}
spec:
{spec}
"""


GROUPS = """  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 96}
      - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4, lendingLimit: "2"}
"""
FLAVOR = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: h100
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  nodeTaints: [{key: dedicated, value: h100, effect: NoSchedule}]
  tolerations: [{key: dedicated, operator: Equal, value: h100, effect: NoSchedule}]
"""
LOCAL_QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: queue
  namespace: team-a
spec:
  clusterQueue: team-a
"""


def test_both_api_versions_read_the_cohort_quotas_and_policies(tmp_path: Path) -> None:
    text = "---".join(
        [
            FLAVOR,
            LOCAL_QUEUE,
            cluster_queue(
                "v1beta1",
                "  cohort: research\n  namespaceSelector: {}\n  queueingStrategy: StrictFIFO\n" + GROUPS,
            ),
            cluster_queue(
                "v1beta2",
                "  cohortName: research\n  preemption: {reclaimWithinCohort: Any, withinClusterQueue: "
                "LowerPriority}\n" + GROUPS,
                name="team-b",
            ),
        ]
    )
    scenario = load(tmp_path, text)
    objects = scenario.kueue
    a, b = objects.cluster_queues["team-a"], objects.cluster_queues["team-b"]
    assert (a.cohort, b.cohort) == ("research", "research")
    assert a.queueing_strategy == "StrictFIFO" and b.queueing_strategy == "BestEffortFIFO"
    assert a.namespace_selector == () and b.namespace_selector is None  # {} selects all, null none
    assert a.admits_namespace("team-a") and not b.admits_namespace("team-a")
    assert (a.reclaim_within_cohort, b.reclaim_within_cohort, b.within_cluster_queue) == (
        "Never",
        "Any",
        "LowerPriority",
    )
    assert a.quota("h100", "nvidia.com/gpu") == ResourceQuota(8, 4, 2)
    assert a.quota("h100", "cpu") == ResourceQuota(96000)
    flavor = objects.flavors["h100"]
    assert flavor.node_labels == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert flavor.node_taints == (Taint("dedicated", "h100", "NoSchedule"),)
    assert flavor.tolerations == (Toleration("dedicated", "Equal", "h100", "NoSchedule"),)
    assert objects.local_queues["team-a/queue"].cluster_queue == "team-a"
    assert scenario.warnings == []


def test_a_jobs_queue_name_label_is_recorded(tmp_path: Path) -> None:
    job = """
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: queue}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
"""
    assert load(tmp_path, job).kueue.workload_queues == {"Job/team-a/train": "queue"}


def test_a_kueue_jobs_suspend_is_modelled_and_so_is_any_other_jobs(tmp_path: Path) -> None:
    """Kueue creates its Jobs suspended and unsuspends them on admission (``spec.suspend``); another Job's
    ``spec.suspend`` holds it suspended (``manageJob`` creates none of its pods): no warning either way."""
    job = """
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
  {labels}
spec:
  suspend: true
  template:
    metadata: {{annotations: {{gpufleet.io/duration: 1h}}}}
    spec:
      restartPolicy: Never
      containers: [{{name: main, image: busybox}}]
"""
    assert warnings(tmp_path, job.format(labels="labels: {kueue.x-k8s.io/queue-name: queue}")) == []
    assert warnings(tmp_path, job.format(labels="")) == []


def test_the_cohort_field_is_per_version(tmp_path: Path) -> None:
    text = cluster_queue("v1beta2", "  cohort: research\n  namespaceSelector: {}")
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 1 (ClusterQueue/team-a): spec.cohort: "
        "Additional properties are not allowed ('cohort' was unexpected)"
    ]


def test_bad_values_name_file_document_and_field(tmp_path: Path) -> None:
    spec = """  queueingStrategy: Fifo
  preemption: {reclaimWithinCohort: Sometimes}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8}
    - name: a100
      resources:
      - {name: cpu, nominalQuota: 10}
      - {name: nvidia.com/gpu, nominalQuota: -1, borrowingLimit: 2}
"""
    where = "scenario.yaml: document 1 (ClusterQueue/team-a)"
    assert problems(tmp_path, cluster_queue("v1beta1", spec)) == [
        f'{where}: spec.queueingStrategy: Unsupported value: "Fifo": supported values: '
        '"BestEffortFIFO", "StrictFIFO"',
        f'{where}: spec.preemption.reclaimWithinCohort: Unsupported value: "Sometimes": supported values: '
        '"Never", "LowerPriority", "Any"',
        f'{where}: spec.resourceGroups[0].flavors[0].resources: Invalid value: ["nvidia.com/gpu"]: '
        "flavors must have the same number of resources as the coveredResources",
        f"{where}: spec.resourceGroups[0].flavors[1].resources[1].nominalQuota: Invalid value: -1: "
        "must be greater than or equal to 0",
        f"{where}: spec.resourceGroups[0].flavors[1].resources[1].borrowingLimit: Invalid value: 2: "
        "borrowingLimit must be nil when cohort is empty",
    ]


def test_lending_limit_above_nominal_quota_is_an_error(tmp_path: Path) -> None:
    spec = """  cohortName: research
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4, lendingLimit: 6}
"""
    assert problems(tmp_path, cluster_queue("v1beta2", spec)) == [
        "scenario.yaml: document 1 (ClusterQueue/team-a): spec.resourceGroups[0].flavors[0].resources[0]"
        ".lendingLimit: Invalid value: 6: must be less than or equal to nominalQuota"
    ]


def test_unmodelled_fields_and_missing_references_are_warnings(tmp_path: Path) -> None:
    spec = """  fairSharing: {weight: 2}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: missing
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4}
"""
    lq = LOCAL_QUEUE.replace("clusterQueue: team-a", "clusterQueue: nobody")
    where = "scenario.yaml: document 1 (ClusterQueue/team-a)"
    assert warnings(tmp_path, cluster_queue("v1beta1", spec) + "---" + lq) == [
        f"{where}: spec.fairSharing.weight: has no effect: fair sharing is off "
        "(no Kueue Configuration with fairSharing)",
        f'{where}: spec.resourceGroups[0].flavors[0].name: no ResourceFlavor "missing": '
        "the ClusterQueue is inactive, admits nothing",
        "scenario.yaml: document 2 (LocalQueue/team-a/queue): spec.clusterQueue: "
        'no ClusterQueue "nobody": its workloads wait',
    ]


def test_other_kueue_kinds_are_warnings(tmp_path: Path) -> None:
    """Kueue's kinds gpufleet does not model (MultiKueue's; AdmissionCheck is modelled since the
    ProvisioningRequest admission check is, tests/kueue/test_kueue_admission_checks.py)."""
    text = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: MultiKueueConfig\nmetadata: {name: prov}\nspec: {}\n"
    assert warnings(tmp_path, text) == [
        "scenario.yaml: document 1 (MultiKueueConfig/prov): "
        "kind kueue.x-k8s.io/v1beta1/MultiKueueConfig is not modelled; ignored"
    ]


def test_flavor_fungibility_is_read_with_its_defaults_and_v1beta1s_deprecated_names(tmp_path: Path) -> None:
    """``apis/kueue/v1beta1``: ``Borrow`` and ``Preempt`` are the deprecated names of ``MayStopSearch``;
    unset fields take the CRD's defaults (``MayStopSearch``, ``TryNextFlavor``)."""
    text = "---".join(
        [
            FLAVOR,
            cluster_queue(
                "v1beta1", "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: Preempt}"
            ),
            cluster_queue("v1beta2", "  flavorFungibility: {}", name="team-b"),
            cluster_queue(
                "v1beta2",
                "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, "
                "preference: PreemptionOverBorrowing}",
                name="team-c",
            ),
        ]
    )
    queues = load(tmp_path, text).kueue.cluster_queues
    assert queues["team-a"].flavor_fungibility == FlavorFungibility("TryNextFlavor", "MayStopSearch")
    assert queues["team-b"].flavor_fungibility == FlavorFungibility("MayStopSearch", "TryNextFlavor")
    assert queues["team-c"].flavor_fungibility == FlavorFungibility(
        "TryNextFlavor", "TryNextFlavor", "PreemptionOverBorrowing"
    )
    assert warnings(tmp_path, text) == []


def test_bad_flavor_fungibility_names_its_field(tmp_path: Path) -> None:
    """v1beta2 dropped the deprecated names; ``preference`` needs both policies at ``TryNextFlavor``
    (the CRD's CEL rule)."""
    where = "scenario.yaml: document 1 (ClusterQueue/team-a)"
    deprecated = cluster_queue("v1beta2", "  flavorFungibility: {whenCanBorrow: Borrow}")
    assert problems(tmp_path, deprecated) == [
        f'{where}: spec.flavorFungibility.whenCanBorrow: Unsupported value: "Borrow": supported values: '
        '"MayStopSearch", "TryNextFlavor"'
    ]
    preference = cluster_queue("v1beta2", "  flavorFungibility: {preference: BorrowingOverPreemption}")
    assert problems(tmp_path, preference) == [
        f'{where}: spec.flavorFungibility: Invalid value: "object": preference can only be set when both '
        "whenCanBorrow and whenCanPreempt are TryNextFlavor"
    ]


def test_borrow_within_cohort_is_read_in_both_api_versions(tmp_path: Path) -> None:
    """``preemption.borrowWithinCohort``: ``policy`` (default ``Never``) and ``maxPriorityThreshold``
    (unset: no threshold), modelled: no warning."""
    text = "---".join(
        [
            FLAVOR,
            cluster_queue(
                "v1beta1",
                "  cohort: research\n  preemption:\n    reclaimWithinCohort: LowerPriority\n"
                "    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: -5}\n" + GROUPS,
            ),
            cluster_queue(
                "v1beta2",
                "  cohortName: research\n  preemption:\n    reclaimWithinCohort: Any\n"
                "    borrowWithinCohort: {policy: LowerPriority}\n" + GROUPS,
                name="team-b",
            ),
            cluster_queue(
                "v1beta2",
                "  cohortName: research\n  preemption: {borrowWithinCohort: {}}\n" + GROUPS,
                name="team-c",
            ),
        ]
    )
    queues = load(tmp_path, text).kueue.cluster_queues
    got = {name: (q.borrow_within_cohort, q.max_priority_threshold) for name, q in queues.items()}
    assert got == {
        "team-a": ("LowerPriority", -5),
        "team-b": ("LowerPriority", None),
        "team-c": ("Never", None),
    }
    assert warnings(tmp_path, text) == []


def test_bad_borrow_within_cohort_names_its_field(tmp_path: Path) -> None:
    """The CRD's enum (``Never``, ``LowerPriority``), ``maxPriorityThreshold`` an int32, and its CEL rule
    on ``preemption``: no ``borrowWithinCohort.policy`` other than ``Never`` with ``reclaimWithinCohort:
    Never`` (the default)."""
    where = "scenario.yaml: document 1 (ClusterQueue/team-a)"
    bad = cluster_queue(
        "v1beta2",
        "  cohortName: research\n  preemption:\n    reclaimWithinCohort: Any\n"
        "    borrowWithinCohort: {policy: Any, maxPriorityThreshold: 4294967296}",
    )
    assert problems(tmp_path, bad) == [
        f'{where}: spec.preemption.borrowWithinCohort.policy: Unsupported value: "Any": supported values: '
        '"Never", "LowerPriority"',
        f"{where}: spec.preemption.borrowWithinCohort.maxPriorityThreshold: Invalid value: 4294967296: "
        "must be an int32",
    ]
    never = cluster_queue(
        "v1beta1", "  cohort: research\n  preemption: {borrowWithinCohort: {policy: LowerPriority}}"
    )
    assert problems(tmp_path, never) == [
        f'{where}: spec.preemption: Invalid value: "object": reclaimWithinCohort=Never and '
        "borrowWithinCohort.Policy!=Never"
    ]


ADMISSION_OBJECTS = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {name: cfg}
spec:
  provisioningClassName: check-capacity.autoscaling.x-k8s.io
  parameters: {noRetry: "true"}
  managedResources: [nvidia.com/gpu]
  retryStrategy: {backoffBaseSeconds: 30}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: prov}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: cfg}
"""


def test_admission_checks_and_provisioning_request_configs_are_read_with_their_defaults(
    tmp_path: Path,
) -> None:
    """``provisioningrequestconfig_types.go``: ``retryStrategy``'s CRD defaults (3, 60, 1800) fill what is not
    given; v1beta1's ``admissionChecks`` become rules without ``onFlavors`` (the conversion webhook)."""
    queue = cluster_queue("v1beta1", "  admissionChecks: [prov]")
    objects = load(tmp_path, ADMISSION_OBJECTS + "---\n" + FLAVOR + "---" + queue).kueue
    config = objects.provisioning_configs["cfg"]
    assert (config.class_name, config.parameters, config.managed_resources) == (
        "check-capacity.autoscaling.x-k8s.io",
        {"noRetry": "true"},
        ("nvidia.com/gpu",),
    )
    assert (config.retry.backoff_limit_count, config.retry.backoff_base_s, config.retry.backoff_max_s) == (
        3,
        30.0,
        1800.0,
    )
    check = objects.admission_checks["prov"]
    assert (check.controller_name, check.config) == ("kueue.x-k8s.io/provisioning-request", "cfg")
    assert objects.cluster_queues["team-a"].admission_checks == (("prov", ()),)


CFG = "scenario.yaml: document 1 (ProvisioningRequestConfig/cfg): "


@pytest.mark.parametrize(
    ("edit", "line"),
    [
        (
            ("managedResources:", "managedResource:"),
            CFG + "spec.managedResource: Additional properties are not allowed "
            "('managedResource' was unexpected)",
        ),
        (
            ("controllerName: kueue.x-k8s.io/provisioning-request", "controllerName: ''"),
            "scenario.yaml: document 2 (AdmissionCheck/prov): spec.controllerName: Required value",
        ),
        (
            ("check-capacity.autoscaling.x-k8s.io", "Check_Capacity"),
            CFG + 'spec.provisioningClassName: Invalid value: "Check_Capacity": should match '
            "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'",
        ),
        (
            ("backoffBaseSeconds: 30", "backoffBaseSeconds: 4294967296"),
            CFG + "spec.retryStrategy.backoffBaseSeconds: Invalid value: 4294967296: must be an int32",
        ),
    ],
)
def test_admission_check_objects_are_decoded_strictly(
    tmp_path: Path, edit: tuple[str, str], line: str
) -> None:
    """A misspelt field, a missing ``controllerName``, a ``provisioningClassName`` that is not a DNS subdomain
    (the CRD's pattern) and a backoff that is not an int32 are errors, each on its file, document and
    field."""
    assert edit[0] in ADMISSION_OBJECTS
    assert problems(tmp_path, ADMISSION_OBJECTS.replace(*edit)) == [line]
