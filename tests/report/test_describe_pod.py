"""``gpufleet describe pod``: kubectl describe's layout (Name, Namespace, Node, Start Time, Labels,
Status, Containers, Conditions, Events) for a running, a pending and a finished simulated pod, from a
saved summary.json and from a kubectl dump, with the start-up stages and a pod named without its
namespace."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from conftest import write
from gpufleet.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
DUMP = ROOT / "examples" / "explain" / "cluster-dump.yaml"

SCENARIO = """
{apiVersion: gpufleet.io/v1alpha1, kind: Simulation, metadata: {name: describe},
 spec: {duration: 10m, storage: {bandwidth: 10GB/s}}}
---
{apiVersion: v1, kind: Node, metadata: {name: gpu-0},
 status: {capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "2"}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: serve
  namespace: ml
  labels: {app: llm}
  annotations: {gpufleet.io/model-size: 140GB}
spec:
  containers:
  - name: server
    image: llm:v2
    resources: {requests: {cpu: "8", memory: 64Gi}, limits: {nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: batch
  annotations: {gpufleet.io/duration: 1m}
spec:
  restartPolicy: Never
  containers:
  - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: ml}
spec:
  containers:
  - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "4"}}}
"""


def describe(*args: str) -> str:
    result = runner.invoke(app, ["describe", "pod", *args])
    assert result.exit_code == 0, result.output
    return result.output


def field(output: str, label: str) -> str:
    """The value of ``Label:`` in the layout (the first such line)."""
    line = next(line for line in output.splitlines() if line.startswith(f"{label}:"))
    return line.split(":", 1)[1].strip()


def conditions(output: str) -> dict[str, str]:
    """The Conditions table: status by type."""
    rows = output.split("Conditions:")[1].split("Events")[0].split("\n")[2:]
    return dict(tuple(row.split()) for row in rows if row.strip())  # type: ignore[misc]


def test_a_running_pod_has_kubectl_describe_sections_its_events_and_its_model_load(tmp_path: Path) -> None:
    output = describe("ml/serve", *map(str, write(tmp_path, SCENARIO)))
    assert (field(output, "Name"), field(output, "Namespace"), field(output, "Node")) == (
        "serve",
        "ml",
        "gpu-0",
    )
    assert field(output, "Status") == "Running"
    assert field(output, "Labels") == "app=llm"
    assert field(output, "Annotations") == "gpufleet.io/model-size=140GB"
    assert field(output, "Start Time").startswith("t=0 s (simulated")
    assert "nvidia.com/gpu: 1" in output and "memory: 64Gi" in output
    assert conditions(output) == {
        "PodScheduled": "True",
        "Initialized": "True",
        "ContainersReady": "True",
        "Ready": "True",
    }
    assert "Normal  Scheduled" in output and "Successfully assigned ml/serve to gpu-0" in output
    stages = output.split("Start-up (gpufleet, simulated):")[1]
    assert "bound to gpu-0" in stages
    model_load = next(line for line in stages.splitlines() if "model load" in line)
    assert model_load.split()[-2:] == ["14", "s"]  # 140 GB at 10 GB/s


def test_the_kubelets_started_event_names_the_container(tmp_path: Path) -> None:
    """``startContainer`` (``pkg/kubelet/kuberuntime/kuberuntime_container.go``) records Normal Started
    "Started container NAME" on the container (``involvedObject.fieldPath`` ``spec.containers{server}``)."""
    output = describe("ml/serve", *map(str, write(tmp_path, SCENARIO)), "-o", "json")
    started = [e["message"] for e in json.loads(output)["events"] if e["reason"] == "Started"]
    assert started == ["Started container server"]


def test_a_pending_pod_shows_failed_scheduling_and_why(tmp_path: Path) -> None:
    output = describe("big", "-n", "ml", *map(str, write(tmp_path, SCENARIO)))
    assert field(output, "Status") == "Pending"
    assert field(output, "Node") == "<none>"
    assert conditions(output)["PodScheduled"] == "False"
    failed = next(line for line in output.splitlines() if "FailedScheduling" in line)
    assert failed.split()[0] == "Warning"
    assert "0/1 nodes are available: 1 Insufficient nvidia.com/gpu." in failed
    assert "Start-up (gpufleet): <none>" not in output  # it has been pending since it was created
    assert "pending (scheduling)  t=0 s  until the end" in output


def test_a_finished_pod_is_succeeded_and_not_ready(tmp_path: Path) -> None:
    output = describe("batch", *map(str, write(tmp_path, SCENARIO)))
    assert field(output, "Namespace") == "default"
    assert field(output, "Status") == "Succeeded"
    assert conditions(output) == {
        "PodScheduled": "True",
        "Initialized": "True",
        "ContainersReady": "False",
        "Ready": "False",
    }
    stages = output.split("Start-up (gpufleet, simulated):")[1].splitlines()
    assert stages[-1].split()[0] == "succeeded"


def test_a_saved_summary_says_what_it_does_not_hold(tmp_path: Path) -> None:
    paths = write(tmp_path, SCENARIO)
    out = tmp_path / "out"
    assert runner.invoke(app, ["simulate", str(paths[0]), "--out", str(out)]).exit_code == 0
    output = describe("serve", "--summary", str(out / "summary.json"))
    assert field(output, "Labels") == "<not in summary.json>"
    assert field(output, "Node") == "gpu-0"
    assert "model load" in output.split("Start-up")[1]


def test_a_kubectl_dump_is_described_as_it_is_with_the_explanation(tmp_path: Path) -> None:
    output = describe("train-1", str(DUMP))
    assert (field(output, "Name"), field(output, "Namespace"), field(output, "Status")) == (
        "train-1",
        "ml",
        "Pending",
    )
    assert "Image:      pytorch/pytorch" in output
    assert "FailedScheduling" in output and "default-scheduler" in output
    assert "gpufleet agrees with kube-scheduler's message (FailedScheduling event)" in output
    assert "Start-up" not in output  # a dump has no simulated stages


def test_a_repeated_event_of_a_dump_shows_its_count_as_kubectl_does() -> None:
    """kubectl's ``DescribeEvents`` (``k8s.io/kubectl`` v0.34.10 ``pkg/describe/describe.go``): an Event
    whose ``count`` is above 1 is aged ``<lastTimestamp> (xN over <firstTimestamp>)``: the dump's
    FailedScheduling, count 3 from 10:00 to 10:05, is 5 minutes older at its first time than at its last."""
    result = runner.invoke(app, ["describe", "pod", "train-1", str(DUMP), "-o", "json"])
    assert result.exit_code == 0, result.output
    (event,) = json.loads(result.output)["events"]
    assert (event["reason"], event["count"], event["first_age_s"] - event["age_s"]) == (
        "FailedScheduling",
        3,
        300.0,
    )
    row = next(line for line in describe("train-1", str(DUMP)).splitlines() if "FailedScheduling" in line)
    assert " (x3 over " in row


def test_output_json_and_yaml_are_the_same_record(tmp_path: Path) -> None:
    paths = [str(p) for p in write(tmp_path, SCENARIO)]
    as_json = json.loads(describe("ml/serve", *paths, "-o", "json"))
    as_yaml = yaml.safe_load(describe("ml/serve", *paths, "-o", "yaml"))
    assert as_json == as_yaml
    assert as_json["node"] == "gpu-0" and as_json["labels"] == {"app": "llm"}
    # startContainer's image check (llm:v2, IfNotPresent, on the node), Created and Started
    assert [e["reason"] for e in as_json["events"]] == ["Scheduled", "Pulled", "Created", "Started"]


def test_a_name_in_several_namespaces_is_refused_with_the_candidates(tmp_path: Path) -> None:
    twice = SCENARIO + "---" + SCENARIO.split("---")[-1].replace("namespace: ml", "namespace: other")
    result = runner.invoke(app, ["describe", "pod", "big", *map(str, write(tmp_path, twice))])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "big: 2 pods have this name, give one as NS/NAME: ml/big, other/big"
    ]


def test_an_unknown_pod_is_one_line_and_status_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["describe", "pod", "nope", *map(str, write(tmp_path, SCENARIO))])
    assert result.exit_code == 2
    assert result.output.strip() == "no pod named nope in any namespace"


def stage_names(output: str) -> list[str]:
    """The Stage column of the start-up table."""
    rows = output.split("Start-up (gpufleet, simulated):")[1].splitlines()[2:]
    return [row.strip().split("  ")[0] for row in rows]


def test_a_pod_that_waited_for_a_new_node_shows_its_start_chain_in_order(tmp_path: Path) -> None:
    scenario = ROOT / "examples" / "dra" / "pool-scales-up-for-claims.yaml"
    chain = ["node capacityWait", "node boot", "node driver", "node join", "node devicePlugin"]
    simulated = stage_names(describe("train-0", str(scenario)))
    assert simulated.index("waiting for a new node") < simulated.index("bound to h100-0")
    assert simulated[-5:] == chain
    assert runner.invoke(app, ["simulate", str(scenario), "--out", str(tmp_path)]).exit_code == 0
    saved = stage_names(describe("train-0", "--summary", str(tmp_path / "summary.json")))
    # summary.json sorts keys; shown in chain order. The pod (its GPUs DRA claims, no GPU vendor resource) is
    # pending 10 s first: at the scan at 0 s it is very new (allPodsAreNew), the scale-up comes at 10 s
    assert saved == ["pending (scheduling)", "waiting for a new node", *chain]


def test_a_pod_the_kubelet_refused_has_its_warning_event_from_the_kubelet(tmp_path: Path) -> None:
    """kubelet's ``rejectPod``: the pod Failed, its message "Pod was rejected: " and the admit handler's,
    and a Warning event with its reason from the kubelet carrying the message without that prefix."""
    pinned = """
