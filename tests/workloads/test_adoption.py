"""Controllers adopt the pods they already own in a cluster snapshot (``kubectl get -A -o json``)
instead of creating their pods again: upstream's ``PodControllerRefManager.ClaimPods``
(pkg/controller/controller_ref_manager.go) claims a pod whose controlling ``ownerReference`` names
the controller (kind, name and uid), and each controller counts what it claimed: the Job
(``getPodsForJob``, ``trackJobStatusAndRemoveFinalizers``), the ReplicaSet (``getPodsForReplicaSet``,
``manageReplicas``), the Deployment through its ReplicaSets (``getReplicaSetsForDeployment``,
``FindNewReplicaSet``) and the DaemonSet (``getNodesToDaemonPods``, ``podsShouldBeOnNode``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from conftest import pods_by_name, simulated
from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.kube.explain import explain_scenario
from gpufleet.model.owned import JOB_COMPLETION_INDEX, Owned
from gpufleet.model.pod import OwnerRef
from gpufleet.workloads import controller_for
from gpufleet.workloads.job import JobController
from gpufleet.workloads.kind import Adopts
from gpufleet.workloads.replicaset import POD_DELETION_COST

NS = "ml"
CONTAINERS = [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]
LONG = {"gpufleet.io/duration": "1h"}


def node(name: str) -> dict[str, Any]:
    capacity = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"capacity": capacity}}


def owner(kind: str, name: str, uid: str) -> dict[str, Any]:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": True}


def pod(
    name: str,
    owned_by: dict[str, Any] | None,
    phase: str = "Running",
    node_name: str | None = "gpu-0",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    finalizers: tuple[str, ...] = (),
    restart: str = "Always",
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": NS,
        "uid": f"uid-{name}",
        "labels": labels or {},
        "annotations": {**LONG, **(annotations or {})},
    }
    if owned_by is not None:
        metadata["ownerReferences"] = [owned_by]
    if finalizers:
        metadata["finalizers"] = list(finalizers)
    spec: dict[str, Any] = {"restartPolicy": restart, "containers": CONTAINERS}
    if node_name is not None:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": {"phase": phase}}


def template(labels: dict[str, str], restart: str = "Always") -> dict[str, Any]:
    return {
        "metadata": {"labels": labels, "annotations": LONG},
        "spec": {"restartPolicy": restart, "containers": CONTAINERS},
    }


def job(
    parallelism: int, completions: int, status: dict[str, Any] | None = None, mode: str = "NonIndexed"
) -> dict[str, Any]:
    spec = {
        "parallelism": parallelism,
        "completions": completions,
        "completionMode": mode,
        "template": template({"app": "train"}, restart="Never"),
    }
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": NS, "uid": "uid-job"},
    }
    return {**body, "spec": spec, **({"status": status} if status is not None else {})}


JOB_POD = owner("Job", "train", "uid-job")


def apps(
    kind: str, name: str, spec: dict[str, Any], owned_by: dict[str, Any] | None = None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": NS, "uid": f"uid-{name}"}
    if owned_by is not None:
        metadata["ownerReferences"] = [owned_by]
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": metadata, "spec": spec}


def dump(tmp_path: Path, *objects: dict[str, Any]) -> list[Path]:
    """The objects as ``kubectl get -A -o json`` writes them: one List."""
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    return [path]


def wanted_after_adoption(paths: list[Path], key: str) -> list[str]:
    """The names of the pods the controller ``Kind/ns/name`` creates first once it adopted its pods."""
    scenario = load_scenario(paths)
    workload = next(w for w in scenario.workloads() if f"{controller_for(w).kind}/{w.key}" == key)
    controller = controller_for(workload)
    assert isinstance(controller, Adopts)
    controller.adopt(scenario.owned[key])
    return [p.name for p in controller.wanted(scenario.nodes)]


# -- Job ----------------------------------------------------------------------------------------


def job_with_three_pods(tmp_path: Path) -> list[Path]:
    """parallelism 4, completions 10; two pods running and one that Succeeded and still holds the
    ``batch.kubernetes.io/job-tracking`` finalizer (not yet in ``status.succeeded``)."""
    return dump(
        tmp_path,
        node("gpu-0"),
        job(4, 10, status={"active": 2}),
        pod("train-abcde", JOB_POD, restart="Never"),
        pod("train-fghij", JOB_POD, restart="Never"),
        pod(
            "train-klmno",
            JOB_POD,
            "Succeeded",
            finalizers=("batch.kubernetes.io/job-tracking",),
            restart="Never",
        ),
    )


def web_hpa(kind: str, min_replicas: int, max_replicas: int) -> dict[str, Any]:
    """An autoscaling/v2 HorizontalPodAutoscaler of ``kind`` ``web`` (an apps/v1 workload)."""
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": "web"},
            "minReplicas": min_replicas,
            "maxReplicas": max_replicas,
        },
    }


def test_get_pods_for_job_counts_running_and_uncounted_succeeded_pods_toward_parallelism(
    tmp_path: Path,
) -> None:
    """``getPodsForJob`` claims the three pods; ``trackJobStatusAndRemoveFinalizers`` counts the
    Succeeded one that still holds its finalizer: ``manageJob`` creates ``parallelism - active`` = 2
    pods, fewer than the 10 - 1 - 2 = 7 completions left; the adopted pods hold indexes 0 and 1, so the
    new ones are ``train-2`` and ``train-3``."""
    scenario = load_scenario(job_with_three_pods(tmp_path))
    owned = scenario.owned["Job/ml/train"]
    assert (len(owned.pods), owned.succeeded, owned.failed) == (3, 1, 0)
    assert wanted_after_adoption(job_with_three_pods(tmp_path), "Job/ml/train") == ["train-2", "train-3"]


def test_a_job_creates_only_what_its_completions_leave(tmp_path: Path) -> None:
    """``manageJob``: with parallelism 4 and completions 4, 2 running and 1 succeeded, only 4 - 1 - 2 = 1
    more pod is wanted (``wantActive`` is bounded by the completions left); the simulation ends with
    the snapshot's 3 pods and exactly 1 new one, each snapshot pod under its own name."""
    paths = dump(
        tmp_path,
        node("gpu-0"),
        job(4, 4, status={"active": 2, "succeeded": 1}),
        pod("train-abcde", JOB_POD, restart="Never"),
        pod("train-fghij", JOB_POD, restart="Never"),
        pod("train-klmno", JOB_POD, "Succeeded", restart="Never"),
    )
    assert wanted_after_adoption(paths, "Job/ml/train") == ["train-2"]
    pods = pods_by_name(simulated(paths, duration_s=60.0))
    assert sorted(pods) == ["train-2", "train-abcde", "train-fghij", "train-klmno"]
    assert pods["train-2"]["phase"] == "Running"


