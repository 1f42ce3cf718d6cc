"""Dynamic Resource Allocation end to end (examples/dra): CEL selectors over ResourceSlice devices,
claims stamped from templates, and kube-scheduler's DynamicResources reasons (no preemption)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.report.run_summary import finished_summary
from gpufleet.report.schema import validate_summary
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dra" / "claim-h100.yaml"


def test_claim_lands_on_the_node_whose_device_matches_and_an_impossible_one_waits() -> None:
    sim = Simulation(load_scenario([EXAMPLE]))
    sim.run()
    pods = {p["name"]: p for p in build_summary(sim)["pods"]}
    assert pods["default/trainer"]["node"] == "h100-0" and pods["default/trainer"]["working"]
    assert sim.state.dra is not None and set(sim.state.dra.allocated) == {"default/trainer-gpu"}
    assert pods["default/too-big"]["message"] == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_a_finished_pod_frees_its_claims_devices() -> None:
    scenario = load_scenario([EXAMPLE])
    scenario.simulation = replace(scenario.simulation, duration_s=2 * 3600.0)  # past the trainer's hour
    sim = Simulation(scenario)
    sim.run()
    assert sim.state.dra is not None and sim.state.dra.allocated == {}


def test_pool_declared_by_gpu_model_publishes_slices_that_claims_allocate() -> None:
    """Each 8-GPU node's ResourceSlice holds two 4-GPU claims; the pool advertises no device-plugin GPUs."""
    scenario = load_scenario([EXAMPLE.parent / "pool-publishes-slices.yaml"])
    assert "nvidia.com/gpu" not in scenario.node_pools[0].template.allocatable
    sim = Simulation(scenario)
    sim.run()
    pods = build_summary(sim)["pods"]
    assert all(p["working"] for p in pods)
    assert sorted(p["node"] for p in pods) == ["h100-0", "h100-0", "h100-1", "h100-1"]
    assert sim.state.dra is not None and len(sim.state.dra.objects.slices) == 2


SCALE_UP = EXAMPLE.parent / "pool-scales-up-for-claims.yaml"
SAFE = "cluster-autoscaler.kubernetes.io/safe-to-evict"


def document(path: Path, kind: str) -> str:
    """The document of one kind in an example file, to build other scenarios around it."""
    docs = path.read_text().split("\n---\n")
    return next(f"---\n{d.strip()}\n" for d in docs if f"\nkind: {kind}\n" in f"\n{d}\n")


GPU_CLASS = document(EXAMPLE.parent / "pool-publishes-slices.yaml", "DeviceClass")
TWO_NODE_POOL = """---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 2
  max: 2
  gpu: {model: H100-80GB, count: 8, publishResourceSlices: true}
  template:
    status:
      capacity: {cpu: "96", memory: 1Ti, pods: "110"}
"""


def simulation(duration: str) -> str:
    return f"""---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: dra}}
spec: {{duration: {duration}}}
"""


def claim_template(name: str, count: int) -> str:
    return f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: {name}}}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {{deviceClassName: gpu.nvidia.com, count: {count}}}
"""


def claim_pod(
    name: str, at: str, source: str, duration: str = "1h", safe: bool = False, prefer: str | None = None
) -> str:
    """A bare pod with one claim, run to completion (``restartPolicy: Never``: it ends after ``duration``);
    ``source`` is ``resourceClaimTemplateName: x`` or ``resourceClaimName: x``; ``prefer``: a node it
    prefers (preferred node affinity, which a drain simulation ignores)."""
    evict = f', {SAFE}: "true"' if safe else ""
    term = f"{{matchExpressions: [{{key: kubernetes.io/hostname, operator: In, values: [{prefer}]}}]}}"
    selector = (
        "\n  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
        f"[{{weight: 100, preference: {term}}}]}}}}"
        if prefer
        else ""
    )
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{gpufleet.io/submit-at: {at}, gpufleet.io/duration: {duration}{evict}}}
spec:{selector}
  restartPolicy: Never
  resourceClaims:
  - {{name: gpus, {source}}}
  containers:
  - name: app
    image: app:v1
    resources:
      requests: {{cpu: "1", memory: 1Gi}}
      claims: [{{name: gpus}}]
"""


