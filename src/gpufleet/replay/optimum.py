"""The offline optimum of a GPU packing: an exact upper bound for every online policy (issue 5).

Given GPU nodes (cpu, memory, pods slots, GPUs of one model) and pods (cpu, memory, ``k`` GPUs of
``m`` thousandths each; a fractional share when ``k == 1`` and ``m < 1000``; optionally the GPU
products its required node affinity admits), a mixed-integer program chooses which pods to place
and where so that the allocated GPU thousandths (``sum k * m`` over placed pods) are as many as
possible, with the constraints the FGD paper's simulator (``docs/fgd-protocol.md`` section 2) and
gpufleet's scheduler (NodeResourcesFit, NodeAffinity, the GPU share filter) enforce:

* each pod placed at most once, on a node whose GPU model its affinity admits;
* per node: cpu, memory and pods slots;
* per GPU: 1000 thousandths; a whole-GPU pod of ``k`` GPUs takes ``k`` distinct free GPUs of one
  node entirely, a share takes ``m`` on one GPU.

Arrival order is ignored and nothing is placed twice, so any online policy's final placement of
the same pods is a feasible solution: the optimum bounds every policy from above. CPU-only pods
add nothing to the objective and are left out.

The formulation leaves little symmetry to search: pods of one shape (cpu, memory, GPUs,
thousandths, products) are one integer count per node, not one binary per pod; the shares of a node
fill its GPUs through per-GPU patterns (the maximal multisets of share sizes that fit one GPU, as
in Gilmore and Gomory's cutting-stock formulation), counted per node, so the GPUs of a node are
interchangeable by construction and the relaxation is much tighter than a per-GPU assignment's;
whole-GPU pods take GPUs from the same count. Nodes of one kind (same capacities and model) are
left to HiGHS's symmetry detection (explicit ordering constraints made it slower). The objective is
integer, so the search stops when no better integer remains (``mip_abs_gap`` just under the
objective's gcd): "optimal" is exact. The placement is read back and checked (``violations``).
Solved by HiGHS (``highspy``, the ``optimum`` extra), imported only when a solve is asked for.

``compare_to_optimum`` runs the FGD protocol's policies on a small slice of a trace (the first
GPU nodes, pods drawn by the protocol's own ``workload`` tuned to a load) and reports each
policy's allocation against the optimum of the same pods (each policy's placement is checked to
satisfy the program's constraints, so the bound is sound). Its ``schedule`` sets the scheduler up
as ``fgd_protocol.replay`` does (one policy profile, the seed's tie order) and keeps where each pod
went, which ``replay`` does not report (it records allocation per arrived percent only).
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from gpufleet.model.gpu_share import MILLI
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.resources import CPU, GPU, MEMORY, PODS
from gpufleet.replay.fgd_protocol import (
    POLICIES,
    TARGET,
    gpu_request,
    protocol_scheduler,
    typical_pods,
    workload,
)

PRODUCT = "nvidia.com/gpu.product"
MISSING = "the exact optimum needs HiGHS: pip install 'gpufleet[optimum]' (the highspy package)"


class OptimumUnavailable(RuntimeError):
    """highspy, the HiGHS solver, is not installed."""


@dataclass(frozen=True)
class PackNode:
    cpu: int  # millicores
    memory: int  # bytes
    pods: int  # pod slots
    gpus: int
    model: str = ""  # the nvidia.com/gpu.product label


@dataclass(frozen=True)
class PackPod:
    cpu: int
    memory: int
    gpus: int  # k
    milli: int  # m: thousandths of each GPU
    products: frozenset[str] | None = None  # GPU products admitted; None: any node

    def __post_init__(self) -> None:
        if not 0 <= self.milli <= MILLI:
            raise ValueError(f"gpu milli {self.milli}: between 0 and {MILLI}")
        if self.gpus > 1 and self.milli not in (0, MILLI):
            raise ValueError(f"{self.gpus} GPUs of {self.milli} thousandths: only one GPU can be shared")

    @property
    def share(self) -> bool:
        return self.gpus == 1 and self.milli < MILLI

    @property
    def gpu_milli(self) -> int:
        return self.gpus * self.milli


def admits(node: PackNode, pod: PackPod) -> bool:
    """The pod fits the empty node: GPU model, GPUs, cpu, memory, a pod slot."""
    return (
        (pod.products is None or node.model in pod.products)
        and pod.gpus <= node.gpus
        and pod.cpu <= node.cpu
        and pod.memory <= node.memory
        and node.pods >= 1
    )


@dataclass
class Optimum:
    allocated_milli: int  # the best placement found: the optimum when ``optimal``
    bound_milli: int  # HiGHS's dual bound: no placement allocates more
    status: str  # HiGHS's model status
    optimal: bool
    gap: float  # (bound - allocated) / bound
    seconds: float
    #: pod index -> (node index, GPU indices on that node); CPU-only pods never appear
    placements: dict[int, tuple[int, tuple[int, ...]]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        doc = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "placements"}
        return {**doc, "gap": round(self.gap, 6), "seconds": round(self.seconds, 3)}


def _highspy() -> Any:
    try:
        import highspy
    except ImportError:
        raise OptimumUnavailable(MISSING) from None
    return highspy


def require_solver() -> None:
    """Raise ``OptimumUnavailable`` (naming the ``optimum`` extra) when highspy is missing."""
    _highspy()


def _quiet_highs(highspy: Any) -> Any:
    """A solver, its one-time banner (written to file descriptor 1 by the C++ library) dropped."""
    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        return highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


class _Program:
    """Columns (integer, non-negative) and rows of a maximisation, as HiGHS's arrays want them."""

    def __init__(self) -> None:
        self.upper: list[float] = []
        self.cost: list[float] = []
        self.rows: list[tuple[float, float, dict[int, float]]] = []

    def var(self, upper: int, cost: int) -> int:
        self.upper.append(float(upper))
        self.cost.append(float(cost))
        return len(self.upper) - 1

    def row(self, terms: dict[int, int], upper: int) -> None:
        """``sum(a * x) <= upper``, divided by the coefficients' gcd (memory comes in bytes)."""
        terms = {c: a for c, a in terms.items() if a}
        if terms:
            g = math.gcd(*terms.values())
            self.rows.append((-math.inf, upper // g, {c: a / g for c, a in terms.items()}))

    def solve(
        self, highspy: Any, time_limit: float | None, abs_gap: float
    ) -> tuple[Any, str, list[float], float]:
        """(HiGHS model status, the same as text, column values, dual bound)."""
        h = _quiet_highs(highspy)
        h.setOptionValue("output_flag", False)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_detect_symmetry", True)  # nodes of one kind are interchangeable
        h.setOptionValue("mip_abs_gap", abs_gap)  # the objective moves in steps of its gcd
        if time_limit is not None:
            h.setOptionValue("time_limit", float(time_limit))
        n = len(self.upper)
        cols = np.arange(n, dtype=np.int32)
        h.addVars(n, np.zeros(n), np.array(self.upper))
        h.changeColsCost(n, cols, np.array(self.cost))
        h.changeColsIntegrality(n, cols, np.full(n, highspy.HighsVarType.kInteger.value, dtype=np.uint8))
        starts: list[int] = []
        index: list[int] = []
        value: list[float] = []
        for _, _, terms in self.rows:
            starts.append(len(index))
            index += terms.keys()
            value += terms.values()
        h.addRows(
            len(self.rows),
            np.array([r[0] for r in self.rows]),
            np.array([r[1] for r in self.rows]),
            len(index),
            np.array(starts, dtype=np.int32),
            np.array(index, dtype=np.int32),
            np.array(value, dtype=np.float64),
        )
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        h.run()
        status = h.getModelStatus()
        values = list(h.getSolution().col_value) if h.getInfo().primal_solution_status else []
        return status, str(h.modelStatusToString(status)), values, float(h.getInfo().mip_dual_bound)


Pattern = tuple[tuple[int, int], ...]  # (thousandths, how many) of the shares one GPU holds


def gpu_patterns(caps: dict[int, int]) -> list[Pattern]:
    """The maximal ways to fill one GPU with shares of these sizes (at most ``caps[m]`` of size
    ``m``): every other filling leaves out some of one of them."""
    sizes = sorted(caps, reverse=True)
    out: list[Pattern] = []

    def extend(i: int, left: int, chosen: list[tuple[int, int]]) -> None:
        if i == len(sizes):
            counts = dict(chosen)
            if all(counts.get(m, 0) >= caps[m] or m > left for m in sizes):
                out.append(tuple(chosen))
            return
        m = sizes[i]
        for c in range(min(caps[m], left // m), -1, -1):
            extend(i + 1, left - c * m, [*chosen, (m, c)] if c else chosen)

    extend(0, MILLI, [])
    return out


@dataclass
class _NodeColumns:
    whole: dict[PackPod, int] = field(default_factory=dict)  # shape -> column: how many on the node
    shared: dict[PackPod, int] = field(default_factory=dict)  # shape -> column: how many on the node
    patterns: dict[Pattern, int] = field(default_factory=dict)  # pattern -> column: GPUs filled so


def solve(nodes: Sequence[PackNode], pods: Sequence[PackPod], time_limit: float | None = None) -> Optimum:
    """The most GPU thousandths the pods can be given on the nodes (see the module docstring)."""
    highspy = _highspy()
    began = time.perf_counter()
    shapes: dict[PackPod, list[int]] = {}
    for i, pod in enumerate(pods):
        if pod.gpu_milli:
            shapes.setdefault(pod, []).append(i)
    prog = _Program()
    of_shape: dict[PackPod, dict[int, int]] = {shape: {} for shape in shapes}
    columns: list[_NodeColumns] = []
    patterns: dict[tuple[tuple[int, int], ...], list[Pattern]] = {}
    for node in nodes:
        cols = _NodeColumns()
        cpu: dict[int, int] = {}
        memory: dict[int, int] = {}
        gpus: dict[int, int] = {}  # column -> GPUs each unit takes whole
        slots: dict[int, dict[int, int]] = {}  # share size -> its pods (+) and its room in patterns (-)
        for shape, members in shapes.items():
            if not admits(node, shape):
                continue
            per_gpu = 1 if not shape.share else MILLI // shape.milli
            upper = min(len(members), _fits(node, shape), node.gpus // shape.gpus * per_gpu)
            col = prog.var(upper, shape.gpu_milli)
            cpu[col], memory[col], of_shape[shape][col] = shape.cpu, shape.memory, 1
            if shape.share:
                cols.shared[shape] = col
                slots.setdefault(shape.milli, {})[col] = 1
            else:
                cols.whole[shape] = col
                gpus[col] = shape.gpus
        caps = {m: int(sum(prog.upper[c] for c in terms)) for m, terms in slots.items()}
        key = tuple(sorted(caps.items()))
        if key not in patterns:
            patterns[key] = gpu_patterns(caps) if caps else []
        for pattern in patterns[key]:
            col = cols.patterns[pattern] = prog.var(node.gpus, 0)
            gpus[col] = 1
            for m, count in pattern:
                slots[m][col] = -count
        prog.row(gpus, upper=node.gpus)
        for terms in slots.values():
            prog.row(terms, upper=0)
        prog.row(cpu, upper=node.cpu)
        prog.row(memory, upper=node.memory)
        prog.row(dict.fromkeys(cpu, 1), upper=node.pods)
        columns.append(cols)
    for shape, members in shapes.items():
        prog.row(of_shape[shape], upper=len(members))
    if not any(of_shape.values()):
        return Optimum(0, 0, "Optimal", True, 0.0, time.perf_counter() - began)
    step = math.gcd(*(int(c) for c in prog.cost if c))
    status, text, values, dual = prog.solve(highspy, time_limit, step - 0.5)
    placements = _placements(shapes, columns, values) if values else {}
    if problems := violations(nodes, pods, placements):
        raise RuntimeError(f"HiGHS's solution does not hold: {problems[0]}")
    allocated = sum(pods[i].gpu_milli for i in placements)
    optimal = status == highspy.HighsModelStatus.kOptimal
    trivial = min(MILLI * sum(n.gpus for n in nodes), sum(p.gpu_milli for p in pods))
    dual = min(dual, trivial) if math.isfinite(dual) else trivial
    bound = allocated if optimal else max(allocated, math.floor(dual + 1e-6))
    return Optimum(
        allocated,
        bound,
        text,
        optimal,
        (bound - allocated) / bound if bound else 0.0,
        time.perf_counter() - began,
        placements,
    )


def violations(
    nodes: Sequence[PackNode], pods: Sequence[PackPod], placements: dict[int, tuple[int, tuple[int, ...]]]
) -> list[str]:
    """What a placement breaks (empty when it holds): the model, node and GPU capacities, whole
    GPUs shared, a pod on GPUs it did not ask for."""
    problems: list[str] = []
    gpu_load: dict[tuple[int, int], int] = {}
    whole: set[tuple[int, int]] = set()
    per_node: dict[int, list[PackPod]] = {}
    for i, (n, gpus) in placements.items():
        pod, node = pods[i], nodes[n]
        per_node.setdefault(n, []).append(pod)
        if not admits(node, pod):
            problems.append(f"pod {i} does not fit node {n}")
        if len(set(gpus)) != pod.gpus or not all(0 <= g < node.gpus for g in gpus):
            problems.append(f"pod {i} asks for {pod.gpus} GPUs, has {gpus} of node {n}")
        for g in gpus:
            gpu_load[n, g] = gpu_load.get((n, g), 0) + pod.milli
            if not pod.share:
                whole.add((n, g))
    for (n, g), load in gpu_load.items():
        if load > MILLI or ((n, g) in whole and load != MILLI):
            problems.append(f"GPU {g} of node {n} holds {load} thousandths")
    for n, placed in per_node.items():
        node = nodes[n]
        if sum(p.cpu for p in placed) > node.cpu or sum(p.memory for p in placed) > node.memory:
            problems.append(f"node {n}: cpu or memory over capacity")
        if len(placed) > node.pods:
            problems.append(f"node {n}: {len(placed)} pods, room for {node.pods}")
    return problems


def _fits(node: PackNode, pod: PackPod) -> int:
    """How many such pods the node's cpu, memory and pod slots hold."""
    most = node.pods
    for need, have in ((pod.cpu, node.cpu), (pod.memory, node.memory)):
        if need:
            most = min(most, have // need)
    return most


def _placements(
    shapes: dict[PackPod, list[int]], columns: list[_NodeColumns], values: list[float]
) -> dict[int, tuple[int, tuple[int, ...]]]:
    """Counts back to pods: pod index -> (node, GPUs); whole GPUs first, then the patterns' GPUs,
    each share in a slot of its size."""
    queue = {shape: list(reversed(members)) for shape, members in shapes.items()}
    out: dict[int, tuple[int, tuple[int, ...]]] = {}
    for n, cols in enumerate(columns):
        gpu = 0
        for shape, col in cols.whole.items():
            for _ in range(round(values[col])):
                out[queue[shape].pop()] = (n, tuple(range(gpu, gpu + shape.gpus)))
                gpu += shape.gpus
        slots: dict[int, list[int]] = {}  # share size -> a GPU for each slot
        for pattern, col in cols.patterns.items():
            for _ in range(round(values[col])):
                for m, count in pattern:
                    slots.setdefault(m, []).extend([gpu] * count)
                gpu += 1
        for shape, col in cols.shared.items():
            for _ in range(round(values[col])):
                out[queue[shape].pop()] = (n, (slots[shape.milli].pop(),))
    return out


def pack_node(node: Node) -> PackNode:
    """A node as the program sees it: allocatable cpu, memory, pods, GPUs, the GPU product label."""
    a = node.allocatable
    return PackNode(
        a.get(CPU, 0), a.get(MEMORY, 0), a.get(PODS, 0), a.get(GPU, 0), node.labels.get(PRODUCT, "")
    )


def pack_pods(pods: Sequence[Pod], nodes: Sequence[Node]) -> list[PackPod]:
    """Pods as the program sees them (``gpu_request``'s GPUs and thousandths). The products a pod
    admits are those of the nodes its node selector and required affinity match (None: all), so
    affinity to other labels is relaxed to the products, which keeps the optimum an upper bound."""
    out: list[PackPod] = []
    for pod in pods:
        k, m = gpu_request(pod)
        products = None
        if pod.node_selector or pod.required_terms is not None:
            matched = [n.labels.get(PRODUCT, "") for n in nodes if pod.matches_node_selector(n)]
            products = None if len(matched) == len(nodes) else frozenset(matched)
        out.append(PackPod(pod.requests.get(CPU, 0), pod.requests.get(MEMORY, 0), k, m, products))
    return out


@dataclass
class TraceSlice:
    nodes: list[Node]  # the first GPU nodes of the trace's node list
    pods: list[Pod]  # the protocol's order: sorted by name, shuffled, tuned to the load
    typical: list[dict[str, object]]  # the typical pods of the slice's candidate pods

    @property
    def gpus(self) -> int:
        return sum(n.allocatable.get(GPU, 0) for n in self.nodes)


def trace_slice(
    nodes: Sequence[Node], pods: Sequence[Pod], max_nodes: int, load: float, seed: int
) -> TraceSlice:
    """A small instance of a trace: its first ``max_nodes`` GPU nodes (file order) and, of the pods
    that fit one of them alone (GPU model, GPUs, cpu, memory), the protocol's ``workload`` tuned to
    ``load`` times the slice's GPUs rather than 1.3 (random pods dropped, random copies added)."""
    if max_nodes < 1:
        raise ValueError(f"max nodes {max_nodes}: at least 1")
    if not load > 0:
        raise ValueError(f"load {load}: above 0")
    chosen = [n for n in nodes if n.allocatable.get(GPU, 0) > 0][:max_nodes]
    if not chosen:
        raise ValueError("the node list has no GPU nodes")
    packed = [pack_node(n) for n in chosen]
    candidates = [
        p for p, q in zip(pods, pack_pods(pods, chosen), strict=True) if any(admits(n, q) for n in packed)
    ]
    capacity = MILLI * sum(n.gpus for n in packed)
    order = workload(candidates, round(load * capacity / TARGET), seed)
    return TraceSlice(chosen, order, typical_pods(candidates))


Placed = tuple[str, tuple[int, ...]]  # a node's name and the slots of the shared GPUs a share went to


def schedule(
    nodes: Sequence[Node], order: Sequence[Pod], typical: list[dict[str, object]], policy: str, seed: int
) -> list[Placed | None]:
    """Where each pod of ``order`` goes, scheduled once in order with no departures, by the one
    policy profile, tie order and seed ``fgd_protocol.replay`` uses (``nodes``: GPU nodes only)."""
    state, scheduler = protocol_scheduler(list(nodes), typical, policy, seed)
    placed: list[Placed | None] = []
    for pod in order:
        node = scheduler.place_once(pod, 0.0)
        slots = state.shares.placed.get(pod.key, []) if state.shares else []
        placed.append(None if node is None else (node, tuple(p.slot for p in slots)))
    return placed


def placements_of(
    nodes: Sequence[Node], order: Sequence[Pod], placed: Sequence[Placed | None]
) -> dict[int, tuple[int, tuple[int, ...]]]:
    """``schedule``'s outcome as the program's placements: node by its index in ``nodes``; on each
    node the shared GPUs first (by slot), then the whole GPUs, in placing order."""
    index = {n.name: i for i, n in enumerate(nodes)}
    slot_gpu: dict[int, dict[int, int]] = {}  # node -> slot -> GPU
    for where in placed:
        if where is not None:
            gpus = slot_gpu.setdefault(index[where[0]], {})
            for slot in where[1]:
                gpus.setdefault(slot, len(gpus))
    used = {n: len(gpus) for n, gpus in slot_gpu.items()}
    out: dict[int, tuple[int, tuple[int, ...]]] = {}
    for i, (pod, where) in enumerate(zip(order, placed, strict=True)):
        if where is None:
            continue
        n = index[where[0]]
        if where[1]:
            out[i] = (n, tuple(slot_gpu[n][s] for s in where[1]))
        else:
            k = pod.gpus
            out[i] = (n, tuple(range(used.get(n, 0), used.get(n, 0) + k)))
            used[n] = used.get(n, 0) + k
    return out


def allocated_milli(order: Sequence[Pod], placed: Sequence[Placed | None]) -> int:
    return sum(math.prod(gpu_request(p)) for p, node in zip(order, placed, strict=True) if node is not None)


def compare_to_optimum(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    max_nodes: int,
    load: float,
    seed: int,
    time_limit: float | None = None,
    policies: Sequence[str] = POLICIES,
) -> dict[str, Any]:
    """Each policy's GPU thousandths allocated once all pods of a trace slice arrived, against the
    optimum of the same pods; ``gap_pct = 100 * (bound - policy) / bound`` (bound: the optimum
    when ``optimum.optimal``, else HiGHS's dual bound, so the gap is then an upper bound). Each
    policy's placement is checked against the program's constraints: the optimum bounds it."""
    require_solver()
    part = trace_slice(nodes, pods, max_nodes, load, seed)
    packed_nodes, packed_pods = [pack_node(n) for n in part.nodes], pack_pods(part.pods, part.nodes)
    rows: list[dict[str, Any]] = []
    for policy in policies:
        start = time.perf_counter()
        placed = schedule(part.nodes, part.pods, part.typical, policy, seed)
        placements = placements_of(part.nodes, part.pods, placed)
        if problems := violations(packed_nodes, packed_pods, placements):  # the bound would not hold
            raise RuntimeError(f"{policy} placed pods where the program may not: {problems[0]}")
        rows.append(
            {
                "policy": policy,
                "allocated_milli": allocated_milli(part.pods, placed),
                "pods_failed": placed.count(None),
                "seconds": round(time.perf_counter() - start, 3),
            }
        )
    best = solve(packed_nodes, packed_pods, time_limit)
    for row in rows:
        lost = best.bound_milli - row["allocated_milli"]
        row["gap_pct"] = round(100 * lost / best.bound_milli, 2) if best.bound_milli else 0.0
    return {
        "nodes": len(part.nodes),
        "gpus": part.gpus,
        "load": load,
        "seed": seed,
        "pods_total": len(part.pods),
        "gpu_request_milli": sum(math.prod(gpu_request(p)) for p in part.pods),
        "optimum": best.to_json(),
        "policies": rows,
    }
