"""Bad input never escapes as anything but ``ScenarioError``; the fast schema check agrees with jsonschema."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_kube_full_scenario import SCENARIO as FULL_SCENARIO

from gpufleet.kube import ScenarioError, load_scenario, schema_check
from gpufleet.model.scenario import Scenario

SNAPSHOT = Path(__file__).parent / "data" / "kubectl-get-nodes-pods.json"

KINDS = [
    ("v1", "Pod"),
    ("v1", "Node"),
    ("batch/v1", "Job"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "DaemonSet"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"),
    ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"),
    ("gpufleet.io/v1alpha1", "Simulation"),
    ("gpufleet.io/v1alpha1", "NodePool"),
    ("v1", "List"),
    ("apps/v1", "Deploymnet"),
    ("v1", "Service"),
]
FIELDS = [
    "metadata",
    "spec",
    "status",
    "name",
    "namespace",
    "labels",
    "annotations",
    "containers",
    "initContainers",
    "resources",
    "requests",
    "limits",
    "cpu",
    "memory",
    "nvidia.com/gpu",
    "template",
    "selector",
    "matchLabels",
    "tolerations",
    "affinity",
    "nodeAffinity",
    "capacity",
    "allocatable",
    "taints",
    "items",
    "profiles",
    "plugins",
    "score",
    "enabled",
    "pluginConfig",
    "args",
    "scoringStrategy",
    "replicas",
    "parallelism",
    "completions",
    "minMember",
    "duration",
    "gpufleet.io/duration",
    "gpufleet.io/warmup",
    "priorityClassName",
    "value",
    "phase",
    "nodeName",
    "restartPolicy",
    "key",
    "operator",
    "values",
    "effect",
    "weight",
    "provisioning",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.sampled_from(
        ["500m", "1Gi", "0.5", "-1", "Always", "Never", "Exists", "NoSchedule", "90s", "10GB/s", "*"]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=5), inner, max_size=4),
    ),
    max_leaves=25,
)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    api_version, kind = draw(st.sampled_from(KINDS))
    document: dict[str, Any] = draw(st.dictionaries(st.sampled_from(FIELDS), values, max_size=5))
    if draw(st.booleans()):
        document.update(apiVersion=api_version, kind=kind)
    return document


def _outcome(path: Path) -> Scenario | ScenarioError:
    try:
        return load_scenario([path])
    except ScenarioError as exc:
        return exc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(documents(), min_size=1, max_size=3))
def test_random_documents_give_a_scenario_or_scenario_error(
    tmp_path: Path, docs: list[dict[str, Any]]
) -> None:
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    assert isinstance(_outcome(path), Scenario | ScenarioError)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"\n #%@`,?=.0123456789")), max_size=120))
def test_random_yaml_text_gives_a_scenario_or_scenario_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(text)
    assert isinstance(_outcome(path), Scenario | ScenarioError)


def _mutations(document: Any) -> st.SearchStrategy[Any]:
    """``document`` with one value somewhere replaced by another (or a field added)."""

    @st.composite
    def mutate(draw: st.DrawFn) -> Any:
        mutated = copy.deepcopy(document)
        node = mutated
        while True:
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            if not keys or draw(st.integers(0, 3)) == 0:
                break
            key = draw(st.sampled_from(keys))
            if not isinstance(node[key], dict | list) or not node[key]:
                node[key] = draw(values)
                return mutated
            node = node[key]
        if isinstance(node, dict):
            node[draw(st.sampled_from(FIELDS))] = draw(values)
        return mutated

    return mutate()


SNAPSHOT_ITEMS = json.loads(SNAPSHOT.read_text())["items"]
DEFINITIONS = {"Pod": "io.k8s.api.core.v1.Pod", "Node": "io.k8s.api.core.v1.Node"}


@st.composite
def mutated_objects(draw: st.DrawFn) -> tuple[str, Any]:
    item = draw(st.sampled_from(SNAPSHOT_ITEMS))
    return DEFINITIONS[item["kind"]], draw(_mutations(item))


@settings(max_examples=300, deadline=None)
@given(mutated_objects())
def test_fast_schema_check_agrees_with_jsonschema(case: tuple[str, Any]) -> None:
    definition, document = case
    fast = schema_check._fast_validator(definition)
    assert fast is not None
    assert fast(document) == (next(schema_check._validator(definition).iter_errors(document), None) is None)


SCENARIO_ITEMS = [*SNAPSHOT_ITEMS, *yaml.safe_load_all(FULL_SCENARIO)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SCENARIO_ITEMS).flatmap(_mutations))
def test_valid_objects_with_one_value_changed_give_a_scenario_or_scenario_error(
    tmp_path: Path, item: Any
) -> None:
    path = tmp_path / "mutated.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [item]}))
    assert isinstance(_outcome(path), Scenario | ScenarioError)


def test_thousands_of_pods_load_each_one(tmp_path: Path) -> None:
    """A snapshot of 2,000 pods loads whole (its speed is a benchmark's, never a test's)."""
    pod = next(
        item for item in SNAPSHOT_ITEMS if item["kind"] == "Pod" and item["status"]["phase"] == "Running"
    )
    items = [copy.deepcopy(pod) for _ in range(2000)]
    for i, item in enumerate(items):
        item["metadata"]["name"] = f"vllm-{i}"
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    scenario = load_scenario([path])
    assert sorted(p.pod.name for p in scenario.pods) == sorted(f"vllm-{i}" for i in range(2000))


def test_yaml_and_json_of_the_same_objects_load_alike(tmp_path: Path) -> None:
    as_yaml = tmp_path / "snapshot.yaml"
    as_yaml.write_text(yaml.safe_dump(json.loads(SNAPSHOT.read_text())))
    from_yaml, from_json = load_scenario([as_yaml]), load_scenario([SNAPSHOT])
    assert [p.pod for p in from_yaml.pods] == [p.pod for p in from_json.pods]
    assert from_yaml.nodes == from_json.nodes


def test_documents_nested_deeper_than_python_recurses_are_problems(tmp_path: Path) -> None:
    # args nested deeper than Python's recursion limit, whatever an import has set it to; written
    # as text, since json.dumps itself could not recurse that deep
    depth = sys.getrecursionlimit() + 100
    args = '{"a": ' * depth + "{}" + "}" * depth
    config = (
        '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "bogus": 1, '
        '"profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": ' + args + "}]}]}"
    )
    path = tmp_path / "deep.json"
    path.write_text(config)
    outcome = _outcome(path)
    assert isinstance(outcome, ScenarioError)
    # read by the JSON parser or by the loader, it is one clear problem line, never a crash
    assert any("deep.json: document 1" in p and "nested too deeply" in p for p in outcome.problems), (
        outcome.problems
    )

    path.write_text("[" * 100_000 + "]" * 100_000)
    assert _outcome(path).problems == [f"{path}: document 1: invalid JSON: nested too deeply"]  # type: ignore[union-attr]
