"""Volcano (``gpufleet.workloads.volcano_job``, ``gpufleet.kube.volcano``,
``gpufleet.scheduling.plugins.volcano``): the Job's reader (``pkg/webhooks/admission/jobs/{mutate,
validate}``), the pods and PodGroup its controller makes (``createJobPod``), its policies and
``maxRetry`` (``pkg/controllers/job/state``), the gang plugin's all or nothing
(``pkg/scheduler/plugins/gang``), a Queue's capability (``proportion``), and the published examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import URGENT_POD, a10_nodes, pods_by_name, simulated, simulated_controller, write
from gpufleet.cli import app
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.kube.explain import explain_scenario
from gpufleet.scheduling.messages import no_scheduler
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary
from gpufleet.workloads import controller_for
from gpufleet.workloads.job import JobController
from gpufleet.workloads.volcano_job import VolcanoJob, VolcanoJobController
from shared_files import UPSTREAM

ROOT = Path(__file__).resolve().parents[2]
VOLCANO = UPSTREAM / "volcano"
CLUSTERS = UPSTREAM / "_clusters"


def nodes(count: int = 1) -> str:
    return a10_nodes(count)


def task(
    name: str | None = "worker",
    replicas: int = 1,
    gpus: int = 1,
    duration: str = "1h",
    annotations: str = "",
    extra: str = "",
    restart: str = "Never",
) -> str:
    named = f"name: {name}" if name is not None else ""
    return f"""
  - {named}
    replicas: {replicas}
{extra}
    template:
      metadata:
        annotations: {{gpufleet.io/duration: {duration}{annotations}}}
      spec:
        restartPolicy: {restart}
        containers:
        - name: main
          image: trainer
          resources:
            limits: {{nvidia.com/gpu: {gpus}}}"""


def vcjob(*tasks: str, extra: str = "", name: str = "train") -> str:
    return f"""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}, namespace: ml}}
spec:
{extra}
  tasks:{"".join(tasks)}
"""


def run(paths: list[Path], duration_s: float | None = None) -> tuple[dict[str, Any], VolcanoJobController]:
    """The scenario simulated; its pods by name and the Volcano Job ``ml/train``'s controller."""
    pods, controller, _ = simulated_controller(
        paths, "Job.batch.volcano.sh/ml/train", VolcanoJobController, duration_s
    )
    return pods, controller


def job_of(tmp_path: Path, *texts: str) -> VolcanoJob:
    (job,) = load_scenario(write(tmp_path, nodes(), *texts)).other_workloads
    assert isinstance(job, VolcanoJob)
    return job


# -- the reader ------------------------------------------------------------------------------


def test_pods_are_named_labelled_and_annotated_as_the_job_controller_creates_them(tmp_path: Path) -> None:
    """``MakePodName``: ``<job>-<task>-<index>``; ``createJobPod``'s labels and annotations; the PodGroup
    ``<job>-<uid>`` (gpufleet's uid: a UUID of the namespace and name) joined by annotation."""
    job = job_of(tmp_path, vcjob(task("ps"), task(replicas=2)))
    controller = controller_for(job)
    pods = controller.wanted([])
    assert [p.name for p in pods] == ["train-ps-0", "train-worker-0", "train-worker-1"]
    worker = pods[2]
    assert worker.namespace == "ml" and worker.owner is not None
    assert (worker.owner.kind, worker.owner.name) == ("Job", "train")
    assert worker.scheduler_name == "volcano"  # the job's default schedulerName
    assert worker.labels == {
        "volcano.sh/task-index": "1",
        "volcano.sh/job-name": "train",
        "volcano.sh/task-spec": "worker",
        "volcano.sh/job-namespace": "ml",
        "volcano.sh/queue-name": "default",
    }
    group = job.pod_group_name
    assert group.startswith("train-") and len(group) == len("train-") + 36
    assert worker.annotations["scheduling.k8s.io/group-name"] == group and worker.pod_group == group
    for key, value in {
        "volcano.sh/task-index": "1",
        "volcano.sh/task-spec": "worker",
        "volcano.sh/job-name": "train",
        "volcano.sh/queue-name": "default",
        "volcano.sh/job-version": "0",
        "volcano.sh/template-uid": "train-worker",
        "volcano.sh/job-retry-count": "0",
    }.items():
        assert worker.annotations[key] == value, key
    (pod_group,) = controller.pod_groups()
    assert (pod_group.name, pod_group.namespace, pod_group.min_member, pod_group.queue) == (
        group,
        "ml",
        3,  # minAvailable defaults to the sum of the tasks' (each its replicas)
        "default",
    )
    assert job_of(tmp_path, vcjob(task("ps"))).pod_group_name == group  # the same on every read


