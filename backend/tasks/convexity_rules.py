"""The composition rules of disciplined convex programming (DCP), the one source of ConvexBench's labels.

An expression's curvature is derived bottom-up: an operator g applied to arguments u_i is convex when g is convex
and, for every argument, g is increasing in it and u_i convex, or decreasing and u_i concave, or u_i affine (and
the mirror image for concave). The generator labels its expressions with these rules, the decomposed strategy
combines the model's per-node answers with them, and the oracle judge answers from `operator_properties`.
"""
from __future__ import annotations

from dataclasses import dataclass

CONVEX, CONCAVE, AFFINE, NEITHER = "convex", "concave", "affine", "neither"
INCREASING, DECREASING = "increasing", "decreasing"
ANSWERS = (CONVEX, CONCAVE, NEITHER)  # what the benchmark asks of a whole expression
CURVATURES = (CONVEX, CONCAVE, AFFINE, NEITHER)  # what a node question may answer about an operator
MONOTONICITIES = (INCREASING, DECREASING, NEITHER)


@dataclass(frozen=True)
class Properties:
    """An operator's curvature and its monotonicity in its (every) argument."""

    curvature: str
    monotonicity: str


def operator_properties(kind: str, coefficient: float = 1.0) -> Properties:
    """The truth for the operators the parser names (backend.tasks.convexity's Node.kind)."""
    if kind == "exp":
        return Properties(CONVEX, INCREASING)
    if kind == "sum":
        return Properties(AFFINE, INCREASING)
    if kind == "scale":
        return Properties(AFFINE, INCREASING if coefficient > 0 else DECREASING)
    if kind == "square":
        return Properties(CONVEX, NEITHER)
    return Properties(NEITHER, NEITHER)  # an operator the rules do not know certifies nothing


def _flip(curvature: str) -> str:
    return {CONVEX: CONCAVE, CONCAVE: CONVEX}.get(curvature, curvature)


def compose_one(outer: Properties, argument: str) -> str:
    """The curvature g(u) contributes for one argument u (the other arguments held fixed)."""
    if argument == AFFINE:
        return outer.curvature  # any operator of an affine argument keeps its own curvature
    if outer.curvature == AFFINE:  # an affine map carries its argument's curvature, flipped when decreasing
        return {INCREASING: argument, DECREASING: _flip(argument)}.get(outer.monotonicity, NEITHER)
    if argument == NEITHER or outer.curvature == NEITHER:
        return NEITHER
    wanted = argument if outer.monotonicity == INCREASING else _flip(argument) \
        if outer.monotonicity == DECREASING else None
    return outer.curvature if wanted == outer.curvature else NEITHER


def sum_curvature(parts: list[str] | tuple[str, ...]) -> str:
    """A sum of curvatures: convex when none is concave or neither, concave likewise, affine when all are."""
    kinds = set(parts)
    if kinds <= {AFFINE}:
        return AFFINE
    if kinds <= {AFFINE, CONVEX}:
        return CONVEX
    if kinds <= {AFFINE, CONCAVE}:
        return CONCAVE
    return NEITHER


def compose(outer: Properties, arguments: list[str] | tuple[str, ...]) -> str:
    """The curvature of g(u_1, ..., u_k) from g's properties and each argument's curvature. A sum of a convex and a
    concave part is "neither" (not certified); the generator only builds it over different variables, where it is
    truly neither (the Hessian is block-diagonal with blocks of both signs)."""
    if not arguments:
        return AFFINE
    if outer.curvature == AFFINE:
        return sum_curvature([compose_one(outer, a) for a in arguments])
    parts = [compose_one(outer, a) for a in arguments]
    return outer.curvature if all(p == outer.curvature for p in parts) else NEITHER


def as_answer(curvature: str) -> str:
    """The benchmark's answer for a derived curvature (an affine expression is both; the generator never labels
    one, and a model's derivation that ends affine is scored as "neither")."""
    return curvature if curvature in (CONVEX, CONCAVE) else NEITHER
