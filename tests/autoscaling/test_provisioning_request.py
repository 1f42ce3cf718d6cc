"""cluster-autoscaler 1.34.5's ProvisioningRequests (``provisioningrequest/``, ``processors/provreq/``) on GPU
nodes: check-capacity answers whether the request's pods fit now, best-effort-atomic grows one group for
all of them or none (``allOrNothing``), a provisioned request's capacity stays booked for 10 minutes
(``defaultReservationTime``), then ``BookingExpired``; one never provisioned fails after 7 days."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from conftest import gpu_node, gpu_pod, run_simulation, write
from gpufleet.autoscaling.cluster_autoscaler import ScaleUpRequest, scale_up
from gpufleet.autoscaling.provisioning_request import (
    ACCEPTED,
    BEST_EFFORT_ATOMIC,
    BOOKING_EXPIRED,
    CHECK_CAPACITY,
    CLASS_ANNOTATION,
    CONSUME_ANNOTATION,
    FAILED,
    PROVISIONED,
    Condition,
    PodSet,
    ProvisioningRequest,
    ProvisionRequest,
    Result,
    available,
    pods_for,
    provision,
    refresh,
    should_book,
    supported_check_capacity,
    with_condition,
)
from gpufleet.autoscaling.scale_up import ALL_OR_NOTHING, PoolOption
from gpufleet.cluster.state import ClusterState
from gpufleet.model.scheduler_config import ProfileConfig
from gpufleet.scheduling.profile import build_profile

PROFILE = build_profile(ProfileConfig())
H100 = gpu_node("h100-template")


def request(name: str, gpus: int, count: int, class_name: str, **parameters: str) -> ProvisioningRequest:
    template = gpu_pod("trainer", gpus)
    return ProvisioningRequest(name, "ml", class_name, (PodSet("trainer", count, template),), parameters)


def cluster(nodes: int) -> ClusterState:
    return ClusterState([gpu_node(f"h100-{i}") for i in range(nodes)])


def pool(room: int, size: int = 0) -> PoolOption:
    return PoolOption("h100", H100, room=room, size=size, max_size=size + room)


def ask(
    state: ClusterState, requests: list[ProvisioningRequest], chosen: str, room: int = 0
) -> ProvisionRequest:
    options = [pool(room)] if room else []
    return ProvisionRequest(0.0, state, PROFILE, requests, chosen, options)


def condition(r: ProvisioningRequest, kind: str) -> tuple[bool, str, str]:
    found = r.condition(kind)
    assert found is not None
    return found.status, found.reason, found.message


def test_pods_for_a_request_are_named_per_pod_set_and_annotated_with_it() -> None:
    r = request("llm", 8, 2, BEST_EFFORT_ATOMIC)
    pods = pods_for(r)
    assert [p.name for p in pods] == ["llm-0-0", "llm-0-1"]
    assert {p.namespace for p in pods} == {"ml"}
    assert pods[0].annotations[CONSUME_ANNOTATION] == "llm"
    assert pods[0].annotations[CLASS_ANNOTATION] == BEST_EFFORT_ATOMIC


def test_check_capacity_found_is_accepted_then_provisioned() -> None:
    r = request("fits", 8, 2, CHECK_CAPACITY)
    done = provision(ask(cluster(2), [r], r.key))
    assert done.result is Result.SUCCESSFUL
    out = done.request(r.key)
    assert [c.type for c in out.conditions] == [ACCEPTED, PROVISIONED]
    assert condition(out, PROVISIONED) == (True, "CapacityIsFound", "Capacity is found in the cluster")


def test_check_capacity_not_found_asks_for_a_retry_and_never_scales_up() -> None:
    r = request("big", 8, 3, CHECK_CAPACITY)
    done = provision(ask(cluster(2), [r], r.key, room=4))
    assert done.result is Result.NO_OPTIONS and done.scale_up is None
    expected = (False, "CapacityIsNotFound", "Capacity is not found, CA will try to find it later.")
    assert condition(done.request(r.key), PROVISIONED) == expected


def test_check_capacity_no_retry_fails_and_another_value_is_ignored() -> None:
    failed = provision(ask(cluster(1), [r := request("big", 8, 2, CHECK_CAPACITY, noRetry="true")], r.key))
    out = failed.request(r.key)
    assert condition(out, FAILED) == (True, "CapacityIsNotFound", "CA could not find requested capacity")
    assert out.condition(PROVISIONED) is None
    odd = provision(ask(cluster(1), [q := request("big", 8, 2, CHECK_CAPACITY, noRetry="yes")], q.key))
    assert odd.request(q.key).condition(FAILED) is None
    assert condition(odd.request(q.key), PROVISIONED)[0] is False


def test_best_effort_atomic_grows_one_group_for_every_pod_at_once() -> None:
    r = request("slice", 8, 4, BEST_EFFORT_ATOMIC)
    done = provision(ask(cluster(1), [r], r.key, room=8))
    assert done.result is Result.SUCCESSFUL
    assert done.scale_up is not None and (done.scale_up.group, done.scale_up.nodes) == ("h100", 3)
    expected = (True, "CapacityIsProvisioned", "Capacity is found in the cluster")
    assert condition(done.request(r.key), PROVISIONED) == expected
    assert done.request(r.key).condition(ACCEPTED) is None  # (only check-capacity marks it Accepted)


def test_best_effort_atomic_grows_nothing_when_the_group_cannot_take_them_all() -> None:
    r = request("slice", 8, 4, BEST_EFFORT_ATOMIC)
    done = provision(ask(cluster(1), [r], r.key, room=2))  # 3 nodes needed, 2 allowed: no partial scale-up
    assert done.result is Result.NO_OPTIONS and done.scale_up is None
    assert condition(done.request(r.key), PROVISIONED)[:2] == (False, "CapacityIsNotFound")


def test_all_or_nothing_scale_up_cut_by_a_resource_limit_grows_nothing() -> None:
    """``allOrNothing``: the best option's nodes cut by a cluster-wide limit (``newNodes < NodeCount``) is no
    scale-up, every pod marked ``AllOrNothingReason``; without it the cut scale-up goes ahead."""
    pods = [gpu_pod(f"p{i}", 8) for i in range(3)]
    state = ClusterState([])
    base = ScaleUpRequest(
        0.0, state, PROFILE, pods, [pool(8)], frozenset(), "random", np.random.default_rng(0), frozenset(),
        False, resources_left={"cpu": 200},
    )  # fmt: skip
    assert (up := scale_up(base).scale_up) is not None and up.nodes == 2
    reply = scale_up(replace(base, all_or_nothing=True))
    assert reply.scale_up is None
    assert dict(reply.not_triggered) == {p.key: ALL_OR_NOTHING for p in pods}


def test_best_effort_atomic_pods_that_fit_need_no_scale_up() -> None:
    r = request("small", 8, 2, BEST_EFFORT_ATOMIC)
    done = provision(ask(cluster(2), [r], r.key, room=8))
    assert done.result is Result.NOT_NEEDED and done.scale_up is None
    assert condition(done.request(r.key), PROVISIONED)[:2] == (True, "CapacityIsFound")


def test_booked_capacity_is_not_given_to_another_request() -> None:
    """``bookCapacity``: a provisioned request's pods hold their nodes, so the next check finds none."""
    first = request("first", 8, 2, CHECK_CAPACITY)
    second = request("second", 8, 1, CHECK_CAPACITY)
    state = cluster(2)
    done = provision(ask(state, [first, second], first.key))
    booked = done.request(first.key)
    assert should_book(booked)
    again = provision(ask(state, [booked, second], second.key))
    assert again.result is Result.NO_OPTIONS
    expired = with_condition(booked, BOOKING_EXPIRED, True, "CapacityReservationTimeExpired", "", 700.0)
    assert not should_book(expired)
    assert provision(ask(state, [expired, second], second.key)).result is Result.SUCCESSFUL


