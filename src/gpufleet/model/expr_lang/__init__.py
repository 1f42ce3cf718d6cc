"""A small, safe evaluator for the subset of expr-lang (``github.com/expr-lang/expr`` v1.17) that KEDA's
``spec.advanced.scalingModifiers.formula`` uses.

KEDA compiles the formula with ``expr.Compile(formula, expr.Env(map[string]float64{...}))`` (the
trigger names, each a ``float64``) and runs it with ``expr.Run`` over the triggers' metric values
(``apis/keda/v1alpha1/scaledobject_webhook.go``: ``validateScalingModifiersFormula``;
``pkg/scaling/modifiers/formula.go``: ``calculateScalingModifiersFormula``). This package parses the
same text into a tree, type-checks it as expr's checker does for that environment, and evaluates it
by walking the tree: Python's ``eval`` is never used, and nothing but the names given can be read.

* :mod:`.errors` -- :class:`ExprError`, expr's error with its position and snippet (``file/error.go``);
* :mod:`.tree` -- the tree's nodes (``ast/node.go``) and :data:`Value`, a runtime value;
* :mod:`.syntax` -- the lexer and the parser of the grammar below (``parser/``);
* :mod:`.checker` -- the types as expr's checker gives them (``checker/checker.go``);
* :mod:`.evaluate` -- the runner and the builtins (``vm/``, ``builtin/builtin.go``);
* :mod:`.program` -- :class:`Program` and :func:`compile_program` (``expr.go``: ``Compile``, ``Run``).

Grammar (precedence climbing as expr's ``parser/operator``; higher binds tighter)::

    program    := ("let" NAME "=" expression ";")* expression
    expression := binary(0) ["?" expression ":" expression]
    binary(p)  := unary { OP binary(q) }      OP of precedence >= p; q = prec+1 (left), prec (right)
                  precedence: "||" "or" 10, "&&" "and" 15, "==" "!=" "<" ">" "<=" ">=" 20,
                  "+" "-" 30, "*" "/" "%" 60, "**" 100 (right), "??" 500
    unary      := ("!" | "not") binary(50) | ("-" | "+") binary(90) | primary
    primary    := NUMBER | "true" | "false" | "nil" | NAME | "#"
                | NAME "(" [argument {"," argument}] ")"
                | "(" expression ")" | "[" [expression {"," expression}] "]"
    argument   := expression | "{" expression "}"     (a predicate: "#" is the element)

Numbers are expr's: ``12`` an ``int``, ``1.5``/``1e3``/``.5`` a ``float64`` (``_`` separators and
``0x`` hexadecimal integers too). Types follow expr's checker: ``+ - *`` of two ints give an int,
otherwise a float64; ``/`` and ``**`` always a float64; ``%`` takes ints only; comparisons give bool;
``&&``/``||``/``!`` take bools; a ternary's condition must be a bool; ``a ?? b`` is ``a`` unless it is
nil. Builtins: ``abs``, ``ceil``, ``floor``, ``round`` (half away from zero, as Go's ``math.Round``),
``float``, ``int`` (truncates), ``max``, ``min`` (numbers, or one array), ``len``, ``sum``, ``mean``,
``median``, and over an array with a predicate ``count``, ``all``, ``any``, ``none``, ``one``,
``filter``, ``map`` (KEDA's tests use ``count([a, b], {# > 1})``).

Errors are expr's words where this subset meets them (``unknown name x``, ``invalid operation: %
(mismatched types float64 and int)``, ``non-bool expression (type float64) used as condition``,
``invalid argument for float (type bool)``, ``not enough arguments to call abs``, ``unexpected token
Operator("+")``), with expr's position suffix ``(line:column)`` and its snippet. Not supported (a
compile error naming it): strings, maps, member access, ranges, pipes, ``in``/``matches`` and the
other builtins. Ints are Go's ``int``: literals within 64 bits, arithmetic wrapped to them.
"""

from gpufleet.model.expr_lang.errors import ExprError
from gpufleet.model.expr_lang.program import Program, compile_program
from gpufleet.model.expr_lang.tree import Value

__all__ = ["ExprError", "Program", "Value", "compile_program"]
