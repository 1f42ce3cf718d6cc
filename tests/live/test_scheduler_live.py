"""``gpufleet scheduler`` on the real control plane, beside the real kube-scheduler, with kwok's GPU
nodes: gangs all or nothing (scheduler-plugins' Coscheduling: ``Permit`` lets a PodGroup's members
go only when ``minMember`` of them are placed), seed 004's table, MIG instances and fractional
shares, gang-aware preemption, the dry run, ``/metrics`` with kube-scheduler's names, and SIGTERM.

Each test runs its own scheduler process (``e2e.gpufleet_scheduler``) on nodes only its pods
tolerate, and asserts what the API shows at the end: which pods are bound where, the conditions and
Events written, the Lease.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e.gpufleet_scheduler import SchedulerProcess, config, kept_pod, pod_group_crd
from typer.testing import CliRunner

from conftest import kwok_node, wait_until
from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.kube.manifests import node_manifest
from gpufleet.model.node import Taint

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GPU = "nvidia.com/gpu"


def _apply(cp: Any, *docs: dict[str, Any]) -> None:
    cp.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))


def _pods(cp: Any, ns: str) -> dict[str, dict[str, Any]]:
    items = (cp.get(f"/api/v1/namespaces/{ns}/pods") or {}).get("items") or []
    return {p["metadata"]["name"]: p for p in items}


def _node_of(pod: dict[str, Any]) -> str | None:
    return (pod.get("spec") or {}).get("nodeName")


def _condition(pod: dict[str, Any]) -> dict[str, Any] | None:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == "PodScheduled"), None)


def _unschedulable_message(cp: Any, ns: str, name: str) -> str | None:
    condition = _condition(_pods(cp, ns).get(name, {}))
    if condition is None or condition.get("reason") != "Unschedulable":
        return None
    return str(condition.get("message"))


def _events(cp: Any, ns: str, name: str, reason: str) -> list[dict[str, Any]]:
    items = (cp.get(f"/api/v1/namespaces/{ns}/events") or {}).get("items") or []
    return [e for e in items if e["involvedObject"]["name"] == name and e.get("reason") == reason]


class Lab:
    """A namespace, tainted kwok nodes only its pods tolerate, and a scheduler process."""

    def __init__(self, cp: Any, ns: str, workdir: Path) -> None:
        self.cp, self.ns, self.workdir = cp, ns, workdir
        self.taint = Taint("gpufleet-test", ns, "NoSchedule")
        self.nodes: list[str] = []
        self.scheduler: SchedulerProcess | None = None
        _apply(cp, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

    def add_nodes(self, *docs: dict[str, Any]) -> None:
        for doc in docs:
            doc["metadata"].setdefault("labels", {})["gpufleet-test"] = self.ns
            doc.setdefault("spec", {}).setdefault("taints", []).append(
                {"key": "gpufleet-test", "value": self.ns, "effect": "NoSchedule"}
            )
            self.nodes.append(doc["metadata"]["name"])
        _apply(self.cp, *docs)

    def example_nodes(self, path: Path) -> None:
        """The Nodes of an example, named ``<namespace>-<name>``, for kwok to play."""
        self.add_nodes(
            *(
                node_manifest(
                    replace(n, name=f"{self.ns}-{n.name}"),
                    {"kwok.x-k8s.io/node": "fake"},
                    {"kubernetes.io/hostname": f"{self.ns}-{n.name}"},
                )
                for n in load_scenario([path]).nodes
            )
        )

    def gpu_nodes(self, *names: str, gpus: int = 8) -> None:
        self.add_nodes(*(kwok_node(n, gpus) for n in names))

    def pod(
        self,
        name: str,
        scheduler: str,
        limits: dict[str, Any] | None = None,
        group: str | None = None,
        **spec: Any,
    ) -> dict[str, Any]:
        return kept_pod(name, self.ns, scheduler, limits, group, **spec)

    def group(self, name: str, min_member: int) -> dict[str, Any]:
        return {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": self.ns},
            "spec": {"minMember": min_member},
        }

    def start(self, settings: dict[str, Any], **kw: Any) -> SchedulerProcess:
        self.scheduler = SchedulerProcess(
            self.cp, settings, self.workdir, name=f"sched-{self.ns}", **kw
        ).start()
        return self.scheduler

    def bound(self) -> dict[str, str]:
        return {name: node for name, pod in _pods(self.cp, self.ns).items() if (node := _node_of(pod))}

    def close(self) -> None:
        if self.scheduler is not None:
            self.scheduler.stop()
            print(self.scheduler.stderr()[-4000:])  # shown by pytest when the test failed
            print(*self.scheduler.decisions()[-20:], sep="\n")
        self.cp.kubectl("delete", "namespace", self.ns, "--wait=false")
        if self.nodes:
            self.cp.kubectl("delete", "node", *self.nodes, "--ignore-not-found", "--wait=false")


@pytest.fixture(scope="module")
def crd(control_plane: Any) -> Iterator[Any]:
    with pod_group_crd(control_plane):
        yield control_plane


@pytest.fixture
def lab(crd: Any, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Lab]:
    ns = "sched-" + re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[5:40].strip("-")
    made = Lab(crd, ns, tmp_path)
    yield made
    made.close()


def test_a_gang_binds_all_or_nothing_beside_the_default_scheduler(lab: Lab, tmp_path: Path) -> None:
    """Coscheduling's Permit: a PodGroup's members are bound only once ``minMember`` of them fit; a
    gang that cannot fit whole holds nothing, and binds whole once room is made. kube-scheduler's pod
    on the same nodes counts against them. The message written is the one simulation and ``explain``
    give for the same objects."""
    lab.gpu_nodes(f"{lab.ns}-a", f"{lab.ns}-b")
    other = lab.pod("by-default", "default-scheduler", {GPU: 4}, nodeName=None)
    other["spec"]["nodeSelector"]["kubernetes.io/hostname"] = f"{lab.ns}-a"
    _apply(lab.cp, other)
    wait_until("kube-scheduler binds its pod", lambda: lab.bound().get("by-default"))
    settings = config("gpufleet-gang")
    lab.start(settings)
    _apply(
        lab.cp,
        lab.group("fits", 3),
        lab.group("big", 2),
        *(lab.pod(f"fits-{i}", "gpufleet-gang", {GPU: 4}, group="fits") for i in range(3)),
        *(lab.pod(f"big-{i}", "gpufleet-gang", {GPU: 8}, group="big") for i in range(2)),
    )
    wait_until("the fitting gang bound whole", lambda: {f"fits-{i}" for i in range(3)} <= set(lab.bound()))
    message = wait_until("big's verdict", lambda: _unschedulable_message(lab.cp, lab.ns, "big-1"))
    assert not {"big-0", "big-1"} & set(lab.bound())  # nothing held by the gang that cannot fit
    assert message.startswith("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")
    assert _events(lab.cp, lab.ns, "big-1", "FailedScheduling")[0]["message"] == message
    # the same objects, read back by snapshot, give the same message in explain (the same engine)
    snapshot = tmp_path / "snapshot"
    runner = CliRunner()
    taken = runner.invoke(
        app, ["snapshot", "--kubeconfig", str(lab.cp.kubeconfig), "-A", "--out", str(snapshot)]
    )
    assert taken.exit_code == 0, taken.output
    (snapshot / "scheduler.yaml").write_text(yaml.safe_dump(settings))
    explained = runner.invoke(app, ["explain", str(snapshot), "--pod", f"{lab.ns}/big-1", "--json"])
    assert explained.exit_code == 0, explained.output
    assert yaml.safe_load(explained.output)[0]["message"] == message
    # room made (kube-scheduler's pod too): the gang binds whole, across both nodes
    lab.cp.kubectl("delete", "pod", "-n", lab.ns, "fits-0", "fits-1", "fits-2", "by-default", "--wait=false")
    wait_until("the big gang bound whole", lambda: {"big-0", "big-1"} <= set(lab.bound()), timeout_s=60)
    assert {lab.bound()["big-0"], lab.bound()["big-1"]} == {f"{lab.ns}-a", f"{lab.ns}-b"}


def test_seed_004_table_under_the_gpufleet_scheduler_with_coscheduling(lab: Lab) -> None:
    """Seed 004: three 8-GPU nodes; S4a and S4b (4 GPUs each), then T16 (a gang of two 8-GPU pods),
    then T8 arrive, each Job once the one before was decided. Under Coscheduling T16 holds nothing,
    T8 runs, and 16 GPUs work: the table's last row, on a real control plane (the example's Jobs and
    nodes, put in this test's namespace and on nodes only its pods tolerate)."""
    lab.example_nodes(EXAMPLES / "seed-004" / "coscheduling.yaml")
    docs = list(yaml.safe_load_all((EXAMPLES / "seed-004" / "coscheduling.yaml").read_text()))
    (settings,) = [d for d in docs if d and d["kind"] == "KubeSchedulerConfiguration"]
    settings["leaderElection"] = {"leaderElect": False}
    lab.start(settings)
    (group,) = [d for d in docs if d and d["kind"] == "PodGroup"]
    group["metadata"]["namespace"] = lab.ns
    _apply(lab.cp, group)
    toleration = {"key": "gpufleet-test", "operator": "Equal", "value": lab.ns, "effect": "NoSchedule"}
    for job in (d for d in docs if d and d["kind"] == "Job"):
        job["metadata"]["namespace"] = lab.ns
        job["spec"]["template"]["spec"]["tolerations"] = [toleration]
        name = job["metadata"]["name"]
        _apply(lab.cp, job)
        members = int(job["spec"]["parallelism"])

        def decided(job_name: str = name, count: int = members) -> bool:
            pods = [
                p
                for p in _pods(lab.cp, lab.ns).values()
                if p["metadata"]["labels"].get("job-name") == job_name
            ]
            done = [p for p in pods if _node_of(p) or (_condition(p) or {}).get("reason") == "Unschedulable"]
            return len(pods) == count and len(done) == count

        wait_until(f"Job {name} decided", decided)
    by_job: dict[str, list[str | None]] = {}
    for pod in _pods(lab.cp, lab.ns).values():
        by_job.setdefault(pod["metadata"]["labels"]["job-name"], []).append(_node_of(pod))
    assert by_job["t16"] == [None, None]  # T16 holds nothing
    assert all(by_job[j] != [None] for j in ("s4a", "s4b", "t8"))  # T8 placed

    def running() -> list[dict[str, Any]] | None:
        pods = [p for p in _pods(lab.cp, lab.ns).values() if p["status"].get("phase") == "Running"]
        return pods if len(pods) == 3 else None

    working = sum(
        int(p["spec"]["containers"][0]["resources"]["limits"][GPU])
        for p in wait_until("3 pods running", running)
    )
    assert working == 16