def test_a_job_whose_status_counts_its_completions_creates_nothing(tmp_path: Path) -> None:
    """``status.succeeded`` already counts the pods whose finalizer was removed (and that the garbage
    collector may have deleted): a Job whose status reached ``completions`` is complete."""
    paths = dump(tmp_path, node("gpu-0"), job(2, 2, status={"succeeded": 2}))
    assert wanted_after_adoption(paths, "Job/ml/train") == []
    assert pods_by_name(simulated(paths, duration_s=60.0)) == {}


def test_an_indexed_job_creates_the_lowest_indexes_neither_active_nor_completed(tmp_path: Path) -> None:
    """``firstPendingIndexes`` (indexed_job_utils.go): indexes 0 and 2 run (their
    ``batch.kubernetes.io/job-completion-index`` annotation), ``status.completedIndexes`` is ``1``: of
    completions 5 and parallelism 4, the pods of indexes 3 and 4 are created."""
    paths = dump(
        tmp_path,
        node("gpu-0"),
        job(4, 5, status={"succeeded": 1, "completedIndexes": "1"}, mode="Indexed"),
        pod("train-0-abcde", JOB_POD, annotations={JOB_COMPLETION_INDEX: "0"}, restart="Never"),
        pod("train-2-fghij", JOB_POD, annotations={JOB_COMPLETION_INDEX: "2"}, restart="Never"),
    )
    assert scenario_owned_indexes(paths) == frozenset({1})
    assert wanted_after_adoption(paths, "Job/ml/train") == ["train-3", "train-4"]


