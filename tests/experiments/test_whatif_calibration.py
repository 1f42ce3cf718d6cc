"""``gpufleet startup --calibrate``'s calibration.yaml as a change file of ``gpufleet whatif``: the
changed side starts from the cluster's own numbers (the NodePools' provisioning, each workload's
readiness and image size, the registry bandwidth), and the ``Change`` pod edit that carries them
(``set.annotations``, ``selector.owner``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.experiments.whatif import load_sides
from gpufleet.model.scenario import Scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "startup" / "cluster-dump.json"
GPU_TAINT = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def template(app_name: str, gpus: int, hash_: str | None = None) -> dict[str, Any]:
    labels = {"app": app_name, **({"pod-template-hash": hash_} if hash_ else {})}
    return {
        "metadata": {"labels": labels},
        "spec": {
            "tolerations": [GPU_TAINT],
            "containers": [
                {"name": "server", "image": f"registry.example/{app_name}", "resources": {
                    "limits": {"nvidia.com/gpu": str(gpus)}}}
            ],
        },
    }  # fmt: skip


def deployment(name: str, replicas: int, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name, gpus),
        },
    }


def replica_set(deployment_name: str, hash_: str, replicas: int, gpus: int) -> dict[str, Any]:
    """The Deployment's current ReplicaSet, named as the Deployment controller names it."""
    name = f"{deployment_name}-{hash_}"
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment_name,
             "uid": f"uid-{deployment_name}", "controller": True}  # fmt: skip
    selector = {"matchLabels": {"app": deployment_name, "pod-template-hash": hash_}}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}", "ownerReferences": [owner]},
        "spec": {
            "replicas": replicas,
            "selector": selector,
            "template": template(deployment_name, gpus, hash_),
        },
    }


def pending_pod(name: str, owner: str, hash_: str, gpus: int) -> dict[str, Any]:
    """A pending pod of ReplicaSet ``owner`` (``<deployment>-<hash>``)."""
    body = template(owner.rsplit("-", 1)[0], gpus, hash_)
    ref = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": owner,
        "uid": f"uid-{owner}",
        "controller": True,
    }
    body["metadata"].update({"name": name, "namespace": "ml", "uid": f"uid-{name}", "ownerReferences": [ref]})
    body["spec"]["restartPolicy"] = "Always"
    return {"apiVersion": "v1", "kind": "Pod", **body, "status": {"phase": "Pending"}}  # fmt: skip


def snapshot(tmp_path: Path, *objects: dict[str, Any]) -> Path:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    return path


def the_dumps_workloads(tmp_path: Path) -> Path:
    """The example dump's workloads as they stood before its scale-up: its Deployments, their
    ReplicaSets (the dump's pods' owners) and their pods, pending; no node."""
    return snapshot(
        tmp_path,
        deployment("llm", 3, 8),
        replica_set("llm", "5c6b", 3, 8),
        *(pending_pod(f"llm-{i}", "llm-5c6b", "5c6b", 8) for i in range(3)),
        deployment("embed", 2, 1),
        replica_set("embed", "7d9f", 2, 1),
        *(pending_pod(f"embed-{i}", "embed-7d9f", "7d9f", 1) for i in range(2)),
    )


def calibrate(tmp_path: Path) -> Path:
    result = CliRunner().invoke(app, ["startup", str(EXAMPLE), "--calibrate", "--out", str(tmp_path / "cal")])
    assert result.exit_code == 0, result.output
    return tmp_path / "cal" / "calibration.yaml"


def changed(snapshot_path: Path, *changes: Path) -> Scenario:
    return load_sides([snapshot_path], list(changes), "30m")[1]


