"""Kueue's annotations on a ``batch/v1`` Job it manages: partial admission.

``kueue.x-k8s.io/job-min-parallelism`` (``pkg/controller/jobs/job/job_controller.go``, ``minPodsCount``) lets
Kueue admit the Job with fewer pods than its ``parallelism`` (the Job's pod set's ``minCount``), and Kueue
then sets ``parallelism`` to the count it admitted (``RunWithPodSetsInfo``);
``kueue.x-k8s.io/job-completions-equal-parallelism`` makes ``completions`` follow it. Checked as Kueue's
Job webhook checks them (``job_webhook.go``: ``validatePartialAdmissionCreate``,
``validateSyncCompletionCreate``, in its words): the minimum an integer between 1 and the Job's pod count
less one, the flag a Go boolean allowed only on an ``Indexed`` Job whose ``completions`` equals its
``parallelism``. On a Job Kueue does not manage (no ``kueue.x-k8s.io/queue-name`` label) nothing reads
them: a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpufleet.kube.objects import Meta
from gpufleet.kube.problems import Reporter, invalid

JOB_MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
JOB_COMPLETIONS_EQUAL_PARALLELISM = "kueue.x-k8s.io/job-completions-equal-parallelism"
_ATOI = re.compile(r"[+-]?[0-9]+")
#: Go's ``strconv.ParseBool``
_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
_BOOLS |= {"0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


@dataclass(frozen=True)
class PartialAdmission:
    min_parallelism: int | None = None
    completions_equal_parallelism: bool = False


def partial_admission(
    meta: Meta,
    report: Reporter,
    managed: bool,
    parallelism: int,
    completions: int | None,
    indexed: bool,
) -> PartialAdmission:
    """The Job's partial-admission annotations (``report`` at its document); ``managed``: Kueue manages it."""
    at_meta = report.at("metadata")
    given = [k for k in (JOB_MIN_PARALLELISM, JOB_COMPLETIONS_EQUAL_PARALLELISM) if k in meta.annotations]
    if not managed:
        for key in given:
            at_meta.warn(
                f"annotations.{key}",
                "no effect: Kueue reads it only on a Job labelled kueue.x-k8s.io/queue-name",
            )
        return PartialAdmission()
    minimum = None
    text = meta.annotations.get(JOB_MIN_PARALLELISM)
    if text is not None:
        path = f"annotations.{JOB_MIN_PARALLELISM}"
        pods = parallelism if completions is None else min(parallelism, completions)  # ``podsCount``
        if _ATOI.fullmatch(text) is None:
            at_meta.error(path, invalid(text, f'strconv.Atoi: parsing "{text}": invalid syntax'))
        elif not 0 < int(text) < pods:
            at_meta.error(path, invalid(int(text), f"should be between 0 and {pods - 1}"))
        else:
            minimum = int(text)
    follow = False
    text = meta.annotations.get(JOB_COMPLETIONS_EQUAL_PARALLELISM)
    if text is not None:
        path = f"annotations.{JOB_COMPLETIONS_EQUAL_PARALLELISM}"
        if text not in _BOOLS:
            at_meta.error(path, invalid(text, f'strconv.ParseBool: parsing "{text}": invalid syntax'))
        elif _BOOLS[text]:
            follow = True
            if not indexed:
                at_meta.error(path, invalid(text, "should not be enabled for NonIndexed jobs"))
            if parallelism != (1 if completions is None else completions):
                detail = (
                    f"should be equal to parallelism when {JOB_COMPLETIONS_EQUAL_PARALLELISM} annotation is "
                )
                detail += "true"
                report.error("spec.completions", invalid(completions, detail))
    return PartialAdmission(minimum, follow)
