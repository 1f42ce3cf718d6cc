"""The HPA's status, conditions and events as Kubernetes 1.34's HorizontalPodAutoscaler controller leaves them
(``pkg/controller/podautoscaler/horizontal.go``: ``reconcileAutoscaler``, ``computeReplicasForMetrics``,
``getUnableComputeReplicaCountCondition``, ``normalizeDesiredReplicas``, ``setStatus``,
``setConditionInList``), through ``HorizontalAutoscaler.reconcile`` and ``hpa_status.HPAStatus``."""

from __future__ import annotations

from gpufleet.autoscaling.hpa_controller import (
    HorizontalAutoscaler,
    HPACondition,
    HPAEvent,
    ScaleDecision,
    TimestampedRecommendation,
)
from gpufleet.autoscaling.hpa_replicas import HPAPod, MetricStatus, PodMetric
from gpufleet.autoscaling.hpa_status import HPAStatus, Rescale, hpa_summary
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    ExternalMetricSource,
    HorizontalPodAutoscalerSpec,
    MetricIdentifier,
    MetricTarget,
    ResourceMetricSource,
)

NOW = 10_000.0
CPU_50 = ResourceMetricSource("cpu", MetricTarget("Utilization", average_utilization=50))
CPU_REASON = "cpu resource utilization (percentage of request)"


def cpu_hpa(
    max_replicas: int = 10, recommendations: list[TimestampedRecommendation] | None = None
) -> HorizontalAutoscaler:
    spec = HorizontalPodAutoscalerSpec(
        CrossVersionObjectReference("Deployment", "api"), max_replicas, 2, (CPU_50,)
    )
    return HorizontalAutoscaler(spec, recommendations=recommendations)


def pods(n: int) -> list[HPAPod]:
    return [HPAPod(f"api-{i}", start_time=NOW - 3600, requests={"cpu": 1000}) for i in range(n)]


def cpu_sync(hpa: HorizontalAutoscaler, now: float, replicas: int, usage_milli: int | None) -> ScaleDecision:
    """One sync of ``replicas`` pods each using ``usage_milli`` of their 1 CPU (None: no sample)."""
    listed = pods(replicas)
    samples = {} if usage_milli is None else {p.name: PodMetric(usage_milli, now, 15.0) for p in listed}
    return hpa.reconcile(
        now, spec_replicas=replicas, status_replicas=replicas, pods=listed, observations=[samples]
    )


def test_a_rescale_is_a_successful_rescale_event_with_the_metrics_reason() -> None:
    """``reconcileAutoscaler``: 2 pods at 100 % of a 50 % target scale to 4; the event is SuccessfulRescale
    "New size: 4; reason: cpu resource utilization (percentage of request) above target", AbleToScale is
    SucceededRescale "the HPA controller was able to update the target scale to 4", ScalingActive
    ValidMetricFound names the metric, ScalingLimited is False DesiredWithinRange; the current metric is 100 %
    (1 CPU average), as ``computeStatusForResourceMetricGeneric`` writes it."""
    decision = cpu_sync(cpu_hpa(), NOW, 2, 1000)
    assert (decision.desired_replicas, decision.rescale) == (4, True)
    assert decision.events == (
        HPAEvent("Normal", "SuccessfulRescale", f"New size: 4; reason: {CPU_REASON} above target"),
    )
    assert decision.conditions() == (
        HPACondition(
            "AbleToScale",
            "True",
            "SucceededRescale",
            "the HPA controller was able to update the target scale to 4",
        ),
        HPACondition(
            "ScalingActive",
            "True",
            "ValidMetricFound",
            f"the HPA was able to successfully calculate a replica count from {CPU_REASON}",
        ),
        HPACondition(
            "ScalingLimited",
            "False",
            "DesiredWithinRange",
            "the desired count is within the acceptable range",
        ),
    )
    assert decision.metrics == (MetricStatus("Resource", "cpu", average_value=1000, average_utilization=100),)


def test_above_max_replicas_scaling_limited_is_true_too_many_replicas() -> None:
    """``convertDesiredReplicasWithRules``: the metric asks 8 (4 pods at 100 % of 50 %), maxReplicas is 5:
    the count is 5 and ScalingLimited True TooManyReplicas "the desired replica count is more than the maximum
    replica count" (True: the limit changed the count, ``normalizeDesiredReplicas``)."""
    decision = cpu_sync(cpu_hpa(max_replicas=5), NOW, 4, 1000)
    assert decision.desired_replicas == 5
    limited = decision.conditions()[-1]
    assert limited == HPACondition(
        "ScalingLimited",
        "True",
        "TooManyReplicas",
        "the desired replica count is more than the maximum replica count",
    )


