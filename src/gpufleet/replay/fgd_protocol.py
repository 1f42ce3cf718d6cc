"""The FGD paper's replay protocol (Weng et al., USENIX ATC '23; the authors' simulator as
``docs/fgd-protocol.md`` describes it, section 1), run through gpufleet's scheduler.

* GPU nodes only; the trace's times are ignored: no departures.
* Pods sorted by name, then shuffled with the seed; then copies of pods drawn at random (with
  replacement, from the name-sorted list) are appended, named ``<name>-tuned-<i>``, until the next
  copy's per-GPU request would lift the total GPU request over 130 % of the cluster's GPUs
  (``tuneUpPods``); a trace already above that loses random pods until it is not (``tuneDownPods``).
* Each pod is scheduled once, in order; a pod that fits nowhere is dropped (no retry).
* After every pod: arrived GPU request (failed pods included), allocated GPU thousandths, and the
  cluster's fragmentation for the trace's typical pods (``typical_pods``); then, per integer percent
  ``b`` of arrived GPU request (0..130, rounded half to even), the mean of the records at ``b``
  (else at ``b-1..b+1``) as the authors' analysis buckets them.
* The scheduler: one profile with only the policy's score plugin (weight 1000; no preemption), all
  nodes scored, ties to the first node of a seed-fixed random order (the authors prefix node names
  with a ``rand.Perm`` index and pick the smallest name).

Go's random numbers differ from NumPy's, so a single seed does not repeat the authors' run; means
over seeds compare.
"""

from __future__ import annotations

import time
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpufleet.cluster.state import ClusterState, non_zero_requests
from gpufleet.collector import collector_paused
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.node import Node, replace_node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU
from gpufleet.model.scheduler_config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig
from gpufleet.recent import newest
from gpufleet.scheduling.fragmentation import NodeFragmentation, NodeLeft, tasks_of
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.fgd import typical_pods as fgd_typical_pods
from gpufleet.scheduling.scheduler import Scheduler

POLICIES = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD", "FGDSupply")
TARGET = 1.3  # workload tuned to 130 % of the cluster's GPUs
BUCKETS = range(0, 131)
POPULARITY_THRESHOLD = 0.95  # typical pods: the most popular shapes covering 95 % of pods
SCHEDULER = "default-scheduler"
#: ``prepared``'s entries: a grid's seeds of one trace, as one policy's runs follow each other
PREPARED_KEPT = 12
#: Per pod of a workload: its shape (``Pod.shape``) and GPU request (``gpu_request``).
Asks = tuple[tuple[tuple[object, ...], int, int], ...]
#: ``prepared``'s entries, newest last: the pods' ``_TracePods`` (which holds them, so no other objects take
#: their ids), the workload and its asks, by the pods' ids, the capacity and the seed
_PREPARED: OrderedDict[tuple[object, ...], tuple[_TracePods, list[Pod], Asks]] = OrderedDict()
#: Pod lists whose ``_TracePods`` a process keeps (a worker goes trace by trace), by the pods' ids
TRACES_KEPT = 2
_TRACES: OrderedDict[tuple[int, ...], _TracePods] = OrderedDict()


def gpu_request(pod: Pod) -> tuple[int, int]:
    """(GPUs, thousandths of each) the pod asks for: ``PodResource``'s GpuNumber and MilliGpu."""
    share = pod.gpu_share
    if share is not None:
        return share.count, share.compute_milli or 0
    return pod.gpus, MILLI if pod.gpus else 0


def workload(pods: list[Pod], capacity_milli: int, seed: int) -> list[Pod]:
    """The order the authors' simulator schedules: sorted by name, shuffled, tuned to 130 %."""
    by_name = sorted(pods, key=lambda p: p.name)
    kept, tuned = _drawn(list(map(gpu_request, by_name)), capacity_milli, seed)
    return _ordered(by_name, kept, tuned)


