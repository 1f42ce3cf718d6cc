"""LeaderWorkerSet (``gpufleet.workloads.leaderworkerset``): its reader (kubernetes-sigs/lws
``pkg/webhooks/leaderworkerset_webhook.go``), the pods its controllers make
(``pkg/controllers/leaderworkerset_controller.go``, ``pod_controller.go``, ``pkg/webhooks/pod_webhook.go``),
how a group restarts, its scale subresource under an HPA and Traffic, Kueue's per-group admission
(kueue ``pkg/controller/jobs/leaderworkerset``), and lws's published examples."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import (
    SIMULATION_10M,
    a10_nodes,
    kueue_queues,
    only_controller,
    pods_by_name,
    simulated,
    simulated_controller,
    write,
)
from gpufleet.cli import app
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.pod import Requirement
from gpufleet.workloads.leaderworkerset import LeaderWorkerSetController
from shared_files import UPSTREAM

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/serving/lws-hpa.yaml"


def nodes(count: int = 1, per_rack: int = 1) -> str:
    return a10_nodes(count, "rack: r{rack}", per_rack)


def template(gpus: int = 1, annotations: str = "", policy: str = "") -> str:
    restart = f"\n        restartPolicy: {policy}" if policy else ""
    return f"""
      metadata:
        annotations: {{{annotations}}}
      spec:{restart}
        containers:
        - name: c
          image: server
          resources:
            limits: {{nvidia.com/gpu: {gpus}}}"""


def lws(
    replicas: int | None = 1,
    size: int | None = 3,
    extra: str = "",
    worker: str = "",
    leader: str | None = None,
    annotations: str = "",
    name: str = "llm",
) -> str:
    lines = [f"  replicas: {replicas}" if replicas is not None else "", "  leaderWorkerTemplate:"]
    if size is not None:
        lines.append(f"    size: {size}")
    if leader is not None:
        lines.append(f"    leaderTemplate:{leader}")
    lines.append(f"    workerTemplate:{worker or template()}")
    return f"""
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: {name}
  namespace: ml
  annotations: {{{annotations}}}
spec:
{chr(10).join(line for line in lines if line)}
{extra}
"""


def controller(tmp_path: Path, *texts: str) -> LeaderWorkerSetController:
    return only_controller(write(tmp_path, nodes(), *texts), LeaderWorkerSetController)


def run(
    paths: list[Path], duration_s: float | None = None
) -> tuple[dict[str, Any], LeaderWorkerSetController, dict[str, Any]]:
    """The scenario simulated: its pods by name, the LeaderWorkerSet's controller, the summary."""
    return simulated_controller(paths, "LeaderWorkerSet/ml/llm", LeaderWorkerSetController, duration_s)


# -- the reader and the pods -------------------------------------------------------------------


