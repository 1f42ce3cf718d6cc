"""KEDA's ScaledObject executor tests, ported case by case.

Upstream: ``kedacore/keda`` v2.20.2, ``pkg/scaling/executor/scale_scaledobjects_test.go``. Each pytest
is named after the upstream test function. gpufleet's counterpart of ``RequestScale(so, isActive,
isError)`` is one ``ScaledObjectState.poll``: the trigger values give the activity and the error
(one redis trigger with ``activationListLength`` 0: ``1`` is active, ``0`` inactive, ``None`` a
failed scaler; "active with an error" takes a second trigger), ``current_replicas`` is the scale
target's replica count (upstream's mocked Deployment/Scale), ``KedaDecision.scale_to`` the count
written to the scale subresource (None: no ``Update`` call), ``KedaDecision.active`` the ``Active``
condition and ``KedaDecision.ready`` the ``Ready`` condition.

Upstream's fixtures have no ``lastActiveTime`` and a zero ``creationTimestamp`` with the default
``initialCooldownPeriod`` (0), so a scale-in is due at once; here the object is created at t=0 and
polled at t=0. Not modelled, and skipped with the reason: the pause and force-activation
annotations, the events' message text, and the ``HPAActive`` condition KEDA v2.20 derives from the
HPA's ``ScalingActive`` condition (``getHPAHealth``/``checkHPAHealth``).
"""

from __future__ import annotations

from typing import Any

import pytest

from gpufleet.autoscaling.keda_scaled_object import KedaDecision, KedaReason, ScaledObjectState
from gpufleet.model.keda import Fallback, RedisListScaler, ScaledObjectSpec, ScaleTargetRef, ScaleTrigger

ACTIVE, INACTIVE, ERROR = 1.0, 0.0, None


def _trigger(name: str = "queue") -> ScaleTrigger:
    return ScaleTrigger(RedisListScaler(name))


def _request_scale(
    current_replicas: int, trigger_values: list[float | None], **spec_fields: Any
) -> tuple[KedaDecision, ScaledObjectState]:
    """``RequestScale`` on a ScaledObject ``name``/``namespace`` scaling Deployment ``name``."""
    triggers = tuple(_trigger(f"queue-{i}") for i in range(len(trigger_values)))
    spec = ScaledObjectSpec("name", "namespace", ScaleTargetRef("name"), triggers, **spec_fields)
    state = ScaledObjectState(spec, created_at=0.0)
    return state.poll(0.0, trigger_values, current_replicas), state


def test_scale_to_min_replicas_when_not_active() -> None:
    decision, _ = _request_scale(10, [INACTIVE], min_replica_count=0)
    assert decision.scale_to == 0
    assert decision.active is False


def test_scale_to_min_replicas_from_lower_initial_replica_count() -> None:
    decision, _ = _request_scale(1, [INACTIVE], min_replica_count=5)
    assert decision.scale_to == 5
    assert decision.active is False


def test_scale_from_min_replicas_when_active() -> None:
    decision, state = _request_scale(0, [ACTIVE], min_replica_count=0)
    assert decision.scale_to == 1
    assert decision.active is True  # Active condition True, reason ScalerActive
    assert state.last_active_at is not None


def test_scale_to_idle_replicas_when_not_active() -> None:
    decision, _ = _request_scale(10, [INACTIVE], idle_replica_count=0, min_replica_count=5)
    assert decision.scale_to == 0
    assert decision.active is False


def test_scale_from_idle_to_min_replicas_when_active() -> None:
    decision, state = _request_scale(0, [ACTIVE], idle_replica_count=0, min_replica_count=5)
    assert decision.scale_to == 5
    assert decision.active is True
    assert state.last_active_at is not None


def test_scale_to_paused_replicas_count() -> None:
    pytest.skip("the autoscaling.keda.sh/paused-replicas annotation (Paused condition) is not modelled")


def test_event_wit_trigger_info() -> None:
    # Upstream checks the event "Normal KEDAScaleTargetActivated Scaled  namespace/name from 2 to 5,
    # triggered by testTrigger". gpufleet records the activation (reason and counts), not the text.
    decision, _ = _request_scale(2, [ACTIVE], idle_replica_count=0, min_replica_count=5)
    assert decision.reason is KedaReason.ACTIVATED
    assert decision.scale_to == 5


_PAUSE_IN = "the autoscaling.keda.sh/paused-scale-in annotation is not modelled"
_PAUSE_OUT = "the autoscaling.keda.sh/paused-scale-out annotation is not modelled"


def test_no_scale_to_min_replicas_when_not_active_and_pause_scale_in_annotation_set() -> None:
    pytest.skip(_PAUSE_IN)


