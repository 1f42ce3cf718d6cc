"""The ``gpufleet`` command: simulate, validate, explain, describe and the rest.

Bad input never produces a traceback: every problem is printed on its own line
(``FILE: document N (Kind/name): field.path: what is wrong``) and the command exits 2.
kubectl's habits hold: ``-h``, ``-o json|yaml|wide`` (``report.output``), ``-n``/``-A``, ``-`` for
standard input, a pod named without its namespace. Command docstrings are what ``--help`` shows
(rendered as Markdown, so lines rewrap): plain sentences, the first line a whole one.

Unlike the rest of the package, this module's annotations are objects, not strings (no ``from
__future__ import annotations``): typer reads every command's annotations at each start, and strings
would be compiled and evaluated there anew (10 ms of each command's start). Names imported only for
type checking are quoted.
"""

import sys
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import gpufleet.blas_threads  # noqa: F401  (before NumPy loads: one OpenBLAS thread)
from gpufleet.model.named_paths import CannotCreate, file_system_line, made_directory
from gpufleet.model.pod_names import PodNameError
from gpufleet.model.standard_input import is_stdin
from gpufleet.report.openmetrics import DEFAULT_START
from gpufleet.report.output import OutputError, output_format, print_data, render_data
from gpufleet.report.progress_wanted import NO_PROGRESS_ENV

if TYPE_CHECKING:
    from rich.console import Console

    from gpufleet.live.client import LiveCluster
    from gpufleet.live.snapshot import SnapshotResult
    from gpufleet.model.node import Node
    from gpufleet.model.pod_selection import PodSelection
    from gpufleet.model.scenario import Scenario
    from gpufleet.model.scheduler_config import SchedulerConfig
    from gpufleet.sim.simulation import Simulation
    from gpufleet.traces.base import TracePod

#: every command and group: ``-h`` as well as ``--help``; help text rewrapped whole (Markdown)
TYPER_SETTINGS: dict[str, Any] = {
    "context_settings": {"help_option_names": ["-h", "--help"]},
    "rich_markup_mode": "markdown",
}
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="GPU-aware Kubernetes scheduling and cluster simulation.",
    **TYPER_SETTINGS,
)

PathsArg = Annotated[
    list[Path] | None, typer.Argument(help="Scenario files or directories (YAML or JSON); - reads stdin.")
]
NoProgressOption = Annotated[
    bool,
    typer.Option(
        "--no-progress",
        help=f"No progress bar on stderr (shown on a terminal only; or set {NO_PROGRESS_ENV}).",
    ),
]
OutputOption = Annotated[
    str | None, typer.Option("--output", "-o", help="json or yaml: the result as data (default: the view).")
]
WideOutputOption = Annotated[
    str | None,
    typer.Option("--output", "-o", help="json or yaml: the result as data; wide: the table with everything."),
]


