"""``gpufleet startup``: the glue between the input (dump files, or a live cluster through
``live.startup_watch``), the measurement (``live.startup``), the summary and report (``report``) and
the calibration (``live.startup_calibrate``).

A dump is what ``kubectl get pods,nodes,events -A -o json`` prints (a ``kind: List``), several such
files, or a ``gpufleet snapshot`` directory; documents of other kinds are left aside, those read have
their fields' types checked against their Kubernetes schema first (a field missing or unknown is
no problem: a dump may be trimmed, or from another Kubernetes version). ``--since``
takes a Go duration (the pods created in that span before the reading) or an RFC 3339 time. Bad
input is one line per problem (``FILE: document N (Kind/name): field: what is wrong``), exit 2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from gpufleet.kube import schema_check
from gpufleet.kube.documents import Document, read_documents
from gpufleet.kube.objects import label
from gpufleet.kube.problems import Problems, Reporter, unsupported
from gpufleet.live.startup import Observations, StartupInputError, StartupMeasurement, measure, summary
from gpufleet.live.startup_calibrate import calibration_yaml
from gpufleet.model.named_paths import made_directory
from gpufleet.model.problem_lines import one_line
from gpufleet.model.quantity import parse_duration, parse_window
from gpufleet.model.standard_input import display_name
from gpufleet.report import finished_summary, render_html
from gpufleet.report.json_text import json_file_text
from gpufleet.report.output import print_data
from gpufleet.report.startup_table import not_serving_lines, startup_table

#: the kinds a measurement reads, by ``apiVersion`` and ``kind``
READ = {
    ("v1", "Pod"): "pods",
    ("v1", "Node"): "nodes",
    ("v1", "Event"): "events",
    ("events.k8s.io/v1", "Event"): "events",
}


@dataclass
class StartupOptions:
    dumps: list[Path]
    out_dir: Path
    kubeconfig: Path | None = None
    context: str | None = None
    namespace: str | None = None
    since: str | None = None
    watch: bool = False
    watch_for: str | None = None
    calibrate: bool = False
    group_label: str | None = None
    output: str | None = None  # -o json|yaml: the summary printed as data; None: the table


@dataclass
class _Input:
    objects: dict[str, list[Mapping[str, Any]]]
    documents: dict[str, list[Document]]
    observed: Observations | None = None
    now: float | None = None


def startup_command(options: StartupOptions, out: Console, err: Console) -> int:
    """Run ``gpufleet startup``; the exit status (2 for bad input, one line per problem)."""
    problems: list[str] = []
    since, lookback = _since(options.since, problems)
    live = options.kubeconfig is not None or options.context is not None or options.watch
    if options.dumps and live:
        problems.append("give DUMP files or a cluster (--kubeconfig, --context, --watch), not both")
    if options.watch_for is not None and not options.watch:
        problems.append("--for: only with --watch")
    if problems:
        return _fail(err, problems)
    read = _read_dumps(options.dumps, err) if options.dumps else _read_live(options, since, lookback, err)
    if isinstance(read, int):
        return read
    try:
        measurement = measure(
            read.objects["pods"],
            read.objects["nodes"],
            read.objects["events"],
            read.observed,
            namespace=options.namespace,
            since=since,
            lookback_s=lookback,
            now=read.now,
            group_key=options.group_label,
        )
    except StartupInputError as exc:
        return _fail(err, _problem_lines(exc, read.documents))
    if not measurement.pods:
        return _fail(err, [_no_pods(options)])
    _write(measurement, options, out)
    return 0


def _since(text: str | None, problems: list[str]) -> tuple[float | None, float | None]:
    """``--since`` as (a time in seconds since the epoch, or a span before the reading): a span as
    ``gpufleet history`` reads it (Go syntax, or days: ``7d``), or an RFC 3339 time with a zone."""
    if text is None:
        return None, None
    try:
        return None, parse_window(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is not None:
            return moment.timestamp(), None
    except ValueError:
        pass
    problems.append(f"--since: {text!r}: neither a duration (90s, 2h, 7d) nor an RFC 3339 time with a zone")
    return None, None


def _read_dumps(paths: Sequence[Path], err: Console) -> _Input | int:
    problems = Problems()
    documents, _ = read_documents(paths, problems)
    if problems.errors:
        return _fail(err, Problems.lines(problems.errors))
    read = _Input({"pods": [], "nodes": [], "events": []}, {"pods": [], "nodes": [], "events": []})
    definitions = schema_check.standard_kinds()
    for document in documents:
        api, kind = str(document.body.get("apiVersion")), str(document.body.get("kind"))
        if (api, kind) in READ:
            group, _, version = api.rpartition("/")
            report = Reporter(problems, document.location)
            report.label = label(kind, document.body, kind != "Node")
            schema_check.check_types(document.body, definitions[group, version, kind], report)
            read.objects[READ[api, kind]].append(document.body)
            read.documents[READ[api, kind]].append(document)
        elif kind in ("Pod", "Node", "Event"):
            supported = sorted(version for version, known in READ if known == kind)
            message = unsupported(document.body.get("apiVersion"), supported)
            problems.add(True, document.location, kind, "apiVersion", message)
    if problems.errors:
        return _fail(err, Problems.lines(problems.errors))
    return read


def _read_live(
    options: StartupOptions, since: float | None, lookback: float | None, err: Console
) -> _Input | int:
    import time

    from gpufleet.live import startup_watch
    from gpufleet.live.client import LiveError, connect

    watch_for = None
    if options.watch_for is not None:
        try:
            watch_for = parse_duration(options.watch_for)
        except ValueError as exc:
            return _fail(err, [f"--for: {exc}"])
    try:
        cluster = connect(options.kubeconfig, options.context)
        if since is None and lookback is not None:
            since = time.time() - lookback
        read = startup_watch.collect(
            cluster,
            options.namespace,
            since,
            watch_for,
            watch=options.watch,
            watching=lambda: _watching(options, err),
        )
    except LiveError as exc:
        return _fail(err, [str(exc)])
    objects: dict[str, list[Mapping[str, Any]]] = {
        "pods": [*read.pods],
        "nodes": [*read.nodes],
        "events": [*read.events],
    }
    return _Input(objects, {}, read.observed, read.read_at)


def _watching(options: StartupOptions, err: Console) -> None:
    span = f"for {options.watch_for}" if options.watch_for else "until Ctrl-C"
    scope = f"namespace {options.namespace}" if options.namespace else "every namespace"
    err.print(
        f"watching nodes and the pods of {scope} {span} (Ctrl-C stops and writes what was seen)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _problem_lines(error: StartupInputError, documents: Mapping[str, Sequence[Document]]) -> list[str]:
    """Each problem as ``FILE: document N (Kind/name): field: message`` (or ``Kind/name: ...`` when live)."""
    lines = []
    for problem in error.problems:
        located = documents.get(problem.kind) or []
        if problem.index < len(located):
            where = located[problem.index].location.describe(problem.label)
        else:
            where = problem.label
        lines.append(f"{where}: {problem.path}: {problem.message}")
    return lines


def _no_pods(options: StartupOptions) -> str:
    where = ", ".join(display_name(path) for path in options.dumps) or "the cluster"
    scope = f" in namespace {options.namespace}" if options.namespace else ""
    scope += f" created since {options.since}" if options.since else ""
    return f"{where}: no pods{scope}: nothing to measure (a dump is kubectl get pods,nodes,events -A -o json)"


def _write(measurement: StartupMeasurement, options: StartupOptions, out: Console) -> None:
    result = finished_summary(summary(measurement))
    out_dir = options.out_dir
    made_directory(out_dir)
    (out_dir / "summary.json").write_text(json_file_text(result, sort_keys=True))
    (out_dir / "report.html").write_text(render_html(result))
    written = [out_dir / "summary.json", out_dir / "report.html"]
    if options.calibrate:
        (out_dir / "calibration.yaml").write_text(calibration_yaml(measurement, options.group_label))
        written.append(out_dir / "calibration.yaml")
    if options.output is not None:
        print_data(result, options.output)
        out = Console(stderr=True, soft_wrap=True)  # what follows is not the data
    else:
        out.print(startup_table(result))
        for line in not_serving_lines(result):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
    for note in measurement.notes:
        out.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    out.print(f"{len(measurement.pods)} pods, {len(measurement.nodes)} nodes", highlight=False)
    out.print("wrote " + ", ".join(str(path) for path in written), highlight=False)


def _fail(err: Console, lines: Sequence[str]) -> int:
    """Each problem on one line (a line break it quotes escaped), exit status 2."""
    for line in lines:
        err.print(one_line(line), markup=False, highlight=False, soft_wrap=True)
    return 2