def test_no_scale_to_idle_replicas_when_not_active_and_pause_scale_in_annotation_set() -> None:
    pytest.skip(_PAUSE_IN)


def test_scale_from_min_replicas_when_activation_forced() -> None:
    pytest.skip("the autoscaling.keda.sh/force-activation annotation is not modelled")


def test_no_scale_from_min_replicas_when_active_and_paused_scale_out_annotation_set() -> None:
    pytest.skip(_PAUSE_OUT)


def test_no_scale_from_idle_replicas_to_min_replicas_when_active_and_paused_scale_out_annotation_set() -> (
    None
):
    pytest.skip(_PAUSE_OUT)


_NO_HPA_ACTIVE = (
    "KEDA v2.20's HPAActive condition (getHPAHealth/checkHPAHealth, from the HPA's ScalingActive "
    "condition) is not modelled: gpufleet's HPA publishes no ScalingActive condition"
)


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param(_NO_HPA_ACTIVE, id="TestGetHPAHealth_NoHPAName"),
        pytest.param(_NO_HPA_ACTIVE, id="TestGetHPAHealth_HPAReadError"),
        pytest.param(_NO_HPA_ACTIVE, id="TestGetHPAHealth_ScalingActiveTrue"),
        pytest.param(_NO_HPA_ACTIVE, id="TestGetHPAHealth_ScalingActiveFalse"),
        pytest.param(_NO_HPA_ACTIVE, id="TestGetHPAHealth_ScalingDisabled"),
        pytest.param(_NO_HPA_ACTIVE, id="TestGetHPAHealth_NoGracePeriod"),
        pytest.param(_NO_HPA_ACTIVE, id="TestGetHPAHealth_EmptyReasonFallback"),
        pytest.param(_NO_HPA_ACTIVE, id="TestGetHPAHealth_NoScalingActiveConditionYet"),
        pytest.param(_NO_HPA_ACTIVE, id="TestRequestScale_HPAHealthy_HPAActiveTrue"),
        pytest.param(
            _NO_HPA_ACTIVE, id="TestRequestScale_HPAScalingDisabled_HPAActiveTrueWithDistinctReason"
        ),
        pytest.param(_NO_HPA_ACTIVE, id="TestCheckHPAHealth_CannotObserve_HPAActiveUnchanged"),
        pytest.param(_NO_HPA_ACTIVE, id="TestRequestScale_HPAActive_NotInSharedDefaults"),
    ],
)
def test_not_expressible(reason: str) -> None:
    pytest.skip(reason)


# newSOWithHPA: minReplicaCount 1; mockDeploymentGet: 1 replica. The Ready condition of each
# RequestScale; in the *_HPAUnhealthy / TransientHPAGap cases upstream also checks HPAActive=False,
# which gpufleet does not model (see above): only their Ready half is ported.
READY_CASES: list[tuple[str, list[float | None], Fallback | None, str, KedaReason]] = [
    ("TestRequestScale_AllHealthy_HPAHealthy", [ACTIVE], None, "True", KedaReason.ACTIVE),
    ("TestRequestScale_ScalerError_HPAHealthy", [ERROR], None, "False", KedaReason.TRIGGER_ERROR),
    (
        "TestRequestScale_PartialError_HPAHealthy",
        [ACTIVE, ERROR],
        None,
        "Unknown",
        KedaReason.PARTIAL_TRIGGER_ERROR,
    ),
    ("TestRequestScale_NoError_HPAUnhealthy", [ACTIVE], None, "True", KedaReason.ACTIVE),
    ("TestRequestScale_ScalerError_HPAUnhealthy", [ERROR], None, "False", KedaReason.TRIGGER_ERROR),
    ("TestRequestScale_TransientHPAGap_ReadyStaysTrue", [ACTIVE], None, "True", KedaReason.ACTIVE),
    (
        "TestRequestScale_ScalerErrorWithFallback_HPAHealthy",
        [ERROR],
        Fallback(failure_threshold=0, replicas=5),
        "True",
        KedaReason.FALLBACK,
    ),
]


@pytest.mark.parametrize(
    ("values", "fallback", "ready", "reason"),
    [pytest.param(v, f, r, why, id=i) for i, v, f, r, why in READY_CASES],
)
def test_request_scale_ready_condition(
    values: list[float | None], fallback: Fallback | None, ready: str, reason: KedaReason
) -> None:
    decision, _ = _request_scale(1, values, min_replica_count=1, fallback=fallback)
    assert decision.ready == ready
    assert decision.reason is reason
    assert decision.scale_to is None
