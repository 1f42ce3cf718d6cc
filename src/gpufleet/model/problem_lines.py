"""Bad input reported whole: every problem found, one line each, raised together.

The base of the errors each input reader raises (manifests: ``kube.ScenarioError``; traces:
``traces.base.TraceError``; sweep grids: ``experiments.grid.GridError``); the CLI prints the lines
and exits 2. A problem quotes what the input holds (a field name, a CSV header, a YAML parser's
message), which may hold a line break: it is escaped, so that each problem stays one line.
"""

from __future__ import annotations

#: What ``str.splitlines`` breaks lines at, written as Python writes it in a string.
_LINE_BREAKS = str.maketrans({ch: ascii(ch)[1:-1] for ch in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"})


def one_line(text: str) -> str:
    """``text`` with its line breaks escaped (``\\n``)."""
    return text.translate(_LINE_BREAKS)


class ProblemLines(ValueError):
    def __init__(self, problems: list[str]) -> None:
        problems = [one_line(problem) for problem in problems]
        super().__init__(problems)
        self.problems = problems

    def __str__(self) -> str:
        return "\n".join(self.problems)
