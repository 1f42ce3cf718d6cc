"""``gpufleet describe pod``: the kubelet's events of every container start, restarts included, as
k8s.io/kubernetes v1.34.10 records them and client-go's event correlator (``tools/record/events_cache.go``)
writes them.

``startContainer`` (``pkg/kubelet/kuberuntime/kuberuntime_container.go``) runs on every start of a container:
``EnsureImageExists`` (``pkg/kubelet/images/image_manager.go``: Pulling then "Successfully pulled image "X"
in D (W including waiting). Image size: N bytes." for a pull, "Container image "X" already present on
machine" for an image on the node under ``IfNotPresent``), then Normal Created "Created container: NAME"
and Normal Started "Started container NAME"; a crash-looping container's repeats are counted
(``(xN over ...)``). ``summary.json`` keeps each start (``pods[].container_starts``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import pods_by_name, simulated, write
from gpufleet.cli import app
from gpufleet.model.kubelet_events import pull_policy
from gpufleet.report import validate_summary

runner = CliRunner()

SIMULATION = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: restarts}}
spec: {{duration: {duration}, registry: {{bandwidth: 100MB/s}}}}
---
apiVersion: v1
kind: Node
metadata: {{name: n0}}
status: {{capacity: {{cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}}}}
"""


def crashing(image: str, size: str = "2GB", name: str = "p", policy: str = "") -> str:
    """A Pod ``default/NAME`` under ``restartPolicy: OnFailure`` whose 60 s of work exits 3, its image
    ``image`` (``gpufleet.io/image-size`` ``size``; none when empty), its container ``main``."""
    sized = f", gpufleet.io/image-size: {size}" if size else ""
    pull = f", imagePullPolicy: {policy}" if policy else ""
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpufleet.io/duration: 60s, gpufleet.io/exit-code: "3"{sized}}}}}
spec:
  restartPolicy: OnFailure
  containers: [{{name: main, image: "{image}"{pull}, resources: {{limits: {{nvidia.com/gpu: "1"}}}}}}]
