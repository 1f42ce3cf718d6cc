"""JobSet (``gpufleet.workloads.jobset``): its reader (kubernetes-sigs/jobset
``pkg/webhooks/jobset_webhook.go`` ``Default`` and ``ValidateCreate``), the child Jobs and pods its
controller makes (``pkg/controllers/jobset_controller.go`` ``constructJob``,
``labelAndAnnotateObject``), how it ends (``failure_policy.go``, ``success_policy.go``), its start-up
order (``startup_policy.go``, ``depends_on.go``), exclusive placement (``pkg/webhooks/pod_webhook.go``)
and Kueue's JobSet integration."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml
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
from gpufleet.kube.explain import explain_scenario
from gpufleet.workloads.jobset import JobSetController
from shared_files import UPSTREAM

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/training/jobset-exclusive-rack.yaml"

OOM = {"gpufleet.io/gpu-memory": "40GB"}  # more than the A10's 24 GiB: CUDA out of memory as it starts


def nodes(count: int = 2) -> str:
    return a10_nodes(count, 'nvidia.com/gpu.memory: "24576", rack: rack-{rack}', per_rack=2)


def rjob(
    name: str,
    replicas: int | None = 1,
    parallelism: int | None = 1,
    completions: int | None = 1,
    duration: str = "1h",
    gpus: int = 1,
    annotations: dict[str, str] | None = None,
    restart: str | None = None,
    backoff: int = 0,
    template_spec: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A replicated Job of ``replicas`` Jobs, each of ``parallelism`` pods of ``gpus`` GPUs;
    ``template_spec``: more fields of its Job template's spec."""
    pod_spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": "trainer", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
        ]
    }
    if restart is not None:
        pod_spec["restartPolicy"] = restart
    job_spec: dict[str, Any] = {
        "backoffLimit": backoff,
        **(template_spec or {}),
        "template": {
            "metadata": {"annotations": {"gpufleet.io/duration": duration, **(annotations or {})}},
            "spec": pod_spec,
        },
    }
    if parallelism is not None:
        job_spec["parallelism"] = parallelism
    if completions is not None:
        job_spec["completions"] = completions
    out: dict[str, Any] = {"name": name, "template": {"spec": job_spec}, **extra}
    if replicas is not None:
        out["replicas"] = replicas
    return out


def jobset(*rjobs: dict[str, Any], annotations: dict[str, str] | None = None, **spec: Any) -> str:
    metadata: dict[str, Any] = {"name": "train", "namespace": "ml"}
    if annotations:
        metadata["annotations"] = annotations
    document = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": metadata,
        "spec": {"replicatedJobs": list(rjobs), **spec},
    }
    return yaml.safe_dump(document, sort_keys=False)


def run(paths: list[Path], duration_s: float | None = None) -> tuple[dict[str, Any], JobSetController]:
    """The scenario simulated: its pods by name and the JobSet's controller as it ended."""
    pods, controller, _ = simulated_controller(paths, "JobSet/ml/train", JobSetController, duration_s)
    return pods, controller


def first_pods(tmp_path: Path, text: str, count: int = 2) -> JobSetController:
    return only_controller(write(tmp_path, nodes(count), text), JobSetController)


def stem(name: str) -> str:
    """A pod's name without its ``generateName`` suffix."""
    return name.rsplit("-", 1)[0]


# -- the reader, names and labels ------------------------------------------------------------


def test_pods_are_named_labelled_and_owned_as_the_jobset_and_job_controllers_make_them(
    tmp_path: Path,
) -> None:
    """``placement.GenJobName`` ``<jobset>-<rjob>-<jobIdx>``; an Indexed Job's pod
    ``<job>-<index>-<5 characters>``; ``labelAndAnnotateObject``'s labels (and annotations); the
    webhook defaults completionMode to Indexed and restartPolicy to OnFailure."""
    controller = first_pods(
        tmp_path, jobset(rjob("driver"), rjob("workers", replicas=2, parallelism=2, completions=2))
    )
    pods = controller.wanted([])
    assert [stem(p.name) for p in pods] == [
        "train-driver-0-0",
        "train-workers-0-0",
        "train-workers-0-1",
        "train-workers-1-0",
        "train-workers-1-1",
    ]
    assert all(len(p.name.rsplit("-", 1)[1]) == 5 for p in pods)
    worker = pods[4]
    assert worker.namespace == "ml" and worker.owner is not None
    assert (worker.owner.kind, worker.owner.name) == ("Job", "train-workers-1")
    assert worker.restart_policy == "OnFailure"
    expected = {
        "jobset.sigs.k8s.io/jobset-name": "train",
        "jobset.sigs.k8s.io/replicatedjob-name": "workers",
        "jobset.sigs.k8s.io/replicatedjob-replicas": "2",
        "jobset.sigs.k8s.io/global-replicas": "3",
        "jobset.sigs.k8s.io/job-index": "1",
        "jobset.sigs.k8s.io/job-global-index": "2",
        "jobset.sigs.k8s.io/job-key": hashlib.sha1(b"ml/train-workers-1").hexdigest(),
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": "3",
        "jobset.sigs.k8s.io/job-group-index": "2",
        "jobset.sigs.k8s.io/restart-attempt": "0",
        "batch.kubernetes.io/job-name": "train-workers-1",
        "batch.kubernetes.io/job-completion-index": "1",
    }
    assert {k: worker.labels.get(k) for k in expected} == expected
    assert {k: worker.annotations.get(k) for k in expected} == expected
    again = first_pods(
        tmp_path, jobset(rjob("driver"), rjob("workers", replicas=2, parallelism=2, completions=2))
    )
    assert [p.name for p in again.wanted([])] == [p.name for p in pods]  # stable, not random


