"""The HorizontalPodAutoscaler controller step, as Kubernetes 1.34 runs it, as state-in/decision-out code.

One :class:`HorizontalAutoscaler` holds what ``HorizontalController`` keeps per HPA (the recommendation
history and the scale-up and scale-down events); :meth:`HorizontalAutoscaler.sync` turns the replica
count the metrics propose (:func:`~gpufleet.autoscaling.hpa_replicas.compute_replicas_for_metrics`) into
the count the controller writes to the scale subresource at time ``now``. Calling it every
:data:`HPA_SYNC_PERIOD_SECONDS` is the caller's concern.

Mirrors ``kubernetes/kubernetes: pkg/controller/podautoscaler/horizontal.go``: the replica-count part of
``reconcileAutoscaler`` (``recordInitialRecommendation``; scaling disabled at zero replicas; clamping a
target outside ``[minReplicas, maxReplicas]`` without looking at metrics; no metrics when the target's
pods are controlled by several HPAs, ``AmbiguousSelector``), ``tolerancesForHpa``, the
legacy path without ``spec.behavior`` (``normalizeDesiredReplicas``, ``stabilizeRecommendation``,
``convertDesiredReplicasWithRules``, ``calculateScaleUpLimit``), the behavior path
(``normalizeDesiredReplicasWithBehaviors``, ``maybeInitScaleDownStabilizationWindow``,
``stabilizeRecommendationWithBehaviors``, ``convertDesiredReplicasWithBehaviorRate``,
``calculateScaleUpLimitWithScalingRules``, ``calculateScaleDownLimitWithBehaviors``,
``getReplicasChangePerPeriod``) and the event store (``storeScaleEvent``, ``markScaleEventsOutdated``,
``getLongestPolicyPeriod``); the status a sync leaves (``setCondition`` on ``AbleToScale``,
``ScalingActive`` and ``ScalingLimited`` with upstream's reasons and messages, ``status.currentMetrics``)
and the events it records
(``SuccessfulRescale`` "New size: N; reason: R", the ``FailedGet*Metric``, ``AmbiguousSelector`` and
``FailedComputeMetricsReplicas`` warnings); plus the kube-controller-manager defaults of
``pkg/controller/podautoscaler/config/v1alpha1/defaults.go`` and the ``minReplicas: 0`` admission rules of
``pkg/apis/autoscaling/validation`` (feature gate ``HPAScaleToZero``, alpha and off in 1.34).

Two upstream details worth knowing: the behavior path's stabilization clamps the *current* count between
the lowest recommendation of the scale-up window and the highest of the scale-down window (so a falling
recommendation never scales up, nor a rising one down), and the legacy path limits each sync to
``max(2 × current, 4)`` replicas with no notion of time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from gpufleet.autoscaling.hpa_replicas import (
    DEFAULT_CPU_INITIALIZATION_PERIOD,
    DEFAULT_INITIAL_READINESS_DELAY,
    DEFAULT_TOLERANCE,
    HPAPod,
    InvalidMetricsError,
    MetricObservation,
    MetricStatus,
    ReplicaCalculator,
    Tolerances,
    compute_replicas_for_metrics,
)
from gpufleet.model.hpa import (
    ExternalMetricSource,
    HorizontalPodAutoscalerSpec,
    HPAScalingRules,
    HPASpecError,
    ObjectMetricSource,
    ResourceMetricSource,
    generate_scale_down_rules,
    generate_scale_up_rules,
)

#: ``--horizontal-pod-autoscaler-sync-period``: how often the controller syncs each HPA, seconds.
HPA_SYNC_PERIOD_SECONDS = 15.0
#: ``--horizontal-pod-autoscaler-downscale-stabilization``, seconds.
DEFAULT_DOWNSCALE_STABILIZATION_WINDOW = 300.0
#: ``scaleUpLimitFactor`` and ``scaleUpLimitMinimum`` of the legacy path.
SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0
_MAX_INT32 = 2**31 - 1
_MIN_INT32 = -(2**31)


@dataclass(frozen=True)
class HPAControllerConfig:
    """The kube-controller-manager flags and feature gates the HPA controller runs with."""

    sync_period: float = HPA_SYNC_PERIOD_SECONDS
    tolerance: float = DEFAULT_TOLERANCE
    downscale_stabilization_window: float = DEFAULT_DOWNSCALE_STABILIZATION_WINDOW
    cpu_initialization_period: float = DEFAULT_CPU_INITIALIZATION_PERIOD
    initial_readiness_delay: float = DEFAULT_INITIAL_READINESS_DELAY
    #: ``HPAScaleToZero`` (alpha since 1.16, off): allows ``minReplicas: 0``.
    hpa_scale_to_zero: bool = False
    #: ``HPAConfigurableTolerance`` (alpha in 1.33 and 1.34, off; beta from 1.35): honours
    #: ``behavior.scaleUp.tolerance`` / ``behavior.scaleDown.tolerance``.
    hpa_configurable_tolerance: bool = False
    #: ``scaleUpLimitFactor``, a package variable upstream (2; its controller tests set 8).
    scale_up_limit_factor: float = SCALE_UP_LIMIT_FACTOR

    def replica_calculator(self) -> ReplicaCalculator:
        return ReplicaCalculator(self.cpu_initialization_period, self.initial_readiness_delay)

    def tolerances_for(self, spec: HorizontalPodAutoscalerSpec) -> Tolerances:
        """``tolerancesForHpa``: the cluster tolerance, overridden per direction by the spec when the
        ``HPAConfigurableTolerance`` gate is on."""
        up = down = self.tolerance
        behavior = spec.behavior
        if behavior is not None and self.hpa_configurable_tolerance:
            if behavior.scale_down is not None and behavior.scale_down.tolerance is not None:
                down = behavior.scale_down.tolerance
            if behavior.scale_up is not None and behavior.scale_up.tolerance is not None:
                up = behavior.scale_up.tolerance
        return Tolerances(scale_down=down, scale_up=up)


@dataclass(frozen=True)
class TimestampedRecommendation:
    """An unstabilized recommendation and when it was made."""

    recommendation: int
    timestamp: float


@dataclass(frozen=True)
class TimestampedScaleEvent:
    """A scale event: the (non-negative) size of the change, when, and whether its slot may be reused."""

    replica_change: int
    timestamp: float
    outdated: bool = False


#: the messages ``setCondition`` writes with each fixed-text reason (``reconcileAutoscaler``,
#: ``normalizeDesiredReplicas``, ``stabilizeRecommendationWithBehaviors``,
#: ``convertDesiredReplicasWithRules``, ``convertDesiredReplicasWithBehaviorRate``)
CONDITION_MESSAGES = {
    "SucceededGetScale": "the HPA controller was able to get the target's current scale",
    "ReadyForNewScale": "recommended size matches current size",
    "ScaleDownStabilized": "recent recommendations were higher than current one, "
    "applying the highest recent recommendation",
    "ScaleUpStabilized": "recent recommendations were lower than current one, "
    "applying the lowest recent recommendation",
    "DesiredWithinRange": "the desired count is within the acceptable range",
    "TooFewReplicas": "the desired replica count is less than the minimum replica count",
    "TooManyReplicas": "the desired replica count is more than the maximum replica count",
    "ScaleUpLimit": "the desired replica count is increasing faster than the maximum scale rate",
    "ScaleDownLimit": "the desired replica count is decreasing faster than the maximum scale rate",
}


@dataclass(frozen=True)
class HPACondition:
    """One of the HPA's ``status.conditions`` (``HorizontalPodAutoscalerCondition``), without its time."""

    type: str
    status: str
    reason: str
    message: str