def test_completed_indexes_outside_completions_are_not_counted(tmp_path: Path) -> None:
    """``parseIndexesFromString`` cuts ``status.completedIndexes`` at ``completions`` (``0-1,3-9`` of
    completions 5 is ``0,1,3,4``), and ``calculateSucceededIndexes`` leaves out a succeeded pod whose
    index is outside them."""
    paths = dump(
        tmp_path,
        node("gpu-0"),
        job(2, 5, status={"succeeded": 4, "completedIndexes": "0-1,3-9,12"}, mode="Indexed"),
        pod(
            "train-7-abcde",
            JOB_POD,
            annotations={JOB_COMPLETION_INDEX: "7"},
            restart="Never",
            phase="Succeeded",
            finalizers=("batch.kubernetes.io/job-tracking",),
        ),
    )
    assert scenario_owned_indexes(paths) == frozenset({0, 1, 3, 4})


def test_an_indexed_job_counts_each_completed_index_once(tmp_path: Path) -> None:
    """``trackJobStatusAndRemoveFinalizers``: an Indexed Job's ``status.succeeded`` is its completed
    indexes; two Succeeded pods of index 1 complete one index, so index 2 is still to run."""
    tracking = ("batch.kubernetes.io/job-tracking",)
    paths = dump(
        tmp_path,
        node("gpu-0"),
        job(2, 3, status={}, mode="Indexed"),
        *(
            pod(
                f"train-{index}-{suffix}",
                JOB_POD,
                annotations={JOB_COMPLETION_INDEX: index},
                restart="Never",
                phase="Succeeded",
                finalizers=tracking,
            )
            for index, suffix in (("0", "abcde"), ("1", "fghij"), ("1", "klmno"))
        ),
    )
    assert load_scenario(paths).owned["Job/ml/train"].succeeded == 2
    assert wanted_after_adoption(paths, "Job/ml/train") == ["train-2"]


def test_a_snapshot_job_past_its_backoff_limit_deletes_its_active_pods(tmp_path: Path) -> None:
    """``syncJob``: a Job whose failures passed ``backoffLimit`` gets its Failed condition
    (``BackoffLimitExceeded``) and ``deleteActivePods`` deletes the pods still running; nothing new."""
    failing = job(2, 3)
    failing["spec"]["backoffLimit"] = 0
    paths = dump(
        tmp_path,
        node("gpu-0"),
        failing,
        pod(
            "train-abcde",
            JOB_POD,
            restart="Never",
            phase="Failed",
            finalizers=("batch.kubernetes.io/job-tracking",),
        ),
        pod("train-fghij", JOB_POD, restart="Never"),
    )
    pods = pods_by_name(simulated(paths, duration_s=60.0))
    assert pods["train-fghij"]["phase"] == "Failed" and pods["train-fghij"]["reason"] == "Deleted"
    assert sorted(pods) == ["train-abcde", "train-fghij"]


def test_a_snapshot_job_marked_as_failure_target_fails_with_its_message_and_deletes_its_pods(
    tmp_path: Path,
) -> None:
    """``syncJob`` evaluates the pre-existing ``FailureTarget`` condition (status ``True``) first: the Job,
    whose status counts no pod and whose failed pod is gone, fails with that condition's reason and message
    (``newFailedConditionForFailureTarget``), deletes its running pod and creates nothing; a
    ``FailureTarget`` of status ``False`` is ignored."""
    message = "Container main for pod ml/train-gone failed with exit code 5 matching FailJob rule at index 0"
    for status, failure in (("True", ("PodFailurePolicy", message)), ("False", None)):
        condition = {
            "type": "FailureTarget",
            "status": status,
            "reason": "PodFailurePolicy",
            "message": message,
        }
        paths = dump(
            tmp_path,
            node("gpu-0"),
            job(1, 1, status={"conditions": [condition]}),
            pod("train-abcde", JOB_POD),
        )
        scenario = load_scenario(paths)
        controller = controller_for(next(iter(scenario.workloads())))
        assert isinstance(controller, JobController)
        controller.adopt(scenario.owned.get("Job/ml/train", Owned()))
        assert controller.failure == failure
        assert controller.doomed() == ([("ml/train-abcde", "Deleted")] if failure else [])
        assert controller.wanted(scenario.nodes) == []


