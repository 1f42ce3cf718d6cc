"""A hung process (``process-hang``: an NCCL hang, a GPU hang with no XID) and the kubelet's livenessProbe:
the prober (``pkg/kubelet/prober``) fails ``failureThreshold`` probes in a row, the kubelet kills the
container after its grace period and starts it again at once the first time (its back-off,
``kuberuntime_manager.go`` ``doBackOff``, then 10 s doubling to 5 min); under ``restartPolicy: Never``
the pod fails and its Job makes another. Without a probe the process holds its GPUs until the end."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import ROOT, pods_by_name, simulated, write

from gpufleet.kube import load_scenario
from gpufleet.kube.problems import ScenarioError
from gpufleet.lifecycle.liveness import RestartBackOff, liveness_kill_s
from gpufleet.model.probes import LivenessProbe
from gpufleet.sim.invariants import InvariantChecks
from gpufleet.sim.simulation import Simulation

PROBE = "{exec: {command: [cat, /tmp/heartbeat]}, periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 1}"


def scenario(policy: str = "OnFailure", probe: str | None = PROBE, hang: str = "1h10m") -> str:
    liveness = f"\n        livenessProbe: {probe}" if probe else ""
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: 3h}}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec:
  replicas: 1
  gpu: {{model: H100-80GB, count: 8}}
  template:
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}
---
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {{name: f}}
spec:
  faults:
  - {{at: {hang}, node: h100-0, gpu: 3, kind: process-hang}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  template:
    metadata:
      annotations: {{gpufleet.io/duration: 2h, gpufleet.io/checkpoint-interval: 30m}}
    spec:
      restartPolicy: {policy}
      containers:
      - name: train
        image: x
        resources:
          limits: {{nvidia.com/gpu: 8}}{liveness}
"""


def only_fault(summary: dict[str, Any]) -> dict[str, Any]:
    (fault,) = summary["faults"]["faults"]
    return dict(fault)


def test_the_kubelet_restarts_a_hung_container_in_place_and_it_resumes_from_its_checkpoint(
    tmp_path: Path,
) -> None:
    """Hung at 1h10m (10 min past its 1 h checkpoint): probes at 1h10m, +10 s, +20 s each time out after
    1 s, so the kubelet kills it at 1h10m21s; 30 s of grace, then it starts again at once (the first
    restart has no back-off) and computes the hour left: done at 1h10m51s + 1 h."""
    summary = simulated(write(tmp_path, scenario()))
    fault = only_fault(summary)
    assert fault["response"] == "hang" and fault["pods_hit"] == ["default/train-0"]
    assert fault["detection_s"] == 21 and fault["time_to_recovery_s"] == 51
    assert fault["gpus_out"] == 8 and fault["work_lost_gpu_hours"] == round(8 * 600 / 3600, 6)
    pod = pods_by_name(summary)["train-0"]
    assert pod["phase"] == "Succeeded" and pod["finished_s"] == 4200 + 51 + 3600


def test_a_hung_container_under_restart_policy_never_fails_and_its_job_makes_another(tmp_path: Path) -> None:
    summary = simulated(write(tmp_path, scenario(policy="Never")))
    pods = pods_by_name(summary)
    assert pods["train-0"]["phase"] == "Failed" and pods["train-0"]["finished_s"] == 4200 + 51
    retry = pods["train-0-r1"]
    assert retry["phase"] == "Succeeded"
    assert retry["finished_s"] - retry["working_s"] == 3600  # resumed from the 1 h checkpoint
    assert only_fault(summary)["time_to_recovery_s"] == 51


def test_without_a_probe_a_hung_process_holds_its_gpus_until_the_end(tmp_path: Path) -> None:
    summary = simulated(write(tmp_path, scenario(probe=None)))
    fault = only_fault(summary)
    assert fault["detection_s"] is None and fault["time_to_recovery_s"] is None
    assert fault["gpu_hours_lost"] == round(8 * (3 * 3600 - 4200) / 3600, 6)
    pod = pods_by_name(summary)["train-0"]
    assert pod["phase"] == "Running" and pod["finished_s"] is None
    totals = summary["faults"]["totals"]
    assert totals["goodput"] < 0.4  # 1 h of 3 h allocated kept: the hang computed nothing


def test_a_hang_where_no_process_runs_is_recorded_with_a_note(tmp_path: Path) -> None:
    """At 0 s the fault comes before the pod is placed (completions and failures run first)."""
    summary = simulated(write(tmp_path, scenario(hang="0s")))
    assert "no process runs on GPU 3" in only_fault(summary)["note"]


def test_a_hung_rank_stops_its_gang_until_it_is_restarted(tmp_path: Path) -> None:
    """Two ranks in a PodGroup: the other rank waits in its collective from the hang (its work since the
    checkpoint lost too) and both resume together from the 1 h checkpoint once the hung one restarts."""
    gang = (
        scenario()
        .replace("replicas: 1", "replicas: 2")
        .replace("spec:\n  template:", "spec:\n  completions: 2\n  parallelism: 2\n  template:")
        .replace(
            "gpufleet.io/checkpoint-interval: 30m}",
            "gpufleet.io/checkpoint-interval: 30m}\n      labels: {scheduling.x-k8s.io/pod-group: train}",
        )
    )
    group = (
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
        "metadata: {name: train}\nspec: {minMember: 2}\n"
    )
    summary = simulated(write(tmp_path, gang, group))
    fault = only_fault(summary)
    assert len(fault["pods_hit"]) == 1
    assert fault["work_lost_gpu_hours"] == round(2 * 8 * 600 / 3600, 6)
    pods = pods_by_name(summary)
    assert {p["phase"] for p in pods.values()} == {"Succeeded"}
    assert {p["finished_s"] for p in pods.values()} == {4200 + 51 + 3600}