@dataclass(frozen=True)
class HPAEvent:
    """An event the controller records on the HPA (``eventRecorder.Event``): Normal or Warning."""

    type: str
    reason: str
    message: str


@dataclass(frozen=True)
class MetricsOutcome:
    """What a sync made of the metrics (``computeReplicasForMetrics`` as ``reconcileAutoscaler`` reads it):
    the proposal (None: none computed, or the metrics are invalid) and its metric's description, each
    metric's current value (``status.currentMetrics``; None: invalid), the ``ScalingActive`` condition it
    set (None: it did not run) and the Warning events it recorded."""

    replicas: int | None
    metric: str = ""
    statuses: tuple[MetricStatus | None, ...] = ()
    scaling_active: HPACondition | None = None
    warnings: tuple[HPAEvent, ...] = ()


@dataclass(frozen=True)
class ScaleDecision:
    """The outcome of one sync.

    ``desired_replicas`` is what the scale subresource holds afterwards (the current count when nothing
    changes). ``reason`` is the rescale reason of the ``SuccessfulRescale`` event, or ``ScalingDisabled``
    (zero replicas) or ``FailedComputeMetricsReplicas`` (no valid metric proposal) when the controller
    stood still for those. ``able_to_scale`` and ``scaling_limited`` are the reasons of the
    ``AbleToScale`` and ``ScalingLimited`` conditions the normalization set (``None`` when it did not run),
    ``limited`` the ``ScalingLimited`` status (True: the limit changed the count). ``scaling_active``,
    ``events`` and ``metrics`` are the metrics' part (:class:`MetricsOutcome`) and the events of the sync.
    """

    desired_replicas: int
    rescale: bool
    reason: str = ""
    able_to_scale: str | None = None
    scaling_limited: str | None = None
    limited: bool = False
    scaling_active: HPACondition | None = None
    events: tuple[HPAEvent, ...] = ()
    metrics: tuple[MetricStatus | None, ...] = ()

    def conditions(self) -> tuple[HPACondition, ...]:
        """The conditions the sync set, in ``setCondition``'s order: ``AbleToScale`` (``SucceededRescale``
        once the scale is updated, else what the normalization set, else ``SucceededGetScale``), then
        ``ScalingActive`` and ``ScalingLimited`` where it set them."""
        if self.rescale:
            able = HPACondition(
                "AbleToScale",
                "True",
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {self.desired_replicas}",
            )
        else:
            reason = self.able_to_scale or "SucceededGetScale"
            able = HPACondition("AbleToScale", "True", reason, CONDITION_MESSAGES[reason])
        out = [able]
        if self.scaling_active is not None:
            out.append(self.scaling_active)
        if self.scaling_limited is not None:
            out.append(
                HPACondition(
                    "ScalingLimited",
                    "True" if self.limited else "False",
                    self.scaling_limited,
                    CONDITION_MESSAGES[self.scaling_limited],
                )
            )
        return tuple(out)