def test_groups_are_a_leader_and_workers_named_labelled_and_owned_as_lws_makes_them(tmp_path: Path) -> None:
    """The leader StatefulSet ``<lws>`` has the leaders ``<lws>-<group>``; each leader's worker
    StatefulSet ``<lws>-<group>`` has ``<lws>-<group>-<worker>``, worker 1 to size-1
    (``WithOrdinals(...WithStart(1))``); labels and annotations of the two controllers and the pod
    webhook (``group-key``: ``genGroupUniqueKey`` = SHA-1 of ``<namespace>/<leader>``)."""
    made = controller(tmp_path, lws(replicas=2, size=3))
    pods = made.wanted([])
    assert [p.name for p in pods] == ["llm-0", "llm-0-1", "llm-0-2", "llm-1", "llm-1-1", "llm-1-2"]
    leader, worker = pods[3], pods[5]
    assert leader.owner is not None and (leader.owner.kind, leader.owner.name) == ("StatefulSet", "llm")
    assert worker.owner is not None and (worker.owner.kind, worker.owner.name) == ("StatefulSet", "llm-1")
    group_key = hashlib.sha1(b"ml/llm-1").hexdigest()
    for pod, index in ((leader, "0"), (worker, "2")):
        assert pod.namespace == "ml"
        assert pod.labels["leaderworkerset.sigs.k8s.io/name"] == "llm"
        assert pod.labels["leaderworkerset.sigs.k8s.io/group-index"] == "1"
        assert pod.labels["leaderworkerset.sigs.k8s.io/worker-index"] == index
        assert pod.labels["leaderworkerset.sigs.k8s.io/group-key"] == group_key
        assert pod.labels["leaderworkerset.sigs.k8s.io/template-revision-hash"] == made.lws.revision
        assert pod.annotations["leaderworkerset.sigs.k8s.io/size"] == "3"
    assert worker.annotations["leaderworkerset.sigs.k8s.io/leader-name"] == "llm-1"
    assert "leaderworkerset.sigs.k8s.io/leader-name" not in leader.annotations
    assert made.lws.revision and set(made.lws.revision) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_groups_pods_carry_the_statefulset_controllers_identity_labels(tmp_path: Path) -> None:
    """The leaders and workers are StatefulSet pods: the StatefulSet controller labels each with its
    name and ordinal (``updateIdentity``: ``statefulset.kubernetes.io/pod-name``,
    ``apps.kubernetes.io/pod-index``), the leader's ordinal its group, the worker's its worker index."""
    pods = {p.name: p for p in controller(tmp_path, lws(replicas=2, size=3)).wanted([])}
    for name, index in (("llm-1", "1"), ("llm-1-2", "2"), ("llm-0-1", "1")):
        assert pods[name].labels["statefulset.kubernetes.io/pod-name"] == name
        assert pods[name].labels["apps.kubernetes.io/pod-index"] == index


def test_defaults_are_one_group_of_one_pod_that_recreates_its_group(tmp_path: Path) -> None:
    """``+kubebuilder:default=1`` for replicas and size, ``Default``: RecreateGroupOnPodRestart,
    LeaderCreated; size 1 has no workers; without a leaderTemplate the leader uses the worker's."""
    made = controller(tmp_path, lws(replicas=None, size=None))
    assert [p.name for p in made.wanted([])] == ["llm-0"]
    assert (made.lws.restart_policy, made.lws.startup_policy) == (
        "RecreateGroupOnPodRestart",
        "LeaderCreated",
    )
    assert made.lws.leader_template is made.lws.worker_template


def test_the_deprecated_default_restart_policy_is_none(tmp_path: Path) -> None:
    made = controller(
        tmp_path, lws(extra="").replace("    size: 3", "    size: 3\n    restartPolicy: Default")
    )
    assert made.lws.restart_policy == "None"


def test_a_leader_template_makes_the_leaders(tmp_path: Path) -> None:
    made = controller(tmp_path, lws(size=2, leader=template(gpus=4), worker=template(gpus=2)))
    leader, worker = made.wanted([])
    assert (leader.gpus, worker.gpus) == (4, 2)


