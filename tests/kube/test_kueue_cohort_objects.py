"""Kueue's ``Cohort`` and ``WorkloadPriorityClass`` (``kueue.x-k8s.io/v1beta1|v1beta2``): read strictly,
then used by admission.

Rules from ``kubernetes-sigs/kueue``: ``apis/kueue/v1beta2/cohort_types.go`` (``parentName``,
``resourceGroups``, ``fairSharing``), ``pkg/webhooks/cohort_webhook.go`` (limits need a parent),
``pkg/cache/scheduler/resource_node.go`` (a tree's quota: a node's own nominal quota plus what its
children lend; ``available`` climbs to the root, capped by ``borrowingLimit``),
``apis/kueue/v1beta2/workloadpriorityclass_types.go`` (``value``, ``description``) and
``pkg/util/priority`` (a workload labelled ``kueue.x-k8s.io/priority-class`` takes the class's
value for Kueue's ordering and preemption).
"""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings

from conftest import (
    cluster_queue,
    gpu_resource_groups,
    local_queue,
    pods_by_name,
    queued_job,
    resource_flavor,
    simulated,
    simulated_text,
)
from gpufleet.kube import load_scenario
from gpufleet.model.kueue import ClusterQueue, Cohort, FlavorQuotas, ResourceGroup, ResourceQuota
from gpufleet.model.resources import GPU
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from shared_files import UPSTREAM, needs_upstream

H100 = ("h100", GPU)


def _groups(
    nominal: int, borrowing: int | None = None, lending: int | None = None
) -> tuple[ResourceGroup, ...]:
    quota = ResourceQuota(nominal, borrowing, lending)
    return (ResourceGroup((GPU,), (FlavorQuotas("h100", {GPU: quota}),)),)


def _cq(name: str, cohort: str | None, nominal: int, borrowing: int | None = None) -> ClusterQueue:
    return ClusterQueue(name, cohort, (), resource_groups=_groups(nominal, borrowing))


def test_a_cohorts_own_quota_is_lent_to_its_queues() -> None:
    """``updateCohortResourceNode``: the cohort's subtree quota is its own nominal quota plus its
    children's; a queue with no quota of its own may use the cohort's."""
    queues = {"a": _cq("a", "research", 0), "b": _cq("b", "research", 4)}
    cohorts = {"research": Cohort("research", None, _groups(8))}
    snapshot = QuotaSnapshot(queues, {}, cohorts)
    assert (snapshot.available("a", H100), snapshot.potential_available("a", H100)) == (12, 12)
    snapshot.add("b", {H100: 10})
    assert snapshot.available("a", H100) == 2


def test_a_parent_cohort_shares_quota_across_child_cohorts_within_borrowing_limits() -> None:
    """Hierarchy: queue ``a`` under cohort ``research`` under ``org``; ``org``'s own 4 GPUs and
    ``engineering``'s queue's 8 are reachable from ``a``; ``research``'s borrowingLimit caps what it
    takes from ``org`` beyond what it stores there."""
    queues = {"a": _cq("a", "research", 2), "e": _cq("e", "engineering", 8)}
    cohorts = {
        "org": Cohort("org", None, _groups(4)),
        "research": Cohort("research", "org", _groups(0, borrowing=3)),
        "engineering": Cohort("engineering", "org"),
    }
    snapshot = QuotaSnapshot(queues, {}, cohorts)
    assert snapshot.subtree_quota("cohort:org", H100) == 14
    assert snapshot.available("a", H100) == 5  # its own 2 stored in research, +3 borrowed
    assert snapshot.root("a") == snapshot.root("e") == "cohort:org"
    snapshot.add("e", {H100: 11})  # engineering uses 3 beyond its own: 1 left in org
    assert snapshot.available("a", H100) == 3