def test_mig_instances_and_fractional_shares_are_placed_as_in_simulation(lab: Lab) -> None:
    """MIG ``mixed`` strategy: each instance profile is an extended resource the node advertises
    (``nvidia.com/mig-1g.10gb``), which NodeResourcesFit counts; KAI's ``gpu-fraction`` shares one GPU
    between pods (the rest of the GPU stays for another share), with the GPU chosen written in
    ``gpufleet.io/gpu-devices``; a share larger than what is left is refused with a message."""
    mig = kwok_node(f"{lab.ns}-mig", 0)
    mig["status"]["capacity"] |= {"nvidia.com/mig-1g.10gb": "3"}
    mig["status"]["allocatable"] |= {"nvidia.com/mig-1g.10gb": "3"}
    mig["metadata"]["labels"]["nvidia.com/mig.strategy"] = "mixed"
    shared = kwok_node(f"{lab.ns}-one", 1)
    lab.add_nodes(mig, shared)
    lab.start(config("gpufleet-gpus", plugins={}))
    _apply(
        lab.cp,
        *(lab.pod(f"mig-{i}", "gpufleet-gpus", {"nvidia.com/mig-1g.10gb": 1}) for i in range(4)),
        *(lab.pod(f"half-{i}", "gpufleet-gpus", annotations={"gpu-fraction": "0.5"}) for i in range(2)),
    )
    wait_until("three MIG pods and two halves bound", lambda: len(lab.bound()) == 5)
    bound = lab.bound()
    on_mig = [k for k, v in bound.items() if v == f"{lab.ns}-mig"]
    assert len(on_mig) == 3 and all(k.startswith("mig-") for k in on_mig)
    assert bound["half-0"] == bound["half-1"] == f"{lab.ns}-one"
    pods = _pods(lab.cp, lab.ns)
    assert {pods[f"half-{i}"]["metadata"]["annotations"]["gpufleet.io/gpu-devices"] for i in range(2)} == {
        "0"
    }
    refused = next(n for n in ("mig-0", "mig-1", "mig-2", "mig-3") if n not in bound)
    message = wait_until(
        "the fourth MIG pod's verdict", lambda: _unschedulable_message(lab.cp, lab.ns, refused)
    )
    assert "Insufficient nvidia.com/mig-1g.10gb" in message
    _apply(lab.cp, lab.pod("three-quarters", "gpufleet-gpus", annotations={"gpu-fraction": "0.75"}))
    message = wait_until(
        "the large share's verdict", lambda: _unschedulable_message(lab.cp, lab.ns, "three-quarters")
    )
    assert "three-quarters" not in lab.bound()
    assert message.startswith("0/2 nodes are available")