def events(summary: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in summary["autoscaler_events"] if e["kind"] == kind]


def run(path: Path) -> dict[str, Any]:
    sim = Simulation(load_scenario([path]))
    sim.run()
    return build_summary(sim)


def test_claims_scale_a_dra_pool_from_zero_by_the_devices_they_need() -> None:
    """Four pods claiming four H100s each, a pool of 8-GPU nodes at zero: one scale-up of two nodes.
    cluster-autoscaler >= 1.32 simulates the template node with the ResourceSlices its DRA driver will
    publish (``SanitizedNodeResourceSlices`` per template copy) and runs the DynamicResources filter
    there; while the nodes start, the pods count against the upcoming nodes (no second scale-up)."""
    summary = run(SCALE_UP)
    assert [e["nodes"] for e in events(summary, "scale-up")] == [["h100-0", "h100-1"]]
    pods = {p["name"]: p for p in summary["pods"]}
    trains = [pods[f"default/train-{i}"] for i in range(4)]
    assert sorted(p["node"] for p in trains) == ["h100-0", "h100-0", "h100-1", "h100-1"]
    assert all(p["reason"] == "Completed" and p["gpus"] == 4.0 for p in trains)
    assert pods["default/train-0"]["devices"] == [f"gpu.nvidia.com/h100-0/gpu-{i}" for i in range(4)]
    totals = summary["totals"]
    assert (totals["gpus_total"], totals["gpu_hours_allocated"], totals["gpu_hours_working"]) == (
        16.0,
        16.0,
        16.0,
    )


def test_a_claim_no_template_device_matches_triggers_no_scale_up_and_says_why() -> None:
    """A pod asking for an H200 from a pool of H100 nodes: no node is launched for it, and it gets
    cluster-autoscaler's ``NotTriggerScaleUp`` event, ``pod didn't trigger scale-up: `` and each
    reason with how many node groups gave it (``ReasonsMessage``): here the DynamicResources filter's
    ``cannot allocate all claims`` on the pool's template. Not at the scan that scales up for the other
    pods (10 s): it emits no such event (``EventingScaleUpStatusProcessor``); at the next loop, 20 s."""
    summary = run(SCALE_UP)
    assert all("default/wants-h200" not in e["pods"] for e in events(summary, "scale-up"))
    assert events(summary, "no-scale-up") == [
        {
            "t_s": 20.0,
            "kind": "no-scale-up",
            "pool": None,
            "nodes": [],
            "pods": ["default/wants-h200"],
            "reason": "pod didn't trigger scale-up: 1 cannot allocate all claims",
        }
    ]
    assert {p["name"]: p["phase"] for p in summary["pods"]}["default/wants-h200"] == "Pending"
    validate_summary(summary)  # the summary schema knows the event kind


def test_claims_beyond_existing_slices_add_only_the_missing_node() -> None:
    """One 8-GPU node running, four 4-GPU claims: two fit its slice, the other two need one more node
    (``filterOutSchedulable`` runs DynamicResources on the real nodes: CPU room alone is no fit)."""
    scenario = load_scenario([EXAMPLE.parent / "pool-publishes-slices.yaml"])
    scenario.node_pools[0] = replace(scenario.node_pools[0], replicas=1, max=3)
    sim = Simulation(scenario)
    sim.run()
    summary = build_summary(sim)
    assert [e["nodes"] for e in events(summary, "scale-up")] == [["h100-1"]]
    assert sorted(p["node"] for p in summary["pods"]) == ["h100-0", "h100-0", "h100-1", "h100-1"]