"""


def described(name: str, paths: list[Path]) -> dict[str, Any]:
    result = runner.invoke(app, ["describe", "pod", name, *map(str, paths), "-o", "json"])
    assert result.exit_code == 0, result.output
    record: dict[str, Any] = json.loads(result.output)
    return record


def kubelet_rows(record: dict[str, Any]) -> list[tuple[str, float, float, int, str]]:
    """The kubelet's events: (reason, last time, first time, count, message) on the run's clock."""
    end = record["end_time_s"]
    return [
        (e["reason"], end - e["age_s"], end - e["first_age_s"], e["count"], e["message"])
        for e in record["events"]
        if e["from"] == "kubelet" and e["reason"] != "BackOff"
    ]


#: the crash loop of 60 s of work, the restarts at once, then after 10, 20, 40, 80, 160, 300, 300 s
#: (``doBackOff``): the image (2 GB at 100 MB/s) lands at 20 s
STARTS = [20.0, 80.0, 150.0, 230.0, 330.0, 470.0, 690.0, 1050.0, 1410.0]


def test_every_container_start_records_pulled_created_and_started_counted_as_client_go_writes_them(
    tmp_path: Path,
) -> None:
    """``startContainer`` at each of the 9 starts: the first after the pull (Pulling at 0 s, Pulled at
    20 s with the pull's times and the image's size), each restart's image check "already present on
    machine" (``IfNotPresent``: a tagged image, ``SetDefaults_Container``), Created and Started: x9 from
    20 s to 1410 s, the Pulled of a present image x8 from 80 s. The pod waits in CrashLoopBackOff at the
    end, its Started still listed (the base listed it only while a container ran)."""
    record = described(
        "p", write(tmp_path, SIMULATION.format(duration="1500s"), crashing("reg.example/t:v1"))
    )
    pulled = 'Successfully pulled image "reg.example/t:v1" in 20s (20s including waiting). Image size: '
    assert kubelet_rows(record) == [
        ("Pulling", 0.0, 0.0, 1, 'Pulling image "reg.example/t:v1"'),
        ("Pulled", 20.0, 20.0, 1, pulled + "2000000000 bytes."),
        ("Created", 1410.0, 20.0, 9, "Created container: main"),
        ("Started", 1410.0, 20.0, 9, "Started container main"),
        ("Pulled", 1410.0, 80.0, 8, 'Container image "reg.example/t:v1" already present on machine'),
    ]
    assert record["waiting"] == "CrashLoopBackOff"
    assert record["event_notes"] == []


def test_summary_json_keeps_each_container_start_and_the_pull_and_describe_reads_them_back(
    tmp_path: Path,
) -> None:
    """``pods[].container_starts`` (every start, restarts included), ``image``, ``image_pull_policy`` and
    ``image_pull`` (Pulling at 0 s, 20 s of transfer, on the node at 20 s, 2 GB) pass the summary schema;
    ``describe --summary`` gives the events of the run simulated on the spot."""
    paths = write(tmp_path, SIMULATION.format(duration="1500s"), crashing("reg.example/t:v1"))
    summary = simulated(paths)
    validate_summary(summary)
    p = pods_by_name(summary)["p"]
    assert (p["container_starts"], p["image"], p["image_pull_policy"]) == (
        STARTS,
        "reg.example/t:v1",
        "IfNotPresent",
    )
    assert p["image_pull"] == {"requested_s": 0.0, "pull_s": 20.0, "landed_s": 20.0, "size_bytes": 2 * 10**9}
    out = tmp_path / "out"
    assert runner.invoke(app, ["simulate", str(paths[0]), str(paths[1]), "--out", str(out)]).exit_code == 0
    result = runner.invoke(
        app, ["describe", "pod", "p", "--summary", str(out / "summary.json"), "-o", "json"]
    )
    assert result.exit_code == 0, result.output
    assert kubelet_rows(json.loads(result.output)) == kubelet_rows(described("p", paths))


def test_a_pull_queued_behind_another_says_its_own_time_and_the_time_it_waited(tmp_path: Path) -> None:
    """``pullImage``: "in D (W including waiting)", D the pull's own time, W since Pulling: the serial
    puller (``serializeImagePulls``) pulls a's 2 GB first (20 s), then b's 1 GB (10 s): b's Pulling at 0 s,
    its Pulled at 30 s "in 10s (30s including waiting)"."""
    paths = write(
        tmp_path,
        SIMULATION.format(duration="50s"),
        crashing("reg.example/a:v1", name="a"),
        crashing("reg.example/b:v1", size="1GB", name="b"),
    )
    pulled = next(row for row in kubelet_rows(described("b", paths)) if row[0] == "Pulled")
    assert pulled[1:] == (
        30.0,
        30.0,
        1,
        'Successfully pulled image "reg.example/b:v1" in 10s (30s including waiting). '
        "Image size: 1000000000 bytes.",
    )


@pytest.mark.parametrize(
    ("image", "given", "policy"),
    [
        ("busybox", "", "Always"),
        ("busybox:latest", "", "Always"),
        ("registry.example:5000/team/trainer", "", "Always"),
        ("llm:v2", "", "IfNotPresent"),
        ("registry.example:5000/team/trainer:v1", "", "IfNotPresent"),
        ("trainer@sha256:" + "a" * 64, "", "IfNotPresent"),
        ("busybox", "IfNotPresent", "IfNotPresent"),
        ("llm:v2", "Never", "Never"),
    ],
)
def test_the_image_pull_policy_is_given_or_defaulted_from_the_tag(
    image: str, given: str, policy: str
) -> None:
    """``SetDefaults_Container`` (``pkg/apis/core/v1/defaults.go``): no ``imagePullPolicy`` is ``Always``
    where ``parsers.ParseImageName`` reads the tag ``latest`` (no tag and no digest: ``latest``), else
    ``IfNotPresent``; one given is kept."""
    assert pull_policy(image, given) == policy


def test_an_image_pulled_at_every_start_under_always_is_said_not_simulated(tmp_path: Path) -> None:
    """An untagged image defaults to ``imagePullPolicy: Always`` (``SetDefaults_Container``): the kubelet
    pulls it at every start (``imagePullPrecheck`` then ``pullImage``), which gpufleet does not simulate for
    an image on the node: no Pulled event is invented, and describe says so; ``imagePullPolicy:
    IfNotPresent`` given for it records "already present on machine" at every start instead."""
    always = described("p", write(tmp_path, SIMULATION.format(duration="200s"), crashing("trainer", size="")))
    assert [row[0] for row in kubelet_rows(always)] == ["Created", "Started"]
    assert always["event_notes"] == [
        'imagePullPolicy Always: the kubelet pulls "trainer" at every container start (Pulling, Pulled); '
        "gpufleet simulates no pull of an image on the node: 3 start(s) without them"
    ]
    given = crashing("trainer", size="", policy="IfNotPresent")
    (tmp_path / "given").mkdir()
    present = described("p", write(tmp_path / "given", SIMULATION.format(duration="200s"), given))
    assert kubelet_rows(present)[0] == (
        "Pulled",
        130.0,
        0.0,
        3,
        'Container image "trainer" already present on machine',
    )
    assert present["event_notes"] == []


def test_an_unknown_image_pull_policy_is_refused_with_its_field(tmp_path: Path) -> None:
    """``imagePullPolicy`` is one of Always, IfNotPresent, Never (``validateImagePullPolicy``,
    ``pkg/apis/core/validation/validation.go``): another is an error naming the field, status 2."""
    paths = write(tmp_path, SIMULATION.format(duration="60s"), crashing("t:v1", policy="Sometimes"))
    result = runner.invoke(app, ["simulate", *map(str, paths)])
    assert result.exit_code == 2
    assert 'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes"' in result.output


def test_events_older_than_the_api_servers_event_ttl_are_kept_and_said_so(tmp_path: Path) -> None:
    """kube-apiserver's ``--event-ttl`` (1 h, ``pkg/controlplane/apiserver/options/options.go``; the lease
    set again at each write, ``pkg/registry/core/event/storage/storage.go`` ``TTLFunc``) is not modelled:
    after 2 h the Scheduled event (0 s), the first start's Pulling and Pulled (0 s, 20 s) and Started, last
    written at 1410 s (from then on, a token of the spam filter's 1 per 300 s, ``defaultSpamQPS``, goes to
    each start's Pulled or Created, recorded before it), are more than 1 h past their last write: kubectl
    would no longer list them; describe keeps them and says so."""
    paths = write(tmp_path, SIMULATION.format(duration="2h"), crashing("reg.example/t:v1"))
    record = described("p", paths)
    reasons = [e["reason"] for e in record["events"] if record["end_time_s"] - e["at_s"] > 3600]
    assert reasons == ["Scheduled", "Pulling", "Pulled", "Started"]
    note = (
        "the API server deletes an Event 1h after its last write (kube-apiserver --event-ttl, not modelled): "
        "kubectl would no longer list 4 of these"
    )
    assert record["event_notes"] == [note]
    result = runner.invoke(app, ["describe", "pod", "p", *map(str, paths)])
    assert result.output.split("Start-up")[0].splitlines()[-1] == f"  (gpufleet: {note})"
