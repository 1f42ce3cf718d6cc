"""Faults (``FaultModel``) and the response to them: the device plugin's Unhealthy GPU (allocatable drops
until a GPU reset), a node rebooted (cordoned while down) or replaced (deleted; a pool without ``max``
gets a new node), pods failing and made again by their controllers, a gang restarting from its last
checkpoint, a MIG instance's fault taking that instance only; the summary's figures per fault and
MTTR and goodput; random faults drawn from the seed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import coscheduling, pods_by_name, run_simulation, simulated, write

from gpufleet.control.clock import Priority
from gpufleet.kube import load_scenario
from gpufleet.kube.problems import ScenarioError
from gpufleet.model.faults import CLASSES, DEFAULT_RATES
from gpufleet.model.resources import GPU
from gpufleet.report import finished_summary
from gpufleet.sim.invariants import InvariantChecks, InvariantViolation, resources_within_allocatable
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

H100 = "NVIDIA-H100-80GB-HBM3"


def pool(name: str = "h100", replicas: int = 2, extra: str = "") -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  gpu: {{model: H100-80GB, count: 8{extra}}}
  template:
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}
  provisioning: {{boot: 5m}}
"""


def faults(*lines: str, response: str = "{detection: 0s, gpuReset: 5m, reboot: 10m}", rates: str = "") -> str:
    listed = "".join(f"\n  - {line}" for line in lines)
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {{name: f}}
spec:
  response: {response}{rates}
  faults:{listed if lines else " []"}
"""


def job(
    name: str, pods: int, gpus: int, duration: str, checkpoint: str | None = None, gang: bool = False
) -> str:
    annotations = f"gpufleet.io/duration: {duration}" + (
        f", gpufleet.io/checkpoint-interval: {checkpoint}" if checkpoint else ""
    )
    labels = f"\n      labels: {{scheduling.x-k8s.io/pod-group: {name}}}" if gang else ""
    group = (
        f"apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {{name: {name}}}\n"
        f"spec: {{minMember: {pods}}}\n---\n"
        if gang
        else ""
    )
    return f"""{group}
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  completions: {pods}
  parallelism: {pods}
  backoffLimit: 10
  template:
    metadata:
      annotations: {{{annotations}}}{labels}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          limits: {{nvidia.com/gpu: {gpus}}}
