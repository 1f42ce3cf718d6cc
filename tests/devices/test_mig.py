"""MIG placement, assignment and device-plugin resources (placements from ``nvidia-smi mig -lgipp``)."""

from __future__ import annotations

import itertools

import pytest

from gpufleet.model.gpu_catalog import CATALOG, lookup
from gpufleet.model.mig import (
    COMPUTE_SLICES,
    MEMORY_SLICES,
    MigLayoutError,
    advertised_resources,
    assign,
    fits,
    gpu_equivalent,
)

A100_40 = CATALOG["A100-40GB"]
A100_80 = CATALOG["A100-80GB"]
H100 = CATALOG["H100-80GB"]
H200 = CATALOG["H200-141GB"]
B200 = CATALOG["B200"]

SEED_004_7B_BF16_BYTES = 14 * 10**9


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (A100_40, {"1g.5gb": 7, "1g.10gb": 4, "2g.10gb": 3, "3g.20gb": 2, "4g.20gb": 1, "7g.40gb": 1}),
        (A100_80, {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1}),
        (H100, {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1}),
        (H200, {"1g.18gb": 7, "1g.35gb": 4, "2g.35gb": 3, "3g.71gb": 2, "4g.71gb": 1, "7g.141gb": 1}),
        (B200, {"1g.23gb": 7, "1g.45gb": 4, "2g.45gb": 3, "3g.90gb": 2, "4g.90gb": 1, "7g.180gb": 1}),
    ],
)
def test_mig_parted_homogeneous_limits(model, expected):
    for name, limit in expected.items():
        profile = model.mig_profile(name)
        assert profile.max_instances == limit
        assert fits([name] * limit, model), name
        assert not fits([name] * (limit + 1), model), name


def test_profile_shapes_a100_40gb():
    shapes = {
        p.name: (p.compute_slices, p.memory_slices, p.memory_bytes, p.placements)
        for p in A100_40.mig_profiles
    }
    assert shapes == {
        "1g.5gb": (1, 1, 5 * 10**9, (0, 1, 2, 3, 4, 5, 6)),
        "1g.5gb+me": (1, 1, 5 * 10**9, (0, 1, 2, 3, 4, 5, 6)),
        "1g.10gb": (1, 2, 10 * 10**9, (0, 2, 4, 6)),
        "2g.10gb": (2, 2, 10 * 10**9, (0, 2, 4)),
        "3g.20gb": (3, 4, 20 * 10**9, (0, 4)),
        "4g.20gb": (4, 4, 20 * 10**9, (0,)),
        "7g.40gb": (7, 8, 40 * 10**9, (0,)),
    }


@pytest.mark.parametrize(
    ("layout", "ok"),
    [
        (["3g.20gb", "3g.20gb"], True),
        (["4g.20gb", "3g.20gb"], True),
        (["3g.20gb", "4g.20gb"], True),  # order of the request does not matter
        (["4g.20gb", "4g.20gb"], False),
        (["1g.5gb"] * 7, True),
        (["2g.10gb"] * 3 + ["1g.5gb"], True),
        (["2g.10gb"] * 3 + ["1g.5gb"] * 2, False),  # 8 compute slices
        (["1g.10gb"] * 4, True),
        (["2g.10gb", "2g.10gb", "3g.20gb"], True),
        (["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"], True),  # mig-parted all-balanced
        (["4g.20gb", "2g.10gb", "1g.5gb"], True),
        (["4g.20gb", "1g.10gb", "1g.10gb"], True),
        (["4g.20gb", "2g.10gb", "1g.10gb"], True),  # 1g.10gb at slot 6 (memory 6-7)
        (["4g.20gb", "2g.10gb", "2g.10gb"], False),  # 2g placements are 0, 2, 4 only
        (["3g.20gb", "2g.10gb", "2g.10gb"], True),
        (["3g.20gb", "3g.20gb", "1g.5gb"], False),  # memory fully used by the two 3g
        (["7g.40gb"], True),
        (["7g.40gb", "1g.5gb"], False),
        (["1g.10gb"] * 3 + ["1g.5gb"] * 2, True),
        (["1g.10gb"] * 4 + ["1g.5gb"], False),
        (["1g.5gb+me", "1g.5gb+me"], False),  # one media-extension instance per GPU
        (["1g.5gb+me"] + ["1g.5gb"] * 6, True),
        ([], True),
    ],
)
def test_a100_40gb_coexistence(layout, ok):
    assert fits(layout, A100_40) is ok


def test_h100_coexistence():
    assert fits(["1g.10gb"] * 7, H100)
    assert not fits(["1g.10gb"] * 7 + ["1g.20gb"], H100)
    assert fits(["3g.40gb", "4g.40gb"], H100)
    assert fits(["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"], H100)
    assert not fits(["4g.40gb", "4g.40gb"], H100)
    assert fits(["1g.20gb"] * 3 + ["1g.10gb"], H100)


