"""Warnings on cluster dumps and snapshots: one repeated on many documents of a file (150,000 pods
all using one unmodelled field) is shown for the first few documents and then counted, never
dropped unsaid; the test control plane's own kwok annotations are warnings, not errors."""

from __future__ import annotations

import json
from pathlib import Path

from gpufleet.kube import load_scenario


def _event(i: int, reason: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"e{i}", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": f"p{i}", "namespace": "default"},
        "reason": reason,
        "message": "m",
    }


def test_a_warning_on_many_documents_is_shown_three_times_then_counted(tmp_path: Path) -> None:
    dump = tmp_path / "events.json"
    events = [_event(i, "Pulled") for i in range(10)] + [_event(10, "Started")]
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": events}))
    warnings = load_scenario([dump]).warnings
    pulled = [w for w in warnings if "reason Pulled" in w]
    assert len(pulled) == 4
    assert pulled[-1].startswith(f"{dump}: document 4 (Event/default/e3) and 6 more documents of this file: ")
    assert [w for w in warnings if "reason Started" in w] == [
        f"{dump}: document 11 (Event/default/e10): reason Started about a Pod object is not modelled "
        "(explain reads FailedScheduling events of pods); ignored"
    ]


def test_a_warning_on_exactly_one_document_more_than_shown_is_not_counted(tmp_path: Path) -> None:
    dump = tmp_path / "events.json"
    items = [_event(i, "Pulled") for i in range(4)]
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    warnings = load_scenario([dump]).warnings
    shown = [w.split(":")[1] for w in warnings]
    assert shown == [f" document {n} (Event/default/e{n - 1})" for n in range(1, 5)]


def test_the_test_control_planes_kwok_stage_annotations_are_not_modelled_warnings(tmp_path: Path) -> None:
    """A snapshot of the test control plane carries the annotations its kwok Stages read (a pod's
    image pull and readiness delays, a node's start chain): warnings, not unknown-annotation errors."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "server",
            "namespace": "default",
            "annotations": {"gpufleet.io/pull-after": "2s", "gpufleet.io/ready-delay": "2s"},
        },
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    dump = tmp_path / "pods.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod]}))
    warnings = load_scenario([dump]).warnings
    assert [w.split(": ", 2)[2] for w in warnings] == [
        f"metadata.annotations.gpufleet.io/{key} is not modelled (an annotation of the test control "
        "plane's kwok Stages); ignored"
        for key in ("pull-after", "ready-delay")
    ]
