"""``gpufleet describe pod``: find the pod, read it from its source, and print it (``report.describe``).

Sources, in this order: ``--summary FILE`` (a saved ``summary.json``); files whose Pod documents
carry a ``status`` (``kubectl get pods,events -A -o json``, a ``gpufleet snapshot`` directory),
described as they are; any other scenario (or the embedded default), simulated here to its end. A
pod named without its namespace is found as ``model.pod_names`` finds it. Bad input, an unknown or
ambiguous pod: one line each on stderr, exit status 2.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from gpufleet.collector import collector_paused
from gpufleet.kube.documents import Document, read_documents
from gpufleet.kube.explain import explain_scenario
from gpufleet.kube.load import scenario_from_documents
from gpufleet.kube.problems import Problems, ScenarioError
from gpufleet.model.pod_names import PodNameError, find_pod_key
from gpufleet.model.standard_input import display_name, is_stdin, read_stdin
from gpufleet.report._format import human_duration
from gpufleet.report.describe import described_from_kubectl, described_from_record, involves
from gpufleet.scheduling.profile import ProfileError
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary


class DescribeError(Exception):
    """What stops the description: its lines, one problem each."""

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__(lines)
        self.lines = list(lines)


T = TypeVar("T")


@dataclass(frozen=True)
class Given:
    """The files a ``describe`` command was given, read: their documents, where each came from, and the
    problems found (warnings only: errors stop it)."""

    documents: list[Document]
    sources: list[str]
    problems: Problems


def dumped_pod(document: Document) -> bool:
    """A Pod with a ``status``: the documents are a kubectl dump."""
    return is_pod(document) and bool(document.body.get("status"))


def described(
    paths: Sequence[Path],
    summary_path: Path | None,
    from_summary: Callable[[Path], T],
    from_dump: Callable[[Given], T],
    from_scenario: Callable[[Given], T],
    is_dumped: Callable[[Document], bool] = dumped_pod,
) -> T:
    """The object described from its source, in the module docstring's order: ``--summary`` (refused beside
    files); a kubectl dump (``is_dumped`` holds for one of its documents); else the scenario. A dump is read
    and explained in one pass, as ``explain`` does (the collector would only walk it again); a scenario is
    simulated with the collector running (``collector_spaced``)."""
    if summary_path is not None:
        if paths:
            raise DescribeError(["--summary: give a summary.json or scenario files, not both"])
        return from_summary(summary_path)
    problems = Problems()
    with collector_paused():
        documents, sources = read_documents(list(paths), problems)
        if problems.errors:
            raise DescribeError(Problems.lines(problems.errors))
        given = Given(documents, sources, problems)
        if any(is_dumped(d) for d in documents):
            return from_dump(given)
    return from_scenario(given)


def describe_pod(
    name: str, paths: Sequence[Path], summary_path: Path | None, namespace: str | None
) -> dict[str, Any]:
    """The described pod (``report.describe``'s record); ``DescribeError`` for anything that stops it."""

    def from_dump(given: Given) -> dict[str, Any]:
        dumped = {pod_key(d.body): d.body for d in given.documents if dumped_pod(d)}
        key = find_named(name, dumped, namespace)
        return _from_dump(dumped[key], given.documents, given.sources, given.problems)

    return described(
        paths,
        summary_path,
        lambda path: _from_summary(name, path, namespace),
        from_dump,
        lambda given: _simulated(name, given.documents, given.sources, given.problems, namespace),
    )


def find_named(
    name: str, keys: Sequence[str] | Mapping[str, Any], namespace: str | None, what: str = "pod"
) -> str:
    """The key among ``keys`` that ``name`` means (``model.pod_names``'s rule, for any namespaced kind:
    ``what`` names it in the message); ``DescribeError`` when none or several do."""
    try:
        return find_pod_key(name, keys, namespace, what=what)
    except PodNameError as exc:
        raise DescribeError([str(exc)]) from None


def simulated_time(seconds: float | None) -> str | None:
    """A time of the run as a describe shows it (``t=1m (simulated)``); None for None."""
    return None if seconds is None else f"t={human_duration(seconds)} (simulated)"


def is_pod(document: Document) -> bool:
    return document.body.get("apiVersion") == "v1" and document.body.get("kind") == "Pod"


def pod_key(body: Mapping[str, Any]) -> str:
    meta = body.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def read_summary(path: Path, *fields: str) -> dict[str, Any]:
    """A saved ``summary.json`` (``-``: stdin), with its ``pods``, ``end_time_s`` and ``fields``;
    ``DescribeError`` where it cannot be read or is no gpufleet summary."""
    where = f"--summary {display_name(path)}"
    try:
        text = read_stdin().decode() if is_stdin(path) else path.read_text()
        summary = json.loads(text)
        for key in ("pods", *fields):
            if not isinstance(summary[key], list):
                raise TypeError(f"{key} is not a list")
        summary["end_time_s"] = float(summary["end_time_s"])
    except OSError as exc:
        raise DescribeError([f"{where}: cannot read: {exc.strerror or exc}"]) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise DescribeError([f"{where}: not a gpufleet summary.json ({exc})"]) from None
    return dict(summary)


def _from_summary(name: str, path: Path, namespace: str | None) -> dict[str, Any]:
    summary = read_summary(path)
    pods, end = summary["pods"], summary["end_time_s"]
    key = find_named(name, [str(p["name"]) for p in pods], namespace)
    record = [p for p in pods if p["name"] == key][-1]  # a name created again: its latest pod
    return described_from_record(record, end, workload_status=_workload_status(summary, record))


def _workload_status(summary: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The status of the pod's workload in ``summary.json`` (``workload_status``), None when it has none."""
    found = (summary.get("workload_status") or {}).get(record.get("workload"))
    return found if isinstance(found, dict) else None


def _from_dump(
    body: Mapping[str, Any], documents: Sequence[Document], sources: list[str], problems: Problems
) -> dict[str, Any]:
    meta = body.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
    events = [
        d.body for d in documents if d.body.get("kind") == "Event" and involves(d.body, namespace, name)
    ]
    explanation = None
    if (body.get("status") or {}).get("phase") == "Pending" and not (body.get("spec") or {}).get("nodeName"):
        explanation = _explained(f"{namespace}/{name}", documents, sources, problems)
    return described_from_kubectl(body, events, explanation)


def _explained(
    key: str, documents: Sequence[Document], sources: list[str], problems: Problems
) -> dict[str, Any] | None:
    """``explain``'s record of the pending pod, or one saying why there is none."""
    try:
        scenario = scenario_from_documents(list(documents), sources, problems)
        explained = explain_scenario(scenario, only=key)
    except ScenarioError as exc:
        return {"message": None, "verdict": f"gpufleet cannot explain it: {exc.problems[0]}"}
    except (ProfileError, PodNameError) as exc:
        return {"message": None, "verdict": f"gpufleet cannot explain it: {exc}"}
    return next((e for e in explained if e["pod"] == key), None)


def simulated(documents: list[Document], sources: list[str], problems: Problems) -> Simulation:
    """The scenario simulated to its end; its problems a ``DescribeError``."""
    try:
        sim = Simulation(scenario_from_documents(documents, sources, problems))
    except ScenarioError as exc:
        raise DescribeError(exc.problems) from None
    except ProfileError as exc:
        raise DescribeError([f"KubeSchedulerConfiguration: {exc}"]) from None
    sim.run()
    return sim


def _simulated(
    name: str, documents: list[Document], sources: list[str], problems: Problems, namespace: str | None
) -> dict[str, Any]:
    sim = simulated(documents, sources, problems)
    summary = build_summary(sim)
    key = find_named(name, [str(p["name"]) for p in summary["pods"]], namespace)
    record = [p for p in summary["pods"] if p["name"] == key][-1]
    live = sim.records[key]
    return described_from_record(
        record, sim.end_time, live.pod, list(live.log), _workload_status(summary, record)
    )
