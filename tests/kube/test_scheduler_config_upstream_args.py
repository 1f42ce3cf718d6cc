"""KubeSchedulerConfiguration plugin names and args as kube-scheduler 1.34.10 and scheduler-plugins
builds read them: another scheduler's plugin is named as not modelled (not as unknown), and the
NodeResourcesFit and NodeAffinity args gpufleet honours are validated (``ValidateNodeResourcesFitArgs``,
``ValidateNodeAffinityArgs``) and reach the plugins."""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import load, problems, warnings

from gpufleet.kube import load_scenario
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.scheduling import registry
from gpufleet.scheduling.plugins.node_affinity import NodeAffinity
from gpufleet.scheduling.plugins.node_resources_fit import NodeResourcesFit
from shared_files import UPSTREAM

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
LABEL = "scenario.yaml: document 1 (KubeSchedulerConfiguration)"
SHARED = UPSTREAM / "scheduler-plugins"


@pytest.mark.parametrize(
    "name",
    [
        "CapacityScheduling",
        "NodeResourcesAllocatable",
        "TargetLoadPacking",
        "NetworkOverhead",
        "TopologicalSort",
    ],
)
def test_a_scheduler_plugins_plugin_is_named_as_not_modelled(tmp_path: Path, name: str) -> None:
    text = HEADER + f"profiles:\n- plugins:\n    score:\n      enabled: [{{name: {name}}}]\n"
    assert warnings(tmp_path, text) == [
        f'{LABEL}: profiles[0].plugins.score.enabled[0].name: plugin "{name}" (scheduler-plugins) is not '
        "modelled; ignored"
    ]
    assert registry.known(name) and not registry.in_tree(name)


@pytest.mark.parametrize("name", ["CapacitySchedulingX", "binpack", "gang"])
def test_a_name_no_framework_scheduler_registers_is_still_an_error(tmp_path: Path, name: str) -> None:
    """kube-scheduler fails on a plugin missing from its registry; Volcano's and KAI's plugins
    (``binpack``, ``gang``) belong to their own schedulers' configurations, not to this one."""
    text = HEADER + f"profiles:\n- plugins:\n    score:\n      enabled: [{{name: {name}}}]\n"
    assert problems(tmp_path, text) == [
        f'{LABEL}: profiles[0].plugins.score.enabled[0].name: plugin "{name}" does not exist'
    ]


@pytest.mark.parametrize(
    ("example", "plugin"),
    [("capacityscheduling", "CapacityScheduling"), ("noderesources", "NodeResourcesAllocatable")],
)
def test_scheduler_plugins_published_configurations_load_with_a_warning(example: str, plugin: str) -> None:
    """scheduler-plugins' own example configurations (``../shared/upstream-manifests``)."""
    path = SHARED / example / "scheduler-config.yaml"
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    lines = load_scenario([path]).warnings
    assert any(f'plugin "{plugin}" (scheduler-plugins) is not modelled; ignored' in line for line in lines)


def test_ignored_resources_are_label_names_and_groups_have_no_slash(tmp_path: Path) -> None:
    """``ValidateNodeResourcesFitArgs``: ``ValidateLabelName`` for each, ``/`` refused in a group."""
    text = HEADER + (
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
        "      ignoredResources: [example.com/ok, 'bad name']\n"
        "      ignoredResourceGroups: [example.com, example.com/x]\n"
    )
    args = f"{LABEL}: profiles[0].pluginConfig[0].args"
    bad_name, bad_group = problems(tmp_path, text)
    assert bad_name.startswith(
        f'{args}.ignoredResources[1]: Invalid value: "bad name": name part must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
    )
    assert bad_group == f'{args}.ignoredResourceGroups[1]: Invalid value: "example.com/x": ' + (
        "resource group name can't contain '/'"
    )


def test_ignored_resources_reach_the_plugin(tmp_path: Path) -> None:
    text = HEADER + (
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
        "      ignoredResources: [example.com/foo]\n      ignoredResourceGroups: [vendor.io]\n"
    )
    (config,) = load(tmp_path, text).schedulers
    plugin = NodeResourcesFit.from_args(config.profiles[0].plugin_args["NodeResourcesFit"])
    assert (plugin.ignored, plugin.ignored_groups) == (
        frozenset({"example.com/foo"}),
        frozenset({"vendor.io"}),
    )


ADDED = (
    "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
    "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
    "          - matchExpressions: [{key: zone, operator: In, values: [%s]}]\n"
)


def test_node_affinity_added_affinity_reaches_the_plugin(tmp_path: Path) -> None:
    """``NodeAffinityArgs.addedAffinity``: every pod of the profile must also match it."""
    text = HEADER + ADDED % "a"
    assert warnings(tmp_path, text) == []
    (config,) = load(tmp_path, text).schedulers
    plugin = NodeAffinity.from_args(config.profiles[0].plugin_args["NodeAffinity"])
    pod = Pod("p")
    assert plugin.reject(pod, Node("n1", labels={"zone": "a"})) is None
    assert plugin.reject(pod, Node("n2", labels={"zone": "b"})) == (
        "node(s) didn't match scheduler-enforced node affinity"
    )


def test_node_affinity_added_affinity_must_parse(tmp_path: Path) -> None:
    """``ValidateNodeAffinityArgs``: ``NewNodeSelector`` refuses an invalid label value."""
    (line,) = problems(tmp_path, HEADER + ADDED % "'a b'")
    assert line.startswith(
        f"{LABEL}: profiles[0].pluginConfig[0].args.addedAffinity"
        ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        '.matchExpressions[0].values[0][zone]: Invalid value: "a b": a valid label must'
    )


PREEMPTION = "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {%s}\n"


def test_default_preemption_candidate_counts_are_validated(tmp_path: Path) -> None:
    """``ValidateDefaultPreemptionArgs``: a percentage in [0, 100], an absolute count not negative."""
    args = f"{LABEL}: profiles[0].pluginConfig[0].args"
    text = HEADER + PREEMPTION % "minCandidateNodesPercentage: 200, minCandidateNodesAbsolute: -1"
    assert problems(tmp_path, text) == [
        f"{args}.minCandidateNodesPercentage: Invalid value: 200: not in valid range [0, 100]",
        f"{args}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
    ]


def test_default_preemption_candidate_counts_may_not_both_be_zero(tmp_path: Path) -> None:
    """Both zero is refused; one of them zero, with the other defaulted (v1: 10 %, 100 nodes), is not."""
    args = f"{LABEL}: profiles[0].pluginConfig[0].args"
    text = HEADER + PREEMPTION % "minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0"
    assert problems(tmp_path, text) == [
        f"{args}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
        "minCandidateNodesAbsolute",
        f"{args}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
        "minCandidateNodesPercentage",
    ]
    assert warnings(tmp_path, HEADER + PREEMPTION % "minCandidateNodesPercentage: 0") == []
