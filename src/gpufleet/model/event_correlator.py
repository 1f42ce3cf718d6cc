"""The Events one component records about one object, as client-go's event correlator writes them.

A simulated controller (the HPA controller, the kubelet) calls :meth:`EventCorrelator.record` each time its
upstream counterpart calls ``EventRecorder.Event``; :attr:`EventCorrelator.events` holds the Event objects
the API server is left with, which ``kubectl describe`` lists: each with its count, its first and its last
time (``firstTimestamp``, ``lastTimestamp``) and its latest message.

Mirrors ``k8s.io/client-go`` v0.34.10 ``tools/record/events_cache.go`` as ``NewEventCorrelator`` sets it
up for every ``record.NewBroadcaster`` (kube-controller-manager's controllers, the kubelet), applied by
``recordToSink`` in ``events.go``, in ``EventCorrelate``'s order:

- ``EventAggregator`` (``EventAggregatorByReasonFunc``): events of one type and reason with different
  messages are similar; once 10 distinct messages (``defaultAggregateMaxEvents``) were seen, each less
  than 600 s (``defaultAggregateIntervalInSeconds``) after the one before, the event is replaced by one
  whose message is ``"(combined from similar events): " + message``, counted under the reason;
- ``eventLogger.eventObserve``: an event seen before (same field path, type, reason and message) adds one
  to its count and keeps its first time; the count goes up even for an event the spam filter then drops;
- ``EventSourceObjectSpamFilter`` (``getSpamKey``: source, object and type): a token bucket of 25
  (``defaultSpamBurst``) refilled at 1 per 300 s (``defaultSpamQPS``, a float32, through
  ``golang.org/x/time/rate``'s ``AllowN``) per type; an event finding no token is not written, so the
  Event object keeps its last written count and time until one is.

An event written whose object does not exist yet (its first occurrences were all dropped) is created with
the count and first time observed (``recordEvent``: a patch that finds nothing creates). Not modelled:
the 4096-entry LRU caches (one recorder's few objects never fill them); the API server's ``--event-ttl``
(an Event is deleted 1 h after its last write: gpufleet keeps every one to the end of the run); and the
aggregator's choice of which message to forget once combining: Go's ``PopAny`` takes a random one from a
map, gpufleet the one seen first, so runs stay deterministic.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

#: ``defaultSpamBurst`` and ``defaultSpamQPS`` (1/300 as the float32 ``NewEventCorrelator`` passes on)
SPAM_BURST = 25
SPAM_QPS = struct.unpack("f", struct.pack("f", 1.0 / 300.0))[0]
#: ``defaultAggregateMaxEvents`` and ``defaultAggregateIntervalInSeconds``
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL_SECONDS = 600.0
#: ``EventAggregatorByReasonMessageFunc``'s prefix
COMBINED_PREFIX = "(combined from similar events): "


@dataclass
class RecordedEvent:
    """An Event object as the API server holds it: written ``count`` times in all, first at ``first_s``,
    last at ``last_s``, with the latest message; ``field_path`` is ``involvedObject.fieldPath`` (a
    container's ``spec.containers{NAME}``, or empty)."""

    type: str
    reason: str
    message: str
    first_s: float
    last_s: float
    count: int = 1
    field_path: str = ""


@dataclass
class _TokenBucket:
    """``rate.Limiter`` as ``TryAccept`` uses it: full at first; a refused try changes nothing."""

    burst: int
    tokens: float
    last_s: float | None = None

    def allow(self, now: float) -> bool:
        tokens = self.tokens
        if self.last_s is not None and now > self.last_s:
            tokens = min(float(self.burst), tokens + (now - self.last_s) * SPAM_QPS)
        if tokens < 1.0:
            return False
        self.tokens, self.last_s = tokens - 1.0, now
        return True


@dataclass
class _Aggregate:
    """``aggregateRecord``: the distinct messages of one type and reason (in the order first seen), and
    when the last of them came."""

    messages: dict[str, None]
    last_s: float


@dataclass
class EventCorrelator:
    """One component's events about one object (see the module docstring); ``burst`` is
    ``CorrelatorOptions.BurstSize``."""

    burst: int = SPAM_BURST
    events: list[RecordedEvent] = field(default_factory=list)
    _buckets: dict[str, _TokenBucket] = field(default_factory=dict)
    _aggregates: dict[tuple[str, str], _Aggregate] = field(default_factory=dict)
    #: ``eventLogger``'s cache: the count and first time observed, by event key
    _observed: dict[tuple[str, ...], tuple[int, float]] = field(default_factory=dict)
    #: the Event object written for each event key
    _written: dict[tuple[str, ...], RecordedEvent] = field(default_factory=dict)

    def record(
        self, now: float, type_: str, reason: str, message: str, field_path: str = ""
    ) -> RecordedEvent | None:
        """``EventCorrelate`` then the write: the Event object written, or None when the spam filter
        dropped the event (``EventCorrelateResult.Skip``)."""
        key, message = self._aggregate(now, type_, reason, message, field_path)
        count, first_s = self._observed.get(key, (0, now))
        count += 1
        self._observed[key] = (count, first_s)
        bucket = self._buckets.setdefault(type_, _TokenBucket(self.burst, float(self.burst)))
        if not bucket.allow(now):
            return None
        written = self._written.get(key)
        if written is None:
            written = RecordedEvent(type_, reason, message, first_s, now, count, field_path)
            self._written[key] = written
            self.events.append(written)
        else:
            written.message, written.last_s, written.count = message, now, count
        return written

    def _aggregate(
        self, now: float, type_: str, reason: str, message: str, field_path: str
    ) -> tuple[tuple[str, ...], str]:
        """``EventAggregate``: the event's key and message, or the combined event's."""
        record = self._aggregates.get((type_, reason))
        if record is None or now - record.last_s > AGGREGATE_INTERVAL_SECONDS:
            record = self._aggregates[(type_, reason)] = _Aggregate({}, now)
        record.messages[message] = None
        record.last_s = now
        if len(record.messages) < AGGREGATE_MAX_EVENTS:
            return ("event", field_path, type_, reason, message), message
        del record.messages[next(iter(record.messages))]
        return ("combined", type_, reason), COMBINED_PREFIX + message