def test_a_high_priority_gang_preempts_a_lower_priority_gang_whole(lab: Lab) -> None:
    """Gang-aware DefaultPreemption (as Volcano and KAI do it): a gang preempts only if it then fits
    whole, and its victims go as whole gangs; the victims are deleted with a ``Preempted`` Event, the
    preemptor is nominated (``status.nominatedNodeName``) and its gang binds once they are gone."""
    lab.gpu_nodes(f"{lab.ns}-a", f"{lab.ns}-b")
    high = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": f"{lab.ns}-high"},
        "value": 1000,
    }
    _apply(lab.cp, high)
    try:
        lab.start(config("gpufleet-gang"))
        _apply(
            lab.cp,
            lab.group("low", 2),
            *(lab.pod(f"low-{i}", "gpufleet-gang", {GPU: 8}, group="low") for i in range(2)),
        )
        wait_until("the low gang bound", lambda: {"low-0", "low-1"} <= set(lab.bound()))
        _apply(
            lab.cp,
            lab.group("high", 2),
            *(
                lab.pod(
                    f"high-{i}", "gpufleet-gang", {GPU: 8}, group="high", priorityClassName=f"{lab.ns}-high"
                )
                for i in range(2)
            ),
        )
        wait_until(
            "the high gang bound whole", lambda: {"high-0", "high-1"} <= set(lab.bound()), timeout_s=60
        )
        assert not {"low-0", "low-1"} & set(_pods(lab.cp, lab.ns))  # the victims went whole
        preempted = [e for i in range(2) for e in _events(lab.cp, lab.ns, f"low-{i}", "Preempted")]
        assert len(preempted) == 2 and all(e["message"].startswith("Preempted by pod ") for e in preempted)
    finally:
        lab.cp.kubectl("delete", "priorityclass", f"{lab.ns}-high", "--ignore-not-found")