def test_defaults_task_names_and_the_template_wins_over_the_job(tmp_path: Path) -> None:
    """``mutateSpec``: a task without a name is ``default<index>``; ``createJobPod``: the template's
    ``schedulerName`` and ``priorityClassName`` win over the job's."""
    classes = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
"""
    own = task(None).replace("restartPolicy: Never", "restartPolicy: Never\n        priorityClassName: low")
    extra = "  priorityClassName: high\n  schedulerName: gang-scheduler\n  maxRetry: 0"
    job = job_of(tmp_path, classes, vcjob(own, task("b"), extra=extra))
    assert [t.name for t in job.tasks] == ["default0", "b"] and job.max_retry == 3
    first, second = controller_for(job).wanted([])
    assert first.name == "train-default0-0" and (first.priority, first.priority_class_name) == (10, "low")
    assert (second.priority, second.priority_class_name) == (1000, "high")
    assert second.scheduler_name == "gang-scheduler"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (vcjob(), "spec.tasks: Required value: No task specified in job spec"),
        (
            vcjob(task("a", 2, extra="    minAvailable: 3")),
            "spec.tasks[0].minAvailable: Invalid value: 3: "
            "'minAvailable' is greater than 'replicas' in task: a, job: train",
        ),
        (vcjob(task("a"), task("a")), 'spec.tasks[1].name: Invalid value: "a": duplicated task name a'),
        (
            vcjob(task("a", 2), extra="  minAvailable: 3"),
            "spec.minAvailable: Invalid value: 3: "
            "job 'minAvailable' should not be greater than total replicas in tasks",
        ),
        (
            vcjob(task(), extra="  policies:\n  - {event: PodCrashed, action: RestartJob}"),
            'spec.policies[0].event: Unsupported value: "PodCrashed"',
        ),
        (
            vcjob(task(), extra="  policies:\n  - {event: PodFailed, action: Reboot}"),
            'spec.policies[0].action: Unsupported value: "Reboot"',
        ),
        (
            vcjob(
                task(),
                extra="  policies:\n  - {event: PodFailed, action: AbortJob}\n"
                "  - {event: PodFailed, action: RestartJob}",
            ),
            'spec.policies[1].event: Invalid value: "PodFailed": duplicate event across different policy',
        ),
        (
            vcjob(
                task(),
                extra="  policies:\n  - {event: '*', action: AbortJob}\n"
                "  - {event: PodFailed, action: RestartJob}",
            ),
            'spec.policies: Invalid value: ["*", "PodFailed"]: '
            "if there's * here, no other policy should be here",
        ),
        (
            vcjob(task(), extra="  policies:\n  - {exitCode: three, action: AbortJob}"),
            'spec.policies[0].exitCode: Invalid value: "three": must be an integer',
        ),
        (
            vcjob(task(), extra="  plugins: {horovod: []}"),
            'spec.plugins.horovod: Unsupported value: "horovod"',
        ),
        (
            vcjob(task(), extra="  queue: research"),
            'spec.queue: Invalid value: "research": unable to find job queue: '
            'queue.scheduling.volcano.sh "research" not found',
        ),
    ],
)
def test_a_bad_job_is_an_error_at_its_field(tmp_path: Path, text: str, message: str) -> None:
    """``validateJobCreate`` and ``validatePolicies`` (admit_job.go, util.go)."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), text))
    assert "(Job/ml/train): " + message in str(caught.value)


