"""Bad input reported whole: every problem found, one line each, raised together.

The base of the errors each input reader raises (manifests: ``kube.ScenarioError``; traces:
``traces.base.TraceError``; sweep grids: ``experiments.grid.GridError``); the CLI prints the lines
and exits 2.
"""

from __future__ import annotations


class ProblemLines(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems)
        self.problems = problems

    def __str__(self) -> str:
        return "\n".join(self.problems)
