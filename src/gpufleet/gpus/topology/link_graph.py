"""One node's GPU link graph, in the vocabulary of ``nvidia-smi topo -m``.

``nvidia-smi topo -m`` prints a matrix with one cell per pair of devices (GPUs, then NICs) and a
legend; from best to worst connection (NVML's ``nvmlGpuTopologyLevel_t`` orders the PCIe levels
the same way, INTERNAL/SINGLE/MULTIPLE/HOSTBRIDGE/NODE/SYSTEM):

=======  =====================================================================================
``X``    the device itself
``NV#``  a bonded set of ``#`` NVLinks (``NV18`` between any two H100 SXM GPUs of a DGX/HGX
         H100 through its NVSwitches, ``NV12`` on a DGX/HGX A100, ``NV4`` for an NVLink bridge)
``NVS``  NVSwitch (printed by some releases for switched NVLink)
``PIX``  at most a single PCIe bridge (the same PCIe switch)
``PXB``  multiple PCIe bridges, without the PCIe Host Bridge
``PHB``  a PCIe Host Bridge (typically the CPU)
``NODE`` PCIe and the interconnect between PCIe Host Bridges within one NUMA node
``SYS``  PCIe and the SMP interconnect between NUMA nodes (QPI/UPI); older releases print ``SOC``
=======  =====================================================================================

Sources: the legend printed by ``nvidia-smi topo -m`` and NVML's ``nvmlGpuTopologyLevel_t``
(https://docs.nvidia.com/deploy/nvml-api/); NVIDIA Fabric Manager user guide, NVSwitch gives
"all-to-all GPU communication at the total NVLink speed" on HGX/DGX A100 and H100 8-GPU
baseboards (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide); the DGX H100
user guide (8 H100 SXM5 through 4 NVSwitches, 8 single-port ConnectX-7 NICs for the compute
fabric, two CPU sockets) and the DGX A100 user guide (8 A100 through 6 NVSwitches, ``NV12``).

The model: GPUs ``0..n-1``; a symmetric matrix of :class:`Link`; optionally a NUMA node per GPU
and, per NIC, its link to each GPU.  :attr:`Link.cost` orders links totally (lower is better) so
the device chooser can minimise it; an *island* is a connected group of GPUs whose links are all
at or better than a given :class:`LinkLevel` (:meth:`LinkGraph.islands`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache

__all__ = [
    "DEFAULT_LAYOUTS",
    "Link",
    "LinkGraph",
    "LinkLevel",
    "default_graph",
    "from_topo_matrix",
    "nvlink_islands",
    "nvlink_pairs",
    "nvswitch",
    "parse_link",
    "pcie",
]


class LinkLevel(IntEnum):
    """How two devices connect, best (lowest) to worst, as ``nvidia-smi topo -m``'s legend."""

    SELF = 0
    NVLINK = 1
    PIX = 2
    PXB = 3
    PHB = 4
    NODE = 5
    SYS = 6


_LEVEL_COST = {
    LinkLevel.SELF: 0,
    LinkLevel.PIX: 200,
    LinkLevel.PXB: 300,
    LinkLevel.PHB: 400,
    LinkLevel.NODE: 500,
    LinkLevel.SYS: 600,
}
_MAX_COUNTED_NVLINKS = 98


