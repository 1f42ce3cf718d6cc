"""``--select`` / ``--namespace``: kubectl's label selector syntax (apimachinery ``labels.Parse``),
which pods a selection picks, and a sweep telling runs of different selections apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufleet.experiments.scenario_runs import ScenarioSpec
from gpufleet.experiments.sweep import pending_runs
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_selection import SelectorError, parse_label_selector, pod_selection


@pytest.mark.parametrize(
    ("text", "requirements"),
    [
        ("app=vllm", [Requirement("app", "In", ("vllm",))]),
        ("app==vllm", [Requirement("app", "In", ("vllm",))]),
        (
            "tier in (a, b),!canary",
            [Requirement("tier", "In", ("a", "b")), Requirement("canary", "DoesNotExist")],
        ),
        ("tier notin (a),gpu", [Requirement("tier", "NotIn", ("a",)), Requirement("gpu", "Exists")]),
        ("app!=vllm", [Requirement("app", "NotIn", ("vllm",))]),
        ("replicas>2", [Requirement("replicas", "Gt", ("2",))]),
        ("example.com/team=ml", [Requirement("example.com/team", "In", ("ml",))]),
        ("", []),
    ],
)
def test_kubectl_selector_syntax_parses_to_requirements(text: str, requirements: list[Requirement]) -> None:
    assert list(parse_label_selector(text)) == requirements


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tier in a", "unable to parse requirement: found 'a', expected: '('"),
        ("!", "unable to parse requirement: found '', expected: identifier after '!'"),
        (
            "replicas>two",
            "values[0]: Invalid value: \"two\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        ("-bad=x", 'key: Invalid value: "-bad"'),
    ],
)
def test_a_selector_that_does_not_parse_says_what_was_found(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as raised:
        parse_label_selector(text)
    assert message in str(raised.value)


def test_a_selection_picks_pods_by_namespace_and_labels() -> None:
    selection = pod_selection("app=vllm,!canary", "serving")
    assert selection is not None and selection.text == "namespace serving, app=vllm,!canary"
    assert selection.selects(Pod("vllm-0", "serving", labels={"app": "vllm"}))
    assert not selection.selects(Pod("vllm-1", "serving", labels={"app": "vllm", "canary": "1"}))
    assert not selection.selects(Pod("vllm-0", "default", labels={"app": "vllm"}))
    assert pod_selection(None, None) is None
    only_namespace = pod_selection(None, "training")
    assert only_namespace is not None and only_namespace.text == "namespace training"


def test_a_sweep_runs_again_under_another_selection() -> None:
    plain = ScenarioSpec("s.yaml", (Path("/s.yaml"),), (), 1, "s")
    chosen = ScenarioSpec("s.yaml", (Path("/s.yaml"),), (), 1, "s", pod_selection("app=vllm", None))
    assert chosen.params() == {"scenario": "s.yaml", "parameters": {}, "seed": 1, "selection": "app=vllm"}
    done = [plain.line({"cost": 1.0})]
    assert pending_runs([chosen], done) == [chosen]
    assert pending_runs([plain], done) == []
    assert pending_runs([plain], [chosen.line({"cost": 1.0})]) == [plain]
