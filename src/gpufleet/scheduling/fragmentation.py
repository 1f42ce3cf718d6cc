"""GPU fragmentation: free GPU capacity that the current mix of work cannot use.

The measure of the FGD paper (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
Workloads with Fragmentation Gradient Descent", USENIX ATC '23, section 3; the authors' simulator,
``pkg/utils/frag.go``, ``NodeGpuShareFragAmount``): for a target workload of task shapes ``t`` with
popularity ``p_t``, a node's fragmentation is ``F_n = sum_t p_t * F_n(t)``, where ``F_n(t)`` is

* all of the node's free GPU capacity when task ``t`` cannot run there: it asks for no GPU (the
  paper's x-axis cases), too few GPUs have enough left (``CanNodeHostPodOnGpuMemory``), too little
  cpu (or memory, or pod room: gpufleet checks those too), or the node's labels refuse it (a GPU
  model constraint: "no access");
* otherwise (Q-III) the free capacity of the GPUs that each have less left than the task asks of
  one GPU (``GetGpuFragMilliByNodeResAndPodRes``): a whole-GPU task cannot use half-free GPUs.

What a report calls fragmented (``fragmentation(..., may_use=...)``) leaves the "no access" case
out: free GPUs on a node the pending work may not use at all (its nodeSelector or affinity, a taint
it does not tolerate, a cordon: the scheduler's node-only filters, ``may_use``) are out of its
reach, not fragmented; ``Fragmentation.out_of_reach_gpus`` counts those no task may use.

Capacity is counted in thousandths of a GPU ("milli"): an unshared free GPU has 1000 left, a GPU
holding fractional requests (``cluster.shares``) what its shares leave (the lesser of
compute and memory). A node's value depends only on what it has left, so ``NodeFragmentation``
memoises it by that state (as the authors' simulator does): the FGD score asks for it many times.
Measures of the same tasks made ``shared`` keep one memo in a process (a replay's reporting measure and
FGD's own, a sweep's runs of one trace).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import NamedTuple, Self

import numpy as np

from gpufleet.cluster.state import ClusterState, IntArray
from gpufleet.model.gpu_share import MILLI
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY, PODS
from gpufleet.recent import newest


@dataclass(frozen=True)
class Fragmentation:
    """The cluster's fragmentation for a workload: its free GPUs, how many of them the workload cannot use
    (per node too), and with ``may_use`` those no task may use at all."""

    free_gpus: float
    fragmented_gpus: float  # expected free GPUs the workload mix cannot use
    per_node: dict[str, float]
    out_of_reach_gpus: float = 0.0  # with ``may_use``: free GPUs on nodes no task may use

    @property
    def ratio(self) -> float:
        return self.fragmented_gpus / self.free_gpus if self.free_gpus else 0.0


class NodeLeft(NamedTuple):
    """What a node has left: cpu, memory, pod room, and each GPU's milli (unshared ones 1000), sorted."""

    cpu: int
    memory: int
    pods: int
    gpus: tuple[int, ...]

    @classmethod
    def of(cls, state: ClusterState, i: int) -> NodeLeft:
        """Node ``i`` now (kept per node until its allocation changes)."""
        cache: dict[int, tuple[int, NodeLeft]] = state.memo.setdefault("node-left", {})  # type: ignore[assignment]
        version = state.node_version[i]
        hit = cache.get(i)
        if hit is not None and hit[0] == version:
            return hit[1]
        left = cls._read(state, i)
        cache[i] = (version, left)
        return left

    @classmethod
    def _read(cls, state: ClusterState, i: int) -> NodeLeft:
        gpu = state.resource_column(GPU)
        have = state.alloc[i].tolist()  # (two rows as lists cost less than one subtraction's array)
        used = state.requested[i].tolist()
        whole = have[gpu] - used[gpu]
        gpus: list[int] = []
        shares = state.shares
        if shares is not None:
            shares.sync()
            holders = shares.holders[i].tolist()
            if any(holders):  # (a few GPUs: the lesser of each in Python, no arrays)
                compute, memory = shares.free_compute[i].tolist(), shares.free_memory[i].tolist()
                gpus = [c if c < m else m for c, m, h in zip(compute, memory, holders, strict=True) if h]
                gpus.sort()
        if whole > 0:  # (an unshared GPU has all of its 1000 left, at least any shared one's)
            gpus += [MILLI] * whole
        col = state.res_index
        c, m, p = col.get(CPU), col.get(MEMORY), col.get(PODS)
        return tuple.__new__(  # (the NamedTuple's own ``__new__`` is a Python function: a frame more)
            cls,
            (
                0 if c is None else have[c] - used[c],
                0 if m is None else have[m] - used[m],
                0 if p is None else have[p] - used[p],
                tuple(gpus),
            ),
        )

    @property
    def total(self) -> int:
        return sum(self.gpus)


