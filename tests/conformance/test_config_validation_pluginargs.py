"""kube-scheduler v1.34.10 ``pkg/scheduler/apis/config/validation/validation_pluginargs_test.go``, the
tables of the plugins gpufleet models here: TestValidateDefaultPreemptionArgs,
TestValidateNodeResourcesBalancedAllocationArgs,
TestValidateNodeAffinityArgs, TestValidateFitArgs and TestValidate{LeastAllocated,MostAllocated,
RequestedToCapacityRatio}ScoringStrategy, ported case by case. Upstream validates the internal
config; gpufleet reads the v1 file, so the args go through v1 defaulting first (a zero weight becomes
1, no scoringStrategy becomes LeastAllocated): the cases only the internal config can express are
skipped. Like upstream (``ignoreBadValueDetail``), the checks compare the failing field paths."""

from __future__ import annotations

from typing import Any

import pytest
from builders import Skip, cases, plugin_args_errors

ZERO_WEIGHT = Skip("a v1 configuration defaults a zero weight to 1 (SetDefaults_NodeResourcesFitArgs)")


def fields(plugin: str, args: dict[str, Any]) -> list[str]:
    """The paths of the errors gpufleet reports for ``args``, from the args down."""
    return [line.split(": ")[0] for line in plugin_args_errors(plugin, args)]


def resources(*weights: tuple[str, int]) -> list[dict[str, Any]]:
    return [{"name": name, "weight": weight} for name, weight in weights]


def preemption(percentage: int, absolute: int) -> dict[str, Any]:
    return {"minCandidateNodesPercentage": percentage, "minCandidateNodesAbsolute": absolute}


PERCENTAGE, ABSOLUTE = "minCandidateNodesPercentage", "minCandidateNodesAbsolute"
DEFAULT_PREEMPTION: list[Any] = [
    ("valid args (default)", preemption(10, 100), []),
    ("negative minCandidateNodesPercentage", preemption(-1, 100), [PERCENTAGE]),
    ("minCandidateNodesPercentage over 100", preemption(900, 100), [PERCENTAGE]),
    ("negative minCandidateNodesAbsolute", preemption(20, -1), [ABSOLUTE]),
    ("all zero", preemption(0, 0), [PERCENTAGE, ABSOLUTE]),
    ("both negative", preemption(-1, -1), [PERCENTAGE, ABSOLUTE]),
]


@pytest.mark.parametrize(("args", "want"), cases("TestValidateDefaultPreemptionArgs", DEFAULT_PREEMPTION, 2))
def test_validate_default_preemption_args(args: dict[str, Any], want: list[str]) -> None:
    assert fields("DefaultPreemption", args) == want


BALANCED: list[Any] = [
    ("valid config", resources(("cpu", 1), ("memory", 1)), []),
    ("invalid config", resources(("cpu", 2), ("memory", 1)), ["resources[0].weight"]),
    ("repeated resources", resources(("cpu", 1), ("cpu", 1)), ["resources[1].name"]),
]


@pytest.mark.parametrize(
    ("resource_list", "want"), cases("TestValidateNodeResourcesBalancedAllocationArgs", BALANCED, 2)
)
def test_validate_balanced_allocation_args(resource_list: list[dict[str, Any]], want: list[str]) -> None:
    assert fields("NodeResourcesBalancedAllocation", {"resources": resource_list}) == want


