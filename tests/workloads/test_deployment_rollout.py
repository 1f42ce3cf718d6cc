"""A Deployment's rollout in a run (``workloads.deployment``, ``sim.rollouts``): a ``Rollout`` changes its
template and the Deployment controller moves its pods to a new ReplicaSet as pkg/controller/deployment
does (``rolloutRolling``, ``rolloutRecreate``), the old pods deleted in the ReplicaSet controller's order;
``summary.json``'s ``rollouts`` says when each rollout started and ended."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conftest import run_simulation, simulated, write
from gpufleet.kube.rollout import RESTARTED_AT
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import Deployment, DeploymentStrategy, TemplateChange
from gpufleet.sim.summary import build_summary
from gpufleet.workloads.deployment import POD_TEMPLATE_HASH, DeploymentController

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/serving/rollout.yaml"

POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: l4}}
spec:
  min: 0
  max: {max}
  replicas: {replicas}
  template:
    metadata: {{labels: {{nvidia.com/gpu.product: NVIDIA-L4}}}}
    status:
      capacity: {{cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "1"}}
"""

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {replicas}
{extra}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: server
        image: server:v1
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""

ROLLOUT = """
apiVersion: gpufleet.io/v1alpha1
kind: Rollout
metadata: {{name: {name}}}
spec:
  at: {at}
  deployment: web
{change}
"""

NEW_IMAGE = "  template: {spec: {containers: [{name: server, image: server:v2}]}}"
SIMULATION = (
    "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {duration: 30m}\n"
)


def scenario(
    tmp_path: Path, extra: str = "", replicas: int = 2, nodes: int = 2, most: int = 2, *rollouts: str
) -> list[Path]:
    texts = [
        POOL.format(max=most, replicas=nodes),
        DEPLOYMENT.format(replicas=replicas, extra=extra),
        *(rollouts or (ROLLOUT.format(name="v2", at="5m", change=NEW_IMAGE),)),
        SIMULATION,
    ]
    return write(tmp_path, *texts)


def web_pods(summary: dict[str, object]) -> list[dict[str, object]]:
    pods = summary["pods"]
    assert isinstance(pods, list)
    return sorted(pods, key=lambda p: (p["created_s"], p["name"]))


def test_the_example_rolls_out_through_a_node_it_launches_for_the_surge_pod() -> None:
    """examples/serving/rollout.yaml: maxSurge 25 % of 2 rounds up to 1, maxUnavailable down to 0. At 10m the
    new ReplicaSet's first pod is made at once; no GPU is free, so cluster-autoscaler launches l4-2 (its scan
    at 630 s), which is GPU-ready at 815 s. Once that pod has been Ready for minReadySeconds (30 s) one old
    pod (``vllm-0``, the first by name of two equal ones) is deleted and the second new pod made; it binds to
    l4-0 when ``vllm-0`` is gone (its 30 s grace period). Once it is available the last old pod goes and the
    rollout is complete (the old pod still terminating: ``DeploymentComplete`` counts active pods). The
    node left empty is removed after the scale-down delay."""
    summary = simulated([EXAMPLE])
    assert summary["warnings"] == []
    (rollout,) = summary["rollouts"]
    new_rs = rollout["replica_set"]
    assert rollout == {
        "deployment": "serving/vllm",
        "rollout": "vllm-v0-8",
        "replica_set": new_rs,
        "strategy": "RollingUpdate",
        "started_s": 600.0,
        "completed_s": 937.0,
    }
    pods = [(p["name"].split("/")[1], p["created_s"], p["node"], p["deleted_s"]) for p in web_pods(summary)]
    first, second = (name for name, *_ in pods[2:])
    assert pods == [
        ("vllm-0", 0.0, "l4-0", 891.0),
        ("vllm-1", 0.0, "l4-1", 967.0),
        (first, 600.0, "l4-2", None),
        (second, 861.0, "l4-0", None),
    ]
    assert (
        first.startswith(f"{new_rs}-") and second.startswith(f"{new_rs}-") and len(first) == len(new_rs) + 6
    )
    nodes = {n["name"]: n for n in summary["nodes"]}
    assert (nodes["l4-2"]["created_s"], nodes["l4-2"]["gpu_ready_s"]) == (630.0, 815.0)
    assert nodes["l4-1"]["deleted_s"] is not None and nodes["l4-0"]["deleted_s"] is None
    scale_ups = [e for e in summary["autoscaler_events"] if e["kind"] == "scale-up"]
    assert [(e["t_s"], e["pods"]) for e in scale_ups] == [(630.0, [f"serving/{first}"])]


def test_recreate_deletes_every_old_pod_before_it_makes_a_new_one(tmp_path: Path) -> None:
    """``rolloutRecreate``: the old ReplicaSet to 0 at once, the new one scaled up only once no old pod runs
    (``oldPodsRunning``: a pod being deleted counts until it is gone)."""
    summary = simulated(scenario(tmp_path, "  strategy: {type: Recreate}"))
    pods = web_pods(summary)
    old, new = pods[:2], pods[2:]
    assert [p["deleted_s"] for p in old] == [330.0, 330.0]  # deleted at 5m, gone after 30 s of grace
    assert [p["created_s"] for p in new] == [330.0, 330.0]
    (rollout,) = summary["rollouts"]
    assert rollout["strategy"] == "Recreate" and rollout["started_s"] == 300.0
    assert rollout["completed_s"] is not None and rollout["completed_s"] >= 330.0
    assert not [e for e in summary["autoscaler_events"] if e["kind"] == "scale-up"]


