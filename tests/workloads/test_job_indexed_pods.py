"""An Indexed Job's pods (``pkg/controller/job``: ``addCompletionIndexLabel`` under PodIndexLabel, GA, and
``addCompletionIndexAnnotation``): each carries its completion index as label and annotation
``batch.kubernetes.io/job-completion-index`` (what a selector, a snapshot's adoption and Kueue's TAS read);
a NonIndexed Job's pods carry neither."""

from __future__ import annotations

from gpufleet.model.owned import JOB_COMPLETION_INDEX
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import Job
from gpufleet.workloads.job import JobController

TEMPLATE = Pod("t", namespace="default", labels={"app": "train"}, annotations={"gpufleet.io/duration": "1h"})


def test_an_indexed_jobs_pods_carry_their_completion_index_as_label_and_annotation() -> None:
    controller = JobController(Job("train", "default", TEMPLATE, 2, 4, indexed=True))
    first = controller.wanted()
    assert [(p.name, p.labels, p.annotations[JOB_COMPLETION_INDEX]) for p in first] == [
        ("train-0", {"app": "train", JOB_COMPLETION_INDEX: "0"}, "0"),
        ("train-1", {"app": "train", JOB_COMPLETION_INDEX: "1"}, "1"),
    ]
    controller.finished(first[1], succeeded=False)  # its retry keeps the index
    controller.tick(10.0)  # after the pod failure backoff
    (retry,) = controller.wanted()
    assert (retry.name, retry.labels[JOB_COMPLETION_INDEX], retry.annotations[JOB_COMPLETION_INDEX]) == (
        "train-1-r1",
        "1",
        "1",
    )
    assert JOB_COMPLETION_INDEX not in TEMPLATE.labels and JOB_COMPLETION_INDEX not in TEMPLATE.annotations


def test_a_non_indexed_jobs_pods_carry_no_completion_index() -> None:
    (pod,) = JobController(Job("train", "default", TEMPLATE)).wanted()
    assert JOB_COMPLETION_INDEX not in pod.labels and JOB_COMPLETION_INDEX not in pod.annotations
