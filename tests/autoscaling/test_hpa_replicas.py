"""Replica calculation, ported from kubernetes/kubernetes
pkg/controller/podautoscaler/replica_calculator_test.go.

Each test names the upstream test (``TestReplicaCalc...`` and, in the current file layout, its subtest).
Upstream pods have two containers that each request and report the given value; here the pod-level
request and sample are one container's, which leaves every ratio and utilization percent unchanged and
halves the raw average value. Times follow the upstream fixture: the calculator runs with the testing
periods (``defaultTestingCPUInitializationPeriod`` 2 min, ``defaultTestingDelayOfInitialReadinessStatus``
10 s), pods started and samples were taken at "time zero", long before ``NOW``, and a "hot CPU" pod
started within the initialization period.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from gpufleet.autoscaling.hpa_replicas import (
    ConditionStatus,
    HPAPod,
    InvalidMetricsError,
    PodMetric,
    PodPhase,
    ReplicaCalculationError,
    ReplicaCalculator,
    Tolerances,
    compute_replicas_for_metrics,
)
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    ExternalMetricSource,
    HorizontalPodAutoscalerSpec,
    MetricIdentifier,
    MetricTarget,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
    milli_value,
)

NOW = 10_000.0
HOT = NOW - 60.0  # hotCPUCreationTime: started within the 2 min initialization period
COOL = NOW - 180.0  # coolCPUCreationTime: started before it
CALC = ReplicaCalculator(cpu_initialization_period=120.0, delay_of_initial_readiness_status=10.0)
DEFAULT_TOLERANCES = Tolerances()
ONE_PERCENT_UP = Tolerances(scale_down=0.1, scale_up=0.01)


def make_pods(
    n: int,
    *,
    requests: Sequence[int] | None = None,
    readiness: Sequence[ConditionStatus] | None = None,
    phases: Sequence[PodPhase] | None = None,
    starts: Sequence[float] | None = None,
    deleting: Sequence[bool] | None = None,
) -> list[HPAPod]:
    """The upstream fixture: ``test-pod-i``, Running and Ready, started at time zero, 1 CPU each."""
    return [
        HPAPod(
            f"test-pod-{i}",
            phase=phases[i] if phases else "Running",
            ready=readiness[i] if readiness else "True",
            start_time=starts[i] if starts else 0.0,
            deleting=deleting[i] if deleting else False,
            requests={"cpu": requests[i] if requests else 1000},
        )
        for i in range(n)
    ]


def samples(*levels: int) -> dict[str, PodMetric]:
    return {f"test-pod-{i}": PodMetric(level) for i, level in enumerate(levels)}


def cpu(
    current: int,
    target: int,
    pods: Sequence[HPAPod],
    metrics: dict[str, PodMetric],
    tol: Tolerances = DEFAULT_TOLERANCES,
) -> tuple[int, int, int]:
    result = CALC.get_resource_replicas(
        current, target, "cpu", pods=pods, metrics=metrics, now=NOW, tolerances=tol
    )
    return result.replicas, result.utilization, result.raw_utilization


# --- Resource (CPU utilization) ----------------------------------------------------------------------


def test_replica_calc_scale_up() -> None:
    """TestReplicaCalcScaleUp (TestReplicaCalcResourceScale/"scale up")."""
    assert cpu(3, 30, make_pods(3), samples(300, 500, 700)) == (5, 50, 500)


def test_replica_calc_scale_up_unready_less_scale() -> None:
    """TestReplicaCalcScaleUpUnreadyLessScale ("scale up: unready pod scales less"): the unready pod's
    sample is dropped and it counts as 0 % on the scale-up."""
    pods = make_pods(3, readiness=["False", "True", "True"])
    assert cpu(3, 30, pods, samples(300, 500, 700)) == (4, 60, 600)


def test_replica_calc_scale_up_hot_cpu_less_scale() -> None:
    """TestReplicaCalcScaleUpHotCpuLessScale ("scale up: hot-CPU pod scales less"): a pod within the CPU
    initialization period whose sample predates one window after its readiness transition is unready."""
    pods = make_pods(3, starts=[HOT, COOL, COOL])
    assert cpu(3, 30, pods, samples(300, 500, 700)) == (4, 60, 600)


def test_replica_calc_scale_up_unready_no_scale() -> None:
    """TestReplicaCalcScaleUpUnreadyNoScale ("no scale: unready pods ignored"): counting the unready pods
    as 0 % flips the direction, so the count stays."""
    pods = make_pods(3, readiness=["True", "False", "False"])
    assert cpu(3, 30, pods, samples(400, 500, 700)) == (3, 40, 400)


def test_replica_calc_scale_hot_cpu_no_scale() -> None:
    """TestReplicaCalcScaleHotCpuNoScale ("no scale: hot-CPU pods ignored")."""
    pods = make_pods(3, readiness=["True", "False", "False"], starts=[COOL, HOT, HOT])
    assert cpu(3, 30, pods, samples(400, 500, 700)) == (3, 40, 400)


def test_replica_calc_scale_up_ignores_failed_and_deleted_pods() -> None:
    """TestReplicaCalcScaleUpIgnoresFailedPods and TestReplicaCalcScaleUpIgnoresDeletionPods ("scale up:
    failed pods ignored", "scale up: pods being deleted are ignored")."""
    failed = make_pods(
        4, readiness=["True", "True", "False", "False"], phases=["Running", "Running", "Failed", "Failed"]
    )
    assert cpu(2, 30, failed, samples(500, 700)) == (4, 60, 600)
    deleted = make_pods(4, readiness=["True", "True", "False", "False"], deleting=[False, False, True, True])
    assert cpu(2, 30, deleted, samples(500, 700)) == (4, 60, 600)


def test_replica_calc_scale_down() -> None:
    """TestReplicaCalcScaleDown ("scale down")."""
    assert cpu(5, 50, make_pods(5), samples(100, 300, 500, 250, 250)) == (3, 28, 280)


def test_replica_calc_scale_down_excludes_unready_unscheduled_and_hot_pods() -> None:
    """TestReplicaCalcResourceScale/"scale down: exclude unready pods", "scale down: exclude unscheduled
    pods" (Pending pods are unready, not missing) and "scale down: ignore hot-CPU pods"."""
    unready = make_pods(5, readiness=["True", "True", "True", "False", "False"])
    assert cpu(5, 50, unready, samples(100, 300, 500, 250, 250)) == (2, 30, 300)
    pending = make_pods(
        5,
        readiness=["True", "False", "False", "False", "False"],
        phases=["Running", "Pending", "Pending", "Pending", "Pending"],
    )
    assert cpu(5, 50, pending, samples(100)) == (1, 10, 100)
    hot = make_pods(5, starts=[COOL, COOL, COOL, HOT, HOT])
    assert cpu(5, 50, hot, samples(100, 300, 500, 250, 250)) == (2, 30, 300)


@pytest.mark.parametrize(
    ("name", "tolerances", "levels", "expected"),
    [
        ("within default tolerance", Tolerances(), (1010, 1030, 1020), (3, 102, 1020)),
        ("outside 0% tolerance", Tolerances(0.0, 0.0), (909, 1010, 1111), (4, 101, 1010)),
        ("within 200% scale-up tolerance", Tolerances(0.1, 2.0), (1890, 1910, 1900), (3, 190, 1900)),
        ("outside 8% scale-up tolerance", Tolerances(2.0, 0.08), (1100, 1080, 1090), (4, 109, 1090)),
        ("within 36% scale-down tolerance", Tolerances(0.36, 0.1), (660, 640, 650), (3, 65, 650)),
        ("outside 34% scale-down tolerance", Tolerances(0.34, 0.1), (660, 640, 650), (2, 65, 650)),
    ],
)
def test_replica_calc_tolerance(
    name: str, tolerances: Tolerances, levels: tuple[int, int, int], expected: tuple[int, int, int]
) -> None:
    """TestReplicaCalcTolerance / TestReplicaCalcResourceTolerance: the dead band ``1 - down <= ratio <=
    1 + up`` (per-direction tolerances are the 1.33+ ``Tolerances``)."""
    pods = make_pods(3, requests=[900, 1000, 1100])
    assert cpu(3, 100, pods, samples(*levels), tolerances) == expected, name


def test_replica_calc_computed_tolerance_alg_implementation() -> None:
    """TestReplicaCalcComputedToleranceAlgImplementation: a target just outside the tolerance scales
    10 -> 9; one just inside keeps 10."""
    start_pods = 10
    total_used = start_pods * 150
    total_requested = 2 * total_used
    requested_to_used = float(total_requested // total_used)
    per_pod = total_requested // start_pods
    offsets = (100, -100, 10, -10, 2, -2, 1, -1, 0, 0)
    pods = make_pods(start_pods, requests=[per_pod + o for o in offsets])
    metrics = samples(*[total_used // 10] * 10)
    target = abs(1 / (requested_to_used * (1 - 0.1))) + 0.01
    final_pods = math.ceil(total_used / (total_requested * target) * start_pods)
    assert final_pods == 9
    assert cpu(start_pods, int(target * 100), pods, metrics)[0] == final_pods
    target = abs(1 / (requested_to_used * (1 - 0.1))) + 0.004
    assert cpu(start_pods, int(target * 100), pods, metrics)[0] == start_pods


# --- missing metrics ---------------------------------------------------------------------------------


def test_replica_calc_superfluous_metrics() -> None:
    """TestReplicaCalcSuperfluousMetrics ("superfluous metrics counted"): samples of pods outside the pod
    list are skipped by the utilization, the ready count is the pods'."""
    assert cpu(4, 100, make_pods(4), samples(4000, 9500, 3000, 7000, 3200, 2000)) == (24, 587, 5875)


def test_replica_calc_missing_metrics_scale_down() -> None:
    """TestReplicaCalcMissingMetrics ("some pods missing metrics scales down"): on a scale-down the
    pods without a sample count as 100 % of their request."""
    assert cpu(4, 100, make_pods(4), samples(400, 95)) == (3, 24, 247)


@pytest.mark.parametrize(
    ("name", "level", "expected"),
    [
        ("TestReplicaCalcMissingMetricsNoChangeEq", 1000, (2, 100, 1000)),
        ("TestReplicaCalcMissingMetricsNoChangeGt", 1900, (2, 190, 1900)),
        ("TestReplicaCalcMissingMetricsNoChangeLt", 600, (2, 60, 600)),
    ],
)
def test_replica_calc_missing_metrics_no_change(
    name: str, level: int, expected: tuple[int, int, int]
) -> None:
    """TestReplicaCalcMissingMetricsNoChange{Eq,Gt,Lt}: one of two pods has no sample; filling it in
    (nothing at exactly 100 %, 0 above, its request below) leaves the count at 2."""
    assert cpu(2, 100, make_pods(2), samples(level)) == expected, name


def test_replica_calc_missing_metrics_unready() -> None:
    """TestReplicaCalcMissingMetricsUnreadyChange / UnreadyScaleUp / UnreadyScaleDown and
    ScaleDownTargetOver100 ("no change: unready pod metric missing", "scale up: unready pod metric
    missing", "scale down: unready pod metric missing", "scale down: target over 100": a missing pod
    counts as ``max(100, target)`` % of its request)."""
    unready_first = make_pods(3, readiness=["False", "True", "True"])
    assert cpu(3, 50, unready_first, samples(100, 450)) == (3, 45, 450)
    assert cpu(3, 50, unready_first, samples(100, 2000)) == (4, 200, 2000)
    four = make_pods(4, readiness=["False", "True", "True", "True"])
    assert cpu(4, 50, four, samples(100, 100, 100)) == (3, 10, 100)
    mixed = make_pods(4, readiness=["False", "True", "True", "True"], requests=[1000, 1000, 2000, 2000])
    assert cpu(4, 300, mixed, samples(200, 100, 100)) == (2, 6, 100)


def test_replica_calc_during_rolling_update_with_max_surge() -> None:
    """TestReplicaCalcDuringRollingUpdateWithMaxSurge and ...MaxSurgeCM ("rolling update with maxSurge:
    extra pod missing metric"): the surge pod without a sample would push ``ceil(ratio * samples)``
    above the current count on a scale-down, so the count stays."""
    assert cpu(2, 50, make_pods(3), samples(100, 100)) == (2, 10, 100)
    result = CALC.get_metric_replicas(
        2, 17000, "qps", pods=make_pods(3), metrics=samples(10000, 10000), now=NOW
    )
    assert (result.replicas, result.usage) == (2, 10000)


@pytest.mark.parametrize(
    ("name", "pods", "metrics", "message"),
    [
        (
            "disjoint pod and metric names",
            make_pods(1),
            {"an-older-pod-name": PodMetric(100)},
            "no metrics returned matched known pods",
        ),
        (
            "no metrics returned from metrics API",
            make_pods(3),
            {},
            "unable to get metrics for resource cpu: no metrics returned from resource metrics API",
        ),
        ("missing CPU request on container", [HPAPod("test-pod-0")], samples(200), "missing request for cpu"),
    ],
)
def test_replica_calc_errors(
    name: str, pods: list[HPAPod], metrics: dict[str, PodMetric], message: str
) -> None:
    """TestReplicaCalcEmptyMetrics, TestReplicaCalcEmptyCPURequest and TestReplicaCalcResourceMissingMetrics/
    "disjoint pod and metric names"."""
    with pytest.raises(ReplicaCalculationError, match=message):
        cpu(len(pods), 100, pods, metrics)


# --- Pods metrics (AverageValue) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "current", "readiness", "starts", "levels", "target", "tol", "expected"),
    [
        ("scale up", 3, None, None, (20000, 10000, 30000), 15000, Tolerances(), (4, 20000)),
        (
            "scale up: unready hot-CPU pod scales less",
            3,
            ["True", "True", "False"],
            [COOL, COOL, HOT],
            (50000, 10000, 30000),
            15000,
            Tolerances(),
            (6, 30000),
        ),
        (
            "scale up: unready hot-CPU pods avoid scale-down",
            3,
            ["False", "True", "False"],
            [HOT, COOL, HOT],
            (50000, 15000, 30000),
            15000,
            Tolerances(),
            (7, 31666),
        ),
        ("scale down", 5, None, None, (12000,) * 5, 20000, Tolerances(), (3, 12000)),
        ("within default tolerance", 3, None, None, (20000, 21000, 21000), 20000, Tolerances(), (3, 20666)),
        (
            "outside configurable 1% tolerance",
            3,
            None,
            None,
            (20000, 21000, 21000),
            20000,
            ONE_PERCENT_UP,
            (4, 20666),
        ),
        ("no change: missing metrics", 5, None, None, (20000, 19000, 21000), 20000, Tolerances(), (5, 20000)),
    ],
)
def test_replica_calc_pod_metric(
    name: str,
    current: int,
    readiness: list[ConditionStatus] | None,
    starts: list[float] | None,
    levels: tuple[int, ...],
    target: int,
    tol: Tolerances,
    expected: tuple[int, int],
) -> None:
    """TestReplicaCalcPodMetric (formerly TestReplicaCalcScaleUpCM, ...UnreadyHotCpuNoLessScale,
    ...UnreadyHotCpuScaleWouldScaleDown, TestReplicaCalcScaleDownCM, TestReplicaCalcToleranceCM,
    TestReplicaCalcMissingMetricsNoChangeCM): readiness never drops a non-CPU sample."""
    pods = make_pods(current, readiness=readiness, starts=starts)
    result = CALC.get_metric_replicas(
        current, target, "qps", pods=pods, metrics=samples(*levels), now=NOW, tolerances=tol
    )
    assert (result.replicas, result.usage) == expected, name


# --- Object and External metrics ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "current", "readiness", "usage", "target", "tol", "expected"),
    [
        ("scale up", 3, None, 20000, 15000, Tolerances(), 4),
        ("scale up: ignores unready pods", 3, ["False", "True", "False"], 50000, 10000, Tolerances(), 5),
        ("scale down", 5, None, 12000, 20000, Tolerances(), 3),
        ("within default tolerance", 3, None, 20666, 20000, Tolerances(), 3),
        ("outside configurable 1% tolerance", 3, None, 20666, 20000, ONE_PERCENT_UP, 4),
    ],
)
def test_replica_calc_object_metric(
    name: str,
    current: int,
    readiness: list[ConditionStatus] | None,
    usage: int,
    target: int,
    tol: Tolerances,
    expected: int,
) -> None:
    """TestReplicaCalcObjectMetric (formerly TestReplicaCalcScaleUpCMObject, ...ObjectIgnoresUnreadyPods,
    TestReplicaCalcScaleDownCMObject, TestReplicaCalcToleranceCMObject): Value target,
    ``ceil(value / target * Running-and-Ready pods)``."""
    pods = make_pods(current, readiness=readiness)
    result = CALC.get_object_metric_replicas(current, target, usage, pods=pods, tolerances=tol)
    assert (result.replicas, result.usage) == (expected, usage), name


@pytest.mark.parametrize(
    ("name", "status", "usage", "target", "tol", "expected"),
    [
        ("scale up", 3, 20000, 5000, Tolerances(), (4, 6667)),
        ("scale down", 5, 6000, 2000, Tolerances(), (3, 1200)),
        ("within default tolerance", 4, 20166, 5000, Tolerances(), (4, 5042)),
        ("outside configurable 1% tolerance", 4, 20208, 5000, ONE_PERCENT_UP, (5, 5052)),
    ],
)
def test_replica_calc_object_per_pod_metric(
    name: str, status: int, usage: int, target: int, tol: Tolerances, expected: tuple[int, int]
) -> None:
    """TestReplicaCalcObjectPerPodMetric (formerly TestReplicaCalcScaleUpCMPerPodObject,
    TestReplicaCalcScaleDownPerPodCMObject, TestReplicaCalcTolerancePerPodCMObject): AverageValue
    target, ``ceil(value / target)``."""
    result = CALC.get_object_per_pod_metric_replicas(status, target, usage, tolerances=tol)
    assert (result.replicas, result.usage) == expected, name


@pytest.mark.parametrize(
    ("name", "current", "readiness", "values", "target", "tol", "expected"),
    [
        ("scale down: ignores unready pods", 3, ["False", "True", "False"], (8600,), 4400, Tolerances(), 2),
        ("scale down", 5, None, (8600,), 14334, Tolerances(), 3),
        ("within default tolerance", 3, None, (8600,), 8888, Tolerances(), 3),
        ("outside configurable 1% tolerance", 3, None, (8900,), 8800, ONE_PERCENT_UP, 4),
        ("sum of the series", 3, None, (4000, 4600), 8888, Tolerances(), 3),
    ],
)
def test_replica_calc_external_metric(
    name: str,
    current: int,
    readiness: list[ConditionStatus] | None,
    values: tuple[int, ...],
    target: int,
    tol: Tolerances,
    expected: int,
) -> None:
    """TestReplicaCalcExternalMetric (formerly TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods,
    TestReplicaCalcScaleDownCMExternal, TestReplicaCalcToleranceCMExternal): Value target over the sum of
    the series, times the Running-and-Ready pods (2 instead of 6 here, upstream's comment says)."""
    pods = make_pods(current, readiness=readiness)
    result = CALC.get_external_metric_replicas(current, target, "qps", values, pods=pods, tolerances=tol)
    assert (result.replicas, result.usage) == (expected, sum(values)), name


@pytest.mark.parametrize(
    ("name", "status", "target", "tol", "expected"),
    [
        ("scale up", 3, 2150, Tolerances(), (4, 2867)),
        ("scale down", 5, 2867, Tolerances(), (3, 1720)),
        ("within default tolerance", 3, 2900, Tolerances(), (3, 2867)),
        ("outside configurable 1% tolerance", 3, 2800, ONE_PERCENT_UP, (4, 2867)),
    ],
)
def test_replica_calc_external_per_pod_metric(
    name: str, status: int, target: int, tol: Tolerances, expected: tuple[int, int]
) -> None:
    """TestReplicaCalcExternalPerPodMetric (formerly TestReplicaCalcScaleUpPerPodCMExternal,
    TestReplicaCalcScaleDownPerPodCMExternal, TestReplicaCalcTolerancePerPodCMExternal): 8600m over the
    target per pod, independent of readiness."""
    result = CALC.get_external_per_pod_metric_replicas(status, target, "qps", (8600,), tolerances=tol)
    assert (result.replicas, result.usage) == expected, name


def test_replica_calc_external_from_zero() -> None:
    """getUsageRatioReplicaCount with zero current replicas (HPAScaleToZero): ``ceil(ratio)``, no tolerance,
    no pods needed."""
    assert CALC.get_external_metric_replicas(0, 1000, "qps", (2500,), pods=[]).replicas == 3
    assert CALC.get_external_metric_replicas(0, 1000, "qps", (0,), pods=[]).replicas == 0


# --- groupPods ---------------------------------------------------------------------------------------


def test_group_pods() -> None:
    """TestGroupPods ("unready a pod without ready condition - CPU", "count in a ready pod with fresh
    metrics during initialization period - CPU", "unready a ready pod without fresh metrics during
    initialization period - CPU", "count in an unready pod that was ready after initialization period
    - CPU", "count in a ready pod - memory"; the never-ready case uses a transition 5 s after start)."""
    no_condition = HPAPod("lucretius", phase="Succeeded", ready=None, start_time=NOW)
    assert CALC.group_pods([no_condition], {"lucretius": PodMetric(1)}, "cpu", NOW).unready == {"lucretius"}
    fresh = HPAPod("bentham", phase="Succeeded", start_time=NOW - 60, ready_transition_time=NOW - 30)
    assert CALC.group_pods([fresh], {"bentham": PodMetric(1, NOW, 30.0)}, "cpu", NOW).ready_pod_count == 1
    assert CALC.group_pods([fresh], {"bentham": PodMetric(1, NOW, 60.0)}, "cpu", NOW).unready == {"bentham"}
    was_ready = HPAPod("lucretius", ready="False", start_time=NOW - 600, ready_transition_time=NOW - 540)
    assert CALC.group_pods([was_ready], {"lucretius": PodMetric(1)}, "cpu", NOW).ready_pod_count == 1
    never_ready = HPAPod("lucretius", ready="False", start_time=NOW - 600, ready_transition_time=NOW - 595)
    assert CALC.group_pods([never_ready], {"lucretius": PodMetric(1)}, "cpu", NOW).unready == {"lucretius"}
    assert CALC.group_pods([never_ready], {"lucretius": PodMetric(1)}, "memory", NOW).ready_pod_count == 1


# --- computeReplicasForMetrics ------------------------------------------------------------------------

QPS = MetricIdentifier("qps")


def spec_with(
    *metrics: ResourceMetricSource | PodsMetricSource | ObjectMetricSource | ExternalMetricSource,
) -> HorizontalPodAutoscalerSpec:
    return HorizontalPodAutoscalerSpec(
        CrossVersionObjectReference("Deployment", "app"), max_replicas=100, metrics=metrics
    )


CPU_30 = ResourceMetricSource("cpu", MetricTarget("Utilization", average_utilization=30))
CPU_50 = ResourceMetricSource("cpu", MetricTarget("Utilization", average_utilization=50))
EXTERNAL_QPS = ExternalMetricSource(QPS, MetricTarget("Value", value=100))


def test_scale_up_one_metric_empty() -> None:
    """horizontal_test.go TestScaleUpOneMetricEmpty: CPU proposes 4 for 3 replicas while the External
    metric fails; a partial outage may still scale up, and the error is reported."""
    proposal = compute_replicas_for_metrics(
        spec_with(CPU_30, EXTERNAL_QPS),
        [samples(300, 400, 500), None],
        spec_replicas=3,
        status_replicas=3,
        pods=make_pods(3),
        now=NOW,
        calculator=CALC,
    )
    assert proposal.replicas == 4
    assert proposal.metric == "cpu resource utilization (percentage of request)"
    assert proposal.errors == (
        "failed to get qps external metric value: failed to get external metric qps: unable to get external "
        "metric qps: no metrics returned from external metrics API",
    )


def test_no_scale_down_one_metric_empty() -> None:
    """horizontal_test.go TestNoScaleDownOneMetricEmpty: CPU proposes a scale-down while the External
    metric fails: the controller must not scale."""
    with pytest.raises(InvalidMetricsError, match=r"invalid metrics \(1 invalid out of 2\)"):
        compute_replicas_for_metrics(
            spec_with(CPU_50, ExternalMetricSource(QPS, MetricTarget("Value", value=1000))),
            [samples(100, 300, 500, 250, 250), None],
            spec_replicas=5,
            status_replicas=5,
            pods=make_pods(5),
            now=NOW,
            calculator=CALC,
        )


def test_scale_up_both_metrics_empty() -> None:
    """horizontal_test.go TestScaleUpBothMetricsEmpty: every metric invalid, no proposal."""
    with pytest.raises(
        InvalidMetricsError, match=r"invalid metrics \(2 invalid out of 2\), first error is: "
    ):
        compute_replicas_for_metrics(
            spec_with(CPU_30, EXTERNAL_QPS),
            [{}, None],
            spec_replicas=3,
            status_replicas=3,
            pods=make_pods(3),
            now=NOW,
        )


def test_multiple_metrics_take_the_max() -> None:
    """computeReplicasForMetrics: the largest proposal wins (CPU 4, Pods 6, Object 5, External 2)."""
    spec = spec_with(
        CPU_30,
        PodsMetricSource(QPS, MetricTarget("AverageValue", average_value=15000)),
        ObjectMetricSource(
            CrossVersionObjectReference("Ingress", "front"),
            MetricIdentifier("rps"),
            MetricTarget("Value", value=10000),
        ),
        ExternalMetricSource(MetricIdentifier("lag"), MetricTarget("AverageValue", average_value=5000)),
    )
    proposal = compute_replicas_for_metrics(
        spec,
        [samples(300, 400, 500), samples(50000, 10000, 30000), 16000, [10000]],
        spec_replicas=3,
        status_replicas=3,
        pods=make_pods(3),
        now=NOW,
        calculator=CALC,
    )
    assert (proposal.replicas, proposal.metric, proposal.errors) == (6, "pods metric qps", ())


def test_default_metric_is_cpu_80_percent() -> None:
    """SetDefaults_HorizontalPodAutoscaler: no metrics means CPU utilization 80 %."""
    spec = HorizontalPodAutoscalerSpec(CrossVersionObjectReference("Deployment", "app"), max_replicas=10)
    proposal = compute_replicas_for_metrics(
        spec, [samples(1000, 1000)], spec_replicas=2, status_replicas=2, pods=make_pods(2), now=NOW
    )
    assert proposal.replicas == 3  # 100 % / 80 % = 1.25 -> ceil(2.5)


def test_seed_004_queue_average_value_gives_12() -> None:
    """Seed 004: 4 replicas, a queue of 30 per replica, target AverageValue 10 -> 12, as a Pods metric
    (``ceil(3.0 * 4 ready pods)``) and as an External metric (KEDA's path, ``ceil(120 / 10)``)."""
    pods = make_pods(4)
    per_pod = {p.name: PodMetric(milli_value(30)) for p in pods}
    as_pods = spec_with(
        PodsMetricSource(MetricIdentifier("queue"), MetricTarget("AverageValue", average_value=10_000))
    )
    proposal = compute_replicas_for_metrics(
        as_pods, [per_pod], spec_replicas=4, status_replicas=4, pods=pods, now=NOW
    )
    assert proposal.replicas == 12
    as_external = spec_with(
        ExternalMetricSource(
            MetricIdentifier("queue"), MetricTarget("AverageValue", average_value=milli_value(10))
        )
    )
    proposal = compute_replicas_for_metrics(
        as_external, [[milli_value(120)]], spec_replicas=4, status_replicas=4, pods=pods, now=NOW
    )
    assert proposal.replicas == 12
