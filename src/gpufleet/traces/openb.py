"""The Alibaba GPU cluster trace of 2023 ("openb", ``alibaba/clusterdata`` ``cluster-trace-gpu-v2023``;
the trace of Weng et al., "Beware of Fragmentation", USENIX ATC '23).

Node lists ``sn,cpu_milli,memory_mib,gpu,model``: a node with ``cpu_milli`` millicores, ``memory_mib``
MiB, ``gpu`` GPUs of ``model`` (``T4``, ``P100``, ``V100M16``, ``V100M32``, ``A10``, or the undisclosed
``G2``, ``G3``; empty on CPU-only nodes), labelled as GPU Feature Discovery would label it from the
GPU catalog (``nvidia.com/gpu.product`` and the rest).

Pod lists ``name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,creation_time,
deletion_time,scheduled_time]`` (the ``multigpu*`` files have only the first five): ``num_gpu`` GPUs,
each ``gpu_milli`` thousandths of one; below 1000 (one GPU) it is a fractional request
(``model.gpu_share``, compute only), else whole GPUs. ``gpu_spec`` (``V100M16|V100M32``) becomes a
required node affinity on ``nvidia.com/gpu.product``. CPU-only pods (``num_gpu`` 0) are kept.
``qos``, ``pod_phase`` and ``scheduled_time`` are what happened in production and are not used.
"""

from __future__ import annotations

import math
from pathlib import Path

from gpufleet.model.gfd_labels import gfd_labels
from gpufleet.model.gpu_catalog import lookup
from gpufleet.model.gpu_share import MILLI, GpuShare
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod, Requirement, SelectorTerm
from gpufleet.model.resources import CPU, GPU, MAX_UNITS, MEMORY, PODS
from gpufleet.traces.base import Rows, TraceFormat, TracePod

MIB = 2**20
#: Pods a trace node may hold (the kubelet's default ``maxPods``); the trace does not say.
MAX_PODS = 110
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
POD_TIME_COLUMNS = ("gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time")
PRODUCT = "nvidia.com/gpu.product"


def read_nodes(path: Path) -> list[Node]:
    rows = Rows(path, NODE_COLUMNS)
    nodes: list[Node] = []
    for line, row in rows:
        cpu = rows.integer(line, row, "cpu_milli", 1, MAX_UNITS)
        memory = rows.integer(line, row, "memory_mib", 1, MAX_UNITS // MIB)
        gpus = rows.integer(line, row, "gpu", 0, 64)
        model = row["model"].strip()
        labels: dict[str, str] = {}
        if model:
            try:
                labels = gfd_labels(lookup(model), gpus)
            except KeyError as exc:
                rows.problem(line, "model", str(exc.args[0]))
        elif gpus:
            rows.problem(line, "model", f"a node with {gpus} GPUs needs a GPU model")
        capacity = {CPU: cpu, MEMORY: memory * MIB, PODS: MAX_PODS}
        if gpus:
            capacity[GPU] = gpus
        nodes.append(Node(row["sn"].strip(), labels=labels, capacity=capacity))
    return nodes


#: A pod row's request columns parsed: requests, fractional request, GPU model constraint.
Ask = tuple[dict[str, int], GpuShare | None, tuple[SelectorTerm, ...] | None]


#: The columns ``_ask`` reads.
ASK_COLUMNS = ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec")


def read_pods(path: Path) -> list[TracePod]:
    rows = Rows(path, POD_COLUMNS, POD_TIME_COLUMNS)
    pods: list[TracePod] = []
    asks: dict[tuple[str, ...], Ask] = {}  # by the text of the columns ``_ask`` reads, parsed cleanly
    read = ("name", *ASK_COLUMNS, "creation_time", "deletion_time")
    for line, (name, cpu, memory, gpus, milli, spec, creation, deletion) in rows.picked(read):
        text = (cpu, memory, gpus, milli, spec)
        ask = asks.get(text)
        if ask is None:
            problems = len(rows.problems)
            ask = _ask(rows, line, dict(zip(ASK_COLUMNS, text, strict=True)))
            if len(rows.problems) == problems:
                asks[text] = ask
        requests, share, terms = ask
        created, deleted = (
            _time(rows, line, "creation_time", creation),
            _time(rows, line, "deletion_time", deletion),
        )
        if created is not None and deleted is not None and deleted < created:
            rows.problem(line, "deletion_time", f"{deleted:g} is before creation_time {created:g}")
        pod = Pod(name.strip(), requests=dict(requests), gpu_share=share, required_terms=terms)
        pods.append(TracePod(pod, created, deleted))
    return pods


def _ask(rows: Rows, line: int, row: dict[str, str]) -> Ask:
    """The row's requests, fractional GPU request and GPU model constraint (problems noted in ``rows``)."""
    cpu = rows.integer(line, row, "cpu_milli", 0, MAX_UNITS)
    memory = rows.integer(line, row, "memory_mib", 0, MAX_UNITS // MIB)
    gpus = rows.integer(line, row, "num_gpu", 0, 64)
    milli = rows.integer(line, row, "gpu_milli", 0, MILLI)
    requests = {r: v for r, v in ((CPU, cpu), (MEMORY, memory * MIB)) if v}
    share = None
    if gpus == 1 and 0 < milli < MILLI:
        share = GpuShare(1, compute_milli=milli, source=f"gpu_milli: {milli}")
    elif gpus:
        if milli != MILLI:
            rows.problem(line, "gpu_milli", f"{milli}: a pod of {gpus} GPUs takes whole GPUs (1000)")
        requests[GPU] = gpus
    spec = row["gpu_spec"].strip()
    terms = None
    if spec:
        products = []
        for name in spec.split("|"):
            try:
                products.append(lookup(name).product)
            except KeyError as exc:
                rows.problem(line, "gpu_spec", str(exc.args[0]))
        terms = (SelectorTerm((Requirement(PRODUCT, "In", tuple(products)),)),)
    return requests, share, terms


def _time(rows: Rows, line: int, column: str, given: str) -> float | None:
    """The seconds a time column's text gives (None where it is empty; problems noted in ``rows``)."""
    text = given.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        rows.problem(line, column, f"{text!r} is not a number of seconds")
        return None
    if not math.isfinite(value):
        rows.problem(line, column, f"{text!r} is not a finite number of seconds")
        return None
    if value < 0:
        rows.problem(line, column, f"{value:g} is negative")
        return None
    return value


FORMAT = TraceFormat("openb", read_nodes, read_pods)