def test_a_snapshot_job_whose_completions_succeeded_still_fails_by_its_failure_target(tmp_path: Path) -> None:
    """``syncJob`` looks for a finished condition first (the status's ``FailureTarget``, a ``FailJob`` rule,
    ``backoffLimit``, the failed indexes, ``successPolicy``) and counts the completions only where it found
    none (the ``else`` branch of ``if jobCtx.finishedCondition != nil``): a Job whose status counts its one
    completion and carries ``FailureTarget`` fails with it, not ``Complete``; without the condition it is
    complete."""
    condition = {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "message": "m"}
    for conditions, failure, success in (
        ([condition], ("BackoffLimitExceeded", "m"), None),
        ([], None, "CompletionsReached"),
    ):
        paths = dump(tmp_path, node("gpu-0"), job(1, 1, status={"succeeded": 1, "conditions": conditions}))
        scenario = load_scenario(paths)
        controller = controller_for(next(iter(scenario.workloads())))
        assert isinstance(controller, JobController)
        controller.adopt(scenario.owned.get("Job/ml/train", Owned()))
        assert (controller.failure, controller.success and controller.success[0]) == (failure, success)


def scenario_owned_indexes(paths: list[Path]) -> frozenset[int]:
    return load_scenario(paths).owned["Job/ml/train"].completed_indexes


def test_a_pod_whose_controller_uid_differs_is_not_claimed(tmp_path: Path) -> None:
    """``ClaimPods`` releases a pod whose controller reference has another uid (a Job of the same name
    deleted and created again): it stays a bare pod and the Job creates its own."""
    paths = dump(
        tmp_path,
        node("gpu-0"),
        job(1, 1),
        pod("train-abcde", owner("Job", "train", "uid-earlier-job"), restart="Never"),
    )
    assert load_scenario(paths).owned == {}
    assert sorted(pods_by_name(simulated(paths, duration_s=60.0))) == ["train-0", "train-abcde"]


# -- ReplicaSet and Deployment ----------------------------------------------------------------

WEB = {"app": "web"}
HASH = "7d4b9c8f6"


def deployment(replicas: int) -> dict[str, Any]:
    return apps(
        "Deployment",
        "web",
        {"replicas": replicas, "selector": {"matchLabels": WEB}, "template": template(WEB)},
    )


def deployment_snapshot(tmp_path: Path, replicas: int, *extra: dict[str, Any]) -> list[Path]:
    """A Deployment of ``replicas``, its ReplicaSet ``web-<hash>`` (its template plus the
    ``pod-template-hash`` label) and 3 running pods that ReplicaSet owns."""
    labels = {**WEB, "pod-template-hash": HASH}
    rs_spec = {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template(labels)}
    rs = apps("ReplicaSet", f"web-{HASH}", rs_spec, owner("Deployment", "web", "uid-web"))
    rs_owner = owner("ReplicaSet", f"web-{HASH}", f"uid-web-{HASH}")
    pods = [pod(f"web-{HASH}-{s}", rs_owner, labels=labels) for s in ("aaaaa", "bbbbb", "ccccc")]
    return dump(tmp_path, node("gpu-0"), deployment(replicas), rs, *pods, *extra)


def test_a_deployment_counts_its_replica_sets_pods_and_creates_none(tmp_path: Path) -> None:
    """``getReplicaSetsForDeployment``: the ReplicaSet the Deployment controls is no workload of its
    own, and its 3 pods are the Deployment's 3 replicas: nothing is created in the simulation."""
    paths = deployment_snapshot(tmp_path, 3)
    scenario = load_scenario(paths)
    assert scenario.other_workloads == []
    assert {b.pod.owner for b in scenario.pods} == {OwnerRef("Deployment", "web")}
    assert wanted_after_adoption(paths, "Deployment/ml/web") == []
    summary = simulated(paths, duration_s=120.0)
    assert sorted(pods_by_name(summary)) == [f"web-{HASH}-{s}" for s in ("aaaaa", "bbbbb", "ccccc")]


