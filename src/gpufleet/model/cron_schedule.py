"""Standard 5-field cron schedules as KEDA's ``cron`` scaler reads them.

KEDA v2.20.2 (``pkg/scalers/cron_scaler.go``) parses ``start`` and ``end`` with
``github.com/robfig/cron/v3``'s ``NewParser(Minute | Hour | Dom | Month | Dow)`` and asks each
schedule for its ``Next`` time. This module reproduces that parser's rules (``parser.go``:
``getField``, ``getRange``, ``parseIntOrName``, ``mustParseInt``; the bounds and names of
``spec.go``) and ``SpecSchedule.Next``'s answer:

- exactly five fields, white-space separated: minute 0-59, hour 0-23, day of month 1-31, month
  1-12 (or ``jan``-``dec``), day of week 0-6 (or ``sun``-``sat``), names case-insensitive;
- each field a comma list of ``*`` or ``?`` (the whole range), ``a``, ``a-b``, each with an
  optional ``/step``; ``a/step`` means ``a-max/step``; a negative number, a range outside the
  bounds or reversed, a zero step, a second ``-`` or ``/`` is an error;
- no descriptors (``@daily``, ``@every 1h``: the parser was not given ``Descriptor``) and no
  seconds field;
- day matching (``dayMatches``): when the day-of-month or the day-of-week field is a bare ``*``/``?``
  (not stepped above 1) both must match, otherwise either one;
- ``next_after(t)``: the first whole minute matching the schedule at or after ``floor(t) + 1`` s,
  in the schedule's time zone; None when none comes within five years (``Next`` returns Go's zero
  time then).

A ``TZ=``/``CRON_TZ=`` prefix (robfig's per-schedule zone) is refused: KEDA's trigger has its own
``timezone``. Daylight-saving time: a wall time that does not exist that day is skipped and one that
occurs twice matches both times (robfig walks hours in absolute time, which does the same).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo


class CronSyntaxError(ValueError):
    """A schedule robfig/cron's parser refuses."""


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: tuple[str, ...] = ()  # names[i] is value low + i


_MINUTE = _Bounds(0, 59)
_HOUR = _Bounds(0, 23)
_DOM = _Bounds(1, 31)
_MONTH = _Bounds(1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))
_DOW = _Bounds(0, 6, ("sun", "mon", "tue", "wed", "thu", "fri", "sat"))
_FIELDS = (_MINUTE, _HOUR, _DOM, _MONTH, _DOW)
#: ``SpecSchedule.Next`` gives up this many years after the time it starts from.
YEAR_LIMIT = 5


def _number(text: str) -> int:
    """``mustParseInt``: Go ``strconv.Atoi`` (an optional sign, decimal digits), not negative."""
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii():
        raise CronSyntaxError(f"failed to parse int from {text}")
    value = int(text)
    if value < 0:
        raise CronSyntaxError(f"negative number ({value}) not allowed: {text}")
    return value


def _number_or_name(text: str, bounds: _Bounds) -> int:
    """``parseIntOrName``: a name of the field (case-insensitive), else a number."""
    lowered = text.lower()
    if lowered in bounds.names:
        return bounds.low + bounds.names.index(lowered)
    return _number(text)


def _range(expr: str, bounds: _Bounds) -> tuple[frozenset[int], bool]:
    """One comma element of a field: its values, and whether it is a bare ``*``/``?`` (the star bit)."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    star = low_and_high[0] in ("*", "?")
    if star:
        start, end = bounds.low, bounds.high
    else:
        start = _number_or_name(low_and_high[0], bounds)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _number_or_name(low_and_high[1], bounds)
        else:
            raise CronSyntaxError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _number(range_and_step[1])
        if len(low_and_high) == 1:
            end = bounds.high  # "N/step" means "N-max/step"
        if step > 1:
            star = False
    else:
        raise CronSyntaxError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise CronSyntaxError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise CronSyntaxError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise CronSyntaxError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronSyntaxError(f"step of range should be a positive number: {expr}")
    return frozenset(range(start, end + 1, step)), star


def _field(text: str, bounds: _Bounds) -> tuple[frozenset[int], bool]:
    """``getField``: the union of the comma elements; the star bit if any element set it."""
    values: set[int] = set()
    star = False
    for expr in text.split(","):
        part, part_star = _range(expr, bounds)
        values |= part
        star = star or part_star
    return frozenset(values), star


@dataclass(frozen=True)
class CronSchedule:
    """A parsed 5-field schedule (``SpecSchedule``)."""

    text: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: frozenset[int]
    months: frozenset[int]
    days_of_week: frozenset[int]
    #: the day-of-month / day-of-week field is a bare ``*`` or ``?`` (``starBit``)
    dom_star: bool
    dow_star: bool

    @classmethod
    def parse(cls, text: str) -> CronSchedule:
        """``Parser.Parse`` with ``Minute | Hour | Dom | Month | Dow``; :class:`CronSyntaxError` if not."""
        if not text:
            raise CronSyntaxError("empty spec string")
        if text.startswith(("TZ=", "CRON_TZ=")):
            raise CronSyntaxError(
                "a TZ=/CRON_TZ= prefix is not modelled by gpufleet: set the trigger's timezone instead"
            )
        if text.startswith("@"):
            raise CronSyntaxError(f"parser does not accept descriptors: {text}")
        fields = text.split()
        if len(fields) != len(_FIELDS):
            raise CronSyntaxError(f"expected exactly 5 fields, found {len(fields)}: {fields}")
        (minutes, _), (hours, _), (dom, dom_star), (months, _), (dow, dow_star) = (
            _field(f, b) for f, b in zip(fields, _FIELDS, strict=True)
        )
        return cls(text, tuple(sorted(minutes)), tuple(sorted(hours)), dom, months, dow, dom_star, dow_star)

    def day_matches(self, day: date) -> bool:
        """``dayMatches``: both day fields must match when either is a bare star, else either one."""
        dom = day.day in self.days_of_month
        dow = day.isoweekday() % 7 in self.days_of_week
        if self.dom_star or self.dow_star:
            return dom and dow
        return dom or dow

    def next_after(self, t: float, zone: ZoneInfo) -> float | None:
        """``Next``: the first matching whole minute at or after ``floor(t) + 1`` (Unix seconds), read in
        ``zone``; None when there is none within :data:`YEAR_LIMIT` years."""
        earliest = math.floor(t) + 1
        local = datetime.fromtimestamp(earliest, zone)
        day = local.date()
        # on the first day, wall times more than an hour (any DST shift) before ``earliest`` are past
        skip_before = (local.hour - 1, local.minute)
        last_year = day.year + YEAR_LIMIT
        while day.year <= last_year:
            if day.month in self.months and self.day_matches(day):
                found = self._first_on(day, earliest, zone, skip_before)
                if found is not None:
                    return found
            day += timedelta(days=1)
            skip_before = (-1, 0)
        return None

    def _first_on(
        self, day: date, earliest: int, zone: ZoneInfo, skip_before: tuple[int, int]
    ) -> float | None:
        for hour in self.hours:
            for minute in self.minutes:
                if (hour, minute) < skip_before:
                    continue
                for fold in (0, 1):
                    wall = datetime(day.year, day.month, day.day, hour, minute, fold=fold, tzinfo=zone)
                    at = wall.timestamp()
                    back = datetime.fromtimestamp(at, zone)
                    if (back.hour, back.minute) != (hour, minute) or at < earliest:
                        continue  # a wall time that does not exist that day, or already past
                    return at
        return None