"""


def only_fault(summary: dict[str, Any]) -> dict[str, Any]:
    (fault,) = summary["faults"]["faults"]
    return fault


def test_a_gpu_fault_fails_its_pod_and_takes_the_gpu_out_until_a_reset(tmp_path: Path) -> None:
    """XID 48 on GPU 0 of h100-0 at 1h: the 8-GPU pod there fails at once (reason Error) and its Job makes
    it again after its 10 s back-off, on the same GPUs: nothing has noticed yet. Once noticed (30 s) the
    device plugin reports GPU 0 Unhealthy: that pod fails too, and the next one fits nowhere (h100-1 is
    the other job's) until the GPU reset (5 min)."""
    summary = simulated(
        write(
            tmp_path,
            pool(),
            job("a", 1, 8, "3h"),
            job("b", 1, 8, "3h"),
            faults("{at: 1h, node: h100-0, gpu: 0, kind: xid-48}", response="{detection: 30s}"),
        )
    )
    fault = only_fault(summary)
    pods = pods_by_name(summary)
    hit = fault["pods_hit"][0].split("/", 1)[1]
    assert fault["kind"] == "ecc-double-bit" and fault["xid"] == 48 and fault["response"] == "gpu"
    assert pods[hit]["phase"] == "Failed" and pods[hit]["reason"] == "Error"
    assert "XID 48" in pods[hit]["message"]
    assert fault["pods_hit"] == [f"default/{hit}", f"default/{hit}-r1"]
    assert pods[f"{hit}-r1"]["bound_s"] == 3610 and pods[f"{hit}-r1"]["finished_s"] == 3630
    assert pods[f"{hit}-r2"]["bound_s"] == 3600 + 30 + 300  # placed once the GPU was reset
    assert pods[f"{hit}-r2"]["phase"] == "Succeeded"
    assert fault["detection_s"] == 30 and fault["time_to_recovery_s"] == 330
    assert fault["gpus_out"] == 1 and fault["gpu_hours_lost"] == pytest.approx(330 / 3600, abs=1e-6)
    # an hour of 8 GPUs (no checkpoint), and the 20 s the pod made again computed on the bad GPU
    assert fault["work_lost_gpu_hours"] == pytest.approx(8.0 + 20 * 8 / 3600, abs=1e-6)


def test_a_reboot_fault_cordons_the_node_until_it_is_back(tmp_path: Path) -> None:
    """XID 79 (fallen off the bus): the node goes down and is cordoned; its pod fails; the other node is
    full, so the pod made again waits for the node to come back (reboot 10 min)."""
    summary = simulated(
        write(
            tmp_path,
            pool(),
            job("a", 2, 8, "2h"),
            faults("{at: 30m, node: h100-1, kind: xid-79}"),
        )
    )
    fault = only_fault(summary)
    assert fault["response"] == "reboot" and fault["gpus_out"] == 8
    assert fault["time_to_recovery_s"] == 600
    (hit,) = fault["pods_hit"]
    retry = pods_by_name(summary)[f"{hit.split('/', 1)[1]}-r1"]
    assert retry["node"] == "h100-1" and retry["bound_s"] == 1800 + 600
    assert summary["faults"]["totals"]["mttr_s"] == 600


def test_a_replaced_node_is_deleted_and_its_fixed_pool_gets_a_new_one(tmp_path: Path) -> None:
    """A row-remap failure (XID 64): the node is deleted and the pool, without ``max``, launches a new
    node (5 min boot) where the pod made again runs; recovery is when the new node's GPUs register."""
    summary = simulated(
        write(tmp_path, pool(), job("a", 2, 8, "2h"), faults("{at: 30m, node: h100-0, gpu: 2, kind: xid-64}"))
    )
    fault = only_fault(summary)
    nodes = {n["name"]: n for n in summary["nodes"]}
    assert fault["response"] == "replace"
    assert nodes["h100-0"]["deleted_s"] == 1800
    assert nodes["h100-2"]["created_s"] == 1800 and nodes["h100-2"]["gpu_ready_s"] == 1800 + 300
    assert fault["time_to_recovery_s"] == 300
    (hit,) = fault["pods_hit"]
    assert pods_by_name(summary)[f"{hit.split('/', 1)[1]}-r1"]["node"] == "h100-2"
    assert all(p["phase"] in ("Succeeded", "Failed") for p in summary["pods"])
    assert summary["totals"]["final_states"] == {"Succeeded": 2, "Failed": 1}


def test_a_gang_restarts_whole_from_its_last_checkpoint(tmp_path: Path) -> None:
    """A 2-rank gang computing 4h, checkpointing hourly: a fault at 2h30m kills rank 1 (on h100-1); both
    ranks stop, 30 min since the 2h checkpoint are lost on 16 GPUs; the new rank 1 resumes from 2h once
    the GPU is back (its reset ends at 2h35m), so the gang ends at 2h35m + 2h."""
    summary = simulated(
        write(
            tmp_path,
            pool(),
            job("train", 2, 8, "4h", checkpoint="1h", gang=True),
            faults("{at: 150m, node: h100-1, gpu: 0, kind: ecc-double-bit}"),
        )
    )
    fault = only_fault(summary)
    assert len(fault["pods_hit"]) == 1
    assert fault["work_lost_gpu_hours"] == pytest.approx(0.5 * 16)
    ends = sorted(p["finished_s"] for p in summary["pods"] if p["phase"] == "Succeeded")
    assert ends == [9000 + 300 + 7200] * 2
    totals = summary["faults"]["totals"]
    good = summary["totals"]["gpu_hours_working"] - 8
    assert totals["goodput"] == pytest.approx(good / summary["totals"]["gpu_hours_allocated"], abs=1e-6)


def test_a_mig_instance_fault_takes_only_that_instance(tmp_path: Path) -> None:
    """A node of 1 H100 cut into three 1g.10gb instances, a pod on each of two: a fault on instance 0 fails
    the pod there only; the other keeps computing; the pod made again takes the third instance."""
    summary = simulated(
        write(
            tmp_path,
            pool(replicas=1, extra=", migStrategy: mixed, migLayout: [1g.10gb, 1g.10gb, 1g.10gb]").replace(
                "count: 8", "count: 1"
            ),
            job("a", 2, 0, "1h").replace("nvidia.com/gpu: 0", "nvidia.com/mig-1g.10gb: 1"),
            faults("{at: 10m, node: h100-0, gpu: 0, kind: xid-94}"),
        )
    )
    fault = only_fault(summary)
    assert fault["gpus_out"] == pytest.approx(1 / 7, abs=1e-6)
    assert len(fault["pods_hit"]) == 1
    pods = pods_by_name(summary)
    assert sorted(p["phase"] for p in pods.values()) == ["Failed", "Succeeded", "Succeeded"]
    untouched = next(
        p for name, p in pods.items() if f"default/{name}" not in fault["pods_hit"] and "-r" not in name
    )
    assert untouched["finished_s"] == 3600 and not untouched["disruptions"]
    retry = next(p for name, p in pods.items() if name.endswith("-r1"))
    assert retry["devices"] == ["1g.10gb-2"] and retry["bound_s"] == 610  # Job back-off 10 s


def test_a_fault_on_a_node_not_in_the_cluster_is_recorded_as_such(tmp_path: Path) -> None:
    summary = simulated(
        write(tmp_path, pool(), job("a", 1, 1, "1h"), faults("{at: 10m, node: ghost, kind: nic}"))
    )
    fault = only_fault(summary)
    assert "not in the cluster" in fault["note"] and fault["pods_hit"] == []
    assert summary["faults"]["totals"]["faults"] == 0


def test_random_faults_follow_the_seed(tmp_path: Path) -> None:
    """Rates high enough for a few faults a day: the same seed gives the same faults, another seed others."""
    rates = "\n  rates: [{product: '*', xidGpuReset: 0.01, nodeLoss: 0.002}]"
    paths = write(tmp_path, pool(), job("a", 2, 8, "24h", checkpoint="1h"), faults(rates=rates))

    def drawn(seed: int) -> list[tuple[float, str, str]]:
        sim = run_simulation(paths, seed=seed)
        assert sim.faults is not None
        return [(r.at_s, r.node, r.kind) for r in sim.faults.records]

    first = drawn(1)
    assert first and first == drawn(1)
    assert first != drawn(2)
    assert {kind for _, _, kind in first} <= {"xid-gpu-reset", "node-loss"}


def test_a_product_without_rates_draws_no_faults(tmp_path: Path) -> None:
    rates = "\n  rates: [{product: NVIDIA-B200}]"
    sim = run_simulation(write(tmp_path, pool(), job("a", 2, 8, "24h"), faults(rates=rates)))
    assert sim.faults is not None and sim.faults.records == []


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            "{at: 1h, node: n, kind: xid-13}",
            'spec.faults[0].kind: Invalid value: "xid-13": an application error',
        ),
        ("{at: 1h, node: n, kind: gpu-on-fire}", 'spec.faults[0].kind: Unsupported value: "gpu-on-fire"'),
        ("{at: -1h, node: n, kind: nic}", "spec.faults[0].at: invalid duration '-1h'"),
        ("{at: 1h, node: n, kind: nic, colour: red}", "spec.faults[0].colour"),
    ],
)
def test_a_bad_fault_is_one_line_naming_its_field(tmp_path: Path, fault: str, message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario(write(tmp_path, faults(fault)))
    assert message in str(err.value)
    assert "document 1 (FaultModel/f)" in str(err.value)


def test_a_rate_out_of_range_and_a_second_fault_model_are_errors(tmp_path: Path) -> None:
    bad_rate = faults(rates="\n  rates: [{nic: -1}, {nvlink: 2}]")
    with pytest.raises(ScenarioError) as err:
        load_scenario(write(tmp_path, bad_rate, faults().replace("name: f", "name: g")))
    text = str(err.value)
    assert "spec.rates[0].nic: Invalid value" in text
    assert "spec.rates[1].nvlink: Invalid value: 2: must be less than or equal to 1" in text  # a run must end
    assert "at most one FaultModel may be given" in text


def test_rates_left_out_take_the_documented_defaults(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, faults(rates=f"\n  rates: [{{product: {H100}, nic: 0.5}}]")))
    assert scenario.fault_model is not None
    rates = scenario.fault_model.rates_for(H100)
    assert rates["nic"] == 0.5
    assert rates["ecc-double-bit"] == DEFAULT_RATES["ecc-double-bit"][0]
    assert scenario.fault_model.rates_for("NVIDIA-A10") == {}