def test_an_hpa_scaling_an_adopted_deployment_to_five_creates_two_named_by_its_current_replica_set(
    tmp_path: Path,
) -> None:
    """``Current number of replicas below Spec.MinReplicas`` (horizontal.go): the HPA scales the
    Deployment from its 3 adopted pods to 5, so 2 pods are created; ``FindNewReplicaSet``
    (``EqualIgnoreHash``) finds ``web-<hash>`` as its current ReplicaSet, which names them
    ``web-<hash>-<5 characters>``."""
    hpa = web_hpa("Deployment", 5, 5)
    paths = deployment_snapshot(tmp_path, 3, hpa)
    assert load_scenario(paths).owned["Deployment/ml/web"].replica_set == f"web-{HASH}"
    summary = simulated(paths, duration_s=120.0)
    assert max(summary["timeline"]["replicas"]["Deployment/ml/web"]) == 5
    pods = pods_by_name(summary)
    assert len(pods) == 5
    new = sorted(set(pods) - {f"web-{HASH}-{s}" for s in ("aaaaa", "bbbbb", "ccccc")})
    assert len(new) == 2 and all(
        name.startswith(f"web-{HASH}-") and len(name) == len(f"web-{HASH}-aaaaa") for name in new
    )


def test_without_its_replica_sets_a_deployment_claims_the_pods_of_deployment_hash(tmp_path: Path) -> None:
    """A dump of ``deployments,pods`` only: a pod owned by ``web-<hash>`` with the label
    ``pod-template-hash: <hash>`` is the Deployment's (the Deployment controller names its
    ReplicaSets ``<deployment>-<pod-template-hash>``); with 2 replicas it creates none."""
    labels = {**WEB, "pod-template-hash": HASH}
    rs_owner = owner("ReplicaSet", f"web-{HASH}", "uid-rs")
    pods = [pod(f"web-{HASH}-{s}", rs_owner, labels=labels) for s in ("aaaaa", "bbbbb")]
    paths = dump(tmp_path, node("gpu-0"), deployment(2), *pods)
    assert wanted_after_adoption(paths, "Deployment/ml/web") == []


def test_a_replica_set_scaled_from_four_to_two_deletes_in_active_pods_with_ranks_order(
    tmp_path: Path,
) -> None:
    """``manageReplicas`` deletes ``getPodsToDelete``'s pods, ``ActivePodsWithRanks`` order: of the 4
    adopted running pods, the two with the lowest ``controller.kubernetes.io/pod-deletion-cost``."""
    rs_spec = {"replicas": 4, "selector": {"matchLabels": WEB}, "template": template(WEB)}
    rs_owner = owner("ReplicaSet", "web", "uid-web")
    costs = {"web-aaaaa": "100", "web-bbbbb": "-5", "web-ccccc": "0", "web-ddddd": "50"}
    pods = [pod(name, rs_owner, labels=WEB, annotations={POD_DELETION_COST: c}) for name, c in costs.items()]
    hpa = web_hpa("ReplicaSet", 1, 2)
    paths = dump(tmp_path, node("gpu-0"), apps("ReplicaSet", "web", rs_spec), *pods, hpa)
    assert wanted_after_adoption(paths, "ReplicaSet/ml/web") == []
    pods_after = pods_by_name(simulated(paths, duration_s=120.0))
    assert sorted(pods_after) == sorted(costs)  # none created
    assert sorted(n for n, p in pods_after.items() if p["reason"] == "ScaledDown") == [
        "web-bbbbb",
        "web-ccccc",
    ]


# -- DaemonSet and orphans ---------------------------------------------------------------------