def test_calibration_yaml_feeds_whatif_every_measured_stage(tmp_path: Path) -> None:
    """The changed side's llm pods and their Deployment's template carry the measured readiness (3
    samples: lognormal {median 104s, p95 118s}) as gpufleet.io/warmup and the 9.88 GB image; embed's
    its 2 samples; the a100 NodePool the measured boot and join; the snapshot has no Simulation, so
    the Change's set creates spec.registry.bandwidth (median size / pull time, 236.3MB/s)."""
    scenario = changed(the_dumps_workloads(tmp_path), calibrate(tmp_path))
    llm = {"median": "104s", "p95": "118s"}
    behaviors = {bare.pod.name: bare.pod.behavior for bare in scenario.pods}
    assert {name: b.warmup for name, b in behaviors.items()} == {
        "llm-0": llm, "llm-1": llm, "llm-2": llm,
        "embed-0": {"median": "19s", "p95": "21s"}, "embed-1": {"median": "19s", "p95": "21s"},
    }  # fmt: skip
    assert {name: b.image_size_bytes for name, b in behaviors.items() if name.startswith("llm")} == {
        f"llm-{i}": 9.88e9 for i in range(3)
    }
    assert behaviors["embed-0"].image_size_bytes is None  # already present on its node: no pull measured
    templates = {d.name: d.template.behavior for d in scenario.deployments}
    assert (templates["llm"].warmup, templates["llm"].image_size_bytes) == (llm, 9.88e9)
    # the ReplicaSet was edited with its Deployment: still its current one, no rollout
    assert scenario.owned["Deployment/ml/llm"].replica_set == "llm-5c6b"
    (pool,) = scenario.node_pools
    assert (pool.name, dict(pool.provisioning)) == (
        "a100", {"boot": {"median": "6s", "p95": "8s"}, "join": {"median": "45s", "p95": "61s"}}
    )  # fmt: skip
    assert scenario.simulation.registry_bandwidth == 236.3e6


def test_whatif_with_the_calibration_scales_up_the_measured_pool_and_serves_the_llm_pods(
    tmp_path: Path,
) -> None:
    """Baseline: no node, nothing starts. Changed: the a100 pool (max 3) takes the three 8-GPU pods,
    each serving after its measured node start, its image pull (9.88 GB at the measured bandwidth)
    and its warm-up drawn from the measured readiness."""
    calibration = calibrate(tmp_path)
    args = ["whatif", str(the_dumps_workloads(tmp_path)), str(calibration), "--for", "30m"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "w")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "w" / "changed" / "summary.json").read_text())
    serving = {p["name"]: p for p in summary["pods"] if p["name"].startswith("ml/llm") and p.get("working_s")}
    assert len(serving) == 3
    for pod in serving.values():
        stages = pod["stages"]
        assert stages["image_pull"] == pytest.approx(9.88e9 / 236.3e6, abs=1e-3)  # 41.8 s
        # lognormal median 104 s, p95 118 s: sigma = ln(118/104)/1.645 = 0.077; within 4 sigma
        assert 76 < stages["warmup"] < 142, pod
        assert stages["node_provisioning"] > 40  # boot (6 s) and join (45 s) medians
    baseline = json.loads((tmp_path / "w" / "baseline" / "summary.json").read_text())
    assert not any(p.get("working_s") for p in baseline["pods"])


def whatif_args(tmp_path: Path, change_path: Path) -> list[str]:
    return ["whatif", str(the_dumps_workloads(tmp_path)), str(change_path), "--out", str(tmp_path / "w")]


def change(tmp_path: Path, pods: list[dict[str, Any]], name: str = "c") -> Path:
    path = tmp_path / f"{name}.yaml"
    body = {"apiVersion": "gpufleet.io/v1alpha1", "kind": "Change", "metadata": {"name": name}}
    path.write_text(json.dumps({**body, "spec": {"pods": pods}}))
    return path


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (
            {"gpufleet.io/warmup": "soon"},
            'Change/c): spec.pods[0].set.annotations.gpufleet.io/warmup: Invalid value: "soon"',
        ),
        (
            {"gpufleet.io/duration": "1h"},
            "Change/c): spec.pods[0].set.annotations.gpufleet.io/duration: Unsupported value: "
            '"gpufleet.io/duration": supported values: "gpufleet.io/warmup"',
        ),
    ],
)
def test_a_change_with_a_bad_start_up_annotation_is_one_line_naming_document_and_field(
    tmp_path: Path, annotations: dict[str, str], expected: str
) -> None:
    """Read with kube.pod_annotations' parsers, as on a pod; only the start-up annotations may be set."""
    edit = {
        "selector": {"owner": {"kind": "ReplicaSet", "name": "llm-5c6b"}},
        "set": {"annotations": annotations},
    }
    result = CliRunner().invoke(app, whatif_args(tmp_path, change(tmp_path, [edit])))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], result.output
    assert not (tmp_path / "w").exists()