@dataclass(frozen=True, order=True)
class Link:
    """One cell of the matrix.  ``nvlinks`` counts bonded NVLinks for ``NV#`` (0 means ``NVS``)."""

    level: LinkLevel
    nvlinks: int = 0

    def __post_init__(self) -> None:
        if self.nvlinks < 0:
            raise ValueError(f"nvlinks must be >= 0, got {self.nvlinks}")
        if self.nvlinks and self.level is not LinkLevel.NVLINK:
            raise ValueError("only an NVLink link has an NVLink count")

    @property
    def label(self) -> str:
        """The cell as ``nvidia-smi topo -m`` prints it (``X``, ``NV18``, ``NVS``, ``PIX`` ...)."""
        if self.level is LinkLevel.SELF:
            return "X"
        if self.level is LinkLevel.NVLINK:
            return f"NV{self.nvlinks}" if self.nvlinks else "NVS"
        return self.level.name

    @property
    def cost(self) -> int:
        """Total order, lower is better: ``X`` 0; ``NVS`` 1; ``NV#`` 100 - # (more links, better,
        always below 100); ``PIX`` 200, ``PXB`` 300, ``PHB`` 400, ``NODE`` 500, ``SYS`` 600."""
        if self.level is LinkLevel.NVLINK:
            if self.nvlinks == 0:
                return 1
            return 100 - min(self.nvlinks, _MAX_COUNTED_NVLINKS)
        return _LEVEL_COST[self.level]

    def __str__(self) -> str:
        return self.label


SELF = Link(LinkLevel.SELF)
_NV_RE = re.compile(r"^NV(\d+)$")


def parse_link(cell: str) -> Link:
    """Parse one ``nvidia-smi topo -m`` cell (``X``, ``NV#``, ``NVS``, ``PIX``, ``PXB``, ``PHB``,
    ``NODE``, ``SYS``, legacy ``SOC`` = ``SYS``)."""
    text = cell.strip().upper()
    if text == "X":
        return SELF
    if text == "NVS":
        return Link(LinkLevel.NVLINK)
    match = _NV_RE.match(text)
    if match:
        count = int(match.group(1))
        if count == 0:
            raise ValueError("NV0 is not a link")
        return Link(LinkLevel.NVLINK, count)
    if text == "SOC":
        return Link(LinkLevel.SYS)
    if text in ("PIX", "PXB", "PHB", "NODE", "SYS"):
        return Link(LinkLevel[text])
    raise ValueError(f"unknown nvidia-smi topo cell {cell!r}")