#: the sync of a target at zero replicas (``minReplicas`` above zero): autoscaling is disabled
SCALING_DISABLED = ScaleDecision(
    0,
    rescale=False,
    reason="ScalingDisabled",
    scaling_active=HPACondition(
        "ScalingActive",
        "False",
        "ScalingDisabled",
        "scaling is disabled since the replica count of the target is zero",
    ),
)


def calculate_scale_up_limit(current_replicas: int, factor: float = SCALE_UP_LIMIT_FACTOR) -> int:
    """``calculateScaleUpLimit``: the legacy path's per-sync ceiling, ``max(factor × current, 4)``
    (``scaleUpLimitFactor`` is 2; upstream's controller tests set it to 8)."""
    return int(max(factor * float(current_replicas), SCALE_UP_LIMIT_MINIMUM))


def convert_desired_replicas_with_rules(
    current_replicas: int,
    desired_replicas: int,
    min_replicas: int,
    max_replicas: int,
    factor: float = SCALE_UP_LIMIT_FACTOR,
) -> tuple[int, str]:
    """``convertDesiredReplicasWithRules``: clamp to ``[min, min(max, scale-up limit)]``, with the
    ``ScalingLimited`` reason."""
    scale_up_limit = calculate_scale_up_limit(current_replicas, factor)
    if max_replicas > scale_up_limit:
        maximum, reason = scale_up_limit, "ScaleUpLimit"
    else:
        maximum, reason = max_replicas, "TooManyReplicas"
    if desired_replicas < min_replicas:
        return min_replicas, "TooFewReplicas"
    if desired_replicas > maximum:
        return maximum, reason
    return desired_replicas, "DesiredWithinRange"