def test_selector_owner_deployment_picks_its_pods_through_its_replica_sets(tmp_path: Path) -> None:
    """A Deployment's pods are its ReplicaSets' (getReplicaSetsForDeployment): llm-5c6b's, in the
    snapshot and owned by llm, and llm-0a1b's, absent but named <deployment>-<pod-template-hash>;
    not embed's. Its template and its ReplicaSet's get the annotation, so llm-5c6b stays current."""
    path = snapshot(
        tmp_path,
        deployment("llm", 3, 8),
        replica_set("llm", "5c6b", 2, 8),
        pending_pod("llm-a", "llm-5c6b", "5c6b", 8),
        pending_pod("llm-b", "llm-0a1b", "0a1b", 8),
        deployment("embed", 1, 1),
        replica_set("embed", "7d9f", 1, 1),
        pending_pod("embed-a", "embed-7d9f", "7d9f", 1),
    )
    edit = {
        "selector": {"namespace": "ml", "owner": {"kind": "Deployment", "name": "llm"}},
        "set": {"annotations": {"gpufleet.io/warmup": "90s", "gpufleet.io/model-size": "140GB"}},
    }
    scenario = changed(path, change(tmp_path, [edit]))
    warmups = {bare.pod.name: bare.pod.behavior.warmup for bare in scenario.pods}
    assert warmups == {"llm-a": "90s", "llm-b": "90s", "embed-a": None}
    templates = {d.name: d.template.behavior for d in scenario.deployments}
    assert (templates["llm"].warmup, templates["llm"].model_size_bytes) == ("90s", 140e9)
    assert templates["embed"].warmup is None
    assert scenario.owned["Deployment/ml/llm"].replica_set == "llm-5c6b"


def test_selector_owner_stateful_set_edits_its_pods_and_its_template(tmp_path: Path) -> None:
    """A StatefulSet makes its pods from ``spec.template``: the edit reaches its pending pod (its controlling
    ownerReference) and its template, so the pods it makes again in the run (``triton-1``) get it too."""
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "triton", "namespace": "ml", "uid": "uid-triton"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "triton"}},
            "template": template("triton", 1),
        },
    }
    pod = pending_pod("triton-0", "x-y", "y", 1)
    pod["metadata"]["labels"] = {"app": "triton"}
    pod["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "triton",
            "uid": "uid-triton",
            "controller": True,
        }
    ]
    edit = {
        "selector": {"namespace": "ml", "owner": {"kind": "StatefulSet", "name": "triton"}},
        "set": {"annotations": {"gpufleet.io/warmup": "45s"}},
    }
    scenario = changed(snapshot(tmp_path, sts, pod), change(tmp_path, [edit]))
    assert {bare.pod.name: bare.pod.behavior.warmup for bare in scenario.pods} == {"triton-0": "45s"}
    [stateful_set] = [w for w in scenario.other_workloads if getattr(w, "name", "") == "triton"]
    assert stateful_set.template.behavior.warmup == "45s"


def test_selector_owner_that_owns_nothing_in_the_snapshot_is_an_error(tmp_path: Path) -> None:
    edit = {
        "selector": {"owner": {"kind": "Job", "name": "train"}},
        "set": {"annotations": {"gpufleet.io/warmup": "9s"}},
    }
    result = CliRunner().invoke(app, whatif_args(tmp_path, change(tmp_path, [edit])))
    assert result.exit_code == 2
    assert "spec.pods[0].selector: Invalid value" in result.output
    assert "selects no Pod or pod template of the snapshot" in result.output


def test_a_measured_pod_without_a_controller_is_calibrated_by_its_name(tmp_path: Path) -> None:
    """ml/embed-0 without its ownerReference: its own edit (selector.names), beside its former
    ReplicaSet's (embed-1 alone); one sample each: a fixed duration."""
    dump = json.loads(EXAMPLE.read_text())
    bare = next(i for i in dump["items"] if i["kind"] == "Pod" and i["metadata"]["name"] == "embed-0")
    del bare["metadata"]["ownerReferences"]
    (tmp_path / "dump.json").write_text(json.dumps(dump))
    result = CliRunner().invoke(
        app, ["startup", str(tmp_path / "dump.json"), "--calibrate", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    calibration = (tmp_path / "calibration.yaml").read_text()
    assert (
        "      names: [embed-0]\n    set:\n      annotations:\n        gpufleet.io/warmup: 21s  # 1 sample"
        in calibration
    )
    pod = pending_pod("embed-0", "embed-7d9f", "7d9f", 1)
    del pod["metadata"]["ownerReferences"]
    path = snapshot(
        tmp_path,
        pod,
        pending_pod("embed-1", "embed-7d9f", "7d9f", 1),
        pending_pod("llm-0", "llm-5c6b", "5c6b", 8),
    )
    warmups = {
        bare.pod.name: bare.pod.behavior.warmup for bare in changed(path, tmp_path / "calibration.yaml").pods
    }
    assert warmups == {"embed-0": "21s", "embed-1": "19s", "llm-0": {"median": "104s", "p95": "118s"}}
