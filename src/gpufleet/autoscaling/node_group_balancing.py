"""cluster-autoscaler's ``--balance-similar-node-groups`` (``processors/nodegroupset``).

Two groups are similar (``IsCloudProviderNodeInfoSimilar``, ``compare_nodegroups.go``) when their templates
have the same capacity (memory within ``--memory-difference-ratio``, 1.5% of the larger), allocatable and
free resources (allocatable less what the template's DaemonSet pods request) within 5% of the larger, and
the same labels but those ignored (``BasicIgnoredLabels``: hostname, zone and region, fluentd's and kops'
instance group; plus ``--balancing-ignore-label``). A scale-up of one group is then split between it and
its similar groups that could take the same pending pods (``ComputeSimilarNodeGroups``), smallest first,
each up to its max size (``BalanceScaleUpBetweenGroups``, ``balancing_processor.go``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from gpufleet.autoscaling.scale_up import PoolOption
from gpufleet.model.resources import CPU, MEMORY, Resources

#: ``BasicIgnoredLabels``: labels whose values may differ between similar groups.
BASIC_IGNORED_LABELS = frozenset(
    {
        "kubernetes.io/hostname",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "beta.kubernetes.io/fluentd-ds-ready",
        "kops.k8s.io/instancegroup",
    }
)
EPHEMERAL_STORAGE = "ephemeral-storage"


@dataclass(frozen=True)
class Balancing:
    """``--balance-similar-node-groups`` on: the labels ``--balancing-ignore-label`` adds to those ignored,
    and the nodes one scale-up may add in all (``--max-nodes-total``'s room, ``--max-nodes-per-scaleup``)."""

    ignored_labels: tuple[str, ...] = ()
    room: int = 1 << 30


#: ``config.NodeGroupDifferenceRatios``' defaults (their flags are not modelled): allocatable and free
#: resources may differ by 5% of the larger, memory capacity by 1.5%.
MAX_ALLOCATABLE_DIFFERENCE_RATIO = 0.05
MAX_FREE_DIFFERENCE_RATIO = 0.05
MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO = 0.015


def _within(a: int, b: int, ratio: float) -> bool:
    """``resourceListWithinTolerance``: the two differ by at most ``ratio`` of the larger."""
    larger, smaller = max(a, b), min(a, b)
    return larger - smaller <= larger * ratio


def _all_within(x: Resources, y: Resources, ratio: float) -> bool:
    """``resourceMapsWithinTolerance``: both have each resource, within the ratio."""
    return x.keys() == y.keys() and all(_within(x[r], y[r], ratio) for r in x)


def _capacity_alike(x: Resources, y: Resources, memory_ratio: float) -> bool:
    """The same capacity resources, each equal but memory, which may differ by ``memory_ratio``."""
    if x.keys() != y.keys():
        return False
    return all(_within(x[r], y[r], memory_ratio) if r == MEMORY else x[r] == y[r] for r in x)


def _free(option: PoolOption) -> Resources:
    """Allocatable less what the template's pods request (``NodeInfo.GetRequested``: cpu, memory and
    ephemeral storage always, and every other resource they request)."""
    requested = dict.fromkeys((CPU, MEMORY, EPHEMERAL_STORAGE), 0)
    for pod in option.daemons:
        for r, v in pod.requests.items():
            requested[r] = requested.get(r, 0) + v
    return {r: option.template.allocatable.get(r, 0) - v for r, v in requested.items()}


def _labels(option: PoolOption, ignored: AbstractSet[str]) -> dict[str, str]:
    return {k: v for k, v in option.template.labels.items() if k not in ignored}


def similar(a: PoolOption, b: PoolOption, ignored: Iterable[str] = ()) -> bool:
    """``IsCloudProviderNodeInfoSimilar`` of the two groups' templates; ``ignored``: labels ignored besides
    ``BASIC_IGNORED_LABELS``."""
    skip = BASIC_IGNORED_LABELS | set(ignored)
    x, y = a.template, b.template
    return (
        _capacity_alike(x.capacity, y.capacity, MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO)
        and _all_within(x.allocatable, y.allocatable, MAX_ALLOCATABLE_DIFFERENCE_RATIO)
        and _all_within(_free(a), _free(b), MAX_FREE_DIFFERENCE_RATIO)
        and _labels(a, skip) == _labels(b, skip)
    )


def find_similar(
    option: PoolOption, options: Sequence[PoolOption], ignored: Iterable[str] = ()
) -> list[PoolOption]:
    """``BalancingNodeGroupSetProcessor.FindSimilarNodeGroups``: the other groups similar to ``option``,
    in their order."""
    return [o for o in options if o.name != option.name and similar(option, o, ignored)]


@dataclass
class _Share:
    name: str
    size: int  # the group's size once the share is added
    max_size: int
    current: int


def balance(groups: Sequence[tuple[str, int, int]], new_nodes: int) -> list[tuple[str, int]]:
    """``BalanceScaleUpBetweenGroups``: ``new_nodes`` split between the groups (name, target size, max size):
    at most their room in all; groups at their max left out; the others by size, smallest first, each next
    node to the smallest group still below its max (upstream's ``sort.Slice`` is not stable: equal sizes
    keep their order here). Each group that grows, with the nodes it adds."""
    shares = sorted(
        (_Share(name, size, max_size, size) for name, size, max_size in groups if size != max_size),
        key=lambda s: s.current,
    )
    left = min(new_nodes, sum(max(s.max_size - s.current, 0) for s in shares))
    start = index = 0
    while left > 0:
        share = shares[index]
        if share.size < share.max_size:
            share.size += 1
            left -= 1
        else:
            shares[start], shares[index] = shares[index], shares[start]
            start += 1
        # upstream's pointer is to the slot: after a swap it holds the group swapped in
        if index < len(shares) - 1 and shares[index].size > shares[index + 1].size:
            index += 1
        else:
            index = start
    return [(s.name, s.size - s.current) for s in shares if s.size != s.current]