def test_dry_run_logs_every_decision_and_binds_nothing(lab: Lab) -> None:
    """``--dry-run``: each decision is one JSON line; no binding, condition or Event is written."""
    lab.gpu_nodes(f"{lab.ns}-a")
    scheduler = lab.start(config("gpufleet-dry"), extra=("--dry-run",))
    _apply(lab.cp, lab.pod("fits", "gpufleet-dry", {GPU: 8}), lab.pod("too-big", "gpufleet-dry", {GPU: 16}))
    logged = wait_until(
        "both decisions logged",
        lambda: (
            {d["pod"]: d for d in scheduler.decisions() if "pod" in d}
            if len(scheduler.decisions()) >= 2
            else None
        ),
    )
    assert logged[f"{lab.ns}/fits"] == {"action": "bind", "pod": f"{lab.ns}/fits", "node": f"{lab.ns}-a"}
    assert logged[f"{lab.ns}/too-big"]["action"] == "unschedulable"
    assert logged[f"{lab.ns}/too-big"]["message"].startswith(
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    )
    assert lab.bound() == {}
    assert _condition(_pods(lab.cp, lab.ns)["too-big"]) is None
    assert _events(lab.cp, lab.ns, "too-big", "FailedScheduling") == []


def test_metrics_use_kube_scheduler_names_and_sigterm_gives_the_lease_up(lab: Lab) -> None:
    """``/metrics`` with kube-scheduler's names and labels (``pkg/scheduler/metrics``) and gpufleet's
    gang and GPU figures; ``/healthz`` and ``/readyz``; the Lease held while leading, and given up on
    SIGTERM (``ReleaseOnCancel``) with exit status 0."""
    lab.gpu_nodes(f"{lab.ns}-a")
    scheduler = lab.start(config("gpufleet-metrics", lease=f"{lab.ns}-lease", lease_namespace=lab.ns))
    _apply(lab.cp, lab.pod("fits", "gpufleet-metrics", {GPU: 6}))
    wait_until("fits bound", lambda: lab.bound().get("fits"))
    _apply(
        lab.cp,
        lab.group("waits", 2),
        *(lab.pod(f"waits-{i}", "gpufleet-metrics", {GPU: 4}, group="waits") for i in range(2)),
    )
    wait_until("the gang's verdict", lambda: _unschedulable_message(lab.cp, lab.ns, "waits-1"))
    assert scheduler.http("/healthz") == 200 and scheduler.http("/readyz") == 200
    text = wait_until(
        "the metrics of the cycle",
        lambda: (
            t if 'scheduler_pending_pods{queue="unschedulable"} 2.0' in (t := scheduler.metrics()) else None
        ),
    )
    assert 'scheduler_schedule_attempts_total{profile="gpufleet-metrics",result="scheduled"} 1.0' in text
    assert re.search(
        r'scheduler_schedule_attempts_total\{profile="gpufleet-metrics",result="unschedulable"\} [1-9]', text
    )
    assert 'scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"} 1.0' in text
    assert "scheduler_scheduling_attempt_duration_seconds_bucket" in text
    assert "gpufleet_scheduler_gangs_waiting 1.0" in text
    assert "gpufleet_scheduler_fragmented_gpus 2.0" in text  # 2 GPUs free, the smallest request is 4
    assert "gpufleet_scheduler_is_leader 1.0" in text
    lease = lab.cp.get(f"/apis/coordination.k8s.io/v1/namespaces/{lab.ns}/leases/{lab.ns}-lease")
    assert lease["spec"]["holderIdentity"] == scheduler.name
    assert scheduler.stop() == 0
    lease = lab.cp.get(f"/apis/coordination.k8s.io/v1/namespaces/{lab.ns}/leases/{lab.ns}-lease")
    assert lease["spec"].get("holderIdentity", "") == ""


