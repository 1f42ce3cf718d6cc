"""cluster-autoscaler's DaemonSet-eviction and delay-deletion options as gpufleet reads them: the
``Simulation``'s ``autoscaler`` fields ``daemonsetEvictionForEmptyNodes``
(``--daemonset-eviction-for-empty-nodes``, false), ``daemonsetEvictionForOccupiedNodes``
(``--daemonset-eviction-for-occupied-nodes``, true) and ``nodeDeletionDelayTimeout``
(``--node-deletion-delay-timeout``, 2 minutes) and ``nodeDeleteDelayAfterTaint``
(``--node-delete-delay-after-taint``, 5 s; ``config/flags/flags.go``), and a node's
``delay-deletion.cluster-autoscaler.kubernetes.io/<anything>`` annotation (``DelayDeletionAnnotationPrefix``,
``hasDelayDeletionAnnotation``: any key with the prefix, whatever its value)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import NODE, load, problems, warnings
from test_kube_gpufleet_kinds import TEMPLATE, pool, simulation
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.model.simulation import AutoscalerSettings

LABEL = "scenario.yaml: document 1 (Simulation/s): spec.autoscaler"


def test_the_simulation_reads_the_daemon_set_eviction_flags_and_the_delay_timeout(tmp_path: Path) -> None:
    defaults = AutoscalerSettings()
    assert (
        defaults.daemonset_eviction_for_empty_nodes,
        defaults.daemonset_eviction_for_occupied_nodes,
        defaults.node_deletion_delay_timeout_s,
    ) == (False, True, 120.0)
    text = simulation(
        "{autoscaler: {daemonsetEvictionForEmptyNodes: true, daemonsetEvictionForOccupiedNodes: false, "
        "nodeDeletionDelayTimeout: 30s}}"
    )
    assert load(tmp_path, text).simulation.autoscaler == AutoscalerSettings(
        daemonset_eviction_for_empty_nodes=True,
        daemonset_eviction_for_occupied_nodes=False,
        node_deletion_delay_timeout_s=30.0,
    )
    assert warnings(tmp_path, text) == []


def test_bad_values_of_the_options_are_field_errors(tmp_path: Path) -> None:
    text = simulation(
        "{autoscaler: {daemonsetEvictionForEmptyNodes: 'yes', daemonsetEvictionForOccupiedNodes: 0, "
        "nodeDeletionDelayTimeout: -1s}}"
    )
    assert problems(tmp_path, text) == [
        f'{LABEL}.daemonsetEvictionForEmptyNodes: Invalid value: "yes": must be a boolean',
        f"{LABEL}.daemonsetEvictionForOccupiedNodes: Invalid value: 0: must be a boolean",
        f"{LABEL}.nodeDeletionDelayTimeout: invalid duration '-1s' "
        "(use Go syntax such as '90s', '20m', '2h')",
    ]


def test_cli_validate_exits_2_on_a_bad_node_deletion_delay_timeout(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(simulation("{autoscaler: {nodeDeletionDelayTimeout: soon}}"))
    result = CliRunner().invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    field = f"{bad}: document 1 (Simulation/s): spec.autoscaler.nodeDeletionDelayTimeout"
    assert f"{field}: invalid duration 'soon'" in result.output
    assert "Traceback" not in result.output


def test_the_simulation_reads_the_delay_after_taint_as_a_go_duration(tmp_path: Path) -> None:
    """``--node-delete-delay-after-taint`` (a ``time.Duration`` flag, ``5*time.Second`` by default in
    ``config/flags/flags.go``): read as ``nodeDeleteDelayAfterTaint``, 0 allowed (upstream sleeps only above
    0, ``deleteNodesAsync``)."""
    assert AutoscalerSettings().node_delete_delay_after_taint_s == 5.0
    for given, seconds in (("1m30s", 90.0), ("0s", 0.0)):
        text = simulation(f"{{autoscaler: {{nodeDeleteDelayAfterTaint: {given}}}}}")
        assert load(tmp_path, text).simulation.autoscaler == AutoscalerSettings(
            node_delete_delay_after_taint_s=seconds
        )
        assert warnings(tmp_path, text) == []


def test_the_dynamic_delay_after_taint_is_taken_as_0_with_a_warning(tmp_path: Path) -> None:
    """``--dynamic-node-delete-delay-after-taint-enabled`` (``taintNodesSync``): the delay becomes twice the
    longest taint round trip measured in the last hour, whatever ``nodeDeleteDelayAfterTaint`` says;
    gpufleet's taint takes none: 0, and a warning says so. False changes nothing."""
    text = simulation(
        "{autoscaler: {nodeDeleteDelayAfterTaint: 10s, dynamicNodeDeleteDelayAfterTaintEnabled: true}}"
    )
    assert load(tmp_path, text).simulation.autoscaler.node_delete_delay_after_taint_s == 0.0
    assert warnings(tmp_path, text) == [
        f"{LABEL}.dynamicNodeDeleteDelayAfterTaintEnabled: the delay after the ToBeDeleted taint is then "
        "twice the longest round trip of a taint to the API server in the last hour (taintNodesSync), which "
        "gpufleet does not model: taken as 0, nodeDeleteDelayAfterTaint ignored"
    ]
    off = simulation("{autoscaler: {dynamicNodeDeleteDelayAfterTaintEnabled: false}}")
    assert load(tmp_path, off).simulation.autoscaler == AutoscalerSettings()
    assert warnings(tmp_path, off) == []


def test_a_bad_delay_after_taint_is_a_field_error_and_validate_exits_2(tmp_path: Path) -> None:
    assert problems(tmp_path, simulation("{autoscaler: {nodeDeleteDelayAfterTaint: -5s}}")) == [
        f"{LABEL}.nodeDeleteDelayAfterTaint: invalid duration '-5s' "
        "(use Go syntax such as '90s', '20m', '2h')"
    ]
    bad = tmp_path / "bad.yaml"
    bad.write_text(simulation("{autoscaler: {nodeDeleteDelayAfterTaint: 5 seconds}}"))
    result = CliRunner().invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    field = f"{bad}: document 1 (Simulation/s): spec.autoscaler.nodeDeleteDelayAfterTaint"
    assert f"{field}: invalid duration '5 seconds'" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("annotations", "delayed"),
    [
        ("{delay-deletion.cluster-autoscaler.kubernetes.io/ingress: 'true'}", True),
        ("{delay-deletion.cluster-autoscaler.kubernetes.io/x: ''}", True),
        ("{cluster-autoscaler.kubernetes.io/delay-deletion: 'true'}", False),
    ],
)
def test_a_delay_deletion_annotation_marks_the_node(tmp_path: Path, annotations: str, delayed: bool) -> None:
    text = NODE.replace("  name: gpu-0\n", f"  name: gpu-0\n  annotations: {annotations}\n")
    (node,) = load(tmp_path, text).nodes
    assert node.delay_deletion is delayed
    assert warnings(tmp_path, text) == []


def test_a_delay_deletion_annotation_on_a_node_pools_template_marks_its_nodes(tmp_path: Path) -> None:
    template = TEMPLATE.replace(
        "template: {",
        "template: {metadata: {annotations: {delay-deletion.cluster-autoscaler.kubernetes.io/a: x}}, ",
    )
    (gpu,) = load(tmp_path, pool(f"{{max: 2, {template}}}")).node_pools
    assert gpu.template.delay_deletion is True
