"""ConvexBench problems: labels by the composition rules agree with sympy's Hessian; parsing; bad input."""
import pytest

from backend.errors import UserError
from backend.tasks.convexity import MAX_DEPTH, convex_problem, convex_problems, derive, parse_expression, rule_label
from backend.tasks.convexity_rules import (AFFINE, CONCAVE, CONVEX, DECREASING, INCREASING, NEITHER, Properties,
                                           as_answer, compose)
from tests.tasks.hessian import hessian_verdict


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_labels_agree_with_the_hessian_on_small_depths(depth):
    problems = convex_problems(9, depth, seed=3)
    assert [p.label for p in problems] == [CONVEX, CONCAVE, NEITHER] * 3
    for i, p in enumerate(problems):
        assert hessian_verdict(p.expression, seed=i) == p.label, p.expression


def test_the_hessian_check_can_disagree_with_a_missing_certificate():
    # exp(-x^2) is neither; x^2 - y^2 is a saddle; the check is not a copy of the rules
    assert hessian_verdict("exp(-x**2)") == NEITHER
    assert hessian_verdict("x**2 - y**2") == NEITHER
    assert hessian_verdict("exp(x) + y**2") == CONVEX
    assert hessian_verdict("-exp(exp(x))") == CONCAVE
    assert rule_label("exp(-x**2)") == NEITHER  # exp of a concave argument: not certified


def test_the_rules_certify_compositions():
    exp = Properties(CONVEX, INCREASING)
    neg = Properties(AFFINE, DECREASING)
    assert compose(exp, [CONVEX]) == CONVEX and compose(exp, [CONCAVE]) == NEITHER
    assert compose(neg, [CONVEX]) == CONCAVE and compose(neg, [AFFINE]) == AFFINE
    assert compose(Properties(AFFINE, INCREASING), [CONVEX, CONCAVE]) == NEITHER
    assert compose(Properties(CONVEX, NEITHER), [AFFINE]) == CONVEX
    assert compose(Properties(CONVEX, NEITHER), [CONVEX]) == NEITHER
    assert as_answer(AFFINE) == NEITHER


@pytest.mark.parametrize("depth", [1, 2, 5, 20, 100])
def test_generated_problems_parse_and_their_rule_label_is_their_label(depth):
    for p in convex_problems(6, depth, seed=1):
        tree = parse_expression(p.expression)
        assert as_answer(derive(tree)[-1]) == p.label
        assert set(tree.variables) == {"x", "y"}
        assert len(tree.nodes) >= depth  # at least one operator per level of a chain


def test_same_seed_same_problem_other_seed_other():
    assert convex_problem(10, 4, seed=0) == convex_problem(10, 4, seed=0)
    assert convex_problem(10, 4, seed=0).expression != convex_problem(10, 4, seed=1).expression


def test_parse_nodes_show_placeholders_and_constants():
    tree = parse_expression("exp(2*x + 1) - y**2")
    kinds = [n.kind for n in tree.nodes]
    assert kinds.count("exp") == 1 and "square" in kinds and kinds[-1] == "sum"
    assert any(n.text == "exp(u)" for n in tree.nodes)
    assert derive(tree)[-1] == NEITHER  # convex in x plus concave in y


@pytest.mark.parametrize("depth", [0, -1, MAX_DEPTH + 1, 2.5, True])
def test_bad_depth_names_the_field(depth):
    with pytest.raises(UserError, match="depth"):
        convex_problem(depth, 0)


@pytest.mark.parametrize("expression,words", [
    ("", "empty"), ("exp(x", "could not be parsed"), ("x +* y", "could not be parsed"),
    ("__import__('os')", "unknown name"), ("sin(x)", "unknown name"), ("x; y", "unexpected"), ("3 + 4", "no variable"),
    ("x" * 20_001, "characters"),
])
def test_bad_expressions_name_the_field(expression, words):
    with pytest.raises(UserError, match="expression") as err:
        parse_expression(expression)
    assert words in str(err.value)
