"""ConvexBench-style problems: is f(x, y) = chain_x(x) + chain_y(y) convex, concave or neither?

Each chain composes `depth` operators on its variable (exp, scaling by a nonzero integer, a shift, adding a
convex or concave term of the same variable, squaring an affine argument), each chosen so the composition rules
certify the result (backend.tasks.convexity_rules). Every operator is strictly monotone in its argument except
squaring, which only ever takes an affine argument, so a certified chain is *strictly* convex or concave; the sum
of a strictly convex chain in x and a strictly concave one in y has a Hessian diag(+, -) everywhere, so "neither"
is a fact and not just a missing certificate. The labels are checked independently by the tests
(tests/tasks/hessian.py: sympy's Hessian on random points) on small depths.

`parse_expression` turns a typed or generated expression into its tree of operator nodes (sympy's parser, on a
whitelist of tokens: sympy's parser evaluates Python, so nothing else reaches it).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from tokenize import TokenError

from backend.errors import UserError
from backend.tasks.convexity_rules import (AFFINE, CONCAVE, CONVEX, NEITHER, Properties, compose,
                                           operator_properties)

MAX_DEPTH = 150  # Python's parser refuses more than 200 nested parentheses; a chain nests at most one per level
MAX_EXPRESSION_CHARS = 20_000
VARIABLES = ("x", "y")
LABEL_CYCLE = (CONVEX, CONCAVE, NEITHER)
_ALLOWED_NAMES = {"exp", "x", "y", "z"}
_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_]\w*)|(\*\*|[-+*/()]))")


@dataclass(frozen=True)
class ConvexProblem:
    """One expression and its label (convex / concave / neither, by the composition rules)."""

    id: str
    expression: str
    depth: int  # operators composed per variable chain (0 for a typed expression)
    label: str | None  # None for a typed expression the rules cannot label (never: the rules always answer)
    variables: tuple[str, ...] = VARIABLES


@dataclass(frozen=True)
class Chain:
    text: str
    curvature: str


def _coefficient(rng: random.Random) -> int:
    return rng.choice((-3, -2, -1, 2, 3))


def _leaf(var: str, curvature: str, rng: random.Random) -> tuple[str, str]:
    """A signed term added to a chain: ' + x**2' (convex), ' - exp(x)' (concave), ..."""
    term = rng.choice((f"{var}**2", f"exp({var})", f"exp(-{var})"))
    return (f" + {term}", CONVEX) if curvature == CONVEX else (f" - {term}", CONCAVE)


def _step(chain: Chain, var: str, rng: random.Random) -> Chain:
    """One more operator on the chain, among those the rules certify for its current curvature."""
    text, curv = chain.text, chain.curvature
    choices = ["scale", "shift", "add"] + (["exp", "exp"] if curv in (AFFINE, CONVEX) else []) \
        + (["square"] if curv == AFFINE else [])
    kind = rng.choice(choices)
    if kind == "exp":
        return Chain(f"exp({text})", CONVEX)
    if kind == "square":
        return Chain(f"({text})**2", CONVEX)
    if kind == "scale":
        c = _coefficient(rng)
        new = f"-({text})" if c == -1 else f"{c}*({text})"
        return Chain(new, curv if c > 0 else {CONVEX: CONCAVE, CONCAVE: CONVEX}.get(curv, curv))
    if kind == "shift":
        b = rng.choice((-5, -4, -3, -2, -1, 1, 2, 3, 4, 5))
        return Chain(f"{text} {'+' if b > 0 else '-'} {abs(b)}", curv)
    term_curv = curv if curv in (CONVEX, CONCAVE) else rng.choice((CONVEX, CONCAVE))
    term, added = _leaf(var, term_curv, rng)
    return Chain(text + term, added)


def _chain(var: str, depth: int, target: str, rng: random.Random) -> Chain:
    """A chain of `depth` operators on `var` whose certified curvature is `target` (convex or concave)."""
    for _ in range(1000):
        chain = Chain(var, AFFINE)
        for _ in range(depth):
            chain = _step(chain, var, rng)
        if chain.curvature == target:
            return chain
    raise RuntimeError(f"no {target} chain of depth {depth} found")  # unreachable for depth >= 1: each try ~1/2


def check_depth(depth: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise UserError(f"depth must be an integer between 1 and {MAX_DEPTH}, got {depth!r}.")


def convex_problem(depth: int, index: int, seed: int = 0) -> ConvexProblem:
    """Problem `index` of depth `depth`: labels cycle convex, concave, neither, so any 3k problems are balanced."""
    check_depth(depth)
    rng = random.Random(f"convexbench:{seed}:{depth}:{index}")
    label = LABEL_CYCLE[index % 3]
    targets = {CONVEX: (CONVEX, CONVEX), CONCAVE: (CONCAVE, CONCAVE)}.get(label) or \
        tuple(rng.sample((CONVEX, CONCAVE), 2))
    x_chain, y_chain = (_chain(v, depth, t, rng) for v, t in zip(VARIABLES, targets))
    expression = f"{x_chain.text} + {y_chain.text}"
    return ConvexProblem(id=f"cvx-s{seed}-d{depth}-{index}", expression=expression, depth=depth, label=label)


def convex_problems(n: int, depth: int, seed: int = 0) -> list[ConvexProblem]:
    if not 1 <= n <= 1000:
        raise UserError(f"problems must be between 1 and 1000, got {n}.")
    return [convex_problem(depth, i, seed) for i in range(n)]


# ---------------------------------------------------------------- parsing into operator nodes

@dataclass(frozen=True)
class Node:
    """One operator of an expression's tree. `text` shows the operator with its variable arguments written as
    placeholders u, v, w, ... (constant arguments inline); `children` index earlier nodes (post-order), or -1 for
    an argument that is a bare variable."""

    kind: str  # "exp", "sum", "scale", "square" or "other"
    text: str
    coefficient: float  # scale: the constant factor
    children: tuple[int, ...]
    arguments: tuple[str, ...]  # what each placeholder stands for: a variable name, or "" for a sub-expression
    has_constant: bool = False  # sum: a constant term besides the placeholders

    @property
    def truth(self) -> Properties:
        return operator_properties(self.kind, self.coefficient)


@dataclass(frozen=True)
class ExpressionTree:
    expression: str
    nodes: tuple[Node, ...]  # post-order: children before parents; the last is the root
    variables: tuple[str, ...]


def _check_tokens(expression: str) -> None:
    if not expression.strip():
        raise UserError("expression is empty.")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise UserError(f"expression has {len(expression)} characters; at most {MAX_EXPRESSION_CHARS}.")
    pos = 0
    while pos < len(expression.rstrip()):
        m = _TOKEN.match(expression, pos)
        if m is None or m.end() == pos:
            raise UserError(f"expression could not be parsed: unexpected {expression[pos:pos + 12].strip()!r} at "
                            f"character {pos + 1} (use numbers, x, y, z, + - * / ** ( ) and exp).")
        name = m.group(2)
        if name is not None and name not in _ALLOWED_NAMES:
            raise UserError(f"expression could not be parsed: unknown name {name!r} (known: "
                            f"{', '.join(sorted(_ALLOWED_NAMES))}).")
        pos = m.end()


def _sympy(expression: str):
    """The expression as an unevaluated sympy tree, or a UserError naming the field."""
    _check_tokens(expression)
    from sympy.parsing.sympy_parser import parse_expr  # sympy takes ~1 s to import: only when parsing

    try:
        return parse_expr(expression, evaluate=False)
    except (SyntaxError, TypeError, ValueError, TokenError) as exc:
        raise UserError(f"expression could not be parsed: {type(exc).__name__}: {exc}") from None


def _placeholder(i: int) -> str:
    return "uvwpqrst"[i] if i < 8 else f"u{i}"


def parse_expression(expression: str) -> ExpressionTree:
    """The operator nodes of `expression`, post-order (iterative: chains are deep)."""
    import sympy

    root = _sympy(expression)
    if not root.free_symbols:
        raise UserError("expression has no variable (use x, y or z).")
    nodes: list[Node] = []
    index: dict[int, int] = {}  # id(sympy node) -> position in nodes
    stack = [(root, False)]
    while stack:
        expr, expanded = stack.pop()
        if not expr.free_symbols or expr.is_Symbol:
            continue
        if not expanded:
            stack.append((expr, True))
            stack.extend((a, False) for a in reversed(expr.args))
            continue
        variable_args = [a for a in expr.args if a.free_symbols]
        names = {id(a): _placeholder(i) for i, a in enumerate(variable_args)}

        def show(a) -> str:
            return names.get(id(a)) or sympy.sstr(a)

        coefficient = 1.0
        if isinstance(expr, sympy.exp):
            kind, text = "exp", f"exp({show(expr.args[0])})"
        elif isinstance(expr, sympy.Add):
            kind, text = "sum", " + ".join(show(a) for a in expr.args).replace("+ -", "- ")
        elif isinstance(expr, sympy.Mul) and len(variable_args) == 1:
            constants = [a for a in expr.args if not a.free_symbols]
            value = sympy.Mul(*constants)
            coefficient = float(value) if value.is_number and value.is_real else float("nan")
            kind = "scale" if coefficient == coefficient and coefficient != 0 else "other"
            text = "*".join(show(a) if a.free_symbols else f"({sympy.sstr(a)})" if a.is_Add else sympy.sstr(a)
                            for a in expr.args)
        elif isinstance(expr, sympy.Pow) and not expr.args[1].free_symbols and expr.args[1] == 2:
            kind, text = "square", f"{show(expr.args[0])}**2"
        else:
            kind = "other"
            text = sympy.sstr(expr.func(*[sympy.Symbol(show(a)) if a.free_symbols else a for a in expr.args],
                                        evaluate=False))
        children = tuple(-1 if a.is_Symbol else index[id(a)] for a in variable_args)
        arguments = tuple(str(a) if a.is_Symbol else "" for a in variable_args)
        index[id(expr)] = len(nodes)
        nodes.append(Node(kind=kind, text=text, coefficient=coefficient, children=children, arguments=arguments,
                          has_constant=len(variable_args) < len(expr.args)))
    variables = tuple(sorted(str(s) for s in root.free_symbols))
    if not nodes:  # a bare variable
        nodes.append(Node(kind="sum", text="u", coefficient=1.0, children=(-1,), arguments=(str(root),)))
    return ExpressionTree(expression=expression, nodes=tuple(nodes), variables=variables)


def derive(tree: ExpressionTree, properties: list[Properties] | None = None) -> list[str]:
    """Each node's curvature by the rules, from each operator's properties (the truth unless given, e.g. a model's
    answers, one per node)."""
    curvatures: list[str] = []
    for i, node in enumerate(tree.nodes):
        args = [AFFINE if c < 0 else curvatures[c] for c in node.children]
        curvatures.append(compose(properties[i] if properties is not None else node.truth, args))
    return curvatures


def rule_label(expression: str) -> str:
    """The composition rules' answer for an expression: convex, concave or neither (not certified)."""
    from backend.tasks.convexity_rules import as_answer

    return as_answer(derive(parse_expression(expression))[-1])


__all__ = ["MAX_DEPTH", "NEITHER", "ConvexProblem", "ExpressionTree", "Node", "check_depth", "convex_problem",
           "convex_problems", "derive", "parse_expression", "rule_label"]