ROLLING = "  rolloutStrategy:\n    rollingUpdateConfiguration: {{{}}}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            lws(size=0),
            "spec.leaderWorkerTemplate.size: Invalid value: 0: size must be equal or greater than 1",
        ),
        (lws(replicas=1000001), "spec.replicas: Invalid value: 1000001: replicas must be equal or less than"),
        (lws(replicas=-1), "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        (
            lws().replace("    size: 3", "    size: 3\n    restartPolicy: Always"),
            'spec.leaderWorkerTemplate.restartPolicy: Unsupported value: "Always"',
        ),
        (
            lws(extra="  startupPolicy: LeaderScheduled"),
            'spec.startupPolicy: Unsupported value: "LeaderScheduled"',
        ),
        (
            lws(extra=ROLLING.format("maxUnavailable: 0, maxSurge: 0")),
            "spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable: Invalid value: 0: must not be 0 "
            "when `maxSurge` is 0",
        ),
        (
            lws(extra=ROLLING.format("maxSurge: 120%")),
            'spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge: Invalid value: "120%": must not be '
            "greater than 100%",
        ),
        (
            lws(extra=ROLLING.format("maxUnavailable: ten")),
            'spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable: Invalid value: "ten": a valid '
            "percent string",
        ),
        (lws(name="Llm"), 'metadata.name: Invalid value: "Llm": a DNS-1035 label must consist of lower case'),
        (
            lws(size=5).replace("    size: 5", "    size: 5\n    subGroupPolicy: {subGroupSize: 3}"),
            "spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize: Invalid value: 3: size or size - 1 "
            "must be divisible by subGroupSize",
        ),
        (
            lws(annotations="leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology: rack"),
            "metadata.annotations.leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology: Invalid value: "
            '"rack": cannot have subgroup-exclusive-topology without subGroupSize set',
        ),
        (
            lws(worker=template(policy="Never")),
            'spec.leaderWorkerTemplate.workerTemplate.spec.restartPolicy: Unsupported value: "Never"',
        ),
        (
            lws().replace("    workerTemplate:", "    workerTemplates:"),
            "spec.leaderWorkerTemplate.workerTemplate",
        ),
    ],
)
def test_a_bad_manifest_is_an_error_at_its_field(tmp_path: Path, text: str, message: str) -> None:
    """``generalValidate``, ``validateUpdateSubGroupPolicy``, the CRD's enums, and apps/v1's
    StatefulSet pod templates (restartPolicy Always)."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), text))
    assert message in str(caught.value)


def test_gpufleet_validate_exits_2_on_a_bad_leaderworkerset(tmp_path: Path) -> None:
    (path,) = write(tmp_path, lws(size=0))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "size must be equal or greater than 1" in result.output and "Traceback" not in result.output


def test_a_misspelt_kind_of_the_lws_group_is_an_error(tmp_path: Path) -> None:
    text = lws().replace("kind: LeaderWorkerSet", "kind: LeaderWorkerSets")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), text))
    assert 'unknown kind "LeaderWorkerSets" in leaderworkerset.x-k8s.io/v1' in str(caught.value)


def test_volume_claims_are_warnings_and_rollout_and_network_settings_are_read(tmp_path: Path) -> None:
    """A rolling update needs a template change, which a scenario does not have: ``rolloutStrategy``
    is validated and read, no warning; ``networkConfig`` only names Services."""
    extra = (
        ROLLING.format("maxUnavailable: 25%, maxSurge: 1, partition: 0")
        + "\n  networkConfig: {subdomainPolicy: UniquePerReplica}"
    )
    text = lws(extra=extra).replace(
        "    size: 3", "    size: 3\n    volumeClaimTemplates: [{metadata: {name: cache}}]"
    )
    scenario = load_scenario(write(tmp_path, nodes(), text))
    warned = [w for w in scenario.warnings if "LeaderWorkerSet" in w]
    assert len(warned) == 1 and "spec.leaderWorkerTemplate.volumeClaimTemplates is not modelled" in warned[0]


def test_subgroups_label_their_pods_and_the_leader_is_the_first_subgroups_extra_pod(tmp_path: Path) -> None:
    """``getSubGroupIndex``: size 5, subGroupSize 2 -- size - 1 is divisible, so the leader joins subgroup 0
    (workers 1, 2) and workers 3, 4 are subgroup 1; ``subgroup-key`` = SHA-1 of ``<leader>/<index>``;
    ``subgroup-exclusive-topology`` gives each subgroup its own domain."""
    text = lws(size=5, annotations="leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology: rack").replace(
        "    size: 5", "    size: 5\n    subGroupPolicy: {subGroupSize: 2}"
    )
    pods = {p.name: p for p in controller(tmp_path, text).wanted([])}
    index = {name: p.labels["leaderworkerset.sigs.k8s.io/subgroup-index"] for name, p in pods.items()}
    assert index == {"llm-0": "0", "llm-0-1": "0", "llm-0-2": "0", "llm-0-3": "1", "llm-0-4": "1"}
    key = hashlib.sha1(b"llm-0/1").hexdigest()
    worker = pods["llm-0-3"]
    assert worker.labels["leaderworkerset.sigs.k8s.io/subgroup-key"] == key
    assert worker.pod_affinity is not None
    (together,) = worker.pod_affinity.required
    assert together.topology_key == "rack"
    assert together.selector == (Requirement("leaderworkerset.sigs.k8s.io/subgroup-key", "In", (key,)),)


# -- how groups start and restart -------------------------------------------------------------


def test_leader_created_makes_the_workers_with_their_leader_and_leader_ready_once_it_is_ready(
    tmp_path: Path,
) -> None:
    """``PodReconciler.Reconcile``: under LeaderReady the worker StatefulSet waits for ``IsPodReady``."""
    slow = template(annotations="gpufleet.io/warmup: 2m")
    pods, _, _ = run(write(tmp_path, nodes(), lws(size=2, leader=slow)), duration_s=600)
    assert pods["llm-0-1"]["created_s"] == 0.0
    text = lws(size=2, leader=slow, extra="  startupPolicy: LeaderReady")
    pods, _, _ = run(write(tmp_path, nodes(), text), duration_s=600)
    assert pods["llm-0"]["working_s"] == 120.0
    assert pods["llm-0-1"]["created_s"] == 120.0


def test_a_container_restart_recreates_its_whole_group_under_recreate_group_on_pod_restart(
    tmp_path: Path,
) -> None:
    """``handleRestartPolicy``: a worker's process exits 0 at 5 min and the kubelet restarts it in place
    (``restartPolicy: Always``, ``ShouldContainerBeRestarted``); its restart count (``ContainerRestarted``)
    deletes its leader, and the workers go with it (their StatefulSet is the leader's); the group is made
    again under its names, once the old pods are gone (a StatefulSet makes a pod again only after its
    namesake is deleted)."""
    text = lws(size=3, worker=template(annotations="gpufleet.io/duration: 5m"), leader=template())
    pods, made, summary = run(write(tmp_path, nodes(), text), duration_s=420)
    assert made.recreated == {0: 1}
    # the leader and the other worker get their 30 s grace period; the names come back once they are gone
    assert {p: pods[p]["created_s"] for p in ("llm-0", "llm-0-1", "llm-0-2")} == {
        "llm-0": 330.0,
        "llm-0-1": 330.0,
        "llm-0-2": 330.0,
    }
    assert {pods[p]["phase"] for p in pods} == {"Running"}
    first = [p for p in summary["pods"] if p["name"] == "ml/llm-0-2" and p["created_s"] == 0.0]
    assert [(p["restarts"], p["reason"], p["deleted_s"]) for p in first] == [(1, "RecreateGroup", 330.0)]


def test_under_none_a_restarted_container_restarts_in_place_and_its_group_runs_on(tmp_path: Path) -> None:
    """``None``: ``handleRestartPolicy`` does nothing; the kubelet restarts the workers' processes, which
    exit 0 at 5 min, in place (at once, the first time), and no pod is made again."""
    text = lws(size=3, worker=template(annotations="gpufleet.io/duration: 5m"), leader=template())
    text = text.replace("    size: 3", "    size: 3\n    restartPolicy: None")
    pods, made, _ = run(write(tmp_path, nodes(), text), duration_s=420)
    assert made.recreated == {}
    assert {p: (pods[p]["created_s"], pods[p]["restarts"]) for p in ("llm-0", "llm-0-1", "llm-0-2")} == {
        "llm-0": (0.0, 0),
        "llm-0-1": (0.0, 1),
        "llm-0-2": (0.0, 1),
    }


def test_under_none_only_the_pod_deleted_is_made_again(tmp_path: Path) -> None:
    """``None`` (the StatefulSet's own behaviour): the workers deleted at 5 min are made again once gone
    (their 30 s grace period), their leader runs on."""
    text = lws(size=3, worker=template(annotations="gpufleet.io/delete-at: 5m"), leader=template())
    text = text.replace("    size: 3", "    size: 3\n    restartPolicy: None")
    pods, made, _ = run(write(tmp_path, nodes(), text), duration_s=420)
    assert made.recreated == {}
    assert pods["llm-0"]["created_s"] == 0.0
    assert pods["llm-0-1"]["created_s"] == 330.0 and pods["llm-0-2"]["created_s"] == 330.0


@pytest.mark.parametrize(
    ("policy", "recreated"), [("RecreateGroupAfterStart", {}), ("RecreateGroupOnPodRestart", {0: 1})]
)
def test_recreate_group_after_start_leaves_a_group_with_a_pending_pod_alone(
    tmp_path: Path, policy: str, recreated: dict[int, int]
) -> None:
    """``pendingPodsInGroup``: under RecreateGroupAfterStart a group is not recreated while one of its
    pods is Pending (here a worker that does not fit: 1 + 4 + 4 GPUs on a node of 8); the worker whose
    process exited at 5 min only restarts in place."""
    worker = template(gpus=4, annotations="gpufleet.io/duration: 5m")
    text = lws(size=3, worker=worker, leader=template()).replace(
        "    size: 3", f"    size: 3\n    restartPolicy: {policy}"
    )
    pods, made, _ = run(write(tmp_path, nodes(), text), duration_s=400)
    assert made.recreated == recreated
    assert pods["llm-0"]["created_s"] == (330.0 if recreated else 0.0)


def test_a_leader_that_ends_takes_its_workers_even_under_none(tmp_path: Path) -> None:
    """The worker StatefulSet is owned by the leader pod: the garbage collector deletes it with the
    leader, whatever the restart policy: the leader deleted at 5 min is gone at 330 s, its workers 30 s
    later, and the group is made again."""
    text = lws(size=2, leader=template(annotations="gpufleet.io/delete-at: 5m"))
    text = text.replace("    size: 2", "    size: 2\n    restartPolicy: None")
    pods, made, _ = run(write(tmp_path, nodes(), text), duration_s=420)
    assert made.recreated == {0: 1}
    assert pods["llm-0"]["created_s"] == 360.0 and pods["llm-0-1"]["created_s"] == 360.0


def test_exclusive_topology_puts_each_group_alone_in_its_domain(tmp_path: Path) -> None:
    """``SetExclusiveAffinities`` on the leader (affinity to its group-key, anti-affinity to any other)
    and ``setNodeSelectorForWorkerPods`` on its workers: two racks of two nodes, three groups -- two run,
    each in a rack of its own, the third leader has no rack left."""
    text = lws(replicas=3, size=2, annotations="leaderworkerset.sigs.k8s.io/exclusive-topology: rack")
    pods, _, _ = run(write(tmp_path, nodes(4, per_rack=2), text), duration_s=120)
    rack = {name: int(p["node"].split("-")[1]) // 2 for name, p in pods.items() if p["node"] is not None}
    assert rack["llm-0"] == rack["llm-0-1"] and rack["llm-1"] == rack["llm-1-1"]
    assert rack["llm-0"] != rack["llm-1"]
    assert pods["llm-2"]["phase"] == "Pending" and "llm-2-1" not in pods  # workers wait for the leader
    assert "didn't match pod anti-affinity rules" in pods["llm-2"]["message"]


# -- the scale subresource ----------------------------------------------------------------------

HPA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: llm, namespace: ml}
spec:
  scaleTargetRef: {apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: llm}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Pods
    pods:
      metric: {name: DCGM_FI_DEV_GPU_UTIL}
      target: {type: AverageValue, averageValue: "70"}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 0}
---
apiVersion: gpufleet.io/v1alpha1
kind: Traffic
metadata: {name: chat, namespace: ml}
spec:
  target: llm
  targetKind: LeaderWorkerSet
  perReplicaRps: 10
  rps:
  - {at: 0s, value: 30}
  - {at: 5m, value: 0}
"""


def test_an_hpa_scales_groups_down_whole_from_the_highest(tmp_path: Path) -> None:
    """Three groups serve 30 rps at 10 each; at 5m the traffic stops, the leaders' utilisation falls to
    0 and the HPA sets replicas to 1: groups 2 and 1 go whole (the leader StatefulSet's highest
    ordinals and their workers), reason ScaledDown."""
    pods, made, summary = run(write(tmp_path, nodes(2), lws(replicas=3, size=2), HPA), duration_s=600)
    assert made.replicas == 1 and made.active == ["ml/llm-0"]
    for name in ("llm-1", "llm-1-1", "llm-2", "llm-2-1"):
        assert pods[name]["reason"] == "ScaledDown" and pods[name]["deleted_s"] is not None
    assert pods["llm-0"]["phase"] == pods["llm-0-1"]["phase"] == "Running"
    series = summary["timeline"]["replicas"]["LeaderWorkerSet/ml/llm"]
    assert series[0] == 3.0 and series[-1] == 1.0


def test_the_example_grows_from_one_group_to_three_with_its_traffic() -> None:
    """examples/serving/lws-hpa.yaml: one vLLM group (leader + worker, 8 H100 each) serves 8 rps; at
    15m 50 rps exceed it, the leaders' GPU utilisation reaches 100% and the HPA adds a group, then a
    third once the second serves; each group lands on two new nodes the pool launches for it, 30 s after
    its pods' creation (cluster-autoscaler's wait for new GPU pods, ``allPodsAreNew``: the second group's
    nodes at 930 s, so it serves, and the HPA adds the third, 30 s later than the pods' creation alone
    would give)."""
    summary = simulated([EXAMPLE])
    pods = pods_by_name(summary)
    assert sorted(pods) == ["vllm-0", "vllm-0-1", "vllm-1", "vllm-1-1", "vllm-2", "vllm-2-1"]
    assert {p["phase"] for p in pods.values()} == {"Running"} and {p["gpus"] for p in pods.values()} == {8}
    assert len({p["node"] for p in pods.values()}) == 6
    assert {n: pods[n]["created_s"] for n in ("vllm-0", "vllm-1", "vllm-2")} == {
        "vllm-0": 0.0,
        "vllm-1": 900.0,
        "vllm-2": 1455.0,
    }
    times, replicas = (
        summary["timeline"]["t_s"],
        summary["timeline"]["replicas"]["LeaderWorkerSet/default/vllm"],
    )
    steps = [
        (t, r) for i, (t, r) in enumerate(zip(times, replicas, strict=True)) if i == 0 or r != replicas[i - 1]
    ]
    assert steps == [(0.0, 1.0), (900.0, 2.0), (1460.0, 3.0)]
    assert summary["timeline"]["nodes_by_pool"]["h100"][-1] == 6.0


KEDA = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: llm, namespace: ml}
spec:
  scaleTargetRef: {apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: llm}
  minReplicaCount: 1
  maxReplicaCount: 3
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus:9090
      threshold: "10"
      query: 'sum(requests_per_second{namespace="ml", statefulset="llm"})'
---
apiVersion: gpufleet.io/v1alpha1
kind: Traffic
metadata: {name: chat, namespace: ml}
spec: {target: llm, targetKind: LeaderWorkerSet, perReplicaRps: 10, rps: [{at: 0s, value: 30}]}
"""


def test_a_keda_prometheus_trigger_on_the_leaders_series_scales_the_groups(tmp_path: Path) -> None:
    """A ScaledObject aimed at the LeaderWorkerSet: its query sums the leaders' series (a StatefulSet's
    pods, labelled ``statefulset=<lws>``; the workers have no request metrics): 30 rps at a threshold of
    10 a group -- 3 groups."""
    pods, made, summary = run(write(tmp_path, nodes(2), lws(replicas=1, size=2), KEDA), duration_s=600)
    assert made.replicas == 3
    assert sorted(pods) == ["llm-0", "llm-0-1", "llm-1", "llm-1-1", "llm-2", "llm-2-1"]
    assert summary["timeline"]["replicas"]["LeaderWorkerSet/ml/llm"][0] == 1.0


def test_an_hpa_aimed_at_a_leaderworkerset_is_no_warning(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, nodes(), lws(), HPA))
    assert not [w for w in scenario.warnings if "scaleTargetRef" in w]


def test_traffic_aimed_at_a_missing_leaderworkerset_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), lws(name="other"), HPA))
    assert 'spec.target: Invalid value: "llm": no LeaderWorkerSet in namespace ml' in str(caught.value)


# -- Kueue ------------------------------------------------------------------------------------

KUEUE = kueue_queues("default", 4, "team", "ml", "v1beta1")


def test_kueue_admits_each_group_as_a_workload_of_its_own(tmp_path: Path) -> None:
    """Kueue's integration makes a Workload per group (``filterWorkloads``), pod sets ``leader`` (1) and
    ``worker`` (size - 1): a quota of 4 GPUs admits one group of 2 pods of 2 GPUs; the other's pods
    stay gated."""
    text = lws(replicas=2, size=2, leader=template(gpus=2), worker=template(gpus=2)).replace(
        "  namespace: ml\n", "  namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: team}\n"
    )
    pods, made, summary = run(write(tmp_path, nodes(), KUEUE, text), duration_s=120)
    workloads = {w["name"]: w for w in summary["kueue"]["workloads"]}
    assert sorted(workloads) == ["LeaderWorkerSet/ml/llm-0", "LeaderWorkerSet/ml/llm-1"]
    assert workloads["LeaderWorkerSet/ml/llm-0"]["admissions"] == [0.0]
    assert workloads["LeaderWorkerSet/ml/llm-1"]["admissions"] == []
    assert pods["llm-0"]["phase"] == pods["llm-0-1"]["phase"] == "Running"
    assert pods["llm-1"]["phase"] == pods["llm-1-1"]["phase"] == "Pending"
    assert [(s.name, s.count) for s in made.pod_sets()] == [("leader", 2), ("worker", 2)]


# -- lws's published examples --------------------------------------------------------------------


def test_the_published_sample_and_its_hpa_run_three_groups_of_four(tmp_path: Path) -> None:
    """lws ``docs/examples/sample/lws.yaml`` (3 groups of 4 nginx pods) with its HPA (CPU utilisation,
    min 3): no CPU usage is modelled, so the HPA holds 3 groups, as at rest in the docs."""
    (cluster,) = write(tmp_path, nodes(3) + "---\n" + SIMULATION_10M)
    sample = UPSTREAM / "lws/sample"
    summary = simulated([cluster, sample / "lws.yaml", sample / "horizontal-pod-autoscaler.yaml"])
    pods = pods_by_name(summary)
    names = [f"leaderworkerset-sample-{g}" + (f"-{w}" if w else "") for g in range(3) for w in range(4)]
    assert sorted(pods) == sorted(names)
    assert {p["phase"] for p in pods.values()} == {"Running"}
    assert set(summary["timeline"]["replicas"]["LeaderWorkerSet/default/leaderworkerset-sample"]) == {3.0}


def test_the_published_vllm_example_runs_two_groups_on_four_h100_nodes(tmp_path: Path) -> None:
    """lws ``docs/examples/vllm/GPU/lws.yaml``: 2 groups of a leader and a worker, 8 GPUs each (one
    model over 2 nodes), so 4 nodes of 8 H100 -- with the ephemeral storage (800Gi) each pod asks."""
    node = """