def version_callback(value: bool) -> None:
    if value:
        from importlib.metadata import version

        say(f"gpufleet {version('gpufleet')}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=version_callback, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """GPU-aware Kubernetes scheduling and cluster simulation."""


def output_of(value: str | None, wide: bool = False, as_json: bool = False) -> str | None:
    """The ``--output`` format (None: the human view); a value the command does not take exits 2."""
    try:
        return output_format(value, wide, as_json)
    except OutputError as exc:
        raise fail([str(exc)]) from None


def fail(lines: list[str]) -> typer.Exit:
    for line in lines:
        say(line, stderr=True)
    return typer.Exit(2)


def default_scenario_path() -> Path:
    from importlib import resources

    return Path(str(resources.files("gpufleet") / "examples" / "default.yaml"))


def load(paths: list[Path] | None) -> "Scenario":
    from gpufleet.kube import ScenarioError, load_scenario

    try:
        return load_scenario(list(paths) if paths else [default_scenario_path()])
    except ScenarioError as exc:
        raise fail(exc.problems) from None


def make_simulation(scenario: "Scenario", seed: int | None) -> "Simulation":
    from gpufleet.scheduling.profile import ProfileError
    from gpufleet.sim.simulation import Simulation

    try:
        return Simulation(scenario, seed=seed)
    except ProfileError as exc:
        raise fail([f"KubeSchedulerConfiguration: {exc}"]) from None


SelectOption = Annotated[
    str | None,
    typer.Option(
        "--select",
        "-l",
        help="Pod figures over the pods this label selector selects (kubectl syntax: app=vllm, "
        "'tier in (a,b)', '!x'); the simulation itself is unchanged.",
    ),
]
SelectNamespaceOption = Annotated[
    str | None, typer.Option("--namespace", "-n", help="Pod figures over the pods of this namespace.")
]


def selection_of(select: str | None, namespace: str | None) -> "PodSelection | None":
    """The pods ``--select`` and ``--namespace`` pick; a selector that does not parse exits 2."""
    from gpufleet.model.pod_selection import SelectorError, pod_selection  # the pod model: not for --help

    try:
        return pod_selection(select, namespace)
    except SelectorError as exc:
        raise fail([f"--select: {select}: {exc}"]) from None


@app.command()
def simulate(
    paths: PathsArg = None,
    out_dir: Annotated[
        Path, typer.Option("--out", help="Directory for summary.json and report.html.")
    ] = Path("out"),
    seed: Annotated[int | None, typer.Option(help="Random seed (overrides Simulation spec.seed).")] = None,
    no_progress: NoProgressOption = False,
    select: SelectOption = None,
    namespace: SelectNamespaceOption = None,
    output: OutputOption = None,
    metrics_out: Annotated[
        Path | None,
        typer.Option(
            "--metrics-out",
            help="Also write the run as exporters' metrics (DCGM, kube-state-metrics, cluster-autoscaler, "
            "kube-scheduler) in OpenMetrics text, for promtool tsdb create-blocks-from openmetrics.",
        ),
    ] = None,
    metrics_start: Annotated[
        str,
        typer.Option(
            "--metrics-start", help="Wall-clock time of simulated time 0 in --metrics-out: RFC 3339, or now."
        ),
    ] = DEFAULT_START,
    check_invariants: Annotated[
        bool,
        typer.Option(
            "--check-invariants",
            help="Check after every event that nothing is lost or over-committed (docs/invariants.md); "
            "a violation stops the run with one line and exit status 1.",
        ),
    ] = False,
) -> None:
    """Run a scenario (or the embedded default) and write summary.json and report.html."""
    from gpufleet.collector import collector_spaced
    from gpufleet.report import finished_summary, print_summary, render_html
    from gpufleet.report._format import human_duration
    from gpufleet.report.json_text import json_file_text
    from gpufleet.report.openmetrics import parse_start, rfc3339, write_openmetrics
    from gpufleet.report.progress import SimulationBar
    from gpufleet.sim.exporter_scrapes import ExporterScrapes
    from gpufleet.sim.invariants import InvariantChecks, InvariantViolation
    from gpufleet.sim.summary import build_summary

    fmt = output_of(output)
    selection = selection_of(select, namespace)
    try:
        start = parse_start(metrics_start)
    except ValueError as exc:
        raise fail([f"--metrics-start: {exc}"]) from None
    # (the scenario lives to the end: frozen, no collection of the run or of its summary walks it)
    with collector_spaced():
        scenario = load(paths)
        sim = make_simulation(scenario, seed)
        for warning in scenario.warnings:  # summary.json keeps them too
            say(f"warning: {warning}", stderr=True)
        if metrics_out is not None:
            sim.metrics = ExporterScrapes()
        if check_invariants:
            sim.invariants = InvariantChecks()
        try:
            with SimulationBar(console(stderr=True), asked=not no_progress) as bar:
                sim.run(progress=bar if bar.enabled else None)
        except InvariantViolation as exc:
            at = f"{human_duration(exc.at_s)} ({exc.at_s:g} s)"
            line = f"invariant {exc.invariant} violated by {exc.subject} at {at}: {exc.detail}"
            say(line, stderr=True)
            raise typer.Exit(1) from None
        summary = finished_summary(build_summary(sim, selection))
    made_directory(out_dir)
    (out_dir / "summary.json").write_text(json_file_text(summary, sort_keys=True))
    (out_dir / "report.html").write_text(render_html(summary))
    if fmt is not None:
        print_data(summary, fmt)
    else:
        print_summary(summary, console())
    aside = fmt is not None  # (on standard error where standard output holds the data)
    say(f"wrote {out_dir / 'summary.json'} and {out_dir / 'report.html'}", stderr=aside)
    if sim.invariants is not None:
        say(f"invariants held after each of {sim.invariants.events:,} events", stderr=aside)
    if metrics_out is not None and sim.metrics is not None:
        write_openmetrics(metrics_out, sim.metrics.families(), start)
        window = f"{rfc3339(start)} to {rfc3339(start + sim.metrics.end_s)}"
        say(f"wrote {metrics_out} (OpenMetrics, {window})", stderr=aside)


@app.command()
def validate(
    paths: Annotated[list[Path], typer.Argument(help="Scenario files or directories; - reads stdin.")],
    output: OutputOption = None,
) -> None:
    """Check a scenario without running it, and print what would be simulated."""
    from gpufleet.collector import collector_paused

    with collector_paused():  # one pass over a scenario that lives to its end, as explain's
        _validate(paths, output)


def _validate(paths: list[Path], output: str | None) -> None:
    """``validate``'s check and report."""
    fmt = output_of(output)
    scenario = load(paths)
    sim = make_simulation(scenario, None)
    kinds = Counter(type(w).__name__ for w in scenario.other_workloads)  # registered workload kinds
    counts = {
        "pods": len(scenario.pods),
        "jobs": len(scenario.jobs),
        "deployments": len(scenario.deployments),
        "daemonsets": len(scenario.daemonsets),
        "pod groups": len(scenario.pod_groups),
        **{f"{kind}s": n for kind, n in sorted(kinds.items())},
    }
    # controllers that adopt their pods of a snapshot (kube.adoption)
    adopted = {key: len(owned.pods) for key, owned in scenario.owned.items()}
    profiles: list[dict[str, Any]] = [
        {"scheduler": s.name, "profile": name, "plugins": list(profile.plugin_names)}
        for s in sim.schedulers
        for name, profile in s.profiles.items()
    ]
    result = {
        "valid": True,
        "nodes": sim.state.size_active,
        "gpus": sim.cluster.gpus_total(),
        "objects": counts,
        "adopted": adopted,
        "profiles": profiles,
        "warnings": list(scenario.warnings),
    }
    if fmt is not None:
        print_data(result, fmt)
        return
    say(f"nodes: {sim.state.size_active} ({sim.cluster.gpus_total():g} GPUs)")
    say("  ".join(f"{kind}: {n}" for kind, n in counts.items()))
    if adopted:
        say(f"adopted by their controllers: {', '.join(f'{key} ({n} pods)' for key, n in adopted.items())}")
    for p in profiles:
        say(f"scheduler {p['scheduler']}: profile {p['profile']}: plugins {', '.join(p['plugins'])}")
    for warning in scenario.warnings:
        say(f"warning: {warning}")
    say("valid")


def say(line: str, stderr: bool = False) -> None:
    """One line of text, printed whole: as it is, no markup, emoji codes or highlighting read in it,
    never wrapped, and flushed, as rich's console flushes each print (a plain ``print``: a command that
    prints only lines never imports rich)."""
    print(line, file=sys.stderr if stderr else sys.stdout, flush=True)


@cache
def console(stderr: bool = False) -> "Console":
    """The rich console of standard output (or error), for tables, bars and summaries; made when a
    command first renders one. ``soft_wrap``: a line printed whole, never wrapped or cut, when the
    output is not a terminal."""
    from rich.console import Console

    return Console(stderr=stderr, soft_wrap=True)


KubeconfigOption = Annotated[
    Path | None,
    typer.Option(
        "--kubeconfig",
        help="The kubeconfig file, as kubectl takes it (default: KUBECONFIG, ~/.kube/config, in-cluster).",
    ),
]
ContextOption = Annotated[str | None, typer.Option("--context", help="The kubeconfig context to use.")]
NamespaceOption = Annotated[
    str | None, typer.Option("--namespace", "-n", help="Only this namespace (default: the context's).")
]
AllNamespacesOption = Annotated[bool, typer.Option("--all-namespaces", "-A", help="Every namespace.")]


def connect_live(kubeconfig: Path | None, context: str | None) -> "LiveCluster":
    """The cluster kubectl would talk to with these flags; a configuration problem exits 2."""
    from gpufleet.live.client import LiveError, connect

    try:
        return connect(kubeconfig, context)
    except LiveError as exc:
        raise fail([str(exc)]) from None


def one_scope(namespace: str | None, all_namespaces: bool) -> None:
    """``-n`` and ``-A`` together exit 2, as kubectl refuses them."""
    if namespace is not None and all_namespaces:
        raise fail(["--namespace and --all-namespaces: give one of them"])


def live_scope(cluster: "LiveCluster", namespace: str | None, all_namespaces: bool) -> str | None:
    """The namespace to read as kubectl chooses it (``-A``: None, all of them), or exit 2 for both."""
    one_scope(namespace, all_namespaces)
    if all_namespaces:
        return None
    return namespace or str(cluster.config.namespace or "default")


def read_live(cluster: "LiveCluster", out_dir: Path, namespace: str | None) -> "SnapshotResult":
    from gpufleet.live.client import LiveError
    from gpufleet.live.snapshot import take_snapshot

    try:
        return take_snapshot(cluster, out_dir, namespace)
    except LiveError as exc:
        raise fail([str(exc)]) from None
    finally:
        cluster.close()


@app.command()
def snapshot(
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the KIND.json files, one per kind.")],
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    namespace: NamespaceOption = None,
    all_namespaces: AllNamespacesOption = False,
    output: OutputOption = None,
) -> None:
    """Read a live cluster into a directory that simulate, explain, validate and whatif read as they are.

    It reads nodes, pods, their controllers, autoscalers, queues, DRA objects and recent events.
    """
    fmt = output_of(output)
    cluster = connect_live(kubeconfig, context)
    result = read_live(cluster, out_dir, live_scope(cluster, namespace, all_namespaces))
    if fmt is not None:
        data = {
            "out": str(out_dir),
            "server": result.server,
            "seconds": result.seconds,
            "counts": dict(result.counts),
            "warnings": list(result.warnings),
        }
        print_data(data, fmt)
        return
    for warning in result.warnings:
        say(f"warning: {warning}")
    counts = ", ".join(f"{n} {stem}" for stem, n in result.counts.items() if n)
    say(f"wrote {out_dir} from {result.server} in {result.seconds:.1f} s: {counts or 'no objects'}")


PodOption = Annotated[
    str | None,
    typer.Option("--pod", help="Only this pod: NS/NAME, or NAME (in -n, default, or its only one)."),
]


@app.command()
def explain(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Cluster state: kubectl get nodes,pods -A -o json, YAML, or a snapshot; - reads stdin."
        ),
    ] = None,
    pod: PodOption = None,
    output: OutputOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Deprecated: the same as -o json.")] = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="Only this namespace's pods (live, default: the context's)."),
    ] = None,
    all_namespaces: AllNamespacesOption = False,
) -> None:
    """Say why each pending pod cannot be placed, as kube-scheduler would and beyond.

    On files (every namespace unless -n), or without files on the live cluster of the kubeconfig.
    """
    import tempfile

    from gpufleet.collector import collector_paused
    from gpufleet.kube.explain import explain_scenario, render_explanations
    from gpufleet.scheduling.profile import ProfileError

    fmt = output_of(output, as_json=as_json)
    one_scope(namespace, all_namespaces)
    if paths and (kubeconfig is not None or context is not None):
        raise fail(["give files or a live cluster (--kubeconfig, --context), not both"])
    # one pass over a cluster state that lives to its end, which makes next to no cyclic garbage: a
    # collection would only walk the snapshot's objects again (a seventh of explaining 20,000 pods)
    with collector_paused():
        if paths:
            scenario = load(paths)
        else:
            cluster = connect_live(kubeconfig, context)
            namespace = live_scope(cluster, namespace, all_namespaces)
            with tempfile.TemporaryDirectory(prefix="gpufleet-explain-") as tmp:
                read = read_live(cluster, Path(tmp), namespace)
                say(f"read {read.objects} objects in {read.seconds:.1f} s", stderr=True)
                scenario = load([Path(tmp)])
        try:
            explanations = explain_scenario(scenario, only=pod, namespace=namespace)
        except ProfileError as exc:
            raise fail([f"KubeSchedulerConfiguration: {exc}"]) from None
        except PodNameError as exc:
            raise fail([f"--pod: {exc}"]) from None
    if namespace is not None:  # the pods of one namespace, as kubectl -n shows them
        explanations = [e for e in explanations if str(e["pod"]).partition("/")[0] == namespace]
    if fmt is not None:
        print_data(explanations, fmt)
    else:
        render_explanations(explanations, console())