def get_replicas_change_per_period(
    period_seconds: int, events: Sequence[TimestampedScaleEvent], now: float
) -> int:
    """``getReplicasChangePerPeriod``: the replicas changed by events strictly newer than ``now - period``
    (the ``outdated`` flag is not consulted)."""
    cutoff = now - period_seconds
    return sum(event.replica_change for event in events if event.timestamp > cutoff)


def _policy_limit(
    current_replicas: int,
    scale_up_events: Sequence[TimestampedScaleEvent],
    scale_down_events: Sequence[TimestampedScaleEvent],
    rules: HPAScalingRules,
    now: float,
    up: bool,
) -> int:
    if rules.select_policy == "Disabled":
        return current_replicas
    # Max picks the largest change: the highest limit up, the lowest down; Min the opposite.
    largest_change = rules.select_policy != "Min"
    pick: Callable[[int, int], int] = max if largest_change == up else min
    result = _MIN_INT32 if pick is max else _MAX_INT32
    for policy in rules.policies or ():
        added = get_replicas_change_per_period(policy.period_seconds, scale_up_events, now)
        deleted = get_replicas_change_per_period(policy.period_seconds, scale_down_events, now)
        period_start = current_replicas - added + deleted
        if up:
            if policy.type == "Pods":
                proposed = period_start + policy.value
            else:
                proposed = math.ceil(float(period_start) * (1 + float(policy.value) / 100))
        elif policy.type == "Pods":
            proposed = period_start - policy.value
        else:
            proposed = int(float(period_start) * (1 - float(policy.value) / 100))
        result = pick(result, proposed)
    return result


def calculate_scale_up_limit_with_scaling_rules(
    current_replicas: int,
    scale_up_events: Sequence[TimestampedScaleEvent],
    scale_down_events: Sequence[TimestampedScaleEvent],
    rules: HPAScalingRules,
    now: float,
) -> int:
    """``calculateScaleUpLimitWithScalingRules``: per policy, the replicas at the start of its period
    (current − added + removed within it) plus ``value`` pods or ``ceil(start × (1 + value%))``;
    ``selectPolicy`` Max takes the highest, Min the lowest, Disabled the current count."""
    return _policy_limit(current_replicas, scale_up_events, scale_down_events, rules, now, up=True)


def calculate_scale_down_limit_with_behaviors(
    current_replicas: int,
    scale_up_events: Sequence[TimestampedScaleEvent],
    scale_down_events: Sequence[TimestampedScaleEvent],
    rules: HPAScalingRules,
    now: float,
) -> int:
    """``calculateScaleDownLimitWithBehaviors``: per policy, the period-start replicas minus ``value`` pods
    or ``trunc(start × (1 − value%))``; ``selectPolicy`` Max takes the lowest, Min the highest, Disabled the
    current count."""
    return _policy_limit(current_replicas, scale_up_events, scale_down_events, rules, now, up=False)