def test_a_scale_down_held_by_recent_recommendations_is_scale_down_stabilized() -> None:
    """``normalizeDesiredReplicas``: a recommendation of 6 within the 300 s window holds 6 replicas although
    the metric asks 3 (at 25 %); AbleToScale True ScaleDownStabilized "recent recommendations were higher
    than current one, applying the highest recent recommendation"; no event."""
    hpa = cpu_hpa(recommendations=[TimestampedRecommendation(6, NOW - 60)])
    decision = cpu_sync(hpa, NOW, 6, 250)
    assert (decision.desired_replicas, decision.rescale, decision.events) == (6, False, ())
    assert decision.conditions()[0] == HPACondition(
        "AbleToScale",
        "True",
        "ScaleDownStabilized",
        "recent recommendations were higher than current one, applying the highest recent recommendation",
    )


def test_no_samples_is_failed_get_resource_metric_with_its_warnings() -> None:
    """``getUnableComputeReplicaCountCondition``: no sample for any pod is ScalingActive False
    FailedGetResourceMetric "the HPA was unable to compute the replica count: failed to get cpu utilization:
    ..." (the error of ``computeStatusForResourceMetricGeneric``, before ``computeReplicasForMetric``'s
    prefix), a Warning of that reason, then ``FailedComputeMetricsReplicas`` with the whole error; AbleToScale
    stays SucceededGetScale."""
    decision = cpu_sync(cpu_hpa(), NOW, 3, None)
    error = (
        "failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from "
        "resource metrics API"
    )
    assert decision.conditions() == (
        HPACondition(
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
        ),
        HPACondition(
            "ScalingActive",
            "False",
            "FailedGetResourceMetric",
            f"the HPA was unable to compute the replica count: {error}",
        ),
    )
    assert decision.events == (
        HPAEvent("Warning", "FailedGetResourceMetric", error),
        HPAEvent(
            "Warning",
            "FailedComputeMetricsReplicas",
            "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: "
            + error,
        ),
    )


def test_an_external_metrics_failure_names_it_without_the_outer_prefixes() -> None:
    """``computeStatusForExternalMetric``: the condition holds the replica calculator's error; the
    ``FailedComputeMetricsReplicas`` event the full chain ("failed to get lag external metric value: failed to
    get external metric lag: ...")."""
    lag = ExternalMetricSource(MetricIdentifier("lag"), MetricTarget("Value", value=1000))
    spec = HorizontalPodAutoscalerSpec(CrossVersionObjectReference("Deployment", "w"), 5, 1, (lag,))
    decision = HorizontalAutoscaler(spec).reconcile(
        NOW, spec_replicas=2, status_replicas=2, pods=pods(2), observations=[None]
    )
    active = decision.conditions()[1]
    assert (active.reason, active.message) == (
        "FailedGetExternalMetric",
        "the HPA was unable to compute the replica count: unable to get external metric lag: no metrics "
        "returned from external metrics API",
    )
    assert decision.events[-1].message.startswith(
        "invalid metrics (1 invalid out of 1), first error is: failed to get lag external metric value: "
        "failed to get external metric lag: unable to get external metric lag"
    )


def test_ambiguous_selector_sets_scaling_active_false_and_warns() -> None:
    """``validateAndParseSelector``: pods controlled by two HPAs are ScalingActive False AmbiguousSelector
    "pods by selector ... are controlled by multiple HPAs: [ns/a ns/b]" (``selectors.Key`` prints as
    ``ns/name``), an AmbiguousSelector Warning and ``FailedComputeMetricsReplicas``."""
    hpa = cpu_hpa()
    listed = pods(3)
    decision = hpa.reconcile(
        NOW,
        spec_replicas=3,
        status_replicas=3,
        pods=listed,
        observations=[{p.name: PodMetric(1000, NOW, 15.0) for p in listed}],
        controlling_hpas=["web/b", "web/a"],
    )
    message = "pods by selector <not modelled> are controlled by multiple HPAs: [web/a web/b]"
    assert decision.conditions()[1] == HPACondition("ScalingActive", "False", "AmbiguousSelector", message)
    assert [e.reason for e in decision.events] == ["AmbiguousSelector", "FailedComputeMetricsReplicas"]