def test_gpufleet_validate_exits_2_on_a_bad_volcano_job(tmp_path: Path) -> None:
    (path,) = write(tmp_path, vcjob())
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "No task specified in job spec" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [("batch.volcano.sh/v1alpha1", "VolcanoJob"), ("scheduling.volcano.sh/v1beta1", "Queues")],
)
def test_a_misspelt_kind_of_a_volcano_group_is_an_error(tmp_path: Path, api_version: str, kind: str) -> None:
    """``batch.volcano.sh`` and ``scheduling.volcano.sh`` are known groups: a typo is not ignored."""
    text = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x, namespace: ml}}\nspec: {{}}\n"
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write(tmp_path, nodes(), text))
    assert f'unknown kind "{kind}" in {api_version}' in str(caught.value)


def test_volcano_cron_job_is_a_warning_not_an_error(tmp_path: Path) -> None:
    text = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\nmetadata: {name: x, namespace: ml}\nspec: {}\n"
    )
    scenario = load_scenario(write(tmp_path, nodes(), text))
    assert any(
        "kind batch.volcano.sh/v1alpha1/CronJob is not modelled; ignored" in w for w in scenario.warnings
    )


def test_what_is_not_modelled_is_a_warning_and_plugins_are_silent(tmp_path: Path) -> None:
    extra = """  ttlSecondsAfterFinished: 60
  minSuccess: 2
  plugins: {ssh: [], svc: [], env: [], mpi: ["--master=ps"]}
  policies:
  - {event: PodPending, action: AbortJob, timeout: 5m}
  - {exitCode: 137, action: RestartJob}"""
    dependent = task("w", 2, extra="    minAvailable: 1\n    dependsOn: {name: [ps]}")
    scenario = load_scenario(write(tmp_path, nodes(), vcjob(task("ps"), dependent, extra=extra)))
    warned = "\n".join(scenario.warnings)
    for field in (
        "ttlSecondsAfterFinished",
        "minSuccess",
        "policies[0].timeout",
        "policies[0].event",
        "tasks[1].dependsOn",
    ):
        assert f"spec.{field} is not modelled; ignored" in warned, field
    assert "plugins" not in warned and "exitCode" not in warned  # an exitCode policy is modelled
    # minAvailable 2 (the default, 1 + 1) is the sum of the tasks' minimums: the per-task one matters
    assert "spec.tasks[1].minAvailable is not modelled" in warned


def test_volcano_pod_group_and_queue_are_read(tmp_path: Path) -> None:
    """``scheduling.volcano.sh/v1beta1`` PodGroup (minMember, queue) and Queue (capability)."""
    text = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 2, reclaimable: true, capability: {cpu: "4", nvidia.com/gpu: 8}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec: {minMember: 3, queue: research, minResources: {cpu: "1"}, priorityClassName: high}
"""
    scenario = load_scenario(write(tmp_path, nodes(), text))
    group = scenario.pod_groups["ml/pg"]
    assert (group.min_member, group.queue) == (3, "research")
    assert [p.scheduler_name for s in scenario.schedulers for p in s.profiles] == ["volcano"]
    warned = "\n".join(scenario.warnings)
    assert "Queue/research): spec.weight is not modelled" in warned
    assert "PodGroup/ml/pg): spec.priorityClassName is not modelled" in warned
    assert "reclaimable" not in warned and "minResources" not in warned


# -- the scheduler: installed or not -------------------------------------------------------------

VOLCANO_POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  schedulerName: volcano
  containers: [{name: c, image: x}]
"""


def test_without_volcano_a_volcano_pod_stays_pending_with_gpufleets_message(tmp_path: Path) -> None:
    """No Volcano object: no volcano scheduler runs; a pod asking for it stays Pending, as before."""
    pods = pods_by_name(simulated(write(tmp_path, nodes(), VOLCANO_POD), duration_s=60))
    assert pods["p"]["phase"] == "Pending" and pods["p"]["message"] == no_scheduler("volcano")


