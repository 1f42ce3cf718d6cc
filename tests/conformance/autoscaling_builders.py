"""Builders for the autoscaling conformance tests: upstream's mock objects as gpufleet specs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gpufleet.autoscaling.hpa_controller import (
    HorizontalAutoscaler,
    HPAControllerConfig,
    ScaleDecision,
    TimestampedRecommendation,
    TimestampedScaleEvent,
)
from gpufleet.autoscaling.hpa_replicas import (
    ConditionStatus,
    HPAPod,
    MetricObservation,
    MetricReplicas,
    PodMetric,
    PodPhase,
    ReplicaCalculator,
    Tolerances,
)
from gpufleet.autoscaling.keda_scaled_job import scaling_decision
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerSpec,
    HPAScalingPolicy,
    HPAScalingRules,
    MetricSpec,
    MetricTarget,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
)
from gpufleet.model.keda import RedisListScaler, ScaledJobSpec, ScaleTrigger, ScalingStrategy
from gpufleet.model.quantity import parse_quantity

#: the Deployment the KEDA scaler tables' ScaledObjects scale (``web``, one container ``server``)
SCALED_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "server", "image": "server:1"}]},
        },
    },
}


def scaled_job(
    min_replica_count: int = 0, max_replica_count: int | None = None, strategy: ScalingStrategy | None = None
) -> ScaledJobSpec:
    """A ScaledJob with one redis trigger, like KEDA's ``getMockScaledJob*`` (the trigger is unused)."""
    return ScaledJobSpec(
        name="azure-storage-queue-consumer",
        namespace="default",
        job_target_ref="azure-storage-queue-consumer",
        triggers=(ScaleTrigger(RedisListScaler("queue")),),
        min_replica_count=min_replica_count,
        max_replica_count=max_replica_count,
        scaling_strategy=strategy or ScalingStrategy(),
    )


def scaled_job_decision(
    min_replica_count: int, max_replica_count: int, running: int, scale_to: int, max_scale: int
) -> tuple[int, int]:
    """``getScalingDecision`` with no pending Jobs on a default-strategy ScaledJob."""
    spec = scaled_job(min_replica_count, max_replica_count)
    return scaling_decision(spec, running, 0, scale_to, max_scale)


# --- kube-controller-manager's replica calculator fixture (replica_calculator_test.go) ------------

#: ``numContainersPerPod``: every upstream pod has two containers that each request and report a level.
CONTAINERS = 2
MAX_INT64 = 2**63 - 1
MAX_INT32 = 2**31 - 1
#: ``defaultTestingTolerance``.
TOLERANCE = 0.1
#: upstream's ``time.Now()``; Go's zero time (unset start times, sample timestamps) is 0.
NOW = 10_000.0
#: ``hotCPUCreationTime()``: now; ``coolCPUCreationTime()``: three minutes ago.
HOT = NOW
COOL = NOW - 180.0
#: ``defaultTestingCPUInitializationPeriod`` (2 min), ``defaultTestingDelayOfInitialReadinessStatus`` (10 s).
CALCULATOR = ReplicaCalculator(cpu_initialization_period=120.0, delay_of_initial_readiness_status=10.0)


def q(text: str) -> int:
    """``resource.MustParse``, as a milli-value."""
    return int(parse_quantity(text) * 1000)


def pod_levels(*levels: int) -> list[list[int]]:
    """``makePodMetricLevels``: each pod's level reported by each of its containers."""
    return [[level] * CONTAINERS for level in levels]


def error(message: str) -> str:
    """``fmt.Errorf``: the text the error must contain."""
    return message


def selector(match_labels: dict[str, str]) -> dict[str, str]:
    """``&metav1.LabelSelector{MatchLabels: ...}`` (gpufleet takes the series it returns)."""
    return match_labels


def object_ref(Kind: str, Name: str, APIVersion: str) -> tuple[str, str, str]:
    """``&autoscalingv2.CrossVersionObjectReference{...}``."""
    return Kind, Name, APIVersion


def tolerances(scale_down: float, scale_up: float) -> Tolerances:
    """``&Tolerances{scaleDown, scaleUp}``."""
    return Tolerances(scale_down=scale_down, scale_up=scale_up)


