"""JSON text laid out over lines, as ``json.dumps(value, indent=N)`` writes it, byte for byte, in half
the time: what ``summary.json``, ``whatif.json``, ``replay.json`` and ``-o json`` are written with.

CPython's C encoder takes no indent (3.11), so ``json.dumps`` with one runs its Python encoder, which
passes every piece of text up through a generator per level of nesting (0.51 s for the summary of a
20,000-pod snapshot). Here a container's items are written into one list in one recursive call per
container, and each scalar is encoded by the functions the C encoder and the Python one use
(``encode_basestring_ascii`` or ``encode_basestring``, ``int.__repr__``, ``float.__repr__``, NaN and the
infinities as ``json`` writes them): 0.26 s for the same summary. Keys are what ``json`` takes (strings,
and numbers, booleans and None written as strings), sorted with ``sort_keys`` before they are written,
as ``json`` sorts them; tuples are arrays; a subclass of str, int or float is written as its base writes
its value; anything else is the ``TypeError`` that ``json`` raises. A value that holds itself is not
looked for (``json``'s "Circular reference detected"): gpufleet's documents are trees.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

_INFINITY = float("inf")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _true_or_false(value: bool) -> str:
    return "true" if value else "false"


def _null(value: None) -> str:
    return "null"


def _scalars(string: Callable[[str], str]) -> dict[type, Callable[[Any], str]]:
    return {str: string, int: int.__repr__, float: _float, bool: _true_or_false, type(None): _null}


_ASCII, _UNICODE = _scalars(encode_basestring_ascii), _scalars(encode_basestring)


def _key(key: object) -> str:
    """A key as ``json`` writes it: a string as it is, a number, boolean or None as its JSON text."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return _ASCII[type(key)](key)
    if isinstance(key, float):
        return _float(key)
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def json_text(value: Any, indent: int, sort_keys: bool = False, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)``."""
    scalars = _ASCII if ensure_ascii else _UNICODE
    string = scalars[str]
    out: list[str] = []
    append = out.append

    def other(item: object) -> str | None:
        """The text of an item of no type in ``scalars``: None for a container."""
        if isinstance(item, dict | list | tuple):
            return None
        for base in (str, int, float):  # (bool is an int, and a type in ``scalars``)
            if isinstance(item, base):
                return scalars[base](item)  # (as ``json``: the value, not what its ``__str__`` says)
        raise TypeError(f"Object of type {item.__class__.__name__} is not JSON serializable")

    def container(item: dict[Any, Any] | list[Any] | tuple[Any, ...], level: int) -> None:
        if not item:
            append("{}" if isinstance(item, dict) else "[]")
            return
        between = ",\n" + " " * (indent * (level + 1))
        before = between[1:]
        if isinstance(item, dict):
            append("{")
            for key, each in sorted(item.items()) if sort_keys else item.items():
                encode = scalars.get(type(each))
                name = string(key if type(key) is str else _key(key))
                if encode is not None:  # (the usual: a scalar, one piece of text for the pair)
                    append(f"{before}{name}: {encode(each)}")
                elif (text := other(each)) is not None:
                    append(f"{before}{name}: {text}")
                else:
                    append(f"{before}{name}: ")
                    container(each, level + 1)
                before = between
            append("\n" + " " * (indent * level) + "}")
            return
        append("[")
        for each in item:
            encode = scalars.get(type(each))
            if encode is not None:
                append(before + encode(each))
            elif (text := other(each)) is not None:
                append(before + text)
            else:
                append(before)
                container(each, level + 1)
            before = between
        append("\n" + " " * (indent * level) + "]")

    encode = scalars.get(type(value))
    text = encode(value) if encode is not None else other(value)
    if text is not None:
        return text
    container(value, 0)
    return "".join(out)


def json_file_text(value: Any, sort_keys: bool = False) -> str:
    """A document as gpufleet's files hold it (``summary.json``, ``whatif.json``, ``replay.json``,
    ``compare.json``, ``optimum.json``): ``json_text`` with one space of indent, and a newline at the end."""
    return json_text(value, 1, sort_keys=sort_keys) + "\n"
