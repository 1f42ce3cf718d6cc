"""A compiled formula, as expr's ``expr.go`` gives it: ``Compile`` (parse, then check with each name a
float64, as KEDA's ``expr.Env(map[string]float64{...})``) and ``Run`` over the names' values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpufleet.model.expr_lang.checker import FLOAT, check
from gpufleet.model.expr_lang.errors import ExprError
from gpufleet.model.expr_lang.evaluate import evaluate
from gpufleet.model.expr_lang.syntax import parse
from gpufleet.model.expr_lang.tree import Node, Value


@dataclass(frozen=True)
class Program:
    """A compiled formula (``expr.Compile``): :meth:`run` evaluates it over the variables' values."""

    source: str
    tree: Node
    names: tuple[str, ...]

    def run(self, env: Mapping[str, Value]) -> Value:
        """``expr.Run``: the formula's value (nil is None); :class:`ExprError` where it fails to run."""
        missing = [n for n in self.names if n not in env]
        if missing:
            raise ExprError(f"unknown name {missing[0]}")
        return evaluate(self.source, self.tree, env)


def compile_program(source: str, names: Sequence[str]) -> Program:
    """``expr.Compile(source, expr.Env(map[string]float64{name: ...}))``: parse and type-check, each name a
    float64 variable; :class:`ExprError` in expr's words where it does not compile."""
    tree = parse(source)
    check(source, tree, dict.fromkeys(names, FLOAT))
    return Program(source, tree, tuple(names))
