"""gpufleet's evaluator of the expr-lang subset KEDA's ``scalingModifiers.formula`` uses
(``github.com/expr-lang/expr`` v1.17: ``parser/operator`` precedences, ``checker`` types and errors,
``builtin`` functions), each row what expr answers for the same program and environment."""

from __future__ import annotations

import pytest

from gpufleet.model.expr_lang import ExprError, Value, compile_program

ENV: dict[str, Value] = {"a": 2.0, "b": 5.0, "missing": None}


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("a + b * 2", 12.0),
        ("(a + b) * 2", 14.0),
        ("7 / 2", 3.5),  # / is always float64
        ("7 % 3", 1),
        ("-7 % 3", -1),  # Go's %: the dividend's sign
        ("2 ** 3 ** 2", 512.0),  # ** is right-associative
        ("-2 ** 2", -4.0),  # unary minus binds looser than **
        ("2 ^ 3", 8.0),
        ("a < b ? a : b", 2.0),
        ("a < 1 ? 1 : a < 3 ? 3 : 9", 3),
        ("a < 2 ? a + b >= 2 ? 5 : 10 : 0", 0),  # KEDA's "complex ternary"
        ("a > 1 && b > 1 || false", True),
        ("not (a > 1) or a == 2 and true", True),
        ("!(a > b)", True),
        ("missing ?? a", 2.0),
        ("missing ?? missing ?? 8", 8),
        ("missing ?? a + 1", 3.0),  # ?? binds tighter than +
        ("missing == nil", True),
        ("abs(-3)", 3),
        ("ceil(a / 4)", 1.0),
        ("floor(-0.5)", -1.0),
        ("round(2.5) + round(-2.5)", 0.0),  # half away from zero (math.Round)
        ("int(b / 2)", 2),
        ("float(3)", 3.0),
        ("max(a, b, 3)", 5.0),
        ("min([a, b])", 2.0),
        ("count([a, b], {# > 1}) > 1 ? 5 : 0", 5),  # KEDA's webhook test
        ("all([a, b], {# > 1})", True),
        ("any([a, b], {# > 4})", True),
        ("none([a, b], {# > 9})", True),
        ("one([a, b], {# > 4})", True),
        ("sum([a, b, 1])", 8.0),
        ("sum([1e308, 1e308])", float("inf")),  # Go adds in order; no overflow error
        ("mean([a, b])", 3.5),
        ("median([b, a, 1])", 2.0),
        ("len(filter([a, b], {# > 3}))", 1),
        ("let x = a * 2; x + 1", 5.0),
        ("1_000 + 0x10 + .5", 1016.5),
        ("9223372036854775807 + 1", -(2**63)),  # Go's int wraps
    ],
)
def test_a_program_runs_as_expr_runs_it(source: str, value: Value) -> None:
    names = [n for n in ENV if n in source]
    result = compile_program(source, names).run(ENV)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("c + 1", "unknown name c (1:1)"),
        ("a % 2", "invalid operation: % (mismatched types float64 and int) (1:3)"),
        ("a && true", "invalid operation: && (mismatched types float64 and bool) (1:3)"),
        ("!a", "invalid operation: ! (mismatched type float64) (1:1)"),
        ("a ? 1 : 2", "non-bool expression (type float64) used as condition (1:3)"),
        ("float(a > 1)", "invalid argument for float (type bool) (1:1)"),
        ("abs()", "not enough arguments to call abs (1:1)"),
        ("abs(a, b)", "too many arguments to call abs (1:1)"),
        ("os(1)", "unknown name os (1:1)"),
        ("a +", "unexpected end of expression (1:4)"),
        ("a b", 'unexpected token Identifier("b") (1:3)'),
        ("a.b", "unexpected token '.': '.' is not supported by gpufleet (1:2)"),
        ("'x'", 'unexpected token "\'": string literals are not supported by gpufleet (1:1)'),
        ("#", "cannot use pointer accessor outside predicate (1:1)"),
        ("99999999999999999999", "invalid number '99999999999999999999' (1:1)"),
        ("(" * 150 + "a" + ")" * 150, "expression nested too deeply (gpufleet's limit: 100) (1:101)"),
        (" + ".join(["a"] * 150), "expression nested too deeply (gpufleet's limit: 100) (1:1)"),
    ],
)
def test_a_program_that_expr_refuses_is_an_error_in_its_words(source: str, error: str) -> None:
    with pytest.raises(ExprError) as caught:
        compile_program(source, ["a", "b"])
    assert caught.value.headline == error


def test_an_error_carries_exprs_snippet() -> None:
    with pytest.raises(ExprError) as caught:
        compile_program("float(a + c)", ["a"])
    assert str(caught.value) == "unknown name c (1:11)\n | float(a + c)\n | ..........^"


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("a + 1", "invalid operation: <nil> + int (1:3)"),
        ("int(b) % int(a)", "integer divide by zero (1:8)"),
    ],
)
def test_a_run_time_failure_is_an_error(source: str, error: str) -> None:
    program = compile_program(source, ["a", "b"])
    with pytest.raises(ExprError) as caught:
        program.run({"a": None if "+" in source else 0.0, "b": 5.0})
    assert caught.value.headline == error


def test_float_division_by_zero_is_go_infinity_not_an_error() -> None:
    assert compile_program("a / 0", ["a"]).run({"a": 1.0}) == float("inf")