def stabilize_recommendation(
    history: list[TimestampedRecommendation], now: float, desired: int, window: float
) -> int:
    """``stabilizeRecommendation`` (legacy path): the highest recommendation not older than ``window``
    seconds, this one included; records this one in ``history``, reusing an expired slot."""
    highest = desired
    old_index: int | None = None
    cutoff = now - window
    for i, rec in enumerate(history):
        if rec.timestamp < cutoff:
            old_index = i
        elif rec.recommendation > highest:
            highest = rec.recommendation
    _record(history, old_index, TimestampedRecommendation(desired, now))
    return highest


def stabilize_recommendation_with_behaviors(
    history: list[TimestampedRecommendation],
    now: float,
    current: int,
    desired: int,
    up_window: float,
    down_window: float,
) -> tuple[int, str]:
    """``stabilizeRecommendationWithBehaviors``: clamp the *current* count between the lowest
    recommendation of the scale-up window and the highest of the scale-down window (both include this
    one; entries exactly at a cutoff count in neither), then record this recommendation, reusing a slot
    expired for both windows. Returns the count and the would-be ``AbleToScale`` reason."""
    up_cutoff = now - up_window
    down_cutoff = now - down_window
    up_recommendation = desired
    down_recommendation = desired
    old_index: int | None = None
    for i, rec in enumerate(history):
        if rec.timestamp > up_cutoff:
            up_recommendation = min(rec.recommendation, up_recommendation)
        if rec.timestamp > down_cutoff:
            down_recommendation = max(rec.recommendation, down_recommendation)
        if rec.timestamp < up_cutoff and rec.timestamp < down_cutoff:
            old_index = i
    recommendation = min(max(current, up_recommendation), down_recommendation)
    _record(history, old_index, TimestampedRecommendation(desired, now))
    return recommendation, "ScaleUpStabilized" if desired >= current else "ScaleDownStabilized"


def convert_desired_replicas_with_behavior_rate(
    current: int,
    desired: int,
    min_replicas: int,
    max_replicas: int,
    scale_up_rules: HPAScalingRules,
    scale_down_rules: HPAScalingRules,
    scale_up_events: Sequence[TimestampedScaleEvent],
    scale_down_events: Sequence[TimestampedScaleEvent],
    now: float,
) -> tuple[int, str]:
    """``convertDesiredReplicasWithBehaviorRate``: limit a scale-up to the policies' limit (never below
    the current count) and ``maxReplicas``, a scale-down to the policies' limit (never above the current
    count) and ``minReplicas``; returns the count and the ``ScalingLimited`` reason."""
    if desired > current:
        limit = calculate_scale_up_limit_with_scaling_rules(
            current, scale_up_events, scale_down_events, scale_up_rules, now
        )
        limit = max(limit, current)
        if max_replicas > limit:
            maximum, reason = limit, "ScaleUpLimit"
        else:
            maximum, reason = max_replicas, "TooManyReplicas"
        if desired > maximum:
            return maximum, reason
    elif desired < current:
        limit = calculate_scale_down_limit_with_behaviors(
            current, scale_up_events, scale_down_events, scale_down_rules, now
        )
        limit = min(limit, current)
        if min_replicas < limit:
            minimum, reason = limit, "ScaleDownLimit"
        else:
            minimum, reason = min_replicas, "TooFewReplicas"
        if desired < minimum:
            return minimum, reason
    return desired, "DesiredWithinRange"


def store_scale_event(
    events: list[TimestampedScaleEvent], rules: HPAScalingRules, replica_change: int, now: float
) -> None:
    """``storeScaleEvent`` for one direction: mark the events older than the rules' longest policy
    period (``getLongestPolicyPeriod``) outdated (``markScaleEventsOutdated``), then put the new event in
    the last outdated slot, or append it."""
    cutoff = now - max((policy.period_seconds for policy in rules.policies or ()), default=0)
    old_index: int | None = None
    for i, event in enumerate(events):
        if event.timestamp < cutoff:
            events[i] = replace(event, outdated=True)
        if events[i].outdated:
            old_index = i
    entry = TimestampedScaleEvent(replica_change, now)
    if old_index is None:
        events.append(entry)
    else:
        events[old_index] = entry