def test_with_any_volcano_object_the_volcano_scheduler_places_a_volcano_pod(tmp_path: Path) -> None:
    """A Queue alone installs Volcano: the same pod is placed by the volcano scheduler."""
    pod = (
        VOLCANO_POD
        + """---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {}
"""
    )
    pods = pods_by_name(simulated(write(tmp_path, nodes(), pod), duration_s=60))
    assert pods["p"]["phase"] == "Running" and pods["p"]["node"] == "gpu-0"


# -- the gang ---------------------------------------------------------------------------------------


def test_the_gang_is_bound_whole_or_not_at_all(tmp_path: Path) -> None:
    """gang.go + allocate: 3 workers of 6 GPUs, minAvailable 3, two nodes of 8: two would fit, the gang
    does not, so none is bound and no GPU is held; the members say the PodGroup's condition."""
    pods, controller = run(write(tmp_path, nodes(2), vcjob(task(replicas=3, gpus=6))), duration_s=600)
    assert {p["phase"] for p in pods.values()} == {"Pending"} and {p["node"] for p in pods.values()} == {None}
    messages = {p["message"] for p in pods.values()}
    assert len(messages) == 1
    (message,) = messages
    assert message.startswith(
        "1/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; "
        "Pending: 1 Unschedulable, 2 Schedulable. Origin reason is train-worker-"
    )
    assert message.endswith(": 0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu.")
    assert controller.phase == "Pending"


def test_a_gang_of_min_available_runs_when_only_that_many_fit(tmp_path: Path) -> None:
    """minAvailable 2 of 3: two members are bound, the third waits alone (``0/1 nodes are unavailable``)."""
    pods, _ = run(write(tmp_path, nodes(), vcjob(task(replicas=3, gpus=4), extra="  minAvailable: 2")), 600)
    phases = sorted(p["phase"] for p in pods.values())
    assert phases == ["Pending", "Running", "Running"]
    (pending,) = [p for p in pods.values() if p["phase"] == "Pending"]
    assert pending["message"] == "0/1 nodes are unavailable: 1 Insufficient nvidia.com/gpu."


def test_a_pod_group_joined_by_annotation_gangs_bare_pods(tmp_path: Path) -> None:
    """Pods annotated ``scheduling.k8s.io/group-name`` form the Volcano PodGroup's gang; with one member
    missing the gang is not tried (``validJobFn``)."""
    pod = """
apiVersion: v1
kind: Pod
metadata:
  name: p{i}
  namespace: ml
  annotations: {{scheduling.k8s.io/group-name: pg}}
spec:
  schedulerName: volcano
  containers: [{{name: c, image: x}}]
"""
    group = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec: {minMember: 3}
"""
    pods = pods_by_name(
        simulated(write(tmp_path, nodes(), group, pod.format(i=0), pod.format(i=1)), duration_s=60)
    )
    assert {p["phase"] for p in pods.values()} == {"Pending"}
    assert pods["p0"]["message"] == "Not enough valid tasks for gang-scheduling, valid: 2, min: 3"
    assert pods["p0"]["pod_group"] == "ml/pg"


# -- queues -----------------------------------------------------------------------------------------


def test_a_queue_without_capability_left_holds_the_job_pending(tmp_path: Path) -> None:
    """``proportion``'s enqueue check (``JobEnqueueableFn``): the queue's capability (4 GPUs) cannot take
    the gang's minimum (6): no member is placed, and each says the PodGroup's event; with 6 it runs."""
    queue = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {capability: {nvidia.com/gpu: 4}}
"""
    text = vcjob(task(replicas=3, gpus=2), extra="  queue: research")
    pods, _ = run(write(tmp_path, nodes(), queue, text), duration_s=600)
    assert {p["phase"] for p in pods.values()} == {"Pending"}
    assert {p["message"] for p in pods.values()} == {
        "queue resource quota insufficient: insufficient nvidia.com/gpu"
    }

    roomy = queue.replace("nvidia.com/gpu: 4", "nvidia.com/gpu: 6")
    pods, _ = run(write(tmp_path, nodes(), roomy, text), duration_s=600)
    assert {p["phase"] for p in pods.values()} == {"Running"}