#: ``NodeFragmentation._plan``: the tasks' distinct thousandths per GPU, and per task (weight, which of
#: them it asks or ``TOTAL`` or ``REFUSED``, GPUs)
Plan = tuple[list[int], list[tuple[float, int, int]]]
#: a task that cannot run on the node: all its free capacity counts (``TOTAL``), or, where the node's
#: labels refuse it, what ``_compute`` counts for that (``REFUSED``: all of it, or nothing with ``may_use``)
TOTAL, REFUSED = -1, -2


@dataclass(frozen=True)
class Task:
    """One shape of the target workload: GPUs, thousandths of each, and cpu/memory it needs."""

    pod: Pod  # a pod of this shape (its node affinity and GPU share)
    weight: float  # popularity: the shares of all tasks sum to 1

    def milli(self, gpu_memory_bytes: float | None) -> int:
        return gpu_ask(self.pod, gpu_memory_bytes)[1]

    @property
    def gpus(self) -> int:
        return gpu_ask(self.pod, None)[0]


def gpu_ask(pod: Pod, gpu_memory_bytes: float | None) -> tuple[int, int]:
    """(GPUs, thousandths of each) the pod asks for on GPUs with that much memory: 0 thousandths
    for no GPU, over 1000 where its request fits no such GPU."""
    share = pod.gpu_share
    if share is None:
        return pod.gpus, MILLI if pod.gpus else 0
    per = share.per_gpu(gpu_memory_bytes)
    return share.count, MILLI + 1 if per is None else max(per)


#: Task sets whose memo (``NodeFragmentation.shared``) a process keeps, the least recently shared dropped past
#: this: a sweep's runs of one trace share one (FGDSupply's reweighted tasks another); a worker goes trace by
#: trace.
TABLES_KEPT = 2
#: Node states whose values one shared memo keeps, about 35 MiB (it starts over past this).
VALUES_KEPT = 100_000
#: What a ``NodeFragmentation`` keeps that depends on its tasks alone: facts ids, the tasks' label verdicts,
#: values, plans, and per GPU memory the tasks' asks.
Tables = tuple[
    dict[tuple[tuple[bool, ...], float | None], int],
    dict[tuple[str | None, ...], tuple[bool, ...]],
    dict[tuple[object, ...], float],
    dict[tuple[object, ...], Plan],
    dict[float | None, tuple[list[int], list[tuple[float, int, bool, int, int, int]]]],
]
#: ``NodeFragmentation.shared``'s tables, by the methods that work out what they keep and the tasks.
_SHARED: OrderedDict[tuple[object, ...], Tables] = OrderedDict()
#: The methods whose answers the tables keep: measures share tables only where these are the same functions
#: (a variant that only adds a term to ``of``, as FGDSupply's does, shares them with FGD's).
TABLED = (
    "_facts",
    "_constraints_of",
    "_labels_read",
    "_thresholds_of",
    "_params",
    "_plan",
    "_compute",
    "_value",
)


