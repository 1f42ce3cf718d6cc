"""``gpufleet simulate --metrics-out`` read by a real Prometheus (Debian's package, as
``e2e.prometheus`` fetches it): seed 003's HPA scale-out on cold L4 nodes written as OpenMetrics,
loaded with ``promtool tsdb create-blocks-from openmetrics``, served on loopback, and queried over
the HTTP API; what PromQL answers is what the run's summary says."""

from __future__ import annotations

import json
import subprocess
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from e2e.controlplane import free_port

from conftest import ROOT, _unavailable, wait_until
from gpufleet.kube import load_scenario
from gpufleet.live.prometheus_api import PrometheusAPI
from gpufleet.report import finished_summary
from gpufleet.report.openmetrics import DEFAULT_START, parse_start, write_openmetrics
from gpufleet.sim.exporter_scrapes import ExporterScrapes
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

EXAMPLE = ROOT / "examples" / "seed-003" / "hpa-cold-nodes.yaml"
START = parse_start(DEFAULT_START)
LOOKBACK = "90s"  # docs/grafana.md: above the file's 60 s repeat, so ended series linger little


@dataclass(frozen=True)
class Loaded:
    summary: dict[str, Any]
    api: PrometheusAPI
    end: float  # Unix time of the run's end

    def range(self, expr: str, step_s: float) -> list[tuple[float, float]]:
        """``/api/v1/query_range`` over the run: the one series' (time, value) points."""
        form = {"query": expr, "start": str(START), "end": str(self.end), "step": str(step_s)}
        request = urllib.request.Request(
            f"{self.api.url}/api/v1/query_range", data=urllib.parse.urlencode(form).encode()
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            (series,) = json.load(response)["data"]["result"]
        return [(float(t), float(v)) for t, v in series["values"]]

    def value(self, expr: str) -> float:
        """The one value ``expr`` has at the run's end."""
        ((_, value),) = self.api.query(expr, self.end)
        return value


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    from e2e import prometheus as server

    try:
        prometheus = server.binary()
    except server.PrometheusUnavailable as exc:
        _unavailable(str(exc), "Prometheus")
    promtool = prometheus.with_name("promtool")
    if not promtool.is_file():
        _unavailable(f"no promtool beside {prometheus}", "promtool")
    work = tmp_path_factory.mktemp("prometheus")
    sim = Simulation(load_scenario([EXAMPLE]))
    sim.metrics = ExporterScrapes()
    sim.run()
    write_openmetrics(work / "metrics.om", sim.metrics.families(), START)
    blocks = subprocess.run(
        [
            str(promtool),
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            str(work / "metrics.om"),
            str(work / "data"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert blocks.returncode == 0, blocks.stderr
    (work / "prometheus.yml").write_text("scrape_configs: []\n")
    url = f"http://127.0.0.1:{free_port()}"
    with (work / "prometheus.log").open("w") as log:
        proc = subprocess.Popen(
            [
                str(prometheus),
                f"--config.file={work / 'prometheus.yml'}",
                f"--storage.tsdb.path={work / 'data'}",
                f"--web.listen-address={url.removeprefix('http://')}",
                f"--query.lookback-delta={LOOKBACK}",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until("prometheus /-/ready", lambda: _ready(url) or proc.poll() is not None)
        assert proc.poll() is None, (work / "prometheus.log").read_text()
        yield Loaded(finished_summary(build_summary(sim)), PrometheusAPI(url), START + sim.end_time)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_pods_by_phase_at_the_end_are_the_summarys(loaded: Loaded) -> None:
    # every series still there at the end has a sample at the end: a 1 s window keeps out the pods
    # deleted within the lookback (a backfilled block has no staleness markers)
    answer = loaded.api.query("sum by (phase) (last_over_time(kube_pod_status_phase[1s]))", loaded.end)
    phases = {labels["phase"]: value for labels, value in answer if value}
    present = Counter(p["phase"] for p in loaded.summary["pods"] if p["deleted_s"] is None)
    assert phases == dict(present)
    assert phases["Running"] == loaded.summary["totals"]["pods_running"] == 5


def test_gpus_allocated_at_the_end_are_the_summarys(loaded: Loaded) -> None:
    requests = 'last_over_time(kube_pod_container_resource_requests{resource="nvidia_com_gpu",node!=""}[1s])'
    holding = 'sum by (uid) (last_over_time(kube_pod_status_phase{phase=~"Pending|Running"}[1s]))'
    held = loaded.value(f"sum({requests} * on (uid) group_left () {holding})")
    assert held == loaded.summary["totals"]["gpus_allocated"] == 5
    assert loaded.value('count(last_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=""}[1s]))') == 5


def test_nodes_over_time_are_the_summarys_timeline(loaded: Loaded) -> None:
    points = loaded.range('sum(cluster_autoscaler_nodes_count{state=~"ready|unready"})', 60)
    timeline = loaded.summary["timeline"]
    nodes = dict(zip(timeline["t_s"], timeline["nodes"], strict=True))
    assert [(t - START, v) for t, v in points] == [(t - START, nodes[t - START]) for t, _ in points]
    assert len(points) == 121 and max(v for _, v in points) > 2  # every minute of 2 h; it scaled out


def test_the_scale_ups_counted_are_the_summarys(loaded: Loaded) -> None:
    events = loaded.summary["autoscaler_events"]
    launched = sum(len(e["nodes"]) for e in events if e["kind"] == "scale-up")
    assert loaded.value("cluster_autoscaler_scaled_up_nodes_total") == launched > 0
    # a node is counted once deleted (RegisterAndRecordSuccessfulScaleDownEvent), not as its scale-down starts
    gone = {n["name"] for n in loaded.summary["nodes"] if n["deleted_s"] is not None}
    removed = sum(1 for e in events if e["kind"] == "scale-down" for n in e["nodes"] if n in gone)
    assert loaded.value("sum(cluster_autoscaler_scaled_down_nodes_total)") == removed
