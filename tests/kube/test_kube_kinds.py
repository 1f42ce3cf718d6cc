"""Which kinds are read, warned about or rejected; strict schemas; every problem reported at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import NODE, pod, problems, warnings


def test_misspelt_kind_in_a_known_group_is_an_error(tmp_path: Path) -> None:
    assert problems(tmp_path, "apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: web}\n") == [
        'scenario.yaml: document 1 (Deploymnet/web): kind: unknown kind "Deploymnet" in apps/v1'
    ]


def test_a_kind_in_a_version_kubernetes_no_longer_serves_is_an_error(tmp_path: Path) -> None:
    assert problems(tmp_path, "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: web}\n") == [
        "scenario.yaml: document 1 (Deployment/web): apiVersion: kind Deployment is not served in "
        "apps/v1beta1 "
        "(with Kubernetes 1.34: apps/v1)"
    ]


@pytest.mark.parametrize(
    ("document", "warning"),
    [
        (
            "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}",
            "scenario.yaml: document 1 (Service/web): kind v1/Service is not modelled; ignored",
        ),
        (
            "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: sm, namespace: "
            "mon}",
            "scenario.yaml: document 1 (ServiceMonitor/mon/sm): kind monitoring.coreos.com/v1/ServiceMonitor "
            "is not modelled; ignored",
        ),
        (
            "apiVersion: keda.sh/v1alpha1\nkind: TriggerAuthentication\nmetadata: {name: ta}\nspec: {any: x}",
            "scenario.yaml: document 1 (TriggerAuthentication/ta): "
            "kind keda.sh/v1alpha1/TriggerAuthentication is not modelled; ignored",
        ),
        (
            "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: pdb}",
            "scenario.yaml: document 1 (PodDisruptionBudget/pdb): kind policy/v1beta1/PodDisruptionBudget "
            "is not modelled; ignored",
        ),
        (
            "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}",
            "scenario.yaml: document 1 (CronJob/nightly): kind batch/v1/CronJob is not modelled; ignored",
        ),
        (
            "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: db}",
            "scenario.yaml: document 1 (ReplicationController/db): kind v1/ReplicationController is not "
            "modelled; ignored",
        ),
    ],
)
def test_other_standard_kinds_and_custom_resources_are_warnings(
    tmp_path: Path, document: str, warning: str
) -> None:
    assert warnings(tmp_path, document) == [warning]


def test_missing_api_version_and_kind_are_errors(tmp_path: Path) -> None:
    assert problems(tmp_path, "metadata: {name: x}\n---\napiVersion: v1\nkind: 3\n") == [
        "scenario.yaml: document 1: apiVersion: Required value",
        "scenario.yaml: document 1: kind: Required value",
        "scenario.yaml: document 2: kind: Invalid value: 3: must be a string",
    ]


def test_misspelt_field_is_an_error_with_its_path(tmp_path: Path) -> None:
    text = pod().replace("    image: busybox\n", "    image: busybox\n    resourcs: {requests: {cpu: 1}}\n")
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 1 (Pod/default/p): spec.containers[0].resourcs: "
        "Additional properties are not allowed ('resourcs' was unexpected)"
    ]


def test_schema_type_errors_are_short(tmp_path: Path) -> None:
    text = pod(spec="priority: high\nnodeSelector: [a]", metadata="labels: {app: {nested: x}}")
    assert problems(tmp_path, text) == [
        'scenario.yaml: document 1 (Pod/default/p): metadata.labels.app: Invalid value: {"nested": "x"}: '
        "must be a string",
        'scenario.yaml: document 1 (Pod/default/p): spec.nodeSelector: Invalid value: ["a"]: must be an '
        "object",
        'scenario.yaml: document 1 (Pod/default/p): spec.priority: Invalid value: "high": must be an integer',
    ]


def test_missing_name_and_required_fields_are_errors(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {namespace: ml}\nspec: {containers: [{image: x}]}\n"
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 1 (Pod): spec.containers[0].name: Required value",
        "scenario.yaml: document 1 (Pod): metadata.name: Required value: name or generateName is required",
    ]


def test_every_problem_of_every_document_is_reported(tmp_path: Path) -> None:
    text = f"{pod(spec='bogus: 1', name='a')}---\n{NODE}---\n{pod(spec='restartPolicy: Sometimes', name='b')}"
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 1 (Pod/default/a): spec.bogus: Additional properties are not allowed "
        "('bogus' was unexpected)",
        'scenario.yaml: document 3 (Pod/default/b): spec.restartPolicy: Unsupported value: "Sometimes": '
        'supported values: "Always", "OnFailure", "Never"',
    ]


def test_an_object_defined_twice_is_an_error_on_the_second(tmp_path: Path) -> None:
    text = f"{NODE}---\n{pod()}---\n{NODE}---\n{pod(metadata='namespace: other')}---\n{pod()}"
    assert problems(tmp_path, text) == [
        'scenario.yaml: document 3 (Node/gpu-0): metadata.name: Duplicate value: "gpu-0": '
        "Node gpu-0 is already defined in scenario.yaml: document 1",
        'scenario.yaml: document 5 (Pod/default/p): metadata.name: Duplicate value: "p": '
        "Pod default/p is already defined in scenario.yaml: document 2",
    ]


def test_priority_expander_config_map_is_read_and_checked(tmp_path: Path) -> None:
    """cluster-autoscaler's priority expander ConfigMap is input, not an ignored kind."""
    from gpufleet.kube import ScenarioError, load_scenario

    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-autoscaler-priority-expander, "
        "namespace: kube-system}\ndata: {priorities: x}"
    )
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    try:
        load_scenario([path])
    except ScenarioError as exc:
        assert exc.problems == [
            f"{path}: document 1 (ConfigMap/kube-system/cluster-autoscaler-priority-expander): "
            "data.priorities: must map integer priorities to lists of expressions"
        ]
    else:
        raise AssertionError("a priorities value that is not a map must be an error")