def tasks_of(workload: list[Pod], include_cpu_pods: bool = False) -> list[Task]:
    """The workload's shapes with their popularity (count over all of them); CPU-only pods count only
    when asked (the FGD authors include them in their typical pods)."""
    pods = [p for p in workload if include_cpu_pods or p.gpus > 0 or p.gpu_share is not None]
    copies = Counter(map(id, pods))  # declared typical pods repeat one object per entry
    shapes: Counter[tuple[object, ...]] = Counter()
    first: dict[tuple[object, ...], Pod] = {}
    for pod in {id(p): p for p in pods}.values():  # each object once, in the order first seen
        shape = pod.shape()
        shapes[shape] += copies[id(pod)]
        first.setdefault(shape, pod)
    total = sum(shapes.values())
    return [Task(first[s], count / total) for s, count in shapes.items()]


@dataclass
class NodeFragmentation:
    """``F_n`` in milli for the nodes of one cluster and one target workload, memoised per node state."""

    state: ClusterState
    tasks: list[Task]
    #: which nodes a task's pod may use at all; given, a task a node refuses counts nothing there
    #: (out of reach), not all of its free capacity (the paper's "no access")
    may_use: Callable[[Pod, Node], bool] | None = None
    _admits: dict[int, tuple[tuple[bool, ...], float | None, int]] = field(default_factory=dict)
    _admits_version: int = -1
    _facts_ids: dict[tuple[tuple[bool, ...], float | None], int] = field(default_factory=dict)
    #: which tasks' constraints admit a node, by the values of the labels they read (``_constraint_labels``)
    _admitted: dict[tuple[str | None, ...], tuple[bool, ...]] = field(default_factory=dict)
    _memo: dict[tuple[object, ...], float] = field(default_factory=dict)
    _plans: dict[tuple[object, ...], Plan] = field(default_factory=dict)  # by ``of``'s key less the GPUs
    _by_memory: dict[float | None, tuple[list[int], list[tuple[float, int, bool, int, int, int]]]] = field(
        default_factory=dict
    )
    #: what ``_constraints_of``, ``_labels_read`` and ``_thresholds_of`` make of the tasks, worked out at
    #: once: fields, not ``cached_property`` (which writes to ``__dict__``, and after that every attribute
    #: of the measure is read from a dictionary of its own instead of CPython's inline values)
    _constraints: tuple[list[Pod], list[int]] = field(init=False, repr=False, compare=False)
    _constraint_labels: list[str] | None = field(init=False, repr=False, compare=False)
    _thresholds: tuple[list[int], list[int]] = field(init=False, repr=False, compare=False)
    _threshold_arrays: tuple[IntArray, IntArray] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._constraints = self._constraints_of(self.tasks)
        self._constraint_labels = self._labels_read(self._constraints[0])
        cpus, memories = self._thresholds = self._thresholds_of(self.tasks)
        self._threshold_arrays = np.array(cpus, dtype=np.int64), np.array(memories, dtype=np.int64)

    def shared(self) -> Self:
        """This measure, memoising into the tables of every measure made ``shared`` in this process that
        works them out with the same methods (``TABLED``) for the same tasks (weights and shapes, in order):
        its values depend on nothing else (the nodes' facts are keys, numbered alike for all of them), so the
        measure a replay reports with, FGD's own and the next runs of a sweep on the trace look each node
        state up once. Not with ``may_use`` (a callable: its verdicts are not known by value)."""
        if self.may_use is not None:
            return self
        methods = tuple(getattr(type(self), name) for name in TABLED)
        key = (methods, tuple((t.weight, t.pod.shape()) for t in self.tasks))
        own = self._facts_ids, self._admitted, self._memo, self._plans, self._by_memory
        tables = newest(_SHARED, key, lambda: own, TABLES_KEPT)
        self._facts_ids, self._admitted, self._memo, self._plans, self._by_memory = tables
        self._admits, self._admits_version = {}, -1  # (numbered by its own facts ids until now)
        return self

    def node_facts(self, i: int) -> tuple[tuple[bool, ...], float | None]:
        """Which tasks the node's labels let run there (node affinity, GPU model constraints), and
        its GPUs' memory: kept until labels change."""
        admits, memory, _ = self._facts(i)
        return admits, memory

    def _facts(self, i: int) -> tuple[tuple[bool, ...], float | None, int]:
        if self._admits_version != self.state.static_version:
            self._admits, self._admits_version = {}, self.state.static_version
        got = self._admits.get(i)
        if got is None:
            node = self.state.nodes[i]
            memory = self.state.gpu_shares().gpu_memory(i) if self.state.shares is not None else None
            if self.may_use is None:  # each placement constraint judged once per the labels it reads
                labels = self._constraint_labels
                seen = None if labels is None else tuple(map(node.labels.get, labels))
                admits = self._admitted.get(seen) if seen is not None else None
                if admits is None:
                    pods, which = self._constraints
                    verdicts = [pod.matches_node_selector(node) for pod in pods]
                    admits = tuple(verdicts[k] for k in which)
                    if seen is not None:
                        self._admitted[seen] = admits
            else:
                admits = tuple(self.may_use(t.pod, node) for t in self.tasks)
            facts = (admits, memory)
            got = self._admits[i] = (*facts, self._facts_ids.setdefault(facts, len(self._facts_ids)))
        return got

    def of(self, i: int, left: NodeLeft) -> float:
        return self._of_facts(self._facts(i), left)

    def _of_facts(self, got: tuple[tuple[bool, ...], float | None, int], left: NodeLeft) -> float:
        """``NodeFragmentation.of`` of the node whose ``_facts`` are ``got``."""
        admits, memory, facts = got
        # only which tasks' cpu and memory needs the node still meets matters, not the amounts
        cpus, memories = self._thresholds
        return self._value(
            admits,
            memory,
            facts,
            left.gpus,
            bisect_right(cpus, left.cpu),
            bisect_right(memories, left.memory),
            left.pods >= 1,
        )

    def before_after(
        self, i: int, left: NodeLeft, cpu: int, memory: int, after: list[tuple[int, ...]]
    ) -> tuple[float, list[float]]:
        """``NodeFragmentation.of`` node ``i`` (a variant's ``of`` left out): as ``left`` says, and with a pod
        asking for ``cpu`` and ``memory`` on it and each of ``after``'s GPUs left in turn (what the node's
        labels admit, and the keys of its cpu, memory and pod room after, read once for all of them)."""
        got = self._facts(i)
        before = self._of_facts(got, left)  # (``NodeFragmentation.of``, the facts read once)
        admits, gpu_memory, facts = got
        cpus, memories = self._thresholds
        value = self._value
        cpu_key, memory_key = bisect_right(cpus, left.cpu - cpu), bisect_right(memories, left.memory - memory)
        room = left.pods >= 2  # (one pod slot left after the pod)
        return before, [value(admits, gpu_memory, facts, gpus, cpu_key, memory_key, room) for gpus in after]

    def _value(
        self,
        admits: tuple[bool, ...],
        memory: float | None,
        facts: int,
        gpus: tuple[int, ...],
        cpu_key: int,
        memory_key: int,
        room: bool,
    ) -> float:
        """``of`` a node with these facts (``_facts``), GPUs left and keys, kept by them."""
        key = (facts, gpus, cpu_key, memory_key, room)
        value = self._memo.get(key)
        if value is None:
            plan_key = (facts, cpu_key, memory_key, room)
            plan = self._plans.get(plan_key)
            if plan is None:
                plan = self._plans[plan_key] = self._plan(admits, memory, cpu_key, memory_key, room)
            if len(self._memo) >= VALUES_KEPT:
                self._memo.clear()
            value = self._memo[key] = self._compute(plan, gpus)
        return value

    def cpu_key(self, cpu: int) -> int:
        """What of a node's free cpu ``of`` reads: which tasks' cpu needs it meets (equal keys, equal
        measures)."""
        return bisect_right(self._thresholds[0], cpu)

    def memory_key(self, memory: int) -> int:
        """What of a node's free memory ``of`` reads: which tasks' memory needs it meets."""
        return bisect_right(self._thresholds[1], memory)

    def ask_keys(self, i: int, left: NodeLeft, cpu: int, memory: int) -> tuple[int, int, int, int, int]:
        """A number for ``node_facts(i)`` (nodes with one number have the same facts), then the
        ``cpu_key`` and ``memory_key`` of what node ``i`` has left before and after a pod asking for
        that ``cpu`` and ``memory``: cpu before, cpu after, memory before, memory after."""
        cpus, memories = self._thresholds
        return (
            self._facts(i)[2],
            bisect_right(cpus, left.cpu),
            bisect_right(cpus, left.cpu - cpu),
            bisect_right(memories, left.memory),
            bisect_right(memories, left.memory - memory),
        )

    def codes(
        self, ids: IntArray, cpu: IntArray, memory: IntArray, ask_cpu: int, ask_memory: int
    ) -> IntArray:
        """Per node, one number for its class id (``ids``) and what ``of`` reads of its free ``cpu`` and
        ``memory`` before and after a pod asking for ``ask_cpu`` and ``ask_memory`` (``cpu_key`` and
        ``memory_key`` of each, as digits): equal numbers, equal ids and keys."""
        cpus, memories = self._threshold_arrays
        cpu_radix, memory_radix = len(cpus) + 1, len(memories) + 1  # a key is 0..len(thresholds)
        code = ids * cpu_radix + cpus.searchsorted(cpu, side="right")
        code = code * cpu_radix + cpus.searchsorted(cpu - ask_cpu, side="right")
        code = code * memory_radix + memories.searchsorted(memory, side="right")
        by_node: IntArray = code * memory_radix + memories.searchsorted(memory - ask_memory, side="right")
        return by_node

    def code(self, class_id: int, cpu: int, memory: int, ask_cpu: int, ask_memory: int) -> int:
        """``codes`` of one node, in Python integers."""
        cpus, memories = self._thresholds
        cpu_radix, memory_radix = len(cpus) + 1, len(memories) + 1
        code = class_id * cpu_radix + bisect_right(cpus, cpu)
        code = code * cpu_radix + bisect_right(cpus, cpu - ask_cpu)
        code = code * memory_radix + bisect_right(memories, memory)
        return code * memory_radix + bisect_right(memories, memory - ask_memory)

    @staticmethod
    def _constraints_of(tasks: list[Task]) -> tuple[list[Pod], list[int]]:
        """A pod per distinct placement constraint of the tasks (what ``Pod.matches_node_selector``
        reads: the node selector and the required node affinity), and each task's."""
        first: dict[tuple[object, ...], int] = {}
        pods: list[Pod] = []
        which: list[int] = []
        for t in tasks:
            key = (tuple(sorted(t.pod.node_selector.items())), t.pod.required_terms)
            if key not in first:
                first[key] = len(pods)
                pods.append(t.pod)
            which.append(first[key])
        return pods, which

    @staticmethod
    def _labels_read(pods: list[Pod]) -> list[str] | None:
        """The node labels the placement constraints of ``pods`` read (None where a term reads the node's
        name: then each node is judged)."""
        keys: set[str] = set()
        for pod in pods:
            keys.update(pod.node_selector)
            for term in pod.required_terms or ():
                if term.fields:
                    return None
                keys.update(r.key for r in term.expressions)
        return sorted(keys)

    @staticmethod
    def _thresholds_of(tasks: list[Task]) -> tuple[list[int], list[int]]:
        """The tasks' distinct cpu and memory requests, ascending."""
        return (
            sorted({t.pod.requests.get(CPU, 0) for t in tasks}),
            sorted({t.pod.requests.get(MEMORY, 0) for t in tasks}),
        )

    def _params(self, memory: float | None) -> tuple[list[int], list[tuple[float, int, bool, int, int, int]]]:
        """On GPUs with that memory: the tasks' distinct thousandths per GPU, and per task (weight, which
        of those it asks, whether it asks for GPU, GPUs, cpu, memory)."""
        got = self._by_memory.get(memory)
        if got is None:
            asks = [t.milli(memory) for t in self.tasks]
            millis = sorted(set(asks))
            got = self._by_memory[memory] = (
                millis,
                [
                    (
                        t.weight,
                        millis.index(m),
                        m > 0,
                        t.gpus,
                        t.pod.requests.get(CPU, 0),
                        t.pod.requests.get(MEMORY, 0),
                    )
                    for t, m in zip(self.tasks, asks, strict=True)
                ],
            )
        return got

    def _plan(
        self, admits: tuple[bool, ...], memory: float | None, cpu_key: int, memory_key: int, room: bool
    ) -> Plan:
        """What ``_compute`` counts of each task, in the tasks' order, on nodes with these facts and keys:
        (weight, which of the distinct thousandths it asks, GPUs) where it runs if enough GPUs have that
        much left; ``TOTAL`` where the node's labels admit it but it cannot run there (it asks for no GPU,
        or more cpu or memory than is left, or no pod fits), ``REFUSED`` where they do not."""
        millis, params = self._params(memory)
        cpus, memories = self._thresholds
        counted: list[tuple[float, int, int]] = []
        for (weight, k, asks_gpu, count, cpu, mem), admitted in zip(params, admits, strict=True):
            # ``cpu_key`` thresholds are at most the node's cpu: the task's cpu is one of them
            fed = cpus.index(cpu) < cpu_key and memories.index(mem) < memory_key
            counted.append(
                (weight, k, count)
                if admitted and asks_gpu and fed and room
                else (weight, TOTAL if admitted else REFUSED, 0)
            )
        return millis, counted

    def _compute(self, plan: Plan, gpus: tuple[int, ...]) -> float:
        """``F_n`` of a node with ``gpus`` left (ascending), by its ``plan``: each task's weight times the
        capacity it cannot use, added in the tasks' order."""
        below = [0, *accumulate(gpus)]  # below[j]: the thousandths of the j GPUs with least left
        total = below[-1]
        refused = 0 if self.may_use is not None else total
        size = len(gpus)
        millis, counted = plan
        fits = [bisect_left(gpus, milli) for milli in millis]  # GPUs with less left than each ask
        frag = 0.0
        for weight, k, count in counted:
            if k >= 0:
                j = fits[k]
                frag += weight * (below[j] if size - j >= count else total)
            else:
                frag += weight * (total if k == TOTAL else refused)
        return frag


def fragmentation(
    state: ClusterState, workload: list[Pod], may_use: Callable[[Pod, Node], bool] | None = None
) -> Fragmentation:
    """The fragmentation of every active node for the given workload's GPU pods (weighted by count);
    with ``may_use``, only of the nodes each pod may use (the rest is out of its reach)."""
    measure = NodeFragmentation(state, tasks_of(workload), may_use)
    per_node: dict[str, float] = {}
    free = fragmented = out_of_reach = 0.0
    for i in state.active_indices().tolist():
        left = NodeLeft.of(state, i)
        free += left.total / MILLI
        value = measure.of(i, left) / MILLI if measure.tasks else 0.0
        fragmented += value
        if value > 0:
            per_node[state.nodes[i].name] = round(value, 6)
        if may_use is not None and measure.tasks and not any(measure.node_facts(i)[0]):
            out_of_reach += left.total / MILLI
    return Fragmentation(free, fragmented, per_node, out_of_reach)
