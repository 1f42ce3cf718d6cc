"""GFD node labels and allocatable capacity for pools declared by GPU model."""

from __future__ import annotations

import pytest

from gpufleet.model.gfd_labels import gfd_labels, node_capacity
from gpufleet.model.gpu_catalog import CATALOG, lookup
from gpufleet.model.mig import MigLayoutError

H100 = CATALOG["H100-80GB"]
A100_40 = CATALOG["A100-40GB"]
GI = 2**30


def test_eight_h100_node():
    assert gfd_labels(H100, 8) == {
        "nvidia.com/gpu.compute.major": "9",
        "nvidia.com/gpu.compute.minor": "0",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.family": "hopper",
        "nvidia.com/gpu.memory": "81559",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "true",
    }


def test_labels_round_trip_through_lookup():
    for model in CATALOG.values():
        if model.trace_model:
            continue
        labels = gfd_labels(model, 1)
        assert lookup(labels["nvidia.com/gpu.product"]) is model


def test_single_strategy_rewrites_product_count_memory():
    labels = gfd_labels(H100, 8, "single", ["1g.10gb"] * 7)
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"
    assert labels["nvidia.com/gpu.count"] == "56"
    assert labels["nvidia.com/gpu.memory"] == "10240"
    assert labels["nvidia.com/gpu.slices.gi"] == "1"
    assert labels["nvidia.com/mig.strategy"] == "single"
    # GFD README example: 8 x A100-40GB in 7 x 1g.5gb -> count 56, memory 5120
    readme = gfd_labels(A100_40, 8, "single", ["1g.5gb"] * 7)
    assert readme["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"
    assert (readme["nvidia.com/gpu.count"], readme["nvidia.com/gpu.memory"]) == ("56", "5120")


def test_mixed_strategy_adds_per_profile_labels():
    labels = gfd_labels(A100_40, 2, "mixed", ["3g.20gb", "3g.20gb"])
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB"
    assert labels["nvidia.com/gpu.count"] == "2"
    assert labels["nvidia.com/mig-3g.20gb.count"] == "4"
    assert labels["nvidia.com/mig-3g.20gb.memory"] == "20480"
    assert labels["nvidia.com/mig-3g.20gb.slices.gi"] == "3"
    assert labels["nvidia.com/mig.strategy"] == "mixed"


def test_time_slicing_labels():
    t4 = gfd_labels(CATALOG["T4"], 1, sharing=10)
    assert t4["nvidia.com/gpu.product"] == "Tesla-T4-SHARED"
    assert t4["nvidia.com/gpu.replicas"] == "10"
    assert t4["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    assert t4["nvidia.com/gpu.count"] == "1"
    assert t4["nvidia.com/mig.capable"] == "false"
    mig = gfd_labels(A100_40, 1, "single", ["1g.5gb"] * 7, sharing=2)
    assert mig["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"
    renamed = gfd_labels(CATALOG["T4"], 1, sharing=4, rename_by_default=True)
    assert renamed["nvidia.com/gpu.product"] == "Tesla-T4"


def test_trace_model_labels_skip_unknowns():
    labels = gfd_labels(lookup("G2"), 8)
    assert labels["nvidia.com/gpu.product"] == "G2"
    assert labels["nvidia.com/gpu.count"] == "8"
    for unknown in ("gpu.memory", "gpu.family", "gpu.compute.major", "mig.capable"):
        assert "nvidia.com/" + unknown not in labels


def test_label_errors():
    with pytest.raises(MigLayoutError):
        gfd_labels(H100, 1, "mixed", ["4g.40gb", "4g.40gb"])
    with pytest.raises(MigLayoutError, match="one profile"):
        gfd_labels(H100, 1, "single", ["3g.40gb", "4g.40gb"])
    with pytest.raises(ValueError, match="not MIG-capable"):
        gfd_labels(CATALOG["L4"], 1, "mixed", ["1g.10gb"])
    with pytest.raises(ValueError, match="needs mig_strategy"):
        gfd_labels(H100, 1, "none", ["1g.10gb"])


def test_node_capacity_for_pools_declared_by_model():
    whole = node_capacity(H100, 8, 192_000, 2048 * GI)
    assert whole == {"cpu": 192_000, "memory": 2048 * GI, "pods": 110, "nvidia.com/gpu": 8}
    mixed = node_capacity(H100, 1, 16_000, 64 * GI, mig_strategy="mixed", mig_layout=["1g.10gb"] * 7)
    assert mixed["nvidia.com/mig-1g.10gb"] == 7 and "nvidia.com/gpu" not in mixed
    single = node_capacity(H100, 1, 16_000, 64 * GI, mig_strategy="single", mig_layout=["1g.10gb"] * 7)
    assert single["nvidia.com/gpu"] == 7
    balanced = node_capacity(
        H100,
        8,
        192_000,
        2048 * GI,
        mig_strategy="mixed",
        mig_layout=["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"],
    )
    assert balanced["nvidia.com/mig-1g.10gb"] == 16
    assert balanced["nvidia.com/mig-2g.20gb"] == 8
    assert balanced["nvidia.com/mig-3g.40gb"] == 8
    shared = node_capacity(CATALOG["T4"], 4, 32_000, 128 * GI, replicas=4)
    assert shared["nvidia.com/gpu"] == 16
    assert node_capacity(H100, 0, 4000, 16 * GI) == {"cpu": 4000, "memory": 16 * GI, "pods": 110}