apiVersion: v1
kind: Node
metadata: {{name: h100-{i}}}
status:
  capacity: {{cpu: "192", memory: 2Ti, ephemeral-storage: 2Ti, pods: "110", nvidia.com/gpu: "8"}}
"""
    (cluster,) = write(tmp_path, "---".join(node.format(i=i) for i in range(4)) + "---\n" + SIMULATION_10M)
    summary = simulated([cluster, UPSTREAM / "lws/vllm/GPU/lws.yaml"])
    pods = pods_by_name(summary)
    assert sorted(pods) == ["vllm-0", "vllm-0-1", "vllm-1", "vllm-1-1"]
    assert all(p["phase"] == "Running" and p["gpus"] == 8 for p in pods.values())
    assert len({p["node"] for p in pods.values()}) == 4


def test_the_published_kueue_sample_admits_its_two_groups() -> None:
    """Kueue's ``site/static/examples/serving-workloads/sample-leaderworkerset.yaml`` in Kueue's quick
    start queues (9 CPUs): both groups (0.5 CPU each) admitted, one Workload each."""
    paths = [
        UPSTREAM / "_clusters/cpu-nodes.yaml",
        UPSTREAM / "_clusters/sim-1h.yaml",
        UPSTREAM / "kueue/getting-started/quick-start-setup.yaml",
        UPSTREAM / "kueue/serving-workloads/sample-leaderworkerset.yaml",
    ]
    summary = simulated(paths, duration_s=300)
    assert sorted(w["name"] for w in summary["kueue"]["workloads"]) == [
        "LeaderWorkerSet/default/nginx-leaderworkerset-0",
        "LeaderWorkerSet/default/nginx-leaderworkerset-1",
    ]
    assert {p["phase"] for p in summary["pods"]} == {"Running"} and len(summary["pods"]) == 6