@app.command()
def scheduler(
    config: Annotated[
        Path,
        typer.Option(
            "--config", help="The KubeSchedulerConfiguration: its profiles, leader election and client QPS."
        ),
    ],
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Log every decision as a JSON line; bind and write nothing.")
    ] = False,
    metrics_address: Annotated[
        str,
        typer.Option("--bind-address", help="host:port for /metrics, /healthz and /readyz ('' for none)."),
    ] = "0.0.0.0:10251",
    identity: Annotated[
        str | None, typer.Option("--identity", help="Leader-election identity (default: hostname_uuid).")
    ] = None,
) -> None:
    """Schedule the pods of the configuration's profiles on a live cluster, with the simulator's plugins.

    The same plugins as in simulation: gangs, GPU devices, shares, topology, preemption (docs/scheduler.md).
    """
    import signal

    from gpufleet.live.client import connect
    from gpufleet.live_scheduler.daemon import LiveScheduler, Options, default_identity

    configs = load_scheduler_config(config)
    check_reachable(connect_live(kubeconfig, context))  # a problem exits 2 before anything starts
    options = Options(configs, dry_run, metrics_address or None, identity or default_identity())
    live = LiveScheduler(lambda: connect(kubeconfig, context), options)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: live.stop.set())
    profiles = ", ".join(p.scheduler_name for p in configs.profiles)
    say(f"gpufleet scheduler: profiles {profiles}{' (dry run)' if dry_run else ''}", stderr=True)
    raise typer.Exit(live.run())


