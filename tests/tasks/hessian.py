"""The tests' independent check of a convexity label (backend.tasks.convexity's generator): sympy's Hessian, evaluated exactly enough on random points.

It shares nothing with the composition rules: the expression is parsed with sympy's ordinary (evaluating)
parser, differentiated symbolically, and the Hessian's eigenvalues are computed with mpmath at 40 digits (the
chains nest exponentials, whose values overflow floats). Sampling only refutes: "convex" means no sampled point
had a negative eigenvalue, "neither" that points of both signs (or an indefinite one) were found. Meant for small
depths; the symbolic derivatives of deep chains grow large.
"""
from __future__ import annotations

import random

from backend.tasks.convexity import _check_tokens
from backend.tasks.convexity_rules import CONCAVE, CONVEX, NEITHER

DIGITS = 40


def hessian_verdict(expression: str, points: int = 12, seed: int = 0, box: float = 1.5) -> str:
    """convex / concave / neither as the Hessian on `points` random points of [-box, box]^k says; "affine" when it
    vanished on every point (neither sign)."""
    import mpmath
    import sympy
    from sympy.parsing.sympy_parser import parse_expr

    _check_tokens(expression)
    expr = parse_expr(expression)
    variables = sorted(expr.free_symbols, key=str)
    hessian = sympy.hessian(expr, variables)
    rng = random.Random(seed)
    saw_positive = saw_negative = False
    with mpmath.workdps(DIGITS):
        for _ in range(points):
            at = {v: sympy.Rational(rng.uniform(-box, box)).limit_denominator(1000) for v in variables}
            values = hessian.subs(at).evalf(DIGITS)
            matrix = mpmath.matrix([[mpmath.mpf(str(values[i, j])) for j in range(len(variables))]
                                    for i in range(len(variables))])
            eigenvalues = mpmath.eigsy(matrix, eigvals_only=True)
            scale = max(abs(e) for e in eigenvalues) or mpmath.mpf(1)
            tol = scale * mpmath.mpf(10) ** (-DIGITS // 2)
            saw_positive |= any(e > tol for e in eigenvalues)
            saw_negative |= any(e < -tol for e in eigenvalues)
    if saw_positive and saw_negative:
        return NEITHER
    return CONVEX if saw_positive else CONCAVE if saw_negative else "affine"