def test_lending_limit_keeps_a_cohorts_quota_from_its_parent() -> None:
    """``localQuota`` = subtreeQuota - lendingLimit: a cohort lends its parent only its lendingLimit."""
    queues = {"a": _cq("a", "research", 0), "e": _cq("e", "engineering", 0)}
    cohorts = {
        "org": Cohort("org"),
        "research": Cohort("research", "org", _groups(6, lending=2)),
        "engineering": Cohort("engineering", "org"),
    }
    snapshot = QuotaSnapshot(queues, {}, cohorts)
    assert (snapshot.available("a", H100), snapshot.available("e", H100)) == (6, 2)


COHORTS = (
    """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
spec:
  fairSharing: {weight: "2"}
"""
    + gpu_resource_groups("h100", 8)
    + """---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: research}
spec:
  parentName: org
"""
)


def test_cohorts_read_parent_quota_and_warn_fair_sharing(tmp_path: Path) -> None:
    scenario = load(tmp_path, COHORTS)
    org, research = scenario.kueue.cohorts["org"], scenario.kueue.cohorts["research"]
    assert (org.parent, research.parent) == (None, "org")
    assert org.quota("h100", GPU) == ResourceQuota(8)
    assert (org.fair_weight, research.fair_weight) == (2.0, 1.0)
    assert warnings(tmp_path, COHORTS) == [
        "scenario.yaml: document 1 (Cohort/org): spec.fairSharing.weight: has no effect: "
        "fair sharing is off (no Kueue Configuration with fairSharing)"
    ]


def test_cohort_errors_limits_without_parent_a_cycle_and_a_misspelt_field(tmp_path: Path) -> None:
    """``validateLimit``: borrowingLimit/lendingLimit need a parent; a parent cycle leaves the tree
    inactive upstream, gpufleet refuses it; fields are strict."""
    text = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: a}
spec:
  parentName: b
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: b}
spec:
  parentName: a
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: c}
spec:
  parent: a
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 2}
"""
    lines = problems(tmp_path, text)
    assert any("document 1 (Cohort/a): spec.parentName" in line and "cycle: a -> b" in line for line in lines)
    assert any("document 3 (Cohort/c): spec.parent:" in line for line in lines)
    assert any(
        "document 3 (Cohort/c): spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit" in line
        for line in lines
    )


RESEARCH = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: research}
spec:
""" + gpu_resource_groups("h100", 8)
URGENT_AND_NODE = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 1000
description: "jump the queue"
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-0
  labels: {kubernetes.io/hostname: gpu-0}
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
"""
QUEUES = "---".join(
    [
        resource_flavor("h100"),
        RESEARCH,
        cluster_queue(
            "team",
            "h100",
            0,
            spec="  cohortName: research\n  preemption: {withinClusterQueue: LowerPriority}\n",
        ),
        local_queue("queue", "default", "team"),
        URGENT_AND_NODE,
    ]
)


def job(name: str, at: str, labels: str = "", duration: str = "1h") -> str:
    return queued_job(name, at, labels=labels, annotations=f"gpufleet.io/duration: {duration}")


def test_a_queue_without_quota_is_admitted_on_its_cohorts_own_quota(tmp_path: Path) -> None:
    pods = pods_by_name(simulated_text(tmp_path, QUEUES + job("first", "0s") + job("second", "0s")))
    assert pods["first-0"]["bound_s"] == 0.0
    assert pods["second-0"]["bound_s"] == 3600.0  # the cohort's 8 GPUs are used until first ends


def test_a_workload_priority_class_orders_and_preempts_without_changing_pod_priority(tmp_path: Path) -> None:
    """The class's value is the workload's priority in Kueue (``withinClusterQueue: LowerPriority``
    evicts the lower one); the pod keeps its own scheduling priority (0)."""
    own_quota = QUEUES.replace("nominalQuota: 8}", "nominalQuota: X}").replace(
        "nominalQuota: 0}", "nominalQuota: 8}"
    )
    own_quota = own_quota.replace("nominalQuota: X}", "nominalQuota: 0}")  # preemption within nominal quota
    text = own_quota + job("low", "0s") + job("high", "60s", ", kueue.x-k8s.io/priority-class: urgent")
    summary = simulated_text(tmp_path, text)
    pods = pods_by_name(summary)
    assert (pods["low-0"]["phase"], pods["low-0"]["reason"]) == ("Failed", "Suspended")
    assert pods["high-0"]["bound_s"] == 90.0  # after low's 30 s grace period
    evictions = {w["name"]: w["evictions"] for w in summary["kueue"]["workloads"]}
    assert [e["reason"] for e in evictions["Job/default/low"]] == ["InClusterQueue"]
    high = next(j for j in load_scenario([tmp_path / "scenario.yaml"]).jobs if j.name == "high")
    assert high.template.priority == 0


def test_a_missing_workload_priority_class_is_an_error_at_the_label(tmp_path: Path) -> None:
    text = QUEUES + job("j", "0s", ", kueue.x-k8s.io/priority-class: nobody")
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 7 (Job/default/j): metadata.labels.kueue.x-k8s.io/priority-class: "
        'WorkloadPriorityClass "nobody" not found'
    ]


def test_workload_priority_class_needs_an_int32_value(tmp_path: Path) -> None:
    text = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: a}
description: no value
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: b}
value: 3000000000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: c}
value: 1
preemptionPolicy: Never
"""
    lines = problems(tmp_path, text)
    assert lines[0] == "scenario.yaml: document 1 (WorkloadPriorityClass/a): value: Required value"
    assert lines[1].startswith("scenario.yaml: document 2 (WorkloadPriorityClass/b): value: Invalid value")
    assert lines[2].startswith("scenario.yaml: document 3 (WorkloadPriorityClass/c): preemptionPolicy:")


