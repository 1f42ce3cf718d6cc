"""The simulated cluster scraped as Prometheus scrapes a real one: every ``interval_s`` of simulated
time (15 s by default) the exporters' series (``sim.exporter_metrics``) are read and kept.

Only a run given one (``gpufleet simulate --metrics-out``) has a recorder: without it the simulation
does no scraping. A scrape reads again only the groups of series whose state changed (a pod's phase,
a node's allocatable, a GPU's holders or load); a series keeps the scrapes where its value changed
and when it ended (a pod deleted, a node gone: absent from a scrape, it ended at the one before).
``families`` writes each series out with its value repeated at least every ``repeat_s`` (60 s, well
within Prometheus' 5-minute lookback, so an instant query at any time finds it) and at its end.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpufleet.scheduling.scheduler import Outcome
from gpufleet.sim.exporter_metrics import FAMILIES, Counters, Labels, groups

if TYPE_CHECKING:
    from gpufleet.sim.simulation import Simulation

SCRAPE_INTERVAL_S = 15.0
REPEAT_S = 60.0

SeriesKey = tuple[str, Labels]  # family name, labels


@dataclass(frozen=True)
class ScrapedFamily:
    """A metric family and its series: each one's samples, (t_s, value) in time order."""

    name: str
    type: str
    help: str
    series: dict[Labels, list[tuple[float, float]]]


@dataclass
class Segment:
    """A stretch of scrapes a series was in: its value from each change on, until ``end_s``."""

    changes: list[tuple[float, float]]
    end_s: float | None = None  # None: still there


@dataclass
class _Group:
    state: Hashable
    values: dict[SeriesKey, float]
    last_s: float


class ExporterScrapes:
    def __init__(self, interval_s: float = SCRAPE_INTERVAL_S, repeat_s: float = REPEAT_S):
        self.interval_s, self.repeat_s = interval_s, repeat_s
        self.series: dict[SeriesKey, list[Segment]] = {}
        self.counters = Counters()
        self.scrapes = 0
        self.end_s = 0.0  # the last scrape
        self._next_s = 0.0
        self._groups: dict[Hashable, _Group] = {}

    def attempted(self, scheduler: str, outcome: Outcome) -> None:
        """A scheduling attempt of ``scheduler`` came out as ``outcome``."""
        self.counters.attempted(scheduler, outcome)

    def until(self, sim: Simulation, t: float) -> None:
        """Scrape at every scrape time before ``t`` (the cluster is as the last event left it)."""
        while self._next_s < t:
            self.scrape(sim, self._next_s)
            self._next_s += self.interval_s

    def finish(self, sim: Simulation, end_s: float) -> None:
        """The run ended at ``end_s``: the scrapes up to it, and one at it."""
        self.until(sim, end_s)
        if not self.scrapes or self.end_s != end_s:
            self.scrape(sim, end_s)

    def scrape(self, sim: Simulation, t: float) -> None:
        seen: set[Hashable] = set()
        for group_id, state, read in groups(sim, t, self.counters):
            seen.add(group_id)
            group = self._groups.get(group_id)
            if group is not None and group.state == state:
                group.last_s = t
                continue
            values = {(name, labels): value for name, labels, value in read()}
            before = group.values if group is not None else {}
            for key, value in values.items():
                if key not in before:
                    self.series.setdefault(key, []).append(Segment([(t, value)]))
                elif before[key] != value:
                    self.series[key][-1].changes.append((t, value))
            if group is not None:
                self._end(before.keys() - values.keys(), group.last_s)
            self._groups[group_id] = _Group(state, values, t)
        for group_id in self._groups.keys() - seen:
            gone = self._groups.pop(group_id)
            self._end(gone.values.keys(), gone.last_s)
        self.end_s = t
        self.scrapes += 1

    def _end(self, keys: Iterable[SeriesKey], last_s: float) -> None:
        for key in keys:
            self.series[key][-1].end_s = last_s

    def _samples(self, segments: list[Segment]) -> list[tuple[float, float]]:
        """A series' samples: each change, the value repeated every ``repeat_s`` while it stands, and
        the value at the segment's end."""
        out: list[tuple[float, float]] = []
        for segment in segments:
            end = self.end_s if segment.end_s is None else segment.end_s
            for k, (t, value) in enumerate(segment.changes):
                until = segment.changes[k + 1][0] if k + 1 < len(segment.changes) else end
                while t < until:
                    out.append((t, value))
                    t += self.repeat_s
            last = segment.changes[-1][1]
            if not out or out[-1][0] < end:
                out.append((end, last))
        return out

    def families(self) -> list[ScrapedFamily]:
        """The families with series, in ``FAMILIES`` order, their series by labels."""
        by_family: dict[str, dict[Labels, list[tuple[float, float]]]] = {}
        for (name, labels), segments in sorted(self.series.items()):
            by_family.setdefault(name, {})[labels] = self._samples(segments)
        return [
            ScrapedFamily(f.name, f.type, f.help, by_family[f.name]) for f in FAMILIES if f.name in by_family
        ]