def _drawn(requests: list[tuple[int, int]], capacity_milli: int, seed: int) -> tuple[list[int], list[int]]:
    """``workload``'s draws over the name-sorted pods with these ``gpu_request``: the positions of the pods
    kept, in their shuffled order, then of each tuned copy's source."""
    rng = np.random.default_rng(seed)
    kept = rng.permutation(len(requests)).tolist()
    target = TARGET * capacity_milli
    total = sum(k * m for k, m in requests)
    while total > target and kept:
        k, m = requests[kept.pop(int(rng.integers(len(kept))))]
        total -= k * m
    tuned: list[int] = []
    while requests and total < target:
        source = int(rng.integers(len(requests)))
        k, m = requests[source]
        if total + m > target:
            break
        tuned.append(source)
        total += k * m
    return kept, tuned


def _ordered(by_name: list[Pod], kept: list[int], tuned: list[int]) -> list[Pod]:
    """The workload of ``_drawn``'s positions: the pods kept, then the tuned copies, named
    ``<name>-tuned-<i>``."""
    order = [by_name[k] for k in kept]
    order += [by_name[k].renamed(f"{by_name[k].name}-tuned-{i}") for i, k in enumerate(tuned)]
    return order


def _products(pod: Pod) -> tuple[str, ...]:
    terms = pod.required_terms
    return tuple(v for t in terms for r in t.expressions for v in r.values) if terms else ()


def typical_pods(pods: list[Pod]) -> list[dict[str, object]]:
    """``GetTypicalPods`` as the FGD plugin's ``typicalPods`` args: shapes (cpu, GPUs, thousandths,
    GPU model constraint; memory ignored) by count, most popular first, until they cover 95 % of
    the pods, with their percentage of those kept (CPU-only shapes included)."""
    keys = [(non_zero_requests(p)[CPU], *gpu_request(p)[::-1], _products(p)) for p in pods]
    ranked = sorted(Counter(keys).items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    kept: list[tuple[tuple[int, int, int, tuple[str, ...]], int]] = []
    covered = 0
    for key, count in ranked:
        if covered >= POPULARITY_THRESHOLD * len(pods):
            break
        kept.append((key, count))
        covered += count
    return [
        {
            "cpu": f"{cpu}m",
            "gpus": gpus,
            "gpuMilli": milli or MILLI,
            "gpuProducts": list(products),
            "percentage": 100 * count / covered,
        }
        for (cpu, milli, gpus, products), count in kept
    ]


def prepared(
    pods: list[Pod], capacity_milli: int, seed: int
) -> tuple[list[dict[str, object]], list[Pod], Asks]:
    """``typical_pods``, ``workload`` and the workload's ``asks``, kept for the last replays in this
    process: a sweep replays each trace and seed once per policy, with one list of the trace's pods
    (``runs.load_trace``). Kept by the pods' objects (a list with other pods, or in another order, is
    another entry); a pod is not changed by a replay. What does not depend on the seed (the typical pods,
    the pods sorted by name with their asks) is worked out once for the pods' next seeds."""
    ids = tuple(map(id, pods))

    def work_out() -> tuple[_TracePods, list[Pod], Asks]:
        trace = newest(_TRACES, ids, lambda: _TracePods.of(pods), TRACES_KEPT)
        return trace, *trace.workload(capacity_milli, seed)

    trace, order, arrivals = newest(_PREPARED, (ids, capacity_milli, seed), work_out, PREPARED_KEPT)
    return [dict(t) for t in trace.typical], list(order), arrivals


@dataclass(frozen=True)
class _TracePods:
    """What every seed's workload of one list of pods starts from: the pods sorted by name (held, so no other
    objects take their ids), with their GPU requests and asks, and the typical pods."""

    by_name: list[Pod]
    requests: list[tuple[int, int]]
    asks: Asks
    typical: list[dict[str, object]]

    @classmethod
    def of(cls, pods: list[Pod]) -> _TracePods:
        by_name = sorted(pods, key=lambda p: p.name)
        requests = list(map(gpu_request, by_name))
        shaped = tuple((pod.shape(), *request) for pod, request in zip(by_name, requests, strict=True))
        return cls(by_name, requests, shaped, typical_pods(pods))

    def workload(self, capacity_milli: int, seed: int) -> tuple[list[Pod], Asks]:
        """``workload`` of these pods and each of its pods' shape and GPU request, in order (``Asks``)."""
        kept, tuned = _drawn(self.requests, capacity_milli, seed)
        order = _ordered(self.by_name, kept, tuned)
        base = self.asks
        copies = ((base[k], order[n]) for n, k in enumerate(tuned, len(kept)))
        arrivals = (
            *(base[k] for k in kept),
            # (a copy's shape is its source's: ``Pod.shape`` names the pod only with ResourceClaims)
            *(ask if not copy.resource_claims else (copy.shape(), *ask[1:]) for ask, copy in copies),
        )
        return order, arrivals


def profile(policy: str, typical: list[dict[str, object]], seed: int) -> ProfileConfig:
    args: dict[str, dict[str, object]] = {}
    if policy == "Random":
        args["Random"] = {"seed": seed}
    if policy in ("FGD", "FGDSupply"):
        args[policy] = {"typicalPods": typical}
    plugins = {
        "score": PluginSet((PluginRef(policy, 1000),), ("*",)),
        "postFilter": PluginSet((), ("*",)),
    }
    config = ProfileConfig(SCHEDULER, plugins=plugins, plugin_args=args, percentage_of_nodes_to_score=100)
    return config


@dataclass
class ReplayResult:
    """One replay's figures: pods, failures and GPUs, and at each percent of the workload arrived the GPUs
    allocated and the fragmentation (``replay.json``)."""

    policy: str
    seed: int
    pods_total: int
    pods_failed: int
    gpus_total: int
    arrived_pct: list[int] = field(default_factory=list)
    gpu_alloc_pct: list[float | None] = field(default_factory=list)
    frag_amount_pct: list[float | None] = field(default_factory=list)
    frag_ratio_pct: list[float | None] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def unallocated_gpu_pct_at_100(self) -> float | None:
        alloc = self.gpu_alloc_pct[100] if len(self.gpu_alloc_pct) > 100 else None
        return None if alloc is None else round(100 - alloc, 2)

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": "fgd",
            "policy": self.policy,
            "seed": self.seed,
            "pods_total": self.pods_total,
            "pods_failed": self.pods_failed,
            "gpus_total": self.gpus_total,
            "arrived_pct": self.arrived_pct,
            "gpu_alloc_pct": self.gpu_alloc_pct,
            "frag_amount_pct": self.frag_amount_pct,
            "frag_ratio_pct": self.frag_ratio_pct,
            "unallocated_gpu_pct_at_100": self.unallocated_gpu_pct_at_100,
            "wall_seconds": round(self.seconds, 3),
        }


