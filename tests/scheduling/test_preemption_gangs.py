"""Gang-aware preemption, as Volcano's ``preempt`` action and KAI's reclaim/preempt actions treat
PodGroups (not kube-scheduler's DefaultPreemption, which sees single pods): a victim gang goes
whole, a preempting gang preempts only if all of it then fits, and a gang never preempts itself."""

from __future__ import annotations

from preemption_setup import Cluster, pod

URGENT = 1000
GANG_REFUSAL = "preemption: gang default/train would not fit whole after preemption."


def test_a_victim_in_a_gang_is_evicted_with_its_members_on_other_nodes() -> None:
    c = Cluster("a", "b", "c")
    c.gang("low", 2)
    c.place(pod("low-0", 8, priority=1, group="low"), "a")
    c.place(pod("low-1", 8, priority=1, group="low"), "b")
    c.place(pod("solo", 8, priority=5), "c")
    out = c.preemption(pod("urgent", 8, priority=URGENT))
    assert (out.node, out.victims) == ("a", ("default/low-0", "default/low-1"))


def test_a_victim_gangs_other_members_count_in_the_ranking() -> None:
    """One local victim each, same priority; the gang's second member makes node a's sum larger."""
    c = Cluster("a", "b", "c")
    c.gang("low", 2)
    c.place(pod("low-0", 8, priority=5, group="low"), "a")
    c.place(pod("low-1", 8, priority=5, group="low"), "b")
    c.place(pod("solo", 8, priority=5), "c")
    out = c.preemption(pod("urgent", 8, priority=URGENT))
    assert (out.node, out.victims) == ("c", ("default/solo",))


def test_a_victim_gangs_other_members_count_against_budgets() -> None:
    """A budget allowing one disruption covers both members: evicting the gang violates it once,
    so node c's higher-priority but unprotected pod is preferred (fewest PDB violations)."""
    c = Cluster("a", "b", "c")
    c.gang("low", 2)
    c.protect("train", allowed=1)
    c.place(pod("low-0", 8, priority=1, group="low", labels={"app": "train"}), "a")
    c.place(pod("low-1", 8, priority=1, group="low", labels={"app": "train"}), "b")
    c.place(pod("solo", 8, priority=10), "c")
    out = c.preemption(pod("urgent", 8, priority=URGENT))
    assert (out.node, out.victims) == ("c", ("default/solo",))


def test_a_gang_with_a_member_of_the_preemptors_priority_is_no_victim() -> None:
    c = Cluster("a", "b")
    c.gang("mixed", 2)
    c.place(pod("mixed-0", 8, priority=1, group="mixed"), "a")
    c.place(pod("mixed-1", 8, priority=URGENT, group="mixed"), "b")
    outcomes = c.schedule(pod("urgent", 8, priority=URGENT))
    assert [o.kind for o in outcomes] == ["unschedulable"]
    assert (outcomes[0].message or "").endswith(
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


def test_members_of_one_gang_never_preempt_each_other() -> None:
    c = Cluster("a")
    c.gang("train", 2)
    c.place(pod("train-1", 8, priority=0, group="train"), "a")
    outcomes = c.schedule(pod("train-0", 8, priority=URGENT, group="train"))
    assert [o.kind for o in outcomes] == ["unschedulable"]
    assert (outcomes[0].message or "").endswith(
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_a_gang_preempts_nothing_when_the_whole_gang_would_not_fit() -> None:
    """train-0 alone could preempt on node a, but train-1 would find no node: node b runs a pod of
    higher priority than the gang."""
    c = Cluster("a", "b")
    c.gang("train", 2)
    c.place(pod("batch", 8, priority=1), "a")
    c.place(pod("vip", 8, priority=2 * URGENT), "b")
    outcomes = c.schedule(*(pod(f"train-{k}", 8, priority=URGENT, group="train") for k in range(2)))
    assert [o.kind for o in outcomes] == ["unschedulable", "unschedulable"]
    assert all((o.message or "").endswith(GANG_REFUSAL) for o in outcomes)
    assert c.scheduler.nominated == {}


def test_a_gang_preempts_for_every_member_when_the_whole_gang_fits() -> None:
    c = Cluster("a", "b", "c")
    c.gang("train", 2)
    c.place(pod("batch-a", 8, priority=1), "a")
    c.place(pod("batch-b", 8, priority=1), "b")
    c.place(pod("vip", 8, priority=2 * URGENT), "c")
    outcomes = c.schedule(*(pod(f"train-{k}", 8, priority=URGENT, group="train") for k in range(2)))
    preempting = [(o.pod.name, o.node, o.victims) for o in outcomes if o.kind == "preempting"]
    victims = ("default/batch-a", "default/batch-b")
    # every member's attempt makes the same plan (members in name order); evicting twice is a no-op
    assert preempting == [("train-0", "a", victims), ("train-1", "b", victims)]
    assert c.scheduler.nominated == {"default/train-0": "a", "default/train-1": "b"}


def test_a_gang_member_that_fits_after_earlier_members_preempted_takes_that_room() -> None:
    """Evicting the 2x8-GPU victim gang for train-0 frees node b too: train-1 needs no more victims,
    and node c's pod (more important than the victim gang) stays."""
    c = Cluster("a", "b", "c")
    c.gang("low", 2)
    c.gang("train", 2)
    c.place(pod("low-0", 8, priority=1, group="low"), "a")
    c.place(pod("low-1", 8, priority=1, group="low"), "b")
    c.place(pod("solo", 8, priority=5), "c")
    outcomes = c.schedule(*(pod(f"train-{k}", 8, priority=URGENT, group="train") for k in range(2)))
    first = next(o for o in outcomes if o.kind == "preempting")
    assert (first.pod.name, first.node, first.victims) == ("train-0", "a", ("default/low-0", "default/low-1"))
    assert c.scheduler.nominated == {"default/train-0": "a", "default/train-1": "b"}