def check_reachable(cluster: "LiveCluster") -> None:
    """One page of one Node: an unreachable server, refused credentials or a missing right exit 2."""
    from gpufleet.live.client import LiveError
    from gpufleet.live.kinds import KINDS

    try:
        next(cluster.list_pages(KINDS["nodes"], page_size=1))
    except LiveError as exc:
        raise fail([str(exc)]) from None
    finally:
        cluster.close()


def load_scheduler_config(path: Path) -> "SchedulerConfig":
    """The one KubeSchedulerConfiguration of ``path``, checked as a scenario's would be; its plugins must
    all be implemented (a live scheduler cannot judge without them). Problems exit 2."""
    from gpufleet.scheduling import registry
    from gpufleet.scheduling.profile import ProfileError, build_profiles

    scenario = load([path])
    others = len(scenario.nodes) + len(scenario.pods) + len(scenario.workloads())
    if len(scenario.schedulers) != 1 or others:
        raise fail([f"{path}: give exactly one KubeSchedulerConfiguration and nothing else"])
    (config,) = scenario.schedulers
    implemented = registry.plugins()
    missing = sorted(
        {r.name for p in config.profiles for s in p.plugins.values() for r in s.enabled} - set(implemented)
    )
    if missing:
        raise fail([f"{path}: plugins gpufleet does not implement: {', '.join(missing)}"])
    try:
        build_profiles(config)
    except ProfileError as exc:
        raise fail([f"{path}: KubeSchedulerConfiguration: {exc}"]) from None
    for warning in scenario.warnings:
        if (
            "leaderElection" not in warning and "clientConnection" not in warning
        ):  # the live scheduler reads them
            say(f"warning: {warning}", stderr=True)
    return config


@app.command()
def inventory(
    as_yaml: Annotated[
        bool, typer.Option("--yaml", help="Write a v1 Node manifest (GPU Feature Discovery labels) instead.")
    ] = False,
    node_name: Annotated[
        str | None, typer.Option("--node-name", help="Node name for --yaml (default: this host's name).")
    ] = None,
    output: OutputOption = None,
) -> None:
    """Read this machine's GPUs through NVML and print them, or write them as a Node manifest."""
    from functools import partial

    from gpufleet.devices import inventory_command

    fmt = output_of(output)
    if fmt is not None and as_yaml:
        raise fail(["--yaml writes a Node manifest: not with -o"])
    render = partial(render_data, fmt=fmt) if fmt is not None else None
    raise typer.Exit(inventory_command(as_yaml, node_name, render=render))


trace_app = typer.Typer(no_args_is_help=True, help="Public GPU cluster traces.", **TYPER_SETTINGS)
app.add_typer(trace_app, name="trace")

FormatOption = Annotated[str, typer.Option("--format", help="Trace format (openb: Alibaba GPU trace 2023).")]


