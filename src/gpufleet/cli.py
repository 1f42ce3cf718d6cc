"""The ``gpufleet`` command: simulate, validate and explain.

Bad input never produces a traceback: every problem is printed on its own line
(``FILE: document N (Kind/name): field.path: what is wrong``) and the command exits 2.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.node import Node
from gpufleet.model.scenario import Scenario
from gpufleet.report import finished_summary, print_summary, render_html
from gpufleet.scheduling.profile import ProfileError
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary
from gpufleet.traces.base import TracePod

if TYPE_CHECKING:
    from gpufleet.live.client import LiveCluster
    from gpufleet.live.snapshot import SnapshotResult
    from gpufleet.model.scheduler_config import SchedulerConfig

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="GPU-aware Kubernetes scheduling and cluster simulation."
)
err = Console(stderr=True)
out = Console()

PathsArg = Annotated[list[Path] | None, typer.Argument(help="Scenario files or directories (YAML or JSON).")]


def fail(lines: list[str]) -> typer.Exit:
    for line in lines:
        err.print(line, markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(2)


def default_scenario_path() -> Path:
    return Path(str(resources.files("gpufleet") / "examples" / "default.yaml"))


def load(paths: list[Path] | None) -> Scenario:
    try:
        return load_scenario(list(paths) if paths else [default_scenario_path()])
    except ScenarioError as exc:
        raise fail(exc.problems) from None


def make_simulation(scenario: Scenario, seed: int | None) -> Simulation:
    try:
        return Simulation(scenario, seed=seed)
    except ProfileError as exc:
        raise fail([f"KubeSchedulerConfiguration: {exc}"]) from None


@app.command()
def simulate(
    paths: PathsArg = None,
    out_dir: Annotated[
        Path, typer.Option("--out", help="Directory for summary.json and report.html.")
    ] = Path("out"),
    seed: Annotated[int | None, typer.Option(help="Random seed (overrides Simulation spec.seed).")] = None,
) -> None:
    """Run a scenario (or the embedded default) and write summary.json and report.html."""
    scenario = load(paths)
    sim = make_simulation(scenario, seed)
    for warning in scenario.warnings:  # summary.json keeps them too
        err.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    with Progress(
        TextColumn("simulating"),
        BarColumn(),
        TextColumn("{task.fields[t]}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as progress:
        task = progress.add_task("sim", total=1.0, t="")

        def tick(now: float, limit: float) -> None:
            progress.update(task, completed=min(now / limit, 1.0) if limit else 1.0, t=f"t={now:,.0f}s")

        sim.run(progress=tick)
    summary = finished_summary(build_summary(sim))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    (out_dir / "report.html").write_text(render_html(summary))
    print_summary(summary, out)
    out.print(f"wrote {out_dir / 'summary.json'} and {out_dir / 'report.html'}", highlight=False)


@app.command()
def validate(paths: Annotated[list[Path], typer.Argument(help="Scenario files or directories.")]) -> None:
    """Check a scenario without running it, and print what would be simulated."""
    scenario = load(paths)
    sim = make_simulation(scenario, None)
    out.print(f"nodes: {sim.state.size_active} ({sim.cluster.gpus_total():g} GPUs)", highlight=False)
    kinds = Counter(type(w).__name__ for w in scenario.other_workloads)  # registered workload kinds
    out.print(
        f"pods: {len(scenario.pods)}  jobs: {len(scenario.jobs)}  deployments: {len(scenario.deployments)}  "
        f"daemonsets: {len(scenario.daemonsets)}  pod groups: {len(scenario.pod_groups)}"
        + "".join(f"  {kind}s: {n}" for kind, n in sorted(kinds.items())),
        highlight=False,
    )
    if scenario.owned:  # controllers that adopt their pods of a snapshot (kube.adoption)
        adopted = (f"{key} ({len(owned.pods)} pods)" for key, owned in scenario.owned.items())
        out.print(f"adopted by their controllers: {', '.join(adopted)}", highlight=False, soft_wrap=True)
    for s in sim.schedulers:
        for name, profile in s.profiles.items():
            out.print(
                f"scheduler {s.name}: profile {name}: plugins {', '.join(profile.plugin_names)}",
                highlight=False,
            )
    for warning in scenario.warnings:
        out.print(f"warning: {warning}", markup=False, highlight=False)
    out.print("valid", highlight=False)


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


def connect_live(kubeconfig: Path | None, context: str | None) -> LiveCluster:
    """The cluster kubectl would talk to with these flags; a configuration problem exits 2."""
    from gpufleet.live.client import LiveError, connect

    try:
        return connect(kubeconfig, context)
    except LiveError as exc:
        raise fail([str(exc)]) from None


def live_scope(cluster: LiveCluster, namespace: str | None, all_namespaces: bool) -> str | None:
    """The namespace to read as kubectl chooses it (``-A``: None, all of them), or exit 2 for both."""
    if namespace is not None and all_namespaces:
        raise fail(["--namespace and --all-namespaces: give one of them"])
    if all_namespaces:
        return None
    return namespace or str(cluster.config.namespace or "default")


def read_live(cluster: LiveCluster, out_dir: Path, namespace: str | None) -> SnapshotResult:
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
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the <kind>.json files.")],
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    namespace: NamespaceOption = None,
    all_namespaces: AllNamespacesOption = False,
) -> None:
    """Read a live cluster (nodes, pods, their controllers, autoscalers, queues, DRA objects, recent
    events) into a directory that simulate, explain, validate and whatif read as they are."""
    cluster = connect_live(kubeconfig, context)
    result = read_live(cluster, out_dir, live_scope(cluster, namespace, all_namespaces))
    for warning in result.warnings:
        out.print(f"warning: {warning}", markup=False, highlight=False)
    counts = ", ".join(f"{n} {stem}" for stem, n in result.counts.items() if n)
    out.print(
        f"wrote {out_dir} from {result.server} in {result.seconds:.1f} s: {counts or 'no objects'}",
        highlight=False,
        soft_wrap=True,
    )


@app.command()
def explain(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Cluster state: kubectl get nodes,pods -A -o json, YAML, or a snapshot."),
    ] = None,
    pod: Annotated[str | None, typer.Option("--pod", help="Only this pod (NS/NAME).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    namespace: NamespaceOption = None,
    all_namespaces: AllNamespacesOption = False,
) -> None:
    """Say why each pending pod cannot be placed, as kube-scheduler would and beyond: on files, or
    (without files) on the live cluster of the kubeconfig."""
    import tempfile

    from gpufleet.kube.explain import explain_scenario, render_explanations

    live = kubeconfig is not None or context is not None or namespace is not None or all_namespaces
    if paths and live:
        raise fail(["give files or a live cluster (--kubeconfig, --context, -n, -A), not both"])
    if paths:
        scenario = load(paths)
    else:
        cluster = connect_live(kubeconfig, context)
        scope = live_scope(cluster, namespace, all_namespaces)
        with tempfile.TemporaryDirectory(prefix="gpufleet-explain-") as tmp:
            read = read_live(cluster, Path(tmp), scope)
            err.print(f"read {read.objects} objects in {read.seconds:.1f} s", highlight=False)
            scenario = load([Path(tmp)])
    try:
        explanations = explain_scenario(scenario, only=pod)
    except ProfileError as exc:
        raise fail([f"KubeSchedulerConfiguration: {exc}"]) from None
    except KeyError as exc:
        raise fail([f"--pod: {exc.args[0]}"]) from None
    if as_json:
        out.print_json(json.dumps(explanations))
    else:
        render_explanations(explanations, out)


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
    """Schedule the pods of the configuration's profiles on a live cluster, with the same plugins as in
    simulation: gangs, GPU devices, shares, topology, preemption (docs/scheduler.md)."""
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
    err.print(f"gpufleet scheduler: profiles {profiles}{' (dry run)' if dry_run else ''}", highlight=False)
    raise typer.Exit(live.run())


def check_reachable(cluster: LiveCluster) -> None:
    """One page of one Node: an unreachable server, refused credentials or a missing right exit 2."""
    from gpufleet.live.client import LiveError
    from gpufleet.live.kinds import KINDS

    try:
        next(cluster.list_pages(KINDS["nodes"], page_size=1))
    except LiveError as exc:
        raise fail([str(exc)]) from None
    finally:
        cluster.close()


def load_scheduler_config(path: Path) -> SchedulerConfig:
    """The one KubeSchedulerConfiguration of ``path``, checked as a scenario's would be; its plugins must
    all be implemented (a live scheduler cannot judge without them). Problems exit 2."""
    from gpufleet.scheduling import registry
    from gpufleet.scheduling.profile import build_profiles

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
            err.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    return config


@app.command()
def inventory(
    as_yaml: Annotated[
        bool, typer.Option("--yaml", help="Write a v1 Node manifest (GPU Feature Discovery labels) instead.")
    ] = False,
    node_name: Annotated[
        str | None, typer.Option("--node-name", help="Node name for --yaml (default: this host's name).")
    ] = None,
) -> None:
    """Read this machine's GPUs through NVML and print them, or write them as a Node manifest."""
    from gpufleet.devices import inventory_command

    raise typer.Exit(inventory_command(as_yaml, node_name))


