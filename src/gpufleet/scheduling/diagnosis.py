"""What only a GPU-aware tool adds to kube-scheduler's message for a pending pod.

Free GPUs per node, the largest free block, whether the pod's gang could be placed on
what is free now (all members at once, first-fit by largest free block, counting cpu,
memory and pods too), and plain-language hints: "16 GPUs are free but no node has 8". Given
the nodes the pod may use at all (``eligible``: `reachable`, its scheduler's node-only filters),
the fragmentation hint counts only their free GPUs; those on other nodes are out of its reach,
not fragmented. For a pod with ResourceClaims, the allocator's own reasons behind DynamicResources'
``cannot allocate all claims`` (which kube-scheduler's message leaves out), each with the nodes it holds on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gpufleet.cluster.state import ClusterState
from gpufleet.gpus.dra.allocator import AllocationError
from gpufleet.model.pod import Pod
from gpufleet.model.resources import GPU
from gpufleet.scheduling.framework import StaticFilter
from gpufleet.scheduling.gangs import GangView

TOP_NODES = 16
#: the nodes whose DRA allocation a diagnosis tries, at most (each try may search the node's devices)
CLAIM_NODES = 32
#: the nodes a claim hint names, at most (the others counted)
NAMED_NODES = 3


def members_that_fit(state: ClusterState, pods: list[Pod], eligible: list[int]) -> int:
    """How many of ``pods`` fit at the same time on the free capacity of ``eligible`` nodes."""
    if not pods or not eligible:
        return 0
    free = state.alloc[eligible] - state.requested[eligible]
    placed = 0
    for pod in sorted(pods, key=lambda p: -p.gpus):
        req = state.pod_vectors(pod)[0]
        fits = np.flatnonzero((free >= req).all(axis=1))
        if len(fits) == 0:
            continue
        best = fits[np.argmin(free[fits, state.res_index[GPU]] if GPU in state.res_index else fits)]
        free[best] -= req
        placed += 1
    return placed


def reachable(state: ClusterState, pod: Pod, filters: Sequence[StaticFilter] | None) -> list[int]:
    """The active nodes ``pod`` may use at all: every one of its scheduler's node-only ``filters``
    (nodeSelector and affinity, taints, cordons, nodeName, GPU memory) passes; none without a
    scheduler (``filters`` None)."""
    if filters is None:
        return []
    nodes = state.nodes
    return [
        int(i) for i in state.active_indices() if all(f.reject(pod, nodes[int(i)]) is None for f in filters)
    ]


def reach_by_shape(
    state: ClusterState, filters_of: Callable[[Pod], Sequence[StaticFilter] | None]
) -> Callable[[Pod], list[int]]:
    """`reachable` with the filters ``filters_of`` the pod gives, worked out once per scheduler, pod shape
    (all that node-only filters read of a pod) and set of nodes (``static_version``)."""
    known: dict[tuple[object, ...], list[int]] = {}

    def reach(pod: Pod) -> list[int]:
        key = (pod.scheduler_name, pod.shape(), state.static_version)
        nodes = known.get(key)
        if nodes is None:
            nodes = known[key] = reachable(state, pod, filters_of(pod))
        return nodes

    return reach


def diagnose(
    state: ClusterState, pod: Pod, gangs: GangView, eligible: list[int] | None = None
) -> dict[str, Any]:
    """The ``diagnosis`` record of a pending pod (see the summary schema)."""
    active = [int(i) for i in state.active_indices()]
    nodes = eligible if eligible is not None else active
    free = state.free(GPU)
    per_node = sorted(
        ((state.nodes[i].name, int(free[i])) for i in active if free[i] > 0), key=lambda x: (-x[1], x[0])
    )
    largest = max((f for _, f in per_node), default=0)
    hints: list[str] = []
    want = pod.gpus
    usable = [int(free[i]) for i in nodes if free[i] > 0]
    if want and sum(usable) >= want > max(usable, default=0):
        where = "in total" if len(nodes) == len(active) else "on the nodes it may use"
        hints.append(
            f"{sum(usable)} GPUs are free {where} but no node has {want} free "
            f"(largest free block: {max(usable)}): the free GPUs are fragmented"
        )
    out_of_reach = sum(f for _, f in per_node) - sum(usable)
    if want and eligible is not None and out_of_reach and max(usable, default=0) < want:
        hints.append(f"{out_of_reach} more GPUs are free on nodes it may not use")
    gang: dict[str, Any] | None = None
    group = gangs.group_of(pod)
    if group is not None:
        members = sorted(gangs.members.get(group.key, ()))
        unbound = [m for m in members if m not in state.assignments]
        bound = len(members) - len(unbound)
        pods = _member_pods(gangs, unbound, pod)
        fit = members_that_fit(state, pods, nodes)
        needed = sum(p.gpus for p in pods)
        gang = {
            "name": group.key,
            "min_member": group.min_member,
            "members": len(members),
            "members_bound": bound,
            "members_that_fit": fit,
            "gpus_needed": needed,
        }
        if bound + fit < group.min_member:
            hints.append(
                f"gang {group.key} needs {group.min_member} members running together; "
                f"{bound} hold a node and "
                f"only {fit} of the other {len(unbound)} fit on what is free now"
            )
        if 0 < bound < group.min_member:
            hints.append(f"{bound} member(s) of gang {group.key} hold GPUs while waiting for the rest")
    hints += claim_hints(state, pod, nodes)
    return {
        "free_gpus": dict(per_node[:TOP_NODES]),
        "largest_free_gpus": largest,
        "gpus_requested": want,
        "gang": gang,
        "hints": hints,
    }


#: what gpufleet adds to a CEL runtime error of a missing attribute
ROBUST_SELECTOR = "a robust selector checks for an attribute first, e.g. with has() or 'in'"


def claim_hints(state: ClusterState, pod: Pod, nodes: Sequence[int]) -> list[str]:
    """Why the pod's ResourceClaims cannot be allocated on the nodes it may use (the first ``CLAIM_NODES``):
    each distinct reason of gpufleet's allocator (``claim default/c, request gpu: needs 1 matching device(s),
    the node has 0 matching, 0 of them free``), with the nodes it holds on."""
    dra = state.dra
    if dra is None or not pod.resource_claims:
        return []
    where: dict[str, list[str]] = {}
    for i in nodes[:CLAIM_NODES]:
        node = state.nodes[i]
        outcome = dra.try_node(pod, node)
        if isinstance(outcome, AllocationError):  # the Filter's Error status: the allocator's error, whole
            text = str(outcome)
            if "CEL runtime error: no such key" in text:
                text += f" ({ROBUST_SELECTOR})"
            where.setdefault(text, []).append(node.name)
        elif isinstance(outcome, str):
            where.setdefault(outcome.split(": ", 1)[-1], []).append(node.name)
    hints = []
    for reason, names in where.items():
        named = ", ".join(names[:NAMED_NODES]) + (
            f" and {len(names) - NAMED_NODES} more" if len(names) > NAMED_NODES else ""
        )
        hints.append(f"{reason} (on {named})")
    return hints


def _member_pods(gangs: GangView, keys: list[str], fallback: Pod) -> list[Pod]:
    """The pod objects of gang members; members not known here are assumed shaped like ``fallback``."""
    known = gangs.pods
    return [known.get(k, fallback) for k in keys]
