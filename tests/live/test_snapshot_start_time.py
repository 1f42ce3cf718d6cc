"""``gpufleet snapshot`` writes its time where the loader reads it: a gpufleet ``Simulation`` whose
``spec.startTime`` (``kube.gpufleet_kinds``) is the snapshot's time, so that a run of the snapshot has its
time 0 there: NotReady nodes' times (``model.node_readiness``), KEDA cron windows. No control plane: the
snapshot reads a recording stand-in for the API, then ``explain`` and ``whatif`` read the directory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.kube.explain import explain_scenario
from gpufleet.live import snapshot as snapshot_module
from gpufleet.live.client import NotServed
from gpufleet.live.kinds import KindRef
from gpufleet.live.snapshot import SIMULATION_FILE, take_snapshot

TAKEN = "2026-12-06T05:10:00Z"
SEEN = "2026-12-06T04:52:00Z"  # the latest time the Nodes show (their kubelets' last heartbeats)
HALTED = "cluster-autoscaler is halted at the dump's time"


def _node(name: str, ready: str, taint: str | None = None) -> dict[str, Any]:
    taints = [{"key": taint, "effect": "NoSchedule"}] if taint else []
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "creationTimestamp": "2026-12-06T04:50:00Z"},
        "spec": {"taints": taints},
        "status": {
            "capacity": {"cpu": "96", "memory": "768Gi", "pods": "110", "nvidia.com/gpu": "8"},
            "conditions": [
                {"type": "Ready", "status": ready, "lastHeartbeatTime": SEEN, "lastTransitionTime": SEEN}
            ],
        },
    }


def _pod(name: str, node: str | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            **({"nodeName": node} if node else {}),
            "containers": [
                {"name": "c", "image": "train:v1", "resources": {"limits": {"nvidia.com/gpu": 8}}}
            ],
        },
        "status": {"phase": "Running" if node else "Pending"},
    }


#: four nodes whose kubelets stopped 18 minutes before the snapshot (registered 20 minutes before it, past
#: cluster-autoscaler's 15 minutes of MaxNodeStartupTime: Unready, not NotStarted), two busy Ready ones
OBJECTS = {
    "Node": [
        *(_node(f"n{k}", "Unknown", "node.kubernetes.io/unreachable") for k in range(4)),
        _node("n4", "True"),
        _node("n5", "True"),
    ],
    "Pod": [_pod("a", "n4"), _pod("b", "n5"), _pod("train")],
}


class _Api:
    """``LiveCluster.list_pages`` over ``OBJECTS``; the kinds of CRDs are not served."""

    server = "https://api.example"

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def list_pages(
        self, kind: KindRef, namespace: str | None = None, field_selector: str | None = None
    ) -> Iterator[tuple[list[dict[str, Any]], str]]:
        if not kind.builtin:
            raise NotServed(f"{kind.resource}: not served")
        if field_selector is None and OBJECTS.get(kind.kind):
            yield OBJECTS[kind.kind], ""


def _taken_at(monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    at = datetime.fromisoformat(when)

    class _Clock(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> _Clock:
            return cls.fromtimestamp(at.timestamp(), UTC)

    monkeypatch.setattr(snapshot_module, "datetime", _Clock)


def _snapshot(
    monkeypatch: pytest.MonkeyPatch, out: Path, when: str = TAKEN
) -> snapshot_module.SnapshotResult:
    _taken_at(monkeypatch, when)
    return take_snapshot(_Api(), out)  # type: ignore[arg-type]


def test_a_snapshot_writes_its_time_as_a_simulation_s_start_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    result = _snapshot(monkeypatch, tmp_path / "snap")
    assert result.taken_at == TAKEN and result.simulation == SIMULATION_FILE
    assert json.loads((tmp_path / "snap" / SIMULATION_FILE).read_text()) == {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "Simulation",
        "metadata": {"name": "snapshot"},
        "spec": {"startTime": TAKEN},
    }
    settings = load_scenario([tmp_path / "snap"]).simulation
    assert settings.start_time_set and settings.start_time_s == datetime.fromisoformat(TAKEN).timestamp()
    assert f"- time 0 of a run: {TAKEN} (simulation.json" in (tmp_path / "snap" / "SNAPSHOT.md").read_text()


def test_a_snapshot_taken_again_writes_its_own_time_anew(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The first snapshot's ``simulation.json`` is its own (a ``*.json``, removed with the lists), not a
    Simulation the directory carries."""
    _snapshot(monkeypatch, tmp_path, "2026-12-06T04:00:00Z")
    result = _snapshot(monkeypatch, tmp_path)
    assert result.simulation == SIMULATION_FILE
    assert json.loads((tmp_path / SIMULATION_FILE).read_text())["spec"]["startTime"] == TAKEN


def test_a_directory_that_carries_a_simulation_keeps_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A scenario has one Simulation: the user's (here in a ``kind: List`` of a subdirectory) is kept."""
    mine = {"apiVersion": "gpufleet.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "mine"}}
    mine["spec"] = {"startTime": "2026-12-07T08:00:00Z", "duration": "2h"}
    (tmp_path / "settings").mkdir()
    (tmp_path / "settings" / "run.yaml").write_text(yaml.safe_dump({"kind": "List", "items": [mine]}))
    result = _snapshot(monkeypatch, tmp_path)
    assert result.simulation is None and not (tmp_path / SIMULATION_FILE).exists()
    settings = load_scenario([tmp_path]).simulation
    assert settings.start_time_s == datetime.fromisoformat("2026-12-07T08:00:00+00:00").timestamp()
    assert settings.duration_s == 7200
    assert (
        "the spec.startTime of the Simulation the directory holds" in (tmp_path / "SNAPSHOT.md").read_text()
    )


def test_explain_on_a_snapshot_counts_not_ready_nodes_at_the_snapshot_s_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """At the snapshot's time (05:10) the four NotReady nodes registered 20 minutes before: Unready, more
    than 3 and than 45 % of 6, so cluster-autoscaler is halted. (At the latest time the Nodes show, 04:52,
    they would be 2 minutes old, NotStarted, and it would not be.)"""
    _snapshot(monkeypatch, tmp_path)
    (record,) = explain_scenario(load_scenario([tmp_path]))
    assert record["pod"] == "default/train"
    assert any(h.startswith(HALTED) for h in record["diagnosis"]["hints"])
    result = CliRunner().invoke(app, ["explain", str(tmp_path), "-o", "json"])
    assert result.exit_code == 0, result.output


def test_whatif_on_a_snapshot_with_its_simulation_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``whatif`` runs on a snapshot with its Simulation: ``--for`` is set on that one (``set_duration``)."""
    _snapshot(monkeypatch, tmp_path / "snap")
    change = tmp_path / "more.yaml"
    change.write_text(yaml.safe_dump(_node("n6", "True")))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["whatif", str(tmp_path / "snap"), str(change), "--for", "5m", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert (out / "whatif.json").exists()
