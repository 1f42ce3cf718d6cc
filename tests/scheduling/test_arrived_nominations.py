"""A pod that exists with ``status.nominatedNodeName`` (a dump's pod, or the API's, that an earlier
preemption nominated) and the nominations preemption clears (kube-scheduler 1.34).

- ``PriorityQueue.moveToActiveQ`` calls ``AddNominatedPod`` with the pod's own
  ``status.nominatedNodeName`` (``nominator.addNominatedPodUnlocked``, ``ModeNoop``) as the pod enters the
  active queue; a pod PreEnqueue keeps out (scheduling gates) is not nominated until it enters.
- ``schedulePod``'s ``evaluateNominatedNode`` tries the nominated node first; ``addNominatedPods`` holds
  it for pods of lower or equal priority.
- ``Evaluator.Preempt``: with no candidate it returns ``NewPostFilterResultWithNominatedNode("")``
  (``ModeOverride``, no node), so ``handleSchedulingFailure`` clears the nomination; a pod not eligible
  to preempt keeps it (``nil`` result, ``ModeNoop``)."""

from __future__ import annotations

from preemption_setup import Cluster, pod

from gpufleet.model.pod import Pod
from gpufleet.scheduling.scheduler import Outcome


def busy(c: Cluster, node: str, gpus: int, priority: int = 0) -> None:
    c.place(pod(f"on-{node}", gpus, priority=priority), node)


def arrive(c: Cluster, p: Pod, node: str, now: float = 100.0) -> list[Outcome]:
    c.gangs.add_pod(p)
    c.scheduler.arrive_nominated(p.key, node)
    c.scheduler.add(p, now)
    return c.scheduler.run(now)


def test_a_pod_that_arrives_nominated_is_tried_on_its_node_first() -> None:
    """``evaluateNominatedNode``: node a, half full, passes the filters, so it is the pod's node, unscored,
    though LeastAllocated scores the empty node b higher (without the nomination the pod goes to b)."""
    c = Cluster("a", "b")
    busy(c, "a", 4)
    outcomes = arrive(c, pod("urgent", 4, priority=1000), "a")
    assert [(o.pod.name, o.kind, o.node) for o in outcomes] == [("urgent", "bound", "a")]
    assert c.scheduler.nominated == {}


def test_the_empty_node_wins_without_a_nomination() -> None:
    """The control of the test above: scored, the pod goes to the empty node b."""
    c = Cluster("a", "b")
    busy(c, "a", 4)
    outcomes = c.schedule(pod("urgent", 4, priority=1000))
    assert [(o.pod.name, o.kind, o.node) for o in outcomes] == [("urgent", "bound", "b")]


def test_a_pod_that_arrives_nominated_holds_its_node_for_lower_priority_pods() -> None:
    """``addNominatedPods``: the arrived nominee waits for its victim, terminating on node a
    (``PodEligibleToPreemptOthers``: not eligible again, so it keeps its nomination), and counts on a while
    a lower-priority pod is filtered, which cannot take the 4 GPUs left there."""
    c = Cluster("a")
    busy(c, "a", 4, priority=1)
    victim = c.state.assignments["default/on-a"]
    victim.preempted = True
    c.state.set_terminating(victim)
    outcomes = arrive(c, pod("urgent", 8, priority=1000), "a")
    [failed] = [o for o in outcomes if o.pod.name == "urgent"]
    assert failed.message is not None and failed.message.endswith(
        "preemption: not eligible due to a terminating pod on the nominated node."
    )
    outcomes = c.schedule(pod("small", 4, priority=0), now=101.0)
    assert [(o.pod.name, o.kind) for o in outcomes] == [("small", "unschedulable")]
    assert c.scheduler.nominated == {"default/urgent": "a"}


def test_a_gated_pod_is_not_nominated_until_it_enters_the_queue() -> None:
    """``moveToActiveQ`` nominates only a pod that passes PreEnqueue: the gated nominee holds nothing, so
    a lower-priority pod takes node a; once ungated it is nominated (and, a full, it fails there)."""
    c = Cluster("a")
    gated = Pod(
        "urgent", requests={"nvidia.com/gpu": 8}, priority=1000, scheduling_gates=("example.com/wait",)
    )
    c.gangs.add_pod(gated)
    c.scheduler.arrive_nominated(gated.key, "a")
    assert c.scheduler.add(gated, 100.0) is not None
    assert c.scheduler.nominated == {}
    outcomes = c.schedule(pod("small", 4, priority=0))
    assert [(o.pod.name, o.kind, o.node) for o in outcomes] == [("small", "bound", "a")]
    ungated = Pod("urgent", requests={"nvidia.com/gpu": 8}, priority=1000)
    assert c.scheduler.add(ungated, 101.0) is None
    assert c.scheduler.nominated == {"default/urgent": "a"}


def test_preemption_without_a_candidate_clears_the_pod_s_nomination() -> None:
    """``Preempt``: nominated to a, the pod no longer fits there (a pod of higher priority took it) and no
    node has victims for it: ``NewPostFilterResultWithNominatedNode("")`` clears the nomination, and the
    outcome says so (the live scheduler writes ``nominatedNodeName`` null)."""
    c = Cluster("a")
    busy(c, "a", 8, priority=5000)
    outcomes = arrive(c, pod("urgent", 8, priority=1000), "a")
    [failed] = [o for o in outcomes if o.pod.name == "urgent"]
    assert (failed.kind, failed.unnominated) == ("unschedulable", True)
    assert failed.message is not None and failed.message.endswith(
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    assert c.scheduler.nominated == {} and c.scheduler.nominees == {}


def test_a_pod_not_eligible_to_preempt_keeps_its_nomination() -> None:
    """``PodEligibleToPreemptOthers`` false (``preemptionPolicy: Never``): ``Preempt`` returns no result
    (``ModeNoop``), so the nomination stays."""
    c = Cluster("a")
    busy(c, "a", 8, priority=5000)
    never = Pod(
        "urgent",
        requests={"nvidia.com/gpu": 8},
        priority=1000,
        preemption_policy="Never",
    )
    outcomes = arrive(c, never, "a")
    [failed] = [o for o in outcomes if o.pod.name == "urgent"]
    assert (failed.kind, failed.unnominated) == ("unschedulable", False)
    assert c.scheduler.nominated == {"default/urgent": "a"}
