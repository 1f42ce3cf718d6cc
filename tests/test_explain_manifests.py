"""``gpufleet explain`` on manifests and on ``kubectl`` dumps: the pods a Job would create are explained
like pending pods; kube-scheduler's recorded messages beside gpufleet's; what it cannot judge; pods
judged together; preemption's victims."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import coscheduling
from gpufleet.kube import load_scenario
from gpufleet.kube.explain import explain_scenario, render_explanations
from gpufleet.kube.explain_recorded import verdict
from gpufleet.kube.explain_together import placed_with
from gpufleet.kube.problems import ScenarioError
from gpufleet.model.pod import OwnerRef, Pod
from gpufleet.model.scheduler_records import Recorded, event_message

SCENARIO = """
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: big}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: i
        resources: {limits: {nvidia.com/gpu: 16}}
"""


def test_job_pods_are_explained_with_kube_schedulers_message(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    [entry] = explain_scenario(load_scenario([path]))
    assert entry["pod"] == "default/big-0"
    assert entry["message"] == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert entry["closest_nodes"] == [
        {"node": "gpu-0", "needs": ["node has too little nvidia.com/gpu in total"], "evict": []}
    ]


# -- explain says what it knows and what it cannot judge (issue 12) ---------------------------------

NODE = """
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
"""
FULL_NODE = (
    NODE
    + """---
apiVersion: v1
kind: Pod
metadata: {name: held, namespace: ml}
spec:
  nodeName: gpu-0
  containers:
  - {name: c, image: i, resources: {limits: {nvidia.com/gpu: 8}}}
status: {phase: Running}
"""
)
#: What kube-scheduler 1.34 says of a 4-GPU pod beside FULL_NODE's pod of the same priority
#: (``framework.FitError.Error``; DefaultPreemption finds no lower-priority pod: ``No preemption
#: victims found for incoming pod``).
NO_ROOM = (
    "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, "
    "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
)


def pending_pod(name: str, *, gpus: int = 4, status: str = "", extra_spec: str = "") -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ml, uid: uid-{name}}}
spec:
  containers:
  - {{name: c, image: i, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
{extra_spec}
status:
  phase: Pending
{status}
"""


def unschedulable(message: str, at: str = "2025-01-02T03:04:05Z") -> str:
    return f"""  conditions:
  - type: PodScheduled
    status: "False"
    reason: Unschedulable
    lastTransitionTime: "{at}"
    message: "{message}"
"""


def event(name: str, pod: str, message: str, at: str, uid: str = "", reason: str = "FailedScheduling") -> str:
    uid_field = f", uid: {uid}" if uid else ""
    return f"""---
apiVersion: v1
kind: Event
metadata: {{name: {name}, namespace: ml}}
involvedObject: {{kind: Pod, namespace: ml, name: {pod}{uid_field}}}
reason: {reason}
message: "{message}"
lastTimestamp: "{at}"
"""


