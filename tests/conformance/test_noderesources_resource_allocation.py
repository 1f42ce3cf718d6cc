"""kube-scheduler v1.34.10 ``noderesources/resource_allocation_test.go``
TestResourceAllocationScorerCalculateRequests, ported case by case: the cpu and memory a pod counts
for scoring (``NonMissingContainerRequests``: 100m and 200Mi for each container, init containers
included, that leaves the request out), as gpufleet's pod reader works them out."""

from __future__ import annotations

from typing import Any

import pytest
from builders import cases, container, make_pod

from gpufleet.kube.pods import NON_MISSING_REQUESTS
from gpufleet.model.resources import pod_requests

MI = 1048576
CPU, MEM = 100, 200 * MI  # schedutil.DefaultMilliCPURequest, DefaultMemoryRequest
ONE = {"cpu": "1", "memory": "1Mi"}
OVERHEAD = {"overhead": {"cpu": "1", "memory": "1Mi"}}
SMALL_INIT = [container(), container({"cpu": "1m", "memory": "1"})]

# (name, app containers, init containers, spec, (cpu millicores, memory bytes))
CALCULATE: list[Any] = [
    ("overhead only", None, [], OVERHEAD, (1000, MI)),
    ("1x requestless container", [container()], [], {}, (CPU, MEM)),
    ("2x requestless container", [container(), container()], [], {}, (2 * CPU, 2 * MEM)),
    (
        "request container + requestless container",
        [container(ONE), container()],
        [],
        {},
        (1000 + CPU, MI + MEM),
    ),
    (
        "container + requestless container + overhead",
        [container(ONE), container()],
        [],
        OVERHEAD,
        (2000 + CPU, 2 * MI + MEM),
    ),
    (
        "init container + container + requestless container + overhead",
        [container(ONE), container()],
        [container({"cpu": "3"})],
        OVERHEAD,
        (4000, 2 * MI + MEM),
    ),
    (
        "requestless init container + small init container + small container ",
        [container({"cpu": "3m", "memory": "3"})],
        SMALL_INIT,
        {},
        (CPU, MEM),
    ),
    (
        "requestless init container + small init container + small container + requestless container ",
        [container({"cpu": "3m", "memory": "3"}), container()],
        SMALL_INIT,
        {},
        (3 + CPU, 3 + MEM),
    ),
]


@pytest.mark.parametrize(
    ("containers", "init", "spec", "want"),
    cases("TestResourceAllocationScorerCalculateRequests", CALCULATE, 4),
)
def test_scoring_requests(
    containers: list[dict[str, Any]] | None,
    init: list[dict[str, Any]],
    spec: dict[str, Any],
    want: tuple[int, int],
) -> None:
    if containers is None:
        # a pod without containers is refused by the API server: ``PodRequests`` on the overhead alone
        scored = pod_requests([], [], {"cpu": 1000, "memory": MI}, NON_MISSING_REQUESTS)
    else:
        pod = make_pod(containers, init=init, spec=spec)
        assert pod.nonzero_requests is not None
        scored = pod.nonzero_requests
    assert (scored.get("cpu", 0), scored.get("memory", 0)) == want
