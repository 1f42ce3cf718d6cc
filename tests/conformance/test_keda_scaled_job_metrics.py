"""KEDA's ScaledJob metrics tests, accounted for case by case.

Upstream: ``kedacore/keda`` v2.20.2, ``pkg/scaling/scaledjob/metrics_test.go``. Each pytest id is
``TestTargetAverageValue/<n>``, one per ``assert`` in upstream order.

``getTargetAverageValue`` averages the ``AverageValue`` targets of the several metric specs *one*
scaler returns. Every trigger gpufleet models (redis, prometheus) returns exactly one metric spec,
whose target ``scaler_metrics`` (``CalculateQueueLengthAndMaxValue``) reads directly, so the
averaging (over zero, two or three specs) has no counterpart.
"""

from __future__ import annotations

import pytest

_ONE_SPEC = (
    "getTargetAverageValue averages the targets of several metric specs of one scaler; gpufleet's "
    "scalers (redis, prometheus) each return exactly one metric spec"
)


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param(_ONE_SPEC, id="TestTargetAverageValue/1 no specs -> 0"),
        pytest.param(_ONE_SPEC, id="TestTargetAverageValue/2 targets 1 1 -> 1"),
        pytest.param(_ONE_SPEC, id="TestTargetAverageValue/3 targets 5 5 3 -> 4.333333333333333"),
        pytest.param(_ONE_SPEC, id="TestTargetAverageValue/4 targets 5 5 4 -> 4.666666666666667"),
    ],
)
def test_not_expressible(reason: str) -> None:
    pytest.skip(reason)
