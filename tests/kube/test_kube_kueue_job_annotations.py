"""Kueue's partial-admission annotations on a Job (``gpufleet.kube.kueue_job``), checked as Kueue's Job
webhook checks them (``kubernetes-sigs/kueue: pkg/controller/jobs/job/job_webhook.go``,
``validatePartialAdmissionCreate`` and ``validateSyncCompletionCreate``), in its words."""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import load, problems, warnings

JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
  labels: {{{labels}}}
  annotations: {{{annotations}}}
spec:
  parallelism: {parallelism}
  completions: {completions}
{more}  template:
    spec:
      restartPolicy: Never
      containers: [{{name: main, image: busybox}}]
"""
QUEUED = "kueue.x-k8s.io/queue-name: queue"
MIN = "kueue.x-k8s.io/job-min-parallelism"
FOLLOW = "kueue.x-k8s.io/job-completions-equal-parallelism"


def job(
    annotations: str, labels: str = QUEUED, parallelism: int = 8, completions: int = 8, more: str = ""
) -> str:
    return JOB.format(
        labels=labels, annotations=annotations, parallelism=parallelism, completions=completions, more=more
    )


def test_a_queued_jobs_minimum_and_completions_flag_are_read(tmp_path: Path) -> None:
    text = job(f'{MIN}: "4", {FOLLOW}: "true"', more="  completionMode: Indexed\n")
    read = load(tmp_path, text).jobs[0]
    assert (read.min_parallelism, read.completions_equal_parallelism) == (4, True)
    assert load(tmp_path, job("")).jobs[0].min_parallelism is None


@pytest.mark.parametrize(
    ("annotations", "parallelism", "completions", "more", "want"),
    [
        (
            f'{MIN}: "four"',
            8,
            8,
            "",
            f'{MIN}: Invalid value: "four": strconv.Atoi: parsing "four": invalid syntax',
        ),
        (f'{MIN}: "8"', 8, 8, "", f"{MIN}: Invalid value: 8: should be between 0 and 7"),
        (f'{MIN}: "0"', 8, 8, "", f"{MIN}: Invalid value: 0: should be between 0 and 7"),
        # the pod count is the lesser of parallelism and completions (``podsCount``)
        (f'{MIN}: "4"', 8, 4, "", f"{MIN}: Invalid value: 4: should be between 0 and 3"),
        (
            f'{FOLLOW}: "yes"',
            8,
            8,
            "",
            f'{FOLLOW}: Invalid value: "yes": strconv.ParseBool: parsing "yes": invalid syntax',
        ),
        (
            f'{FOLLOW}: "true"',
            8,
            8,
            "",
            f'{FOLLOW}: Invalid value: "true": should not be enabled for NonIndexed jobs',
        ),
        (
            f'{FOLLOW}: "True"',
            8,
            6,
            "  completionMode: Indexed\n",
            f"spec.completions: Invalid value: 6: should be equal to parallelism when {FOLLOW} annotation is "
            "true",
        ),
    ],
)
def test_bad_partial_admission_annotations_are_errors_in_kueues_words(
    tmp_path: Path, annotations: str, parallelism: int, completions: int, more: str, want: str
) -> None:
    found = problems(tmp_path, job(annotations, parallelism=parallelism, completions=completions, more=more))
    assert any(want in line for line in found), found


def test_the_annotations_on_a_job_kueue_does_not_manage_are_a_warning(tmp_path: Path) -> None:
    text = job(f'{MIN}: "4"', labels="team: a")
    assert load(tmp_path, text).jobs[0].min_parallelism is None
    found = warnings(tmp_path, text)
    assert any(MIN in w and "no effect" in w for w in found), found
