"""``report.json_text``: the text ``json.dumps`` writes with an indent, byte for byte, for any JSON value
(hypothesis), with sorted keys or not, ASCII or not; and the same errors for what JSON cannot hold."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.report.json_text import json_text

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
KEYS = st.text() | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8), inner, max_size=5)
        | st.dictionaries(KEYS, inner, max_size=4)
    ),
    max_leaves=40,
)


def outcome(write: Any, value: Any, **options: Any) -> str:
    try:
        return str(write(value, **options))
    except TypeError as exc:
        return f"TypeError: {exc}"


@settings(max_examples=300)
@given(VALUES, st.sampled_from([0, 1, 2, 4]), st.booleans(), st.booleans())
def test_the_text_is_json_dumps_own_for_any_value(
    value: Any, indent: int, sort_keys: bool, ascii: bool
) -> None:
    options = {"indent": indent, "sort_keys": sort_keys, "ensure_ascii": ascii}
    assert outcome(json_text, value, **options) == outcome(json.dumps, value, **options)


class Level(enum.IntEnum):
    HIGH = 3


class Named(str):
    def __str__(self) -> str:
        return "what __str__ says"


def test_a_summary_like_document_and_subclasses_of_scalars_read_as_json_writes_them() -> None:
    document = {
        "pods": [{"name": Named("ml/a"), "gpus": 8.0, "phase": "Running", "level": Level.HIGH, "on": None}],
        "totals": {"cost": float("nan"), "gpus": float("inf"), "ok": True, 3: "three", None: "none"},
        "empty": [{}, [], ()],
        "text": 'é\n"',
    }
    for options in ({"indent": 1, "sort_keys": False}, {"indent": 2, "ensure_ascii": False}):
        assert json_text(document, **options) == json.dumps(document, **options)
    assert json_text("only a string", 1) == '"only a string"'


def test_what_json_cannot_hold_is_the_type_error_json_raises() -> None:
    for value in ({"set": {1, 2}}, [object()], {(1, 2): "tuple key"}):
        with pytest.raises(TypeError) as ours:
            json_text(value, 1)
        with pytest.raises(TypeError) as theirs:
            json.dumps(value, indent=1)
        assert str(ours.value) == str(theirs.value)