def test_the_fgd_score_keeps_a_whole_gpu_free_for_the_whole_gpu_pod(lab: Lab) -> None:
    """examples/gpu-sharing/fragmentation.yaml with fgd-scheduler.yaml's profile (FGD, Weng et al.,
    USENIX ATC '23), live: the second half-GPU pod joins the first on one GPU, so the pod that needs a
    whole GPU gets the other node, as in simulation."""
    example = EXAMPLES / "gpu-sharing"
    lab.example_nodes(example / "fragmentation.yaml")
    (settings,) = yaml.safe_load_all((example / "fgd-scheduler.yaml").read_text())
    settings["profiles"][0]["schedulerName"] = "gpufleet-fgd"
    settings["leaderElection"] = {"leaderElect": False}
    lab.start(settings)
    for doc in (
        d for d in yaml.safe_load_all((example / "fragmentation.yaml").read_text()) if d["kind"] == "Pod"
    ):
        name = doc["metadata"]["name"]
        pod = lab.pod(name, "gpufleet-fgd", annotations=doc["metadata"]["annotations"])
        pod["spec"]["containers"] = doc["spec"]["containers"]
        _apply(lab.cp, pod)
        wait_until(f"{name} bound", lambda name=name: lab.bound().get(name))
    bound = lab.bound()
    assert bound["infer-1"] == bound["infer-2"] != bound["train"]
