"""What every trace loader gives: nodes, and pods with their arrival and departure times.

A format is one module with a ``TraceFormat``: functions that read a node list and a pod list
into gpufleet's ``Node`` and ``Pod``. Problems are collected per row and raised together as a
``TraceError`` whose lines read ``FILE:LINE: column: what is wrong`` (the CLI exits 2 with them).
Adding the Philly or Helios formats means writing one such module and registering it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import TextIO, TypeVar

from gpufleet.collector import collector_paused
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod
from gpufleet.model.problem_lines import ProblemLines
from gpufleet.model.standard_input import display_name, is_stdin, read_stdin

T = TypeVar("T")

#: Problems reported before a loader gives up on a file.
MAX_PROBLEMS = 50


class TraceError(ProblemLines):
    """Bad trace input: every problem found, one line each."""


@dataclass(frozen=True)
class TracePod:
    """A trace's pod, with when it was created and deleted where the format says."""

    pod: Pod
    created_s: float | None = None  # None: the format gives no times
    deleted_s: float | None = None


@dataclass(frozen=True)
class TraceFormat:
    """A trace format: its name and its readers of node and pod lists."""

    name: str
    read_nodes: Callable[[Path], list[Node]]
    read_pods: Callable[[Path], list[TracePod]]


class Rows:
    """The data rows of a CSV file with a header, and the problems found in them. The rows are read with
    the cyclic garbage collector paused (``collector_paused``): the objects a loader makes of them live as
    long as the trace, so the collector's young collections would walk them again and again to free
    nothing (about a seventh of reading the default openb pod list)."""

    def __init__(self, path: Path, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
        self.path = path
        self.name = display_name(path)  # ``-`` is standard input, named ``<stdin>``
        self.problems: list[str] = []
        self.required, self.optional = required, optional

    def __iter__(self) -> Iterator[tuple[int, dict[str, str]]]:
        """Each data row's line number and its values by column."""
        return self._read(lambda header: lambda values: dict(zip(header, values, strict=True)))

    def picked(self, columns: tuple[str, ...]) -> Iterator[tuple[int, tuple[str, ...]]]:
        """Each data row's line number and the values of ``columns`` (two or more) in that order ("" for an
        optional column the file does not have): no dictionary a row, for the loaders of long lists."""

        def picker(header: list[str]) -> Callable[[list[str]], tuple[str, ...]]:
            width = len(header)  # (a column the file lacks: the "" put after a row's own values)
            get = itemgetter(*(header.index(c) if c in header else width for c in columns))
            whole = all(c in header for c in columns)
            return get if whole else lambda values: get([*values, ""])

        return self._read(picker)

    def _read(self, row_maker: Callable[[list[str]], Callable[[list[str]], T]]) -> Iterator[tuple[int, T]]:
        """The data rows, each as the function ``row_maker`` makes of the header gives it."""
        try:
            handle = (
                io.TextIOWrapper(io.BytesIO(read_stdin()), encoding="utf-8", newline="")
                if is_stdin(self.path)
                else self.path.open(newline="", encoding="utf-8")
            )
        except OSError as exc:
            raise TraceError([f"{self.name}: cannot read: {exc.strerror or exc}"]) from None
        try:
            yield from self._rows(handle, row_maker)
        except UnicodeDecodeError as exc:
            raise TraceError([f"{self.name}: not UTF-8 text (byte {exc.start})"]) from None
        except csv.Error as exc:
            raise TraceError([f"{self.name}: not CSV: {exc}"]) from None
        if self.problems:
            raise TraceError(self.problems)

    def _rows(
        self, handle: TextIO, row_maker: Callable[[list[str]], Callable[[list[str]], T]]
    ) -> Iterator[tuple[int, T]]:
        with handle, collector_paused():
            reader = csv.reader(handle)
            header = next(reader, [])
            missing = [c for c in self.required if c not in header]
            unknown = [c for c in header if c not in self.required and c not in self.optional]
            if missing or unknown:
                wanted = ", ".join(self.required + self.optional)
                detail = f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}"
                raise TraceError([f"{self.name}:1: header: {detail} (columns: {wanted})"])
            width = len(header)
            row = row_maker(header)
            # numbered as ``csv.DictReader`` numbers them: blank lines skipped, not counted
            for line, values in enumerate((v for v in reader if v), start=2):
                if len(values) != width:
                    self.problem(line, "row", f"{width} columns expected")
                    continue
                yield line, row(values)
                if len(self.problems) >= MAX_PROBLEMS:
                    self.problems.append(f"{self.name}: stopped after {MAX_PROBLEMS} problems")
                    break

    def problem(self, line: int, column: str, message: str) -> None:
        self.problems.append(f"{self.name}:{line}: {column}: {message}")

    def integer(
        self, line: int, row: dict[str, str], column: str, low: int = 0, high: int | None = None
    ) -> int:
        text = row[column].strip()
        try:
            value = int(text)
        except ValueError:
            self.problem(line, column, f"{text!r} is not a whole number")
            return low
        if value < low or (high is not None and value > high):
            bound = f"from {low} to {high}" if high is not None else f"at least {low}"
            self.problem(line, column, f"{value} is out of range ({bound})")
            return low
        return value