def test_booking_expires_ten_minutes_after_provisioned() -> None:
    """``refresh``: ``Provisioned`` true more than ``defaultReservationTime`` (10 min) ago:
    ``BookingExpired``."""
    r = with_condition(request("r", 8, 1, CHECK_CAPACITY), PROVISIONED, True, "CapacityIsFound", "", 100.0)
    kept, _ = refresh([r], 700.0)  # exactly 10 min: not yet (``Before``)
    assert kept[0].condition(BOOKING_EXPIRED) is None
    out, deleted = refresh([r], 700.5)
    expected = (True, "CapacityReservationTimeExpired", "Capacity reservation time is expired")
    assert condition(out[0], BOOKING_EXPIRED) == expected and deleted == []


def test_request_never_provisioned_fails_after_seven_days_and_is_deleted_seven_days_later() -> None:
    week = 7 * 24 * 3600.0
    r = request("stuck", 8, 1, BEST_EFFORT_ATOMIC)
    out, _ = refresh([r], week + 1)
    assert condition(out[0], FAILED) == (True, "Expired", "ProvisioningRequest is expired")
    _, deleted = refresh(out, 2 * week + 2)
    assert deleted == [r.key]


def test_unsupported_class_is_not_tried_nor_refreshed() -> None:
    r = request("other", 8, 1, "queued-provisioning.gke.io")
    assert provision(ask(cluster(1), [r], r.key)).result is Result.NOT_TRIED
    assert refresh([r], 1e9)[0] == [r]