@dataclass
class ResourceInfo:
    """``resourceInfo``."""

    name: str
    requests: list[int] = field(default_factory=list)
    levels: list[list[int]] = field(default_factory=list)
    podNames: list[str] = field(default_factory=list)
    targetUtilization: int = 0
    expectedUtilization: int = 0
    expectedValue: int = 0


@dataclass
class MetricInfo:
    """``metricInfo``."""

    name: str
    #: Go's zero value of ``metricType`` is ``objectMetric``.
    metricType: str = "objectMetric"
    levels: list[int] = field(default_factory=list)
    singleObject: tuple[str, str, str] | None = None
    selector: dict[str, str] | None = None
    targetUsage: int = 0
    perPodTargetUsage: int = 0
    expectedUsage: int = 0


@dataclass
class ReplicaCalcTestCase:
    """``replicaCalcTestCase``; :func:`run_replica_calc` is its ``runTest``."""

    currentReplicas: int = 0
    expectedReplicas: int = 0
    expectedError: str | None = None
    tolerances: Tolerances | None = None
    resource: ResourceInfo | None = None
    metric: MetricInfo | None = None
    container: str = ""
    podReadiness: list[ConditionStatus] | None = None
    podStartTime: list[float] | None = None
    podPhase: list[PodPhase] | None = None
    podDeletionTimestamp: list[bool] | None = None


case = ReplicaCalcTestCase
resource_info = ResourceInfo
metric_info = MetricInfo


def _pods(tc: ReplicaCalcTestCase) -> list[HPAPod]:
    """``prepareTestClientSet``: ``currentReplicas`` pods (more when ``podPhase`` lists more), Running and
    Ready unless told, each container requesting the resource's request."""
    count = max(tc.currentReplicas, len(tc.podPhase or []))
    pods = []
    for i in range(count):
        requests: dict[str, int] = {}
        if tc.resource is not None and i < len(tc.resource.requests):
            requests[tc.resource.name] = CONTAINERS * tc.resource.requests[i]
        pods.append(
            HPAPod(
                f"test-pod-{i}",
                phase=tc.podPhase[i] if tc.podPhase else "Running",
                ready=tc.podReadiness[i] if tc.podReadiness and i < len(tc.podReadiness) else "True",
                start_time=tc.podStartTime[i] if tc.podStartTime else 0.0,
                deleting=tc.podDeletionTimestamp[i] if tc.podDeletionTimestamp else False,
                requests=requests,
            )
        )
    return pods


def run_replica_calc(tc: ReplicaCalcTestCase) -> tuple[int, ...]:
    """``runTest``: (replicas, utilization, raw value) of a resource case, (replicas, usage) of a metric
    case; a :class:`ReplicaCalculationError` propagates."""
    tol = tc.tolerances or Tolerances(TOLERANCE, TOLERANCE)
    pods = _pods(tc)
    if tc.resource is not None:
        res = tc.resource
        metrics = {
            (res.podNames[i] if i < len(res.podNames) else f"test-pod-{i}"): PodMetric(sum(levels))
            for i, levels in enumerate(res.levels)
        }
        out = CALCULATOR.get_resource_replicas(
            tc.currentReplicas,
            res.targetUtilization,
            res.name,
            pods=pods,
            metrics=metrics,
            now=NOW,
            tolerances=tol,
        )
        return out.replicas, out.utilization, out.raw_utilization
    metric = tc.metric
    assert metric is not None
    result: MetricReplicas
    if metric.metricType == "objectMetric":
        result = CALCULATOR.get_object_metric_replicas(
            tc.currentReplicas, metric.targetUsage, metric.levels[0], pods=pods, tolerances=tol
        )
    elif metric.metricType == "objectPerPodMetric":
        result = CALCULATOR.get_object_per_pod_metric_replicas(
            tc.currentReplicas, metric.perPodTargetUsage, metric.levels[0], tolerances=tol
        )
    elif metric.metricType == "externalMetric":
        result = CALCULATOR.get_external_metric_replicas(
            tc.currentReplicas, metric.targetUsage, metric.name, metric.levels, pods=pods, tolerances=tol
        )
    elif metric.metricType == "externalPerPodMetric":
        result = CALCULATOR.get_external_per_pod_metric_replicas(
            tc.currentReplicas, metric.perPodTargetUsage, metric.name, metric.levels, tolerances=tol
        )
    else:
        samples = {f"test-pod-{i}": PodMetric(level) for i, level in enumerate(metric.levels)}
        result = CALCULATOR.get_metric_replicas(
            tc.currentReplicas,
            metric.targetUsage,
            metric.name,
            pods=pods,
            metrics=samples,
            now=NOW,
            tolerances=tol,
        )
    return result.replicas, result.usage