def read_trace(fmt: str, nodes: Path, pods: Path) -> "tuple[list[Node], list[TracePod]]":
    """The node and pod lists of a trace; bad rows exit 2, one line each (FILE:LINE: column: problem)."""

    from gpufleet.traces.base import TraceError
    from gpufleet.traces.formats import FORMATS

    if is_stdin(nodes) and is_stdin(pods):
        raise fail(["--nodes, --pods: standard input (-) is read once: give it to one of them"])
    if fmt not in FORMATS:
        raise fail([f"--format: unknown trace format {fmt!r} (known: {', '.join(sorted(FORMATS))})"])
    problems: list[str] = []
    loaded_nodes: list[Node] = []
    loaded_pods: list[TracePod] = []
    try:
        loaded_nodes = FORMATS[fmt].read_nodes(nodes)
    except TraceError as exc:
        problems += exc.problems
    try:
        loaded_pods = FORMATS[fmt].read_pods(pods)
    except TraceError as exc:
        problems += exc.problems
    if problems:
        raise fail(problems)
    return loaded_nodes, loaded_pods


@trace_app.command("import")
def trace_import(
    nodes: Annotated[Path, typer.Option("--nodes", help="The trace's node list (CSV; - reads stdin).")],
    pods: Annotated[Path, typer.Option("--pods", help="The trace's pod list (CSV; - reads stdin).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for nodes.yaml and pods.yaml.")],
    fmt: FormatOption = "openb",
    output: OutputOption = None,
) -> None:
    """Write a trace as Kubernetes manifests that gpufleet simulate replays in time.

    The manifests: nodes, pods, and a Simulation lasting until the last deletion.
    """
    from gpufleet.report.output import yaml_documents
    from gpufleet.traces.manifests import node_manifest, pod_manifest, simulation_manifest

    output_fmt = output_of(output)
    loaded_nodes, loaded_pods = read_trace(fmt, nodes, pods)
    made_directory(out_dir)
    for name, docs in (
        ("nodes.yaml", [node_manifest(n) for n in loaded_nodes]),
        ("pods.yaml", [pod_manifest(p) for p in loaded_pods]),
        ("simulation.yaml", [simulation_manifest(loaded_pods, pods.stem)]),
    ):
        (out_dir / name).write_text(yaml_documents(docs))
    if output_fmt is not None:
        files = {"nodes": "nodes.yaml", "pods": "pods.yaml", "simulation": "simulation.yaml"}
        data = {
            "files": {what: str(out_dir / name) for what, name in files.items()},
            "nodes": len(loaded_nodes),
            "pods": len(loaded_pods),
        }
        print_data(data, output_fmt)
        return
    say(
        f"wrote {out_dir / 'nodes.yaml'} ({len(loaded_nodes)} nodes) and {out_dir / 'pods.yaml'} "
        f"({len(loaded_pods)} pods)"
    )


@app.command()
def replay(
    nodes: Annotated[Path, typer.Option("--nodes", help="The trace's node list (CSV; - reads stdin).")],
    pods: Annotated[Path, typer.Option("--pods", help="The trace's pod list (CSV; - reads stdin).")],
    policy: Annotated[
        str,
        typer.Option(
            "--policy", help="Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD or FGDSupply."
        ),
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for replay.json.")],
    protocol: Annotated[
        str, typer.Option("--protocol", help="fgd: the FGD paper's replay protocol.")
    ] = "fgd",
    seed: Annotated[int, typer.Option("--seed", help="Shuffle and tuning seed (the paper: 42..51).")] = 42,
    fmt: FormatOption = "openb",
    output: OutputOption = None,
) -> None:
    """Replay a trace by a published protocol and write DIR/replay.json.

    It holds allocation and fragmentation per arrived percent of GPU request, and the unallocated GPUs
    at 100 %.
    """
    output_fmt = output_of(output)
    from gpufleet.replay.fgd_protocol import POLICIES
    from gpufleet.replay.fgd_protocol import replay as run_replay
    from gpufleet.report.json_text import json_file_text

    if protocol != "fgd":
        raise fail([f"--protocol: unknown protocol {protocol!r} (known: fgd)"])
    if policy not in POLICIES:
        raise fail([f"--policy: unknown policy {policy!r} (known: {', '.join(POLICIES)})"])
    loaded_nodes, loaded_pods = read_trace(fmt, nodes, pods)
    if not any(n.capacity.get("nvidia.com/gpu", 0) for n in loaded_nodes):
        raise fail([f"{nodes}: no GPU nodes: the FGD protocol replays onto GPU nodes only"])
    result = run_replay(loaded_nodes, [p.pod for p in loaded_pods], policy, seed)
    made_directory(out_dir)
    (out_dir / "replay.json").write_text(json_file_text(result.to_json()))
    if output_fmt is not None:
        print_data(result.to_json(), output_fmt)
        return
    say(
        f"{policy} seed {seed}: {result.pods_total} pods ({result.pods_failed} failed), unallocated GPUs at "
        f"100 % arrived: {result.unallocated_gpu_pct_at_100} %, fragmentation ratio "
        f"{result.frag_ratio_pct[100]} %; {result.seconds:.2f} s; wrote {out_dir / 'replay.json'}"
    )


JobsOption = Annotated[
    int | None, typer.Option("--jobs", help="Runs at once, in separate processes (default: the CPU count).")
]


@app.command()
def compare(
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for compare.json and report.html.")],
    nodes: Annotated[
        Path | None, typer.Option("--nodes", help="The trace's node list (CSV; - reads stdin).")
    ] = None,
    pods: Annotated[
        list[Path] | None, typer.Option("--pods", help="A pod list (CSV); repeat for several traces.")
    ] = None,
    policy: Annotated[
        list[str] | None, typer.Option("--policy", help="A policy; repeat for several.")
    ] = None,
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            help="A scenario variant: a file or directory, several joined by commas; repeat for several.",
        ),
    ] = None,
    grid: Annotated[
        Path | None, typer.Option("--grid", help="A sweep's grid file (scenarios or traces): its runs.")
    ] = None,
    seeds: Annotated[
        str | None, typer.Option("--seeds", help="Seeds: 42-51, or 1,2,7 (default 42-51; scenarios 1-5).")
    ] = None,
    jobs: JobsOption = None,
    fmt: FormatOption = "openb",
    no_progress: NoProgressOption = False,
    select: SelectOption = None,
    namespace: SelectNamespaceOption = None,
    output: OutputOption = None,
) -> None:
    """Replay or simulate every variant over seeds, and write DIR/compare.json and DIR/report.html.

    Every (trace, policy, seed) replayed by the FGD paper's protocol, or every (scenario variant, seed)
    simulated; statistics over seeds: median allocation curves, or cost against p95 pending-to-working
    time.
    """
    from gpufleet.experiments.commands import Terminal, compare_command

    term = Terminal(console(), console(stderr=True), not no_progress, output_of(output))
    selection = selection_of(select, namespace)
    raise typer.Exit(
        compare_command(
            nodes,
            pods or [],
            policy or [],
            seeds,
            out_dir,
            jobs,
            fmt,
            term,
            scenario or [],
            grid,
            selection,
        )
    )