def test_a_non_indexed_job_names_its_pods_by_the_job_alone(tmp_path: Path) -> None:
    """A NonIndexed Job's pods are ``<job>-<suffix>`` (generateName ``<job>-``), with no completion index."""
    spec = rjob("workers", parallelism=2, completions=2)
    spec["template"]["spec"]["completionMode"] = "NonIndexed"
    pods = first_pods(tmp_path, jobset(spec)).wanted([])
    assert [stem(p.name) for p in pods] == ["train-workers-0", "train-workers-0"]
    assert len({p.name for p in pods}) == 2
    assert all("batch.kubernetes.io/job-completion-index" not in p.labels for p in pods)


def _with(spec: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    target = spec
    *parents, last = path.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = value
    return spec


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            jobset(rjob("workers"), rjob("workers")),
            'spec.replicatedJobs[1].name: Duplicate value: "workers"',
        ),
        (
            jobset(rjob("w" * 60)),
            'spec.replicatedJobs[0].name: Invalid value: "train-'
            + "w" * 60
            + '-0": JobSet name is too long, job names generated for this JobSet will exceed 63 characters',
        ),
        (
            jobset(rjob("Workers")),
            'spec.replicatedJobs[0].name: Invalid value: "train-Workers-0": a DNS-1035 label must consist',
        ),
        (
            jobset(rjob("workers", completions=None, parallelism=4)),
            "spec.replicatedJobs[0].template.spec.completions: Required value: "
            "when completion mode is Indexed",
        ),
        (
            jobset(rjob("workers", restart="Always")),
            'spec.replicatedJobs[0].template.spec.template.spec.restartPolicy: Unsupported value: "Always"',
        ),
        (
            jobset(rjob("workers"), successPolicy={"operator": "All", "targetReplicatedJobs": ["driver"]}),
            'spec.successPolicy.targetReplicatedJobs: Invalid value: "driver": invalid replicatedJob name '
            "'driver' does not appear in .spec.ReplicatedJobs",
        ),
        (
            jobset(rjob("workers"), successPolicy={"operator": "Most"}),
            'spec.successPolicy.operator: Unsupported value: "Most"',
        ),
        (
            jobset(rjob("workers"), failurePolicy={"rules": [{"action": "RestartJob"}]}),
            'spec.failurePolicy.rules[0].action: Invalid value: "RestartJob": RestartJob is not allowed when '
            "the RestartJob feature gate is disabled",
        ),
        (
            jobset(
                rjob("workers"),
                failurePolicy={"rules": [{"action": "FailJobSet", "targetReplicatedJobs": ["x"]}]},
            ),
            'spec.failurePolicy.rules[0].targetReplicatedJobs: Invalid value: "x": invalid replicatedJob '
            "name 'x' in failure policy does not appear in .spec.ReplicatedJobs",
        ),
        (
            jobset(
                rjob("workers"),
                failurePolicy={"rules": [{"action": "FailJobSet", "onJobFailureReasons": ["Oops"]}]},
            ),
            'spec.failurePolicy.rules[0].onJobFailureReasons: Unsupported value: "Oops"',
        ),
        (
            jobset(rjob("workers"), failurePolicy={"restartStrategy": "InPlaceRestart"}),
            'spec.failurePolicy.restartStrategy: Invalid value: "InPlaceRestart": InPlaceRestart restart '
            "strategy cannot be set when InPlaceRestart feature gate is disabled",
        ),
        (
            jobset(rjob("workers", template_spec={"activeDeadlineSeconds": -1})),
            "spec.replicatedJobs[0].template.spec.activeDeadlineSeconds: Invalid value: -1: must be greater "
            "than or equal to 0",
        ),
        (
            jobset(rjob("workers"), startupPolicy={"startupPolicyOrder": "Backwards"}),
            'spec.startupPolicy.startupPolicyOrder: Unsupported value: "Backwards"',
        ),
        (
            jobset(rjob("workers"), coordinator={"replicatedJob": "driver"}),
            'spec.coordinator.replicatedJob: Invalid value: "driver": coordinator replicatedJob driver does '
            "not exist",
        ),
        (
            jobset(
                rjob("workers", completions=2, parallelism=2),
                coordinator={"replicatedJob": "workers", "podIndex": 2},
            ),
            "spec.coordinator.podIndex: Invalid value: 2: coordinator pod index 2 is invalid for "
            "replicatedJob workers job index 0",
        ),
        (
            jobset(rjob("a", dependsOn=[{"name": "b", "status": "Ready"}]), rjob("b")),
            'spec.replicatedJobs[0].dependsOn: Invalid value: [{"name": "b", "status": "Ready"}]: DependsOn '
            "can't be set for the first ReplicatedJob",
        ),
        (
            jobset(rjob("a"), rjob("b", dependsOn=[{"name": "c", "status": "Ready"}])),
            'spec.replicatedJobs[1].dependsOn[0].name: Invalid value: "c": replicatedJob: b cannot depend on '
            "replicatedJob: c",
        ),
        (
            jobset(
                rjob("a"),
                rjob("b", dependsOn=[{"name": "a", "status": "Complete"}]),
                startupPolicy={"startupPolicyOrder": "InOrder"},
            ),
            'spec.startupPolicy: Invalid value: "InOrder": StartupPolicy and DependsOn APIs are mutually '
            "exclusive",
        ),
    ],
)
def test_a_bad_manifest_is_an_error_at_its_field(tmp_path: Path, text: str, message: str) -> None:
    """``ValidateCreate``, ``validateFailurePolicy`` and the CRD's enums and CEL rule."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), text))
    assert "(JobSet/ml/train): " + message in str(caught.value)


def test_gpufleet_validate_exits_2_on_a_bad_jobset(tmp_path: Path) -> None:
    (path,) = write(tmp_path, jobset(rjob("workers"), rjob("workers")))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "Duplicate value" in result.output and "Traceback" not in result.output


def test_a_misspelt_kind_of_the_jobset_group_is_an_error(tmp_path: Path) -> None:
    """``jobset.x-k8s.io`` is a known group once JobSet is registered: a typo is not silently ignored."""
    text = jobset(rjob("workers")).replace("kind: JobSet", "kind: Jobset")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), text))
    assert 'unknown kind "Jobset" in jobset.x-k8s.io/v1alpha2' in str(caught.value)


def test_what_is_not_modelled_is_a_warning_and_network_is_read_silently(tmp_path: Path) -> None:
    spec = rjob("workers", groupName="g1", surprise=True)
    spec["template"]["spec"]["manualSelector"] = True
    text = jobset(
        spec,
        network={"enableDNSHostnames": True, "subdomain": "train"},
        coordinator={"replicatedJob": "workers"},
        managedBy="kueue.x-k8s.io/multikueue",
        ttlSecondsAfterFinished=60,
    )
    warned = "\n".join(load_scenario(write(tmp_path, nodes(), text)).warnings)
    for field in (
        "managedBy",
        "ttlSecondsAfterFinished",
        "replicatedJobs[0].surprise",
        "replicatedJobs[0].template.spec.manualSelector",
    ):
        assert f"spec.{field} is not modelled; ignored" in warned, field
    assert "network" not in warned and "groupName" not in warned and "coordinator" not in warned


def test_under_the_webhooks_default_on_failure_a_restart_past_the_jobs_backoff_limit_fails_the_jobset(
    tmp_path: Path,
) -> None:
    """The webhook defaults an unset ``restartPolicy`` to ``OnFailure``: the kubelet restarts a container that
    exits non-zero in place (``ShouldContainerBeRestarted``; no warning), and its Job, ``backoffLimit: 0``,
    fails at the first restart (``pastBackoffLimitOnFailure``: restarts > 0), at 600 s: no failure policy, the
    JobSet fails and deletes its Jobs (the pod gone after its 30 s grace period)."""
    text = jobset(rjob("workers", duration="10m", annotations={"gpufleet.io/exit-code": "1"}))
    paths = write(tmp_path, nodes(), text)
    assert not [w for w in load_scenario(paths).warnings if "exit-code" in w]
    pods, controller = run(paths, 3600)
    (pod,) = pods.values()
    assert (pod["restarts"], pod["reason"], pod["deleted_s"], pod["finished_s"]) == (
        1,
        "Deleted",
        630.0,
        630.0,
    )
    assert (controller.finished_as, controller.message) == (
        "Failed",
        "jobset failed due to one or more job failures (first failed job: train-workers-0)",
    )


def test_a_coordinator_labels_every_pod_with_its_endpoint(tmp_path: Path) -> None:
    """``CoordinatorEndpoint``: ``<jobset>-<rjob>-<jobIndex>-<podIndex>.<subdomain>`` on every pod;
    ``managedBy`` naming the built-in controller is no warning."""
    text = jobset(
        rjob("driver"),
        rjob("workers", replicas=2, parallelism=2, completions=2),
        coordinator={"replicatedJob": "workers", "jobIndex": 1, "podIndex": 1},
        network={"subdomain": "net"},
        managedBy="jobset.sigs.k8s.io/jobset-controller",
    )
    scenario = load_scenario(write(tmp_path, nodes(), text))
    assert not [w for w in scenario.warnings if "JobSet" in w]
    pods = first_pods(tmp_path, text).wanted([])
    assert {p.labels["jobset.sigs.k8s.io/coordinator"] for p in pods} == {"train-workers-1-1.net"}
    assert {p.annotations["jobset.sigs.k8s.io/coordinator"] for p in pods} == {"train-workers-1-1.net"}


def test_a_well_formed_jobset_has_no_warning(tmp_path: Path) -> None:
    text = jobset(
        rjob("workers"),
        successPolicy={"operator": "Any", "targetReplicatedJobs": ["workers"]},
        failurePolicy={
            "maxRestarts": 2,
            "rules": [{"action": "FailJobSet", "onJobFailureReasons": ["BackoffLimitExceeded"]}],
        },
        startupPolicy={"startupPolicyOrder": "InOrder"},
        suspend=False,
    )
    scenario = load_scenario(write(tmp_path, nodes(), text))
    assert not [w for w in scenario.warnings if "JobSet" in w]


# -- how it ends ---------------------------------------------------------------------------------


def test_the_jobset_completes_when_all_its_jobs_complete(tmp_path: Path) -> None:
    """The default success policy (``All`` of every replicated Job): complete once each Job is."""
    text = jobset(
        rjob("driver", duration="10m"),
        rjob("workers", replicas=2, parallelism=2, completions=2, duration="20m"),
    )
    pods, controller = run(write(tmp_path, nodes(), text))
    assert controller.finished_as == "Completed" and controller.message == "jobset completed successfully"
    assert len(pods) == 5 and {p["phase"] for p in pods.values()} == {"Succeeded"}


def test_success_policy_any_of_the_driver_completes_it_and_deletes_the_workers(tmp_path: Path) -> None:
    """``operator: Any`` with ``targetReplicatedJobs: [driver]``: the driver's Job completing completes
    the JobSet, and a finished JobSet deletes its active Jobs (their pods end, reason Deleted)."""
    text = jobset(
        rjob("driver", duration="10m"),
        rjob("workers", replicas=2, duration="2h"),
        successPolicy={"operator": "Any", "targetReplicatedJobs": ["driver"]},
    )
    pods, controller = run(write(tmp_path, nodes(), text))
    assert controller.finished_as == "Completed"
    driver = next(p for n, p in pods.items() if n.startswith("train-driver-0-0"))
    workers = [p for n, p in pods.items() if n.startswith("train-workers")]
    assert driver["phase"] == "Succeeded" and driver["finished_s"] == 600.0
    assert [(w["phase"], w["reason"]) for w in workers] == [("Failed", "Deleted")] * 2
    assert all(w["finished_s"] == 600.0 + 30.0 for w in workers)  # their grace period


def test_without_a_failure_policy_a_failed_job_fails_the_jobset(tmp_path: Path) -> None:
    """A Job past its backoffLimit fails; with no failurePolicy the JobSet fails (``FailedJobs``) and
    deletes its other Jobs."""
    text = jobset(rjob("driver", duration="2h"), rjob("workers", restart="Never", annotations=OOM))
    pods, controller = run(write(tmp_path, nodes(), text))
    assert controller.finished_as == "Failed"
    assert (
        controller.message
        == "jobset failed due to one or more job failures (first failed job: train-workers-0)"
    )
    assert {(stem(n), p["phase"], p["reason"]) for n, p in pods.items()} == {
        ("train-workers-0-0", "Failed", "OOMKilled"),
        ("train-driver-0-0", "Failed", "Deleted"),
    }


def test_a_failed_job_restarts_the_whole_jobset_until_max_restarts(tmp_path: Path) -> None:
    """``RestartJobSet`` (the default action): every Job deleted and created again (``restart-attempt``
    one higher, new pod names) until ``restartsCountTowardsMax`` reaches ``maxRestarts``; then
    ``ReachedMaxRestarts``. ``Recreate`` creates each Job again once its own old pods are gone: the
    workers' at once (after the work queue's 5 ms, then 10 ms), the driver's not before its old pod's
    30 s grace period, by when the JobSet has failed."""
    text = jobset(
        rjob("driver", duration="2h"),
        rjob("workers", restart="Never", annotations=OOM),
        failurePolicy={"maxRestarts": 2},
    )
    pods, controller = run(write(tmp_path, nodes(), text))
    assert controller.restarts == 2 and controller.finished_as == "Failed"
    assert controller.message == (
        "jobset failed due to reaching max number of restarts (first failed job: train-workers-0)"
    )
    workers = sorted((p["created_s"], n) for n, p in pods.items() if n.startswith("train-workers-0-0"))
    assert [t for t, _ in workers] == pytest.approx([0.0, 0.005, 0.015])
    assert len({n for _, n in workers}) == 3  # a new name per attempt
    (driver,) = [p for n, p in pods.items() if n.startswith("train-driver")]
    assert driver["reason"] == "Deleted" and driver["finished_s"] == pytest.approx(30.005)


def test_blocking_recreate_creates_no_job_until_every_old_pod_is_gone(tmp_path: Path) -> None:
    """``restartStrategy: BlockingRecreate``: the new attempt's Jobs wait until all of the old
    attempt's pods are gone (the driver's 30 s grace period), so each attempt starts 30 s later."""
    text = jobset(
        rjob("driver", duration="2h"),
        rjob("workers", restart="Never", annotations=OOM),
        failurePolicy={"maxRestarts": 2, "restartStrategy": "BlockingRecreate"},
    )
    pods, controller = run(write(tmp_path, nodes(), text))
    assert controller.restarts == 2 and controller.finished_as == "Failed"
    created = sorted((stem(stem(stem(n))), round(p["created_s"])) for n, p in pods.items())
    assert created == [
        ("train-driver", 0),
        ("train-driver", 30),
        ("train-driver", 60),
        ("train-workers", 0),
        ("train-workers", 30),
        ("train-workers", 60),
    ]


def test_a_rule_targeting_the_failed_replicated_job_fails_the_jobset_at_once(tmp_path: Path) -> None:
    """The first rule that applies acts: ``FailJobSet`` for a failure of ``workers``, no restart."""
    rules = [
        {"name": "driver", "action": "RestartJobSetAndIgnoreMaxRestarts", "targetReplicatedJobs": ["driver"]},
        {
            "action": "FailJobSet",
            "targetReplicatedJobs": ["workers"],
            "onJobFailureMessagePatterns": ["backoff limit"],
        },
    ]
    text = jobset(
        rjob("driver", duration="2h"),
        rjob("workers", restart="Never", annotations=OOM),
        failurePolicy={"maxRestarts": 5, "rules": rules},
    )
    _, controller = run(write(tmp_path, nodes(), text))
    assert controller.restarts == 0 and controller.finished_as == "Failed"
    assert (
        controller.message == "applying FailJobSet failure policy action (first failed job: train-workers-0)"
    )


def test_restarts_that_ignore_max_restarts_go_on(tmp_path: Path) -> None:
    """``RestartJobSetAndIgnoreMaxRestarts`` restarts without counting toward ``maxRestarts``."""
    rules = [{"action": "RestartJobSetAndIgnoreMaxRestarts"}]
    text = jobset(
        rjob("workers", restart="Never", annotations=OOM), failurePolicy={"maxRestarts": 0, "rules": rules}
    )
    _, controller = run(write(tmp_path, nodes(), text), duration_s=300)
    assert controller.finished_as is None and controller.restarts > 3 and controller.restarts_toward_max == 0


def test_pods_labelled_with_a_pod_group_form_a_gang_as_any_pods_do(tmp_path: Path) -> None:
    """JobSet makes no PodGroup; templates labelled ``scheduling.x-k8s.io/pod-group`` join the given
    PodGroup: with ``minMember`` 3 the 2 workers wait for a third member and never compute."""
    spec = rjob("workers", parallelism=2, completions=2, duration="10m")
    spec["template"]["spec"]["template"]["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": "train"}
    group = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: train, namespace: ml}}
spec: {{minMember: {n}}}
"""
    pods, controller = run(write(tmp_path, nodes(), jobset(spec), group.format(n=3)), duration_s=3600)
    assert {p["phase"] for p in pods.values()} == {"Running"} and controller.finished_as is None
    assert {p["pod_group"] for p in pods.values()} == {"ml/train"}
    pods, controller = run(write(tmp_path, nodes(), jobset(spec), group.format(n=2)), duration_s=3600)
    assert {p["phase"] for p in pods.values()} == {"Succeeded"} and controller.finished_as == "Completed"


