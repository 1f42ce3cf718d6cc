"""DRA CEL selectors: the device variable and Kubernetes' quantity/semver extensions."""

from __future__ import annotations

import itertools

import pytest

from gpufleet.gpus.dra.cel import (
    SelectorCompileError,
    SelectorRuntimeError,
    compile_selector,
    parse_semver,
)
from gpufleet.model.dra import Device, VersionValue

DRIVER = "gpu.nvidia.com"
H100 = Device(
    "gpu-0",
    {
        "productName": "NVIDIA H100 80GB HBM3",
        "index": 0,
        "migEnabled": False,
        "driverVersion": VersionValue("550.54.15"),
        "resource.kubernetes.io/pcieRoot": "pci0000:00",
    },
    {"memory": 80 * 2**30},
)


def matches(expression: str, device: Device = H100) -> bool:
    return compile_selector(expression).matches(device, DRIVER)


@pytest.mark.parametrize(
    "expression",
    [
        'device.driver == "gpu.nvidia.com"',
        'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"',
        'device.attributes["gpu.nvidia.com"].index == 0 && !device.attributes["gpu.nvidia.com"].migEnabled',
        'device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00"',
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0',
        'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("79Gi"))',
        'device.capacity["gpu.nvidia.com"].memory == quantity("80Gi")',
        'device.capacity["gpu.nvidia.com"].memory.asInteger() == 85899345920',
        'device.capacity["gpu.nvidia.com"].memory.sub(quantity("16Gi")).isLessThan(quantity("65Gi"))',
        'quantity("1.5").add(1).asApproximateFloat() == 2.5',
        'quantity("500m").sign() == 1 && !quantity("500m").isInteger()',
        'isQuantity("10Gi") && !isQuantity("10GB") && !isQuantity("x")',
        'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("535.0.0"))',
        'device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("550.54.15")) == 0',
        'device.attributes["gpu.nvidia.com"].driverVersion.major() == 550',
        'semver("1.2.3-rc.1").isLessThan(semver("1.2.3"))',
        'semver("v1.2", true) == semver("1.2.0") && isSemver("1.0.0") && !isSemver("1.0")',
        '"productName" in device.attributes["gpu.nvidia.com"]',
        'has(device.attributes["gpu.nvidia.com"].productName)',
        '!("model" in device.attributes["dra.example.com"])',
        'cel.bind(gpu, device.attributes["gpu.nvidia.com"], '
        'gpu.index == 0 && gpu.productName.startsWith("NVIDIA"))',
        "[1, 2].all(x, x > 0)",
    ],
)
def test_selectors_that_match(expression: str) -> None:
    assert matches(expression)


def test_selectors_that_do_not_match() -> None:
    assert not matches('device.driver == "dra.example.com"')
    assert not matches('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("96Gi")) >= 0')
    assert not matches('device.attributes["gpu.nvidia.com"].driverVersion.isLessThan(semver("550.0.0"))')


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ('device.driver == "gpu.nvidia.com" &&', "syntax error"),
        ('device.attributes["gpu.nvidia.com"].productName = "x"', "syntax error"),
        ('devce.driver == "gpu.nvidia.com"', "undeclared reference to 'devce'"),
        ('quantty("1Gi") == quantity("1Gi")', "undeclared reference to function 'quantty'"),
        ("", "empty"),
        ("true || " * 2000 + "true", "limit"),
    ],
)
def test_malformed_selectors_are_clear_errors(expression: str, fragment: str) -> None:
    with pytest.raises(SelectorCompileError, match=fragment):
        compile_selector(expression)


@pytest.mark.parametrize(
    "expression",
    [
        'device.attributes["gpu.nvidia.com"].model == "x"',  # unknown attribute: no such key
        'device.capacity["gpu.nvidia.com"].memory > quantity("1Gi")',  # quantities have no <, >
        'quantity("10GB") == quantity("1")',  # gpufleet byte units are not Kubernetes quantities
        'device.attributes["gpu.nvidia.com"].productName',  # not a bool
        'quantity("500m").asInteger() == 0',
    ],
)
def test_runtime_errors(expression: str) -> None:
    with pytest.raises(SelectorRuntimeError, match="CEL runtime error"):
        matches(expression)


def test_errors_are_absorbed_by_short_circuit_logic() -> None:
    assert matches('device.attributes["gpu.nvidia.com"].model == "x" || true')
    assert not matches('device.attributes["gpu.nvidia.com"].model == "x" && false')


def test_semver_precedence() -> None:
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "2.0.0",
        "2.1.0",
        "2.1.1",
    ]
    versions = [parse_semver(v) for v in ordered]
    for a, b in itertools.pairwise(versions):
        assert a.compare(b) < 0 and b.compare(a) > 0
    with pytest.raises(ValueError):
        parse_semver("01.2.3")


@pytest.mark.parametrize(
    "expression",
    ['device.attributes["gpu.nvidia.com"].healthy', 'device.attributes["gpu.nvidia.com"]["healthy"]'],
)
def test_a_missing_attribute_is_cel_gos_no_such_key(expression: str) -> None:
    """cel-go's words for a map without the key, which upstream's allocator wraps (``CEL runtime error:
    no such key: healthy``): the error's ``detail``; gpufleet's message adds the selector, the device and a
    hint."""
    with pytest.raises(SelectorRuntimeError) as raised:
        matches(expression)
    assert raised.value.detail == "no such key: healthy"
    assert "has() or 'in'" in str(raised.value)
