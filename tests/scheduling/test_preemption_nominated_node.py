"""Pods nominated by preemption hold their node against lower-priority pods
(kube-scheduler ``RunFilterPluginsWithNominatedPods``/``addNominatedPods``: nominated pods of
equal or higher priority count on their node while another pod is filtered)."""

from __future__ import annotations

from preemption_setup import Cluster, pod


def test_a_lower_priority_pod_cannot_take_the_room_a_nominated_pod_freed() -> None:
    c = Cluster("a")
    c.place(pod("victim", 8, priority=1), "a")
    out = c.preemption(pod("urgent", 8, priority=1000))
    assert (out.node, out.victims) == ("a", ("default/victim",))
    c.state.unassign("default/victim")  # the victim is gone before the preemptor's retry
    outcomes = c.schedule(pod("small", 1, priority=500), now=101.0)
    small = [o for o in outcomes if o.pod.name == "small"]
    assert [o.kind for o in small] == ["unschedulable"]  # not on a: urgent's 8 GPUs are held there
    assert c.state.assignments.keys() == set()


def test_a_higher_priority_pod_ignores_a_lower_nominated_pod() -> None:
    c = Cluster("a")
    c.place(pod("victim", 8, priority=1), "a")
    c.preemption(pod("urgent", 8, priority=500))
    c.state.unassign("default/victim")
    outcomes = c.schedule(pod("critical", 8, priority=2000), now=101.0)
    assert [(o.pod.name, o.kind, o.node) for o in outcomes if o.pod.name == "critical"] == [
        ("critical", "bound", "a")
    ]
