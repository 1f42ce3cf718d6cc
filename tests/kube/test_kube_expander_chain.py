"""``spec.autoscaler.expander`` is checked as cluster-autoscaler 1.34's ``Factory.Build`` checks
``--expander``: each name once, and nothing after ``random`` (a strategy that always leaves one
option)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import load, problems

LABEL = "scenario.yaml: document 1 (Simulation/s): spec.autoscaler.expander"


def _simulation(expander: str) -> str:
    spec = f"{{autoscaler: {{expander: '{expander}'}}}}"
    return f"apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {{name: s}}\nspec: {spec}\n"


@pytest.mark.parametrize(
    ("expander", "message"),
    [
        (
            "priority,least-waste,priority",
            "Expander priority was specified multiple times, "
            "each expander must not be specified more than once",
        ),
        (
            "random,least-waste",
            "Expander least-waste came after an expander random that will always return only one result, "
            "this is not allowed since least-waste will never be used",
        ),
    ],
)
def test_an_expander_chain_upstream_refuses_is_an_error(tmp_path: Path, expander: str, message: str) -> None:
    assert problems(tmp_path, _simulation(expander)) == [f"{LABEL}: {message}"]


def test_a_chain_ending_in_random_is_accepted(tmp_path: Path) -> None:
    expander = "priority,least-nodes,random"
    assert load(tmp_path, _simulation(expander)).simulation.autoscaler.expander == expander