apiVersion: v1
kind: Pod
metadata: {name: pinned}
spec:
  nodeName: gpu-0
  containers:
  - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "3"}}}
"""
    output = describe("pinned", *map(str, write(tmp_path, SCENARIO, pinned)))
    assert (field(output, "Status"), field(output, "Reason")) == ("Failed", "OutOfnvidia.com/gpu")
    assert field(output, "Message").startswith("Pod was rejected: Node didn't have enough resource")
    refused = next(
        line for line in output.splitlines() if "OutOfnvidia.com/gpu" in line and "kubelet" in line
    )
    assert refused.split()[0] == "Warning"
    assert (
        refused.split("kubelet", 1)[1].strip().startswith("Node didn't have enough resource: nvidia.com/gpu")
    )


def test_a_scheduled_event_comes_from_the_pods_scheduler_profile(tmp_path: Path) -> None:
    """kube-scheduler records a profile's events under the profile's schedulerName (a recorder per
    profile), whichever configuration document defined the profile."""
    config = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: bin-packing
"""
    batch = "  annotations: {gpufleet.io/duration: 1m}\nspec:\n"
    packed = SCENARIO.replace(batch, f"{batch}  schedulerName: bin-packing\n")
    output = describe("batch", *map(str, write(tmp_path, packed, config)))
    assert field(output, "Scheduler") == "bin-packing"
    scheduled = next(line for line in output.splitlines() if line.split()[1:2] == ["Scheduled"])
    assert "bin-packing" in scheduled and ".yaml#" not in output