def test_a_suspended_jobset_creates_no_pods(tmp_path: Path) -> None:
    pods, controller = run(write(tmp_path, nodes(), jobset(rjob("workers"), suspend=True)), duration_s=600)
    assert pods == {} and controller.status == "Suspended"


# -- start-up order ----------------------------------------------------------------------------------


SLOW_PULL = {"gpufleet.io/image-size": "10GB"}
REGISTRY = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {registry: {bandwidth: 100MB/s}}
"""


def test_in_order_startup_creates_a_replicated_job_once_the_previous_one_runs(tmp_path: Path) -> None:
    """``InOrder``: the workers' Jobs are created only once the leader's Job is ready (its pod runs,
    after a 100 s image pull); without it both start at once."""
    leader = rjob("leader", annotations=SLOW_PULL)
    text = jobset(leader, rjob("workers", replicas=2), startupPolicy={"startupPolicyOrder": "InOrder"})
    pods, _ = run(write(tmp_path, nodes(), text, REGISTRY), duration_s=600)
    created = {stem(n): p["created_s"] for n, p in pods.items()}
    running = {stem(n): p["running_s"] for n, p in pods.items()}
    assert running["train-leader-0-0"] == 100.0
    assert created == {"train-leader-0-0": 0.0, "train-workers-0-0": 100.0, "train-workers-1-0": 100.0}

    pods, _ = run(
        write(tmp_path, nodes(), jobset(leader, rjob("workers", replicas=2)), REGISTRY), duration_s=600
    )
    assert {p["created_s"] for p in pods.values()} == {0.0}


def test_depends_on_complete_waits_for_the_previous_replicated_job_to_succeed(tmp_path: Path) -> None:
    """``dependsOn: [{name: init, status: Complete}]``: created once every Job of ``init`` succeeded."""
    text = jobset(
        rjob("init", duration="5m"), rjob("train", dependsOn=[{"name": "init", "status": "Complete"}])
    )
    pods, controller = run(write(tmp_path, nodes(), text))
    created = {stem(n): p["created_s"] for n, p in pods.items()}
    assert created == {"train-init-0-0": 0.0, "train-train-0-0": 300.0}
    assert controller.finished_as == "Completed"


# -- exclusive placement --------------------------------------------------------------------------


def test_an_exclusive_jobs_leader_carries_the_injected_affinities_and_its_followers_wait(
    tmp_path: Path,
) -> None:
    """``setExclusiveAffinities``: the leader (completion index 0) gets a required pod affinity to
    its Job's pods and a required anti-affinity to other Jobs' pods of its priority, over the topology
    key, in every namespace; followers are created only once the leader is bound (the pod webhook
    refuses them before), with a nodeSelector on the leader's domain."""
    text = jobset(
        rjob("workers", parallelism=2, completions=2),
        annotations={"alpha.jobset.sigs.k8s.io/exclusive-topology": "rack"},
    )
    controller = first_pods(tmp_path, text)
    (leader,) = controller.wanted([])
    key = leader.labels["jobset.sigs.k8s.io/job-key"]
    assert leader.annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] == "rack"
    assert leader.labels["jobset.sigs.k8s.io/priority"] == "0"
    affinity = leader.pod_affinity
    assert affinity is not None
    (same,) = affinity.required
    (others,) = affinity.anti_required
    assert (same.topology_key, same.namespace_selector) == ("rack", ())
    assert [(r.key, r.operator, r.values) for r in same.selector or ()] == [
        ("jobset.sigs.k8s.io/job-key", "In", (key,))
    ]
    assert [(r.key, r.operator, r.values) for r in others.selector or ()] == [
        ("jobset.sigs.k8s.io/job-key", "Exists", ()),
        ("jobset.sigs.k8s.io/job-key", "NotIn", (key,)),
        ("jobset.sigs.k8s.io/priority", "In", ("0",)),
    ]
    scenario = load_scenario(write(tmp_path, nodes(2)))
    node = next(n for n in scenario.nodes if n.name == "gpu-1")
    assert controller.pod_bound(leader, node)
    (follower,) = controller.wanted([])
    assert stem(follower.name) == "train-workers-0-1"
    assert follower.node_selector == {"rack": "rack-0"} and follower.pod_affinity is None


