"""Kueue's TAS flavor snapshot, ``kubernetes-sigs/kueue:
pkg/cache/scheduler/tas_flavor_snapshot_test.go`` (at commit ``ff69552e79ad``: 13 test functions, 59 table
cases and 4 subtests), case by case: each pytest id is ``<upstream test>/<case>``, held
against ``gpufleet.scheduling.kueue.topology``.

This file tests the snapshot's helpers: which pod sets name a level of the topology (``HasLevel``), the
order in which domains are tried (``sortedDomains`` and its tie-break ``compareDomainLevelValues``) and the
remaining capacity a TAS usage leaves (``TestTASCachingRemainingResourcesFeatureGate``). The search itself,
``FindTopologyAssignmentsForFlavor`` (the brief's ``TestFindTopologyAssignment``), is tabled in
``tas_cache_test.go`` at this commit; its port is ``test_kueue_tas_cache.py``.

gpufleet's domain state is one count per domain, the pods it holds (upstream's ``podCount``; with no pod
set slices ``sliceCount`` equals it): a case whose states differ only in what gpufleet does not keep
(slices, leaders, preferred-affinity scores) is skipped, with the reason on its row, as are upstream's
helpers for structures gpufleet does not have (the free-capacity JSON dump, stale and merged
``TopologyAssignment``s, truncation for elastic workloads, logs).
"""

from __future__ import annotations

import pytest
from builders import Skip, cases

from gpufleet.model.kueue import Topology
from gpufleet.scheduling.kueue.topology import (
    PREFERRED,
    REQUIRED,
    UNCONSTRAINED,
    Domain,
    DomainSearch,
    NodeRoom,
    TopologyRequest,
    place,
    request_of,
)

SLICES = (
    "pod set slices (podset-slice-required-topology / podset-slice-size) are not modelled by gpufleet's TAS"
)
LEADERS = (
    "domains' leader counts (pod set groups: leader and workers placed together) are not modelled; gpufleet "
    "places a group's pod sets each on its own"
)
AFFINITY = (
    "TASRespectNodeAffinityPreferred (alpha, off by default at this commit): preferred node affinity scores "
    "are not modelled"
)
FREE_CAPACITY = (
    "SerializeFreeCapacityPerDomain is the snapshot's JSON debug dump of leaf free capacity and TAS usage "
    "(VectorizedResourceRequests on and off); gpufleet has no such dump"
)
STALE = (
    "IsTopologyAssignmentStale checks an admitted TopologyAssignment against the current tree for "
    "failed-node replacement, which gpufleet does not model"
)
MERGE = (
    "mergeTopologyAssignments joins the assignments of elastic workload slices / replacements, which "
    "gpufleet does not model"
)
ASSIGNMENT = (
    "gpufleet's assignment is one node per pod (a list), not a compressed TopologyAssignment; its pod count "
    "is the list's length"
)
ASSUMED = (
    "assumed usage is the per-node free map place() keeps between pod sets (requests and one pods per pod); "
    "the rule is held by TestFindTopologyAssignments/multiple PodSets account assumed pod usage against "
    "allocatable pods in test_kueue_tas_cache.py"
)
TRUNCATE = (
    "truncateAssignment shrinks an elastic workload's assignment on scale-down, which gpufleet does not model"
)
LOGS = "the snapshot's log entries (leaf summaries at error and at high verbosity) are not modelled"

LEVELS = ("level-1", "level-2")

# TestHasLevel: (case, the pod template's annotations, want).
HAS_LEVEL = [
    ("topology request nil", {}, False),
    ("topology request empty", {}, False),
    ("required", {REQUIRED: "level-1"}, True),
    ("required – invalid level", {REQUIRED: "invalid-level"}, False),
    ("preferred", {PREFERRED: "level-1"}, True),
    ("preferred – invalid level", {PREFERRED: "invalid-level"}, False),
    ("unconstrained", {UNCONSTRAINED: "true"}, True),
    ("slice-only", Skip(SLICES)),
    ("slice-only – invalid level", Skip(SLICES)),
]