trace_app = typer.Typer(no_args_is_help=True, help="Public GPU cluster traces.")
app.add_typer(trace_app, name="trace")

FormatOption = Annotated[str, typer.Option("--format", help="Trace format (openb: Alibaba GPU trace 2023).")]


def read_trace(fmt: str, nodes: Path, pods: Path) -> tuple[list[Node], list[TracePod]]:
    """The node and pod lists of a trace; bad rows exit 2, one line each (FILE:LINE: column: problem)."""
    from gpufleet.traces.base import TraceError
    from gpufleet.traces.formats import FORMATS

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
    nodes: Annotated[Path, typer.Option("--nodes", help="The trace's node list (CSV).")],
    pods: Annotated[Path, typer.Option("--pods", help="The trace's pod list (CSV).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for nodes.yaml and pods.yaml.")],
    fmt: FormatOption = "openb",
) -> None:
    """Write a trace as Kubernetes manifests (nodes, pods, and a Simulation lasting until the last
    deletion) that ``gpufleet simulate`` replays in time."""
    import yaml

    from gpufleet.traces.manifests import node_manifest, pod_manifest, simulation_manifest

    loaded_nodes, loaded_pods = read_trace(fmt, nodes, pods)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, docs in (
        ("nodes.yaml", [node_manifest(n) for n in loaded_nodes]),
        ("pods.yaml", [pod_manifest(p) for p in loaded_pods]),
        ("simulation.yaml", [simulation_manifest(loaded_pods, pods.stem)]),
    ):
        (out_dir / name).write_text(yaml.safe_dump_all(docs, sort_keys=False))
    out.print(
        f"wrote {out_dir / 'nodes.yaml'} ({len(loaded_nodes)} nodes) and {out_dir / 'pods.yaml'} "
        f"({len(loaded_pods)} pods)",
        highlight=False,
    )


