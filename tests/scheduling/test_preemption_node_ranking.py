"""Which node DefaultPreemption picks: ``pickOneNodeForPreemption`` (kubernetes 1.34
``pkg/scheduler/framework/preemption/preemption.go``), one test per criterion, each built so
that every earlier criterion ties and the criterion under test decides."""

from __future__ import annotations

from preemption_setup import Cluster, pod

URGENT = 1000


def test_rule_1_fewest_pdb_violations_wins_over_lower_victim_priority() -> None:
    c = Cluster("a", "b")
    c.protect("db", allowed=0)
    c.place(pod("db-0", 8, priority=1, labels={"app": "db"}), "a")
    c.place(pod("batch-0", 8, priority=5), "b")
    out = c.preemption(pod("urgent", 8, priority=URGENT))
    assert (out.node, out.victims) == ("b", ("default/batch-0",))


def test_rule_2_lowest_highest_victim_priority_wins_over_a_smaller_sum() -> None:
    c = Cluster("a", "b")
    c.place(pod("mid", 8, priority=10), "a")
    c.place(pod("low-0", 4, priority=5), "b")
    c.place(pod("low-1", 4, priority=5), "b")
    out = c.preemption(pod("urgent", 8, priority=URGENT))
    assert (out.node, out.victims) == ("b", ("default/low-0", "default/low-1"))


def test_rule_3_smallest_sum_of_victim_priorities() -> None:
    c = Cluster("a", "b")
    c.place(pod("a-0", 4, priority=5), "a")
    c.place(pod("a-1", 4, priority=5), "a")
    c.place(pod("b-0", 4, priority=5), "b")
    c.place(pod("b-1", 4, priority=1), "b")
    out = c.preemption(pod("urgent", 8, priority=URGENT))
    assert (out.node, out.victims) == ("b", ("default/b-0", "default/b-1"))


def test_rule_4_fewest_victims_when_priority_sums_tie() -> None:
    """Each priority counts plus 2^31 in the sum: one victim at 5 weighs as much as a victim at 5
    and one at -2^31, so only the number of victims tells the nodes apart."""
    c = Cluster("a", "b")
    c.place(pod("b-0", 4, priority=5), "a")
    c.place(pod("b-1", 4, priority=-(2**31)), "a")
    c.place(pod("one", 8, priority=5), "b")
    out = c.preemption(pod("urgent", 8, priority=URGENT))
    assert (out.node, out.victims) == ("b", ("default/one",))


def test_rule_5_latest_start_of_the_highest_priority_victims() -> None:
    c = Cluster("a", "b")
    c.place(pod("old", 8, priority=5), "a", at=10.0)
    c.place(pod("new", 8, priority=5), "b", at=20.0)
    out = c.preemption(pod("urgent", 8, priority=URGENT))
    assert (out.node, out.victims) == ("b", ("default/new",))


def test_rule_6_first_candidate_when_everything_ties() -> None:
    """Upstream takes the first of its map; gpufleet the lowest node index, for determinism."""
    c = Cluster("a", "b")
    c.place(pod("x", 8, priority=5), "a", at=10.0)
    c.place(pod("y", 8, priority=5), "b", at=10.0)
    out = c.preemption(pod("urgent", 8, priority=URGENT))
    assert (out.node, out.victims) == ("a", ("default/x",))


def test_a_node_whose_victims_violate_a_budget_is_still_a_candidate() -> None:
    """PDBs are best effort (``SelectVictimsOnNode``): with no other node, the protected pod goes."""
    c = Cluster("a")
    c.protect("db", allowed=0)
    c.place(pod("db-0", 8, priority=1, labels={"app": "db"}), "a")
    out = c.preemption(pod("urgent", 8, priority=URGENT))
    assert (out.node, out.victims) == ("a", ("default/db-0",))
