"""The order of a session's tests (``tests/conftest.py``): the tests of the fidelity run first and those of
the workload controllers' sets last, every other test keeping its place between them, since the sets run
in the background from the end of the fidelity run, beside the tests between."""

from __future__ import annotations

from conftest import _session_place


class Item:
    def __init__(self, name: str, *fixtures: str) -> None:
        self.name, self.fixturenames = name, list(fixtures)


def test_the_fidelity_runs_tests_come_first_and_the_controller_sets_last_the_rest_in_place() -> None:
    items = [
        Item("e2e", "control_plane"),
        Item("sets-a", "results", "controller_sets", "control_plane"),
        Item("live", "control_plane", "tmp_path"),
        Item("fidelity-a", "fidelity", "control_plane"),
        Item("no-control-plane"),
        Item("sets-b", "controller_sets"),
        Item("fidelity-b", "control_plane", "fidelity"),
    ]
    items.sort(key=_session_place)
    assert [i.name for i in items] == [
        "fidelity-a",
        "fidelity-b",
        "e2e",
        "live",
        "no-control-plane",
        "sets-a",
        "sets-b",
    ]