@app.command()
def replay(
    nodes: Annotated[Path, typer.Option("--nodes", help="The trace's node list (CSV).")],
    pods: Annotated[Path, typer.Option("--pods", help="The trace's pod list (CSV).")],
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
) -> None:
    """Replay a trace by a published protocol and write DIR/replay.json (allocation and fragmentation
    per arrived percent of GPU request, unallocated GPUs at 100 %)."""
    from gpufleet.replay.fgd_protocol import POLICIES
    from gpufleet.replay.fgd_protocol import replay as run_replay

    if protocol != "fgd":
        raise fail([f"--protocol: unknown protocol {protocol!r} (known: fgd)"])
    if policy not in POLICIES:
        raise fail([f"--policy: unknown policy {policy!r} (known: {', '.join(POLICIES)})"])
    loaded_nodes, loaded_pods = read_trace(fmt, nodes, pods)
    if not any(n.capacity.get("nvidia.com/gpu", 0) for n in loaded_nodes):
        raise fail([f"{nodes}: no GPU nodes: the FGD protocol replays onto GPU nodes only"])
    result = run_replay(loaded_nodes, [p.pod for p in loaded_pods], policy, seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "replay.json").write_text(json.dumps(result.to_json(), indent=1) + "\n")
    out.print(
        f"{policy} seed {seed}: {result.pods_total} pods ({result.pods_failed} failed), unallocated GPUs at "
        f"100 % arrived: {result.unallocated_gpu_pct_at_100} %, fragmentation ratio "
        f"{result.frag_ratio_pct[100]} %; {result.seconds:.2f} s; wrote {out_dir / 'replay.json'}",
        highlight=False,
    )


JobsOption = Annotated[
    int | None, typer.Option("--jobs", help="Runs at once, in separate processes (default: the CPU count).")
]


