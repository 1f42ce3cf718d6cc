"""mig-parted's named configurations (``NVIDIA/mig-parted`` ``deployments/systemd/config-default.yaml``).

Every entry is ``devices: all``; ``all-<profile>`` is that profile at its per-GPU maximum, ``all-balanced``
two base 1g, one 2g and one 3g instance, ``all-disabled`` MIG off, ``all-enabled`` MIG on with no instance.
"""

from __future__ import annotations

import pytest

from gpufleet.model.gpu_catalog import CATALOG
from gpufleet.model.mig_configs import MigConfigError, MigManaged, config_layout, known_configs

H100 = CATALOG["H100-80GB"]


@pytest.mark.parametrize(
    ("model", "config", "instances"),
    [
        ("H100-80GB", "all-1g.10gb", {"1g.10gb": 7}),  # H100-80GB device filter: "1g.10gb": 7
        ("A100-40GB", "all-1g.10gb", {"1g.10gb": 4}),  # A100-40GB device filter: "1g.10gb": 4
        ("H100-80GB", "all-3g.40gb", {"3g.40gb": 2}),
        ("H100-80GB", "all-7g.80gb", {"7g.80gb": 1}),
        ("H100-80GB", "all-1g.10gb.me", {"1g.10gb+me": 1}),
        ("H200-141GB", "all-2g.35gb", {"2g.35gb": 3}),
        ("B200", "all-1g.45gb", {"1g.45gb": 4}),
        ("H100-80GB", "all-balanced", {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}),
        ("A100-40GB", "all-balanced", {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}),
        ("H200-141GB", "all-balanced", {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}),
        ("B200", "all-balanced", {"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1}),
    ],
)
def test_default_configs_give_each_gpu_the_mig_parted_instances(
    model: str, config: str, instances: dict[str, int]
) -> None:
    layout = config_layout(config, CATALOG[model])
    assert layout is not None
    assert {name: layout.count(name) for name in set(layout)} == instances


def test_all_disabled_is_whole_gpus_and_all_enabled_has_no_instance() -> None:
    assert config_layout("all-disabled", H100) is None
    assert config_layout("all-enabled", H100) == ()


def test_a_config_the_gpu_model_lacks_is_an_error_listing_the_known_ones() -> None:
    """``all-1g.5gb`` is an A100 40GB entry: an H100 has no 1g.5gb profile."""
    with pytest.raises(MigConfigError) as caught:
        config_layout("all-1g.5gb", H100)
    assert "all-1g.10gb" in str(caught.value) and "all-balanced" in str(caught.value)
    with pytest.raises(MigConfigError, match="not MIG-capable"):
        config_layout("all-disabled", CATALOG["L4"])
    assert "all-3g.40gb" in known_configs(H100) and "all-3g.20gb" not in known_configs(H100)


def test_device_plugin_resources_of_a_layout_follow_the_strategy() -> None:
    """k8s-device-plugin: mixed advertises nvidia.com/mig-<profile>; single counts them as nvidia.com/gpu."""
    mixed = MigManaged("H100-80GB", 2, "mixed", None)
    assert mixed.resources(config_layout("all-3g.40gb", H100)) == {"nvidia.com/mig-3g.40gb": 4}
    assert mixed.resources(None) == {"nvidia.com/gpu": 2}
    single = MigManaged("H100-80GB", 2, "single", None)
    assert single.resources(config_layout("all-1g.10gb", H100)) == {"nvidia.com/gpu": 14}
    labels = single.labels(config_layout("all-1g.10gb", H100), "all-1g.10gb")
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"
    assert labels["nvidia.com/mig.config"] == "all-1g.10gb"