@pytest.mark.parametrize(("annotations", "want"), cases("TestHasLevel", HAS_LEVEL, 2))
def test_has_level(annotations: dict[str, str], want: bool) -> None:
    """A pod set names a level of the topology when it asks for TAS and the topology lists its level:
    ``place`` refuses the others with ``no requested topology level``."""
    asked = request_of(annotations)
    got = False
    if asked is not None:
        placed = place([TopologyRequest("main", 1, {"cpu": 1}, *asked)], Topology("dummy", LEVELS), {})
        got = not (isinstance(placed, str) and "no requested topology level" in placed)
    assert got == want


def _sorted_ids(domains: list[tuple[str, int]], unconstrained: bool) -> list[str]:
    """The domains (one level, ``block``; id and pods each holds) in ``DomainSearch.sorted``'s order."""
    search = DomainSearch(("block",), {name: {"block": name} for name, _ in domains})
    search.fill(dict(domains))
    search.unconstrained = unconstrained
    return [d.values[0] for d in search.sorted(search.leaves())]


# TestSortedDomains: (case, [(levelValues, pods)], unconstrained, wantOrder). Upstream's ids are the
# level values here (``low-affinity`` is ``a``, ``high-affinity`` ``b``).
SORTED_DOMAINS = [
    ("affinityScore descending: higher affinity score comes first", Skip(AFFINITY)),
    ("affinityScore ignored when feature gate is disabled", [("a", 10), ("b", 10)], False, ["a", "b"]),
    ("BestFit: sliceCount descending", [("a", 3), ("b", 1), ("c", 2)], False, ["a", "c", "b"]),
    ("LeastFreeCapacity: sliceCount ascending", [("a", 3), ("b", 1), ("c", 2)], True, ["b", "c", "a"]),
    ("BestFit: podCount ascending as tiebreaker", Skip(f"{SLICES}: equal sliceCount, different podCount")),
    (
        "LeastFreeCapacity: podCount ascending as tiebreaker",
        Skip(f"{SLICES}: equal sliceCount, different podCount"),
    ),
    ("levelValues ascending as final tiebreaker", [("c", 10), ("a", 10), ("b", 10)], False, ["a", "b", "c"]),
]


@pytest.mark.parametrize(("domains", "unconstrained", "want"), cases("TestSortedDomains", SORTED_DOMAINS, 3))
def test_sorted_domains(domains: list[tuple[str, int]], unconstrained: bool, want: list[str]) -> None:
    assert _sorted_ids(domains, unconstrained) == want


SORTED_WITH_LEADER = [
    ("affinityScore descending: higher affinity score comes first", Skip(f"{LEADERS}; {AFFINITY}")),
    ("affinityScore ignored when feature gate is disabled", Skip(LEADERS)),
    ("leaderCount descending: domains that can host leader come first", Skip(LEADERS)),
    ("leader capability prioritized over preferred affinity", Skip(f"{LEADERS}; {AFFINITY}")),
    ("BestFit: sliceCountWithLeader descending", Skip(LEADERS)),
    ("LeastFreeCapacity: sliceCountWithLeader ascending", Skip(LEADERS)),
    ("BestFit: podCountWithLeader ascending as tiebreaker", Skip(LEADERS)),
    ("LeastFreeCapacity: podCountWithLeader ascending as tiebreaker", Skip(LEADERS)),
    ("levelValues ascending as final tiebreaker", Skip(LEADERS)),
]


@pytest.mark.parametrize("case", cases("TestSortedDomainsWithLeader", SORTED_WITH_LEADER, 1))
def test_sorted_domains_with_leader(case: None) -> None:
    raise AssertionError("every case is skipped")


H3 = ("b1", "r1")
# TestCompareDomainLevelValues: (case, a's level values, b's level values, want sign). Upstream compares
# only the hostname of same-parent leaves; that is the same order as comparing all their values.
COMPARE_LEVEL_VALUES = [
    (
        "isLowestLevelNode with same-parent sibling domains: ascending by hostname",
        (*H3, "node-a"),
        (*H3, "node-b"),
        -1,
    ),
    (
        "isLowestLevelNode with same-parent sibling domains: descending by hostname",
        (*H3, "node-b"),
        (*H3, "node-a"),
        1,
    ),
    (
        "isLowestLevelNode with same-parent sibling domains: equal hostname",
        (*H3, "node-a"),
        (*H3, "node-a"),
        0,
    ),
    (
        "fallback comparator: multi-level inputs with different parents sorted lexicographically across "
        "levels",
        ("b1", "r1", "node-z"),
        ("b1", "r2", "node-a"),
        -1,
    ),
    (
        "fallback comparator: non-hostname levels sorted lexicographically across levels",
        ("b1", "r1"),
        ("b1", "r2"),
        -1,
    ),
]


