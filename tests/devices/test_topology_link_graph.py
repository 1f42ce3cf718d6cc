"""LinkGraph: link order, layouts, islands and the ``nvidia-smi topo -m`` parser."""

from __future__ import annotations

import pytest

from gpufleet.gpus.topology.link_graph import (
    DEFAULT_LAYOUTS,
    Link,
    LinkGraph,
    LinkLevel,
    default_graph,
    from_topo_matrix,
    nvlink_islands,
    nvlink_pairs,
    nvswitch,
    parse_link,
    pcie,
)

DGX_H100 = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tPIX\tSYS\t0-55,112-167\t0\t\tN/A
GPU1\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNODE\tSYS\t0-55,112-167\t0\t\tN/A
GPU2\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNODE\tSYS\t0-55,112-167\t0\t\tN/A
GPU3\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNODE\tSYS\t0-55,112-167\t0\t\tN/A
GPU4\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tSYS\tPIX\t56-111,168-223\t1\t\tN/A
GPU5\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tSYS\tNODE\t56-111,168-223\t1\t\tN/A
GPU6\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tSYS\tNODE\t56-111,168-223\t1\t\tN/A
GPU7\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tSYS\tNODE\t56-111,168-223\t1\t\tN/A
NIC0\tPIX\tNODE\tNODE\tNODE\tSYS\tSYS\tSYS\tSYS\t X \tSYS
NIC1\tSYS\tSYS\tSYS\tSYS\tPIX\tNODE\tNODE\tNODE\tSYS\t X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
"""

PCIE_4 = """\
        GPU0    GPU1    GPU2    GPU3    CPU Affinity
GPU0     X      PIX     PHB     SOC     0-11
GPU1    PIX      X      PHB     SOC     0-11
GPU2    PHB     PHB      X      SOC     0-11
GPU3    SOC     SOC     SOC      X      12-23
"""


def test_link_order_follows_the_legend() -> None:
    order = ["NVS", "NV18", "NV12", "NV4", "NV1", "PIX", "PXB", "PHB", "NODE", "SYS"]
    costs = [parse_link(label).cost for label in order]
    assert costs == sorted(costs)
    assert len(set(costs)) == len(costs)
    assert parse_link("X").level is LinkLevel.SELF
    assert parse_link("SOC") == Link(LinkLevel.SYS)
    assert [parse_link(label).label for label in order] == order
    with pytest.raises(ValueError):
        parse_link("NVX")


def test_nvswitch_is_one_island() -> None:
    g = nvswitch(8)
    assert g.n == 8
    assert all(g.link(i, j).label == "NV18" for i in range(8) for j in range(8) if i != j)
    assert g.islands() == [tuple(range(8))]
    assert g.numa == (0, 0, 0, 0, 1, 1, 1, 1)


def test_nvlink_islands_and_pairs_and_pcie() -> None:
    two = nvlink_islands(8, 4)
    assert two.islands() == [(0, 1, 2, 3), (4, 5, 6, 7)]
    assert two.link(0, 4).level is LinkLevel.SYS
    assert two.islands(level=LinkLevel.SYS) == [tuple(range(8))]

    pairs = nvlink_pairs(8)
    assert pairs.islands() == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert pairs.link(1, 2).level is LinkLevel.NODE
    assert pairs.link(0, 7).level is LinkLevel.SYS

    plain = pcie(8, per_switch=2, per_numa=4)
    assert plain.islands() == [(i,) for i in range(8)]
    assert plain.islands(level=LinkLevel.PIX) == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert plain.islands(level=LinkLevel.NODE) == [(0, 1, 2, 3), (4, 5, 6, 7)]
    assert plain.worst_link([0, 1, 2]).level is LinkLevel.NODE
    assert plain.worst_link([0]).level is LinkLevel.SELF


def test_parse_dgx_h100_matrix() -> None:
    g = from_topo_matrix(DGX_H100)
    assert g.n == 8
    assert g.islands() == [tuple(range(8))]
    assert g.numa == (0, 0, 0, 0, 1, 1, 1, 1)
    assert len(g.nic_links) == 2
    assert g.nics_near([0]) == (0,)
    assert g.nics_near([5, 6]) == ()
    assert g.nics_near([4]) == (1,)
    assert from_topo_matrix(g.to_topo_matrix()) == g


def test_parse_legacy_pcie_matrix() -> None:
    g = from_topo_matrix(PCIE_4)
    assert g.link(0, 1).level is LinkLevel.PIX
    assert g.link(0, 2).level is LinkLevel.PHB
    assert g.link(2, 3).level is LinkLevel.SYS
    assert g.numa == ()


def test_parser_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        from_topo_matrix("nothing here")
    asymmetric = "GPU0 GPU1\nGPU0 X NV4\nGPU1 PIX X\n"
    with pytest.raises(ValueError):
        from_topo_matrix(asymmetric)


def test_graph_validation() -> None:
    with pytest.raises(ValueError):
        LinkGraph(((Link(LinkLevel.SELF), Link(LinkLevel.PIX)), (Link(LinkLevel.PIX),)))
    with pytest.raises(ValueError):
        Link(LinkLevel.PIX, 2)


def test_default_graphs_by_model() -> None:
    assert set(DEFAULT_LAYOUTS) >= {"H100-80GB", "A100-80GB", "L4", "T4", "RTX-4090"}
    h100 = default_graph("H100-80GB")
    assert h100.islands() == [tuple(range(8))]
    assert len(h100.nic_links) == 8
    assert default_graph("A100-80GB").link(0, 7).label == "NV12"
    assert default_graph("L4", 4).islands() == [(0,), (1,), (2,), (3,)]
    assert default_graph("unknown-model", 2).link(0, 1).level is LinkLevel.PIX