def expected_replica_calc(tc: ReplicaCalcTestCase) -> tuple[int, ...]:
    if tc.resource is not None:
        return tc.expectedReplicas, tc.resource.expectedUtilization, tc.resource.expectedValue
    assert tc.metric is not None
    return tc.expectedReplicas, tc.metric.expectedUsage


# --- the horizontal controller's fixtures (horizontal_test.go) -------------------------------------


def generate_scaling_rules(
    pods: int, pods_period: int, percent: int, percent_period: int, stabilization_window: int
) -> HPAScalingRules:
    """``generateScalingRules``: selectPolicy Max, a Pods and a Percent policy where non-zero."""
    policies = []
    if pods != 0:
        policies.append(HPAScalingPolicy("Pods", pods, pods_period))
    if percent != 0:
        policies.append(HPAScalingPolicy("Percent", percent, percent_period))
    return HPAScalingRules(stabilization_window, "Max", tuple(policies) or None)


def generate_events_uniform_distribution(
    raw_events: list[int], period_seconds: int
) -> list[TimestampedScaleEvent]:
    """``generateEventsUniformDistribution``: the events spread over the last ``period_seconds``, each in the
    middle of its segment (``time.Duration`` of the float truncates to whole seconds)."""
    segment = period_seconds / len(raw_events)
    return [
        TimestampedScaleEvent(change, NOW - int(period_seconds - segment * (i + 1) + segment / 2))
        for i, change in enumerate(raw_events)
    ]


def ev(replica_change: int, timestamp: float, outdated: bool) -> TimestampedScaleEvent:
    """``timestampedScaleEvent{replicaChange, timestamp, outdated}``."""
    return TimestampedScaleEvent(replica_change, timestamp, outdated)


def rec(recommendation: int, timestamp: float) -> TimestampedRecommendation:
    """``timestampedRecommendation{recommendation, timestamp}``."""
    return TimestampedRecommendation(recommendation, timestamp)


@dataclass
class ControllerTestCase:
    """horizontal_test.go's ``testCase``, the fields its cases set to build the HPA, pods and metrics
    (their ``expectedConditions`` are kept beside, in the test module; the monitor labels are not
    compared)."""

    minReplicas: int
    maxReplicas: int
    specReplicas: int
    statusReplicas: int
    expectedDesiredReplicas: int
    CPUTarget: int = 0
    reportedLevels: list[int] = field(default_factory=list)
    #: None (Go nil): ``statusReplicas`` pods of 1 CPU; a list, even empty: one pod per request.
    reportedCPURequests: list[int] | None = None
    reportedPodReadiness: list[ConditionStatus] | None = None
    reportedPodStartTime: list[float] | None = None
    reportedPodPhase: list[PodPhase] | None = None
    reportedPodDeletionTimestamp: list[bool] | None = None
    scaleUpRules: HPAScalingRules | None = None
    scaleDownRules: HPAScalingRules | None = None
    #: None: the controller has not seen the HPA; a list (even empty): its history.
    recommendations: list[TimestampedRecommendation] | None = None
    useMetricsAPI: bool = False
    #: ``metricsTarget``'s one metric (after the CPU one when ``CPUTarget`` is set); the fake custom and
    #: external metrics clients answer it from ``reportedLevels`` (per pod; the first; all of them).
    metric: MetricSpec | None = None
    #: the test prepends a failing reactor to the metric's client
    metricFails: bool = False
    #: ``TestConditionFailedGetMetrics``: failing reactors prepended to every metrics client, the resource
    #: metrics client included
    metricsClientsFail: bool = False
    #: the ``HPAConfigurableTolerance`` gate, as ``SetFeatureGateDuringTest`` sets it
    configurableToleranceGate: bool = False


