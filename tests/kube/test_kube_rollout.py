"""Reading a Deployment's ``spec.strategy`` and ``minReadySeconds`` (``apps/v1`` defaults and
pkg/apis/apps/validation ``ValidateDeploymentStrategy``, ``ValidateRollingUpdateDeployment``) and gpufleet's
``Rollout`` kind (``gpufleet.kube.rollout``): its template merged into the Deployment's, and every bad input
an error at its field."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import cast

from kube_manifests import load, problems, warnings
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.kube.problems import Reporter
from gpufleet.kube.rollout import RESTARTED_AT, merge, template_hash
from gpufleet.model.generated_names import ALPHANUMS
from gpufleet.model.workloads import DeploymentStrategy

LABEL = "scenario.yaml: document 1 (Deployment/default/web)"
ROLLOUT_LABEL = "scenario.yaml: document 2 (Rollout/default/v2)"


def deployment(spec: str = "") -> str:
    """A Deployment ``web`` of 2 replicas with one container ``server``; ``spec`` lines are added."""
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"
        "  selector: {matchLabels: {app: web}}\n"
        "  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n"
        "      - name: server\n        image: server:v1\n"
        "        resources: {requests: {cpu: '1'}}\n        env: [{name: MODE, value: fast}]\n"
        + textwrap.indent(textwrap.dedent(spec).strip("\n"), "  ")
        + "\n"
    )


def rollout(spec: str) -> str:
    return (
        "---\napiVersion: gpufleet.io/v1alpha1\nkind: Rollout\nmetadata: {name: v2}\nspec:\n"
        + textwrap.indent(textwrap.dedent(spec).strip("\n"), "  ")
    )


def test_strategy_defaults_to_rolling_update_by_a_quarter_and_is_no_longer_warned(tmp_path: Path) -> None:
    """``SetDefaults_Deployment``: RollingUpdate, maxSurge and maxUnavailable 25 %; ``spec.strategy`` is
    modelled now (it was "not modelled; ignored")."""
    (web,) = load(tmp_path, deployment()).deployments
    assert web.strategy == DeploymentStrategy("RollingUpdate", "25%", "25%") and web.min_ready_s == 0
    text = deployment("strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}\nminReadySeconds: 30")
    assert warnings(tmp_path, text) == []
    (web,) = load(tmp_path, text).deployments
    assert web.strategy == DeploymentStrategy("RollingUpdate", 1, "25%") and web.min_ready_s == 30
    (web,) = load(tmp_path, deployment("strategy: {type: Recreate}")).deployments
    assert web.strategy.type == "Recreate"


def test_bad_strategies_are_rejected_as_the_api_server_rejects_them(tmp_path: Path) -> None:
    """``ValidateDeploymentStrategy`` and ``ValidateRollingUpdateDeployment``."""
    recreate = (
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"
    )
    unsupported = 'Unsupported value: "BlueGreen": supported values: "Recreate", "RollingUpdate"'
    rolling = "spec.strategy.rollingUpdate"
    cases = [
        ("strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}", recreate),
        ("strategy: {type: BlueGreen}", f"spec.strategy.type: {unsupported}"),
        (
            "strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0%}}",
            f'{rolling}.maxUnavailable: Invalid value: "0%": may not be 0 when `maxSurge` is 0',
        ),
        (
            "strategy: {rollingUpdate: {maxUnavailable: 120%}}",
            f'{rolling}.maxUnavailable: Invalid value: "120%": must not be greater than 100%',
        ),
        (
            "strategy: {rollingUpdate: {maxSurge: -1}}",
            f"{rolling}.maxSurge: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            "minReadySeconds: -5",
            "spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0",
        ),
        (
            "minReadySeconds: 60\nprogressDeadlineSeconds: 60",
            "spec.progressDeadlineSeconds: Invalid value: 60: must be greater than minReadySeconds",
        ),
    ]
    for spec, message in cases:
        assert f"{LABEL}: {message}" in problems(tmp_path, deployment(spec)), spec


def test_a_rollout_merges_its_template_into_the_deployments_by_container_name(tmp_path: Path) -> None:
    """Containers and ``env`` merge by name (a strategic merge patch): the image and a GPU limit change, the
    env entry changes and one is added, the rest of the template stays."""
    text = deployment() + rollout(
        """
        at: 2h
        deployment: web
        template:
          metadata: {annotations: {team: infer}}
          spec:
            containers:
            - name: server
              image: server:v2
              resources: {limits: {nvidia.com/gpu: 2}}
              env: [{name: MODE, value: safe}, {name: EXTRA, value: "1"}]
        """
    )
    (web,) = load(tmp_path, text).deployments
    (change,) = web.rollouts
    assert change.at_s == 7200.0 and change.name == "v2"
    assert change.template.images == ("server:v2",) and web.template.images == ("server:v1",)
    assert change.template.requests.get("nvidia.com/gpu") == 2 and change.template.requests.get("cpu") == 1000
    assert change.template.annotations["team"] == "infer" and change.template.labels == {"app": "web"}
    assert change.template_hash != web.template_hash
    assert len(change.template_hash) <= 10 and set(change.template_hash) <= set(ALPHANUMS)


def test_env_merges_by_name_and_other_lists_are_replaced() -> None:
    """A strategic merge patch's ``patchMergeKey: name`` lists (``containers``, ``env``) merge; ``args``
    is replaced."""
    base = {"spec": {"containers": [{"name": "c", "args": ["a"], "env": [{"name": "A", "value": "1"}]}]}}
    patch = {"spec": {"containers": [{"name": "c", "args": ["b"], "env": [{"name": "B", "value": "2"}]}]}}
    merged = merge(base, patch, "spec.template", cast(Reporter, None))
    assert merged["spec"]["containers"] == [
        {"name": "c", "args": ["b"], "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}
    ]
    assert base["spec"]["containers"][0]["args"] == ["a"]


def test_a_restart_stamps_restarted_at_from_the_simulation_start(tmp_path: Path) -> None:
    """``kubectl rollout restart``: the template's ``kubectl.kubernetes.io/restartedAt``, RFC 3339, at the
    Rollout's time on the Simulation's clock (time 0: its ``startTime``, here the Unix epoch)."""
    (web,) = load(tmp_path, deployment() + rollout("at: 90m\ndeployment: web\nrestart: true")).deployments
    (change,) = web.rollouts
    assert change.template.annotations[RESTARTED_AT] == "1970-01-01T01:30:00Z"


def test_the_pod_template_hash_is_upstreams_encoding_of_an_fnv_hash() -> None:
    """``ComputeHash``'s shape: FNV-1a 32 of the (here JSON) template, its decimal digits by
    ``SafeEncodeString`` (each digit's code point modulo the 27 letters of ``alphanums``)."""
    assert template_hash({}) == "5859f96865"  # FNV-1a 32 of "{}" is 1415952421


def test_bad_rollouts_are_errors_at_their_fields(tmp_path: Path) -> None:
    sidecar = "template: {spec: {containers: [{name: sidecar, image: x}]}}"
    relabel = "template: {metadata: {labels: {app: other}}}"
    cases = [
        (
            "deployment: api\nrestart: true",
            'spec.deployment: Invalid value: "api": no Deployment in namespace default',
        ),
        ("deployment: web\nrestart: true\nat: -1h", "spec.at:"),
        (
            f"deployment: web\n{sidecar}",
            'spec.template.spec.containers[0].name: Invalid value: "sidecar": '
            "the Deployment's template has no such container (server)",
        ),
        (
            "deployment: web",
            "spec.template: Required value: a Rollout changes the template, or restarts it (restart: true)",
        ),
        (
            f"deployment: web\n{relabel}",
            'spec.template.metadata.labels: Invalid value: {"app": "other"}: `selector` does not match',
        ),
    ]
    for spec, message in cases:
        text = spec if "at:" in spec else f"at: 1h\n{spec}"
        found = problems(tmp_path, deployment() + rollout(text))
        assert any(line.startswith(f"{ROLLOUT_LABEL}: {message}") for line in found), (spec, found)


def test_cli_validate_exits_2_on_a_rollout_of_an_unknown_deployment(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(deployment() + rollout("at: 1h\ndeployment: api\nrestart: true"))
    result = CliRunner().invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    assert 'document 2 (Rollout/default/v2): spec.deployment: Invalid value: "api"' in result.output
    assert "Traceback" not in result.output


def test_rollouts_of_a_paused_deployment_and_unmodelled_fields_are_warned(tmp_path: Path) -> None:
    """A paused Deployment is only scaled (``syncDeployment``): its Rollout changes nothing.
    ``progressDeadlineSeconds`` and ``revisionHistoryLimit`` are read but not modelled."""
    paused = deployment("paused: true") + rollout("at: 1h\ndeployment: web\nrestart: true")
    (web,) = load(tmp_path, paused).deployments
    assert web.rollouts == ()
    assert any("is paused" in w for w in warnings(tmp_path, paused))
    text = deployment("progressDeadlineSeconds: 600\nrevisionHistoryLimit: 2") + rollout(
        "at: 1h\ndeployment: web\nrestart: true"
    )
    found = warnings(tmp_path, text)
    assert any("spec.progressDeadlineSeconds is not modelled" in w for w in found)
    assert any("spec.revisionHistoryLimit is not modelled" in w for w in found)


def test_a_rollout_to_the_same_template_is_warned_and_changes_nothing(tmp_path: Path) -> None:
    same = deployment() + rollout(
        "at: 1h\ndeployment: web\ntemplate: {spec: {containers: [{name: server, image: server:v1}]}}"
    )
    (web,) = load(tmp_path, same).deployments
    assert web.rollouts == ()
    assert any("already is this one" in w for w in warnings(tmp_path, same))
