"""Changing a node's MIG layout through ``nvidia.com/mig.config``, as the GPU Operator's MIG Manager does.

Upstream rules checked (``NVIDIA/mig-parted`` ``pkg/mig/reconfigure/reconfigure.go``; GPU Operator docs,
"GPU Operator with MIG"):

* the label change makes ``nvidia.com/mig.config.state`` ``pending`` and stops the device plugin, so the node
  advertises no GPU resources until the new layout registers; then ``success``;
* MIG Manager evicts nothing and "requires that no user workloads are running on the GPUs being configured":
  the documented procedure drains the node first (each evicted pod gets its grace period); a pod still on
  the GPUs makes ``nvidia-mig-parted apply`` fail (``In use by another client``): ``failed``, and the device
  plugin comes back with the old layout;
* a configuration already in place is ``success`` at once; a label changed during a reconfiguration is
  applied after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpufleet.kube import load_scenario
from gpufleet.report import validate_summary
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gpu-sharing" / "mig-reconfigure.yaml"
NOTEBOOKS = [f"default/notebooks-{i}" for i in range(4)]


def run(paths: list[Path]) -> tuple[Simulation, dict[str, Any]]:
    sim = Simulation(load_scenario(paths))
    sim.run()
    summary = build_summary(sim)
    validate_summary(summary)
    return sim, summary


def variant(tmp_path: Path, old: str, new: str) -> Path:
    """The example with one line changed."""
    text = EXAMPLE.read_text()
    assert old in text
    path = tmp_path / "scenario.yaml"
    path.write_text(text.replace(old, new))
    return path


def gpus_total_at(summary: dict[str, Any], t: float) -> float:
    timeline = summary["timeline"]
    return float(timeline["gpus_total"][timeline["t_s"].index(t)])


CHANGE = "- {at: 10m, config: all-3g.40gb}"


def test_example_drains_the_1g_pods_then_advertises_two_3g_instances_a_minute_later() -> None:
    sim, summary = run([EXAMPLE])
    (change,) = summary["mig_reconfigurations"]
    assert change == {
        "node": "h100-0",
        "pool": "h100",
        "config": "all-3g.40gb",
        "from_config": "all-1g.10gb",
        "requested_s": 600.0,
        "evicted": NOTEBOOKS,
        "started_s": 630.0,  # the notebooks' 30 s grace period: the label is set once they are gone
        "finished_s": 690.0,  # the default 60 s reconfiguration
        "state": "success",
        "blocked_by": [],
        "resources": {"nvidia.com/mig-3g.40gb": 2},
    }
    pods = {p["name"]: p for p in summary["pods"]}
    for key in NOTEBOOKS:
        assert (pods[key]["reason"], pods[key]["finished_s"], pods[key]["disruptions"]) == (
            "Evicted",
            630.0,
            [600.0],
        )
        retry = pods[key + "-r1"]  # the Job retries it: no 1g.10gb instance is left
        assert retry["phase"] == "Pending" and "Insufficient nvidia.com/mig-1g.10gb" in retry["message"]
    for i in range(2):
        training = pods[f"default/training-{i}"]
        assert (training["bound_s"], training["devices"], training["reason"]) == (
            690.0,
            [f"3g.40gb-{i}"],
            "Completed",
        )
    # no GPU resources while MIG Manager works (the device plugin is stopped), the GPU again after
    assert [gpus_total_at(summary, t) for t in (620.0, 630.0, 680.0, 690.0)] == [1.0, 0.0, 0.0, 1.0]
    node = sim.state.nodes[sim.state.index["h100-0"]]
    assert node.labels["nvidia.com/mig.config"] == "all-3g.40gb"
    assert node.labels["nvidia.com/mig.config.state"] == "success"
    assert (
        node.labels["nvidia.com/mig-3g.40gb.count"] == "2"
        and "nvidia.com/mig-1g.10gb.count" not in node.labels
    )
    assert not node.unschedulable  # uncordoned after MIG Manager reported


def test_without_drain_busy_gpus_make_the_change_fail_and_the_old_layout_returns(tmp_path: Path) -> None:
    sim, summary = run([variant(tmp_path, CHANGE, "- {at: 10m, config: all-3g.40gb, drain: false}")])
    (change,) = summary["mig_reconfigurations"]
    assert (change["started_s"], change["finished_s"], change["state"]) == (600.0, 660.0, "failed")
    assert change["evicted"] == [] and change["blocked_by"] == NOTEBOOKS
    assert change["resources"] == {"nvidia.com/mig-1g.10gb": 7}
    pods = {p["name"]: p for p in summary["pods"]}
    assert all((pods[key]["reason"], pods[key]["disruptions"]) == ("Completed", []) for key in NOTEBOOKS)
    assert all(pods[f"default/training-{i}"]["phase"] == "Pending" for i in range(2))
    assert [gpus_total_at(summary, t) for t in (590.0, 600.0, 650.0, 660.0)] == [1.0, 0.0, 0.0, 1.0]
    labels = sim.state.nodes[sim.state.index["h100-0"]].labels
    assert (labels["nvidia.com/mig.config"], labels["nvidia.com/mig.config.state"]) == (
        "all-3g.40gb",
        "failed",
    )
    assert labels["nvidia.com/mig-1g.10gb.count"] == "7"  # GFD came back on the old layout


def test_grace_period_and_duration_set_when_the_new_layout_appears(tmp_path: Path) -> None:
    path = variant(tmp_path, CHANGE, "- {at: 10m, config: all-3g.40gb, duration: 5m}")
    text = path.read_text().replace(
        "      restartPolicy: Never\n",
        "      restartPolicy: Never\n      terminationGracePeriodSeconds: 90\n",
        1,
    )
    path.write_text(text)
    _, summary = run([path])
    (change,) = summary["mig_reconfigurations"]
    assert (change["requested_s"], change["started_s"], change["finished_s"]) == (600.0, 690.0, 990.0)
    pods = {p["name"]: p for p in summary["pods"]}
    assert pods["default/training-0"]["bound_s"] == 990.0


def test_a_change_asked_during_a_reconfiguration_is_applied_after_it(tmp_path: Path) -> None:
    two = CHANGE + "\n    - {at: 620s, config: all-7g.80gb}"
    _, summary = run([variant(tmp_path, CHANGE, two)])
    first, second = summary["mig_reconfigurations"]
    assert (first["config"], first["started_s"], first["finished_s"]) == ("all-3g.40gb", 630.0, 690.0)
    assert (second["config"], second["from_config"], second["requested_s"]) == (
        "all-7g.80gb",
        "all-3g.40gb",
        690.0,
    )
    assert (second["started_s"], second["finished_s"], second["evicted"]) == (690.0, 750.0, [])
    assert second["resources"] == {"nvidia.com/mig-7g.80gb": 1}


def test_a_configuration_already_in_place_succeeds_at_once(tmp_path: Path) -> None:
    _, summary = run([variant(tmp_path, CHANGE, "- {at: 10m, config: all-1g.10gb}")])
    (change,) = summary["mig_reconfigurations"]
    assert (change["started_s"], change["finished_s"], change["state"], change["evicted"]) == (
        600.0,
        600.0,
        "success",
        [],
    )
    pods = {p["name"]: p for p in summary["pods"]}
    assert all((pods[key]["reason"], pods[key]["disruptions"]) == ("Completed", []) for key in NOTEBOOKS)
    assert gpus_total_at(summary, 600.0) == 1.0


def test_single_strategy_advertises_the_new_instances_as_nvidia_gpu(tmp_path: Path) -> None:
    """k8s-device-plugin ``single``: ``nvidia.com/gpu`` counts MIG devices; GFD names the profile."""
    sim, summary = run([variant(tmp_path, "migStrategy: mixed", "migStrategy: single")])
    (change,) = summary["mig_reconfigurations"]
    assert change["resources"] == {"nvidia.com/gpu": 2} and change["evicted"] == []  # the pods ask for mig-*
    labels = sim.state.nodes[sim.state.index["h100-0"]].labels
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb"
    assert labels["nvidia.com/gpu.count"] == "2"


def test_nodes_launched_after_a_change_come_up_with_the_new_layout(tmp_path: Path) -> None:
    """cluster-autoscaler estimates on the pool's template, which carries the new configuration."""
    path = variant(tmp_path, "  replicas: 1\n", "  replicas: 0\n  max: 2\n")
    path.write_text(
        path.read_text().replace("parallelism: 4\n  completions: 4", "parallelism: 0\n  completions: 0", 1)
    )
    path.write_text(path.read_text().replace(CHANGE, "- {at: 1m, config: all-3g.40gb}"))
    _, summary = run([path])
    assert summary["mig_reconfigurations"] == []  # no node existed to reconfigure
    pods = {p["name"]: p for p in summary["pods"]}
    assert {pods[f"default/training-{i}"]["node"] for i in range(2)} == {"h100-0"}
    assert sorted(pods[f"default/training-{i}"]["devices"][0] for i in range(2)) == ["3g.40gb-0", "3g.40gb-1"]