@app.command()
def sweep(
    grid: Annotated[Path, typer.Option("--grid", help="The parameter grid (YAML).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for results.jsonl.")],
    jobs: JobsOption = None,
    ray: Annotated[
        str | None,
        typer.Option("--ray", help="Run on a Ray cluster: auto, local or an address (or RAY_ADDRESS)."),
    ] = None,
    no_progress: NoProgressOption = False,
    select: SelectOption = None,
    namespace: SelectNamespaceOption = None,
    output: OutputOption = None,
) -> None:
    """Run a parameter grid of FGD-protocol replays or of scenario simulations.

    One line per run in DIR/results.jsonl as each finishes; runs already there are not done again.
    """
    from gpufleet.experiments.commands import Terminal, ray_address_from, sweep_command

    term = Terminal(console(), console(stderr=True), not no_progress, output_of(output))
    selection = selection_of(select, namespace)
    raise typer.Exit(sweep_command(grid, out_dir, jobs, ray_address_from(ray), term, selection))


@app.command()
def optimum(
    nodes: Annotated[Path, typer.Option("--nodes", help="The trace's node list (CSV; - reads stdin).")],
    pods: Annotated[Path, typer.Option("--pods", help="The trace's pod list (CSV; - reads stdin).")],
    max_nodes: Annotated[int, typer.Option("--max-nodes", help="The first N GPU nodes of the list.")] = 20,
    load: Annotated[float, typer.Option("--load", help="GPU request as a share of their GPUs.")] = 1.3,
    seed: Annotated[int, typer.Option("--seed", help="Shuffle and tuning seed.")] = 42,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds for the solver.")] = 60.0,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Directory for optimum.json.")] = None,
    fmt: FormatOption = "openb",
    output: OutputOption = None,
) -> None:
    """Hold each FGD-protocol policy against the exact optimum on a small slice of a trace.

    Each policy's allocated GPUs once all pods arrived, against the optimum of the same pods (HiGHS,
    the optimum extra).
    """
    from rich.table import Table

    from gpufleet.replay.optimum import OptimumUnavailable, compare_to_optimum, require_solver
    from gpufleet.report.json_text import json_file_text

    output_fmt = output_of(output)
    try:
        require_solver()
    except OptimumUnavailable as exc:
        raise fail([str(exc)]) from None
    checks = (
        ("max-nodes", max_nodes, max_nodes < 1, "at least 1"),
        ("load", load, not load > 0, "above 0"),
        ("time-limit", time_limit, not time_limit > 0, "above 0"),
    )
    if problems := [f"--{name}: {value:g}: {want}" for name, value, bad, want in checks if bad]:
        raise fail(problems)
    loaded_nodes, loaded_pods = read_trace(fmt, nodes, pods)
    try:
        doc = compare_to_optimum(
            loaded_nodes, [p.pod for p in loaded_pods], max_nodes, load, seed, time_limit
        )
    except ValueError as exc:
        raise fail([f"{nodes}: {exc}"]) from None
    if out_dir is not None:
        made_directory(out_dir)
        (out_dir / "optimum.json").write_text(json_file_text(doc))
    if output_fmt is not None:
        print_data(doc, output_fmt)
        return
    best = doc["optimum"]
    label = "optimum" if best["optimal"] else "upper bound"
    table = Table(title=f"allocated GPUs of {doc['gpus']} ({doc['nodes']} nodes, load {load:g}, seed {seed})")
    for column in ("policy", "allocated GPUs", f"gap to {label} %"):
        table.add_column(column, justify="left" if column == "policy" else "right")
    table.add_row(label, f"{best['bound_milli'] / 1000:.2f}", "")
    for row in doc["policies"]:
        table.add_row(row["policy"], f"{row['allocated_milli'] / 1000:.2f}", f"{row['gap_pct']:.2f}")
    console().print(table)
    solved = (
        f"exact, {best['seconds']:.1f} s"
        if best["optimal"]
        else (
            f"{best['status']} after {best['seconds']:.1f} s, best placement found "
            f"{best['allocated_milli'] / 1000:.2f} GPUs"
        )
    )
    say(f"{label}: {solved}; {doc['pods_total']} pods asking {doc['gpu_request_milli'] / 1000:.2f} GPUs")
    if out_dir is not None:
        say(f"wrote {out_dir / 'optimum.json'}")