SERVE = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 2h}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: serve}
spec:
  replicas: 4
  selector:
    matchLabels: {app: serve}
  template:
    metadata:
      labels: {app: serve}
    spec:
      containers:
      - name: c
        image: x
        resources:
          limits: {nvidia.com/gpu: 1}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: serve}
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: serve}
"""


def test_a_node_drained_for_repair_waits_on_its_disruption_budget(tmp_path: Path) -> None:
    """A row-remap failure on GPU 0 of the only node, 4 replicas of a server with maxUnavailable 1: the
    replica on GPU 0 dies at once; the node is cordoned and a new one launched (5 min boot). The budget
    expects the Deployment's 4 replicas (``getExpectedPodCount`` takes the controller's scale, not the 3
    pods left), so with one replica down it allows no eviction until the replica made again runs on the
    new node; then one at a time; the node is deleted when empty."""
    summary = simulated(
        write(tmp_path, pool(replicas=1), SERVE, faults("{at: 1h, node: h100-0, gpu: 0, kind: xid-64}"))
    )
    fault = only_fault(summary)
    assert fault["response"] == "replace" and len(fault["pods_hit"]) == 1
    evicted = sorted(p["finished_s"] for p in summary["pods"] if p["reason"] == "Evicted")
    assert len(evicted) == 3
    assert evicted[0] > 3600 + 300  # not before the new node took the replica made again
    assert len(set(evicted)) == 3  # one at a time
    nodes = {n["name"]: n for n in summary["nodes"]}
    assert nodes["h100-0"]["deleted_s"] == 3600 + fault["drain_s"] >= evicted[-1]
    assert nodes["h100-1"]["gpu_ready_s"] == 3600 + 300 == 3600 + fault["time_to_recovery_s"]
    running = [p for p in summary["pods"] if p["phase"] == "Running"]
    assert len(running) == 4 and all(p["node"] == "h100-1" for p in running)


def test_a_lost_node_takes_every_pod_with_it_no_budget_consulted(tmp_path: Path) -> None:
    """The same servers, the node lost: every replica stops at the fault, no budget consulted; PodGC ends
    them once the cloud node lifecycle controller deleted the Node (``sim.unreachable_nodes``: NotReady at
    +50 s, deleted at +55 s, collected at the quarantine's end, +100 s), reason ``NodeDeleted``."""
    summary = simulated(
        write(tmp_path, pool(replicas=1), SERVE, faults("{at: 1h, node: h100-0, kind: node-loss}"))
    )
    fault = only_fault(summary)
    assert fault["response"] == "lost" and len(fault["pods_hit"]) == 4 and fault["drain_s"] is None
    failed = [p for p in summary["pods"] if p["phase"] == "Failed"]
    assert (
        len(failed) == 4
        and {p["finished_s"] for p in failed} == {3600 + 100}
        and {p["reason"] for p in failed} == {"NodeDeleted"}
    )


def test_random_faults_on_a_mig_node_take_any_of_its_instances(tmp_path: Path) -> None:
    """One H100 cut into three instances, a GPU fault an hour: each takes one instance, any of the three."""
    mig_pool = pool(replicas=1, extra=", migStrategy: mixed, migLayout: [1g.10gb, 1g.10gb, 1g.10gb]")
    others = ", ".join(f"{field}: 0" for _, field in CLASSES.values() if field != "xidGpuReset")
    rates = f"\n  rates: [{{xidGpuReset: 1, {others}}}]"
    sim = run_simulation(
        write(
            tmp_path,
            mig_pool.replace("count: 8", "count: 1"),
            job("a", 1, 0, "24h").replace("nvidia.com/gpu: 0", "nvidia.com/mig-1g.10gb: 1"),
            faults(rates=rates),
        )
    )
    assert sim.faults is not None
    taken = [r.gpu for r in sim.faults.records]
    assert len(taken) > 5 and set(taken) == {0, 1, 2}
    assert all(r.gpus_out == pytest.approx(1 / 7) for r in sim.faults.records)


SHARES = """
apiVersion: v1
kind: Node
metadata:
  name: a100-0
  labels:
    {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.memory: "81920", nvidia.com/gpu.count: "2"}
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "2"}
---
apiVersion: v1
kind: Pod
metadata:
  name: half
  annotations: {gpu-fraction: "0.5", gpufleet.io/submit-at: 2m, gpufleet.io/duration: 1h}
spec:
  restartPolicy: Never
  containers:
  - {name: app, image: x, resources: {requests: {cpu: "1", memory: 4Gi}}}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 2h}
"""


def test_a_fractional_share_never_goes_on_a_gpu_the_device_plugin_reports_unhealthy(tmp_path: Path) -> None:
    """GPU 0 fails at 1 m (reset after 5 m): the share that arrives at 2 m opens GPU 1, not the free but
    Unhealthy GPU 0 (the NVIDIA device plugin allocates only healthy devices, ``internal/rm/health.go``)."""
    fault = faults("{at: 1m, node: a100-0, gpu: 0, kind: xid-gpu-reset}")
    summary = simulated(write(tmp_path, SHARES, fault))
    half = pods_by_name(summary)["half"]
    assert half["devices"] == ["1:500m"] and half["phase"] == "Succeeded"


def test_a_rebooted_node_keeps_its_pods_devices_so_a_share_bound_after_goes_on_another_gpu(
    tmp_path: Path,
) -> None:
    """The serving pod holds GPU 0 of a100-0 when the node reboots at 30 m (back at 40 m): it stays bound
    and its restarted container gets GPU 0 again (kubelet's devicemanager ``readCheckpoint`` restores the
    pods' devices, ``devicesToAllocate`` reuses a restarted container's), so the share that waited for the
    node opens GPU 1, not the held GPU 0 (with both on GPU 0 the meter counted more GPUs working than
    allocated: ``metering-adds-up``)."""
    serve = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: serve}