def test_status_keeps_transitions_desired_count_and_repeated_events() -> None:
    """``setStatus``/``setConditionInList``: a condition's lastTransitionTime moves only when its status
    changes (AbleToScale stays True from the first sync though its reason changes); a failed metrics sync
    keeps the last desired count (``setCurrentReplicasAndMetricsInStatus``) and drops the current metrics; a
    repeated Warning is one event with a count and its first and last times; ``lastScaleTime`` and the
    rescale history are the SuccessfulRescale's."""
    hpa, status = cpu_hpa(), HPAStatus()
    status.record(NOW, 2, cpu_sync(hpa, NOW, 2, 1000))  # 2 -> 4
    status.record(NOW + 15, 4, cpu_sync(hpa, NOW + 15, 4, 500))  # holds at 4
    status.record(NOW + 30, 4, cpu_sync(hpa, NOW + 30, 4, None))  # no samples
    status.record(NOW + 45, 4, cpu_sync(hpa, NOW + 45, 4, None))
    assert (status.current_replicas, status.desired_replicas, status.last_scale_time_s) == (4, 4, NOW)
    assert status.current_metrics == (None,)
    assert status.rescales == [Rescale(NOW, 2, 4, f"{CPU_REASON} above target")]
    held = {
        t: (h.condition.status, h.condition.reason, h.last_transition_s) for t, h in status.conditions.items()
    }
    assert held == {
        "AbleToScale": ("True", "SucceededGetScale", NOW),
        "ScalingActive": ("False", "FailedGetResourceMetric", NOW + 30),
        "ScalingLimited": ("False", "DesiredWithinRange", NOW),
    }
    warnings = [(e.reason, e.count, e.first_s, e.last_s) for e in status.events.events if e.type == "Warning"]
    assert warnings == [
        ("FailedGetResourceMetric", 2, NOW + 30, NOW + 45),
        ("FailedComputeMetricsReplicas", 2, NOW + 30, NOW + 45),
    ]
    record = hpa_summary(hpa.spec, status)
    assert record["metrics"] == [
        {
            "type": "Resource",
            "name": "cpu",
            "target": {"type": "Utilization", "average_utilization": 50},
            "current": None,
        }
    ]
    assert record["rescales"] == [{"t_s": NOW, "from": 2, "to": 4, "reason": f"{CPU_REASON} above target"}]


def _events(hpa: HorizontalAutoscaler, status: HPAStatus) -> list[tuple[str, str, int, float, float]]:
    """The HPA's events as ``summary.json`` keeps them: reason, message, count, first and last time."""
    return [
        (e["reason"], e["message"], e["count"], e["first_s"], e["last_s"])
        for e in hpa_summary(hpa.spec, status)["events"]
    ]


def test_warnings_past_the_spam_burst_are_written_once_per_five_minutes() -> None:
    """client-go's ``EventSourceObjectSpamFilter`` (``events_cache.go``: burst 25, then 1 per 300 s per
    source, object and type): an hour of syncs every 15 s without samples records two Warnings a sync; the
    first 25 are written (t=0 to 180 s, the 13th sync's second dropped), then one every 300 s, always the
    sync's first, FailedGetResourceMetric. ``eventObserve`` counts every occurrence, so that event is at
    x241 over the hour (last written at 3600 s); FailedComputeMetricsReplicas stays as last written, x12,
    at 165 s."""
    hpa, status = cpu_hpa(), HPAStatus()
    for sync in range(241):
        now = NOW + 15.0 * sync
        status.record(now, 3, cpu_sync(hpa, now, 3, None))
    assert [
        (reason, count, first - NOW, last - NOW) for reason, _, count, first, last in _events(hpa, status)
    ] == [
        ("FailedGetResourceMetric", 241, 0.0, 3600.0),
        ("FailedComputeMetricsReplicas", 12, 0.0, 165.0),
    ]


def test_rescales_to_ten_sizes_within_ten_minutes_are_combined_under_their_reason() -> None:
    """client-go's ``EventAggregator`` (``EventAggregatorByReasonFunc``, 10 distinct messages each within
    600 s of the one before): SuccessfulRescale to 2, 3, ... 11 replicas a minute apart writes nine events
    of their own; the tenth size is written as "(combined from similar events): New size: 11; ...", and
    the next new size, 12, adds to that combined event (count 2, its message the latest)."""
    hpa, status = cpu_hpa(max_replicas=20), HPAStatus()
    reason = f"{CPU_REASON} above target"
    for step, size in enumerate(range(2, 13)):
        message = f"New size: {size}; reason: {reason}"
        event = HPAEvent("Normal", "SuccessfulRescale", message)
        status.record(NOW + 60.0 * step, size - 1, ScaleDecision(size, True, reason, events=(event,)))
    events = _events(hpa, status)
    assert [(message, count) for _, message, count, _, _ in events] == [
        *((f"New size: {size}; reason: {reason}", 1) for size in range(2, 11)),
        (f"(combined from similar events): New size: 12; reason: {reason}", 2),
    ]
    assert events[-1][3:] == (NOW + 540.0, NOW + 600.0)