def test_the_node_selector_strategy_pins_pods_to_nodes_labelled_with_their_job(tmp_path: Path) -> None:
    """``alpha.jobset.sigs.k8s.io/node-selector``: nodeSelector ``namespaced-job: <ns>_<job>`` and a
    toleration of the ``no-schedule`` taint, no affinities, no leader first."""
    annotations = {
        "alpha.jobset.sigs.k8s.io/exclusive-topology": "rack",
        "alpha.jobset.sigs.k8s.io/node-selector": "true",
    }
    pods = first_pods(
        tmp_path, jobset(rjob("workers", parallelism=2, completions=2), annotations=annotations)
    ).wanted([])
    assert len(pods) == 2
    assert all(
        p.node_selector == {"alpha.jobset.sigs.k8s.io/namespaced-job": "ml_train-workers-0"} for p in pods
    )
    assert all(p.pod_affinity is None and "jobset.sigs.k8s.io/priority" not in p.labels for p in pods)
    (toleration,) = pods[0].tolerations
    assert (toleration.key, toleration.operator, toleration.effect) == (
        "alpha.jobset.sigs.k8s.io/no-schedule",
        "Exists",
        "NoSchedule",
    )


def test_an_exclusive_non_indexed_job_gets_no_pods(tmp_path: Path) -> None:
    """A NonIndexed Job's pods have no completion index: none is the leader, so the pod webhook
    (``ValidateCreate``: "follower pod node selector not set") admits none of them."""
    spec = rjob("workers", parallelism=2, completions=2)
    spec["template"]["spec"]["completionMode"] = "NonIndexed"
    text = jobset(spec, annotations={"alpha.jobset.sigs.k8s.io/exclusive-topology": "rack"})
    assert first_pods(tmp_path, text).wanted([]) == []


