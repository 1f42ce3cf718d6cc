"""A Simulation's ``spec.controllerManager`` (kube-controller-manager's node lifecycle flags,
``NodeLifecycleControllerConfiguration`` and ``--node-monitor-period``) and ``spec.apiServer``
(``DefaultTolerationSeconds``' flags), read over upstream's defaults (``kube.node_lifecycle_flags``)."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.model.default_toleration_seconds import DefaultTolerationSeconds
from gpufleet.model.node_lifecycle_config import NodeLifecycleConfig
from gpufleet.model.node_lifecycle_zones import EvictionRates

LABEL = "scenario.yaml: document 1 (Simulation/s)"


def simulation(spec: str) -> str:
    return f"apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {{name: s}}\nspec: {spec}\n"


def test_upstreams_defaults_without_the_blocks(tmp_path: Path) -> None:
    """``RecommendedDefaultNodeLifecycleControllerConfiguration`` (50 s, 60 s), ``--node-monitor-period`` 5 s,
    the flags' defaults (0.1, 0.01, 50, 0.55) and the admission plugin's 300 s."""
    settings = load(tmp_path, simulation("{}")).simulation
    assert settings.node_lifecycle == NodeLifecycleConfig(50.0, 5.0, 60.0, EvictionRates(0.1, 0.01, 50, 0.55))
    assert settings.default_tolerations == DefaultTolerationSeconds(300, 300)


def test_every_flag_is_read_in_go_duration_syntax_and_camel_case(tmp_path: Path) -> None:
    text = simulation(
        "{controllerManager: {nodeMonitorGracePeriod: 40s, nodeMonitorPeriod: 2s, "
        "nodeStartupGracePeriod: 2m, nodeEvictionRate: 0.5, secondaryNodeEvictionRate: 0, "
        "largeClusterSizeThreshold: 3, "
        "unhealthyZoneThreshold: 0.8}, apiServer: {defaultNotReadyTolerationSeconds: 60, "
        "defaultUnreachableTolerationSeconds: -1}}"
    )
    scenario = load(tmp_path, text)
    assert scenario.simulation.node_lifecycle == NodeLifecycleConfig(
        40.0, 2.0, 120.0, EvictionRates(0.5, 0.0, 3, 0.8)
    )
    assert scenario.simulation.default_tolerations == DefaultTolerationSeconds(60, -1)
    assert relative_warnings(scenario.warnings, tmp_path) == [
        f"{LABEL}: spec.controllerManager.nodeMonitorPeriod is not modelled (a node goes NotReady the grace "
        "period after its kubelet stopped); ignored",
        f"{LABEL}: spec.controllerManager.nodeStartupGracePeriod is not modelled (every node posts its Ready "
        "condition as it joins); ignored",
    ]


def relative_warnings(lines: list[str], directory: Path) -> list[str]:
    return [line.replace(f"{directory}/", "") for line in lines]


def test_bad_values_are_errors_each_at_its_field(tmp_path: Path) -> None:
    """Durations above 0, a grace period longer than the monitor period (``Controller.nodeMonitorPeriod``'s
    comment), numbers and Go ``int32``/``int64`` integers, no unknown field (``nodeEvictionRate: 0`` is
    none: upstream runs it)."""
    text = simulation(
        "{controllerManager: {nodeMonitorGracePeriod: 50x, nodeMonitorPeriod: 0s, nodeStartupGracePeriod: "
        "soon, nodeEvictionRate: 0, largeClusterSizeThreshold: 3000000000, unhealthyZoneThreshold: '0.5', "
        "podEvictionTimeout: 5m}, apiServer: {defaultNotReadyTolerationSeconds: 1.5, tolerationSeconds: 1}}"
    )
    at = f"{LABEL}: spec.controllerManager"
    assert problems(tmp_path, text) == [
        f"{at}.nodeMonitorGracePeriod: invalid duration '50x' (use Go syntax such as '90s', '20m', '2h')",
        f'{at}.nodeMonitorPeriod: Invalid value: "0s": must be greater than 0',
        f"{at}.nodeStartupGracePeriod: invalid duration 'soon' (use Go syntax such as '90s', '20m', '2h')",
        f"{at}.largeClusterSizeThreshold: Invalid value: 3000000000: must be less than or equal to "
        "2147483647",
        f'{at}.unhealthyZoneThreshold: Invalid value: "0.5": must be a number',
        f"{at}.podEvictionTimeout: Additional properties are not allowed "
        "('podEvictionTimeout' was unexpected)",
        f"{LABEL}: spec.apiServer.defaultNotReadyTolerationSeconds: Invalid value: 1.5: must be an integer",
        f"{LABEL}: spec.apiServer.tolerationSeconds: Additional properties are not allowed "
        "('tolerationSeconds' was unexpected)",
    ]


def test_the_grace_period_must_be_longer_than_the_monitor_period(tmp_path: Path) -> None:
    """``Controller.nodeMonitorPeriod``: "This value should be lower than nodeMonitorGracePeriod"; the error
    is at the field given."""
    at = f"{LABEL}: spec.controllerManager"
    grace = simulation("{controllerManager: {nodeMonitorGracePeriod: 5s}}")
    assert problems(tmp_path, grace) == [
        f'{at}.nodeMonitorGracePeriod: Invalid value: "5s": must be greater than nodeMonitorPeriod (5s)'
    ]
    period = simulation("{controllerManager: {nodeMonitorPeriod: 1m}}")
    assert problems(tmp_path, period) == [
        f'{at}.nodeMonitorPeriod: Invalid value: "60s": must be less than nodeMonitorGracePeriod (50s)'
    ]


def test_a_grace_period_within_the_kubelets_heartbeat_is_warned(tmp_path: Path) -> None:
    """The controller's constraint 1 (``Controller.nodeMonitorGracePeriod``): more than the node health
    signal's update frequency (the kubelet's Lease renewed every 10 s)."""
    assert warnings(tmp_path, simulation("{controllerManager: {nodeMonitorGracePeriod: 10s}}")) == [
        f"{LABEL}: spec.controllerManager.nodeMonitorGracePeriod: no longer than the kubelet's heartbeat "
        "(10s): the real controller would set healthy nodes NotReady between heartbeats, which gpufleet does "
        "not model"
    ]
    assert warnings(tmp_path, simulation("{controllerManager: {nodeMonitorGracePeriod: 20s}}")) == []


def test_cli_validate_exits_2_on_a_bad_node_monitor_grace_period(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(simulation("{controllerManager: {nodeMonitorGracePeriod: -20s}}"))
    result = CliRunner().invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    assert (
        f"{bad}: document 1 (Simulation/s): spec.controllerManager.nodeMonitorGracePeriod: " in result.output
    )
    assert "Traceback" not in result.output
