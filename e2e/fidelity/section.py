"""The shape every controller's section of the fidelity report shares (``Section``: the sections of
``e2e.fidelity.job_report``, ``replicaset_report``, ``statefulset_report``, ``node_failure_report``): its
JSON (the status, the totals over the cases that ran and each case's row; or, not run, where its cases are
checked) and its lines in ``fidelity.md`` (the heading, the status, the totals, a table of the cases with
each one's verdict, the section's own notes and the cases that failed to run). Each section module gives
only what is its own: its rows, its columns, what its totals compare."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from e2e.components import KUBERNETES_VERSION

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R")
Row = dict[str, Any]


def as_json(side: DataclassInstance | None) -> dict[str, Any] | None:
    """A side's outcome as the section writes it (None: the side did not run)."""
    return None if side is None else asdict(side)


def pct(a: int, b: int) -> str:
    """``a`` of ``b`` as the report writes a share."""
    return f"{100 * a / b:.1f} %" if b else "-"


def verdict(case: Row, why: str = "") -> str:
    """A case's cell in the agrees column: ``error``, ``yes``, or ``**no**`` followed by ``why``."""
    return "error" if case["error"] else ("yes" if case["agrees"] else "**no**" + why)


@dataclass(frozen=True)
class Section(Generic[R]):
    """A controller's section: ``title`` (``## <title> (kube-controller-manager)``), the ``controllers`` of
    kube-controller-manager's that run its cases (and on what), the test file that checks them under
    ``tests/fidelity``; each case's ``row`` from its result, the ``tolerances`` the comparison allows and
    the section's own ``counts`` over the rows of the cases that ran; in ``fidelity.md``, what a case's
    agreeing means (``compared``, from the section's JSON), a row of ``cells`` a case under ``columns``, the
    section's ``notes`` on its cases and a ``coda`` after its totals."""

    title: str
    controllers: str
    test_file: str
    row: Callable[[R], Row]
    compared: Callable[[dict[str, Any]], str]
    columns: tuple[str, ...]
    cells: Callable[[Row], Sequence[str]]
    tolerances: Mapping[str, Any] | None = None
    counts: Callable[[list[Row]], Mapping[str, int]] = lambda ran: {}
    notes: Callable[[list[Row]], list[str]] = lambda cases: []
    coda: str = ""

    @property
    def not_run(self) -> str:
        """The status of the section where its cases did not run: where they run and where they are
        checked."""
        return (
            "not run with these cases (`make fidelity` runs and reports them; `make test` checks them in "
            f"tests/fidelity/{self.test_file})"
        )

    def summary(self, results: Sequence[R] | None, seconds: float = 0.0) -> dict[str, Any]:
        """The section's JSON: the status, the tolerances, how long the cases took (``seconds``), the totals
        over the cases that ran and each case's row (``results`` None: the cases did not run)."""
        if results is None:
            return {"cases_compared": 0, "cases_agreeing": 0, "status": self.not_run}
        rows = [self.row(r) for r in results]
        ran = [r for r in rows if not r["error"]]
        return {
            "version": KUBERNETES_VERSION,
            "status": f"run: kube-controller-manager {KUBERNETES_VERSION}'s {self.controllers}, {len(rows)} "
            "cases side by side",
            **(self.tolerances or {}),
            "run_s": round(seconds, 1),
            "cases_compared": len(ran),
            "cases_agreeing": sum(r["agrees"] for r in ran),
            **self.counts(ran),
            "cases_failed": len(rows) - len(ran),
            "cases": rows,
        }

    def markdown(self, section: dict[str, Any]) -> list[str]:
        """The section's lines in ``fidelity.md`` from its JSON: the heading, the status and, where its cases
        ran, the totals, the table of the cases with each one's verdict, the notes and the cases that
        failed to run."""
        lines = [f"## {self.title} (kube-controller-manager)", "", section["status"] + ".", ""]
        if "cases" not in section:
            return lines
        agreeing, ran = section["cases_agreeing"], section["cases_compared"]
        lines += [
            f"**{agreeing} of {ran} cases agree** ({pct(agreeing, ran)}): {self.compared(section)}; cases "
            f"failed to run: {section['cases_failed']}; {section['run_s']} s.{self.coda}",
            "",
            "| " + " | ".join(self.columns) + " |",
            "|" + "---|" * len(self.columns),
        ]
        lines += ["| " + " | ".join(self.cells(c)) + " |" for c in section["cases"]]
        lines += self.notes(section["cases"])
        errors = [c for c in section["cases"] if c["error"]]
        if errors:
            lines += ["", "Failed to run:", ""]
            lines += [f"- {c['name']}: {c['error'].splitlines()[0]}" for c in errors]
        lines.append("")
        return lines