def bucket(arrived: list[int], values: list[float]) -> list[float | None]:
    """Per integer percent 0..130: the mean of the values recorded there, else at its neighbours.
    ``arrived`` does not fall (a replay's: the request arrived only grows), so each percent's records are
    one run of the lists, found by bisection and summed in their order."""
    out: list[float | None] = []
    for b in BUCKETS:
        low, high = bisect_left(arrived, b), bisect_right(arrived, b)
        if low == high:
            low, high = bisect_left(arrived, b - 1), bisect_right(arrived, b + 1)
        out.append(round(sum(values[low:high]) / (high - low), 2) if high > low else None)
    return out


def protocol_scheduler(
    gpu_nodes: list[Node], typical: list[dict[str, object]], policy: str, seed: int
) -> tuple[ClusterState, Scheduler]:
    """The protocol's cluster and scheduler: the nodes (sorted by name) in a seed-fixed random order
    that decides ties, and one profile with only the policy's score plugin."""
    by_name = sorted(gpu_nodes, key=lambda n: n.name)
    rng = np.random.default_rng(seed + 1)
    tie_order = [by_name[k] for k in np.argsort(rng.permutation(len(by_name))).tolist()]
    state = ClusterState([replace_node(n, labels=dict(n.labels)) for n in tie_order])
    config = SchedulerConfig(
        SCHEDULER, profiles=[profile(policy, typical, seed)], percentage_of_nodes_to_score=100
    )
    return state, Scheduler(config, state, GangView(state), seed=seed, tie_break="first")