@app.command()
def history(
    prometheus: Annotated[
        str, typer.Option("--prometheus", help="Prometheus' base URL (it scrapes kube-state-metrics).")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the scenario (and NOTES.txt).")],
    since: Annotated[
        str, typer.Option("--since", help="The window's length before --until (Go syntax, or days: 7d).")
    ] = "7d",
    until: Annotated[
        str | None, typer.Option("--until", help="The window's end: RFC 3339 or Unix seconds (default now).")
    ] = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Only this namespace's pods.")
    ] = None,
    all_namespaces: AllNamespacesOption = False,
    priority_classes: Annotated[
        Path | None,
        typer.Option("--priority-classes", help="The cluster's PriorityClasses (kubectl get ... -o yaml)."),
    ] = None,
    output: OutputOption = None,
) -> None:
    """Replay last week: the pods and nodes kube-state-metrics recorded in Prometheus, as a scenario.

    One pod per real pod with its submit time and duration, grouped into its Jobs and gangs.
    """
    from functools import partial

    from gpufleet.experiments.history_command import history_command

    fmt = output_of(output)
    one_scope(namespace, all_namespaces)
    render = partial(render_data, fmt=fmt) if fmt is not None else None
    raise typer.Exit(
        history_command(prometheus, since, until, namespace, out_dir, priority_classes, render=render)
    )


@app.command()
def whatif(
    snapshot: Annotated[Path, typer.Argument(help="A snapshot: gpufleet snapshot's directory, a scenario.")],
    changes: Annotated[
        list[Path], typer.Argument(help="Change files: documents that replace or add, and Change documents.")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for whatif.json and report.html.")],
    duration: Annotated[
        str | None, typer.Option("--for", help="How long to simulate (default: the Simulation's, else 1h).")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Random seed of both sides (default: spec.seed).")] = None,
    output: WideOutputOption = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Show only this namespace's pods.")
    ] = None,
    all_namespaces: AllNamespacesOption = False,
) -> None:
    """Simulate a snapshot forward as it is and with changes, and show the two side by side.

    Changes: another scheduler configuration, gangs, more or warm nodes, another expander, a priority.
    Shown: which pending pods start, when, and at what cost (every namespace unless -n).
    """
    from gpufleet.experiments.whatif_command import WhatifView, whatif_command

    one_scope(namespace, all_namespaces)
    view = WhatifView(output_of(output, wide=True), namespace)
    raise typer.Exit(
        whatif_command([snapshot], changes, duration, seed, out_dir, console(), console(stderr=True), view)
    )


@app.command()
def startup(
    dumps: Annotated[
        list[Path] | None,
        typer.Argument(help="kubectl get pods,nodes,events -A -o json output, or a snapshot directory."),
    ] = None,
    out_dir: Annotated[
        Path, typer.Option("--out", help="Directory for summary.json, report.html (and calibration.yaml).")
    ] = Path("out"),
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Only this namespace's pods.")
    ] = None,
    all_namespaces: AllNamespacesOption = False,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Pods created since: a span before the reading (2h, 7d), or a time."),
    ] = None,
    watch: Annotated[
        bool, typer.Option("--watch", help="Watch the live cluster, recording what objects do not keep.")
    ] = False,
    watch_for: Annotated[
        str | None, typer.Option("--for", help="With --watch: how long to watch (default: until Ctrl-C).")
    ] = None,
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate",
            help="Also write calibration.yaml: the measured stages as a change file for whatif.",
        ),
    ] = False,
    group_label: Annotated[
        str | None, typer.Option("--group-label", help="The node label (or annotation) naming its group.")
    ] = None,
    output: OutputOption = None,
) -> None:
    """Measure, for every pod, where the time from creation to serving went, as summary.json and report.html.

    The stages: scheduling, waiting for a node, image pull, container start, readiness; from a dump
    (- reads stdin) or a live cluster, with percentiles per stage.
    """
    from gpufleet.experiments.startup_command import StartupOptions, startup_command

    one_scope(namespace, all_namespaces)

    options = StartupOptions(
        dumps=list(dumps or []),
        out_dir=out_dir,
        kubeconfig=kubeconfig,
        context=context,
        namespace=namespace,
        since=since,
        watch=watch,
        watch_for=watch_for,
        calibrate=calibrate,
        group_label=group_label,
        output=output_of(output),
    )
    raise typer.Exit(startup_command(options, console(), console(stderr=True)))


describe_app = typer.Typer(
    no_args_is_help=True, help="Show one object in kubectl describe's layout.", **TYPER_SETTINGS
)
app.add_typer(describe_app, name="describe")


