"""KubeRay's RayCluster (``gpufleet.workloads.raycluster``): its reader, the pods the operator makes
and keeps (ray-operator/controllers/ray/raycluster_controller.go ``reconcilePods``, common/pod.go
``labelPod``, utils/util.go ``PodName``, ``GetWorkerGroupDesiredReplicas``), its gang
(batchscheduler/scheduler-plugins) and the Ray autoscaler driving it (``control.kuberay``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import NODE_N0, coscheduling, only_controller, pods_by_name, simulated, write
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.workloads.raycluster import RayClusterController

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/training/raycluster-autoscaling.yaml"


def cluster(groups: str = "", extra: str = "", meta: str = "", head_meta: str = "") -> str:
    return f"""
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
  namespace: ml
{meta}
spec:
{extra}
  headGroupSpec:
    rayStartParams: {{}}
    template:
      metadata: {{annotations: {{{head_meta}}}}}
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.46.0
          resources: {{limits: {{cpu: "2", memory: 8Gi}}}}
  workerGroupSpecs:{groups}
"""


def group(name: str = "gpu", replicas: int = 2, extra: str = "", annotations: str = "") -> str:
    return f"""
  - groupName: {name}
    replicas: {replicas}
    {extra}
    rayStartParams: {{}}
    template:
      metadata: {{annotations: {{{annotations}}}}}
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.46.0
          resources: {{limits: {{cpu: "4", memory: 16Gi, nvidia.com/gpu: "1"}}}}"""


def controller(tmp_path: Path, text: str) -> RayClusterController:
    return only_controller(write(tmp_path, NODE_N0, text), RayClusterController)


# -- the reader and the pods ------------------------------------------------------------------


def test_pods_are_named_and_labelled_as_kuberay_creates_them(tmp_path: Path) -> None:
    """``PodName``: ``<cluster>-head-`` and ``<cluster>-<group>-worker-`` with generateName's 5
    characters (here from a hash: the same on every run); ``labelPod``'s labels; owned by the cluster."""
    c = controller(tmp_path, cluster(group(replicas=2)))
    pods = c.wanted([])
    names = [p.name for p in pods]
    assert len(names) == 3 and names[0].startswith("rc-head-") and len(names[0]) == len("rc-head-") + 5
    assert all(n.startswith("rc-gpu-worker-") and len(n) == len("rc-gpu-worker-") + 5 for n in names[1:])
    assert names == [p.name for p in controller(tmp_path, cluster(group(replicas=2))).wanted([])]
    head, worker = pods[0], pods[1]
    assert head.labels == {
        "ray.io/is-ray-node": "yes",
        "ray.io/cluster": "rc",
        "ray.io/node-type": "head",
        "ray.io/group": "headgroup",
        "ray.io/identifier": "rc-head",
        "app.kubernetes.io/name": "kuberay",
        "app.kubernetes.io/created-by": "kuberay-operator",
    }
    assert worker.labels["ray.io/node-type"] == "worker" and worker.labels["ray.io/group"] == "gpu"
    assert worker.owner is not None and (worker.owner.kind, worker.owner.name) == ("RayCluster", "rc")
    assert worker.namespace == "ml" and c.pod_groups() == []


def test_replicas_are_held_within_min_and_max_times_num_of_hosts(tmp_path: Path) -> None:
    """``GetWorkerGroupDesiredReplicas``: replicas clamped to [min, max], times numOfHosts; a
    suspended group has none."""
    groups = (
        group("a", 5, "minReplicas: 0\n    maxReplicas: 3")
        + group("b", 0, "minReplicas: 2\n    maxReplicas: 4\n    numOfHosts: 2")
        + group("c", 2, "suspend: true")
    )
    pods = controller(tmp_path, cluster(groups)).wanted([])
    by_group = [p.labels["ray.io/group"] for p in pods]
    assert (by_group.count("a"), by_group.count("b"), by_group.count("c")) == (3, 4, 0)