def test_the_exclusive_rack_example_gives_each_job_a_rack_of_its_own() -> None:
    """examples/training/jobset-exclusive-rack.yaml: 3 trainer Jobs of 2 x 8 GPUs and 2 eval Jobs of
    1 x 2 GPUs on 4 racks of 2 nodes. Each Job's pods share one rack and no rack holds two Jobs;
    eval-1 waits (anti-affinity, though rack-d has 14 free GPUs) until eval-0 is done at 30 min."""
    summary = simulated([EXAMPLE])
    pods = pods_by_name(summary)
    rack_of = {n: p["node"].rsplit("-", 1)[0] for n, p in pods.items()}
    jobs: dict[str, set[str]] = {}
    for name, rack in rack_of.items():
        jobs.setdefault(stem(stem(name)), set()).add(rack)
    assert all(len(racks) == 1 for racks in jobs.values())
    trainers = [jobs[f"pretrain-trainer-{i}"] for i in range(3)]
    assert len(set().union(*trainers)) == 3  # three racks, one each
    eval0 = next(p for n, p in pods.items() if n.startswith("pretrain-eval-0-0"))
    eval1 = next(p for n, p in pods.items() if n.startswith("pretrain-eval-1-0"))
    assert jobs["pretrain-eval-0"] == jobs["pretrain-eval-1"] != trainers[0]
    assert eval0["bound_s"] == 0.0 and eval1["bound_s"] == eval0["finished_s"] == 1800.0
    assert {p["phase"] for p in pods.values()} == {"Succeeded"}


