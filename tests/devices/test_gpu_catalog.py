"""The GPU catalog and its lookups (catalog keys, GFD product strings, Alibaba trace names)."""

from __future__ import annotations

import pytest

from gpufleet.model.gpu_catalog import CATALOG, TRACE_NAMES, GpuModel, lookup

ISSUE_MODELS = ("T4", "L4", "A10", "A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "B200", "RTX-4090")


@pytest.mark.parametrize("name", ISSUE_MODELS)
def test_issue_models_are_complete(name):
    model = CATALOG[name]
    assert not model.trace_model
    assert model.memory_mib and model.memory_bytes == model.memory_mib * 2**20
    assert model.interconnect in ("nvlink", "pcie")
    assert (model.nvlink_gbytes_per_s is not None) == (model.interconnect == "nvlink")
    assert model.default_price_per_hour and model.default_price_per_hour > 0
    assert model.family and model.compute_major is not None and model.compute_minor is not None


def test_memory_and_products():
    h100 = CATALOG["H100-80GB"]
    assert (h100.product, h100.memory_mib, h100.family) == ("NVIDIA-H100-80GB-HBM3", 81559, "hopper")
    assert (h100.compute_major, h100.compute_minor) == (9, 0)
    assert CATALOG["A100-40GB"].memory_mib == 40960
    assert CATALOG["A100-80GB"].memory_mib == 81920
    assert CATALOG["H200-141GB"].memory_mib == 143771
    assert CATALOG["T4"].product == "Tesla-T4"
    assert CATALOG["L4"].family == "ada-lovelace"
    assert CATALOG["B200"].compute_major == 10


def test_mig_capability():
    capable = {name for name, m in CATALOG.items() if m.mig_capable}
    assert capable == {"A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "B200"}
    assert CATALOG["H100-80GB"].mig_profiles == CATALOG["A100-80GB"].mig_profiles


def test_catalog_prices_order_by_capability():
    price = {name: CATALOG[name].default_price_per_hour or 0.0 for name in ISSUE_MODELS}
    assert price["T4"] < price["A10"] < price["A100-40GB"] < price["A100-80GB"] < price["H100-80GB"]
    assert price["H100-80GB"] < price["H200-141GB"] < price["B200"]


@pytest.mark.parametrize(
    ("query", "key"),
    [
        ("H100-80GB", "H100-80GB"),
        ("NVIDIA-H100-80GB-HBM3", "H100-80GB"),
        ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "H100-80GB"),
        ("NVIDIA-H100-80GB-HBM3-SHARED", "H100-80GB"),
        ("A100-SXM4-40GB-MIG-1g.5gb-SHARED", "A100-40GB"),
        ("NVIDIA-A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA-H200", "H200-141GB"),
        ("Tesla-T4", "T4"),
        ("NVIDIA-GeForce-RTX-4090", "RTX-4090"),
        ("T4", "T4"),
        ("P100", "P100"),
        ("V100M16", "V100-16GB"),
        ("V100M32", "V100-32GB"),
        ("A10", "A10"),
        ("G2", "G2"),
        ("G3", "G3"),
    ],
)
def test_lookup(query, key):
    assert lookup(query) is CATALOG[key]


def test_trace_names_all_resolve():
    assert set(TRACE_NAMES) == {"T4", "P100", "V100M16", "V100M32", "A10", "G2", "G3"}
    for name in TRACE_NAMES:
        assert isinstance(lookup(name), GpuModel)


def test_undisclosed_trace_models():
    for name in ("G2", "G3"):
        model = lookup(name)
        assert model.trace_model
        assert model.memory_mib is None and model.memory_bytes is None
        assert model.interconnect is None and model.default_price_per_hour is None
        assert not model.mig_capable
    assert lookup("V100M32").memory_gb == 32 and not lookup("V100M32").trace_model


def test_lookup_unknown_lists_known_names():
    with pytest.raises(KeyError, match=r"known: .*H100-80GB.*V100M16"):
        lookup("MI300X")
