"""The HorizontalPodAutoscaler replica calculation, as Kubernetes 1.34 computes it, as pure functions.

"What would my HPA do for these metrics?": :func:`compute_replicas_for_metrics` takes an
:class:`~gpufleet.model.hpa.HorizontalPodAutoscalerSpec`, the target's pods and one observation per metric,
and returns the replica count the controller proposes before its rate limits and stabilization
(``gpufleet.autoscaling.hpa_controller`` applies those). The per-metric-type calculations are public too.

Mirrors ``kubernetes/kubernetes: pkg/controller/podautoscaler``:

- ``replica_calculator.go``: ``Tolerances.isWithin``, ``ReplicaCalculator.GetResourceReplicas``,
  ``GetRawResourceReplicas``, ``GetMetricReplicas``, ``calcPlainMetricReplicas``, ``GetObjectMetricReplicas``,
  ``getUsageRatioReplicaCount``, ``GetObjectPerPodMetricReplicas``, ``getReadyPodsCount``,
  ``GetExternalMetricReplicas``, ``GetExternalPerPodMetricReplicas``, ``groupPods``, ``calculateRequests``
  and ``removeMetricsForPods``;
- ``metrics/utilization.go``: ``GetResourceUtilizationRatio`` (integer percent) and ``GetMetricUsageRatio``
  (integer milli-value average);
- ``metrics/rest_metrics_client.go``: the "no metrics returned from ... API" errors of an empty answer;
- ``horizontal.go``: ``computeReplicasForMetrics``, ``computeReplicasForMetric`` and the
  ``computeStatusFor{Object,Pods,ResourceGeneric,External}Metric`` dispatch (which replica count each
  metric type starts from: ``scale.spec.replicas``, or ``scale.status.replicas`` for the AverageValue
  targets of Object and External metrics).

All values are milli-values (``int``), as upstream; arithmetic is Go's (integer division truncates, ratios
are float64). Python integers do not overflow; upstream's explicit saturation
(``GetExternalPerPodMetricReplicas``) is reproduced, its silent int32/int64 wrap-arounds elsewhere are not.
A pod's request is what the scheduler counts (``HPAPod.requests``): a pod-level request
(``PodLevelResources``, ``calculatePodLevelRequests``) stands in for its containers' sum. Not modelled:
``ContainerResource`` metrics, label selectors (the caller passes the pods and samples the selectors
would return).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    ExternalMetricSource,
    HorizontalPodAutoscalerSpec,
    MetricSpec,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
)

PodPhase = Literal["Pending", "Running", "Succeeded", "Failed", "Unknown"]
ConditionStatus = Literal["True", "False", "Unknown"]

#: ``--horizontal-pod-autoscaler-tolerance``.
DEFAULT_TOLERANCE = 0.1
#: ``--horizontal-pod-autoscaler-cpu-initialization-period``, seconds.
DEFAULT_CPU_INITIALIZATION_PERIOD = 300.0
#: ``--horizontal-pod-autoscaler-initial-readiness-delay``, seconds.
DEFAULT_INITIAL_READINESS_DELAY = 30.0
_MAX_INT64 = 2**63 - 1
_MAX_INT32 = 2**31 - 1
#: ``metricServerDefaultMetricWindow``: the window of a custom-metric sample that states none, seconds.
DEFAULT_METRIC_WINDOW = 60.0


class ReplicaCalculationError(ValueError):
    """A metric the controller cannot compute a proposal from (upstream's error text). ``condition`` is the
    reason and error of the ``ScalingActive`` condition and Warning event the failure makes
    (``getUnableComputeReplicaCountCondition``), once the metric's type has named it."""

    condition: tuple[str, str] | None = None


@contextmanager
def _prefixed(prefix: str) -> Iterator[None]:
    """Upstream wraps each failure with the step that failed: ``<prefix>: <cause>``."""
    try:
        yield
    except ReplicaCalculationError as err:
        wrapped = ReplicaCalculationError(f"{prefix}: {err}")
        wrapped.condition = err.condition
        raise wrapped from err


@contextmanager
def _unable(reason: str) -> Iterator[None]:
    """``getUnableComputeReplicaCountCondition``: the failure as the metric type's ``reason`` and the error
    as the ``computeStatusFor*Metric`` step has it, before the outer steps' prefixes."""
    try:
        yield
    except ReplicaCalculationError as err:
        if err.condition is None:
            err.condition = (reason, str(err))
        raise


class InvalidMetricsError(ReplicaCalculationError):
    """``computeReplicasForMetrics`` failed: every metric is invalid, or some are and the others would
    scale down. ``condition`` is the first invalid metric's, ``failures`` every invalid metric's;
    ``statuses`` the metrics' current values (None: invalid)."""

    statuses: tuple[MetricStatus | None, ...] = ()
    failures: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class HPAPod:
    """A pod selected by the scale target, as the HPA controller sees it.

    ``ready`` is the status of the ``Ready`` condition (``None``: no such condition) and
    ``ready_transition_time`` its ``lastTransitionTime``; ``start_time`` is ``status.startTime``
    (``None``: unset); ``deleting`` means a ``deletionTimestamp`` is set. ``requests`` maps a resource
    name to the pod's request in milli-units, summed over its containers and restartable init
    containers; a resource missing from it is a container without that request.
    """

    name: str
    phase: PodPhase = "Running"
    ready: ConditionStatus | None = "True"
    ready_transition_time: float = 0.0
    start_time: float | None = 0.0
    deleting: bool = False
    requests: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PodMetric:
    """One pod's sample (``metricsclient.PodMetric``): a milli-value, its timestamp and window."""

    value: int
    timestamp: float = 0.0
    window: float = DEFAULT_METRIC_WINDOW


@dataclass(frozen=True)
class Tolerances:
    """``Tolerances``: no change while ``1 - scale_down <= usage ratio <= 1 + scale_up``."""

    scale_down: float = DEFAULT_TOLERANCE
    scale_up: float = DEFAULT_TOLERANCE

    def is_within(self, usage_ratio: float) -> bool:
        return (1.0 - self.scale_down) <= usage_ratio <= (1.0 + self.scale_up)


@dataclass(frozen=True)
class PodGroups:
    """``groupPods``: the ready count and the unready, missing-sample and ignored pod names."""

    ready_pod_count: int
    unready: frozenset[str]
    missing: frozenset[str]
    ignored: frozenset[str]


@dataclass(frozen=True)
class ResourceReplicas:
    """``GetResourceReplicas``: the proposal, the utilization percent and the raw average (milli)."""

    replicas: int
    utilization: int
    raw_utilization: int


@dataclass(frozen=True)
class MetricReplicas:
    """A proposal and the metric's current value as the HPA status reports it (milli)."""

    replicas: int
    usage: int


@dataclass(frozen=True)
class MetricStatus:
    """One entry of the HPA's ``status.currentMetrics`` (``autoscalingv2.MetricStatus``): the metric's type
    and name and its current value (milli) in the field its target fills (``computeStatusFor*Metric``): a
    ``Value`` target ``value``, an ``AverageValue`` target ``average_value``, a Resource ``Utilization``
    target ``average_utilization`` (percent) and ``average_value`` (the raw average)."""

    type: Literal["Resource", "Pods", "Object", "External"]
    name: str
    value: int | None = None
    average_value: int | None = None
    average_utilization: int | None = None


@dataclass(frozen=True)
class MetricsProposal:
    """``computeReplicasForMetrics``: the largest proposal, the metric that made it, and the errors of
    the metrics that were invalid (non-fatal: a partial outage may still scale up), each metric's current
    value (None: invalid) and the invalid metrics' failures (reason, error: ``condition`` of
    :class:`ReplicaCalculationError`), each a Warning event upstream."""

    replicas: int
    metric: str
    errors: tuple[str, ...] = ()
    statuses: tuple[MetricStatus | None, ...] = ()
    failures: tuple[tuple[str, str], ...] = ()


#: One observation per metric of the spec: a ``Resource`` or ``Pods`` metric takes the samples by pod
#: name, an ``Object`` metric the object's value, an ``External`` metric the values of the returned
#: series (all milli-values). ``None`` means the metrics API returned nothing for that metric, which
#: makes the metric invalid.
MetricObservation = Mapping[str, PodMetric] | int | Sequence[int] | None


def _quo(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def resource_utilization_ratio(
    samples: Mapping[str, int], requests: Mapping[str, int], target_utilization: int
) -> tuple[float, int, int]:
    """``GetResourceUtilizationRatio``: (usage ratio, utilization percent, raw average) over the sampled pods
    that have a request; samples of other pods are skipped."""
    metrics_total = 0
    requests_total = 0
    entries = 0
    for name, value in samples.items():
        request = requests.get(name)
        if request is None:
            continue
        metrics_total += value
        requests_total += request
        entries += 1
    if requests_total == 0:
        raise ReplicaCalculationError("no metrics returned matched known pods")
    utilization = _quo(metrics_total * 100, requests_total)
    return float(utilization) / float(target_utilization), utilization, _quo(metrics_total, entries)


def metric_usage_ratio(samples: Mapping[str, int], target_usage: int) -> tuple[float, int]:
    """``GetMetricUsageRatio``: (usage ratio, average usage) with the average truncated to a milli-value."""
    usage = _quo(sum(samples.values()), len(samples))
    return float(usage) / float(target_usage), usage


def calculate_requests(pods: Sequence[HPAPod], resource: str) -> dict[str, int]:
    """``calculateRequests``: every pod's request for ``resource``; a pod without one is an error."""
    requests: dict[str, int] = {}
    for pod in pods:
        if resource not in pod.requests:
            raise ReplicaCalculationError(f"missing request for {resource} in Pod {pod.name}")
        requests[pod.name] = pod.requests[resource]
    return requests


def ready_pods_count(pods: Sequence[HPAPod]) -> int:
    """``getReadyPodsCount``: pods that are Running and Ready."""
    if not pods:
        raise ReplicaCalculationError("no pods returned by selector while calculating replica count")
    return sum(1 for pod in pods if pod.phase == "Running" and pod.ready == "True")


@dataclass(frozen=True)
class ReplicaCalculator:
    """``ReplicaCalculator``: the per-metric-type calculations, with the controller's two CPU periods.

    ``now`` (seconds) replaces upstream's ``time.Now()`` where pod readiness is judged.
    """

    cpu_initialization_period: float = DEFAULT_CPU_INITIALIZATION_PERIOD
    delay_of_initial_readiness_status: float = DEFAULT_INITIAL_READINESS_DELAY

    def group_pods(
        self, pods: Sequence[HPAPod], metrics: Mapping[str, PodMetric], resource: str, now: float
    ) -> PodGroups:
        """``groupPods``. Deleted and Failed pods are ignored; Pending pods are unready; a pod without a
        sample is missing; for ``cpu`` only, a pod is also unready when it has no Ready condition or
        start time, when within ``cpu_initialization_period`` of its start it is not Ready or its sample
        predates one metric window after the last readiness transition, or when after that period it is
        not Ready and has never been (start + ``delay_of_initial_readiness_status`` > transition)."""
        ready = 0
        unready: set[str] = set()
        missing: set[str] = set()
        ignored: set[str] = set()
        for pod in pods:
            if pod.deleting or pod.phase == "Failed":
                ignored.add(pod.name)
                continue
            if pod.phase == "Pending":
                unready.add(pod.name)
                continue
            metric = metrics.get(pod.name)
            if metric is None:
                missing.add(pod.name)
                continue
            if resource == "cpu":
                if pod.ready is None or pod.start_time is None:
                    is_unready = True
                elif pod.start_time + self.cpu_initialization_period > now:
                    is_unready = (
                        pod.ready == "False" or metric.timestamp < pod.ready_transition_time + metric.window
                    )
                else:
                    is_unready = (
                        pod.ready == "False"
                        and pod.start_time + self.delay_of_initial_readiness_status
                        > pod.ready_transition_time
                    )
                if is_unready:
                    unready.add(pod.name)
                    continue
            ready += 1
        return PodGroups(ready, frozenset(unready), frozenset(missing), frozenset(ignored))

    def get_resource_replicas(
        self,
        current_replicas: int,
        target_utilization: int,
        resource: str,
        *,
        pods: Sequence[HPAPod],
        metrics: Mapping[str, PodMetric],
        now: float,
        tolerances: Tolerances = Tolerances(),
    ) -> ResourceReplicas:
        """``GetResourceReplicas``: a ``Resource`` metric with a ``Utilization`` target (percent of request).

        Unready pods' samples are dropped. Without unready (on a scale-up) or missing pods the proposal is
        ``ceil(ratio * ready pods)``, or the current count within tolerance. Otherwise missing pods count
        as ``max(100, target)`` % of their request on a scale-down and 0 on a scale-up, unready pods as 0
        on a scale-up; the ratio is recomputed and the current count is kept if it is within tolerance,
        if the direction flipped, or if ``ceil(new ratio * samples)`` moves against the new ratio.
        """
        if not metrics:
            raise ReplicaCalculationError(
                f"unable to get metrics for resource {resource}: "
                "no metrics returned from resource metrics API"
            )
        if not pods:
            raise ReplicaCalculationError("no pods returned by selector while calculating replica count")
        groups = self.group_pods(pods, metrics, resource, now)
        samples = _usable_samples(metrics, groups)
        if not samples:
            raise ReplicaCalculationError("did not receive metrics for targeted pods (pods might be unready)")
        requests = calculate_requests(pods, resource)
        usage_ratio, utilization, raw = resource_utilization_ratio(samples, requests, target_utilization)

        scale_up_with_unready = bool(groups.unready) and usage_ratio > 1.0
        if not scale_up_with_unready and not groups.missing:
            if tolerances.is_within(usage_ratio):
                return ResourceReplicas(current_replicas, utilization, raw)
            return ResourceReplicas(math.ceil(usage_ratio * groups.ready_pod_count), utilization, raw)

        if groups.missing:
            if usage_ratio < 1.0:
                fallback = max(100, target_utilization)
                for name in groups.missing:
                    samples[name] = _quo(requests[name] * fallback, 100)
            elif usage_ratio > 1.0:
                for name in groups.missing:
                    samples[name] = 0
        if scale_up_with_unready:
            for name in groups.unready:
                samples[name] = 0

        new_ratio, _, _ = resource_utilization_ratio(samples, requests, target_utilization)
        if _keep_current(tolerances, usage_ratio, new_ratio):
            return ResourceReplicas(current_replicas, utilization, raw)
        new_replicas = math.ceil(new_ratio * len(samples))
        if _moves_against(new_ratio, new_replicas, current_replicas):
            return ResourceReplicas(current_replicas, utilization, raw)
        return ResourceReplicas(new_replicas, utilization, raw)

    def get_raw_resource_replicas(
        self,
        current_replicas: int,
        target_usage: int,
        resource: str,
        *,
        pods: Sequence[HPAPod],
        metrics: Mapping[str, PodMetric],
        now: float,
        tolerances: Tolerances = Tolerances(),
    ) -> MetricReplicas:
        """``GetRawResourceReplicas``: a ``Resource`` metric with an ``AverageValue`` target (milli)."""
        if not metrics:
            raise ReplicaCalculationError(
                f"unable to get metrics for resource {resource}: "
                "no metrics returned from resource metrics API"
            )
        return self.calc_plain_metric_replicas(
            current_replicas, target_usage, resource, pods, metrics, now, tolerances
        )

    def get_metric_replicas(
        self,
        current_replicas: int,
        target_usage: int,
        metric_name: str,
        *,
        pods: Sequence[HPAPod],
        metrics: Mapping[str, PodMetric],
        now: float,
        tolerances: Tolerances = Tolerances(),
    ) -> MetricReplicas:
        """``GetMetricReplicas``: a ``Pods`` metric with an ``AverageValue`` target (milli)."""
        if not metrics:
            raise ReplicaCalculationError(
                f"unable to get metric {metric_name}: no metrics returned from custom metrics API"
            )
        return self.calc_plain_metric_replicas(
            current_replicas, target_usage, "", pods, metrics, now, tolerances
        )

    def calc_plain_metric_replicas(
        self,
        current_replicas: int,
        target_usage: int,
        resource: str,
        pods: Sequence[HPAPod],
        metrics: Mapping[str, PodMetric],
        now: float,
        tolerances: Tolerances,
    ) -> MetricReplicas:
        """``calcPlainMetricReplicas``: as :meth:`get_resource_replicas` on the average sample, with missing
        pods counted as exactly the target on a scale-down and 0 on a scale-up. Pod readiness only
        drops samples when ``resource`` is ``cpu``."""
        if not pods:
            raise ReplicaCalculationError("no pods returned by selector while calculating replica count")
        groups = self.group_pods(pods, metrics, resource, now)
        samples = _usable_samples(metrics, groups)
        if not samples:
            raise ReplicaCalculationError("did not receive metrics for targeted pods (pods might be unready)")
        usage_ratio, usage = metric_usage_ratio(samples, target_usage)

        scale_up_with_unready = bool(groups.unready) and usage_ratio > 1.0
        if not scale_up_with_unready and not groups.missing:
            if tolerances.is_within(usage_ratio):
                return MetricReplicas(current_replicas, usage)
            return MetricReplicas(math.ceil(usage_ratio * groups.ready_pod_count), usage)

        if groups.missing:
            if usage_ratio < 1.0:
                for name in groups.missing:
                    samples[name] = target_usage
            elif usage_ratio > 1.0:
                for name in groups.missing:
                    samples[name] = 0
        if scale_up_with_unready:
            for name in groups.unready:
                samples[name] = 0

        new_ratio, _ = metric_usage_ratio(samples, target_usage)
        if _keep_current(tolerances, usage_ratio, new_ratio):
            return MetricReplicas(current_replicas, usage)
        new_replicas = math.ceil(new_ratio * len(samples))
        if _moves_against(new_ratio, new_replicas, current_replicas):
            return MetricReplicas(current_replicas, usage)
        return MetricReplicas(new_replicas, usage)

    def get_object_metric_replicas(
        self,
        current_replicas: int,
        target_usage: int,
        usage: int,
        *,
        pods: Sequence[HPAPod],
        tolerances: Tolerances = Tolerances(),
    ) -> MetricReplicas:
        """``GetObjectMetricReplicas``: an ``Object`` metric with a ``Value`` target."""
        ratio = float(usage) / float(target_usage)
        return MetricReplicas(usage_ratio_replica_count(current_replicas, ratio, pods, tolerances), usage)

    def get_object_per_pod_metric_replicas(
        self,
        status_replicas: int,
        target_average_usage: int,
        usage: int,
        *,
        tolerances: Tolerances = Tolerances(),
    ) -> MetricReplicas:
        """``GetObjectPerPodMetricReplicas``: an ``Object`` metric with an ``AverageValue`` target."""
        return _per_pod_replicas(status_replicas, target_average_usage, usage, tolerances)

    def get_external_metric_replicas(
        self,
        current_replicas: int,
        target_usage: int,
        metric_name: str,
        values: Sequence[int],
        *,
        pods: Sequence[HPAPod],
        tolerances: Tolerances = Tolerances(),
    ) -> MetricReplicas:
        """``GetExternalMetricReplicas``: an ``External`` metric with a ``Value`` target; the usage is the
        sum of the returned series."""
        usage = _external_usage(metric_name, values)
        ratio = float(usage) / float(target_usage)
        return MetricReplicas(usage_ratio_replica_count(current_replicas, ratio, pods, tolerances), usage)

    def get_external_per_pod_metric_replicas(
        self,
        status_replicas: int,
        target_usage_per_pod: int,
        metric_name: str,
        values: Sequence[int],
        *,
        tolerances: Tolerances = Tolerances(),
    ) -> MetricReplicas:
        """``GetExternalPerPodMetricReplicas``: an ``External`` metric with an ``AverageValue`` target
        (KEDA's default): ``ceil(sum / target)`` outside tolerance, independent of pod readiness. As
        upstream, the sum saturates at ``MaxInt64`` (and is then reported as such) and the proposal at
        ``MaxInt32``."""
        usage = min(_external_usage(metric_name, values), _MAX_INT64)
        result = _per_pod_replicas(status_replicas, target_usage_per_pod, usage, tolerances)
        reported = _MAX_INT64 if float(usage) >= float(_MAX_INT64) else result.usage
        return MetricReplicas(min(result.replicas, _MAX_INT32), reported)


def usage_ratio_replica_count(
    current_replicas: int, usage_ratio: float, pods: Sequence[HPAPod], tolerances: Tolerances
) -> int:
    """``getUsageRatioReplicaCount``: ``ceil(ratio * Running-and-Ready pods)`` outside tolerance; from zero
    replicas (scale-to-zero) ``ceil(ratio)`` without tolerance."""
    if current_replicas == 0:
        return math.ceil(usage_ratio)
    if tolerances.is_within(usage_ratio):
        return current_replicas
    with _prefixed("unable to calculate ready pods"):
        ready = ready_pods_count(pods)
    return math.ceil(usage_ratio * ready)


def _per_pod_replicas(
    status_replicas: int, target_per_pod: int, usage: int, tolerances: Tolerances
) -> MetricReplicas:
    """The shared body of the two ``*PerPodMetricReplicas``: ``ceil(usage / target)`` unless
    ``usage / (target * status replicas)`` is within tolerance; the reported usage is per replica.

    From zero replicas upstream divides by zero: the ratio is infinite or NaN, never within tolerance,
    and the reported usage is undefined; here it is the total.
    """
    replicas = status_replicas
    if status_replicas == 0 or not tolerances.is_within(
        float(usage) / (float(target_per_pod) * float(status_replicas))
    ):
        replicas = math.ceil(float(usage) / float(target_per_pod))
    per_pod = usage if status_replicas == 0 else math.ceil(float(usage) / float(status_replicas))
    return MetricReplicas(replicas, per_pod)


def _external_usage(metric_name: str, values: Sequence[int]) -> int:
    if not values:
        raise ReplicaCalculationError(
            f"unable to get external metric {metric_name}: no metrics returned from external metrics API"
        )
    return sum(values)


def _usable_samples(metrics: Mapping[str, PodMetric], groups: PodGroups) -> dict[str, int]:
    """``removeMetricsForPods`` for the ignored and unready pods; samples of unknown pods stay."""
    return {
        name: metric.value
        for name, metric in metrics.items()
        if name not in groups.ignored and name not in groups.unready
    }


def _keep_current(tolerances: Tolerances, usage_ratio: float, new_ratio: float) -> bool:
    """Within tolerance after rebalancing, or the rebalanced ratio flipped the scale direction."""
    return (
        tolerances.is_within(new_ratio) or (usage_ratio < 1.0 < new_ratio) or (usage_ratio > 1.0 > new_ratio)
    )


def _moves_against(new_ratio: float, new_replicas: int, current_replicas: int) -> bool:
    """The count of samples would move the replicas against the ratio's direction."""
    return (new_ratio < 1.0 and new_replicas > current_replicas) or (
        new_ratio > 1.0 and new_replicas < current_replicas
    )


def _selector_text(selector: tuple[tuple[str, str], ...]) -> str:
    return "{" + ",".join(f"{key}={value}" for key, value in selector) + "}"


def compute_replicas_for_metric(
    metric: MetricSpec,
    observation: MetricObservation,
    *,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[HPAPod],
    now: float,
    calculator: ReplicaCalculator = ReplicaCalculator(),
    tolerances: Tolerances = Tolerances(),
) -> tuple[int, str, MetricStatus]:
    """``computeReplicasForMetric``: one metric's proposal, its description and its current value, or
    :class:`ReplicaCalculationError` with upstream's message chain and the ``ScalingActive`` condition."""
    if isinstance(metric, ResourceMetricSource):
        return _resource_proposal(metric, observation, spec_replicas, pods, now, calculator, tolerances)
    if isinstance(metric, PodsMetricSource):
        target_usage = metric.target.average_value
        assert target_usage is not None  # a Pods target is AverageValue (MetricTarget validation)
        name = metric.metric.name
        with _prefixed("failed to get pods metric value"), _unable("FailedGetPodsMetric"):
            result = calculator.get_metric_replicas(
                spec_replicas,
                target_usage,
                name,
                pods=pods,
                metrics=_samples(observation, "pods"),
                now=now,
                tolerances=tolerances,
            )
        return result.replicas, f"pods metric {name}", MetricStatus("Pods", name, average_value=result.usage)
    if isinstance(metric, ObjectMetricSource):
        return _object_proposal(
            metric, observation, spec_replicas, status_replicas, pods, calculator, tolerances
        )
    return _external_proposal(
        metric, observation, spec_replicas, status_replicas, pods, calculator, tolerances
    )


def _samples(observation: MetricObservation, kind: str) -> Mapping[str, PodMetric]:
    """The samples of a Resource or Pods metric; ``None`` is an empty answer."""
    if observation is None:
        return {}
    if not isinstance(observation, Mapping):
        raise ReplicaCalculationError(
            f"a {kind} metric needs samples by pod name, got {type(observation).__name__}"
        )
    return observation


def _resource_proposal(
    metric: ResourceMetricSource,
    observation: MetricObservation,
    spec_replicas: int,
    pods: Sequence[HPAPod],
    now: float,
    calculator: ReplicaCalculator,
    tolerances: Tolerances,
) -> tuple[int, str, MetricStatus]:
    """``computeStatusForResourceMetricGeneric``: ``averageValue`` wins over ``averageUtilization``."""
    name = metric.name
    target = metric.target
    with _prefixed(f"failed to get {name} resource metric value"), _unable("FailedGetResourceMetric"):
        samples = _samples(observation, "resource")
        if target.average_value is not None:
            with _prefixed(f"failed to get {name} usage"):
                raw = calculator.get_raw_resource_replicas(
                    spec_replicas,
                    target.average_value,
                    name,
                    pods=pods,
                    metrics=samples,
                    now=now,
                    tolerances=tolerances,
                )
            return raw.replicas, f"{name} resource", MetricStatus("Resource", name, average_value=raw.usage)
        utilization = target.average_utilization
        assert utilization is not None  # a Resource target is Utilization or AverageValue (validation)
        with _prefixed(f"failed to get {name} utilization"):
            util = calculator.get_resource_replicas(
                spec_replicas, utilization, name, pods=pods, metrics=samples, now=now, tolerances=tolerances
            )
    return (
        util.replicas,
        f"{name} resource utilization (percentage of request)",
        MetricStatus(
            "Resource", name, average_value=util.raw_utilization, average_utilization=util.utilization
        ),
    )


def _object_value(observation: MetricObservation, ref: CrossVersionObjectReference, name: str) -> int:
    """The described object's value; anything but one number is the metrics API's failure."""
    if observation is None or isinstance(observation, bool) or not isinstance(observation, int):
        raise ReplicaCalculationError(f"unable to get metric {name} on {ref.kind} {ref.name}")
    return observation


def _object_proposal(
    metric: ObjectMetricSource,
    observation: MetricObservation,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[HPAPod],
    calculator: ReplicaCalculator,
    tolerances: Tolerances,
) -> tuple[int, str, MetricStatus]:
    """``computeStatusForObjectMetric``: ``Value`` from ``spec.replicas``, ``AverageValue`` from
    ``status.replicas`` (described, as upstream does, as an "external metric")."""
    ref = metric.described_object
    name = metric.metric.name
    target = metric.target
    with _prefixed("failed to get object metric value"):
        if target.type == "Value":
            assert target.value is not None  # MetricTarget validation
            with _unable("FailedGetObjectMetric"):
                result = calculator.get_object_metric_replicas(
                    spec_replicas,
                    target.value,
                    _object_value(observation, ref, name),
                    pods=pods,
                    tolerances=tolerances,
                )
            return (
                result.replicas,
                f"{ref.kind} metric {name}",
                MetricStatus("Object", name, value=result.usage),
            )
        assert target.average_value is not None  # an Object target is Value or AverageValue (validation)
        with _prefixed(f"failed to get {name} object metric"), _unable("FailedGetObjectMetric"):
            result = calculator.get_object_per_pod_metric_replicas(
                status_replicas,
                target.average_value,
                _object_value(observation, ref, name),
                tolerances=tolerances,
            )
        return (
            result.replicas,
            f"external metric {name}({_selector_text(metric.metric.selector)})",
            MetricStatus("Object", name, average_value=result.usage),
        )


def _external_proposal(
    metric: ExternalMetricSource,
    observation: MetricObservation,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[HPAPod],
    calculator: ReplicaCalculator,
    tolerances: Tolerances,
) -> tuple[int, str, MetricStatus]:
    """``computeStatusForExternalMetric``: an ``averageValue`` target (from ``status.replicas``) wins over
    a ``value`` target (from ``spec.replicas``)."""
    name = metric.metric.name
    target = metric.target
    description = f"external metric {name}({_selector_text(metric.metric.selector)})"
    with _prefixed(f"failed to get {name} external metric value"), _unable("FailedGetExternalMetric"):
        if observation is None:
            values: Sequence[int] = ()
        elif isinstance(observation, Sequence):
            values = observation
        else:
            raise ReplicaCalculationError(
                f"an external metric needs the values of its series, got {type(observation).__name__}"
            )
        if target.average_value is not None:
            with _prefixed(f"failed to get {name} external metric"), _unable("FailedGetExternalMetric"):
                result = calculator.get_external_per_pod_metric_replicas(
                    status_replicas, target.average_value, name, values, tolerances=tolerances
                )
            return result.replicas, description, MetricStatus("External", name, average_value=result.usage)
        assert target.value is not None  # an External target is Value or AverageValue (validation)
        with _prefixed(f"failed to get external metric {name}"), _unable("FailedGetExternalMetric"):
            result = calculator.get_external_metric_replicas(
                spec_replicas, target.value, name, values, pods=pods, tolerances=tolerances
            )
        return result.replicas, description, MetricStatus("External", name, value=result.usage)


def compute_replicas_for_metrics(
    spec: HorizontalPodAutoscalerSpec,
    observations: Sequence[MetricObservation],
    *,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[HPAPod],
    now: float,
    calculator: ReplicaCalculator = ReplicaCalculator(),
    tolerances: Tolerances = Tolerances(),
) -> MetricsProposal:
    """``computeReplicasForMetrics``: what the HPA proposes for these metrics, before rate limits and
    stabilization.

    ``observations`` has one entry per metric of ``spec.effective_metrics()`` (see
    :data:`MetricObservation`); ``spec_replicas``/``status_replicas`` are the scale subresource's
    ``spec.replicas`` and ``status.replicas``; ``pods`` are the pods the target's selector matches.
    The proposal is the largest of the valid metrics' proposals. A metric that fails is invalid; if all
    are, or if some are and the proposal is below ``spec_replicas`` (a partial outage may scale up,
    never down), :class:`InvalidMetricsError` is raised and the controller does not scale.
    """
    metrics = spec.effective_metrics()
    if len(observations) != len(metrics):
        raise ValueError(f"{len(metrics)} metrics but {len(observations)} observations")
    replicas = 0
    description = ""
    errors: list[str] = []
    statuses: list[MetricStatus | None] = []
    failures: list[tuple[str, str]] = []
    for metric, observation in zip(metrics, observations, strict=True):
        try:
            proposal, name, status = compute_replicas_for_metric(
                metric,
                observation,
                spec_replicas=spec_replicas,
                status_replicas=status_replicas,
                pods=pods,
                now=now,
                calculator=calculator,
                tolerances=tolerances,
            )
        except ReplicaCalculationError as err:
            errors.append(str(err))
            statuses.append(None)
            assert err.condition is not None  # every metric type names its failure (``_unable``)
            failures.append(err.condition)
            continue
        statuses.append(status)
        if replicas == 0 or proposal > replicas:
            replicas, description = proposal, name
    if len(errors) >= len(metrics) or (errors and replicas < spec_replicas):
        invalid = InvalidMetricsError(
            f"invalid metrics ({len(errors)} invalid out of {len(metrics)}), first error is: {errors[0]}"
        )
        invalid.condition, invalid.statuses = failures[0], tuple(statuses)
        invalid.failures = tuple(failures)
        raise invalid
    return MetricsProposal(replicas, description, tuple(errors), tuple(statuses), tuple(failures))