@needs_upstream
def test_kueueviz_examples_load_their_cohort_tree_and_priority_classes() -> None:
    """``cmd/kueueviz/examples``: the cohorts (organization -> research, engineering) and the three
    WorkloadPriorityClasses are read as written; the scenario runs."""
    summary = simulated(
        [
            UPSTREAM / "_clusters/cpu-nodes.yaml",
            UPSTREAM / "_clusters/sim-1h.yaml",
            UPSTREAM / "kueue/kueueviz-examples",
        ]
    )
    assert set(summary["kueue"]["cluster_queues"]) >= {"agi-cluster-queue", "llm-cluster-queue"}
    scenario = load_scenario([UPSTREAM / "kueue/kueueviz-examples"])
    assert scenario.kueue.cohorts["research"].parent == "organization"
    assert {n: c.value for n, c in scenario.kueue.priority_classes.items()} == {
        "human-critical": 1000000,
        "business-impacting": 1000,
        "long-term-research": 1,
    }


def test_a_misspelt_kueue_kind_is_an_error_and_other_kueue_kinds_are_warnings(tmp_path: Path) -> None:
    """``kueue.x-k8s.io`` is a known group: a typo is refused; its kinds gpufleet does not model
    (MultiKueue...) are warnings."""
    lines = problems(tmp_path, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohrt\nmetadata: {name: a}\n")
    assert len(lines) == 1 and 'unknown kind "Cohrt" in kueue.x-k8s.io/v1beta2' in lines[0]
    text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueConfig\nmetadata: {name: m}\nspec: {}\n"
    assert warnings(tmp_path, text) == [
        "scenario.yaml: document 1 (MultiKueueConfig/m): "
        "kind kueue.x-k8s.io/v1beta2/MultiKueueConfig is not modelled; ignored"
    ]


def test_reclaiming_under_a_child_cohort_is_modelled_and_not_warned_about(tmp_path: Path) -> None:
    """Kueue's hierarchical preemption (``hierarchical_preemption.go``, ``mayReclaimInHierarchy``) is
    modelled: a child cohort with a reclaiming queue gets no warning."""
    queues = QUEUES.replace("metadata: {name: research}", "metadata: {name: other}")  # its own cohort
    queues = queues.replace(
        "preemption: {withinClusterQueue: LowerPriority}", "preemption: {reclaimWithinCohort: Any}"
    )
    text = COHORTS + "---" + queues  # the ClusterQueue "team" is in research, whose parent is org
    assert not [line for line in warnings(tmp_path, text) if "spec.parentName" in line]