def test_a_suspended_cluster_has_no_pods(tmp_path: Path) -> None:
    assert controller(tmp_path, cluster(group(), "  suspend: true")).wanted([]) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            cluster(group(extra="minReplicas: 3\n    maxReplicas: 1")),
            "spec.workerGroupSpecs[0].minReplicas: Invalid value: 3: worker group gpu has minReplicas 3 "
            "greater than maxReplicas 1",
        ),
        (cluster(group() + group()), "spec.workerGroupSpecs[1].groupName: Invalid value"),
        (
            cluster(group(), "  autoscalerOptions: {upscalingMode: Fast}"),
            'spec.autoscalerOptions.upscalingMode: Unsupported value: "Fast"',
        ),
        (
            cluster(group(extra="suspend: true"), "  enableInTreeAutoscaling: true"),
            "worker group gpu cannot be suspended with Autoscaler enabled",
        ),
        (
            cluster(group(), "  autoscalerOptions: {idleTimeoutSeconds: -1}"),
            "autoscalerOptions.idleTimeoutSeconds must be non-negative, got -1",
        ),
        (
            cluster(group(), meta="  annotations: {gpufleet.io/ray-demand: '[{at: 1m}]'}"),
            "metadata.annotations.gpufleet.io/ray-demand: Invalid value",
        ),
    ],
)
def test_a_bad_manifest_is_an_error_at_its_field(tmp_path: Path, text: str, message: str) -> None:
    """utils/validation.go ``ValidateRayClusterSpec``; the CRD's enums."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, NODE_N0, text))
    assert message in str(caught.value)


def test_a_misspelt_kind_of_the_ray_group_is_an_error(tmp_path: Path) -> None:
    text = cluster(group()).replace("kind: RayCluster", "kind: Raycluster")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, NODE_N0, text))
    assert 'unknown kind "Raycluster" in ray.io/v1' in str(caught.value)


def test_what_is_not_modelled_is_a_warning(tmp_path: Path) -> None:
    extra = "  rayVersion: '2.46.0'\n  gcsFaultToleranceOptions: {redisAddress: redis:6379}\n  managedBy: x"
    text = cluster(group(extra="scaleStrategy: {workersToDelete: [a]}"), extra)
    text = text.replace(
        "    rayStartParams: {}\n    template:",
        "    serviceType: NodePort\n    rayStartParams: {}\n    template:",
        1,
    )
    warned = "\n".join(load_scenario(write(tmp_path, NODE_N0, text)).warnings)
    for field in (
        "gcsFaultToleranceOptions",
        "managedBy",
        "headGroupSpec.serviceType",
        "workerGroupSpecs[0].scaleStrategy",
    ):
        assert f"spec.{field} is not modelled; ignored" in warned, field
    assert "rayVersion" not in warned and "rayStartParams" not in warned


def test_other_batch_schedulers_labels_are_a_warning_and_make_no_gang(tmp_path: Path) -> None:
    """YuniKorn's integration (``ray.io/scheduler-name: yunikorn``, ``yunikorn.apache.org/queue``) is
    not modelled: a warning, no PodGroup."""
    meta = "  labels: {ray.io/scheduler-name: yunikorn, yunikorn.apache.org/queue: q}"
    text = cluster(group(), meta=meta)
    warned = "\n".join(load_scenario(write(tmp_path, NODE_N0, text)).warnings)
    assert "metadata.labels.ray.io/scheduler-name is not modelled" in warned
    assert "metadata.labels.yunikorn.apache.org/queue is not modelled" in warned
    assert controller(tmp_path, text).pod_groups() == []


def test_volcano_s_integration_makes_a_volcano_pod_group_named_after_the_cluster(tmp_path: Path) -> None:
    """``batchscheduler/volcano``: ``ray.io/scheduler-name: volcano`` gives a Volcano PodGroup
    ``ray-<cluster>-pg`` in the ``volcano.sh/queue-name`` queue, ``minMember`` the desired workers + 1;
    the pods name the volcano scheduler and carry the group and their task (``populateAnnotations``)."""
    meta = "  labels: {ray.io/scheduler-name: volcano, volcano.sh/queue-name: q}"
    text = cluster(group(), meta=meta)
    assert not [w for w in load_scenario(write(tmp_path, NODE_N0, text)).warnings if "labels" in w]
    ray = controller(tmp_path, text)
    (pod_group,) = ray.pod_groups()
    pods = ray.wanted([])
    assert (pod_group.name, pod_group.queue, pod_group.min_member) == ("ray-rc-pg", "q", len(pods))
    assert {p.scheduler_name for p in pods} == {"volcano"}
    assert {p.annotations["scheduling.k8s.io/group-name"] for p in pods} == {"ray-rc-pg"}
    assert {p.annotations["volcano.sh/task-spec"] for p in pods} == {"headgroup", "gpu"}


# -- the operator keeps its pods --------------------------------------------------------------


NEVER = "spec:\n        restartPolicy: Never\n"


def test_a_worker_that_ends_is_replaced_under_a_new_name_and_replicas_are_kept(tmp_path: Path) -> None:
    """``shouldDeletePod``: a Succeeded or Failed pod is deleted; the next reconcile creates a new one. Its
    process exits 0 after 10 min under ``restartPolicy: Never``: the pod Succeeded."""
    text = cluster(group(replicas=1, annotations="gpufleet.io/duration: 10m").replace("spec:\n", NEVER, 1))
    pods = pods_by_name(simulated(write(tmp_path, NODE_N0, text), duration_s=1500))
    workers = sorted((p for n, p in pods.items() if "-gpu-worker-" in n), key=lambda p: p["created_s"])
    assert [w["phase"] for w in workers] == ["Succeeded", "Succeeded", "Running"]
    assert [w["created_s"] for w in workers] == pytest.approx([0.0, 600.0, 1200.0], abs=0.1)
    assert len({w["name"] for w in workers}) == 3
    assert sum(1 for n in pods if "-head-" in n) == 1


def test_a_head_that_ends_is_replaced(tmp_path: Path) -> None:
    text = cluster(group(replicas=1), head_meta="gpufleet.io/duration: 5m")
    text = text.replace(
        "spec:\n        containers:\n        - name: ray-head",
        NEVER + "        containers:\n        - name: ray-head",
    )
    pods = pods_by_name(simulated(write(tmp_path, NODE_N0, text), duration_s=400))
    heads = sorted((p for n, p in pods.items() if "-head-" in n), key=lambda p: p["created_s"])
    assert [h["phase"] for h in heads] == ["Succeeded", "Running"]


def test_a_pod_under_restart_policy_always_is_restarted_in_place_by_the_kubelet_not_replaced(
    tmp_path: Path,
) -> None:
    """``shouldDeletePod``: under ``restartPolicy: Always`` (a template's default) KubeRay deletes no pod and
    leaves the restart to the kubelet, which restarts a process that exits 0 too
    (``ShouldContainerBeRestarted``): the worker whose process exits after 10 min restarts in place twice
    in 1500 s (at once each time: it ran more than 10 min, ``hasExpired``), the same pod, Running."""
    text = cluster(group(replicas=1, annotations="gpufleet.io/duration: 10m"))
    pods = pods_by_name(simulated(write(tmp_path, NODE_N0, text), duration_s=1500))
    (worker,) = (p for n, p in pods.items() if "-gpu-worker-" in n)
    assert (worker["phase"], worker["created_s"], worker["restarts"]) == ("Running", 0.0, 2)
    assert worker["last_terminated"] == {"container": "ray-worker", "exit_code": 0, "reason": "Completed"}


# -- the gang and Kueue -----------------------------------------------------------------------


def test_gang_scheduling_makes_a_pod_group_of_the_head_and_desired_workers(tmp_path: Path) -> None:
    """scheduler_plugins.go ``createPodGroup``: named after the cluster, minMember = desired workers
    + 1; ``AddMetadataToChildResource``: the pod-group label and ``scheduler-plugins-scheduler``."""
    text = cluster(
        group(replicas=2) + group("b", 1), meta="  labels: {ray.io/gang-scheduling-enabled: 'true'}"
    )
    c = controller(tmp_path, text)
    (pod_group,) = c.pod_groups()
    assert (pod_group.name, pod_group.namespace, pod_group.min_member) == ("rc", "ml", 4)
    pods = c.wanted([])
    assert {p.pod_group for p in pods} == {"rc"}
    assert {p.scheduler_name for p in pods} == {"scheduler-plugins-scheduler"}


def test_a_gang_that_does_not_fit_places_none_of_its_pods(tmp_path: Path) -> None:
    """9 one-GPU workers on an 8-GPU node: the gang never reaches minMember, no pod starts, no GPU works."""
    text = cluster(group(replicas=9), meta="  labels: {ray.io/gang-scheduling-enabled: 'true'}")
    gangs = coscheduling("scheduler-plugins-scheduler")
    summary = simulated(write(tmp_path, NODE_N0, gangs, text), duration_s=60)
    assert {p["phase"] for p in summary["pods"]} == {"Pending"}
    assert summary["totals"]["gpus_working"] == 0


def test_kueue_pod_sets_are_the_head_and_each_group(tmp_path: Path) -> None:
    """Kueue's RayCluster integration: ``head`` of 1 and one per worker group (replicas x numOfHosts)."""
    c = controller(tmp_path, cluster(group(replicas=2) + group("b", 1, "numOfHosts: 2")))
    assert [(s.name, s.count) for s in c.pod_sets()] == [("head", 1), ("gpu", 2), ("b", 2)]
    assert c.done is False


# -- the Ray autoscaler (the published example) -----------------------------------------------


def _example() -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    summary = simulated([EXAMPLE])
    return pods_by_name(summary), summary


def test_example_ray_demand_grows_the_gpu_group_and_cluster_autoscaler_adds_nodes() -> None:
    """At 1 min 4 {GPU: 1} tasks wait: the autoscaler adds 1 worker (a type with no worker launches 1
    a round) then 3 five seconds later; cluster-autoscaler launches 4 GPU nodes for them."""
    pods, summary = _example()
    workers = sorted(
        (p for n, p in pods.items() if n.startswith("ray-gpu-gpu-worker-")), key=lambda p: p["name"]
    )
    assert len(workers) == 4
    assert sorted(w["created_s"] for w in workers) == [65.0, 70.0, 70.0, 70.0]
    assert {w["node"] for w in workers} == {"a10g-0", "a10g-1", "a10g-2", "a10g-3"}
    (head,) = (p for n, p in pods.items() if n.startswith("ray-gpu-head-"))
    assert head["node"] == "cpu-0" and head["phase"] == "Running"
    assert [n["name"] for n in summary["nodes"] if n["pool"] == "a10g"] == [f"a10g-{i}" for i in range(4)]


def test_example_idle_workers_are_deleted_after_the_idle_timeout_and_nodes_go() -> None:
    """The workers work from 250 s (cluster-autoscaler grows the pool by 4 nodes at 100 s, once the first
    worker, created at 65 s, is no longer very new: ``allPodsAreNew``); Ray places the tasks at its next
    5 s tick (255 s), they end at 855 s; 60 s idle later (915 s) the autoscaler names the workers in
    workersToDelete: deleted (ScaledDown), gone after their 30 s grace period (945 s); the empty nodes leave
    after cluster-autoscaler's scaleDownUnneededTime."""
    pods, summary = _example()
    workers = [p for n, p in pods.items() if n.startswith("ray-gpu-gpu-worker-")]
    assert {w["working_s"] for w in workers} == {250.0}
    assert {w["reason"] for w in workers} == {"ScaledDown"}
    assert {w["deleted_s"] for w in workers} == {915.0 + 30.0}
    gpu_nodes = [n for n in summary["nodes"] if n["pool"] == "a10g"]
    assert all(n["deleted_s"] is not None and n["deleted_s"] > 945.0 for n in gpu_nodes)
    nodes = summary["timeline"]["nodes_by_pool"]["a10g"]
    assert max(nodes) == 4.0 and nodes[-1] == 0.0
