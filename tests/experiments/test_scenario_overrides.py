"""Scenario parameters (``KIND[/[NAMESPACE/]NAME].field.path``) set in the parsed YAML before
loading, so the loader still checks the overridden field as it checks the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufleet.experiments.overrides import OverrideError, apply, check, editor, parse_path
from gpufleet.kube import Document, Problems, ScenarioError, load_scenario, read_documents
from gpufleet.kube.problems import Location

POOL = """apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: %s}
spec:
  max: 4
  template:
    status:
      capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}
"""
SIMULATION = "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nspec: {duration: 10m}\n"


def docs(*bodies: dict[str, object]) -> list[Document]:
    return [Document(Location("s.yaml", 0, i + 1), i, body) for i, body in enumerate(bodies)]


def scenario_file(tmp_path: Path, *texts: str) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join(texts))
    return path


def test_field_paths_take_indexes_and_quoted_keys_with_dots() -> None:
    assert parse_path('spec.template.metadata.annotations["gpufleet.io/warmup"]') == (
        "spec",
        "template",
        "metadata",
        "annotations",
        "gpufleet.io/warmup",
    )
    assert parse_path("profiles[0].pluginConfig[1].args['a.b']") == (
        "profiles",
        0,
        "pluginConfig",
        1,
        "args",
        "a.b",
    )
    for bad in ("", "spec..x", "spec[x]", 'spec["open'):
        with pytest.raises(OverrideError):
            parse_path(bad)


def test_a_parameter_names_the_document_by_kind_and_name_even_with_dots_in_the_name() -> None:
    documents = docs(
        {"kind": "NodePool", "metadata": {"name": "a10"}, "spec": {"warm": 0}},
        {"kind": "NodePool", "metadata": {"name": "a10.big"}, "spec": {"warm": 0}},
        {"kind": "Simulation", "spec": {}},
    )
    apply([("NodePool/a10.big.spec.warm", 2), ("NodePool/a10.spec.warm", 1)], documents)
    apply([("Simulation.spec.autoscaler.scaleDownUnneededTime", "2m")], documents)  # created on the way
    assert documents[0].body["spec"]["warm"] == 1 and documents[1].body["spec"]["warm"] == 2
    assert documents[2].body["spec"] == {"autoscaler": {"scaleDownUnneededTime": "2m"}}


def test_a_name_in_two_namespaces_needs_the_namespace() -> None:
    documents = docs(
        {"kind": "Deployment", "metadata": {"name": "web", "namespace": "a"}, "spec": {"replicas": 1}},
        {"kind": "Deployment", "metadata": {"name": "web", "namespace": "b"}, "spec": {"replicas": 1}},
    )
    with pytest.raises(OverrideError, match=r"2 documents match \(Deployment/a/web, Deployment/b/web\)"):
        apply([("Deployment/web.spec.replicas", 3)], documents)
    apply([("Deployment/b/web.spec.replicas", 3)], documents)
    assert [d.body["spec"]["replicas"] for d in documents] == [1, 3]


def test_a_path_that_cannot_be_followed_says_why_for_each_parameter() -> None:
    documents = docs(
        {"kind": "NodePool", "metadata": {"name": "a10"}, "spec": {"max": 4, "taints": []}},
        {"kind": "Simulation", "metadata": {"name": "one"}, "spec": {}},
        {"kind": "Simulation", "metadata": {"name": "two"}, "spec": {}},
    )
    assert check(
        [
            ("NodePool/h100.spec.warm", [1]),
            ("NodePool/a10.spec.max.value", [1]),
            ("NodePool/a10.spec.taints[0].key", ["x"]),
            ("NodePool/a10.spec.warm", [0, 1]),
            ("Simulation.spec.seed", [1]),
            ("Deployment/web.spec.replicas", [1]),
        ],
        documents,
    ) == [
        "NodePool/h100.spec.warm: no NodePool named 'h100' (NodePools: a10)",
        "NodePool/a10.spec.max.value: spec.max is not a mapping",
        "NodePool/a10.spec.taints[0].key: spec.taints[0]: no such item (spec.taints has 0)",
        "Simulation.spec.seed: the scenario has 2 of kind Simulation; name one as Simulation/NAME "
        "(Simulations: one, two)",
        "Deployment/web.spec.replicas: the scenario has no Deployment",
    ]
    assert documents[0].body["spec"] == {"max": 4, "taints": []}  # checking changes nothing


def test_an_overridden_field_is_checked_by_the_loader_as_if_written_in_the_file(tmp_path: Path) -> None:
    path = scenario_file(tmp_path, POOL % "a10", SIMULATION)
    scenario = load_scenario([path], edit=editor([("NodePool/a10.spec.warm", 2)]))
    assert scenario.node_pools[0].warm == 2
    with pytest.raises(ScenarioError) as bad:
        load_scenario([path], edit=editor([("NodePool/a10.spec.warmNodes", 2)]))
    assert bad.value.problems == [
        f"{path}: document 1 (NodePool/a10): spec.warmNodes: "
        "Additional properties are not allowed ('warmNodes' was unexpected)"
    ]
    documents, _ = read_documents([path], Problems())
    assert "warm" not in documents[0].body["spec"]  # the file itself is never changed
