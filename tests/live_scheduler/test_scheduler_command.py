"""``gpufleet scheduler``'s checks before it starts: one KubeSchedulerConfiguration whose plugins
gpufleet implements, and a reachable API server; each problem is one line and exit status 2."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml
from typer.testing import CliRunner

from gpufleet.cli import app

CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _run(tmp_path: Path, *docs: Mapping[str, object], kubeconfig: Path | None = None) -> tuple[int, str]:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    args = ["scheduler", "--config", str(path), "--bind-address", ""]
    if kubeconfig is not None:
        args += ["--kubeconfig", str(kubeconfig)]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def test_a_config_with_more_than_a_scheduler_configuration_is_refused(tmp_path: Path) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n"},
        "status": {"capacity": {"cpu": "1"}},
    }
    code, output = _run(tmp_path, CONFIG, node)
    assert code == 2
    assert "give exactly one KubeSchedulerConfiguration and nothing else" in output


def test_a_plugin_gpufleet_accepts_but_does_not_implement_is_refused_for_a_live_scheduler(
    tmp_path: Path,
) -> None:
    """In simulation VolumeBinding is a warning (not modelled); a live scheduler cannot leave it out."""
    profile = {"schedulerName": "s", "plugins": {"filter": {"enabled": [{"name": "VolumeBinding"}]}}}
    code, output = _run(tmp_path, {**CONFIG, "profiles": [profile]})
    assert code == 2
    assert "plugins gpufleet does not implement: VolumeBinding" in output


def test_an_unknown_plugin_is_the_reader_s_error(tmp_path: Path) -> None:
    profile = {"schedulerName": "s", "plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}
    code, output = _run(tmp_path, {**CONFIG, "profiles": [profile]})
    assert code == 2
    assert "NoSuchPlugin" in output


def test_an_unreachable_api_server_is_one_line_and_exit_2(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:9"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    code, output = _run(tmp_path, CONFIG, kubeconfig=kubeconfig)
    assert code == 2
    assert output.strip().splitlines()[-1].startswith("cannot reach the API server http://127.0.0.1:9")