def test_the_queue_of_a_deployments_pods_is_their_annotation(tmp_path: Path) -> None:
    """The published deployment example's Queue ``test`` (cpu 2) with 10 replicas of 300m: six fit."""
    deployment = (VOLCANO / "deployment/deployment.yaml").read_text().replace("replicas: 1", "replicas: 10")
    (scaled,) = write(tmp_path, deployment)
    summary = simulated(
        [CLUSTERS / "cpu-nodes.yaml", VOLCANO / "deployment/queue.yaml", scaled], duration_s=60
    )
    phases = sorted(p["phase"] for p in summary["pods"])
    assert phases == ["Pending"] * 4 + ["Running"] * 6
    pending = [p for p in summary["pods"] if p["phase"] == "Pending"]
    assert {p["message"] for p in pending} == {"queue resource quota insufficient: insufficient cpu"}


# -- policies and maxRetry ----------------------------------------------------------------------

OOM = ", gpufleet.io/gpu-memory: 40GB"  # more than the A10's 24 GiB: CUDA out of memory as it starts


def test_without_a_policy_a_failed_pod_stays_failed_and_the_job_ends_by_min_available(tmp_path: Path) -> None:
    """``SyncJob``: a Failed pod is not created again. Once all pods ended (``runningState``): with the
    job's minAvailable the sum of the tasks' (1 + 1), each task needs its minimum of successes, so a task
    that failed fails the job; with minAvailable 1 alone, one success completes it."""
    ok, bad = "    minAvailable: 1", "    minAvailable: 1"
    text = vcjob(task("ok", 2, duration="10m", extra=ok), task("bad", annotations=OOM, extra=bad))
    pods, controller = run(write(tmp_path, nodes(), text), duration_s=3600)
    assert pods["train-bad-0"]["phase"] == "Failed" and pods["train-bad-0"]["reason"] == "OOMKilled"
    assert {pods[f"train-ok-{i}"]["phase"] for i in range(2)} == {"Succeeded"}
    assert controller.phase == "Failed" and controller.retry_count == 0

    text = vcjob(task("ok", duration="10m"), task("bad", annotations=OOM), extra="  minAvailable: 1")
    pods, controller = run(write(tmp_path, nodes(), text), duration_s=3600)
    assert pods["train-bad-0"]["phase"] == "Failed" and pods["train-ok-0"]["phase"] == "Succeeded"
    assert controller.phase == "Completed"


def test_the_job_completes_when_its_pods_succeed(tmp_path: Path) -> None:
    pods, controller = run(write(tmp_path, nodes(), vcjob(task(replicas=2, duration="10m"))))
    assert {p["phase"] for p in pods.values()} == {"Succeeded"} and controller.phase == "Completed"


def test_restart_job_on_pod_failed_restarts_until_max_retry(tmp_path: Path) -> None:
    """``RestartJob`` deletes every pod and creates them again (Restarting); the retry count reaching
    ``maxRetry`` (2) fails the job (``restartingUpdateStatus``): one restart, then Failed, and the pods
    still running are deleted (``finishedState``)."""
    extra = "  maxRetry: 2\n  policies:\n  - {event: PodFailed, action: RestartJob}"
    text = vcjob(task("ok", duration="2h"), task("bad", annotations=OOM), extra=extra)
    pods, controller = run(write(tmp_path, nodes(), text), duration_s=3600)
    assert controller.retry_count == 2 and controller.phase == "Failed" and controller.version == 2
    assert pods["train-ok-0"]["phase"] == "Failed" and pods["train-ok-0"]["reason"] == "Deleted"
    assert pods["train-bad-0"]["phase"] == "Failed"


