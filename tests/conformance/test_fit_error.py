"""kube-scheduler v1.34.10 ``pkg/scheduler/framework/types_test.go`` TestFitError_Error, ported case by
case: ``FitError.Error()`` from a diagnosis (the PreFilter message, each node's filter reasons, the
PostFilter message), gpufleet's ``messages.fit_error``. The other tests of that file (Resource,
NodeInfo, PodInfo, ports bookkeeping) check Go data structures gpufleet keeps as columns instead."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from builders import cases

from gpufleet.scheduling.messages import fit_error

PREFILTER = "Node(s) failed PreFilter plugin FalsePreFilter"
FILTER_1 = "Node(s) failed Filter plugin FalseFilter-1"
FILTER_2 = "Node(s) failed Filter plugin FalseFilter-2"
POSTFILTER = "Error running PostFilter plugin FailedPostFilter"

# (name, number of nodes, PreFilter message, each node's reason, PostFilter message, message)
FIT_ERROR: list[Any] = [
    (
        "nodes failed Prefilter plugin",
        3,
        PREFILTER,
        [PREFILTER] * 3,
        "",
        "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter.",
    ),
    (
        "nodes failed Prefilter plugin and the preemption also failed",
        3,
        PREFILTER,
        [PREFILTER] * 3,
        POSTFILTER,
        "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter. "
        "Error running PostFilter plugin FailedPostFilter",
    ),
    (
        "nodes failed one Filter plugin with an empty PostFilterMsg",
        3,
        "",
        [FILTER_1] * 3,
        "",
        "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1.",
    ),
    (
        "nodes failed one Filter plugin with a non-empty PostFilterMsg",
        3,
        "",
        [FILTER_1] * 3,
        POSTFILTER,
        "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1. "
        "Error running PostFilter plugin FailedPostFilter",
    ),
    (
        "nodes failed two Filter plugins with an empty PostFilterMsg",
        3,
        "",
        [FILTER_1, FILTER_1, FILTER_2],
        "",
        "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
        "2 Node(s) failed Filter plugin FalseFilter-1.",
    ),
    (
        "nodes failed two Filter plugins with a non-empty PostFilterMsg",
        3,
        "",
        [FILTER_1, FILTER_1, FILTER_2],
        POSTFILTER,
        "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
        "2 Node(s) failed Filter plugin FalseFilter-1. Error running PostFilter plugin FailedPostFilter",
    ),
    (
        "failed to Permit on node",
        1,
        "",
        ["Node failed Permit plugin Permit-1"],
        "",
        "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
    ),
    (
        "failed to Reserve on node",
        1,
        "",
        ["Node failed Reserve plugin Reserve-1"],
        "",
        "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.",
    ),
]


@pytest.mark.parametrize(
    ("num_nodes", "pre_filter", "node_reasons", "post_filter", "want"),
    cases("TestFitError_Error", FIT_ERROR, 5),
)
def test_fit_error_message(
    num_nodes: int, pre_filter: str, node_reasons: list[str], post_filter: str, want: str
) -> None:
    assert fit_error(num_nodes, Counter(node_reasons), pre_filter, post_filter) == want