controller_case = ControllerTestCase

#: ``setupController``: a 5 min downscale window, the testing tolerance and CPU periods, and the test
#: package's ``scaleUpLimitFactor = 8``.
CONTROLLER_CONFIG = HPAControllerConfig(
    tolerance=TOLERANCE,
    downscale_stabilization_window=300.0,
    cpu_initialization_period=120.0,
    initial_readiness_delay=10.0,
    scale_up_limit_factor=8.0,
    hpa_scale_to_zero=True,  # the controller tests skip the API server's validation
)


def _observation(tc: ControllerTestCase, metric: MetricSpec) -> MetricObservation:
    """What the fake metrics clients of ``prepareTestClient`` answer for ``metric``."""
    if tc.metricsClientsFail:
        return None
    if isinstance(metric, ResourceMetricSource):
        # each of the two containers reports half the level (an integer division), sampled now
        return {
            f"test-pod-{i}": PodMetric(CONTAINERS * (level // CONTAINERS), NOW, 60.0)
            for i, level in enumerate(tc.reportedLevels)
        }
    if tc.metricFails:
        return None
    if isinstance(metric, PodsMetricSource):
        return {f"test-pod-{i}": PodMetric(level, NOW) for i, level in enumerate(tc.reportedLevels)}
    if isinstance(metric, ObjectMetricSource):
        return tc.reportedLevels[0]
    return list(tc.reportedLevels)


def reconcile_controller_case(tc: ControllerTestCase, controlling_hpas: Sequence[str] = ()) -> ScaleDecision:
    """One ``reconcileAutoscaler`` of ``prepareTestClient``'s HPA (a CPU Utilization target on a
    ReplicationController), pods and pod metrics; ``controlling_hpas``: the HPAs the controller's
    ``hpaSelectors`` find selecting those pods."""
    behavior = None
    if tc.scaleUpRules is not None or tc.scaleDownRules is not None:
        behavior = HorizontalPodAutoscalerBehavior(tc.scaleUpRules, tc.scaleDownRules)
    metrics: list[MetricSpec] = []
    if tc.CPUTarget > 0:
        metrics.append(
            ResourceMetricSource("cpu", MetricTarget("Utilization", average_utilization=tc.CPUTarget))
        )
    if tc.metric is not None:
        metrics.append(tc.metric)
    spec = HorizontalPodAutoscalerSpec(
        CrossVersionObjectReference("ReplicationController", "test-rc"),
        tc.maxReplicas,
        tc.minReplicas,
        tuple(metrics),
        behavior,
    )
    requests = tc.reportedCPURequests
    count = tc.statusReplicas if requests is None else len(requests)
    pods = []
    for i in range(count):
        start = tc.reportedPodStartTime[i] if tc.reportedPodStartTime else 0.0
        request = requests[i] if requests is not None else 1000
        pods.append(
            HPAPod(
                f"test-pod-{i}",
                phase=tc.reportedPodPhase[i] if tc.reportedPodPhase else "Running",
                ready=tc.reportedPodReadiness[i] if tc.reportedPodReadiness else "True",
                ready_transition_time=start,
                start_time=start,
                deleting=tc.reportedPodDeletionTimestamp[i] if tc.reportedPodDeletionTimestamp else False,
                requests={"cpu": CONTAINERS * (request // CONTAINERS)},
            )
        )
    config = replace(CONTROLLER_CONFIG, hpa_configurable_tolerance=tc.configurableToleranceGate)
    hpa = HorizontalAutoscaler(spec, config, tc.recommendations)
    return hpa.reconcile(
        NOW,
        spec_replicas=tc.specReplicas,
        status_replicas=tc.statusReplicas,
        pods=pods,
        observations=[_observation(tc, m) for m in spec.effective_metrics()],
        controlling_hpas=controlling_hpas,
    )