@dataclass(frozen=True)
class LinkGraph:
    """GPUs ``0..n-1`` of one node and how each pair connects.

    ``links[i][j]`` is symmetric with ``X`` on the diagonal; ``numa[i]`` is GPU i's NUMA node
    (``None`` when unknown); ``nic_links[m][i]`` is NIC m's link to GPU i.
    """

    links: tuple[tuple[Link, ...], ...]
    numa: tuple[int | None, ...] = ()
    nic_links: tuple[tuple[Link, ...], ...] = ()

    def __post_init__(self) -> None:
        n = len(self.links)
        for i, row in enumerate(self.links):
            if len(row) != n:
                raise ValueError(f"row {i} has {len(row)} cells, expected {n}")
            if row[i] != SELF:
                raise ValueError(f"diagonal cell ({i},{i}) must be X")
            for j in range(i + 1, n):
                if row[j] != self.links[j][i]:
                    raise ValueError(f"links ({i},{j}) and ({j},{i}) differ")
                if row[j] == SELF:
                    raise ValueError(f"off-diagonal cell ({i},{j}) is X")
        if self.numa and len(self.numa) != n:
            raise ValueError(f"numa has {len(self.numa)} entries, expected {n}")
        for m, nic_row in enumerate(self.nic_links):
            if len(nic_row) != n:
                raise ValueError(f"NIC {m} has {len(nic_row)} GPU links, expected {n}")

    @property
    def n(self) -> int:
        """Number of GPUs."""
        return len(self.links)

    def link(self, i: int, j: int) -> Link:
        """The link between GPUs ``i`` and ``j``."""
        return self.links[i][j]

    def cost(self, i: int, j: int) -> int:
        """:attr:`Link.cost` of the link between GPUs ``i`` and ``j``."""
        return self.links[i][j].cost

    def worst_link(self, gpus: Iterable[int]) -> Link:
        """The worst pairwise link within ``gpus`` (``X`` for fewer than two GPUs)."""
        members = sorted(set(gpus))
        worst = SELF
        for a, i in enumerate(members):
            for j in members[a + 1 :]:
                worst = max(worst, self.links[i][j], key=lambda link: link.cost)
        return worst

    def islands(
        self, gpus: Iterable[int] | None = None, level: LinkLevel = LinkLevel.NVLINK
    ) -> list[tuple[int, ...]]:
        """Connected groups of ``gpus`` (default all) joined by links at ``level`` or better.

        Sorted by size descending, then lowest GPU.  At ``NVLINK`` these are the NVLink islands
        (one group of 8 on an NVSwitch node, two of 4 on a two-island node, pairs on a bridged
        PCIe node, singletons on a plain PCIe node).
        """
        members = sorted(set(range(self.n) if gpus is None else gpus))
        parent = {g: g for g in members}

        def find(g: int) -> int:
            while parent[g] != g:
                parent[g] = parent[parent[g]]
                g = parent[g]
            return g

        for a, i in enumerate(members):
            for j in members[a + 1 :]:
                if self.links[i][j].level <= level:
                    ri, rj = find(i), find(j)
                    if ri != rj:
                        parent[max(ri, rj)] = min(ri, rj)
        groups: dict[int, list[int]] = {}
        for g in members:
            groups.setdefault(find(g), []).append(g)
        return sorted((tuple(v) for v in groups.values()), key=lambda t: (-len(t), t))

    def nics_near(self, gpus: Iterable[int], level: LinkLevel = LinkLevel.PXB) -> tuple[int, ...]:
        """NICs linked at ``level`` or better to at least one of ``gpus`` (GPUDirect RDMA wants
        ``PIX``/``PXB``; NCCL's ``NCCL_NET_GDR_LEVEL`` uses the same scale)."""
        chosen = set(gpus)
        return tuple(m for m, row in enumerate(self.nic_links) if any(row[g].level <= level for g in chosen))

    def to_topo_matrix(self) -> str:
        """Render the GPU block (and NIC columns) in the ``nvidia-smi topo -m`` layout."""
        names = [f"GPU{i}" for i in range(self.n)] + [f"NIC{m}" for m in range(len(self.nic_links))]
        header = "\t" + "\t".join([*names, "CPU Affinity", "NUMA Affinity"])
        lines = [header]
        for i in range(self.n):
            cells = [self.links[i][j].label for j in range(self.n)]
            cells += [row[i].label for row in self.nic_links]
            numa = self.numa[i] if self.numa else None
            cells += ["N/A", "N/A" if numa is None else str(numa)]
            lines.append(f"GPU{i}\t" + "\t".join(cells))
        return "\n".join(lines) + "\n"


def _from_function(
    n: int,
    link_of: Callable[[int, int], Link],
    numa: Sequence[int | None] = (),
    nic_links: Sequence[Sequence[Link]] = (),
) -> LinkGraph:
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    rows = tuple(tuple(SELF if i == j else link_of(min(i, j), max(i, j)) for j in range(n)) for i in range(n))
    return LinkGraph(rows, tuple(numa), tuple(tuple(r) for r in nic_links))


def _numa_of(i: int, per_numa: int) -> int:
    return i // per_numa


def _pcie_link(i: int, j: int, per_switch: int, per_numa: int, same_numa: LinkLevel) -> Link:
    if i // per_switch == j // per_switch:
        return Link(LinkLevel.PIX)
    if _numa_of(i, per_numa) == _numa_of(j, per_numa):
        return Link(same_numa)
    return Link(LinkLevel.SYS)


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")


def _rail_nics(n: int, per_numa: int) -> list[list[Link]]:
    """One NIC per GPU on the GPU's PCIe switch (rail-optimised, as the DGX H100's ConnectX-7s)."""
    rows: list[list[Link]] = []
    for m in range(n):
        row = []
        for g in range(n):
            if g == m:
                row.append(Link(LinkLevel.PIX))
            elif _numa_of(g, per_numa) == _numa_of(m, per_numa):
                row.append(Link(LinkLevel.NODE))
            else:
                row.append(Link(LinkLevel.SYS))
        rows.append(row)
    return rows


