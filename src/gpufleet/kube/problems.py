"""Problems found while loading a scenario: errors and warnings, one line each.

A line reads ``FILE: document N (Kind/name): field.path: what is wrong``; ``document N``
counts from 1 over the documents of one file after ``kind: List`` items are flattened, and
the parts that are unknown (a file that cannot be read has no document; a document without
``kind`` has no label; a problem with the whole document has no field path) are left out.
"Not modelled" warnings put the path in the sentence instead:
``FILE: document 3 (Pod/default/web-0): spec.topologySpreadConstraints is not modelled; ignored``.

Messages use the wording of the API server's field errors
(``k8s.io/apimachinery/pkg/util/validation/field``): ``Invalid value: V: detail``,
``Unsupported value: V: supported values: "a", "b"``, ``Required value``,
``Duplicate value: V``, ``Forbidden: detail``, ``Too many: N: must have at most M items``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gpufleet.model.problem_lines import ProblemLines, one_line

#: Values quoted in messages are cut to this many characters.
_MAX_VALUE_CHARS = 80


class ScenarioError(ProblemLines):
    """Bad input: every problem found across all files, one line each."""


def render(value: object) -> str:
    """A value as the API server quotes it: JSON, cut short when long."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # circular, or nested deeper than Python recurses
        text = f"<{type(value).__name__}>"
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


def invalid(value: object, detail: str) -> str:
    return f"Invalid value: {render(value)}: {detail}"


def unsupported(value: object, supported: Iterable[str]) -> str:
    return f"Unsupported value: {render(value)}: supported values: " + ", ".join(f'"{s}"' for s in supported)


def required(detail: str = "") -> str:
    return f"Required value: {detail}" if detail else "Required value"


def duplicate(value: object, detail: str = "") -> str:
    return f"Duplicate value: {render(value)}" + (f": {detail}" if detail else "")


def forbidden(detail: str) -> str:
    return f"Forbidden: {detail}"


def too_many(actual: int, limit: int) -> str:
    """``field.TooMany``: a list longer than its limit."""
    return f"Too many: {actual}: must have at most {limit} item{'' if limit == 1 else 's'}"


def join(prefix: str, path: str) -> str:
    """``join("spec", "containers[0]")`` is ``spec.containers[0]``; indexes attach without a dot."""
    if not prefix:
        return path
    if not path:
        return prefix
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


def dotted(parts: Iterable[str | int]) -> str:
    """A field path from its parts: ``("spec", "containers", 0)`` is ``spec.containers[0]``."""
    out = ""
    for part in parts:
        out = join(out, f"[{part}]" if isinstance(part, int) else str(part))
    return out


@dataclass(frozen=True)
class Location:
    """A file, and a document in it (``number`` counts from 1; ``None`` for the file itself)."""

    source: str
    file_index: int
    number: int | None = None

    def describe(self, label: str | None) -> str:
        if self.number is None:
            return self.source
        where = f"{self.source}: document {self.number}"
        return f"{where} ({label})" if label else where


@dataclass(frozen=True)
class Problem:
    location: Location
    label: str | None
    path: str
    message: str
    seq: int

    def line(self) -> str:
        """The problem as one line: where, the field, the message (a line break they quote escaped)."""
        where = self.location.describe(self.label)
        return one_line(f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}")

    def sort_key(self) -> tuple[int, int, int]:
        return (self.location.file_index, self.location.number or 0, self.seq)


#: how many documents of one file show a repeated warning before the rest are counted
WARNINGS_KEPT = 3


