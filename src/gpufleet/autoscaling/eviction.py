"""How cluster-autoscaler's drain evicts a node's pods (``core/scaledown/actuation/drain.go``,
``priority.go``, ``config/flags/flags.go``).

The drain puts the pods in priority groups (``groupByPriority``): ``--drain-priority-config``'s
``priority:shutdownGracePeriodSeconds`` pairs, in ascending priority, each pod in the group of the highest
priority not above its own (below the lowest, the lowest: ``groupIndex``); without the flag, one group,
``--max-graceful-termination-sec`` its grace period (``SingleRuleDrainConfig``). Group by group, skipping
the empty ones, it evicts the group's pods, each with its ``terminationGracePeriodSeconds`` cut to the
group's grace period when that is above 0 (``Evictor.evictPod``), an eviction refused retried every
``EvictionRetryTime`` (10 s) until ``--max-pod-eviction-time`` has passed since the group's evictions began
(``initiateEviction``), then waits for them to leave the node, polling every 5 s while less than the group's
grace period plus ``PodEvictionHeadroom`` (30 s) has passed (``waitPodsToDisappear``; gpufleet sees a pod
gone the moment its grace period is over, not at the next poll). A pod never evicted, or still there after
the wait, fails the drain.

Which pods (``podsToEvict``): every pod but the mirror ones and the DaemonSet ones, to move; of the DaemonSet
pods, those annotated ``cluster-autoscaler.kubernetes.io/enable-ds-eviction: "true"``, and, under the flag
that applies (``--daemonset-eviction-for-occupied-nodes``, true by default, on a drained node;
``--daemonset-eviction-for-empty-nodes``, false, on an empty one), those not annotated
(``daemonset.PodsToEvict``). They are evicted best effort with their group (``BestEffortEvictionPods``: an
eviction refused is retried alike, the group's wait starting only once their answers are in, but never fails
the drain, and nobody waits for them to go), but on a drained node under ``--drain-priority-config``, where
they are evicted as the others (``fullDsEviction``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpufleet.autoscaling.drainability import MIRROR, daemon_set_pod
from gpufleet.model.pod import Pod

#: ``DefaultEvictionRetryTime``: the wait before an eviction refused is tried again
EVICTION_RETRY_S = 10.0
#: ``DefaultPodEvictionHeadroom``: how much longer than the grace period the drain waits for pods to go
POD_EVICTION_HEADROOM_S = 30.0
#: ``waitPodsToDisappear``'s polling period
WAIT_POLL_S = 5.0
#: ``daemonset.EnableDsEvictionKey``: a DaemonSet pod's say on whether a drain evicts it
ENABLE_DS_EVICTION = "cluster-autoscaler.kubernetes.io/enable-ds-eviction"
#: ``math.MaxInt32``: the priority of ``SingleRuleDrainConfig``'s one group
MAX_INT32 = 2**31 - 1


@dataclass(frozen=True)
class ShutdownGracePeriod:
    """One ``priority:shutdownGracePeriodSeconds`` pair (kubelet's ``ShutdownGracePeriodByPodPriority``)."""

    priority: int
    grace_s: int


@dataclass
class EvictionGroup:
    """A priority group of a drain (``podEvictionGroup``): its rule, and its pods in drain order, those
    evicted and waited for and those evicted best effort (``BestEffortEvictionPods``)."""

    rule: ShutdownGracePeriod
    pods: list[Pod] = field(default_factory=list)
    best_effort: list[Pod] = field(default_factory=list)


def single_rule(max_graceful_termination_s: int) -> tuple[ShutdownGracePeriod, ...]:
    """``SingleRuleDrainConfig``: every pod in one group, ``--max-graceful-termination-sec`` its grace."""
    return (ShutdownGracePeriod(MAX_INT32, max_graceful_termination_s),)


def drain_rules(
    drain_priority_config: Sequence[tuple[int, int]], max_graceful_termination_s: int
) -> tuple[ShutdownGracePeriod, ...]:
    """The evictor's groups (``NewActuator``, ``NewEvictor``): ``--drain-priority-config``'s
    ``(priority, grace)`` pairs when given, sorted by priority, else ``single_rule``."""
    if drain_priority_config:
        rules = (ShutdownGracePeriod(p, g) for p, g in drain_priority_config)
        return tuple(sorted(rules, key=lambda r: r.priority))
    return single_rule(max_graceful_termination_s)


def group_index(priority: int, rules: Sequence[ShutdownGracePeriod]) -> int:
    """``groupIndex``: the group of the highest priority not above ``priority``; the lowest group when it is
    below them all, the highest when above."""
    index = next((i for i, r in enumerate(rules) if r.priority >= priority), len(rules))
    if index == len(rules):
        return len(rules) - 1
    if index > 0 and rules[index].priority > priority:
        return index - 1
    return index


def group_by_priority(
    rules: Sequence[ShutdownGracePeriod], pods: Sequence[Pod], best_effort: Sequence[Pod] = ()
) -> list[EvictionGroup]:
    """``groupByPriority``: every group of ``rules`` (sorted), each with its pods in the order given."""
    groups = [EvictionGroup(rule) for rule in rules]
    for pod in pods:
        groups[group_index(pod.priority, rules)].pods.append(pod)
    for pod in best_effort:
        groups[group_index(pod.priority, rules)].best_effort.append(pod)
    return groups


def pods_to_evict(pods: Sequence[Pod], evict_daemon_sets: bool) -> tuple[list[Pod], list[Pod]]:
    """``podsToEvict``: the DaemonSet pods to evict and the others, mirror pods left out; a DaemonSet pod is
    evicted when annotated ``enable-ds-eviction: "true"``, or not annotated and ``evict_daemon_sets`` (the
    flag; ``daemonset.PodsToEvict``)."""
    daemon: list[Pod] = []
    others: list[Pod] = []
    for pod in pods:
        if MIRROR in pod.annotations:
            continue
        if not daemon_set_pod(pod):
            others.append(pod)
            continue
        annotation = pod.annotations.get(ENABLE_DS_EVICTION)
        if annotation == "true" or (annotation is None and evict_daemon_sets):
            daemon.append(pod)
    return daemon, others


def eviction_grace_s(pod: Pod, max_graceful_termination_s: int) -> float:
    """The grace period the eviction gives ``pod`` (``evictPod``): its own, cut to the group's when that is
    above 0."""
    grace = pod.termination_grace_s
    if max_graceful_termination_s > 0 and grace > max_graceful_termination_s:
        return float(max_graceful_termination_s)
    return grace


def parse_drain_priority_config(text: str) -> tuple[tuple[int, int], ...]:
    """``--drain-priority-config`` (``parseShutdownGracePeriodsAndPriorities``): ``,``-separated
    ``priority:shutdownGracePeriodSeconds`` pairs of integers (``strconv.Atoi``). Raises ``ValueError`` with
    upstream's words where it would exit (it takes a config it parsed to nothing as invalid)."""
    if text == "":
        raise ValueError("Invalid configuration, parsing --drain-priority-config")
    rules = []
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) != 2:
            raise ValueError(
                f"Parsing shutdown grace periods failed because '{item}' is not a priority and grace period "
                "couple separated by ':'"
            )
        priority, grace = (_atoi(p) for p in parts)
        if not -(2**31) <= priority < 2**31:
            raise ValueError(f"priority {priority} is out of the int32 range of a pod's priority")
        rules.append((priority, grace))
    return tuple(rules)


def _atoi(text: str) -> int:
    """``strconv.Atoi``: an optional sign and decimal digits, within int64."""
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not digits.isascii() or not digits.isdigit():
        raise ValueError(
            "Parsing shutdown grace periods and priorities failed: "
            f'strconv.Atoi: parsing "{text}": invalid syntax'
        )
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ValueError(
            "Parsing shutdown grace periods and priorities failed: "
            f'strconv.Atoi: parsing "{text}": value out of range'
        )
    return value