JOB = """
{apiVersion: gpufleet.io/v1alpha1, kind: Simulation, metadata: {name: describe-job}, spec: {duration: 1h}}
---
{apiVersion: v1, kind: Node, metadata: {name: gpu-0},
 status: {capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "2"}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: late, namespace: ml}
spec:
  activeDeadlineSeconds: 300
  template:
    metadata: {annotations: {gpufleet.io/duration: 2h}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 30
      containers:
      - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}
"""


def test_a_jobs_pod_names_its_job_and_shows_the_jobs_conditions(tmp_path: Path) -> None:
    """``Controlled By`` (kubectl's), then the Job as ``kubectl describe job`` shows it: its pod counts and
    its conditions with the simulated time each first held; the same from a saved summary.json."""
    paths = write(tmp_path, JOB)
    output = describe("late-0", str(paths[0]))
    assert field(output, "Controlled By") == "Job/late"
    assert field(output, "Job Pods Statuses") == "0 Active / 0 Succeeded / 1 Failed"
    table = output.split("Job Conditions:\n")[1].split("Events")[0].splitlines()
    assert [row.split()[:4] for row in table] == [
        ["Type", "Status", "Reason", "Since"],
        ["FailureTarget", "True", "DeadlineExceeded", "t=5m"],
        ["Failed", "True", "DeadlineExceeded", "t=5m"],
    ]
    assert table[1].endswith("Job was active longer than specified deadline")
    out = tmp_path / "out"
    assert runner.invoke(app, ["simulate", str(paths[0]), "--out", str(out)]).exit_code == 0
    saved = json.loads(describe("late-0", "--summary", str(out / "summary.json"), "-o", "json"))
    assert saved["controlled_by"] == "Job/late"
    assert [c["type"] for c in saved["workload_status"]["conditions"]] == ["FailureTarget", "Failed"]
    assert saved["workload_status"]["conditions"][1]["time_s"] == 330.0


def test_a_long_failed_scheduling_message_is_cut_in_the_event_and_whole_in_the_condition(
    tmp_path: Path,
) -> None:
    """kube-scheduler's ``truncateMessage`` (``schedule_one.go``): the FailedScheduling Event holds at most
    ``validation.NoteLengthLimit`` (1,024) bytes, the last four `` ...``; the PodScheduled condition keeps
    the whole message (a pod asking for 30 extended resources no node has: 30 ``Insufficient`` entries)."""
    wants = {f"devices.example.com/accelerator-{i:02d}": "1" for i in range(30)}
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "cpu-0"},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stuck"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"limits": wants}}]},
    }
    output = describe("stuck", *map(str, write(tmp_path, yaml.safe_dump_all([node, pod]))))
    whole = field(output, "Message")
    event = next(line for line in output.splitlines() if "FailedScheduling" in line)
    cut = event[event.index("0/1 nodes are available") :]
    assert len(whole.encode()) > 1024 and whole.endswith("Preemption is not helpful for scheduling.")
    assert len(cut.encode()) == 1024 and cut.endswith(" ...") and whole.startswith(cut.removesuffix(" ..."))


def test_a_jobs_pod_shows_when_its_ttl_deleted_the_job(tmp_path: Path) -> None:
    """``ttlSecondsAfterFinished``: the Job failed at 330 s (its pod gone after its grace period) and is
    deleted 60 s later by the TTL-after-finished controller: said beside its pod counts."""
    paths = write(
        tmp_path,
        JOB.replace(
            "  activeDeadlineSeconds: 300\n", "  activeDeadlineSeconds: 300\n  ttlSecondsAfterFinished: 60\n"
        ),
    )
    output = describe("late-0", str(paths[0]))
    assert field(output, "Job Deleted") == "t=6m 30s (ttlSecondsAfterFinished)"
    assert field(output, "Job Pods Statuses") == "0 Active / 0 Succeeded / 1 Failed"
