"""``gpufleet snapshot``: a live cluster written as a scenario directory, one ``<kind>.json`` per
kind, each the ``kind: List`` that ``kubectl get <kind> -o json`` prints (objects with their
``apiVersion`` and ``kind``, ``managedFields`` left out as kubectl leaves them out), so that
``simulate``, ``explain`` and ``validate`` read it as they read any kubectl dump.

Objects are written page by page as they are read, so the memory held is one page whatever the
cluster's size. With a namespace (``-n``), namespaced kinds are read in that namespace only, but
the pods of other namespaces that hold a node's resources (bound and not finished) are read too:
without them every node would look emptier than it is. ``SNAPSHOT.md`` says where and when the
snapshot was taken, how many objects of each kind it holds, and what was skipped.

When it was taken is also where the loader reads it: ``simulation.json``, a gpufleet ``Simulation`` whose
``spec.startTime`` is the snapshot's time, so that a run of the snapshot (``simulate``, ``explain``,
``whatif``) has its time 0 there (a NotReady node's times, a KEDA cron trigger's windows), not at the
latest time a Node shows or the Unix epoch. A snapshot directory that already holds a Simulation (a file
the user put there, which a new snapshot does not remove) keeps its own: a scenario has one.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import yaml

from gpufleet.live.client import LiveCluster, NotServed
from gpufleet.live.kinds import KINDS, KindRef
from gpufleet.model.named_paths import made_directory

#: the file of the Simulation a snapshot writes (a ``*.json``: a later snapshot removes it with the lists)
SIMULATION_FILE = "simulation.json"
#: the files a directory contributes to a scenario (``kube.documents.MANIFEST_SUFFIXES``)
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_SAFE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: pods of other namespaces that hold node resources (API field selectors on pods)
_HOLDING_NODE = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"


@dataclass
class SnapshotResult:
    out_dir: Path
    server: str
    taken_at: str
    namespace: str | None
    counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: the file of the Simulation written with ``spec.startTime`` (None: the directory had one)
    simulation: str | None = None

    @property
    def objects(self) -> int:
        return sum(self.counts.values())


class _ListWriter:
    """One ``kind: List`` JSON file written an object at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._file: IO[str] | None = None

    def add(self, items: list[dict[str, Any]]) -> None:
        for item in items:
            if self._file is None:
                self._file = self.path.open("w")
                self._file.write('{"apiVersion": "v1", "kind": "List", "items": [\n')
            else:
                self._file.write(",\n")
            # (``json.dumps``, not ``json.dump``: only a whole encoding takes the C encoder; ``dump`` walks
            # the object in Python, 4.6x the CPU for the same bytes)
            self._file.write(json.dumps(item, separators=(",", ":"), sort_keys=True))
            self.count += 1

    def close(self) -> None:
        if self._file is not None:
            self._file.write("\n]}\n")
            self._file.close()


def take_snapshot(
    cluster: LiveCluster,
    out_dir: Path,
    namespace: str | None = None,
    kinds: dict[str, KindRef] | None = None,
) -> SnapshotResult:
    """Read every kind of ``kinds`` (default: all of ``KINDS``) into ``out_dir``; ``namespace`` None
    reads all namespaces. Kinds the cluster does not serve are skipped with a warning; other errors
    (unreachable, forbidden) are ``LiveError``s."""
    started = time.monotonic()
    made_directory(out_dir)
    for stale in out_dir.glob("*.json"):
        stale.unlink()
    result = SnapshotResult(
        out_dir, cluster.server, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), namespace
    )
    for stem, kind in (kinds or KINDS).items():
        writer = _ListWriter(out_dir / f"{stem}.json")
        try:
            for items, _ in cluster.list_pages(kind, namespace if kind.namespaced else None):
                writer.add(items)
            if kind.kind == "Pod" and namespace is not None:
                elsewhere = f"{_HOLDING_NODE},metadata.namespace!={namespace}"
                for items, _ in cluster.list_pages(kind, None, field_selector=elsewhere):
                    writer.add(items)
        except NotServed as exc:
            result.warnings.append(f"skipped {exc}")
            continue
        finally:
            writer.close()
        result.counts[stem] = writer.count
    if not _has_simulation(out_dir, {out_dir / f"{stem}.json" for stem in result.counts}):
        _write_simulation(out_dir / SIMULATION_FILE, result.taken_at)
        result.simulation = SIMULATION_FILE
    result.warnings += cluster.warnings
    result.seconds = time.monotonic() - started
    (out_dir / "SNAPSHOT.md").write_text(_describe(result))
    return result


def _has_simulation(out_dir: Path, written: set[Path]) -> bool:
    """Whether a manifest under ``out_dir`` (``*.yaml``, ``*.yml``, ``*.json``, as the loader reads a
    directory, names starting with ``.`` left out) other than the lists just ``written`` holds a gpufleet
    ``Simulation`` (any version; a ``kind: List``'s items too). A file that does not parse holds none here:
    the loader reports it. (The live backend reads no manifests otherwise: the loader, ``kube.documents``,
    is its peer, not its dependency.)"""
    for path in sorted(out_dir.rglob("*")):
        if (
            path.suffix.lower() not in MANIFEST_SUFFIXES
            or path in written
            or any(part.startswith(".") for part in path.relative_to(out_dir).parts)
            or not path.is_file()
        ):
            continue
        try:
            documents = list(yaml.load_all(path.read_text(), Loader=_SAFE))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        if any(_is_simulation(d) for d in documents):
            return True
    return False


def _is_simulation(document: object) -> bool:
    if not isinstance(document, dict):
        return False
    if document.get("kind") == "Simulation":
        return str(document.get("apiVersion") or "").startswith("gpufleet.io/")
    found = document.get("items") if str(document.get("kind") or "").endswith("List") else None
    return isinstance(found, list) and any(_is_simulation(item) for item in found)


def _write_simulation(path: Path, taken_at: str) -> None:
    body = {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "Simulation",
        "metadata": {"name": "snapshot"},
        "spec": {"startTime": taken_at},
    }
    path.write_text(json.dumps(body, indent=2) + "\n")


def _describe(result: SnapshotResult) -> str:
    scope = f"namespace {result.namespace} (and the pods of other namespaces that hold node resources)"
    lines = [
        "# gpufleet snapshot",
        "",
        f"- server: {result.server}",
        f"- taken at: {result.taken_at} ({result.seconds:.1f} s)",
        f"- scope: {scope if result.namespace else 'all namespaces'}",
        (
            f"- time 0 of a run: {result.taken_at} ({result.simulation}: a Simulation's spec.startTime)"
            if result.simulation
            else "- time 0 of a run: the spec.startTime of the Simulation the directory holds"
        ),
        "",
        "| file | objects |",
        "|---|---|",
        *(f"| {stem}.json | {n} |" for stem, n in result.counts.items() if n),
        "",
        "Kinds read with no objects: " + (", ".join(s for s, n in result.counts.items() if not n) or "none"),
        "",
        *(f"- warning: {w}" for w in result.warnings),
    ]
    return "\n".join(lines).rstrip() + "\n"
