"""A run-to-completion workload (a Job, a training job, a bare pod with ``restartPolicy: Never``) none of
whose pods has a ``gpufleet.io/duration`` would compute until the run ends: ``validate`` and
``simulate`` warn once per workload, naming the file, the document and the annotation."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from conftest import NODE_N0, queued_job, write
from gpufleet.cli import app
from gpufleet.kube import load_scenario


def job(name: str, annotations: str = "") -> str:
    """A Job of one 1-GPU pod annotated ``annotations`` (its queue label is just a label: no Kueue)."""
    return queued_job(name, "0s", gpus=1, annotations=annotations)


def pytorch_job(name: str) -> str:
    replica = """      template:
        spec:
          containers:
          - name: pytorch
            image: trainer
            resources: {limits: {nvidia.com/gpu: "1"}}
"""
    return f"""apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: {name}}}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
{replica}    Worker:
      replicas: 1
{replica}"""


def deployment(name: str) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: main
        image: server
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


WHAT = "run to completion but would compute until the simulation ends and never complete"


def endless(paths: list[Path]) -> list[str]:
    return [w for w in load_scenario(paths).warnings if WHAT in w]


def test_validate_warns_of_a_job_without_a_duration_naming_file_document_and_annotation(
    tmp_path: Path,
) -> None:
    paths = write(tmp_path, NODE_N0, job("forever"))
    result = CliRunner().invoke(app, ["validate", *map(str, paths)])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())  # the console wraps long lines
    assert (
        f"{paths[1]}: document 1 (Job/default/forever): spec.template.metadata.annotations: "
        "no gpufleet.io/duration: its pods run to completion but would compute until the simulation "
        "ends and never complete"
    ) in output


def test_simulate_warns_of_it_too(tmp_path: Path) -> None:
    paths = write(tmp_path, NODE_N0, job("forever"))
    result = CliRunner().invoke(app, ["simulate", *map(str, paths), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert f"warning: {paths[1]}: document 1 (Job/default/forever): " in output and WHAT in output


def test_one_warning_per_workload_however_many_of_its_templates_lack_it(tmp_path: Path) -> None:
    (warning,) = endless(write(tmp_path, NODE_N0, pytorch_job("train")))
    assert (
        "(PyTorchJob/default/train): spec.pytorchReplicaSpecs.Master.template.metadata.annotations" in warning
    )


def test_a_training_job_whose_master_has_a_duration_ends_with_it(tmp_path: Path) -> None:
    """The master's end ends the job (its success policy), so the workers need no duration."""
    text = pytorch_job("train").replace(
        "    Master:\n      replicas: 1\n      template:\n",
        "    Master:\n      replicas: 1\n      template:\n        metadata:\n"
        "          annotations: {gpufleet.io/duration: 1h}\n",
    )
    assert "gpufleet.io/duration: 1h" in text
    assert endless(write(tmp_path, NODE_N0, text)) == []


def test_no_warning_with_a_duration_a_work_list_a_delete_at_or_for_a_server(tmp_path: Path) -> None:
    paths = write(
        tmp_path,
        NODE_N0,
        job("timed", "gpufleet.io/duration: 1h"),
        job("worker", "gpufleet.io/consumes: jobs"),
        job("deleted", "gpufleet.io/delete-at: 2h"),
        deployment("server"),  # restartPolicy Always: a server runs until it is removed
    )
    assert endless(paths) == []


def test_a_bare_pod_that_runs_to_completion_is_warned_of_but_a_jobs_own_pod_is_left_to_its_job(
    tmp_path: Path,
) -> None:
    bare = """apiVersion: v1
kind: Pod
metadata: {name: once}
spec:
  restartPolicy: OnFailure
  containers:
  - name: main
    image: x
"""
    (warning,) = endless(write(tmp_path, NODE_N0, bare))
    assert "(Pod/default/once): metadata.annotations: no gpufleet.io/duration" in warning


def suspended_job(name: str, labels: str = "{}") -> str:
    """A Job of one 1-GPU pod without a duration, with ``spec.suspend: true`` and ``labels``."""
    return f"""apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, labels: {labels}}}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: trainer
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def test_a_suspended_job_is_not_warned_of_as_endless_it_creates_no_pods(tmp_path: Path) -> None:
    """A Job with ``spec.suspend: true`` and no Kueue queue label never creates its pods (``manageJob``):
    none computes until the run ends, so no warning says it would (it is reported ``Suspended``). With a
    queue label Kueue may admit it (unsuspend it), so it is warned of."""
    assert endless(write(tmp_path, NODE_N0, suspended_job("held"))) == []
    labelled = suspended_job("queued", "{kueue.x-k8s.io/queue-name: queue}")
    assert len(endless(write(tmp_path, NODE_N0, labelled))) == 1