def test_gpus_published_as_slices_count_as_gpus_in_the_summary() -> None:
    """Two 8-GPU nodes that publish their GPUs only as ResourceSlices, four pods holding four each for
    the 30 minutes: 16 GPUs in total, allocated and working; 8 GPU-hours provisioned, allocated and
    working; 8 GPUs per node."""
    summary = run(EXAMPLE.parent / "pool-publishes-slices.yaml")
    totals = summary["totals"]
    assert (totals["gpus_total"], totals["gpus_allocated"], totals["gpus_working"]) == (16.0, 16.0, 16.0)
    assert totals["gpu_hours_provisioned"] == totals["gpu_hours_allocated"] == 8.0
    assert totals["gpu_hours_working"] == 8.0
    assert [(n["gpus"], n["gpus_allocated"]) for n in summary["nodes"]] == [(8.0, 8.0), (8.0, 8.0)]
    assert {p["gpus"] for p in summary["pods"]} == {4.0}
    assert summary["timeline"]["gpus_total"][-1] == 16.0


def test_hand_written_slices_count_their_gpus() -> None:
    """examples/dra/claim-h100.yaml: two nodes with one GPU each in a ResourceSlice; the trainer holds one."""
    totals = run(EXAMPLE)["totals"]
    assert (totals["gpus_total"], totals["gpus_allocated"], totals["gpus_working"]) == (2.0, 1.0, 1.0)


def drain(tmp_path: Path, big: int) -> dict[str, Any]:
    pods = claim_pod("big", "0s", "resourceClaimTemplateName: big", safe=True)
    pods += claim_pod("small", "1s", "resourceClaimTemplateName: small", safe=True, prefer="h100-1")
    templates = claim_template("big", big) + claim_template("small", 2)
    (tmp_path / "s.yaml").write_text(TWO_NODE_POOL + GPU_CLASS + templates + pods + simulation("30m"))
    return run(tmp_path / "s.yaml")


def test_drain_simulation_moves_a_claim_only_where_slices_can_satisfy_it(tmp_path: Path) -> None:
    """Two 8-GPU nodes: ``big`` holds 6 (then 7) GPUs of h100-0, ``small`` 2 of h100-1 (it prefers
    that node), whose busiest
    device pool is 2/8 used, under the 0.5 threshold (``HighestDynamicResourceUtilization``).
    cluster-autoscaler's drain simulation releases the node's claims (``UnreservePodClaims``) and
    allocates them again elsewhere: with 2 GPUs free on h100-0 the node goes after 10 minutes
    unneeded; with 1 free it stays, though CPU and memory would fit."""
    fits = drain(tmp_path, big=6)
    assert {p["name"]: p["node"] for p in fits["pods"]} == {
        "default/big": "h100-0",
        "default/small": "h100-1",
    }
    assert [e["nodes"] for e in events(fits, "scale-down")] == [["h100-1"]]
    stays = drain(tmp_path, big=7)
    assert events(stays, "scale-down") == []
    assert all(not p["disruptions"] for p in stays["pods"])


SHARED = """---
apiVersion: v1
kind: Node
metadata: {name: n}
status:
  capacity: {cpu: "1000", memory: 4Ti, pods: "1000"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n-gpu.nvidia.com}
spec:
  driver: gpu.nvidia.com
  nodeName: n
  pool: {name: n, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
"""


def test_the_257th_pod_sharing_one_claim_waits_for_a_consumer_to_leave(tmp_path: Path) -> None:
    """A ResourceClaim's ``status.reservedFor`` holds at most 256 consumers
    (``ResourceClaimReservedForMaxSize``). kube-scheduler does not check that before binding: its
    PreBind appends the pod and the API server refuses the update (``field.TooMany``), so the 257th
    pod fails with ``running PreBind plugin "DynamicResources": add reservation to claim ...`` and
    stays Pending. No plugin is named for that failure, so it is tried again after each backoff (10 s at
    most, then the 1-second window its expiry falls in: 11 s apart), not when a cluster event comes; the
    first consumer finishes at 600 s and the retry at 605 s schedules it."""
    pods = "".join(
        claim_pod(f"p{i:03d}", f"{i}s", "resourceClaimName: shared", "10m" if i == 0 else "1h")
        for i in range(257)
    )
    (tmp_path / "s.yaml").write_text(SHARED + GPU_CLASS + pods + simulation("5m"))
    early = {p["name"]: p for p in run(tmp_path / "s.yaml")["pods"]}
    assert sum(1 for p in early.values() if p["node"] == "n") == 256
    assert early["default/p256"]["phase"] == "Pending"
    assert early["default/p256"]["message"] == (
        'running PreBind plugin "DynamicResources": add reservation to claim default/shared: '
        'ResourceClaim.resource.k8s.io "shared" is invalid: status.reservedFor: Too many: 257: '
        "must have at most 256 items"
    )
    (tmp_path / "s.yaml").write_text(SHARED + GPU_CLASS + pods + simulation("15m"))
    later = {p["name"]: p for p in run(tmp_path / "s.yaml")["pods"]}
    assert later["default/p256"]["bound_s"] == 605.0
    assert later["default/p256"]["devices"] == ["gpu.nvidia.com/n/gpu-0"]


