"""Every real manifest that upstream projects publish (``../shared/upstream-manifests/``: Kueue, KEDA,
NVIDIA's device plugin, DRA driver, GPU operator and KAI, scheduler-plugins, kubernetes.io, JobSet,
LWS, Kubeflow, Volcano, kwok; ``SOURCES.md`` there says where each comes from) read as
``gpufleet validate`` reads it, alone: accepted, accepted with warnings, or refused with reasons of
one line each that a user of that project would agree with. The table records the outcome per file
and fragments of the lines that must be there, so that a regression shows; a file that is added
there without a row here fails. Each scenario of ``SCENARIOS.txt`` validates too.

Files whose features other parts of gpufleet are adding (KEDA triggers, scheduler-plugins' plugins)
allow more than one outcome and name only the fragment every outcome shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from gpufleet.kube import ScenarioError, load_scenario
from shared_files import UPSTREAM, needs_upstream

pytestmark = needs_upstream

ACCEPTED, WARNED, REFUSED = "accepted", "accepted with warnings", "refused"


@dataclass(frozen=True)
class Expect:
    outcomes: frozenset[str]
    fragments: tuple[str, ...] = ()  # each is in one of the warning or error lines


def accepted() -> Expect:
    return Expect(frozenset({ACCEPTED}))


def warned(*fragments: str) -> Expect:
    return Expect(frozenset({WARNED}), fragments)


def refused(*fragments: str) -> Expect:
    return Expect(frozenset({REFUSED}), fragments)


def either(outcomes: set[str], *fragments: str) -> Expect:
    """A file whose outcome another part of gpufleet may change while it is being built."""
    return Expect(frozenset(outcomes), fragments)


NOT_MODELLED = "is not modelled; ignored"
#: a run-to-completion workload published without gpufleet's annotations would compute for ever
ENDLESS = "no gpufleet.io/duration: its pods run to completion but would compute until the simulation ends"

EXPECTED: dict[str, Expect] = {
    # ours: clusters for the scenarios
    "_clusters/cpu-nodes.yaml": accepted(),
    "_clusters/dra-h100.yaml": warned("spec.extendedResourceName is not modelled yet"),
    "_clusters/h100-nodes.yaml": accepted(),
    "_clusters/sim-1h.yaml": accepted(),
    "_clusters/t4-time-sliced.yaml": accepted(),
    # NVIDIA GPU operator and device plugin
    "gpu-operator/assets/state-mig-manager/0400_configmap.yaml": warned("kind v1/ConfigMap " + NOT_MODELLED),
    "gpu-operator/tests/gpu-pod.yaml": warned(ENDLESS),
    # the device plugin's own config file, not a Kubernetes object
    "gpu-operator/tests/plugin-config.yaml": refused(
        "document 1: apiVersion: Required value", "kind: Required value"
    ),
    "gpu-operator/tests/plugin-test.yaml": accepted(),
    "issues/k8s-device-plugin-119-gpu-job.yaml": accepted(),
    # a pasted status: fragment of a Node, not an object
    "issues/podman-desktop-7778-node-status.yaml": refused("apiVersion: Required value"),
    "k8s-device-plugin/deployments/static/gpu-feature-discovery-daemonset.yaml": accepted(),
    "k8s-device-plugin/deployments/static/nvidia-device-plugin.yml": warned(
        "spec.updateStrategy " + NOT_MODELLED
    ),
    "k8s-device-plugin/testdata/job-1.yaml": warned(ENDLESS),
    # NVIDIA DRA driver: v1, v1beta1 (converted as the API server does), matchAttribute constraints
    "k8s-dra-driver-gpu/extended-resources/gpu-full.yaml": warned(ENDLESS),
    "k8s-dra-driver-gpu/quickstart/v1/gpu-test-mps.yaml": warned(
        "spec.spec.devices.config is not modelled (opaque driver configuration)"
    ),
    "k8s-dra-driver-gpu/quickstart/v1/gpu-test1.yaml": accepted(),
    "k8s-dra-driver-gpu/quickstart/v1/gpu-test4.yaml": accepted(),
    "k8s-dra-driver-gpu/quickstart/v1beta1/gpu-test1.yaml": accepted(),
    # resource.k8s.io/v1alpha2 was removed in Kubernetes 1.32
    "k8s-dra-driver-gpu/selectors/claims.yaml": refused(
        "apiVersion: kind ResourceClaimTemplate is not served in resource.k8s.io/v1alpha2"
    ),
    # kubernetes.io
    "k8s-website/application/hpa/php-apache.yaml": warned(
        "apps/v1/Deployment default/php-apache is not a Deployment or ReplicaSet of the scenario"
    ),
    # Indexed mode is modelled; its containers' JOB_COMPLETION_INDEX is not, and nothing reads it here
    "k8s-website/application/job/indexed-job.yaml": warned(ENDLESS),
    "k8s-website/application/php-apache.yaml": warned("kind v1/Service " + NOT_MODELLED),
    # autoscaling/v1, converted to v2; its target is a ReplicaSet the file does not hold
    "k8s-website/controllers/hpa-rs.yaml": warned("apps/v1/ReplicaSet default/frontend is not a Deployment"),
    # onPodConditions without status (defaults to True)
    # (its onExitCodes rule on its first container is modelled: matchOnExitCodes)
    "k8s-website/controllers/job-pod-failure-policy-example.yaml": warned(ENDLESS),
    "k8s-website/controllers/job.yaml": warned(ENDLESS),
    "k8s-website/controllers/nginx-deployment.yaml": accepted(),
    # wrong upstream at that commit: a preferred term under requiredDuringScheduling...
    "k8s-website/pods/pod-with-node-affinity.yaml": refused(
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: Invalid value"
    ),
    "k8s-website/pods/pod-with-scheduling-gates.yaml": either({ACCEPTED, WARNED}),
    "k8s-website/pods/topology-spread-constraints/two-constraints.yaml": either({ACCEPTED, WARNED}),
    "k8s-website/policy/zookeeper-pod-disruption-budget-minavailable.yaml": accepted(),
    # KAI scheduler
    "kai-scheduler/batch/batch-job.yaml": warned(ENDLESS),
    "kai-scheduler/gpu-sharing/gpu-sharing.yaml": accepted(),
    "kai-scheduler/quickstart/default-queues.yaml": accepted(),
    "kai-scheduler/quickstart/pods/gpu-pod.yaml": accepted(),
    # KEDA: placeholders (`example-trigger`, an empty job template), a removed v1 API, a template
    "keda/config/samples/keda_v1alpha1_scaledjob.yaml": refused(
        "spec.jobTargetRef.template.spec.containers: Required value", "example-trigger"
    ),
    "keda/config/samples/keda_v1alpha1_scaledobject.yaml": refused(
        "spec.triggers[0].type", "example-trigger"
    ),
    "keda/v1-legacy/redis_scaledobject.yaml": either({WARNED, REFUSED}, "keda.k8s.io/v1alpha1"),
    "keda-docs/2.21/prometheus-amp-deployment-scaledobject.yaml": refused("document 3: invalid YAML"),
    "keda-docs/2.21/prometheus-scaledobject.yaml": either({WARNED, REFUSED}, "prometheus-scaledobject"),
    "keda-docs/2.21/redis-lists-secret-triggerauth-scaledobject.yaml": warned(
        "kind keda.sh/v1alpha1/TriggerAuthentication " + NOT_MODELLED
    ),
    "keda-docs/2.21/scaling-jobs-rabbitmq-scaledjob.yaml": either({WARNED, REFUSED}, "rabbitmq"),
    # kube-scheduler-simulator: NodeNumber is the sample's own out-of-tree plugin
    "kube-scheduler-simulator/simulator/cmd/scheduler/scheduler.yaml": accepted(),
    "kube-scheduler-simulator/simulator/docs/sample/debuggable-scheduler/scheduler.yaml": either(
        {WARNED, REFUSED}, 'plugin "NodeNumber"'
    ),
    # Kubeflow, Kueue, JobSet, LWS, Volcano: other controllers' kinds are warnings
    "jobset/pytorch/resnet-cifar10/resnet.yaml": warned(ENDLESS),
    "jobset/simple/paralleljobs.yaml": warned(ENDLESS),
    "kubeflow-trainer/training-operator-v1/pytorch_job_mnist_nccl.yaml": warned(ENDLESS),
    # a TrainJob alone: the trainer's webhook refuses it until its runtime exists (the scenario has both)
    "kubeflow-trainer/v2/01-multi-node.yaml": refused(
        'spec.runtimeRef.name: Invalid value: "torch-distributed": no ClusterTrainingRuntime of that name'
    ),
    "kubeflow-trainer/v2/torch_distributed.yaml": accepted(),
    "kueue/admission-fs/admission-fair-sharing-setup.yaml": warned("spec.admissionScope " + NOT_MODELLED),
    # Jobs named by generateName
    "kueue/dra/sample-dra-rct-job.yaml": warned(ENDLESS),
    "kueue/getting-started/quick-start-setup.yaml": accepted(),
    "kueue/jobs/ray-job-sample.yaml": warned(ENDLESS),
    "kueue/jobs/sample-job.yaml": warned(ENDLESS),
    "kueue/jobs/sample-jobset.yaml": warned(ENDLESS),
    # the MPI Operator v2's MPIJob: its TTL after finishing is not modelled
    "kueue/jobs/sample-mpijob.yaml": warned("spec.runPolicy.ttlSecondsAfterFinished " + NOT_MODELLED),
    "kueue/jobs/sample-pytorchjob.yaml": warned(ENDLESS),
    "kueue/kueueviz-examples/00-resource-flavor.yaml": accepted(),
    # borrowWithinCohort and flavorFungibility (MayStopSearch, MayStopSearch) are read; the flavor lives
    # in another file
    "kueue/kueueviz-examples/01-cluster-queues.yaml": warned('no ResourceFlavor "default-flavor"'),
    "kueue/kueueviz-examples/01.5-cohorts.yaml": accepted(),
    "kueue/kueueviz-examples/07-workload-priority-classes.yaml": accepted(),
    "kueue/pods-kueue/kueue-pod-group.yaml": warned(ENDLESS),
    "kueue/serving-workloads/sample-hami.yaml": accepted(),
    "kueue/serving-workloads/sample-leaderworkerset.yaml": accepted(),
    "kueue/tas/sample-gpu-queues.yaml": accepted(),
    "kueue/tas/sample-job-required.yaml": warned("(Job/default/tas-sample-required", ENDLESS),
    "kueue/v1beta1/single-clusterqueue-setup.yaml": accepted(),
    "kwok/injectfailure/failed-pod.yaml": accepted(),
    "kwok/injectfailure/virtual-gpu-node.yaml": warned("AggregatedNodeHealth=True " + NOT_MODELLED),
    # read alone, the HPA's LeaderWorkerSet is not there (lws-hpa, with lws.yaml, scales it)
    "lws/sample/horizontal-pod-autoscaler.yaml": warned(
        "leaderworkerset.x-k8s.io/v1/LeaderWorkerSet default/leaderworkerset-sample is not a Deployment"
    ),
    "lws/sample/lws.yaml": accepted(),
    "lws/vllm/GPU/lws.yaml": warned("kind v1/Service " + NOT_MODELLED),
    "mig-parted/deployments/container/nvidia-mig-manager-example.yaml": warned(
        "kind rbac.authorization.k8s.io/v1/ClusterRole " + NOT_MODELLED
    ),
    # scheduler-plugins: plugins gpufleet does not model are named as such, not as unknown
    "scheduler-plugins/capacityscheduling/scheduler-config.yaml": warned('plugin "CapacityScheduling"'),
    "scheduler-plugins/coscheduling/scheduler-config.yaml": warned("leaderElection " + NOT_MODELLED),
    # an apps/v1 ReplicaSet whose pods form a PodGroup
    "scheduler-plugins/coscheduling-readme-podgroup-replicaset.yaml": accepted(),
    "scheduler-plugins/noderesources/scheduler-config.yaml": warned('plugin "NodeResourcesAllocatable"'),
    "scheduler-plugins/noderesourcetopology/scheduler-config-v1beta1.yaml": refused(
        "kind KubeSchedulerConfiguration is not served in kubescheduler.config.k8s.io/v1beta1"
    ),
    # Volcano: its Job (batch.volcano.sh), PodGroup and Queue (scheduling.volcano.sh) are modelled
    "volcano/MindSpore-example/mindspore_gpu/mindspore-gpu.yaml": warned(ENDLESS),
    "volcano/deployment/deployment.yaml": accepted(),
    "volcano/deployment/queue.yaml": warned("spec.weight " + NOT_MODELLED),
    "volcano/job.yaml": warned(ENDLESS),
    "volcano/kubecon-2019-china/task-priority/high-priority.yaml": refused(
        "kind PriorityClass is not served in scheduling.k8s.io/v1beta1"
    ),
    "volcano/staging/src/volcano.sh/apis/artifacts/podgroup.yaml": accepted(),
}


def _manifests() -> list[str]:
    suffixes = (".yaml", ".yml", ".json")
    return sorted(str(p.relative_to(UPSTREAM)) for p in UPSTREAM.rglob("*") if p.suffix in suffixes)


def _outcome(paths: list[Path]) -> tuple[str, list[str]]:
    try:
        warnings = load_scenario(paths).warnings
    except ScenarioError as err:
        return REFUSED, list(err.problems)
    return (WARNED if warnings else ACCEPTED), warnings


def test_every_upstream_manifest_has_an_expected_outcome() -> None:
    assert _manifests() == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_upstream_manifest_loads_with_its_expected_outcome(name: str) -> None:
    outcome, lines = _outcome([UPSTREAM / name])
    expect = EXPECTED[name]
    assert outcome in expect.outcomes, lines
    for fragment in expect.fragments:
        assert any(fragment in line for line in lines), (fragment, lines)
    for line in lines:  # one line each, naming the file and the document
        assert "\n" not in line and line.startswith(f"{UPSTREAM / name}: document "), line


def _scenarios() -> list[tuple[str, list[str]]]:
    if not UPSTREAM.is_dir():
        return []
    rows = (line.split("|") for line in (UPSTREAM / "SCENARIOS.txt").read_text().splitlines())
    return [
        (name, paths.split()) for name, paths in (r for r in rows if len(r) == 2 and not r[0].startswith("#"))
    ]


@pytest.mark.parametrize(("name", "paths"), _scenarios())
def test_upstream_scenario_validates(name: str, paths: list[str]) -> None:
    outcome, lines = _outcome([UPSTREAM / p for p in paths])
    assert outcome != REFUSED, lines
