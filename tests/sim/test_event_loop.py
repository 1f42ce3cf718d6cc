"""The simulator's event loop (``sim.event_loop``): events at one instant run by priority, then in the order
they were scheduled; a sequence number kept with ``reserve`` holds an event's place among them, though it is
scheduled later (how a trace's arrivals are fed one at a time)."""

from __future__ import annotations

from gpufleet.control.clock import Priority
from gpufleet.sim.event_loop import EventLoop


def run(loop: EventLoop) -> None:
    while loop.step():
        pass


def test_events_at_one_instant_run_by_priority_then_in_the_order_they_were_scheduled() -> None:
    loop, ran = EventLoop(), []
    loop.at(5.0, Priority.CONTROLLER, lambda: ran.append("scan"))
    loop.at(5.0, Priority.ARRIVAL, lambda: ran.append("first arrival"))
    loop.at(5.0, Priority.ARRIVAL, lambda: ran.append("second arrival"))
    loop.at(1.0, Priority.SAMPLE, lambda: ran.append("sample"))
    run(loop)
    assert ran == ["sample", "first arrival", "second arrival", "scan"]


def test_an_event_scheduled_later_on_a_reserved_number_runs_where_it_would_have_if_scheduled_then() -> None:
    """Two arrivals kept their numbers before a node join was scheduled at their instant: the second,
    scheduled only as the first runs, still comes before the join."""
    loop, ran = EventLoop(), []
    first = loop.reserve(2)
    loop.at(5.0, Priority.ARRIVAL, lambda: ran.append("node joins"))

    def first_arrival() -> None:
        ran.append("first arrival")
        loop.at(5.0, Priority.ARRIVAL, lambda: ran.append("second arrival"), seq=first + 1)

    loop.at(5.0, Priority.ARRIVAL, first_arrival, seq=first)
    run(loop)
    assert ran == ["first arrival", "second arrival", "node joins"]
    assert loop.steps == 3 and loop.now == 5.0


def test_a_background_event_on_a_reserved_number_is_nothing_left_to_do() -> None:
    loop = EventLoop()
    seq = loop.reserve(1)
    loop.at(3.0, Priority.CONTROLLER, lambda: None, background=True, seq=seq)
    assert not loop.pending(Priority.SAMPLE)
    loop.at(4.0, Priority.ARRIVAL, lambda: None)
    assert loop.pending(Priority.SAMPLE)
