"""The workload-kind protocol (``gpufleet.workloads``): each kind's controller, found by the kind of
its workload object, says which pods it wants and how it reacts when one ends or a node joins."""

from __future__ import annotations

import pytest

from conftest import gpu_node, gpu_pod
from gpufleet.model.node import Taint
from gpufleet.model.workloads import DaemonSet, Deployment, Job
from gpufleet.workloads import controller_for
from gpufleet.workloads.daemonset import DaemonSetController
from gpufleet.workloads.deployment import DeploymentController
from gpufleet.workloads.job import JobController

TEMPLATE = gpu_pod("", 1)


def test_each_workload_object_gets_the_controller_of_its_kind() -> None:
    assert isinstance(controller_for(Job("train", "ml", TEMPLATE)), JobController)
    assert isinstance(controller_for(Deployment("serve", "ml", TEMPLATE)), DeploymentController)
    assert isinstance(controller_for(DaemonSet("dcgm", "gpu", TEMPLATE)), DaemonSetController)
    with pytest.raises(KeyError, match="no workload kind drives str"):
        controller_for("not a workload")  # type: ignore[arg-type]


def test_a_job_names_its_pods_by_index_and_retries_a_failed_one_under_its_index() -> None:
    job = controller_for(Job("train", "ml", TEMPLATE, parallelism=2, completions=2))
    first = job.wanted([])
    assert [p.key for p in first] == ["ml/train-0", "ml/train-1"] and first[0].owner is not None
    assert job.finished(first[0], succeeded=False) is True
    assert job.wanted([]) == []  # manageJob: the pod failure backoff (10 s) holds it back
    job.tick(10.0)
    assert [p.name for p in job.wanted([])] == ["train-0-r1"]
    assert job.node_added(gpu_node("n")) == []


def test_a_daemonset_wants_a_pod_on_each_admitting_node_and_one_on_a_node_that_joins() -> None:
    ds = controller_for(DaemonSet("dcgm", "gpu", TEMPLATE))
    tainted = gpu_node("b", taints=(Taint("dedicated", "x", "NoSchedule"),))
    assert [p.name for p in ds.wanted([gpu_node("a"), tainted])] == ["dcgm-a"]
    assert ds.wanted([gpu_node("a")]) == []  # already covered
    assert [p.name for p in ds.node_added(gpu_node("c"))] == ["dcgm-c"]
    (pod,) = ds.wanted([gpu_node("d")])
    assert ds.finished(pod, succeeded=False) is False  # not replaced, nothing to reconcile