def test_the_exclusive_rack_example_says_why_the_last_job_waits(tmp_path: Path) -> None:
    (short,) = write(
        tmp_path,
        SIMULATION_10M,
    )
    pods = pods_by_name(simulated([EXAMPLE, short]))
    eval1 = next(p for n, p in pods.items() if n.startswith("pretrain-eval-1-0"))
    assert eval1["phase"] == "Pending"
    assert eval1["message"].startswith(
        "0/8 nodes are available: 2 node(s) didn't match pod anti-affinity rules, "
        "6 Insufficient nvidia.com/gpu."
    )
    explained = explain_scenario(load_scenario([EXAMPLE]))
    assert len(explained) == 5  # the leaders: followers come once their leader is bound


# -- Kueue and the published examples ---------------------------------------------------------------


def test_kueue_pod_sets_are_one_per_replicated_job(tmp_path: Path) -> None:
    """``podsCount``: ``replicas * min(parallelism, completions)`` pods, named after the replicated Job."""
    text = jobset(rjob("driver"), rjob("workers", replicas=3, parallelism=4, completions=2))
    pod_sets = first_pods(tmp_path, text).pod_sets()
    assert [(p.name, p.count) for p in pod_sets] == [("driver", 1), ("workers", 6)]


def test_kueue_admits_the_published_sample_jobset_as_one_workload() -> None:
    """Kueue's JobSet integration: one workload, a pod set per replicated Job
    (``replicas * min(parallelism, completions)`` pods): ``kueue/jobs/sample-jobset.yaml`` (1 + 2 cpu)
    is admitted whole by the quick start's ClusterQueue and both its pods run."""
    paths = [
        UPSTREAM / "_clusters/cpu-nodes.yaml",
        UPSTREAM / "_clusters/sim-1h.yaml",
        UPSTREAM / "kueue/getting-started/quick-start-setup.yaml",
        UPSTREAM / "kueue/jobs/sample-jobset.yaml",
    ]
    summary = simulated(paths)
    (workload,) = summary["kueue"]["workloads"]
    assert workload["name"].startswith("JobSet/default/sleep-job-") and workload["admissions"] == [0.0]
    usage = summary["kueue"]["cluster_queues"]["cluster-queue"]["usage"]
    assert usage["default-flavor/cpu"]["peak"] == 3000.0
    assert sorted(stem(n).split("-", 3)[3] for n in pods_by_name(summary)) == ["driver-0-0", "workers-0-0"]
    assert {p["phase"] for p in summary["pods"]} == {"Running"}  # sleep 100s, no gpufleet duration


def test_kueue_holds_a_jobset_whole_when_its_pod_sets_exceed_the_quota(tmp_path: Path) -> None:
    """10 cpu of pod sets against a 9-cpu quota: no pod of the JobSet is released, none runs."""
    spec = rjob("workers", replicas=5, gpus=0)
    spec["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": 2}}
    text = jobset(spec).replace(
        "namespace: ml", "namespace: default\n  labels: {kueue.x-k8s.io/queue-name: user-queue}"
    )
    text = text.replace("name: train", "name: big")
    paths = [UPSTREAM / "_clusters/cpu-nodes.yaml", UPSTREAM / "kueue/getting-started/quick-start-setup.yaml"]
    summary = simulated([*paths, *write(tmp_path, text)], duration_s=600)
    assert len(summary["pods"]) == 5 and {p["phase"] for p in summary["pods"]} == {"Pending"}
    (workload,) = summary["kueue"]["workloads"]
    assert workload["admissions"] == [] and "insufficient" in (workload["message"] or "").lower()