def test_least_waste_gpu_weighs_gpus_published_as_slices(tmp_path: Path) -> None:
    """One pod claiming four H100s, two DRA pools (8 and 4 GPUs per node): ``least-waste-gpu``
    counts the template's DRA GPUs like device-plugin GPUs (half of the 8-GPU node would be
    wasted, none of the 4-GPU one) and grows the 4-GPU pool."""
    pools = "".join(
        TWO_NODE_POOL.replace("name: h100}", f"name: h100x{n}}}")
        .replace("replicas: 2\n  max: 2", "max: 2")
        .replace("count: 8", f"count: {n}")
        for n in (8, 4)
    )
    settings = simulation("30m").replace(
        "spec: {duration: 30m}", "spec: {duration: 30m, autoscaler: {expander: least-waste-gpu}}"
    )
    pod = claim_pod("train", "0s", "resourceClaimTemplateName: four")
    (tmp_path / "s.yaml").write_text(pools + GPU_CLASS + claim_template("four", 4) + pod + settings)
    summary = run(tmp_path / "s.yaml")
    assert [(e["pool"], e["nodes"]) for e in events(summary, "scale-up")] == [("h100x4", ["h100x4-0"])]


def test_a_gpu_shared_by_two_pods_through_one_claim_counts_once_while_they_work(tmp_path: Path) -> None:
    """Two pods reference one ResourceClaim holding one GPU: 1 GPU allocated and 1 working, not 2."""
    pods = claim_pod("a", "0s", "resourceClaimName: shared") + claim_pod(
        "b", "0s", "resourceClaimName: shared"
    )
    (tmp_path / "s.yaml").write_text(SHARED + GPU_CLASS + pods + simulation("30m"))
    totals = run(tmp_path / "s.yaml")["totals"]
    assert (totals["pods_running"], totals["gpus_allocated"], totals["gpus_working"]) == (2, 1.0, 1.0)
    assert totals["gpu_hours_working"] == 0.5


def gpus(model: str, names: list[str]) -> str:
    return "".join(
        f"  - name: {name}\n    attributes: {{productName: {{string: {model}}}}}\n" for name in names
    )


def product_class(name: str, model: str) -> str:
    return f"""---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {name}}}
spec:
  selectors:
  - cel: {{expression: 'device.attributes["gpu.nvidia.com"].productName == "{model}"'}}
"""


EIGHT_H100_OR_TWO_L4 = (
    SHARED.split("  - name: gpu-0\n")[0]
    + gpus("NVIDIA-H100", [f"gpu-{i}" for i in range(8)])
    + gpus("NVIDIA-L4", ["l4-0", "l4-1"])
    + product_class("h100.nvidia.com", "NVIDIA-H100")
    + product_class("l4.nvidia.com", "NVIDIA-L4")
    + """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: eight-or-two}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        firstAvailable:
        - {name: eight-h100, deviceClassName: h100.nvidia.com, count: 8}
        - {name: two-l4, deviceClassName: l4.nvidia.com, count: 2}
"""
)