def test_probes_count_from_the_initial_delay_and_the_kill_follows_the_last_timeout() -> None:
    """Probes every 10 s from the start (``worker.go``), none counted before ``initialDelaySeconds``;
    the third failure in a row is known when its probe times out."""
    probe = LivenessProbe(initial_delay_s=60, period_s=10, timeout_s=5, failure_threshold=3)
    assert liveness_kill_s(probe, started_s=100, hung_s=120) == 160 + 20 + 5
    assert liveness_kill_s(probe, started_s=100, hung_s=1003) == 1010 + 20 + 5
    slow = LivenessProbe(period_s=10, timeout_s=30, failure_threshold=2)  # a probe outlasting its period
    assert liveness_kill_s(slow, started_s=0, hung_s=0) == 30 + 30


def test_the_restart_back_off_doubles_to_five_minutes_and_resets_after_ten_minutes_running() -> None:
    """``flowcontrol.Backoff`` as the kubelet uses it: no wait the first time, then 10 s, 20 s, ... 300 s;
    a container that ran over 2 x 300 s since its last start begins again at no wait."""
    back_off = RestartBackOff()
    waits = []
    t = 0.0
    for _ in range(8):
        wait = back_off.wait_s(t)
        waits.append(wait)
        t += wait + 1  # it hangs again 1 s after each start
    assert waits == [0, 10, 20, 40, 80, 160, 300, 300]
    assert back_off.wait_s(t + 601) == 0


def test_a_liveness_probe_takes_the_api_servers_defaults(tmp_path: Path) -> None:
    probe = "{httpGet: {path: /healthz, port: 8080}}"
    (job,) = load_scenario(write(tmp_path, scenario(probe=probe))).jobs
    assert job.template.liveness_probe == LivenessProbe(0.0, 10.0, 1.0, 3, None)


@pytest.mark.parametrize(
    ("probe", "problem"),
    [
        ("{exec: {command: [x]}, periodSeconds: -1}", "livenessProbe.periodSeconds: Invalid value: -1"),
        (
            "{exec: {command: [x]}, successThreshold: 2}",
            "livenessProbe.successThreshold: Invalid value: 2: must be 1",
        ),
        ("{periodSeconds: 5}", "livenessProbe: Required value: must specify a handler type"),
    ],
)
def test_an_invalid_liveness_probe_is_one_line_naming_its_field(
    tmp_path: Path, probe: str, problem: str
) -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario(write(tmp_path, scenario(probe=probe)))
    assert problem in str(err.value)


def test_the_hang_example_keeps_every_invariant_after_every_event() -> None:
    """examples/faults/hang.yaml under ``--check-invariants``: nothing lost or over-committed."""
    sim = Simulation(load_scenario([ROOT / "examples" / "faults" / "hang.yaml"]))
    sim.invariants = InvariantChecks()
    sim.run()
    records = {r.pod.key: r for r in sim.records.values()}
    assert (
        records["default/with-probe-0"].phase == "Succeeded" and records["default/with-probe-0"].restarts == 1
    )
    assert records["default/without-probe-0"].phase == "Running" and records["default/without-probe-0"].hung


@settings(max_examples=15, deadline=None)
@given(
    hangs=st.lists(st.integers(0, 3 * 3600), min_size=1, max_size=4),
    policy=st.sampled_from(["OnFailure", "Never"]),
    period=st.integers(1, 120),
    threshold=st.integers(1, 5),
    delay=st.integers(0, 600),
    save=st.sampled_from(["0s", "2m"]),
)
def test_hangs_keep_every_invariant(
    hangs: list[int], policy: str, period: int, threshold: int, delay: int, save: str
) -> None:
    """Hangs at random times (again and again, during restarts and saves), any probe, either restart
    policy: nothing lost or over-committed after any event (``--check-invariants``), and the work ends."""
    probe = (
        f"{{exec: {{command: [x]}}, periodSeconds: {period}, failureThreshold: {threshold}, "
        f"initialDelaySeconds: {delay}}}"
    )
    text = scenario(policy=policy, probe=probe).replace("duration: 3h", "duration: 12h")
    text = text.replace(
        "gpufleet.io/checkpoint-interval: 30m",
        f"gpufleet.io/checkpoint-interval: 30m, gpufleet.io/checkpoint-save: {save}",
    )
    listed = "".join(f"\n  - {{at: {t}s, node: h100-0, gpu: 3, kind: process-hang}}" for t in hangs)
    text = text.replace("\n  - {at: 1h10m, node: h100-0, gpu: 3, kind: process-hang}", listed)
    with tempfile.TemporaryDirectory() as folder:
        sim = Simulation(load_scenario(write(Path(folder), text)))
        sim.invariants = InvariantChecks()
        sim.run()
    assert sim.invariants.events == sim.loop.steps
    assert any(r.phase == "Succeeded" for r in sim.all_records)