def explained(tmp_path: Path, text: str, only: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """explain's records and the lines it prints (on a console wide enough not to wrap them)."""
    path = tmp_path / "state.yaml"
    path.write_text(text)
    entries = explain_scenario(load_scenario([path]), only=only)
    console = Console(file=io.StringIO(), width=1000)
    render_explanations(entries, console)
    assert isinstance(console.file, io.StringIO)
    return entries, [line.rstrip() for line in console.file.getvalue().splitlines()]


def test_the_recorded_condition_and_event_are_shown_verbatim_and_agreed_with(tmp_path: Path) -> None:
    """``handleSchedulingFailure`` (schedule_one.go) writes the FitError message to the pod's
    PodScheduled condition and to a FailedScheduling Event: both are printed as written, then
    gpufleet's own message, and gpufleet says it agrees."""
    text = FULL_NODE + pending_pod("want-4", status=unschedulable(NO_ROOM))
    text += event("want-4.1", "want-4", NO_ROOM, "2025-01-02T03:04:05Z", uid="uid-want-4")
    [entry], lines = explained(tmp_path, text)
    assert lines[1:5] == [
        f"kube-scheduler, PodScheduled=False (Unschedulable): {NO_ROOM}",
        f"kube-scheduler, FailedScheduling event: {NO_ROOM}",
        f"gpufleet: {NO_ROOM}",
        "gpufleet agrees with kube-scheduler's message (PodScheduled=False (Unschedulable))",
    ]
    assert entry["recorded"][1] == {
        "source": "FailedScheduling event",
        "message": NO_ROOM,
        "at": "2025-01-02T03:04:05+00:00",
    }


def test_explain_names_the_parts_of_the_recorded_message_it_disagrees_with(tmp_path: Path) -> None:
    recorded = NO_ROOM.replace("1 Insufficient nvidia.com/gpu", "1 Insufficient cpu")
    _, lines = explained(tmp_path, FULL_NODE + pending_pod("want-4", status=unschedulable(recorded)))
    assert lines[-3] == (
        "gpufleet disagrees with kube-scheduler's message (PodScheduled=False (Unschedulable)): "
        'only kube-scheduler\'s has "1 Insufficient cpu"; '
        'only gpufleet\'s has "1 Insufficient nvidia.com/gpu"'
    )


def test_explain_disagrees_when_it_would_place_a_pod_kube_scheduler_could_not(tmp_path: Path) -> None:
    [entry], lines = explained(tmp_path, NODE + pending_pod("want-4", status=unschedulable(NO_ROOM)))
    assert entry["schedulable_now"] == "gpu-0"
    assert lines[2:] == [
        "gpufleet: would be placed on gpu-0 now",
        "gpufleet disagrees: kube-scheduler could not place the pod (PodScheduled=False (Unschedulable)), "
        "gpufleet would place it on gpu-0 now (or the cluster changed since kube-scheduler's attempt)",
    ]


def test_the_latest_failed_scheduling_event_of_the_same_pod_is_the_one_shown(tmp_path: Path) -> None:
    """Events are matched to the pod by ``involvedObject`` (namespace, name, and uid where both have
    one: an Event about an earlier pod of the same name is not this pod's); the latest by time is shown.
    events.k8s.io/v1 Events (``regarding``, ``note``) count as well."""
    text = FULL_NODE + pending_pod("want-4")
    text += event("e1", "want-4", "older", "2025-01-02T03:00:00Z")
    text += event("e2", "want-4", "newest", "2025-01-02T03:10:00Z")
    text += event("e3", "want-4", "another pod's", "2025-01-02T04:00:00Z", uid="uid-gone")
    text += event("e4", "other", "not this pod", "2025-01-02T05:00:00Z")
    text += """---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: e5, namespace: ml}
regarding: {kind: Pod, namespace: ml, name: want-4}
reason: FailedScheduling
note: "new API, a little later"
eventTime: "2025-01-02T03:10:00.500000Z"
reportingController: default-scheduler
reportingInstance: default-scheduler-node
action: Scheduling
"""
    [entry], lines = explained(tmp_path, text)
    assert [r["message"] for r in entry["recorded"]] == ["new API, a little later"]
    assert lines[1] == "kube-scheduler, FailedScheduling event: new API, a little later"


def test_events_that_explain_does_not_read_are_warnings(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(FULL_NODE + event("e1", "held", "pulled", "2025-01-02T03:00:00Z", reason="Pulled"))
    assert load_scenario([path]).warnings == [
        f"{path}: document 3 (Event/ml/e1): reason Pulled about a Pod object is not modelled "
        "(explain reads FailedScheduling events of pods); ignored"
    ]


def test_an_event_time_that_is_not_rfc3339_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(FULL_NODE + event("e1", "held", "m", "yesterday"))
    with pytest.raises(ScenarioError) as error:
        load_scenario([path])
    assert error.value.problems == [
        f"{path}: document 3 (Event/ml/e1): lastTimestamp: "
        'Invalid value: "yesterday": must be an RFC 3339 time'
    ]


PVC = """  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}"""


def test_a_pod_using_an_unmodelled_field_cannot_be_judged_never_placed(tmp_path: Path) -> None:
    """The reader's ``is not modelled`` warnings for the pod make it ``cannot judge``: gpufleet does
    not say it would be placed on the node that has room, since VolumeBinding might not agree."""
    [entry], lines = explained(tmp_path, NODE + pending_pod("with-pvc", extra_spec=PVC))
    assert entry["schedulable_now"] is None
    assert entry["cannot_judge"] == ["spec.volumes[0].persistentVolumeClaim"]
    assert lines[1:] == ["cannot judge: spec.volumes[0].persistentVolumeClaim is not modelled"]


def test_a_pod_that_cannot_be_judged_still_shows_what_rules_it_out(tmp_path: Path) -> None:
    """Filters only take nodes away: when the modelled ones already leave none, that is said, as
    gpufleet's evaluation without what it does not model, and no verdict against kube-scheduler."""
    text = FULL_NODE + pending_pod("with-pvc", status=unschedulable("whatever"), extra_spec=PVC)
    [entry], lines = explained(tmp_path, text)
    assert entry["verdict"] is None and entry["preemption"] is None
    assert lines[2:4] == [
        "cannot judge: spec.volumes[0].persistentVolumeClaim is not modelled",
        f"gpufleet, without what it does not model: {NO_ROOM}",
    ]


def test_a_job_template_field_that_is_not_modelled_is_the_pods(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO + PVC.replace("  ", "      ", 1).replace("\n  ", "\n      "))
    scenario = load_scenario([path])
    assert scenario.jobs[0].template.not_modelled == ("spec.volumes[0].persistentVolumeClaim",)
    [entry] = explain_scenario(scenario)
    assert entry["cannot_judge"] == ["spec.volumes[0].persistentVolumeClaim"]


def test_a_plugin_of_the_pods_profile_without_an_implementation_means_cannot_judge(tmp_path: Path) -> None:
    config = """---
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    filter:
      enabled: [{name: VolumeBinding}]
"""
    [entry], lines = explained(tmp_path, NODE + config + pending_pod("want-4"))
    assert entry["schedulable_now"] is None
    assert lines[1:] == ["cannot judge: plugin VolumeBinding of profile default-scheduler is not modelled"]


JOB = """---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  parallelism: 4
  completions: 4
  template:
    metadata: {labels: LABELS}
    spec:
      schedulerName: SCHEDULER
      restartPolicy: Never
      containers:
      - {name: c, image: i, resources: {limits: {nvidia.com/gpu: 4}}}
"""
HALF_FULL_NODE = FULL_NODE.replace("nvidia.com/gpu: 8}}}", "nvidia.com/gpu: 4}}}")


def job(labels: str = "{}", scheduler: str = "default-scheduler") -> str:
    return JOB.replace("LABELS", labels).replace("SCHEDULER", scheduler)


def test_a_jobs_parallel_pods_are_judged_one_after_another(tmp_path: Path) -> None:
    """kube-scheduler takes pending pods one at a time, each cycle seeing the pods assumed before
    it (schedule_one.go, Reserve): four 4-GPU workers do not each fit on a node with room for one."""
    entries, lines = explained(tmp_path, HALF_FULL_NODE + job())
    assert [e["schedulable_now"] for e in entries] == ["gpu-0", None, None, None]
    assert entries[1]["message"] == NO_ROOM
    assert entries[1]["together"]["placed_before"] == [["ml/train-0", "gpu-0"]]
    assert entries[1]["diagnosis"]["largest_free_gpus"] == 0  # as the attempt saw the node
    assert "gpufleet: would be placed on gpu-0 now" in lines
    assert (
        "judged with the 4 pending pods of Job ml/train, one after another in queue order; "
        "placed before it: ml/train-0 on gpu-0"
    ) in lines


COSCHEDULING = (
    f"---{coscheduling('gang-scheduler')}---"
    + """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec: {minMember: MIN}
"""
)
GANG_LABELS = "{scheduling.x-k8s.io/pod-group: train}"


def test_a_coscheduling_gang_that_does_not_fit_whole_places_nobody(tmp_path: Path) -> None:
    """scheduler-plugins Coscheduling: members wait at Permit until minMember are assigned; the
    member that does not fit is rejected in PostFilter with its gang (``PodGroup ... gets rejected
    due to Pod ... is unschedulable even after PostFilter``), so none is placed."""
    text = HALF_FULL_NODE + COSCHEDULING.replace("MIN", "4") + job(GANG_LABELS, "gang-scheduler")
    entries, lines = explained(tmp_path, text)
    assert [e["schedulable_now"] for e in entries] == [None] * 4
    assert entries[0]["together"]["waits_on"] == "gpu-0"
    assert entries[1]["message"] == (
        NO_ROOM
        + ", PodGroup ml/train gets rejected due to Pod train-1 is unschedulable even after PostFilter"
    )
    assert lines[2:5] == [
        "gang ml/train is all or nothing (Coscheduling): minMember 4, but only 1 of its 4 pending pods fit "
        "together and 0 are bound, so none is placed",
        "it would wait at Permit on gpu-0 until its gang is rejected",
        "gpufleet: optimistic rejection in PostFilter",
    ]


def test_a_coscheduling_gang_that_fits_whole_is_placed(tmp_path: Path) -> None:
    text = (
        NODE + COSCHEDULING.replace("MIN", "2") + job(GANG_LABELS, "gang-scheduler").replace(": 4\n", ": 2\n")
    )
    entries, _ = explained(tmp_path, text)
    assert [e["schedulable_now"] for e in entries] == ["gpu-0", "gpu-0"]


def test_preemption_names_the_victims_where_they_run_and_the_nominated_node(tmp_path: Path) -> None:
    """DefaultPreemption's dry run (default_preemption.go ``SelectVictimsOnNode``, preemption.go
    ``pickOneNodeForPreemption``): the node whose victims' highest priority is lowest is nominated."""
    text = """---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""
    for node, pod, priority in (("gpu-0", "low-a", 0), ("gpu-1", "low-b", 10)):
        text += (
            "---"
            + NODE.replace("gpu-0", node)
            + f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {pod}, namespace: ml}}
spec:
  nodeName: {node}
  priority: {priority}
  containers:
  - {{name: c, image: i, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}
status: {{phase: Running}}
"""
        )
    text += pending_pod("urgent", extra_spec="  priorityClassName: high")
    [entry], lines = explained(tmp_path, text)
    assert entry["preemption"] == {
        "nominated_node": "gpu-0",
        "victims": [{"pod": "ml/low-a", "node": "gpu-0"}],
        "equally_ranked": [],
    }
    assert lines[1:3] == [
        "gpufleet: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
        "preemption: nominated to gpu-0, evicting ml/low-a (on gpu-0)",
    ]


@pytest.mark.parametrize(
    ("labels", "annotations", "owner", "together"),
    [
        ({"scheduling.x-k8s.io/pod-group": "g"}, {}, None, "PodGroup ml/g"),
        ({}, {"scheduling.k8s.io/group-name": "v"}, None, "Volcano PodGroup ml/v"),
        ({"kueue.x-k8s.io/pod-group-name": "k"}, {}, None, "Kueue pod group ml/k"),
        ({"jobset.sigs.k8s.io/jobset-name": "js"}, {}, OwnerRef("Job", "js-workers-0"), "JobSet ml/js"),
        ({}, {}, OwnerRef("ReplicaSet", "web-7d9f"), "ReplicaSet ml/web-7d9f"),
        ({}, {}, None, None),
    ],
)
def test_what_places_pods_together(
    labels: dict[str, str], annotations: dict[str, str], owner: OwnerRef | None, together: str | None
) -> None:
    pod = Pod("p", "ml", labels=labels, annotations=annotations, owner=owner)
    assert placed_with(pod) == together


ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "explain" / "cluster-dump.yaml"


def _readme_sample() -> list[str]:
    """The sample output under README's ``explain`` bullet, without its two-space indent."""
    text = (ROOT / "README.md").read_text()
    block = text.split(f"On `{EXAMPLE.relative_to(ROOT)}`", 1)[1].split("```\n", 2)[1]
    return [line[2:] for line in block.splitlines() if line.strip()]


def test_readmes_sample_is_what_explain_prints_on_the_example_dump() -> None:
    """Every line of README's (abridged) sample appears, in order, in what explain prints on
    ``examples/explain/cluster-dump.yaml``; a rule line by the pod it names."""
    entries = explain_scenario(load_scenario([EXAMPLE]))
    console = Console(file=io.StringIO(), width=1000)
    render_explanations(entries, console)
    assert isinstance(console.file, io.StringIO)
    printed = iter(line.rstrip().strip("─ ") for line in console.file.getvalue().splitlines())
    for line in _readme_sample():
        wanted = line.rstrip().strip("─ ") if line.startswith("─") else line.rstrip()
        assert any(p == wanted.strip() or p == wanted for p in printed), line
    assert [e["schedulable_now"] for e in entries] == ["gpu-0", None, None, None, None, None]


def test_a_gated_pod_agrees_with_the_scheduling_gated_condition(tmp_path: Path) -> None:
    """A pod with scheduling gates never enters the queue (SchedulingGates' PreEnqueue); what it
    shows is the API server's ``PodScheduled=False`` ``SchedulingGated`` condition, which gpufleet
    compares with, and it is never said to be placed."""
    gated = pending_pod(
        "gated",
        extra_spec="  schedulingGates: [{name: kueue.x-k8s.io/admission}]",
        status="""  conditions:
  - type: PodScheduled
    status: "False"
    reason: SchedulingGated
    message: Scheduling is blocked due to non-empty scheduling gates
""",
    )
    [entry], lines = explained(tmp_path, NODE + gated)
    assert entry["schedulable_now"] is None
    assert "gpufleet agrees with kube-scheduler's message (PodScheduled=False (SchedulingGated))" in lines


def test_a_workload_whose_pods_are_in_the_dump_creates_no_more(tmp_path: Path) -> None:
    """``kubectl get jobs,pods``: the Job's pods are those of the dump (owned by it through
    ``ownerReferences``), not a second set its controller would create."""
    owned = pending_pod("train-x7k2p").replace(
        "uid: uid-train-x7k2p}",
        "uid: uid-train-x7k2p, "
        "ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: u, controller: true}]}",
    )
    entries, _ = explained(tmp_path, NODE + job() + owned)
    assert [e["pod"] for e in entries] == ["ml/train-x7k2p"]


def test_an_event_cut_at_the_note_length_limit_still_agrees() -> None:
    """``truncateMessage`` (schedule_one.go): the Event keeps the first 1,020 bytes of a message
    longer than ``NoteLengthLimit`` (1,024) and `` ...``; the PodScheduled condition keeps it whole."""
    message = "0/600 nodes are available: " + ", ".join(
        f"1 node(s) had untolerated taint(s) {{t{i}: v}}" for i in range(40)
    )
    cut = message[:1020] + " ..."
    assert event_message(message) == cut
    assert verdict([Recorded("FailedScheduling event", cut)], (), message) == (
        "gpufleet agrees with kube-scheduler's message (FailedScheduling event)"
    )


def test_one_pod_asked_for_is_still_judged_after_the_pods_placed_before_it(tmp_path: Path) -> None:
    """``--pod``: only that pod is explained, but on the cluster as its group's earlier pods leave it."""
    [entry], _ = explained(tmp_path, HALF_FULL_NODE + job(), only="ml/train-2")
    assert entry["pod"] == "ml/train-2"
    assert entry["schedulable_now"] is None
    assert entry["together"]["placed_before"] == [["ml/train-0", "gpu-0"]]


# -- the closest nodes worked out once per shape and cluster state (issue 18) --------------------------

GROUP_MEMBER = """---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ml, labels: {{scheduling.x-k8s.io/pod-group: g}}}}
spec:
  containers:
  - {{name: c, image: i, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""
HALF_HELD = FULL_NODE.replace("nvidia.com/gpu: 8}}}", "nvidia.com/gpu: 4}}}")  # held takes 4 of 8 GPUs


def test_a_pod_of_a_shape_seen_before_gets_the_closest_nodes_of_the_cluster_as_it_now_stands(
    tmp_path: Path,
) -> None:
    """Pods judged together see the ones placed before them (``explain_together``): the second 8-GPU pod
    of the group, after a 2-GPU pod was placed, needs 6 more GPUs and both pods gone, where the first of
    its shape needed 4 and one pod gone. Pods of one shape on an unchanged cluster get equal rows."""
    members = [("x", 8), ("y", 2), ("z", 8), ("w", 8)]
    path = tmp_path / "s.yaml"
    path.write_text(HALF_HELD + "".join(GROUP_MEMBER.format(name=n, gpus=g) for n, g in members))
    explained = {e["pod"]: e for e in explain_scenario(load_scenario([path]))}
    assert explained["ml/x"]["closest_nodes"] == [
        {"node": "gpu-0", "needs": ["4 more nvidia.com/gpu"], "evict": ["ml/held"]}
    ]
    assert explained["ml/y"]["schedulable_now"] == "gpu-0"
    after = [{"node": "gpu-0", "needs": ["6 more nvidia.com/gpu"], "evict": ["ml/held", "ml/y"]}]
    assert explained["ml/z"]["closest_nodes"] == after
    assert explained["ml/w"]["closest_nodes"] == after
    assert explained["ml/w"]["closest_nodes"] is not explained["ml/z"]["closest_nodes"]
