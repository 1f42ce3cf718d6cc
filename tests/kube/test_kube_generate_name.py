"""``metadata.generateName``: the API server makes the name (k8s.io/apiserver pkg/storage/names,
``simpleNameGenerator.GenerateName``: the prefix cut to 58 characters and 5 characters of
k8s.io/apimachinery/pkg/util/rand's ``alphanums``); here deterministic per scenario seed."""

from __future__ import annotations

import re
from pathlib import Path

from kube_manifests import load, problems

from gpufleet.model.generated_names import ALPHANUMS, MAX_GENERATED_NAME_LENGTH, generate_name, unique_name

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {{generateName: sample-job-, namespace: ml}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]
"""
SIMULATION = "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nspec: {{seed: {seed}}}\n"


def _job_names(tmp_path: Path, text: str) -> list[str]:
    return [job.name for job in load(tmp_path, text).jobs]


def test_generate_name_appends_five_characters_of_upstream_alphabet_to_the_prefix(tmp_path: Path) -> None:
    (name,) = _job_names(tmp_path, JOB.format())
    assert re.fullmatch(f"sample-job-[{ALPHANUMS}]{{5}}", name)


def test_generated_names_are_stable_across_runs_unique_and_change_with_the_seed(tmp_path: Path) -> None:
    text = "---\n".join([JOB.format(), JOB.format(), SIMULATION.format(seed=1)])
    first = _job_names(tmp_path, text)
    assert first == _job_names(tmp_path, text)
    assert len(set(first)) == 2
    assert _job_names(tmp_path, text.replace("seed: 1", "seed: 2")) != first


def test_a_generated_name_does_not_depend_on_unrelated_documents(tmp_path: Path) -> None:
    other = JOB.format().replace("generateName: sample-job-", "name: other")
    assert _job_names(tmp_path, JOB.format()) == _job_names(tmp_path, f"{other}---\n{JOB.format()}")[1:]


def test_neither_name_nor_generate_name_is_the_api_servers_error(tmp_path: Path) -> None:
    # apimachinery ValidateObjectMeta: "name or generateName is required"
    assert problems(tmp_path, JOB.format().replace("generateName: sample-job-, ", "")) == [
        "scenario.yaml: document 1 (Job): metadata.name: Required value: name or generateName is required"
    ]


def test_problem_lines_of_a_generated_object_name_it(tmp_path: Path) -> None:
    text = JOB.format().replace("restartPolicy: Never", "restartPolicy: Always")
    (line,) = problems(tmp_path, text)
    assert re.fullmatch(
        f"scenario.yaml: document 1 \\(Job/ml/sample-job-[{ALPHANUMS}]{{5}}\\): "
        'spec.template.spec.restartPolicy: Unsupported value: "Always": '
        'supported values: "OnFailure", "Never"',
        line,
    )


def test_generate_name_cuts_a_long_prefix_to_58_characters() -> None:
    # names.simpleNameGenerator: maxNameLength 63 - randomLength 5
    name = generate_name("x" * 70, "key")
    assert len(name) == 63 and name.startswith("x" * MAX_GENERATED_NAME_LENGTH)


def test_unique_name_draws_again_when_the_name_is_taken() -> None:
    taken = {generate_name("web-", "k")}
    assert unique_name("web-", "k", taken) == generate_name("web-", "k#1")


def test_pods_deployments_and_nodes_may_be_named_by_generate_name(tmp_path: Path) -> None:
    text = """
apiVersion: v1
kind: Node
metadata: {generateName: gpu-}
status: {capacity: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {generateName: web-}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {generateName: api-}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: c, image: x}]}
"""
    scenario = load(tmp_path, text)
    names = [scenario.nodes[0].name, scenario.pods[0].pod.name, scenario.deployments[0].name]
    for prefix, name in zip(("gpu-", "web-", "api-"), names, strict=True):
        assert re.fullmatch(f"{prefix}[{ALPHANUMS}]{{5}}", name)
