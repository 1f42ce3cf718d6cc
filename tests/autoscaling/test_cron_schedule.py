"""The 5-field cron schedules of KEDA's ``cron`` trigger, as ``github.com/robfig/cron/v3`` parses them
(``NewParser(Minute | Hour | Dom | Month | Dow)``) and ``SpecSchedule.Next`` answers
(:mod:`gpufleet.model.cron_schedule`)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from gpufleet.model.cron_schedule import CronSchedule, CronSyntaxError

UTC_ZONE = ZoneInfo("Etc/UTC")
BERLIN = ZoneInfo("Europe/Berlin")


def _t(text: str) -> float:
    """Unix seconds of an ISO date-time with its offset."""
    return datetime.fromisoformat(text).timestamp()


def _iso(seconds: float | None, zone: ZoneInfo = UTC_ZONE) -> str | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, zone).isoformat()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty spec string"),
        ("* * * *", "expected exactly 5 fields, found 4"),
        ("0 * * * * *", "expected exactly 5 fields, found 6"),
        ("@daily", "parser does not accept descriptors"),
        ("CRON_TZ=Asia/Tokyo 0 9 * * *", "TZ=/CRON_TZ= prefix is not modelled"),
        ("-30 * * * *", "failed to parse int from "),
        ("60 * * * *", "end of range (60) above maximum (59)"),
        ("0 24 * * *", "end of range (24) above maximum (23)"),
        ("0 0 0 * *", "beginning of range (0) below minimum (1)"),
        ("0 0 * 13 *", "end of range (13) above maximum (12)"),
        ("0 0 * * 7", "end of range (7) above maximum (6)"),
        ("30-10 * * * *", "beginning of range (30) beyond end of range (10)"),
        ("*/0 * * * *", "step of range should be a positive number"),
        ("1-2-3 * * * *", "too many hyphens"),
        ("*/2/3 * * * *", "too many slashes"),
        ("0 0 * * Thursday", "failed to parse int from Thursday"),
    ],
)
def test_schedules_the_parser_refuses(text: str, message: str) -> None:
    with pytest.raises(CronSyntaxError) as caught:
        CronSchedule.parse(text)
    assert message in str(caught.value)


def test_fields_lists_ranges_steps_and_names() -> None:
    schedule = CronSchedule.parse("5/20 1-23/2 1,15 JAN-mar sun,Sat")
    assert schedule.minutes == (5, 25, 45)  # "N/step" runs to the field's maximum
    assert schedule.hours == tuple(range(1, 24, 2))
    assert schedule.days_of_month == {1, 15}
    assert schedule.months == {1, 2, 3}
    assert schedule.days_of_week == {0, 6}
    assert CronSchedule.parse("? ? ? ? ?").minutes == tuple(range(60))


def test_next_is_the_first_matching_minute_after_the_current_second() -> None:
    schedule = CronSchedule.parse("0 9 * * 1-5")
    # Friday 2026-12-04 17:00 UTC -> Monday 09:00
    assert _iso(schedule.next_after(_t("2026-12-04T17:00:00+00:00"), UTC_ZONE)) == "2026-12-07T09:00:00+00:00"
    # at 09:00:00 exactly the next one is the next day's: Next starts from the upcoming second
    assert _iso(schedule.next_after(_t("2026-12-07T09:00:00+00:00"), UTC_ZONE)) == "2026-12-08T09:00:00+00:00"
    # within the second before it, the upcoming second is 09:00:00 itself
    assert (
        _iso(schedule.next_after(_t("2026-12-07T08:59:59.5+00:00"), UTC_ZONE)) == "2026-12-07T09:00:00+00:00"
    )


def test_day_of_month_and_day_of_week_match_either_unless_one_is_a_star() -> None:
    start = _t("2026-12-01T00:00:00+00:00")  # a Tuesday
    # neither a star: the 15th or any Friday, whichever comes first (Friday the 4th)
    either = CronSchedule.parse("0 0 15 * 5")
    assert _iso(either.next_after(start, UTC_ZONE)) == "2026-12-04T00:00:00+00:00"
    # a stepped star (*/2 on day of week) is no longer a star: either again
    assert not CronSchedule.parse("0 0 15 * */2").dow_star
    # day of week a star: only the 15th
    both = CronSchedule.parse("0 0 15 * *")
    assert _iso(both.next_after(start, UTC_ZONE)) == "2026-12-15T00:00:00+00:00"


def test_a_schedule_that_never_fires_has_no_next_time() -> None:
    assert CronSchedule.parse("0 0 30 2 *").next_after(_t("2026-12-01T00:00:00+00:00"), UTC_ZONE) is None


def test_schedules_are_read_in_their_zone_through_daylight_saving_time() -> None:
    schedule = CronSchedule.parse("30 2 * * *")
    # 2026-03-29 02:30 does not exist in Berlin (02:00 -> 03:00): the next is the 30th's
    at = schedule.next_after(_t("2026-03-29T00:00:00+01:00"), BERLIN)
    assert _iso(at, BERLIN) == "2026-03-30T02:30:00+02:00"
    # 2026-10-25 02:30 happens twice (03:00 -> 02:00): both times match
    first = schedule.next_after(_t("2026-10-25T00:00:00+02:00"), BERLIN)
    assert _iso(first, BERLIN) == "2026-10-25T02:30:00+02:00"
    assert first is not None
    assert _iso(schedule.next_after(first, BERLIN), BERLIN) == "2026-10-25T02:30:00+01:00"
    nine = CronSchedule.parse("0 9 * * *").next_after(_t("2026-07-01T00:00:00+00:00"), BERLIN)
    assert datetime.fromtimestamp(nine or 0, UTC).hour == 7  # 09:00 CEST is 07:00 UTC
