"""cluster-autoscaler 1.34's ``TestFilterOutYoungPods`` (tag ``cluster-autoscaler-1.34.5``,
``cluster-autoscaler/core/static_autoscaler_test.go``), row by row, against ``autoscaling.young_pods``: four
pods created a minute before ``now``, p2 annotated ``pod-scale-up-delay: 5m``, p3 ``2m``, p4 ``error``. The
pods left for scale-up are those not young; upstream's log lines (a shorter annotation, one that does not
parse: the flag's delay kept) are not asserted, their outcome is."""

from __future__ import annotations

import pytest

from gpufleet.autoscaling.young_pods import POD_SCALE_UP_DELAY, young_pods
from gpufleet.model.pod import Pod

NOW = 1000.0
MINUTE = 60.0


def _pod(name: str, delay: str | None = None) -> Pod:
    return Pod(name, annotations={POD_SCALE_UP_DELAY: delay} if delay is not None else {})


P1, P2, P3, P4 = _pod("p1"), _pod("p2", "5m"), _pod("p3", "2m"), _pod("p4", "error")


@pytest.mark.parametrize(
    ("flag_s", "run_time", "pods", "expected"),
    [
        pytest.param(0.0, NOW, [P1, P2], ["p1"], id="annotation delayed pod checking now"),
        pytest.param(
            0.0, NOW + 5 * MINUTE, [P1, P2], ["p1", "p2"], id="annotation delayed pod checking after delay"
        ),
        pytest.param(5 * MINUTE, NOW, [P1, P2], [], id="globally delayed pods"),
        pytest.param(5 * MINUTE, NOW + 2 * MINUTE, [P1, P3], [], id="annotation delay smaller than global"),
        pytest.param(0.0, NOW, [P1, P4], ["p1", "p4"], id="annotation delay with error"),
    ],
)
def test_filter_out_young_pods(flag_s: float, run_time: float, pods: list[Pod], expected: list[str]) -> None:
    created = {p.key: NOW - MINUTE for p in pods}
    young = young_pods(pods, created, run_time, flag_s)
    assert [p.name for p in pods if p.key not in young] == expected