def test_a_prioritized_claim_falls_back_to_two_smaller_gpus_when_the_eight_are_taken(
    tmp_path: Path,
) -> None:
    """``firstAvailable``: each pod's claim prefers the node's eight H100s (subrequest ``eight-h100``)
    and else takes its two L4s (``two-l4``); the results name the subrequest, ``gpus/<subrequest>``.
    The first pod gets the H100s; the second, a second later, the L4s; a third finds neither and waits."""
    pods = "".join(
        claim_pod(name, at, "resourceClaimTemplateName: eight-or-two")
        for name, at in (("first", "0s"), ("second", "1s"), ("third", "2s"))
    )
    (tmp_path / "s.yaml").write_text(EIGHT_H100_OR_TWO_L4 + pods + simulation("30m"))
    sim = Simulation(load_scenario([tmp_path / "s.yaml"]))
    sim.run()
    assert sim.state.dra is not None
    results = {
        key: [(r.request, r.device) for r in allocation.results]
        for key, allocation in sim.state.dra.allocated.items()
    }
    assert results == {
        "default/first-gpus": [("gpus/eight-h100", f"gpu-{i}") for i in range(8)],
        "default/second-gpus": [("gpus/two-l4", "l4-0"), ("gpus/two-l4", "l4-1")],
    }
    pods_out = {p["name"]: p for p in build_summary(sim)["pods"]}
    assert pods_out["default/second"]["devices"] == ["gpu.nvidia.com/n/l4-0", "gpu.nvidia.com/n/l4-1"]
    assert pods_out["default/third"]["phase"] == "Pending"
    assert "cannot allocate all claims" in pods_out["default/third"]["message"]


def test_each_pods_claims_and_the_subrequest_it_got_are_in_the_summary_and_describe(tmp_path: Path) -> None:
    """``pods[].claims``: each claim the pod was bound with, its devices and the request each was allocated
    for (``gpus/two-l4`` where the prioritized list fell back); ``describe pod`` prints them."""
    pods = "".join(
        claim_pod(name, at, "resourceClaimTemplateName: eight-or-two")
        for name, at in (("first", "0s"), ("second", "1s"))
    )
    (tmp_path / "s.yaml").write_text(EIGHT_H100_OR_TWO_L4 + pods + simulation("30m"))
    sim = Simulation(load_scenario([tmp_path / "s.yaml"]))
    sim.run()
    record = {p["name"]: p for p in build_summary(sim)["pods"]}["default/second"]
    assert record["claims"] == [
        {
            "name": "default/second-gpus",
            "results": [
                {"request": "gpus/two-l4", "device": f"gpu.nvidia.com/n/l4-{i}", "admin_access": False}
                for i in (0, 1)
            ],
        }
    ]
    saved = tmp_path / "summary.json"
    saved.write_text(json.dumps(finished_summary(build_summary(sim))))
    out = CliRunner().invoke(app, ["describe", "pod", "default/second", "--summary", str(saved)])
    assert out.exit_code == 0, out.output
    held = "gpus/two-l4: gpu.nvidia.com/n/l4-0, gpus/two-l4: gpu.nvidia.com/n/l4-1"
    assert f"    ResourceClaim default/second-gpus: {held}" in out.output.splitlines()


def test_a_pending_pods_diagnosis_gives_the_allocators_reason_behind_cannot_allocate_all_claims() -> None:
    """kube-scheduler's message says only ``cannot allocate all claims``; the diagnosis hints give gpufleet's
    allocator's reason with the nodes it holds on (``examples/dra/claim-h100.yaml``: ``too-big`` asks for a
    device no node has)."""
    example = Path(__file__).parents[2] / "examples" / "dra" / "claim-h100.yaml"
    sim = Simulation(load_scenario([example]))
    sim.run()
    record = {p["name"]: p for p in build_summary(sim)["pods"]}["default/too-big"]
    assert "cannot allocate all claims" in record["message"]
    assert record["diagnosis"]["hints"] == [
        "claim default/too-big-gpu, request gpu: needs 1 matching device(s), the node has 0 matching, "
        "0 of them free (on h100-0, t4-0)"
    ]