def nvswitch(n: int = 8, nvlinks: int = 18, numa_nodes: int = 2, rail_nics: bool = False) -> LinkGraph:
    """All pairs through NVSwitch (DGX/HGX H100: ``NV18``; DGX/HGX A100: ``NV12``).

    GPUs split evenly over ``numa_nodes`` sockets; ``rail_nics`` adds one NIC per GPU at ``PIX``.
    """
    _check_positive(numa_nodes=numa_nodes)
    per_numa = max(1, -(-n // numa_nodes))
    return _from_function(
        n,
        lambda i, j: Link(LinkLevel.NVLINK, nvlinks),
        [_numa_of(i, per_numa) for i in range(n)],
        _rail_nics(n, per_numa) if rail_nics else (),
    )


def nvlink_islands(
    n: int, island: int, nvlinks: int = 4, between: LinkLevel = LinkLevel.SYS, numa_nodes: int = 2
) -> LinkGraph:
    """Islands of ``island`` GPUs, all-to-all NVLink inside (``NV{nvlinks}``), ``between`` across.

    E.g. ``nvlink_islands(8, 4)``: GPUs 0-3 and 4-7 are two NVLink islands joined over ``SYS``
    (one per socket); pass ``between=LinkLevel.PHB`` for islands under one host bridge.
    """
    _check_positive(island=island, numa_nodes=numa_nodes)
    if between <= LinkLevel.NVLINK:
        raise ValueError("islands are joined by a PCIe or system link")
    per_numa = max(1, -(-n // numa_nodes))
    return _from_function(
        n,
        lambda i, j: Link(LinkLevel.NVLINK, nvlinks) if i // island == j // island else Link(between),
        [_numa_of(i, per_numa) for i in range(n)],
    )


def nvlink_pairs(
    n: int,
    nvlinks: int = 4,
    per_switch: int = 2,
    per_numa: int | None = None,
    same_numa: LinkLevel = LinkLevel.NODE,
) -> LinkGraph:
    """NVLink-bridged pairs (0-1, 2-3, ...) on a PCIe layout (as :func:`pcie`) otherwise."""
    numa_size = per_numa if per_numa is not None else max(1, -(-n // 2))
    _check_positive(per_switch=per_switch, per_numa=numa_size)

    def link(i: int, j: int) -> Link:
        if i // 2 == j // 2:
            return Link(LinkLevel.NVLINK, nvlinks)
        return _pcie_link(i, j, per_switch, numa_size, same_numa)

    return _from_function(n, link, [_numa_of(i, numa_size) for i in range(n)])


def pcie(
    n: int, per_switch: int = 2, per_numa: int | None = None, same_numa: LinkLevel = LinkLevel.NODE
) -> LinkGraph:
    """PCIe only: ``per_switch`` GPUs share a PCIe switch (``PIX``); GPUs on different switches
    in one NUMA node meet at ``same_numa`` (``PXB``, ``PHB`` or ``NODE`` by platform); across NUMA
    nodes ``SYS``.  ``per_numa`` defaults to half the GPUs (two sockets)."""
    numa_size = per_numa if per_numa is not None else max(1, -(-n // 2))
    _check_positive(per_switch=per_switch, per_numa=numa_size)
    if not LinkLevel.PIX <= same_numa <= LinkLevel.NODE:
        raise ValueError("same_numa must be PIX, PXB, PHB or NODE")
    return _from_function(
        n,
        lambda i, j: _pcie_link(i, j, per_switch, numa_size, same_numa),
        [_numa_of(i, numa_size) for i in range(n)],
    )


_DEVICE_RE = re.compile(r"^(GPU|NIC)(\d+)$")


def from_topo_matrix(text: str) -> LinkGraph:
    """Parse the matrix printed by ``nvidia-smi topo -m``.

    Reads the header (``GPU0 GPU1 ... NIC0 ... CPU Affinity NUMA Affinity ...``), then each
    ``GPUi`` row's device cells, then its NUMA affinity when printed.  ``NIC`` columns become
    :attr:`LinkGraph.nic_links`; ``NIC`` rows, the legend and blank lines are ignored.
    """
    lines = [line.split() for line in text.splitlines()]
    header: list[str] | None = None
    header_at = 0
    for at, tokens in enumerate(lines):
        if len(tokens) >= 1 and tokens[0] == "GPU0" and (len(tokens) == 1 or tokens[1] != "X"):
            header, header_at = tokens, at
            break
    if header is None:
        raise ValueError("no nvidia-smi topo -m header (a line starting with GPU0) found")
    devices: list[str] = []
    for token in header:
        if not _DEVICE_RE.match(token):
            break
        devices.append(token)
    trailing = header[len(devices) :]
    has_numa = "NUMA" in trailing and "Affinity" in trailing[trailing.index("NUMA") :]
    gpu_cols = [k for k, d in enumerate(devices) if d.startswith("GPU")]
    nic_cols = [k for k, d in enumerate(devices) if d.startswith("NIC")]
    n = len(gpu_cols)
    if [devices[k] for k in gpu_cols] != [f"GPU{i}" for i in range(n)]:
        raise ValueError("GPU columns must be GPU0..GPU{n-1} in order")
    rows: dict[int, list[str]] = {}
    numa: dict[int, int | None] = {}
    for tokens in lines[header_at + 1 :]:
        if not tokens:
            continue
        match = _DEVICE_RE.match(tokens[0])
        if not match or match.group(1) != "GPU":
            continue
        gpu = int(match.group(2))
        cells = tokens[1 : 1 + len(devices)]
        if len(cells) != len(devices):
            raise ValueError(f"row {tokens[0]} has {len(cells)} device cells, expected {len(devices)}")
        rows[gpu] = cells
        rest = tokens[1 + len(devices) :]
        numa_cell = rest[1] if has_numa and len(rest) >= 2 else None
        numa[gpu] = int(numa_cell) if numa_cell is not None and numa_cell.isdigit() else None
    if sorted(rows) != list(range(n)):
        raise ValueError(f"expected rows GPU0..GPU{n - 1}, got {sorted(rows)}")
    links = tuple(tuple(parse_link(rows[i][k]) for k in gpu_cols) for i in range(n))
    nic_links = tuple(tuple(parse_link(rows[i][k]) for i in range(n)) for k in nic_cols)
    numa_tuple: tuple[int | None, ...] = tuple(numa[i] for i in range(n))
    if all(v is None for v in numa_tuple):
        numa_tuple = ()
    return LinkGraph(links, numa_tuple, nic_links)


DEFAULT_LAYOUTS: Mapping[str, Callable[[int], LinkGraph]] = {
    # DGX/HGX H100 and H200: 8 SXM GPUs through NVSwitch, NV18, one ConnectX-7 per GPU.
    "H100-80GB": lambda n: nvswitch(n, nvlinks=18, rail_nics=True),
    "H200-141GB": lambda n: nvswitch(n, nvlinks=18, rail_nics=True),
    # DGX/HGX A100: 8 SXM GPUs through NVSwitch, NV12.
    "A100-80GB": lambda n: nvswitch(n, nvlinks=12),
    "A100-40GB": lambda n: nvswitch(n, nvlinks=12),
    # PCIe cards without NVLink: two per PCIe switch, half per socket.
    "L4": lambda n: pcie(n, per_switch=2),
    "L40S": lambda n: pcie(n, per_switch=2),
    "T4": lambda n: pcie(n, per_switch=2),
    "RTX-4090": lambda n: pcie(n, per_switch=2),
}
"""GPU model name -> layout for ``n`` GPUs of that model in one node."""


@lru_cache(maxsize=64)
def default_graph(model: str, n: int = 8) -> LinkGraph:
    """The default layout of ``n`` GPUs of ``model`` (:data:`DEFAULT_LAYOUTS`); an unknown model
    gets the conservative PCIe layout ``pcie(n, per_switch=2)``. A graph is a frozen value: one is made
    per model and count, and every node of them shares it."""
    layout = DEFAULT_LAYOUTS.get(model)
    return layout(n) if layout is not None else pcie(n, per_switch=2)
