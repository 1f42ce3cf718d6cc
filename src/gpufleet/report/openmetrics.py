"""The simulated timeline as an OpenMetrics text file (``gpufleet simulate --metrics-out``), for
``promtool tsdb create-blocks-from openmetrics`` to load into Prometheus, where Grafana dashboards
and PromQL read it as they read a cluster's exporters (``docs/grafana.md``).

The format is the OpenMetrics 1.0 text exposition (prometheus.io/docs/specs/om/open_metrics_spec):
per metric family ``# HELP`` and ``# TYPE`` and then its samples, each series' samples together and
in time order, every sample with its timestamp in seconds; a counter's samples are named
``<family>_total``; the file ends with ``# EOF``. Simulated time 0 is ``start`` (a Unix time):
a fixed epoch by default, so the same run gives the same bytes.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from gpufleet.model.named_paths import made_directory

Labels = tuple[tuple[str, str], ...]


class MetricFamily(Protocol):
    """A metric family with its series (``sim.exporter_scrapes.ScrapedFamily``): each series'
    samples, (simulated seconds, value) in time order."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...  # "gauge" | "counter"
    @property
    def help(self) -> str: ...
    @property
    def series(self) -> Mapping[Labels, Sequence[tuple[float, float]]]: ...


#: where simulated time 0 lies unless ``--metrics-start`` says otherwise
DEFAULT_START = "2025-01-01T00:00:00Z"


def parse_start(text: str) -> float:
    """``--metrics-start``: an RFC 3339 time (``2025-01-01T00:00:00Z``, ``...+02:00``) or ``now``, as a
    Unix time. Raises ``ValueError`` for anything else (and for a time without a zone)."""
    if text == "now":
        return float(int(time.time()))
    try:
        parsed = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise ValueError(f"{text!r} is not an RFC 3339 time (like {DEFAULT_START}) nor 'now'") from None
    if parsed.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone (end it with Z or an offset like +02:00)")
    return parsed.timestamp()


def rfc3339(unix_s: float) -> str:
    return datetime.fromtimestamp(unix_s, UTC).isoformat().replace("+00:00", "Z")


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def _labels(labels: Labels) -> str:
    shown = [f'{k}="{_escape(v)}"' for k, v in labels if v != ""]  # Prometheus drops empty labels
    return "{" + ",".join(shown) + "}" if shown else ""


def openmetrics_text(families: Iterable[MetricFamily], start: float) -> str:
    """The families' series, simulated time ``t`` at Unix time ``start + t``."""
    lines: list[str] = []
    for family in families:
        lines.append(f"# HELP {family.name} {_escape(family.help)}")
        lines.append(f"# TYPE {family.name} {family.type}")
        sample = f"{family.name}_total" if family.type == "counter" else family.name
        for labels, points in family.series.items():
            head = sample + _labels(labels)
            lines.extend(f"{head} {_number(value)} {_number(round(start + t, 3))}" for t, value in points)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def write_openmetrics(path: Path, families: Iterable[MetricFamily], start: float) -> None:
    made_directory(path.parent)
    path.write_text(openmetrics_text(families, start))
