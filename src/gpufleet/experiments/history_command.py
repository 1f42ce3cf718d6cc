"""``gpufleet history``: read the window from Prometheus (``gpufleet.live.history_read``), write the
scenario directory (``nodes.yaml``, ``pods.yaml``, ``podgroups.yaml``, ``priorityclasses.yaml``
(those given with ``--priority-classes``), ``simulation.yaml``, and ``NOTES.txt`` with what the
metrics could not say), print one summary line and the notes. Bad
options and an unreachable or refusing Prometheus are one line on stderr and exit status 2.

It lives here, above the live side and the simulator, because a gang's durations are corrected by
the simulator's own ring model (``sim.placement_quality``) for the placement it really had.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from gpufleet.kube import schema_check
from gpufleet.kube.documents import read_documents
from gpufleet.kube.objects import label, mapping
from gpufleet.kube.problems import Problems, Reporter
from gpufleet.live.history import build_scenario
from gpufleet.live.history_read import read_history
from gpufleet.live.prometheus_api import PrometheusAPI, PrometheusError
from gpufleet.model.named_paths import made_directory
from gpufleet.model.quantity import QuantityError, parse_window
from gpufleet.model.standard_input import display_name
from gpufleet.report.output import yaml_documents
from gpufleet.sim.placement_quality import ring_placement


def parse_time(text: str | None) -> float:
    """``--until``: RFC 3339 (``2026-12-01T00:00:00Z``) or Unix seconds, as Prometheus' API takes
    times; None is now."""
    if text is None:
        return time.time()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--until: not an RFC 3339 time or Unix seconds: {text!r}") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def gang_stretch(members: Sequence[tuple[str, int]], gpus_per_node: int, product: str | None) -> float:
    return ring_placement(members, gpus_per_node, product).stretch


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


#: the fields of a PriorityClass that matter to scheduling
_PRIORITY_CLASS_FIELDS = ("value", "globalDefault", "preemptionPolicy", "description")


def read_priority_classes(path: Path) -> dict[str, dict[str, Any]]:
    """The PriorityClasses of a file (``kubectl get priorityclasses -o yaml``: a ``List``, or
    documents; ``-``: standard input), by name, with the fields that matter to scheduling. The file is
    read as manifests are (``kube.documents``) and each PriorityClass checked against its Kubernetes
    schema; ``ValueError`` names the first problem (``--priority-classes FILE: document N ...``)."""
    problems = Problems()
    documents, _ = read_documents([path], problems)
    definition = schema_check.standard_kinds()["scheduling.k8s.io", "v1", "PriorityClass"]
    classes = {}
    for document in documents:
        body = document.body
        if body.get("kind") != "PriorityClass":
            continue
        report = Reporter(problems, document.location)
        report.label = label("PriorityClass", body, False)
        schema_check.check(body, definition, report)
        name = mapping(body.get("metadata")).get("name")
        if report.error_count or not isinstance(name, str) or not name:
            continue
        classes[name] = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            **{k: body[k] for k in _PRIORITY_CLASS_FIELDS if k in body},
        }
    if problems.errors:
        lines = Problems.lines(problems.errors)
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        raise ValueError(f"--priority-classes {lines[0]}{more}")
    if not classes:
        raise ValueError(f"--priority-classes {display_name(path)}: no PriorityClass in it")
    return classes


def history_command(
    prometheus: str,
    since: str,
    until: str | None,
    namespace: str | None,
    out_dir: Path,
    priority_classes: Path | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    render: Callable[[Any], str] | None = None,
) -> int:
    """Write the scenario; returns the exit status (0, or 2 with one line on ``err``). With ``render``
    (``-o json|yaml``) what was written is printed as data through it instead of the line and notes."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        length = parse_window(since)
        if length <= 0:
            raise ValueError("--since: must be greater than 0")
        end = parse_time(until)
        classes = read_priority_classes(priority_classes) if priority_classes else {}
        api = PrometheusAPI(prometheus)
        history = read_history(api, end - length, end, namespace)
    except QuantityError as exc:
        print(f"--since: {exc}", file=err)
        return 2
    except (ValueError, PrometheusError) as exc:
        print(exc, file=err)
        return 2
    if not history.pods and not history.nodes:
        print(
            f"{prometheus}: no kube_pod_created or kube_node_created series between {_iso(history.start)} "
            f"and {_iso(history.end)}{f' in namespace {namespace}' if namespace else ''}: is Prometheus "
            "scraping kube-state-metrics?",
            file=err,
        )
        return 2
    scenario = build_scenario(history, gang_stretch, classes)
    made_directory(out_dir)
    for name, docs in scenario.files.items():
        (out_dir / name).write_text(yaml_documents(docs))
    (out_dir / "NOTES.txt").write_text("".join(f"- {note}\n" for note in scenario.notes))
    if render is not None:
        data = {
            "out": str(out_dir),
            "start": _iso(history.start),
            "end": _iso(history.end),
            "pods": scenario.pods,
            "jobs": scenario.jobs,
            "gangs": scenario.gangs,
            "nodes": scenario.nodes,
            "files": sorted([*scenario.files, "NOTES.txt"]),
            "notes": list(scenario.notes),
        }
        out.write(render(data))
        return 0
    print(
        f"wrote {out_dir}: {_count(scenario.pods, 'pod')} ({_count(scenario.jobs, 'Job')}, "
        f"{_count(scenario.gangs, 'gang')}), {_count(scenario.nodes, 'node')}, {_iso(history.start)} to "
        f"{_iso(history.end)}; {_count(len(scenario.notes), 'note')} in {out_dir / 'NOTES.txt'}",
        file=out,
    )
    for note in scenario.notes:
        print(f"note: {note}", file=out)
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
