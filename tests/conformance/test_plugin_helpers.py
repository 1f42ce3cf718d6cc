"""kube-scheduler v1.34.10 ``pkg/scheduler/framework/plugins/helper``: ``normalize_score_test.go``
TestDefaultNormalizeScore (gpufleet's ``default_normalize``) and ``taint_test.go``
TestDoNotScheduleTaintsFilterFunc (which taint effects TaintToleration's Filter looks at), ported
case by case."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from builders import cases, filter_status, make_node, make_pod

from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Taint
from gpufleet.scheduling.framework import default_normalize
from gpufleet.scheduling.plugins.taint_toleration import TaintToleration

NORMALIZE: list[Any] = [
    ("case_0", False, [1, 2, 3, 4], [25, 50, 75, 100]),
    ("case_1", True, [1, 2, 3, 4], [75, 50, 25, 0]),
    ("case_2", False, [1000, 10, 20, 30], [100, 1, 2, 3]),
    ("case_3", True, [1000, 10, 20, 30], [0, 99, 98, 97]),
    ("case_4", False, [1, 1, 1, 1], [100, 100, 100, 100]),
    ("case_5", False, [1000, 1, 1, 1], [100, 0, 0, 0]),
    ("case_6", True, [0, 1, 1, 1], [100, 0, 0, 0]),
    ("case_7", False, [0, 0, 0, 0], [0, 0, 0, 0]),
    ("case_8", True, [0, 0, 0, 0], [100, 100, 100, 100]),
]


@pytest.mark.parametrize(("reverse", "scores", "want"), cases("TestDefaultNormalizeScore", NORMALIZE, 3))
def test_default_normalize_score(reverse: bool, scores: list[int], want: list[int]) -> None:
    got = default_normalize(np.array(scores, dtype=np.int64), reverse=reverse)
    assert [int(s) for s in got] == want


DO_NOT_SCHEDULE: list[Any] = [
    ("should include the taints with NoSchedule effect", NO_SCHEDULE, True),
    ("should include the taints with NoExecute effect", NO_EXECUTE, True),
    ("should not include the taints with PreferNoSchedule effect", PREFER_NO_SCHEDULE, False),
]


@pytest.mark.parametrize(
    ("effect", "included"), cases("TestDoNotScheduleTaintsFilterFunc", DO_NOT_SCHEDULE, 2)
)
def test_do_not_schedule_taints_filter(effect: str, included: bool) -> None:
    """An untolerated taint of this effect rejects the node exactly when the filter function keeps it."""
    node = make_node("n", taints=[Taint("k", "v", effect)])
    assert (not filter_status(TaintToleration(), make_pod(), node).ok) is included