def test_assign_examples():
    got = [(p.profile.name, p.start) for p in assign(["1g.5gb", "3g.20gb", "2g.10gb", "1g.5gb"], A100_40)]
    # largest first at the lowest free slot; 1g.5gb cannot start at 7, so 3g goes to 4 after backtracking
    assert got == [("2g.10gb", 0), ("1g.5gb", 2), ("1g.5gb", 3), ("3g.20gb", 4)]
    assert got == [
        (p.profile.name, p.start) for p in assign(["2g.10gb", "1g.5gb", "1g.5gb", "3g.20gb"], A100_40)
    ]
    got = [(p.profile.name, p.start) for p in assign(["3g.20gb", "4g.20gb"], A100_40)]
    assert got == [("4g.20gb", 0), ("3g.20gb", 4)]
    got = [(p.profile.name, p.start) for p in assign(["2g.10gb"] * 3 + ["1g.5gb"], A100_40)]
    assert got == [("2g.10gb", 0), ("2g.10gb", 2), ("2g.10gb", 4), ("1g.5gb", 6)]


def test_assigned_slices_never_overlap():
    names = [p.name for p in A100_40.mig_profiles]
    for size in range(1, 5):
        for layout in itertools.combinations_with_replacement(names, size):
            if not fits(layout, A100_40):
                continue
            placements = assign(layout, A100_40)
            memory = [s for p in placements for s in p.memory_slices]
            compute = [s for p in placements for s in p.compute_slices]
            assert len(memory) == len(set(memory)) and max(memory) < MEMORY_SLICES
            assert len(compute) == len(set(compute)) and max(compute) < COMPUTE_SLICES
            for p in placements:
                assert p.start in p.profile.placements


def test_assign_errors():
    with pytest.raises(MigLayoutError):
        assign(["4g.20gb", "4g.20gb"], A100_40)
    with pytest.raises(KeyError, match=r"1g\.10gb"):
        assign(["1g.20gb"], A100_40)  # an 80GB profile name on a 40GB card
    with pytest.raises(KeyError, match="not MIG-capable"):
        assign(["1g.5gb"], CATALOG["T4"])


def test_gpu_equivalent():
    assert gpu_equivalent(H100.mig_profile("1g.10gb")) == pytest.approx(1 / 7)
    assert gpu_equivalent(H100.mig_profile("1g.20gb")) == pytest.approx(1 / 7)
    assert gpu_equivalent(H100.mig_profile("3g.40gb")) == pytest.approx(3 / 7)
    assert gpu_equivalent(H100.mig_profile("7g.80gb")) == 1.0


def test_seed_004_7b_bf16_fits_1g_20gb_not_1g_10gb():
    """14e9 bytes of BF16 weights: not in 1g.10gb; in 1g.20gb (nominal 20e9 bytes) with about 6 GB left."""
    small = H100.mig_profile("1g.10gb")
    large = H100.mig_profile("1g.20gb")
    assert small.memory_bytes < SEED_004_7B_BF16_BYTES
    assert large.memory_bytes >= SEED_004_7B_BF16_BYTES
    left = large.memory_bytes - SEED_004_7B_BF16_BYTES
    assert left == pytest.approx(6e9, rel=0.05)
    # the smallest H100 profile that holds it
    holds = [p.name for p in H100.mig_profiles if p.memory_bytes >= SEED_004_7B_BF16_BYTES]
    assert holds[0] == "1g.20gb"


def test_issue_acceptance_h100_seven_1g10gb():
    layouts = [["1g.10gb"] * 7]
    assert advertised_resources(layouts, "mixed", H100) == {"nvidia.com/mig-1g.10gb": 7}
    assert advertised_resources(layouts, "single", H100) == {"nvidia.com/gpu": 7}
    assert advertised_resources(layouts, "none", H100) == {"nvidia.com/gpu": 1}


def test_advertised_resources_strategies():
    eight = [["1g.10gb"] * 7] * 8
    assert advertised_resources(eight, "single", H100) == {"nvidia.com/gpu": 56}
    mixed = [["3g.40gb", "4g.40gb"], ["1g.10gb"] * 7, None]
    assert advertised_resources(mixed, "mixed", H100) == {
        "nvidia.com/gpu": 1,
        "nvidia.com/mig-1g.10gb": 7,
        "nvidia.com/mig-3g.40gb": 1,
        "nvidia.com/mig-4g.40gb": 1,
    }
    with pytest.raises(MigLayoutError, match="one profile"):
        advertised_resources(mixed[:2], "single", H100)
    with pytest.raises(MigLayoutError, match="all MIG-enabled"):
        advertised_resources([["1g.10gb"], None], "single", H100)
    assert advertised_resources([None, None], "single", H100) == {"nvidia.com/gpu": 2}
    with pytest.raises(MigLayoutError):
        advertised_resources([["4g.40gb", "4g.40gb"]], "mixed", H100)
    with pytest.raises(ValueError, match="strategy"):
        advertised_resources([None], "auto", H100)  # type: ignore[arg-type]


def test_advertised_resources_time_slicing():
    assert advertised_resources([None] * 2, "none", replicas=4) == {"nvidia.com/gpu": 8}
    assert advertised_resources([None] * 2, "none", replicas=4, rename_by_default=True) == {
        "nvidia.com/gpu.shared": 8
    }
    assert advertised_resources([["1g.10gb"] * 7], "mixed", H100, replicas=2) == {
        "nvidia.com/mig-1g.10gb": 14
    }


def test_mig_profile_accepts_resource_and_smi_spellings():
    assert H100.mig_profile("mig-1g.10gb") is H100.mig_profile("1g.10gb")
    assert H100.mig_profile("MIG 1g.10gb") is H100.mig_profile("1g.10gb")
    assert lookup("H100-80GB").mig_profile("7g.80gb").resource_name == "nvidia.com/mig-7g.80gb"
