"""kube-scheduler v1.34.10 ``pkg/scheduler/apis/config/validation/validation_test.go``
(TestValidateKubeSchedulerConfigurationV1), ported case by case against gpufleet's reader of a
``KubeSchedulerConfiguration`` (``kube.scheduler_config``).

Upstream validates the internal config built in Go; gpufleet reads the v1 file, so each case is written as
the v1 body that gives it (``validConfig`` as YAML would hold it) and goes through v1 defaulting first: a
case only the internal config can express is skipped. Like upstream (``ignoreBadValueDetail``), the failing
field paths are compared. Upstream's validation leaves plugin names to ``NewFramework`` (which refuses a
name not in its registry); gpufleet's reader refuses unknown names itself, so the custom plugins of
upstream's configs (CustomSort, AnotherSort, CustomBind, and the plugin named "config") are registered for
the test.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from builders import Skip, cases, scheduler_config_errors

from gpufleet.scheduling import registry
from gpufleet.scheduling.framework import Bind, QueueSort

NO_EXTENDERS = (
    "scheduler extenders are not modelled by gpufleet (a configuration's extenders are only warned of)"
)
V1_DEFAULTED = (
    "not expressible in a v1 file: v1 defaulting fills an empty leaderElection.{field} "
    "(SetDefaults_KubeSchedulerConfiguration: kube-scheduler / kube-system) before validation"
)

VALID: dict[str, Any] = {
    "parallelism": 8,
    "clientConnection": {
        "acceptContentTypes": "application/json",
        "contentType": "application/json",
        "qps": 10,
        "burst": 10,
    },
    "leaderElection": {
        "resourceLock": "leases",
        "leaderElect": True,
        "leaseDuration": "30s",
        "renewDeadline": "15s",
        "retryPeriod": "5s",
        "resourceNamespace": "name",
        "resourceName": "name",
    },
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 1,
    "profiles": [
        {
            "schedulerName": "me",
            "percentageOfNodesToScore": 35,
            "plugins": {
                "queueSort": {"enabled": [{"name": "CustomSort"}]},
                "score": {"disabled": [{"name": "*"}]},
            },
            "pluginConfig": [
                {
                    "name": "DefaultPreemption",
                    "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
                }
            ],
        },
        {
            "schedulerName": "other",
            "percentageOfNodesToScore": 35,
            "plugins": {
                "queueSort": {"enabled": [{"name": "CustomSort"}]},
                "bind": {"enabled": [{"name": "CustomBind"}]},
            },
        },
    ],
    "extenders": [{"prioritizeVerb": "prioritize", "weight": 1}],
}

Edit = Callable[[dict[str, Any]], None]


def changed(edit: Edit) -> dict[str, Any]:
    """``validConfig.DeepCopy()`` with ``edit`` applied."""
    body = copy.deepcopy(VALID)
    edit(body)
    return body


def profile(i: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda body: body["profiles"][i]


def set_in(where: Callable[[dict[str, Any]], dict[str, Any]], **values: Any) -> Edit:
    return lambda body: where(body).update(values)


def top(body: dict[str, Any]) -> dict[str, Any]:
    return body


MISMATCH_QUEUE_SORT: Edit = set_in(
    top,
    profiles=[
        {
            "schedulerName": "me",
            "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
            "pluginConfig": [{"name": "PrioritySort"}],
        },
        {
            "schedulerName": "other",
            "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
            "pluginConfig": [{"name": "CustomSort"}],
        },
    ],
)
OLD_LIMITS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

# (name, edit of validConfig, the failing field paths)
SCENARIOS: list[Any] = [
    ("good", set_in(top), []),
    ("bad-parallelism-invalid-value", set_in(top, parallelism=0), ["parallelism"]),
    ("bad-resource-name-not-set", Skip(V1_DEFAULTED.format(field="resourceName"))),
    ("bad-resource-namespace-not-set", Skip(V1_DEFAULTED.format(field="resourceNamespace"))),
    (
        "bad-resource-lock-not-leases",
        set_in(lambda b: b["leaderElection"], resourceLock="configmap"),
        ["leaderElection.resourceLock"],
    ),
    (
        "bad-percentage-of-nodes-to-score",
        set_in(top, percentageOfNodesToScore=101),
        ["percentageOfNodesToScore"],
    ),
    (
        "negative-percentage-of-nodes-to-score",
        set_in(top, percentageOfNodesToScore=-1),
        ["percentageOfNodesToScore"],
    ),
    ("scheduler-name-not-set", set_in(profile(1), schedulerName=""), ["profiles[1].schedulerName"]),
    ("repeated-scheduler-name", set_in(profile(0), schedulerName="other"), ["profiles[1].schedulerName"]),
    (
        "greater-than-100-profile-percentage-of-nodes-to-score",
        set_in(profile(1), percentageOfNodesToScore=101),
        ["profiles[1].percentageOfNodesToScore"],
    ),
    (
        "negative-profile-percentage-of-nodes-to-score",
        set_in(profile(1), percentageOfNodesToScore=-1),
        ["profiles[1].percentageOfNodesToScore"],
    ),
    (
        "different-queue-sort",
        set_in(lambda b: b["profiles"][1]["plugins"]["queueSort"]["enabled"][0], name="AnotherSort"),
        ["profiles[1].plugins.queueSort"],
    ),
    ("one-empty-queue-sort", lambda b: b["profiles"][0].pop("plugins"), ["profiles[1].plugins.queueSort"]),
    ("extender-negative-weight", Skip(NO_EXTENDERS)),
    ("extender-duplicate-managed-resources", Skip(NO_EXTENDERS)),
    ("extender-duplicate-bind", Skip(NO_EXTENDERS)),
    (
        "invalid-node-percentage",
        set_in(
            profile(0),
            pluginConfig=[
                {
                    "name": "DefaultPreemption",
                    "args": {"minCandidateNodesPercentage": 200, "minCandidateNodesAbsolute": 100},
                }
            ],
        ),
        ["profiles[0].pluginConfig[0].args.minCandidateNodesPercentage"],
    ),
    (
        # upstream: the args object is an InterPodAffinityArgs, reported at ``args`` ("has to match plugin
        # args"); in a v1 file that is args whose ``kind`` is InterPodAffinityArgs, which gpufleet reports at
        # the kind itself
        "invalid-plugin-args",
        set_in(
            profile(0),
            pluginConfig=[
                {
                    "name": "DefaultPreemption",
                    "args": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "InterPodAffinityArgs"},
                }
            ],
        ),
        ["profiles[0].pluginConfig[0].args.kind"],
    ),
    (
        "duplicated-plugin-config",
        set_in(profile(0), pluginConfig=[{"name": "config"}, {"name": "config"}]),
        ["profiles[0].pluginConfig[1]"],
    ),
    ("mismatch-queue-sort", MISMATCH_QUEUE_SORT, ["profiles[1].plugins.queueSort"]),
    (
        "invalid-plugins",
        lambda b: b["profiles"][0]["plugins"]["score"].update(enabled=[{"name": n} for n in OLD_LIMITS]),
        [f"profiles[0].plugins.score.enabled[{i}]" for i in range(len(OLD_LIMITS))],
    ),
    (
        "valid-plugins",
        lambda b: b["profiles"][0]["plugins"]["score"].update(
            enabled=[{"name": "PodTopologySpread", "weight": 2}]
        ),
        [],
    ),
]


@pytest.fixture
def custom_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    known = registry.plugins()
    for name in ("CustomSort", "AnotherSort"):
        monkeypatch.setitem(known, name, type(name, (QueueSort,), {"name": name}))
    monkeypatch.setitem(known, "CustomBind", type("CustomBind", (Bind,), {"name": "CustomBind"}))
    monkeypatch.setitem(known, "config", type("ConfigPlugin", (Bind,), {"name": "config"}))
    yield


@pytest.mark.usefixtures("custom_plugins")
@pytest.mark.parametrize(("edit", "want"), cases("TestValidateKubeSchedulerConfigurationV1", SCENARIOS, 2))
def test_validate_kube_scheduler_configuration_v1(edit: Edit, want: list[str]) -> None:
    errors = scheduler_config_errors(changed(edit))
    assert [e.split(": ")[0] for e in errors] == want, errors