def test_a_task_policy_wins_over_the_jobs_and_abort_deletes_running_pods(tmp_path: Path) -> None:
    """``applyPolicies``: the task's policies first. ``AbortJob`` (``PodRetainPhaseSoft``): the running
    pods go, then the job is Aborted."""
    bad = task("bad", annotations=OOM, extra="    policies:\n    - {event: PodFailed, action: AbortJob}")
    extra = "  policies:\n  - {event: PodFailed, action: RestartJob}"
    pods, controller = run(write(tmp_path, nodes(), vcjob(task("ok", duration="2h"), bad, extra=extra)), 3600)
    assert controller.phase == "Aborted" and controller.retry_count == 0
    assert pods["train-ok-0"]["reason"] == "Deleted" and pods["train-bad-0"]["reason"] == "OOMKilled"


def test_complete_job_on_task_completed_ends_the_job_when_the_master_succeeds(tmp_path: Path) -> None:
    """The MPI examples' policy: ``TaskCompleted`` of the master -> ``CompleteJob``: the workers that
    still run are deleted and the job is Completed."""
    master = task(
        "master", duration="10m", extra="    policies:\n    - {event: TaskCompleted, action: CompleteJob}"
    )
    pods, controller = run(write(tmp_path, nodes(), vcjob(master, task("worker", 2, duration="2h"))), 3600)
    assert controller.phase == "Completed"
    assert pods["train-master-0"]["phase"] == "Succeeded"
    assert {pods[f"train-worker-{i}"]["reason"] for i in range(2)} == {"Deleted"}


def test_an_evicted_pod_is_created_again_without_a_policy(tmp_path: Path) -> None:
    """``deletePod`` -> ``PodEvicted`` -> ``SyncJob``: the missing pod is created again under its name; a
    higher-priority pod preempted it (kube-scheduler's DefaultPreemption), and once it is gone the
    worker runs again and the job completes."""
    pods, controller = run(write(tmp_path, nodes(), vcjob(task(gpus=8, duration="30m")), URGENT_POD))
    assert pods["urgent"]["phase"] == "Succeeded"
    assert controller.phase == "Completed" and controller.retry_count == 0
    assert pods["train-worker-0"]["phase"] == "Succeeded"


def test_restart_pod_on_pod_evicted_counts_a_retry(tmp_path: Path) -> None:
    extra = "  policies:\n  - {event: PodEvicted, action: RestartPod}"
    pods, controller = run(
        write(tmp_path, nodes(), vcjob(task(gpus=8, duration="30m"), extra=extra), URGENT_POD)
    )
    assert controller.retry_count == 1 and controller.phase == "Completed"
    assert pods["train-worker-0"]["phase"] == "Succeeded"


# -- exitCode policies ---------------------------------------------------------------------------


def exits(code: int) -> str:
    """The annotation of a container that exits with ``code`` once its work is done."""
    return f', gpufleet.io/exit-code: "{code}"'


def test_an_exit_code_policy_of_another_code_leaves_the_failure_to_sync_job(tmp_path: Path) -> None:
    """Exit code 1 matches no ``exitCode: 3`` policy: ``SyncJob``, the failed pod stays Failed."""
    extra = "  policies:\n  - {exitCode: 3, action: RestartJob}"
    failing = task("fail", duration="10m", annotations=exits(1), extra="    minAvailable: 0")
    pods, controller = run(
        write(
            tmp_path, nodes(), vcjob(task("ok", duration="20m"), failing, extra=extra + "\n  minAvailable: 1")
        ),
        3600,
    )
    assert controller.retry_count == 0 and controller.phase == "Completed"
    assert pods["train-fail-0"]["phase"] == "Failed" and pods["train-ok-0"]["phase"] == "Succeeded"