@dataclass
class Problems:
    """Every error and warning of one load, reported in file and document order."""

    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    _seq: int = 0

    def add(self, is_error: bool, location: Location, label: str | None, path: str, message: str) -> None:
        self._seq += 1
        problem = Problem(location, label, path, message, self._seq)
        (self.errors if is_error else self.warnings).append(problem)

    def of_files_before(self, file_index: int | None = None) -> Problems:
        """A new load's problems, starting from these of the files before ``file_index`` (all: None): the
        reading's, when the documents of some files make one scenario and all of them another."""
        kept = [p for p in self.errors if file_index is None or p.location.file_index < file_index]
        warned = [p for p in self.warnings if file_index is None or p.location.file_index < file_index]
        return Problems(kept, warned, self._seq)

    def file_error(self, source: str, file_index: int, message: str) -> None:
        self.add(True, Location(source, file_index), None, "", message)

    @staticmethod
    def lines(problems: list[Problem]) -> list[str]:
        return [p.line() for p in sorted(problems, key=Problem.sort_key)]

    @staticmethod
    def summarised(problems: list[Problem], keep: int = WARNINGS_KEPT) -> list[str]:
        """``lines``, but a warning repeated word for word on more than ``keep`` documents of one
        file (the same unmodelled field on 150,000 pods of a cluster dump) is shown for the first
        ``keep`` of them and then counted once: nothing is dropped unsaid."""
        ordered = sorted(problems, key=Problem.sort_key)
        sizes = Counter((p.location.source, p.path, p.message) for p in ordered)
        seen: Counter[tuple[str, str, str]] = Counter()
        lines = []
        for p in ordered:
            key = (p.location.source, p.path, p.message)
            seen[key] += 1
            if seen[key] <= keep or sizes[key] == keep + 1:
                lines.append(p.line())
            elif seen[key] == keep + 1:
                what = f"{p.path}: {p.message}" if p.path else p.message
                more = sizes[key] - keep - 1
                lines.append(f"{p.location.describe(p.label)} and {more} more documents of this file: {what}")
        return lines


@dataclass
class _Document:
    """What the reporters of one document share."""

    label: str | None = None
    errors: int = 0
    settled: list[str] = field(default_factory=list)  # fields whose error is already reported
    not_modelled: list[str] = field(default_factory=list)  # the subjects of its not-modelled warnings


class Reporter:
    """Reports problems of one document, with field paths relative to ``prefix``."""

    def __init__(self, problems: Problems, location: Location, prefix: str = "") -> None:
        self._problems = problems
        self._location = location
        self._prefix = prefix
        self._document = _Document()

    @property
    def location(self) -> Location:
        return self._location

    @property
    def label(self) -> str | None:
        return self._document.label

    @label.setter
    def label(self, value: str | None) -> None:
        self._document.label = value

    @property
    def error_count(self) -> int:
        """Errors reported so far for this document, through any of its reporters."""
        return self._document.errors

    def at(self, prefix: str) -> Reporter:
        """A reporter for a nested object (``spec.template``): its paths get ``prefix``."""
        nested = Reporter(self._problems, self._location, join(self._prefix, prefix))
        nested._document = self._document
        return nested

    def settle(self, path: str) -> None:
        """An error at ``path`` is reported: later errors at or below it are the same error, and dropped."""
        self._document.settled.append(join(self._prefix, path))

    def error(self, path: str, message: str) -> None:
        full = join(self._prefix, path)
        if any(full == s or full.startswith((s + ".", s + "[")) for s in self._document.settled):
            return
        self._document.errors += 1
        self._problems.add(True, self._location, self.label, full, message)

    def warn(self, path: str, message: str) -> None:
        self._problems.add(False, self._location, self.label, join(self._prefix, path), message)

    def unmodelled_fields(
        self,
        values: Mapping[str, object],
        fields: Iterable[str],
        prefix: str = "",
        *,
        yet: bool = False,
        note: str = "",
    ) -> None:
        """``not_modelled`` for each of ``fields`` set in ``values`` (not null, false, 0 or empty)."""
        for name in fields:
            if values.get(name):
                self.not_modelled(join(prefix, name), yet=yet, note=note)

    @property
    def not_modelled_count(self) -> int:
        """How many not-modelled warnings this document has had so far, through any of its reporters."""
        return len(self._document.not_modelled)

    def not_modelled_below(self, since: int) -> tuple[str, ...]:
        """The subjects of the document's not-modelled warnings after the first ``since``, at or below
        this reporter's prefix and relative to it (what a pod template read here uses that gpufleet
        does not model: ``spec.topologySpreadConstraints``)."""
        prefix = self._prefix
        below = []
        for subject in self._document.not_modelled[since:]:
            if not prefix:
                below.append(subject)
            elif subject.startswith(prefix + "."):
                below.append(subject[len(prefix) + 1 :])
        return tuple(below)

    def not_modelled(self, path: str, what: str = "", *, note: str = "", yet: bool = False) -> None:
        """``spec.x is not modelled; ignored``; ``what`` names the value (``Ready=False``)."""
        subject = " ".join(p for p in (join(self._prefix, path), what) if p)
        self._document.not_modelled.append(subject)
        words = "is not modelled yet" if yet else "is not modelled"
        tail = f" ({note})" if note else ""
        self._problems.add(False, self._location, self.label, "", f"{subject} {words}{tail}; ignored")