URGENT_PRIORITY = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000
"""
URGENT_JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: urgent
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {gpufleet.io/submit-at: 10m}
spec:
  template:
    metadata:
      annotations: {gpufleet.io/duration: 20m}
    spec:
      priorityClassName: urgent
      restartPolicy: Never
      containers:
      - name: main
        image: trainer
        resources:
          limits: {nvidia.com/gpu: 8}
"""
KUEUE_PREEMPTION = "---".join(
    [
        URGENT_PRIORITY,
        kueue_queues(
            "default-flavor",
            8,
            "lq",
            "ml",
            "v1beta1",
            queue_spec="  preemption: {withinClusterQueue: LowerPriority}\n",
        ),
        URGENT_JOB,
    ]
)


def test_a_jobset_evicted_by_kueue_is_suspended_and_runs_again_not_restarted(tmp_path: Path) -> None:
    """Kueue's eviction suspends the JobSet: its pods are deleted (``Suspended``) and created again,
    gated, under new names; admitted again once the urgent Job is done, it completes, with no
    restart counted (``jobset.status.restarts`` stays 0)."""
    text = jobset(rjob("workers", parallelism=2, completions=2, gpus=4, duration="1h"))
    text = text.replace("namespace: ml", "namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: lq}")
    pods, controller = run(write(tmp_path, nodes(), text, KUEUE_PREEMPTION))
    assert controller.finished_as == "Completed" and controller.restarts == 0
    workers = sorted(
        (p["created_s"], stem(n), p["phase"], p["reason"]) for n, p in pods.items() if n != "urgent-0"
    )
    assert workers == [
        (0.0, "train-workers-0-0", "Failed", "Suspended"),
        (0.0, "train-workers-0-1", "Failed", "Suspended"),
        (630.0, "train-workers-0-0", "Succeeded", "Completed"),
        (630.0, "train-workers-0-1", "Succeeded", "Completed"),
    ]
    assert pods["urgent-0"]["bound_s"] == 630.0


def test_the_published_paralleljobs_example_runs_its_workers_and_driver() -> None:
    """jobset's ``examples/simple/paralleljobs.yaml``: a Job of 4 workers and a driver, in parallel."""
    paths = [
        UPSTREAM / "_clusters/cpu-nodes.yaml",
        UPSTREAM / "_clusters/sim-1h.yaml",
        UPSTREAM / "jobset/simple/paralleljobs.yaml",
    ]
    pods = pods_by_name(simulated(paths))
    assert sorted(stem(n) for n in pods) == [
        "paralleljobs-driver-0-0",
        *(f"paralleljobs-workers-0-{i}" for i in range(4)),
    ]
    assert {p["phase"] for p in pods.values()} == {"Running"}


