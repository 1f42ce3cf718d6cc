"""The live scheduler's cycle as a pure function: the live objects, the assumed pods and a clock in,
the writes it calls for out (``live_scheduler.cycle``), on the Node, Pod and PodGroup objects the API
would give."""

from __future__ import annotations

from typing import Any

import numpy as np

from conftest import kwok_node
from gpufleet.kube.problems import Location, Problems, Reporter
from gpufleet.kube.scheduler_config import scheduler_config
from gpufleet.live_scheduler.cycle import DRA_NOT_WRITTEN, Decisions, Memory, run_cycle
from gpufleet.live_scheduler.models import Models
from gpufleet.model.scheduler_config import SchedulerConfig

GPU = "nvidia.com/gpu"
COSCHEDULING = [{"name": "Coscheduling"}]


def _config(plugins: dict[str, Any] | None = None, **process: Any) -> SchedulerConfig:
    body = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "gang",
                "plugins": plugins
                or {
                    "multiPoint": {"enabled": COSCHEDULING},
                    "queueSort": {"enabled": COSCHEDULING, "disabled": [{"name": "*"}]},
                },
            }
        ],
        **process,
    }
    problems = Problems()
    config = scheduler_config("test", body, Reporter(problems, Location("test", 0)))
    assert config is not None and not problems.errors
    return config


def _pod(
    name: str, gpus: int, group: str | None = None, node: str | None = None, **spec: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "1"}
    if group is not None:
        meta["labels"] = {"scheduling.x-k8s.io/pod-group": group}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "schedulerName": "gang",
            **({"nodeName": node} if node else {}),
            "containers": [{"name": "c", "image": "x", "resources": {"limits": {GPU: gpus}}}],
            **spec,
        },
        "status": {"phase": "Running" if node else "Pending"},
    }


def _group(name: str, min_member: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"},
        "spec": {"minMember": min_member},
    }


def _cycle(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    groups: tuple[dict[str, Any], ...] = (),
    assumed: dict[str, str] | None = None,
    config: SchedulerConfig | None = None,
    seed: int = 0,
) -> Decisions:
    models = Models()
    node_models = [n for doc in nodes if (n := models.node(doc["metadata"]["name"], doc)) is not None]
    live = {f"ns/{p['metadata']['name']}": models.pod(f"ns/{p['metadata']['name']}", p) for p in pods}
    group_models = {
        f"ns/{g['metadata']['name']}": m for g in groups if (m := models.group(g["metadata"]["name"], g))
    }
    memory = Memory(np.random.default_rng(seed))
    return run_cycle(config or _config(), node_models, live, group_models, {}, [], assumed or {}, 0.0, memory)


def _bound(decisions: Decisions) -> dict[str, str]:
    return {p.pod.pod.name: p.node for b in decisions.bindings for p in b.members}


def test_a_gang_that_fits_is_bound_together_in_one_binding() -> None:
    """Coscheduling's Permit releases the members together: one ``Binding`` holds them all."""
    decisions = _cycle(
        [kwok_node("a"), kwok_node("b")],
        [_pod(f"m{i}", 8, group="g") for i in range(2)],
        (_group("g", 2),),
    )
    (binding,) = decisions.bindings
    assert binding.gang == "ns/g"
    assert sorted(p.pod.pod.name for p in binding.members) == ["m0", "m1"]
    assert {p.node for p in binding.members} == {"a", "b"}


def test_a_gang_that_does_not_fit_whole_binds_nothing_and_each_member_gets_its_message() -> None:
    """The member placed first waits at Permit and is let go when its sibling fails (scheduler-plugins'
    Coscheduling PostFilter: ``waitingPod.Reject(..., "optimistic rejection in PostFilter")``)."""
    decisions = _cycle([kwok_node("a")], [_pod(f"m{i}", 8, group="g") for i in range(2)], (_group("g", 2),))
    assert decisions.bindings == []
    messages = {f.pod.pod.name: f.message for f in decisions.failures}
    assert messages["m0"] == "optimistic rejection in PostFilter"
    assert messages["m1"].startswith("0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")
    assert messages["m1"].endswith(
        "PodGroup ns/g gets rejected due to Pod m1 is unschedulable even after PostFilter"
    )
    assert decisions.gangs_waiting == 1


def test_assumed_pods_and_pods_bound_by_others_count_against_their_nodes() -> None:
    """kube-scheduler's cache: bound pods (any scheduler) and this scheduler's assumed pods hold room."""
    decisions = _cycle(
        [kwok_node("a"), kwok_node("b")],
        [
            _pod("theirs", 8, node="a", schedulerName="default-scheduler"),
            _pod("ours-in-flight", 8),
            _pod("new", 8),
        ],
        assumed={"ns/ours-in-flight": "b"},
    )
    assert _bound(decisions) == {}
    assert decisions.failures[0].pod.pod.name == "new"
    assert decisions.failures[0].message.startswith("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")