def test_check_capacity_processor_instance() -> None:
    """``SupportedCheckCapacityClass``: the ``processorInstance`` parameter, or the deprecated class
    prefix."""
    plain = request("a", 1, 1, CHECK_CAPACITY)
    named = request("b", 1, 1, CHECK_CAPACITY, processorInstance="ca-a")
    prefixed = request("c", 1, 1, "ca-a" + CHECK_CAPACITY)
    assert supported_check_capacity(plain) and not supported_check_capacity(named)
    assert not supported_check_capacity(plain, "ca-a")
    assert supported_check_capacity(named, "ca-a") and not supported_check_capacity(named, "ca-b")
    assert supported_check_capacity(prefixed, "ca-a")


def test_retry_after_backoff_only() -> None:
    """``IsAvailableForProvisioning``: ``Provisioned`` false is retried once its backoff (1 min first)
    passed."""
    r = replace(
        request("r", 8, 1, CHECK_CAPACITY),
        conditions=(Condition(PROVISIONED, False, "CapacityIsNotFound", "", 0.0),),
    )
    assert not available(r, 60.0) and available(r, 60.5)
    assert not available(with_condition(r, PROVISIONED, True, "CapacityIsFound", "", 1.0), 1e6)


# -- in the simulation ------------------------------------------------------------------------------

POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 0
  max: 4
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
"""

POD_TEMPLATE = """---
apiVersion: v1
kind: PodTemplate
metadata: {name: trainer}
template:
  spec:
    containers:
    - name: c
      image: x
      resources: {limits: {nvidia.com/gpu: 8}}
"""


def provreq_yaml(class_name: str, count: int) -> str:
    return f"""---
apiVersion: autoscaling.x-k8s.io/v1
kind: ProvisioningRequest
metadata: {{name: llm}}
spec:
  provisioningClassName: {class_name}
  podSets:
  - podTemplateRef: {{name: trainer}}
    count: {count}
"""


def consuming_job(pods: int, duration: str = "1h") -> str:
    return f"""---
apiVersion: batch/v1
kind: Job
metadata: {{name: llm}}
spec:
  completions: {pods}
  parallelism: {pods}
  template:
    metadata:
      annotations:
        gpufleet.io/duration: {duration}
        autoscaling.x-k8s.io/consume-provisioning-request: llm
        autoscaling.x-k8s.io/provisioning-class-name: best-effort-atomic-scale-up.autoscaling.x-k8s.io
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""


def sim_events(sim: Any) -> list[tuple[float, str, str | None, tuple[str, ...], str]]:
    return [
        (e.t_s, e.kind, e.pool, e.nodes, e.reason)
        for e in sim.autoscaler.events
        if e.kind in ("scale-up", "provisioning-request")
    ]


SIMULATION = (
    "---\napiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {{name: s}}\n"
    "spec: {{duration: {duration}}}\n"
)


def run(tmp_path: Path, *texts: str, duration: str = "30m") -> Any:
    simulation = SIMULATION.format(duration=duration)
    return run_simulation(write(tmp_path, POOL + POD_TEMPLATE + "".join(texts) + simulation))