def _describe(
    read: Callable[[list[Path]], dict[str, Any]],
    render: "Callable[[dict[str, Any], Console], None]",
    paths: list[Path] | None,
    summary: Path | None,
    output: str | None,
) -> None:
    """What every ``describe`` command does: read the object from the files given (the embedded default
    scenario without files or ``--summary``), then print it as ``-o`` asks or in kubectl's layout; what stops
    it, one line each on stderr and exit status 2."""
    from gpufleet.experiments.describe_command import DescribeError

    fmt = output_of(output)
    given = list(paths or ([] if summary is not None else [default_scenario_path()]))
    try:
        described = read(given)
    except DescribeError as exc:
        raise fail(exc.lines) from None
    if fmt is not None:
        print_data(described, fmt)
    else:
        render(described, console())


@describe_app.command("pod")
def describe_pod(
    name: Annotated[str, typer.Argument(help="The pod: NS/NAME, or NAME (in -n, default, or its only one).")],
    paths: PathsArg = None,
    summary: Annotated[
        Path | None,
        typer.Option("--summary", help="A saved summary.json to read the pod from (- reads stdin)."),
    ] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="The pod's namespace.")] = None,
    output: OutputOption = None,
) -> None:
    """Describe one pod as kubectl describe pod does, with its events and start-up stages.

    From a scenario simulated here (or the embedded default), a saved summary.json (--summary), or a
    kubectl dump (kubectl get pods,events -A -o json: its pods carry a status), with gpufleet's
    explanation for a pending pod.
    """
    from gpufleet.experiments.describe_command import describe_pod as read_described
    from gpufleet.report.describe import render_described

    _describe(
        lambda given: read_described(name, given, summary, namespace),
        render_described,
        paths,
        summary,
        output,
    )


@describe_app.command("node")
def describe_node(
    name: Annotated[str, typer.Argument(help="The node's name.")],
    paths: PathsArg = None,
    summary: Annotated[
        Path | None,
        typer.Option("--summary", help="A saved summary.json to read the node from (- reads stdin)."),
    ] = None,
    output: OutputOption = None,
) -> None:
    """Describe one node as kubectl describe node does, then its GPU devices and the pending pods.

    From a scenario simulated here (or the embedded default), a saved summary.json (--summary), or a
    kubectl dump (kubectl get nodes,pods,events -A -o json: its pods carry a status). Below kubectl's
    part, gpufleet's: which pod holds each GPU device (MIG instances, shares), which are free, and for
    each pending pod what keeps it off this node.
    """
    from gpufleet.experiments.describe_node_command import describe_node as read_described
    from gpufleet.report.describe_node import render_node

    _describe(lambda given: read_described(name, given, summary), render_node, paths, summary, output)


@describe_app.command("job")
def describe_job(
    name: Annotated[str, typer.Argument(help="The Job: NS/NAME, or NAME (in -n, default, or its only one).")],
    paths: PathsArg = None,
    summary: Annotated[
        Path | None,
        typer.Option("--summary", help="A saved summary.json to read the Job from (- reads stdin)."),
    ] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="The Job's namespace.")] = None,
    output: OutputOption = None,
) -> None:
    """Describe one Job as kubectl describe job does, then its conditions, pods and pending pods.

    From a scenario simulated here (or the embedded default), a saved summary.json (--summary), or a
    kubectl dump (kubectl get jobs,pods,events -A -o json: its pods carry a status). Below kubectl's
    part, gpufleet's: when each condition first held, each pod's node, times, final state, exit code
    and restarts, and why each pending pod waits.
    """
    from gpufleet.experiments.describe_job_command import describe_job as read_described
    from gpufleet.report.describe_job import render_job

    _describe(
        lambda given: read_described(name, given, summary, namespace), render_job, paths, summary, output
    )


@describe_app.command("hpa")
def describe_hpa(
    name: Annotated[str, typer.Argument(help="The HPA: NS/NAME, or NAME (in -n, default, or its only one).")],
    paths: PathsArg = None,
    summary: Annotated[
        Path | None,
        typer.Option("--summary", help="A saved summary.json to read the HPA from (- reads stdin)."),
    ] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="The HPA's namespace.")] = None,
    output: OutputOption = None,
) -> None:
    """Describe one HorizontalPodAutoscaler as kubectl describe hpa does, then its replica history.

    From a scenario simulated here (or the embedded default; a KEDA ScaledObject's HPA is named as KEDA
    names it, keda-hpa-NAME), a saved summary.json (--summary), or a kubectl dump (kubectl get
    hpa,deployments,pods,events -A -o json). Below kubectl's part, gpufleet's: when each condition last
    changed, every rescale (time, from, to, reason) and, where the HPA is held (at maxReplicas, rate
    limited, stabilized, not scaling), why.
    """
    from gpufleet.experiments.describe_hpa_command import describe_hpa as read_described
    from gpufleet.report.describe_hpa import render_hpa

    _describe(
        lambda given: read_described(name, given, summary, namespace), render_hpa, paths, summary, output
    )


def main() -> None:
    from gpufleet.collector import frozen_for_exit

    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except CannotCreate as exc:  # an output directory a user named (``--out``) that cannot be made
        say(str(exc), stderr=True)
        sys.exit(2)
    except OSError as exc:  # a file in a directory a user named that cannot be read or written
        line = file_system_line(exc)
        if line is None:
            raise
        say(line, stderr=True)
        sys.exit(2)
    finally:
        frozen_for_exit()