def replay(nodes: list[Node], pods: list[Pod], policy: str, seed: int, keep: bool = False) -> ReplayResult:
    """The protocol's run of the policy on the trace. With ``keep`` (a sweep's runs), the typical pods and
    the workload come from ``prepared``: the next replays of these pods in this process find them (a
    single replay does not keep them: the collector would walk what is kept for nothing)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})")
    with collector_paused():
        return _replay(nodes, pods, policy, seed, keep)


def _replay(nodes: list[Node], pods: list[Pod], policy: str, seed: int, keep: bool) -> ReplayResult:
    gpu_nodes = sorted((n for n in nodes if n.capacity.get(GPU, 0) > 0), key=lambda n: n.name)
    gpus_total = sum(n.capacity[GPU] for n in gpu_nodes)
    capacity = MILLI * gpus_total
    if keep:
        typical, order, arrivals = prepared(pods, capacity, seed)
    else:
        trace = _TracePods.of(pods)
        typical, (order, arrivals) = trace.typical, trace.workload(capacity, seed)
    state, scheduler = protocol_scheduler(gpu_nodes, typical, policy, seed)
    # (FGD's own measure, of the same tasks, shares its memo; so do the next runs of a sweep on the trace)
    measure = NodeFragmentation(
        state, tasks_of(fgd_typical_pods({"typicalPods": typical}), include_cpu_pods=True)
    ).shared()
    frag = [measure.of(i, NodeLeft.of(state, i)) for i in range(state.size)]
    frag_total = sum(frag)
    arrived = used = failed = 0
    # after each pod: the thousandths arrived and placed, and the fragmentation
    # (machine numbers, not a Python object per step: read by NumPy through their buffers)
    steps_arrived, steps_used, steps_frag = array("q"), array("q"), array("d")
    start = time.perf_counter()
    for pod, (shape, k, m) in zip(order, arrivals, strict=True):
        arrived += k * m
        node = scheduler.place_once(pod, 0.0, shape)
        if node is None:
            failed += 1
        else:
            used += k * m
            i = state.index[node]
            new = measure.of(i, NodeLeft.of(state, i))
            frag_total += new - frag[i]  # (added in the pods' order: each step's sum as it was)
            frag[i] = new
        steps_arrived.append(arrived)
        steps_used.append(used)
        steps_frag.append(frag_total)
    rec_arrived, rec_alloc, rec_frag, rec_ratio = percentages(
        steps_arrived, steps_used, steps_frag, gpus_total
    )
    return ReplayResult(
        policy,
        seed,
        len(order),
        failed,
        gpus_total,
        list(BUCKETS),
        bucket(rec_arrived, rec_alloc),
        bucket(rec_arrived, rec_frag),
        bucket(rec_arrived, rec_ratio),
        time.perf_counter() - start,
    )


def percentages(
    arrived: Sequence[int], used: Sequence[int], frag: Sequence[float], gpus_total: int
) -> tuple[list[int], list[float], list[float], list[float]]:
    """Per step (GPU thousandths arrived and placed, fragmentation in thousandths), the percentages the
    protocol records: GPUs arrived (rounded half to even, as ``round``), allocated, fragmented, and
    fragmented of the idle (0 where none is idle). Over arrays, operation by operation as in Python's
    floats: each value is what the same expression on one step's numbers gives (the ints are below 2**53,
    so each converts exactly and each division rounds once, as an int's true division does)."""
    arrived_a, used_a, frag_a = np.array(arrived), np.array(used), np.array(frag, dtype=np.float64)
    idle = MILLI * gpus_total - used_a
    ratio = np.zeros(len(frag_a))
    np.divide(100 * frag_a, idle, out=ratio, where=idle != 0)
    return (
        np.rint(arrived_a / gpus_total / 10).astype(np.int64).tolist(),
        (used_a / gpus_total / 10).tolist(),
        (100 * frag_a / MILLI / gpus_total).tolist(),
        ratio.tolist(),
    )