@app.command()
def compare(
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for compare.json and report.html.")],
    nodes: Annotated[Path | None, typer.Option("--nodes", help="The trace's node list (CSV).")] = None,
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
) -> None:
    """Replay every (trace, policy, seed) by the FGD paper's protocol, or simulate every (scenario
    variant, seed), and write DIR/compare.json and DIR/report.html (statistics over seeds; median
    allocation curves, or cost against p95 pending-to-working time)."""
    from gpufleet.experiments.commands import compare_command

    raise typer.Exit(
        compare_command(
            nodes, pods or [], policy or [], seeds, out_dir, jobs, fmt, out, err, scenario or [], grid
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
) -> None:
    """Run a parameter grid of FGD-protocol replays or of scenario simulations, one line per run in
    DIR/results.jsonl as each finishes; runs already there are not done again."""
    from gpufleet.experiments.commands import ray_address_from, sweep_command

    raise typer.Exit(sweep_command(grid, out_dir, jobs, ray_address_from(ray), out, err))


@app.command()
def optimum(
    nodes: Annotated[Path, typer.Option("--nodes", help="The trace's node list (CSV).")],
    pods: Annotated[Path, typer.Option("--pods", help="The trace's pod list (CSV).")],
    max_nodes: Annotated[int, typer.Option("--max-nodes", help="The first N GPU nodes of the list.")] = 20,
    load: Annotated[float, typer.Option("--load", help="GPU request as a share of their GPUs.")] = 1.3,
    seed: Annotated[int, typer.Option("--seed", help="Shuffle and tuning seed.")] = 42,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds for the solver.")] = 60.0,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Directory for optimum.json.")] = None,
    fmt: FormatOption = "openb",
) -> None:
    """On a small slice of a trace, each FGD-protocol policy's allocated GPUs once all pods arrived
    against the exact optimum of the same pods (HiGHS, the ``optimum`` extra)."""
    from rich.table import Table

    from gpufleet.replay.optimum import OptimumUnavailable, compare_to_optimum, require_solver

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
    best = doc["optimum"]
    label = "optimum" if best["optimal"] else "upper bound"
    table = Table(title=f"allocated GPUs of {doc['gpus']} ({doc['nodes']} nodes, load {load:g}, seed {seed})")
    for column in ("policy", "allocated GPUs", f"gap to {label} %"):
        table.add_column(column, justify="left" if column == "policy" else "right")
    table.add_row(label, f"{best['bound_milli'] / 1000:.2f}", "")
    for row in doc["policies"]:
        table.add_row(row["policy"], f"{row['allocated_milli'] / 1000:.2f}", f"{row['gap_pct']:.2f}")
    out.print(table)
    solved = (
        f"exact, {best['seconds']:.1f} s"
        if best["optimal"]
        else (
            f"{best['status']} after {best['seconds']:.1f} s, best placement found "
            f"{best['allocated_milli'] / 1000:.2f} GPUs"
        )
    )
    out.print(
        f"{label}: {solved}; {doc['pods_total']} pods asking {doc['gpu_request_milli'] / 1000:.2f} GPUs",
        highlight=False,
        soft_wrap=True,
    )
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "optimum.json").write_text(json.dumps(doc, indent=1) + "\n")
        out.print(f"wrote {out_dir / 'optimum.json'}", highlight=False)


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
    priority_classes: Annotated[
        Path | None,
        typer.Option("--priority-classes", help="The cluster's PriorityClasses (kubectl get ... -o yaml)."),
    ] = None,
) -> None:
    """Replay last week: the pods and nodes kube-state-metrics recorded in Prometheus, as a scenario
    (one pod per real pod with its submit time and duration, grouped into its Jobs and gangs)."""
    from gpufleet.experiments.history_command import history_command

    raise typer.Exit(history_command(prometheus, since, until, namespace, out_dir, priority_classes))


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
) -> None:
    """Simulate a snapshot forward as it is and with changes (another scheduler configuration, gangs,
    more or warm nodes, another expander, a priority), and show side by side which pending pods
    start, when, and at what cost."""
    from gpufleet.experiments.whatif_command import whatif_command

    raise typer.Exit(whatif_command([snapshot], changes, duration, seed, out_dir, out, err))


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
) -> None:
    """Measure, for every pod, where the time from creation to serving went (scheduling, waiting for a
    node, image pull, container start, readiness), from a dump or a live cluster, as summary.json and
    report.html, with percentiles per stage."""
    from gpufleet.experiments.startup_command import StartupOptions, startup_command

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
    )
    raise typer.Exit(startup_command(options, out, err))


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