def test_best_effort_atomic_request_brings_the_nodes_its_pods_run_on(tmp_path: Path) -> None:
    """The request's three 8-GPU pods need three nodes: one scale-up for all of them (the request's, not the
    pods': a pod consuming a request triggers none), ``Provisioned`` true; the Job's pods run on those
    nodes; ten minutes later the booking expires."""
    sim = run(tmp_path, provreq_yaml(BEST_EFFORT_ATOMIC, 3), consuming_job(3))
    got = sim_events(sim)
    assert got[:3] == [
        (
            0.0,
            "provisioning-request",
            None,
            (),
            "Accepted=True Accepted: ProvisioningRequest is accepted by ClusterAutoscaler",
        ),
        (
            0.0,
            "provisioning-request",
            None,
            (),
            "Provisioned=True CapacityIsProvisioned: Capacity is found in the cluster",
        ),
        (0.0, "scale-up", "h100", ("h100-0", "h100-1", "h100-2"), ""),
    ]
    assert [e for e in got if e[1] == "scale-up"] == [got[2]]
    expired = [e for e in got if "BookingExpired" in e[4]]
    assert [e[0] for e in expired] == [610.0]
    state = sim.state
    assert {n.name: sorted(state.pods_on[i]) for i, n in enumerate(state.nodes)} == {
        "h100-0": ["default/llm-0"], "h100-1": ["default/llm-1"], "h100-2": ["default/llm-2"],
    }  # fmt: skip


def test_check_capacity_request_is_retried_with_a_doubling_backoff(tmp_path: Path) -> None:
    """Two nodes, a request for three: ``Provisioned`` false, no scale-up (check-capacity never grows a
    group, and the consuming Job's pod left pending triggers none: ``ProvisioningRequestPodsFilter``, its
    ``LogIgnoredInScaleUpEvent`` message); retried once its backoff (1 min, doubling to 10 min:
    ``--provisioning-request-initial-backoff-time``, ``--provisioning-request-max-backoff-time``) has
    passed since the last try, at the scan after."""
    pool = POOL.replace("replicas: 0", "replicas: 2")
    text = pool + POD_TEMPLATE + provreq_yaml(CHECK_CAPACITY, 3) + consuming_job(3)
    sim = run_simulation(write(tmp_path, text + SIMULATION.format(duration="20m")))
    got = sim_events(sim)
    assert not [e for e in got if e[1] == "scale-up"]  # (nor for the Job's third pod, which consumes it)
    ignored = [(e.pods, e.reason) for e in sim.autoscaler.events if e.kind == "no-scale-up"]
    message = (
        "Unschedulable pod didn't trigger scale-up, because it's consuming ProvisioningRequest default/llm"
    )
    assert ignored == [(("default/llm-2",), message)]
    tries = [e[0] for e in got if e[4].startswith("Provisioned=False CapacityIsNotFound")]
    assert tries == [0.0, 70.0, 200.0, 450.0, 940.0]


def test_booked_capacity_keeps_its_nodes_from_scale_down_until_it_expires() -> None:
    """``examples/provisioning-request/best-effort-atomic.yaml``: the check-capacity request, handled at the
    loop after the best-effort-atomic one (one request a loop, one loop an interval), finds its two nodes once
    the job is done (4000 s); the third empty node goes after 10 minutes unneeded, the two booked ones only
    once unneeded for 10 minutes after the booking expired (4610 s)."""
    sim = run_simulation(
        [Path(__file__).parents[2] / "examples/provisioning-request/best-effort-atomic.yaml"]
    )
    got = [(t, kind, nodes, reason.split(":")[0]) for t, kind, _, nodes, reason in sim_events(sim)]
    down = [(e.t_s, e.nodes) for e in sim.autoscaler.events if e.kind == "scale-down"]
    assert (4000.0, "provisioning-request", (), "Provisioned=True CapacityIsFound") in got
    assert (4610.0, "provisioning-request", (), "BookingExpired=True CapacityReservationTimeExpired") in got
    assert down == [(4210.0, ("h100-2",)), (5220.0, ("h100-0",)), (5220.0, ("h100-1",))]