def test_no_surge_deletes_an_old_pod_before_it_makes_a_new_one(tmp_path: Path) -> None:
    """maxSurge 0, maxUnavailable 1: the first sync scales the old ReplicaSet down by 1
    (``reconcileOldReplicaSets``), the next the new one up by 1 (``NewRSNewReplicas``): no node is launched,
    the new pod waits for the GPU the old one frees (its 30 s grace period); once it is Ready (at once: no
    image or model to load) the second old pod goes and the second new pod is made."""
    strategy = "  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}"
    summary = simulated(scenario(tmp_path, strategy, 2, 2, 4))
    pods = web_pods(summary)
    assert [p["created_s"] for p in pods] == [0.0, 0.0, 300.0, 330.0]
    assert [p["deleted_s"] for p in pods] == [330.0, 360.0, None, None]
    assert [p["bound_s"] for p in pods[2:]] == [330.0, 360.0]  # each on the GPU an old pod freed
    assert not [e for e in summary["autoscaler_events"] if e["kind"] == "scale-up"]
    (rollout,) = summary["rollouts"]
    assert rollout["completed_s"] == 360.0


def test_a_restart_makes_a_new_replica_set_whose_pods_carry_restarted_at(tmp_path: Path) -> None:
    """``kubectl rollout restart``: the same template but for ``restartedAt``, a new ReplicaSet
    ``web-<hash>``; its pods are labelled ``pod-template-hash`` and named ``<rs>-<5 characters>``."""
    restart = ROLLOUT.format(name="restart", at="5m", change="  restart: true")
    sim = run_simulation(scenario(tmp_path, "", 2, 2, 3, restart))
    summary = build_summary(sim)
    (rollout,) = summary["rollouts"]
    new = [r for r in sim.all_records if r.created_s >= 300.0]
    assert len(new) == 2
    for rec in new:
        assert rec.pod.annotations[RESTARTED_AT] == "1970-01-01T00:05:00Z"
        assert rollout["replica_set"] == f"web-{rec.pod.labels[POD_TEMPLATE_HASH]}"
        assert rec.pod.name.startswith(rollout["replica_set"] + "-")


def test_rolling_back_takes_the_first_replica_set_back(tmp_path: Path) -> None:
    """A second Rollout back to the first template finds its ReplicaSet (``FindNewReplicaSet``: the same
    template): the pods it makes are named as the Deployment's first pods are, ``web-<n>``."""
    back = ROLLOUT.format(
        name="back", at="20m", change="  template: {spec: {containers: [{name: server, image: server:v1}]}}"
    )
    v2 = ROLLOUT.format(name="v2", at="5m", change=NEW_IMAGE)
    summary = simulated(scenario(tmp_path, "", 2, 2, 3, v2, back))
    first, second = summary["rollouts"]
    assert first["completed_s"] is not None and second["completed_s"] is not None
    assert second["replica_set"] != first["replica_set"]
    running = sorted(p["name"] for p in summary["pods"] if p["deleted_s"] is None)
    assert running == ["default/web-2", "default/web-3"]


def test_a_deployment_without_a_rollout_names_and_keeps_its_pods_as_before(tmp_path: Path) -> None:
    """No Rollout: no ``rollouts`` in the summary, pods ``web-0``, ``web-1``."""
    paths = write(
        tmp_path, POOL.format(max=2, replicas=2), DEPLOYMENT.format(replicas=2, extra=""), SIMULATION
    )
    summary = simulated(paths)
    assert "rollouts" not in summary
    assert sorted(p["name"] for p in summary["pods"]) == ["default/web-0", "default/web-1"]


def test_a_change_of_replicas_mid_rollout_is_spread_over_the_replica_sets_in_proportion() -> None:
    """sync.go ``isScalingEvent`` then ``scale``: 10 replicas, maxSurge 2, rolling out (old 10, new 2); an
    HPA asks for 20: ``replicas + maxSurge`` (22) over the 12 there are, each set its share by its
    ``max-replicas`` annotation (12): the old one 10 -> 18, the new one 2 -> 4. The next sync is a rollout
    step again."""
    template = Pod("", labels={"app": "web"})
    strategy = DeploymentStrategy("RollingUpdate", 2, 0)
    controller = DeploymentController(Deployment("web", "default", template, 10, strategy=strategy))
    assert len(controller.wanted()) == 10
    controller.roll(TemplateChange(60.0, replace(template, images=("server:v2",)), "v2hash", "v2"))
    assert controller.sync({}) is True
    assert [rs.counts.replicas for rs in controller.sets] == [10, 2]
    controller.replicas = 20
    assert controller.sync({}) is True
    assert [rs.counts.replicas for rs in controller.sets] == [18, 4]
    assert len(controller.wanted()) == 12 and [len(rs.pods) for rs in controller.sets] == [18, 4]
    assert controller.sync({}) is False  # no surge left (22 pods) and none available to scale down
