"""PodDisruptionBudgets in DefaultPreemption's victim choice on one node (kubernetes 1.34
``defaultpreemption/default_preemption.go``: ``SelectVictimsOnNode``, ``filterPodsWithPDBViolation``)."""

from __future__ import annotations

from preemption_setup import Cluster, budget, pod

from gpufleet.cluster.snapshot import ClusterSnapshot
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.scheduling.framework import PodContext
from gpufleet.scheduling.plugins.default_preemption import DefaultPreemption, pdb_violations

URGENT = 1000


def test_pdb_violating_victims_are_reprieved_before_more_important_ones() -> None:
    """Without the budget the more important pod (5) would be kept and db-0 (1) evicted; the
    violating db-0 is reprieved first, so batch-0 goes instead."""
    c = Cluster("a")
    c.protect("db", allowed=0)
    c.place(pod("batch-0", 4, priority=5), "a")
    c.place(pod("db-0", 4, priority=1, labels={"app": "db"}), "a")
    out = c.preemption(pod("urgent", 4, priority=URGENT))
    assert out.victims == ("default/batch-0",)


def test_without_budgets_the_most_important_victim_is_reprieved_first() -> None:
    c = Cluster("a")
    c.place(pod("batch-0", 4, priority=5), "a")
    c.place(pod("db-0", 4, priority=1, labels={"app": "db"}), "a")
    out = c.preemption(pod("urgent", 4, priority=URGENT))
    assert out.victims == ("default/db-0",)


def test_violating_victims_that_must_go_are_counted() -> None:
    """numViolatingVictim: the violating pods not reprieved; the victims stay most important first."""
    c = Cluster("a")
    c.protect("db", allowed=0)
    c.place(pod("batch-0", 4, priority=5), "a")
    c.place(pod("db-0", 4, priority=1, labels={"app": "db"}), "a")
    urgent = pod("urgent", 8, priority=URGENT)
    plugin = DefaultPreemption()
    candidate, reasons = plugin.select_victims(
        PodContext(urgent, c.state), 0, c.scheduler.profiles["default-scheduler"].dynamic_filters
    )
    assert reasons == [] and candidate is not None
    assert [a.pod.name for a in candidate.victims] == ["batch-0", "db-0"]
    assert candidate.violations == 1


def test_budget_allowance_is_used_up_in_importance_order() -> None:
    """Each covered pod takes one disruption; the budget is violated from the pod that takes it
    below zero on."""
    c = Cluster("a")
    c.protect("db", allowed=1)
    pods = [pod(f"db-{k}", 1, labels={"app": "db"}) for k in range(3)]
    assert pdb_violations(pods, ClusterSnapshot(c.state)) == [False, True, True]


def test_a_budget_with_an_empty_selector_or_a_pod_without_labels_matches_nothing() -> None:
    """filterPodsWithPDBViolation: ``selector.Empty()`` and unlabelled pods never match, although
    a policy/v1 empty selector selects every pod for the eviction API."""
    c = Cluster("a")
    everything = DisruptionBudget("default", "all", (), min_available=1)
    c.budgets.allowed += [(everything, 0), (budget("pdb-db", "db"), 0)]
    unlabelled = pod("bare", 1)
    other = pod("web-0", 1, labels={"app": "web"})
    db = pod("db-0", 1, labels={"app": "db"})
    assert pdb_violations([unlabelled, other, db], ClusterSnapshot(c.state)) == [False, False, True]