def required_in(*expressions: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": list(expressions)}]}


def preferred_fields(*values: str) -> list[dict[str, Any]]:
    field = {"key": "metadata.name", "operator": "In", "values": list(values)}
    return [{"weight": 1, "preference": {"matchFields": [field]}}]


REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
NODE_AFFINITY: list[Any] = [
    ("empty", {}, []),
    (
        "valid added affinity",
        {
            "addedAffinity": {
                REQUIRED: required_in({"key": "label-1", "operator": "In", "values": ["label-1-val"]}),
                PREFERRED: preferred_fields("node-1"),
            }
        },
        [],
    ),
    (
        "invalid added affinity",
        {
            "addedAffinity": {
                REQUIRED: required_in(
                    {"key": "invalid/label/key", "operator": "In", "values": ["label-1-val"]}
                ),
                PREFERRED: preferred_fields("node-1", "node-2"),
            }
        },
        [
            f"addedAffinity.{REQUIRED}.nodeSelectorTerms[0].matchExpressions[0].key",
            f"addedAffinity.{PREFERRED}[0].matchFields[0].values",
        ],
    ),
]


@pytest.mark.parametrize(("args", "want"), cases("TestValidateNodeAffinityArgs", NODE_AFFINITY, 2))
def test_validate_node_affinity_args(args: dict[str, Any], want: list[str]) -> None:
    assert fields("NodeAffinity", args) == want


FIT: list[Any] = [
    (
        "IgnoredResources: too long value",
        {"ignoredResources": ["longvalue" + "a" * 64]},
        "name part must be no more than 63 characters",
    ),
    (
        "IgnoredResources: name is empty",
        {"ignoredResources": ["example.com/"]},
        "name part must be non-empty",
    ),
    (
        "IgnoredResources: name has too many slash",
        {"ignoredResources": ["example.com/aaa/bbb"]},
        "a qualified name must consist of alphanumeric characters",
    ),
    ("IgnoredResources: valid args", {"ignoredResources": ["example.com"]}, ""),
    ("IgnoredResourceGroups: valid args ", {"ignoredResourceGroups": ["example.com"]}, ""),
    (
        "IgnoredResourceGroups: illegal args",
        {"ignoredResourceGroups": ["example.com/"]},
        "name part must be non-empty",
    ),
    (
        "IgnoredResourceGroups: name is too long",
        {"ignoredResourceGroups": ["a" * 64]},
        "name part must be no more than 63 characters",
    ),
    (
        "IgnoredResourceGroups: name cannot be contain slash",
        {"ignoredResourceGroups": ["example.com/aa"]},
        "resource group name can't contain '/'",
    ),
    # v1 defaulting fills a missing scoringStrategy (upstream's check passes vacuously: no error)
    ("ScoringStrategy: field is required", {}, ""),
    (
        "ScoringStrategy: type is unsupported",
        {"scoringStrategy": {"type": "Invalid"}},
        'Unsupported value: "Invalid"',
    ),
]


@pytest.mark.parametrize(("args", "expect"), cases("TestValidateFitArgs", FIT, 2))
def test_validate_fit_args(args: dict[str, Any], expect: str) -> None:
    """Upstream's check: no error, or an error whose text includes ``expect``."""
    errors = plugin_args_errors("NodeResourcesFit", args)
    assert (expect in " ".join(errors)) if expect else errors == []


def strategy_cases(kind: str) -> list[Any]:
    return [
        ("default config", kind, None, []),
        ("multi valid resources", kind, resources(("cpu", 1), ("memory", 10)), []),
        ("weight less than min", ZERO_WEIGHT),
        ("weight greater than max", kind, resources(("cpu", 101)), ["scoringStrategy.resources[0].weight"]),
        ("multi invalid resources", ZERO_WEIGHT),
    ]


@pytest.mark.parametrize(
    ("kind", "resource_list", "want"),
    [
        *cases("TestValidateLeastAllocatedScoringStrategy", strategy_cases("LeastAllocated"), 3),
        *cases("TestValidateMostAllocatedScoringStrategy", strategy_cases("MostAllocated"), 3),
    ],
)
def test_validate_allocated_scoring_strategy(
    kind: str, resource_list: list[Any] | None, want: list[str]
) -> None:
    strategy: dict[str, Any] = {"type": kind, **({"resources": resource_list} if resource_list else {})}
    assert fields("NodeResourcesFit", {"scoringStrategy": strategy}) == want


def shape(*points: tuple[int, int]) -> list[dict[str, int]]:
    return [{"utilization": u, "score": s} for u, s in points]


DEFAULT_SHAPE = shape((30, 3))
RTCR: list[Any] = [
    ("no shapes", None, None, ["scoringStrategy.shape"]),
    (
        "weight greater than max",
        DEFAULT_SHAPE,
        resources(("cpu", 101)),
        ["scoringStrategy.resources[0].weight"],
    ),
    ("weight less than min", ZERO_WEIGHT),
    ("valid shapes", DEFAULT_SHAPE, None, []),
    ("utilization less than min", shape((-1, 3)), None, ["scoringStrategy.shape[0].utilization"]),
    ("utilization greater than max", shape((101, 3)), None, ["scoringStrategy.shape[0].utilization"]),
    (
        "duplicated utilization values",
        shape((10, 3), (10, 3)),
        None,
        ["scoringStrategy.shape[1].utilization"],
    ),
    ("increasing utilization values", shape((10, 3), (20, 3), (30, 3)), None, []),
    (
        "non-increasing utilization values",
        shape((10, 3), (20, 3), (15, 3)),
        None,
        ["scoringStrategy.shape[2].utilization"],
    ),
    ("score less than min", shape((10, -1)), None, ["scoringStrategy.shape[0].score"]),
    ("score greater than max", shape((10, 11)), None, ["scoringStrategy.shape[0].score"]),
]


@pytest.mark.parametrize(
    ("points", "resource_list", "want"), cases("TestValidateRequestedToCapacityRatioScoringStrategy", RTCR, 3)
)
def test_validate_requested_to_capacity_ratio_scoring_strategy(
    points: list[dict[str, int]] | None, resource_list: list[Any] | None, want: list[str]
) -> None:
    strategy: dict[str, Any] = {
        "type": "RequestedToCapacityRatio",
        "requestedToCapacityRatio": {"shape": points} if points is not None else {},
        **({"resources": resource_list} if resource_list else {}),
    }
    assert fields("NodeResourcesFit", {"scoringStrategy": strategy}) == want
