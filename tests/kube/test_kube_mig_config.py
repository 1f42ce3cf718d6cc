"""``NodePool`` ``spec.gpu.migConfig`` and ``migConfigChanges``: mig-parted configuration names as input.

A name must be one of ``NVIDIA/mig-parted``'s ``config-default.yaml`` entries that apply to the pool's GPU
model, and its layout must suit the device plugin's strategy (``single``: one profile per node). Bad input
is reported per field and the command exits with status 2, as for every other kind.
"""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.model.mig_configs import DEFAULT_RECONFIGURE_S, MigConfigChange


def pool(gpu: str, name: str = "h100") -> str:
    return (
        f"apiVersion: gpufleet.io/v1alpha1\nkind: NodePool\nmetadata: {{name: {name}}}\n"
        f"spec: {{replicas: 1, gpu: {gpu}, template: {{status: {{capacity: {{cpu: '8'}}}}}}}}\n"
    )


H100 = "model: H100-80GB, count: 1"


def test_mig_config_names_the_layout_and_labels_the_node(tmp_path: Path) -> None:
    changes = "[{at: 10m, config: all-7g.80gb}]"
    gpu = f"{{{H100}, migStrategy: mixed, migConfig: all-balanced, migConfigChanges: {changes}}}"
    (h100,) = load(tmp_path, pool(gpu)).node_pools
    assert h100.template.allocatable["nvidia.com/mig-1g.10gb"] == 2
    assert h100.template.allocatable["nvidia.com/mig-3g.40gb"] == 1
    assert h100.template.labels["nvidia.com/mig.config"] == "all-balanced"
    assert h100.template.labels["nvidia.com/mig.config.state"] == "success"
    assert h100.mig is not None
    assert h100.mig.changes == (MigConfigChange(600.0, "all-7g.80gb", True, DEFAULT_RECONFIGURE_S),)


def test_unknown_configs_and_configs_the_model_or_strategy_cannot_carry_are_errors(tmp_path: Path) -> None:
    changes = "[{at: 10m, config: all-balanced}, {at: 20m, config: all-3g.40gb, duration: 0s}]"
    text = pool(f"{{{H100}, migStrategy: single, migConfig: all-1g.5gb, migConfigChanges: {changes}}}")
    label = "scenario.yaml: document 1 (NodePool/h100)"
    assert problems(tmp_path, text) == [
        f'{label}: spec.gpu.migConfigChanges[1].duration: Invalid value: "0s": must be greater than 0',
        f'{label}: spec.gpu.migConfig: Invalid value: "all-1g.5gb": mig-parted\'s default configurations for '
        "H100-80GB are: all-disabled, all-enabled, all-1g.10gb, all-1g.20gb, all-2g.20gb, all-3g.40gb, "
        "all-4g.40gb, all-7g.80gb, all-1g.10gb.me, all-balanced",
        f'{label}: spec.gpu.migConfigChanges[0].config: Invalid value: "all-balanced": single strategy: '
        "all MIG devices must be one profile, got ['1g.10gb', '2g.20gb', '3g.40gb']",
    ]


def test_mig_fields_need_a_mig_capable_model_a_strategy_and_no_layout_beside(tmp_path: Path) -> None:
    l4 = pool(
        "{model: L4, count: 1, migStrategy: mixed, migConfigChanges: [{at: 1m, config: all-disabled}]}", "l4"
    )
    both = pool(f"{{{H100}, migStrategy: mixed, migLayout: [1g.10gb], migConfig: all-1g.10gb}}")
    assert problems(tmp_path, l4 + "---\n" + both) == [
        "scenario.yaml: document 1 (NodePool/l4): spec.gpu.migConfigChanges: Forbidden: needs a MIG-capable "
        "model and migStrategy single or mixed",
        "scenario.yaml: document 2 (NodePool/h100): spec.gpu.migConfig: Forbidden: may not be set together "
        "with migLayout",
    ]


def test_unknown_profile_or_model_is_an_input_error_not_a_traceback(tmp_path: Path) -> None:
    layout = pool(f"{{{H100}, migStrategy: mixed, migLayout: [1g.5gb]}}")
    model = pool("{model: H101, count: 1}", "other")
    lines = problems(tmp_path, layout + "---\n" + model)
    assert lines[0] == (
        "scenario.yaml: document 1 (NodePool/h100): spec.gpu: H100-80GB has no MIG profile '1g.5gb'; "
        "known: 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"
    )
    assert lines[1].startswith(
        "scenario.yaml: document 2 (NodePool/other): spec.gpu.model: "
        'Unsupported value: "H101": supported values: "A10", "A100-40GB"'
    )


def test_cli_validate_exits_2_on_a_bad_mig_config(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        pool(f"{{{H100}, migStrategy: mixed, migConfigChanges: [{{at: 1m, config: all-2g.10gb}}]}}")
    )
    result = CliRunner().invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    assert (
        f"{bad}: document 1 (NodePool/h100): spec.gpu.migConfigChanges[0].config: Invalid value:"
        in result.output
    )
    assert "Traceback" not in result.output
