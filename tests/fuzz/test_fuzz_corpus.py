"""Every input the fuzzers found (``tests/fuzz/corpus/SURFACE/``) loads or is refused in one line naming
the file, on every run; and each surface takes hostile input (hypothesis, bounded examples) the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fuzz_surfaces import CORPUS, SURFACES, check_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CASES = sorted(CORPUS.glob("*/*"))
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_the_corpus_covers_every_surface() -> None:
    assert {case.parent.name for case in CASES} == set(SURFACES)


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.parent.name}/{case.name}")
def test_corpus_input_loads_or_is_refused_in_one_line(case: Path, tmp_path: Path) -> None:
    check_bytes(SURFACES[case.parent.name], case.read_bytes(), tmp_path)


#: Values an attacker writes where a number, a string or an object belongs.
HOSTILE = st.one_of(
    st.sampled_from(
        [
            1e309,
            -1e309,
            "1e309",
            ".nan",
            "-.inf",
            "NaN",
            -1,
            2**63,
            2**64,
            "1e99999",
            "9" * 400,
            "9223372036854775808",
            "-0",
            "0x1F",
            "1_000",
            "",
            " ",
            "\u2028",
            "a\nb",
            "\x00",
            "Ei",
            "1Ei",
        ]
    ),
    st.integers(),
    st.floats(),
    st.text(max_size=12),
)
VALUES = st.recursive(
    HOSTILE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
KINDS = [
    ("v1", "Pod"),
    ("v1", "Node"),
    ("batch/v1", "Job"),
    ("apps/v1", "Deployment"),
    ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"),
    ("gpufleet.io/v1alpha1", "Simulation"),
    ("gpufleet.io/v1alpha1", "NodePool"),
    ("gpufleet.io/v1alpha1", "QueueFeed"),
    ("keda.sh/v1alpha1", "ScaledObject"),
]
FIELDS = [
    "metadata",
    "spec",
    "status",
    "name",
    "annotations",
    "capacity",
    "requests",
    "cpu",
    "memory",
    "nvidia.com/gpu",
    "replicas",
    "duration",
    "seed",
    "profiles",
    "pluginConfig",
    "args",
    "warm",
    "gpufleet.io/duration",
    "gpufleet.io/warmup",
    "gpufleet.io/ray-demand",
    "gpufleet.io/ungate-at",
]


@st.composite
def manifests(draw: st.DrawFn) -> bytes:
    api_version, kind = draw(st.sampled_from(KINDS))
    body = draw(st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=4))
    return json.dumps({"apiVersion": api_version, "kind": kind, **body}).encode()


@FAST
@given(st.one_of(manifests(), st.binary(max_size=200)))
def test_hostile_manifests_load_or_are_refused(tmp_path: Path, data: bytes) -> None:
    check_bytes(SURFACES["scenario"], data, tmp_path)
    check_bytes(SURFACES["explain"], data, tmp_path)


@FAST
@given(st.lists(st.lists(HOSTILE.map(str), min_size=5, max_size=11), max_size=3), st.booleans())
def test_hostile_trace_rows_load_or_are_refused(tmp_path: Path, rows: list[list[str]], nodes: bool) -> None:
    header = "sn,cpu_milli,memory_mib,gpu,model" if nodes else "name,cpu_milli,memory_mib,num_gpu,gpu_milli"
    text = "\n".join([header, *(",".join(json.dumps(c) for c in row) for row in rows)])
    check_bytes(SURFACES["trace-nodes" if nodes else "trace-pods"], text.encode(), tmp_path)


@FAST
@given(
    st.dictionaries(st.sampled_from(["scenario", "parameters", "seeds", "nodes", "pods", "policies"]), VALUES)
)
def test_hostile_grids_load_or_are_refused(tmp_path: Path, grid: dict[str, object]) -> None:
    check_bytes(SURFACES["grid"], json.dumps(grid).encode(), tmp_path)


@FAST
@given(st.integers(0, 255), HOSTILE.map(str))
def test_hostile_annotations_and_quantities_parse_or_are_refused(
    tmp_path: Path, which: int, text: str
) -> None:
    data = bytes([which]) + text.encode()
    check_bytes(SURFACES["annotation"], data, tmp_path)
    check_bytes(SURFACES["quantity"], data, tmp_path)


#: The series ``gpufleet history`` reads (``live.history_read``), as the fuzzed Prometheus files them.
SERIES = [
    "seen:kube_pod_created",
    "kube_pod_created",
    "kube_pod_start_time",
    "kube_pod_completion_time",
    "kube_pod_status_phase",
    "kube_pod_info",
    "kube_pod_labels",
    "kube_pod_tolerations",
    "kube_pod_container_resource_requests",
    "seen:kube_node_created",
    "kube_node_created",
    "kube_node_labels",
    "kube_node_status_capacity",
]
LABELS = st.dictionaries(
    st.sampled_from(
        ["uid", "namespace", "pod", "node", "phase", "resource", "container", "label_app", "key"]
    ),
    st.one_of(st.sampled_from(["u0", "ml", "gpu-0", "Running", "nvidia_com_gpu", "cpu"]), HOSTILE),
    max_size=5,
)


@st.composite
def prometheus_answers(draw: st.DrawFn) -> dict[str, object]:
    """An answer per series: well formed around hostile values, or hostile in its shape."""
    sample = st.fixed_dictionaries(
        {
            "metric": st.one_of(LABELS.map(lambda d: {"uid": "u0", "node": "gpu-0", **d}), VALUES),
            "value": st.lists(HOSTILE, max_size=3),
            "values": st.lists(st.lists(HOSTILE, max_size=3), max_size=2),
        }
    )
    answers = {}
    for series in draw(st.lists(st.sampled_from(SERIES), max_size=6, unique=True)):
        kind = "matrix" if series.startswith("seen:") else draw(st.sampled_from(["vector", "matrix", "x"]))
        answer = {
            "status": "success",
            "data": {"resultType": kind, "result": draw(st.lists(sample, max_size=3))},
        }
        answers[series] = draw(st.one_of(st.just(answer), VALUES))
    return answers


@FAST
@given(st.one_of(prometheus_answers(), VALUES))
def test_hostile_prometheus_answers_are_read_or_refused(tmp_path: Path, answers: object) -> None:
    check_bytes(SURFACES["history"], json.dumps(answers).encode(), tmp_path)


OBJECT_FIELDS = [
    "metadata",
    "spec",
    "status",
    "name",
    "namespace",
    "creationTimestamp",
    "conditions",
    "containerStatuses",
    "nodeName",
    "involvedObject",
    "regarding",
    "reason",
    "message",
    "lastTimestamp",
    "eventTime",
    "firstTimestamp",
    "capacity",
    "allocatable",
    "labels",
]


@st.composite
def dumps(draw: st.DrawFn) -> bytes:
    """A ``kubectl get pods,nodes,events -o json`` list of objects with hostile fields."""
    kinds = st.sampled_from([("v1", "Pod"), ("v1", "Node"), ("v1", "Event"), ("events.k8s.io/v1", "Event")])
    items = []
    for api_version, kind in draw(st.lists(kinds, min_size=1, max_size=4)):
        body = draw(st.dictionaries(st.sampled_from(OBJECT_FIELDS), VALUES, max_size=4))
        items.append({"apiVersion": api_version, "kind": kind, "metadata": {"name": "p"}, **body})
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()


@FAST
@given(st.one_of(dumps(), st.binary(max_size=200)))
def test_hostile_startup_dumps_are_measured_or_refused(tmp_path: Path, data: bytes) -> None:
    check_bytes(SURFACES["startup"], data, tmp_path)


CHANGE_FIELDS = ["delete", "addNodes", "pods", "gangs", "set", "like", "count", "selector", "names"]


@FAST
@given(
    st.dictionaries(st.sampled_from(CHANGE_FIELDS), VALUES, max_size=3),
    st.sampled_from(
        [("gpufleet.io/v1alpha1", "Change"), ("v1", "Pod"), ("gpufleet.io/v1alpha1", "Simulation")]
    ),
)
def test_hostile_whatif_changes_apply_or_are_refused(
    tmp_path: Path, spec: dict[str, object], kind: tuple[str, str]
) -> None:
    change = {
        "apiVersion": kind[0],
        "kind": kind[1],
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": spec,
    }
    check_bytes(SURFACES["whatif"], json.dumps(change).encode(), tmp_path)


PRIORITY_CLASSES = st.lists(
    st.dictionaries(st.sampled_from(["metadata", "value", "globalDefault", "preemptionPolicy"]), VALUES)
).map(
    lambda items: {
        "kind": "List",
        "items": [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", **i} for i in items],
    }
)


@FAST
@given(st.one_of(VALUES, PRIORITY_CLASSES))
def test_hostile_priority_class_files_are_read_or_refused(tmp_path: Path, document: object) -> None:
    check_bytes(SURFACES["priority-classes"], json.dumps(document).encode(), tmp_path)