def test_a_daemon_set_with_pods_on_two_of_three_nodes_creates_one(tmp_path: Path) -> None:
    """``getNodesToDaemonPods`` maps each adopted pod to its node (``GetTargetNodeName``: ``nodeName``,
    else the pod's node affinity on ``metadata.name``); ``podsShouldBeOnNode`` wants a pod only on the
    node without one, and on the node whose pod Failed (deleted, then created again)."""
    ds_spec = {"selector": {"matchLabels": {"app": "agent"}}, "template": template({"app": "agent"})}
    ds_owner = owner("DaemonSet", "agent", "uid-agent")
    pinned = pod("agent-bbbbb", ds_owner, "Pending", node_name=None, labels={"app": "agent"})
    pin = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}
        ]
    }
    pinned["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": pin}}
    paths = dump(
        tmp_path,
        node("gpu-0"),
        node("gpu-1"),
        node("gpu-2"),
        apps("DaemonSet", "agent", ds_spec),
        pod("agent-aaaaa", ds_owner, node_name="gpu-0", labels={"app": "agent"}),
        pinned,
    )
    assert wanted_after_adoption(paths, "DaemonSet/ml/agent") == ["agent-gpu-2"]
    pods = pods_by_name(simulated(paths, duration_s=60.0))
    assert sorted(pods) == ["agent-aaaaa", "agent-bbbbb", "agent-gpu-2"]
    assert pods["agent-gpu-2"]["node"] == "gpu-2"


def test_an_orphan_whose_controller_is_not_in_the_snapshot_stays_a_bare_pod(tmp_path: Path) -> None:
    """A pod whose controller (Job ``gone``) is absent from the snapshot has nothing to adopt it: it is
    simulated as it is, and the snapshot's own Job creates its own pod."""
    paths = dump(
        tmp_path,
        node("gpu-0"),
        job(1, 1),
        pod("gone-abcde", owner("Job", "gone", "uid-gone"), restart="Never"),
    )
    scenario = load_scenario(paths)
    assert scenario.owned == {}
    assert scenario.pods[0].pod.owner == OwnerRef("Job", "gone")
    assert sorted(pods_by_name(simulated(paths, duration_s=60.0))) == ["gone-abcde", "train-0"]


# -- explain -----------------------------------------------------------------------------------


def test_explain_judges_only_the_real_pending_pods_of_adopting_controllers(tmp_path: Path) -> None:
    """``gpufleet explain`` on a dump of a Job (parallelism 4: 1 running pod, 2 pending) and a
    Deployment whose ReplicaSet's pods are all running: only the 2 real pending pods are judged, no
    pod the controllers would create beside them."""
    pending = [
        pod(f"train-{s}", JOB_POD, "Pending", node_name=None, restart="Never") for s in ("bbbbb", "ccccc")
    ]
    paths = deployment_snapshot(
        tmp_path, 3, job(4, 4, status={"active": 3}), pod("train-aaaaa", JOB_POD, restart="Never"), *pending
    )
    entries = explain_scenario(load_scenario(paths))
    assert [e["pod"] for e in entries] == ["ml/train-bbbbb", "ml/train-ccccc"]


def test_validate_names_the_controllers_that_adopt_pods_of_the_snapshot(tmp_path: Path) -> None:
    """``gpufleet validate`` says which controllers adopt pods of the input, and how many each."""
    result = CliRunner().invoke(app, ["validate", str(deployment_snapshot(tmp_path, 3)[0])])
    assert result.exit_code == 0, result.output
    assert "adopted by their controllers: Deployment/ml/web (3 pods)" in result.output


def test_a_pod_being_deleted_is_not_an_active_replica(tmp_path: Path) -> None:
    """``controller.IsPodActive``: a pod with a ``deletionTimestamp`` is not active, so a ReplicaSet of 2
    with one running pod and one being deleted creates one replacement."""
    rs_spec = {"replicas": 2, "selector": {"matchLabels": WEB}, "template": template(WEB)}
    rs_owner = owner("ReplicaSet", "web", "uid-web")
    leaving = pod("web-bbbbb", rs_owner, labels=WEB)
    leaving["metadata"]["deletionTimestamp"] = "2025-01-02T03:04:05Z"
    paths = dump(
        tmp_path,
        node("gpu-0"),
        apps("ReplicaSet", "web", rs_spec),
        pod("web-aaaaa", rs_owner, labels=WEB),
        leaving,
    )
    (new,) = wanted_after_adoption(paths, "ReplicaSet/ml/web")
    assert new.startswith("web-") and new not in ("web-aaaaa", "web-bbbbb")