def test_a_gang_bound_in_part_is_completed_when_its_other_members_fit() -> None:
    """After a crash between two bindings of a gang: the members bound count toward ``minMember``, so
    the others are bound as soon as they fit."""
    decisions = _cycle(
        [kwok_node("a"), kwok_node("b")],
        [_pod("m0", 8, group="g", node="a"), _pod("m1", 8, group="g")],
        (_group("g", 2),),
    )
    assert _bound(decisions) == {"m1": "b"}
    assert decisions.gangs == []


def test_a_gang_bound_in_part_that_cannot_be_completed_is_reported() -> None:
    decisions = _cycle(
        [kwok_node("a")],
        [_pod("m0", 8, group="g", node="a"), _pod("m1", 8, group="g"), _pod("m2", 8, group="g")],
        (_group("g", 3),),
    )
    assert _bound(decisions) == {}
    (gang,) = decisions.gangs
    assert (gang.key, gang.bound, gang.members, gang.min_member) == ("ns/g", 1, 3, 3)
    assert gang.message.startswith("0/1 nodes are available")


def test_what_gpufleet_cannot_judge_is_never_placed() -> None:
    """A pod claiming DRA devices (the live scheduler writes no claim allocation) or using a field
    gpufleet does not model gets a message that says so, not a node."""
    decisions = _cycle(
        [kwok_node("a")],
        [
            _pod("claims", 0, resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}]),
            _pod("host-network", 1, hostNetwork=True),
        ],
    )
    assert _bound(decisions) == {}
    messages = {f.pod.pod.name: f.message for f in decisions.failures}
    assert messages["claims"] == DRA_NOT_WRITTEN
    assert messages["host-network"] == (
        "gpufleet cannot judge this pod: it uses spec.hostNetwork, which gpufleet does not model"
    )


def test_process_settings_default_as_v1_and_name_gpufleet_s_own_lease() -> None:
    """``SetDefaults_KubeSchedulerConfiguration``: qps 50, burst 100, leases of 15 s renewed within 10 s
    every 2 s; the Lease is ``gpufleet-scheduler`` unless named, never kube-scheduler's own."""
    default = _config().process
    assert (default.qps, default.burst, default.leader_elect) == (50.0, 100, True)
    assert (default.lease_duration_s, default.renew_deadline_s, default.retry_period_s) == (15.0, 10.0, 2.0)
    assert (default.resource_name, default.resource_namespace) == ("gpufleet-scheduler", "kube-system")
    given = _config(
        clientConnection={"qps": 20, "burst": 40},
        leaderElection={"leaderElect": True, "leaseDuration": "30s", "resourceName": "mine"},
    ).process
    assert (given.qps, given.burst, given.lease_duration_s, given.resource_name) == (20.0, 40, 30.0, "mine")


def test_nvlink_islands_are_scored_with_the_devices_bound_pods_hold() -> None:
    """GpuTopology on the live cycle: the device ledger gives each bound pod the GPUs the device plugin
    would pick, so a node whose whole NVLink island of 4 is still free wins a 4-GPU pod over a node of
    islands of 2 (``tests/sim/test_device_choice.py`` has the same rule in simulation)."""
    topology = {"multiPoint": {"enabled": [{"name": "GpuTopology", "weight": 5}]}}
    nodes = [
        kwok_node("a", labels={"gpufleet.io/gpu-topology": "nvlink-islands-4"}),
        kwok_node("b", labels={"gpufleet.io/gpu-topology": "nvlink-islands-2"}),
    ]
    for seed in range(4):
        decisions = _cycle(nodes, [_pod("four", 4)], config=_config(topology), seed=seed)
        ((placed,),) = [b.members for b in decisions.bindings]
        assert placed.node == "a"
        assert sorted(u.gpu for u in placed.devices) in ([0, 1, 2, 3], [4, 5, 6, 7])


def test_the_annotation_the_scheduler_writes_is_read_back_without_complaint() -> None:
    """``gpufleet.io/gpu-devices`` is the live scheduler's own output: a pod annotated before a binding
    that then failed is judged again, not refused as an unknown annotation."""
    pod = _pod("half", 0)
    pod["metadata"]["annotations"] = {"gpu-fraction": "0.5", "gpufleet.io/gpu-devices": "0"}
    decisions = _cycle([kwok_node("a", 1)], [pod])
    assert _bound(decisions) == {"half": "a"}