@pytest.mark.parametrize(("code", "phase", "retries"), [(3, "Failed", 3), (1, "Aborted", 0)])
def test_the_first_policy_in_order_whose_event_or_exit_code_matches_acts(
    tmp_path: Path, code: int, phase: str, retries: int
) -> None:
    """``applyPolicies`` walks the task's policies in order, each matching by its event or its
    ``exitCode``: exit code 3 meets ``exitCode: 3`` (``RestartTask``) before ``PodFailed`` (``AbortJob``);
    exit code 1 only the event."""
    policies = (
        "    policies:\n    - {exitCode: 3, action: RestartTask}\n    - {event: PodFailed, action: AbortJob}"
    )
    failing = task("fail", duration="10m", annotations=exits(code), extra=policies)
    pods, controller = run(write(tmp_path, nodes(), vcjob(task("ok", duration="2h"), failing)), 3600)
    assert controller.phase == phase and controller.retry_count == retries
    assert pods["train-ok-0"]["reason"] == "Deleted"


def test_an_oom_killed_container_exits_137_for_an_exit_code_policy(tmp_path: Path) -> None:
    """CUDA out of memory under ``Never``: OOMKilled, exit code 137, matched by ``exitCode: 137``."""
    extra = "  policies:\n  - {exitCode: 137, action: TerminateJob}"
    pods, controller = run(
        write(tmp_path, nodes(), vcjob(task("ok", duration="2h"), task("bad", annotations=OOM), extra=extra)),
        3600,
    )
    assert controller.phase == "Terminated" and controller.retry_count == 0
    assert pods["train-bad-0"]["reason"] == "OOMKilled" and pods["train-ok-0"]["reason"] == "Deleted"


def test_an_exit_code_policy_does_not_match_a_deleted_pod(tmp_path: Path) -> None:
    """A preempted pod is ``PodEvicted`` (``deletePod``), which carries no exit code: its container's 137
    matches no ``exitCode: 137`` policy, and ``SyncJob`` creates it again."""
    extra = "  policies:\n  - {exitCode: 137, action: AbortJob}"
    pods, controller = run(
        write(tmp_path, nodes(), vcjob(task(gpus=8, duration="30m"), extra=extra), URGENT_POD)
    )
    assert controller.phase == "Completed" and pods["train-worker-0"]["phase"] == "Succeeded"


def test_an_exit_code_policy_of_an_unknown_action_is_accepted_and_syncs(tmp_path: Path) -> None:
    """``validatePolicies`` checks the action of an event's policy only; the job's state runs an action
    it does not know as ``SyncJob`` (``runningState.Execute``'s default)."""
    policies = "  - {exitCode: 1, action: Reboot}\n  - {event: PodFailed, action: AbortJob}"
    extra = "  minAvailable: 1\n  policies:\n" + policies
    failing = task("fail", duration="10m", annotations=exits(1), extra="    minAvailable: 0")
    pods, controller = run(
        write(tmp_path, nodes(), vcjob(task("ok", duration="20m"), failing, extra=extra)), 3600
    )
    assert controller.phase == "Completed" and pods["train-ok-0"]["phase"] == "Succeeded"


def test_an_exit_code_policy_on_a_task_whose_first_container_is_not_the_first_status_is_a_warning(
    tmp_path: Path,
) -> None:
    """The kubelet sorts container statuses by name (``SortedContainerStatuses``) and Volcano reads the
    first; gpufleet's exit code is the first container's (``main``), and ``agent`` sorts first."""
    sidecar = "\n        - {name: agent, image: agent}"
    text = vcjob(task(), extra="  policies:\n  - {exitCode: 1, action: AbortJob}").rstrip() + sidecar + "\n"
    scenario = load_scenario(write(tmp_path, nodes(), text))
    warned = "\n".join(scenario.warnings)
    assert (
        "spec.tasks[0].template.spec.containers: an exitCode policy reads the first container status"
        in warned
    )
    assert "no exitCode policy matches this task's failures" in warned


# -- a batch Job and a Volcano Job of one name ------------------------------------------------------