@pytest.mark.parametrize(("a", "b", "want"), cases("TestCompareDomainLevelValues", COMPARE_LEVEL_VALUES, 3))
def test_compare_domain_level_values(a: tuple[str, ...], b: tuple[str, ...], want: int) -> None:
    """Domains holding as many pods are tried in the order of their level values."""
    search = DomainSearch(("block", "rack", "kubernetes.io/hostname"), {})
    first, second = Domain(a, [], []), Domain(b, [], [])
    order = search.sorted([first, second])
    if want == 0:
        assert first.values == second.values
    else:
        assert order == ([first, second] if want < 0 else [second, first])


OTHER_TABLES = [
    *[
        (f"TestFreeCapacityPerDomain/{name}", Skip(FREE_CAPACITY))
        for name in (
            "domains with free capacity and TAS usage",
            "domain with free capacity, but without TAS usage",
            "domain without free capacity and without TAS usage",
            "snapshot without domains",
        )
    ],
    *[
        (f"TestIsTopologyAssignmentStale/{name}", Skip(STALE))
        for name in (
            "existing hostname leaf is not stale",
            "missing hostname leaf is stale",
            "deleted node is stale even when its hostname matches an existing root domain ID",
            "existing non-hostname leaf is not stale",
            "missing non-hostname leaf is stale",
        )
    ],
    *[
        (f"TestMergeTopologyAssignments/{name}", Skip(MERGE))
        for name in (
            "topologies with different domains, all a before b",
            "topologies with different domains, all b before a",
            "topologies with different domains, mixed order",
            "topologies with different and the same domains, mixed order",
            "topology a with empty domains",
            "topology b with empty domain",
        )
    ],
    *[
        (f"TestCountPodsInAssignment/{name}", Skip(ASSIGNMENT))
        for name in ("empty assignment", "single domain", "multiple domains")
    ],
    *[
        (f"TestComputeAssumedUsageFromAssignment/{name}", Skip(ASSUMED))
        for name in ("empty assignment", "single domain with one pod", "multiple domains")
    ],
    *[
        (f"TestAddAssumedUsage/{name}", Skip(ASSUMED))
        for name in (
            "includes pod count for existing and new domains",
            "includes pod count starting from empty assumed usage",
        )
    ],
    *[
        (f"TestTruncateAssignment/{name}", Skip(TRUNCATE))
        for name in (
            "truncate to zero",
            "no truncation needed",
            "truncate to single domain",
            "truncation preserves assignment order not lex order",
            "partial domain truncation",
            "truncate within first domain",
        )
    ],
    *[
        (f"TestUpdateCountsToMinimumGenericLogsLeafSummary/{name}", Skip(LOGS))
        for name in (
            "the error entry summarizes the leaf domains instead of dumping them",
            "the leaf domains are logged at high verbosity",
        )
    ],
]


@pytest.mark.parametrize(
    "case", [pytest.param(*p.values, id=p.id[1:], marks=p.marks) for p in cases("", OTHER_TABLES, 1)]
)
def test_snapshot_helpers_gpufleet_does_not_have(case: None) -> None:
    raise AssertionError("every case is skipped")


@pytest.mark.parametrize("caching", [True, False], ids=["enableCaching=true", "enableCaching=false"])
def test_tas_caching_remaining_resources_feature_gate(caching: bool) -> None:
    """A pod of 5 CPU fits node-a (8 CPU) before a TAS usage of 4 CPU, not with it, and again once it is
    gone (upstream's ``Fits`` with ``TASCachingRemainingResources`` on and off; gpufleet keeps no cache, so
    both are the same)."""
    topology = Topology("tas-topology", ("hostname",))
    ask = [TopologyRequest("main", 1, {"cpu": 5000}, "hostname", None)]

    def fits(free_cpu: int) -> bool:
        return not isinstance(
            place(ask, topology, {"node-a": NodeRoom({"hostname": "node-a"}, {"cpu": free_cpu})}), str
        )

    assert fits(8000)
    assert not fits(8000 - 4000)
    assert fits(8000)