def _unable_message(error: str) -> str:
    """``getUnableComputeReplicaCountCondition``'s message."""
    return f"the HPA was unable to compute the replica count: {error}"


def _record(
    history: list[TimestampedRecommendation], old_index: int | None, entry: TimestampedRecommendation
) -> None:
    """Reuse the slot of an expired recommendation, or append."""
    if old_index is None:
        history.append(entry)
    else:
        history[old_index] = entry


class HorizontalAutoscaler:
    """One HPA's controller state, and the controller's decision at each sync.

    The constructor applies the API server's ``minReplicas: 0`` rules: it needs the ``HPAScaleToZero``
    gate and at least one Object or External metric (:class:`~gpufleet.model.hpa.HPASpecError` otherwise).
    """

    def __init__(
        self,
        spec: HorizontalPodAutoscalerSpec,
        config: HPAControllerConfig | None = None,
        recommendations: Sequence[TimestampedRecommendation] | None = None,
    ) -> None:
        """``recommendations`` preloads the controller's history for this HPA (upstream's
        ``recommendations[key]``); without it the first sync records the current count, as upstream
        does for an HPA it has not seen."""
        self.config = config if config is not None else HPAControllerConfig()
        if spec.min_replicas == 0:
            if not self.config.hpa_scale_to_zero:
                raise HPASpecError("spec.minReplicas: Invalid value: 0: must be greater than or equal to 1")
            if not any(
                isinstance(m, ObjectMetricSource | ExternalMetricSource) for m in spec.effective_metrics()
            ):
                raise HPASpecError(
                    "spec.metrics: Forbidden: must specify at least one Object or External metric to support "
                    "scaling to zero replicas"
                )
        self.spec = spec
        self.recommendations: list[TimestampedRecommendation] = list(recommendations or ())
        self._seen = recommendations is not None
        self.scale_up_events: list[TimestampedScaleEvent] = []
        self.scale_down_events: list[TimestampedScaleEvent] = []

    def metrics_needed(self, current_replicas: int) -> bool:
        """Whether a sync at ``current_replicas`` looks at the metrics at all."""
        spec = self.spec
        if current_replicas == 0 and spec.min_replicas != 0:
            return False
        return spec.min_replicas <= current_replicas <= spec.max_replicas

    def sync(self, now: float, current_replicas: int, computed_desired: int | None) -> int:
        """One sync at time ``now``: the replica count the controller sets, given the target's
        ``spec.replicas`` (``current_replicas``) and the metrics' proposal (``None`` when
        :func:`~gpufleet.autoscaling.hpa_replicas.compute_replicas_for_metrics` failed)."""
        return self.decide(now, current_replicas, computed_desired).desired_replicas

    def reconcile(
        self,
        now: float,
        *,
        spec_replicas: int,
        status_replicas: int,
        pods: Sequence[HPAPod],
        observations: Sequence[MetricObservation],
        controlling_hpas: Collection[str] = (),
    ) -> ScaleDecision:
        """``reconcileAutoscaler``: compute the metrics' proposal (when the sync needs it) and decide."""
        proposal = self.propose(
            now,
            spec_replicas=spec_replicas,
            status_replicas=status_replicas,
            pods=pods,
            observations=observations,
            controlling_hpas=controlling_hpas,
        )
        return self.decide(now, spec_replicas, proposal)

    @property
    def proposal_reads_time(self) -> bool:
        """Whether the metrics' proposal depends on the time of the sync besides its inputs: a Resource
        metric judges pods' readiness against their start (``cpuInitializationPeriod``)."""
        return any(isinstance(m, ResourceMetricSource) for m in self.spec.effective_metrics())

    def propose(
        self,
        now: float,
        *,
        spec_replicas: int,
        status_replicas: int,
        pods: Sequence[HPAPod],
        observations: Sequence[MetricObservation],
        controlling_hpas: Collection[str] = (),
    ) -> MetricsOutcome:
        """The metrics' proposal of a sync (``computeReplicasForMetrics``): its replica count and the metric
        it came from (None when the sync computes none or the metrics are invalid), with the status and
        events it leaves.

        ``controlling_hpas`` are the HPAs whose selectors select any of ``pods``, this one included
        (``hpasControllingPodsUnderSelector``): more than one is ``validateAndParseSelector``'s
        AmbiguousSelector, and no metric is computed (the count is still clamped to
        ``[minReplicas, maxReplicas]``); its message's selector is not modelled (the target's own pods are
        what gpufleet's HPA selects)."""
        if not self.metrics_needed(spec_replicas):
            return MetricsOutcome(None)
        if len(controlling_hpas) > 1:
            message = (
                "pods by selector <not modelled> are controlled by multiple HPAs: "
                f"[{' '.join(sorted(controlling_hpas))}]"
            )
            return MetricsOutcome(
                None,
                scaling_active=HPACondition("ScalingActive", "False", "AmbiguousSelector", message),
                warnings=(
                    HPAEvent("Warning", "AmbiguousSelector", message),
                    HPAEvent("Warning", "FailedComputeMetricsReplicas", message),
                ),
            )
        try:
            proposal = compute_replicas_for_metrics(
                self.spec,
                observations,
                spec_replicas=spec_replicas,
                status_replicas=status_replicas,
                pods=pods,
                now=now,
                calculator=self.config.replica_calculator(),
                tolerances=self.config.tolerances_for(self.spec),
            )
        except InvalidMetricsError as err:
            assert err.condition is not None  # the first invalid metric's (``compute_replicas_for_metrics``)
            reason, error = err.condition
            return MetricsOutcome(
                None,
                statuses=err.statuses,
                scaling_active=HPACondition("ScalingActive", "False", reason, _unable_message(error)),
                warnings=(
                    *(HPAEvent("Warning", r, e) for r, e in err.failures),
                    HPAEvent("Warning", "FailedComputeMetricsReplicas", str(err)),
                ),
            )
        return MetricsOutcome(
            proposal.replicas,
            proposal.metric,
            proposal.statuses,
            HPACondition(
                "ScalingActive",
                "True",
                "ValidMetricFound",
                f"the HPA was able to successfully calculate a replica count from {proposal.metric}",
            ),
            tuple(HPAEvent("Warning", r, e) for r, e in proposal.failures),
        )

    def decide(
        self,
        now: float,
        current_replicas: int,
        computed_desired: int | MetricsOutcome | None,
        metric: str = "",
    ) -> ScaleDecision:
        """:meth:`sync` with the reasons, conditions and events; ``computed_desired`` is the metrics'
        proposal (:meth:`propose`'s outcome, or its count alone with ``metric`` naming its metric in a
        scale-up's reason). Updates the recommendation history and the scale events."""
        outcome = (
            computed_desired
            if isinstance(computed_desired, MetricsOutcome)
            else MetricsOutcome(computed_desired, metric)
        )
        spec = self.spec
        if not self._seen:
            self._seen = True
            self.recommendations.append(TimestampedRecommendation(current_replicas, now))
        able: str | None = None
        limited: str | None = None
        is_limited = False
        if current_replicas == 0 and spec.min_replicas != 0:
            return SCALING_DISABLED
        if current_replicas > spec.max_replicas:
            desired, reason = spec.max_replicas, "Current number of replicas above Spec.MaxReplicas"
        elif current_replicas < spec.min_replicas:
            desired, reason = spec.min_replicas, "Current number of replicas below Spec.MinReplicas"
        elif outcome.replicas is None:
            return ScaleDecision(
                current_replicas,
                rescale=False,
                reason="FailedComputeMetricsReplicas",
                scaling_active=outcome.scaling_active,
                events=outcome.warnings,
                metrics=outcome.statuses,
            )
        else:
            desired = max(outcome.replicas, 0)
            reason = ""
            if desired > current_replicas:
                reason = f"{outcome.metric} above target"
            elif desired < current_replicas:
                reason = "All metrics below target"
            normalize = (
                self._normalize_desired_replicas
                if spec.behavior is None
                else self._normalize_desired_replicas_with_behaviors
            )
            desired, able, limited, is_limited = normalize(now, current_replicas, desired)
        status = ScaleDecision(
            current_replicas,
            rescale=False,
            able_to_scale=able,
            scaling_limited=limited,
            limited=is_limited,
            scaling_active=outcome.scaling_active,
            events=outcome.warnings,
            metrics=outcome.statuses,
        )
        if desired == current_replicas:
            return status
        self._store_scale_event(now, current_replicas, desired)
        rescaled = HPAEvent("Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
        return replace(
            status, desired_replicas=desired, rescale=True, reason=reason, events=(*status.events, rescaled)
        )

    def _normalize_desired_replicas(
        self, now: float, current: int, desired: int
    ) -> tuple[int, str, str, bool]:
        """``normalizeDesiredReplicas`` (no ``spec.behavior``): downscale stabilization, then
        ``convertDesiredReplicasWithRules``; the count, the AbleToScale and ScalingLimited reasons and
        whether the limit changed the count."""
        stabilized = stabilize_recommendation(
            self.recommendations, now, desired, self.config.downscale_stabilization_window
        )
        able = "ScaleDownStabilized" if stabilized != desired else "ReadyForNewScale"
        spec = self.spec
        result, limited = convert_desired_replicas_with_rules(
            current, stabilized, spec.min_replicas, spec.max_replicas, self.config.scale_up_limit_factor
        )
        return result, able, limited, result != stabilized

    def rules(self) -> tuple[HPAScalingRules, HPAScalingRules]:
        """The defaulted scale-up and scale-down rules of ``spec.behavior`` (which must be set), the
        scale-down window filled from the controller flag (``maybeInitScaleDownStabilizationWindow``)."""
        behavior = self.spec.behavior
        if behavior is None:
            raise ValueError("the HPA has no spec.behavior")
        up = generate_scale_up_rules(behavior.scale_up)
        down = generate_scale_down_rules(behavior.scale_down)
        if down.stabilization_window_seconds is None:
            down = replace(down, stabilization_window_seconds=int(self.config.downscale_stabilization_window))
        return up, down

    def _normalize_desired_replicas_with_behaviors(
        self, now: float, current: int, desired: int
    ) -> tuple[int, str, str, bool]:
        """``normalizeDesiredReplicasWithBehaviors``: stabilize, then apply the policies' rate limits (as
        :meth:`_normalize_desired_replicas` returns them)."""
        up, down = self.rules()
        stabilized, stabilized_reason = stabilize_recommendation_with_behaviors(
            self.recommendations,
            now,
            current,
            desired,
            up.stabilization_window_seconds or 0,
            down.stabilization_window_seconds or 0,
        )
        able = stabilized_reason if stabilized != desired else "ReadyForNewScale"
        result, limited = convert_desired_replicas_with_behavior_rate(
            current,
            stabilized,
            self.spec.min_replicas,
            self.spec.max_replicas,
            up,
            down,
            self.scale_up_events,
            self.scale_down_events,
            now,
        )
        return result, able, limited, result != stabilized

    def _store_scale_event(self, now: float, previous: int, new: int) -> None:
        """``storeScaleEvent``: only with a behavior (the legacy path keeps no events)."""
        if self.spec.behavior is None:
            return
        up, down = self.rules()
        if new > previous:
            store_scale_event(self.scale_up_events, up, new - previous, now)
        else:
            store_scale_event(self.scale_down_events, down, previous - new, now)