spec:
  replicas: 1
  selector:
    matchLabels: {app: serve}
  template:
    metadata:
      labels: {app: serve}
    spec:
      containers:
      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
"""
    shares = SHARES.replace("submit-at: 2m", "submit-at: 35m")
    fault = faults("{at: 30m, node: a100-0, kind: xid-79}")
    sim = Simulation(load_scenario(write(tmp_path, shares, serve, fault)))
    sim.invariants = InvariantChecks()
    sim.run()
    (served,) = [r for key, r in sim.records.items() if key.startswith("default/serve-")]
    assert [u.id for u in served.devices] == ["0"] and served.phase == "Running"
    half = sim.records["default/half"]
    assert [u.id for u in half.devices] == ["1:500m"] and half.bound_s == 40 * 60


def test_a_checkpoint_being_written_when_the_fault_strikes_is_lost_with_the_work_since_the_last(
    tmp_path: Path,
) -> None:
    """3 h of work, a checkpoint every hour taking 10 min to write (computing paused): checkpoints are
    written at 1h-1h10m and 2h10m-2h20m. A GPU fault at 2h15m, while the second is written, loses the
    work since the first (1 h on 8 GPUs); the pod made again resumes from 1 h and writes one checkpoint
    on its way to the end. The summary counts the time spent writing checkpoints out of goodput."""
    text = job("train", 1, 8, "3h", checkpoint="1h").replace(
        "gpufleet.io/checkpoint-interval: 1h",
        "gpufleet.io/checkpoint-interval: 1h, gpufleet.io/checkpoint-save: 10m",
    )
    summary = simulated(
        write(tmp_path, pool(), text, faults("{at: 2h15m, node: h100-0, gpu: 0, kind: xid-48}"))
    )
    fault = only_fault(summary)
    assert fault["work_lost_gpu_hours"] == 8.0
    pods = pods_by_name(summary)
    retry = pods["train-0-r1"]
    assert retry["phase"] == "Succeeded"
    assert retry["finished_s"] - retry["working_s"] == 2 * 3600 + 600  # 2 h left, one save on the way
    totals = summary["faults"]["totals"]
    assert totals["checkpoint_save_gpu_hours"] == round(8 * (15 + 10) / 60, 6)  # 10 + 5 min, then 10 min


def test_a_mig_reconfiguration_keeps_a_gpu_awaiting_its_reset_unhealthy(tmp_path: Path) -> None:
    """Two H100s cut all-3g.40gb; an ECC error on instance 0 (GPU 0) at 5 m, reset after 1 h. MIG Manager
    recuts the node all-1g.10gb at 10 m (60 s): the 7 instances of GPU 0 are Unhealthy until the reset at
    1h 5m, so of 14 one-instance pods created at 20 m, 7 run at once and 7 wait for the reset."""
    mig = ", migStrategy: mixed, migConfig: all-3g.40gb, migConfigChanges: [{at: 10m, config: all-1g.10gb}]"
    pods = job("b", 14, 0, "2h").replace("nvidia.com/gpu: 0", "nvidia.com/mig-1g.10gb: 1")
    pods = pods.replace(
        "metadata: {name: b}", "metadata: {name: b, annotations: {gpufleet.io/submit-at: 20m}}"
    )
    response = "{detection: 0s, gpuReset: 1h, reboot: 10m}"
    fault = faults("{at: 5m, node: h100-0, gpu: 0, kind: xid-94}", response=response)
    summary = simulated(
        write(tmp_path, pool(replicas=1, extra=mig).replace("count: 8", "count: 2"), pods, fault)
    )
    bound = sorted(p["bound_s"] for p in summary["pods"])
    assert bound == [1200.0] * 7 + [3900.0] * 7


def gang_waiting_on_a_fault(tmp_path: Path, kind: str = "xid-48") -> Simulation:
    """Ten 8-GPU nodes; one of them (h100-2, the seed's tie-break) runs an 8-GPU pod for 10 min. A
    10-rank gang of 8 GPUs a rank (Coscheduling, an hour's schedule timeout) has 9 ranks assumed on the
    other nodes, waiting at Permit for the tenth: one rank of ten missing is within Coscheduling's 10 %,
    so its PostFilter rejects none of them. At 5 min GPU 3 of h100-1 takes an XID 48 (or ``kind``),
    noticed at once and reset after 30 min. Simulated with every invariant checked after every event."""
    gang = job("train", 10, 8, "1h", gang=True).replace(
        "spec: {minMember: 10}", "spec: {minMember: 10, scheduleTimeoutSeconds: 3600}"
    )
    xid = faults(f"{{at: 5m, node: h100-1, gpu: 3, kind: {kind}}}", response="{detection: 0s, gpuReset: 30m}")
    paths = write(tmp_path, pool(replicas=10), job("first", 1, 8, "10m"), gang, coscheduling(), xid)
    sim = Simulation(load_scenario(paths))
    sim.invariants = InvariantChecks()
    sim.run()
    return sim


def test_a_pod_assumed_on_a_gpu_reported_unhealthy_while_it_waits_at_permit_is_refused_by_its_kubelet(
    tmp_path: Path,
) -> None:
    """kubelet's devicemanager (``devicesToAllocate``): "requested number of devices unavailable for
    nvidia.com/gpu. Requested: 8, Available: 7"; the topology manager's admit handler refuses the pod with
    ``UnexpectedAdmissionError``, "Allocate failed due to ..., which is unexpected", and ``rejectPod``
    leaves it Failed, "Pod was rejected: " and that message, not deleted. The rank on h100-1
    held no GPU when the fault struck (it was only assumed), so the fault hits no pod; at 10 min the tenth
    rank fits where the first pod ran, Permit lets all ten go, and h100-1's kubelet refuses the rank there.
    Its Job makes it again; the new rank fits once GPU 3 is reset (35 min), and the gang computes its hour
    from then."""
    summary = finished_summary(build_summary(gang_waiting_on_a_fault(tmp_path)))
    pods = pods_by_name(summary)
    assert only_fault(summary)["pods_hit"] == []
    refused = [p for p in pods.values() if p["reason"] == "UnexpectedAdmissionError"]
    assert len(refused) == 1 and refused[0]["node"] == "h100-1"
    assert refused[0]["bound_s"] == refused[0]["finished_s"] == 600 and refused[0]["devices"] == []
    assert refused[0]["deleted_s"] is None and refused[0]["running_s"] is None
    assert refused[0]["message"] == (
        "Pod was rejected: Allocate failed due to requested number of devices unavailable for "
        "nvidia.com/gpu. Requested: 8, Available: 7, which is unexpected"
    )
    again = pods[refused[0]["name"].split("/", 1)[1] + "-r1"]
    assert again["node"] == "h100-1" and again["bound_s"] == 300 + 1800
    ranks = [p for p in pods.values() if p["name"].startswith("default/train") and p["phase"] == "Succeeded"]
    assert len(ranks) == 10 and {p["finished_s"] for p in ranks} == {2100 + 3600}


def test_requests_stay_within_allocatable_where_the_kubelet_counts_them_while_an_assumed_pod_exceeds_it(
    tmp_path: Path,
) -> None:
    """The resources-within-allocatable invariant counts the pods bound to a node (the kubelet's admission,
    ``predicate.go``): from 5 to 10 min the rank only assumed on h100-1 asks 8 GPUs of its 7 healthy ones,
    and no invariant is violated after any event. The check still sees a bound pod past allocatable."""
    sim = gang_waiting_on_a_fault(tmp_path)
    assert sim.invariants is not None and sim.invariants.events == sim.loop.steps
    (rank,) = (r for r in sim.records.values() if r.phase == "Succeeded" and r.node == "h100-1")
    sim.state.assign(rank.pod, sim.state.index["h100-1"], sim.loop.now)
    sim.records[rank.pod.key].bound_s = sim.loop.now
    sim.state.set_allocatable("h100-1", {**sim.state.nodes[sim.state.index["h100-1"]].allocatable, GPU: 7})
    with pytest.raises(InvariantViolation, match=r"nvidia\.com/gpu requested 8 > allocatable 7"):
        resources_within_allocatable(sim)


def test_a_gpu_fault_under_shares_only_assumed_keeps_the_kubelets_requests_within_allocatable(
    tmp_path: Path,
) -> None:
    """Nine HAMi vGPUs of 11 % (of a ten-member gang) are assumed on the one GPU of a100-0, opened by
    their shares alone, waiting at Permit for the tenth; at 5 min that GPU is reported Unhealthy
    (allocatable 0). The opened GPU is the scheduler's, not the kubelet's: no invariant is violated, and
    the fault hits no pod (none holds a device)."""
    node = SHARES.split("---")[0].replace('nvidia.com/gpu.count: "2"', 'nvidia.com/gpu.count: "1"')
    node = node.replace('nvidia.com/gpu: "2"', 'nvidia.com/gpu: "1"')
    vgpu = "{nvidia.com/gpu: 1, nvidia.com/gpumem: 8192, nvidia.com/gpucores: 11}"
    members = "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata:
  name: m{i}
  labels: {{scheduling.x-k8s.io/pod-group: g}}
  annotations: {{gpufleet.io/duration: 1h}}
spec:
  containers:
  - {{name: c, image: c, resources: {{limits: {vgpu}}}}}
"""
        for i in range(10)
    )
    group = "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n"
    group += "spec: {minMember: 10, scheduleTimeoutSeconds: 3600}\n"
    xid = faults("{at: 5m, node: a100-0, gpu: 0, kind: xid-48}", response="{detection: 0s, gpuReset: 30m}")
    scenario = load_scenario(write(tmp_path, node + group + members, coscheduling(), xid))
    sim = Simulation(replace(scenario, simulation=replace(scenario.simulation, duration_s=1800.0)))
    sim.invariants = InvariantChecks()
    sim.run()
    assert sim.invariants.events == sim.loop.steps
    (fault,) = sim.faults.records if sim.faults is not None else ()
    assert fault.pods_hit == [] and fault.detected_s == 300.0
    assert sum(1 for r in sim.records.values() if r.node is None and r.pod.key in sim.state.assignments) == 9


def test_a_node_deleted_twice_keeps_its_first_deletion_and_its_billing_ends_then(tmp_path: Path) -> None:
    """h100-1 is deleted at 10 min and again at 15 min, as a repair drain's deletion and then
    cluster-autoscaler's (decided before the drain ended) came in a random scenario: the second finds it
    gone (the cloud's instance is terminated once). Its lifetime and the meter end at 10 min, and the
    metering invariant holds."""
    scenario = load_scenario(
        write(
            tmp_path,
            pool(),
            "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {duration: 1h}\n",
        )
    )
    sim = Simulation(scenario)
    sim.invariants = InvariantChecks()
    for at in (600.0, 900.0):
        sim.loop.at(at, Priority.COMPLETION, lambda: sim.delete_node("h100-1"))
    sim.run()
    assert sim.nodes["h100-1"].deleted_s == 600.0
    assert sim.meter.totals().gpu_seconds["provisioned"] == pytest.approx(8 * 3600 + 8 * 600)


def test_a_repair_drain_reaches_a_pod_waiting_at_permit_only_once_it_is_bound(tmp_path: Path) -> None:
    """XID 64 on h100-1 at 5 min: the node is cordoned and drained for replacement. The rank assumed there
    is on no node yet (no ``nodeName``): ``kubectl drain`` does not evict it. At 10 min the tenth rank
    fits, Permit lets all ten go, the rank binds to h100-1 (assumed before the cordon), the drain's next
    try evicts it (30 s grace), the node is deleted and the Job's new rank runs elsewhere: created after the
    pod failure backoff from the eviction's start (605 s + 10 s), as the Job's default
    ``podReplacementPolicy`` (``TerminatingOrFailed``) replaces a pod as soon as it is terminating; the gang
    computes its hour.
    (Marked terminating while it waited, the rank once held the drain and its gang for ever.)"""
    sim = gang_waiting_on_a_fault(tmp_path, "xid-64")
    assumed = next(r for r in sim.records.values() if r.pod.name.startswith("train") and r.node == "h100-1")
    assert (assumed.bound_s, assumed.reason, assumed.finished_s) == (600.0, "Evicted", 635.0)
    (fault,) = sim.faults.records if sim.faults is not None else ()
    assert fault.drained_s == 635.0 and sim.nodes["h100-1"].deleted_s == 635.0
    done = [r for r in sim.records.values() if r.pod.name.startswith("train") and r.phase == "Succeeded"]
    assert len(done) == 10 and {r.finished_s for r in done} == {615.0 + 3600}