def test_a_batch_job_and_a_volcano_job_of_the_same_name_are_not_confused(tmp_path: Path) -> None:
    """Both own their pods as kind ``Job``: the simulator files them apart (``Job/ml/train`` and
    ``Job.batch.volcano.sh/ml/train``) and each hears of its own pods only."""
    batch = """
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    metadata:
      annotations: {gpufleet.io/duration: 20m}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
    scenario = load_scenario(write(tmp_path, nodes(), batch, vcjob(task(replicas=2, duration="10m"))))
    sim = Simulation(scenario)
    sim.run()
    batch_job = sim.job("ml/train")
    assert isinstance(batch_job, JobController)
    volcano = sim.controllers["Job.batch.volcano.sh/ml/train"]
    assert isinstance(volcano, VolcanoJobController) and volcano.phase == "Completed"
    pods = pods_by_name(build_summary(sim))
    assert sorted(pods) == ["train-0", "train-worker-0", "train-worker-1"]
    assert {p["phase"] for p in pods.values()} == {"Succeeded"}
    assert pods["train-0"]["finished_s"] == 1200.0 and pods["train-worker-0"]["finished_s"] == 600.0


# -- the published examples ---------------------------------------------------------------------------


def test_the_published_mindspore_gpu_job_runs_its_gang_on_gpus() -> None:
    """``example/MindSpore-example/mindspore_gpu`` (scenario ``volcano-gpu-job``): an MPI master and two
    1-GPU workers, minAvailable 3: all three run, the workers on GPUs; the staging PodGroup
    ``test-pg`` beside it changes nothing. Published without ``gpufleet.io/duration``, it computes until
    the run ends, and the summary's one warning says so."""
    paths = [
        CLUSTERS / "h100-nodes.yaml",
        CLUSTERS / "sim-1h.yaml",
        VOLCANO / "MindSpore-example/mindspore_gpu/mindspore-gpu.yaml",
        VOLCANO / "staging/src/volcano.sh/apis/artifacts/podgroup.yaml",
    ]
    summary = simulated(paths)
    pods = pods_by_name(summary)
    assert sorted(pods) == [
        "mindspore-gpu-mpimaster-0",
        "mindspore-gpu-mpiworker-0",
        "mindspore-gpu-mpiworker-1",
    ]
    assert {p["phase"] for p in pods.values()} == {"Running"}
    assert pods["mindspore-gpu-mpiworker-0"]["gpus"] == 1 and pods["mindspore-gpu-mpimaster-0"]["gpus"] == 0
    (warning,) = summary["warnings"]
    assert "(Job/default/mindspore-gpu)" in warning and "no gpufleet.io/duration" in warning


def test_the_published_deployment_runs_in_its_queue() -> None:
    """``example/deployment`` (scenario ``volcano-deployment``): one nginx replica of 300m in Queue
    ``test`` (cpu 2), placed by the volcano scheduler."""
    paths = [CLUSTERS / "cpu-nodes.yaml", CLUSTERS / "sim-1h.yaml", VOLCANO / "deployment"]
    summary = simulated(paths)
    (pod,) = summary["pods"]
    assert pod["name"] == "default/deploy-with-volcano-0" and pod["phase"] == "Running"
    assert summary["schedulers"] == ["kube-scheduler", "volcano"]


def test_the_published_job_runs_six_nginx_pods() -> None:
    """``example/job.yaml``: one task of 6 replicas, minAvailable 3, on the three CPU nodes."""
    summary = simulated([CLUSTERS / "cpu-nodes.yaml", VOLCANO / "job.yaml"], duration_s=600)
    pods = pods_by_name(summary)
    assert sorted(pods) == [f"test-job-default-nginx-{i}" for i in range(6)]
    assert {p["phase"] for p in pods.values()} == {"Running"}


def test_explain_judges_a_volcano_gang_together_in_volcanos_words(tmp_path: Path) -> None:
    """``gpufleet explain`` places the gang's members one after another, as the volcano scheduler does:
    2 of 3 fit, the gang does not, and every member says the PodGroup's condition, as in the simulation."""
    explained = explain_scenario(load_scenario(write(tmp_path, nodes(2), vcjob(task(replicas=3, gpus=6)))))
    assert {e["scheduler"] for e in explained} == {"volcano"}
    assert {e["together"]["placed"] for e in explained} == {2}
    (message,) = {e["message"] for e in explained}
    assert message.startswith("1/3 tasks in gang unschedulable: pod group is not ready")