def test_the_published_resnet_example_runs_four_workers(tmp_path: Path) -> None:
    """jobset's ``examples/pytorch/resnet-cifar10/resnet.yaml``: 4 workers of one Indexed Job (the
    first, ``pytorch-workers-0-0``, is the MASTER_ADDR the others reach); with a duration set on its
    template the JobSet completes."""
    published = UPSTREAM / "jobset/pytorch/resnet-cifar10/resnet.yaml"
    paths = [UPSTREAM / "_clusters/cpu-nodes.yaml", UPSTREAM / "_clusters/sim-1h.yaml"]
    pods = pods_by_name(simulated([*paths, published]))
    assert sorted(stem(n) for n in pods) == [f"pytorch-workers-0-{i}" for i in range(4)]
    document = yaml.safe_load(published.read_text())
    template = document["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    template.setdefault("metadata", {})["annotations"] = {"gpufleet.io/duration": "20m"}
    timed = tmp_path / "timed.yaml"
    timed.write_text(yaml.safe_dump(document))
    summary = simulated([*paths, timed])
    assert {p["phase"] for p in summary["pods"]} == {"Succeeded"}


def test_kueue_releases_the_quota_of_a_replicated_jobs_completed_jobs(tmp_path: Path) -> None:
    """``JobSet.ReclaimablePods``: each replicated Job's completed Jobs' pods (``succeeded`` x
    ``min(parallelism, completions)``) stop counting against the quota while the JobSet runs on: the two
    10-minute Jobs of ``short`` (2 pods each) give back 4 of the 5 GPUs, ``long`` holds 1 until it ends."""
    text = jobset(rjob("short", replicas=2, parallelism=2, completions=2, duration="10m"), rjob("long"))
    text = text.replace("namespace: ml", "namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: lq}")
    summary = simulated(write(tmp_path, nodes(), text, kueue_queues("default-flavor", 5, "lq", "ml")))
    pods = pods_by_name(summary)
    short = {p["finished_s"] for n, p in pods.items() if n.startswith("train-short-")}
    (long,) = (p["finished_s"] for n, p in pods.items() if n.startswith("train-long-"))
    usage = summary["kueue"]["cluster_queues"]["cq"]["usage"]["default-flavor/nvidia.com/gpu"]
    assert usage["steps"] == [[0.0, 5.0], [*short, 1.0], [long, 0.0]]


# -- its Jobs' activeDeadlineSeconds -------------------------------------------------------------

DEADLINE_10M = {"activeDeadlineSeconds": 600}
JOB_DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")


def test_a_jobs_active_deadline_fails_it_and_without_a_failure_policy_the_jobset(tmp_path: Path) -> None:
    """A child Job's ``activeDeadlineSeconds`` (the Job controller's ``pastActiveDeadline``): 600 s after it
    started, its 2 h pod still running, the Job fails (``DeadlineExceeded``: ``FailureTarget``) and deletes
    it; it is ``Failed`` once the pod is gone after its 30 s grace period (``delayTerminalCondition``), and
    only then does the JobSet, with no failure policy, fail (``FailedJobs``, read from the ``Failed``
    condition, ``JobFinished``) and delete its other Jobs (their pod gone 30 s later)."""
    text = jobset(rjob("driver", duration="2h"), rjob("workers", duration="2h", template_spec=DEADLINE_10M))
    pods, controller = run(write(tmp_path, nodes(), text))
    assert controller.children["train-workers-0"].failure == JOB_DEADLINE_EXCEEDED
    assert (controller.finished_as, controller.message) == (
        "Failed",
        "jobset failed due to one or more job failures (first failed job: train-workers-0)",
    )
    assert {(stem(n), p["reason"], tuple(p["disruptions"]), p["finished_s"]) for n, p in pods.items()} == {
        ("train-workers-0-0", "Deleted", (600.0,), 630.0),
        ("train-driver-0-0", "Deleted", (630.0,), 660.0),
    }


def test_each_jobs_deadline_runs_from_its_own_start(tmp_path: Path) -> None:
    """Each child Job's deadline counts from its own ``status.startTime``: the workers' Job, created once the
    5 min initializer completed (``dependsOn: Complete``), fails 600 s after that, not 600 s after the
    JobSet's start; the initializer's own deadline, the same, never passes as it completed first."""
    init = rjob("init", duration="5m", template_spec=DEADLINE_10M)
    workers = rjob(
        "workers",
        duration="2h",
        template_spec=DEADLINE_10M,
        dependsOn=[{"name": "init", "status": "Complete"}],
    )
    pods, controller = run(write(tmp_path, nodes(), jobset(init, workers)))
    (worker,) = [p for n, p in pods.items() if n.startswith("train-workers")]
    assert (worker["created_s"], worker["disruptions"]) == (300.0, [900.0])
    assert controller.children["train-init-0"].success is not None
    assert controller.children["train-workers-0"].failure == JOB_DEADLINE_EXCEEDED
    assert controller.finished_as == "Failed"


@pytest.mark.parametrize(
    ("rules", "restarts", "message"),
    [
        pytest.param(
            [{"action": "RestartJobSet", "onJobFailureReasons": ["DeadlineExceeded"]}],
            1,
            "jobset failed due to reaching max number of restarts (first failed job: train-workers-0)",
            id="a-deadline-rule-restarts-it",
        ),
        pytest.param(
            [{"action": "FailJobSet", "onJobFailureReasons": ["DeadlineExceeded"]}],
            0,
            "applying FailJobSet failure policy action (first failed job: train-workers-0)",
            id="a-deadline-rule-fails-it",
        ),
        pytest.param(
            [{"action": "FailJobSet", "onJobFailureReasons": ["BackoffLimitExceeded"]}],
            1,
            "jobset failed due to reaching max number of restarts (first failed job: train-workers-0)",
            id="a-backoff-rule-does-not-apply",
        ),
    ],
)
def test_the_failure_policy_judges_a_job_past_its_deadline_by_its_reason(
    tmp_path: Path, rules: list[dict[str, Any]], restarts: int, message: str
) -> None:
    """``ruleIsApplicable`` on the Job's ``Failed`` reason ``DeadlineExceeded``: a rule naming it acts
    (``RestartJobSet`` within ``maxRestarts: 1``, ``FailJobSet`` at once); a rule naming another reason does
    not, and the default ``RestartJobSet`` applies. The Job is ``Failed`` once its deleted pod is gone (630 s,
    ``delayTerminalCondition``), when the JobSet judges it; a restart recreates it in the reconcile after the
    work queue's 5 ms (its pod of a new name) with a deadline of its own from then: it fails at 1230.005 s,
    and with no restart left the JobSet fails."""
    text = jobset(
        rjob("workers", duration="2h", template_spec=DEADLINE_10M),
        failurePolicy={"maxRestarts": 1, "rules": rules},
    )
    pods, controller = run(write(tmp_path, nodes(), text))
    assert (controller.finished_as, controller.message, controller.restarts) == ("Failed", message, restarts)
    assert controller.children["train-workers-0"].failure == JOB_DEADLINE_EXCEEDED
    ended = sorted((p["created_s"], *p["disruptions"], stem(n)) for n, p in pods.items())
    second = (pytest.approx(630.005), pytest.approx(1230.005), "train-workers-0-0")
    assert ended == [(0.0, 600.0, "train-workers-0-0"), second][: restarts + 1]


def test_under_kueue_a_jobs_deadline_stops_while_the_jobset_is_evicted_and_starts_again_on_admission(
    tmp_path: Path,
) -> None:
    """Kueue evicts the JobSet at 600 s (the urgent Job): its Jobs are suspended, and a suspended Job's
    deadline does not run; admitted again once the urgent Job ended, each Job resumes with its
    ``status.startTime`` cleared (``resumeJob``) and its 900 s deadline counts from then: the worker pods
    created again at 630 s run from 1830 s and are deleted at 2730 s, not at 900 s."""
    workers = rjob("workers", gpus=4, duration="2h", template_spec={"activeDeadlineSeconds": 900})
    text = jobset(workers).replace(
        "namespace: ml", "namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: lq}"
    )
    pods, controller = run(write(tmp_path, nodes(), text, KUEUE_PREEMPTION))
    assert controller.children["train-workers-0"].failure == JOB_DEADLINE_EXCEEDED
    assert controller.finished_as == "Failed"
    runs = sorted(
        (p["created_s"], p["running_s"], p["reason"], p["finished_s"])
        for n, p in pods.items()
        if n != "urgent-0"
    )
    assert runs == [(0.0, 0.0, "Suspended", 630.0), (630.0, 1830.0, "Deleted", 2760.0)]
