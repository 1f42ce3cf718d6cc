"""kube-scheduler's resource-name rules from ``pkg/apis/core/v1/helper`` (Kubernetes v1.34.10):
``helpers_test.go`` TestIsNativeResource and TestIsOvercommitAllowed ported case by case, and
``IsExtendedResourceName`` (no upstream table) checked against its definition: not native, not a
``requests.`` quota name, and a qualified name once ``requests.`` is put before it."""

from __future__ import annotations

from typing import Any

import pytest
from builders import cases

from gpufleet.model.resources import is_extended, is_native, is_overcommittable, is_scalar

NATIVE: list[Any] = [
    (name, name, want)
    for name, want in [
        ("pod.alpha.kubernetes.io/opaque-int-resource-foo", True),
        ("kubernetes.io/resource-foo", True),
        ("foo", True),
        ("a/b", False),
        ("", True),
    ]
]


@pytest.mark.parametrize(("name", "want"), cases("TestIsNativeResource", NATIVE, 2))
def test_is_native_resource(name: str, want: bool) -> None:
    assert is_native(name) is want


OVERCOMMIT: list[Any] = [
    (name, name, want)
    for name, want in [
        ("pod.alpha.kubernetes.io/opaque-int-resource-foo", True),
        ("kubernetes.io/resource-foo", True),
        ("hugepages-100m", False),
        ("", True),
    ]
]


@pytest.mark.parametrize(("name", "want"), cases("TestIsOvercommitAllowed", OVERCOMMIT, 2))
def test_is_overcommit_allowed(name: str, want: bool) -> None:
    assert is_overcommittable(name) is want


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("nvidia.com/gpu", True, True),
        ("example.com/aaa", True, True),
        ("kubernetes.io/something", False, True),  # native: prefixed with kubernetes.io/
        ("subdomain.kubernetes.io/something", False, True),  # native: a kubernetes.io subdomain
        ("requests.nvidia.com/gpu", False, False),  # a quota name, not a resource
        ("example.com/bad name", False, False),  # not a qualified name
        ("Example.com/gpu", False, False),  # the prefix must be a lowercase DNS subdomain
        ("cpu", False, False),
        ("hugepages-2Mi", False, True),
        ("attachable-volumes-aws-ebs", False, True),
    ],
)
def test_extended_and_scalar_resource_names_follow_upstream(name: str, extended: bool, scalar: bool) -> None:
    """``v1helper.IsExtendedResourceName`` and ``schedutil.IsScalarResourceName``."""
    assert (is_extended(name), is_scalar(name)) == (extended, scalar)
