"""The two ConvexBench strategies: `direct` (the whole expression, one question) and `decomposed` (sympy's tree,
one focused question per node, the composition rules combining the answers). Importing this module registers
them in `CONVEX_STRATEGIES`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend.decoding.convexity.judge import Judged, Question
from backend.progress import Progress
from backend.tasks.convexity import ConvexProblem, Node, parse_expression
from backend.tasks.convexity_rules import (AFFINE, ANSWERS, CURVATURES, MONOTONICITIES, Properties, as_answer,
                                           compose)
from backend.variants import Registry, Variant

Judge = Callable[[Question], Judged]


@dataclass(frozen=True)
class NodeJudgement:
    """One answer the judge gave about one operator of the tree."""

    node: int  # post-order index
    kind: str  # operator kind (exp, sum, scale, square, other)
    rule: str  # what the answer is checked against, e.g. "scale (c < 0): monotonicity"
    text: str  # the operator as asked, e.g. "-3*u"
    question: str  # curvature | monotonicity
    answer: str
    truth: str


@dataclass(frozen=True)
class Verdict:
    """What a strategy concluded about one expression."""

    answer: str  # convex | concave | neither
    log_probs: tuple[float, ...] = ()  # direct: per answer in ANSWERS
    nodes: tuple[NodeJudgement, ...] = ()


@dataclass(frozen=True)
class ConvexStrategy(Variant):
    """`run(problem, judge, progress) -> Verdict`."""


CONVEX_STRATEGIES: Registry[ConvexStrategy] = Registry("decoding-convexity", "convexity strategy")

ONE_WORD = "Answer with one word."


def direct_question(problem: ConvexProblem) -> Question:
    variables = ", ".join(problem.variables)
    return Question(prompt=f"Is the function f({variables}) = {problem.expression} convex, concave, or neither on all "
                           f"of its domain? {ONE_WORD} convex, concave, or neither.",
                    candidates=ANSWERS, truth=problem.label or "")


def run_direct(problem: ConvexProblem, judge: Judge, progress: Progress) -> Verdict:
    progress(0.0, "one question about the whole expression")
    judged = judge(direct_question(problem))
    return Verdict(answer=judged.answer, log_probs=judged.log_probs)


def _rule(node: Node, question: str) -> str:
    kind = f"scale (c {'<' if node.coefficient < 0 else '>'} 0)" if node.kind == "scale" else node.kind
    return f"{kind}: {question}"


def _names(k: int) -> list[str]:
    return [f"u{i}" if i >= 8 else "uvwpqrst"[i] for i in range(k)]


def operator_form(node: Node) -> tuple[str, str, str]:
    """(parameters, the operator in canonical form, what else the question states). Only the operator is asked
    about: its arguments' curvatures (the children's answers) enter through the composition rules, and a sum's
    constant term or a factor's size (which change neither curvature nor monotonicity) are written c and k, so a
    deep expression asks a few dozen distinct questions, each answered once."""
    names = _names(len(node.children))
    facts = ""
    if node.kind == "exp":
        text = "exp(u)"
    elif node.kind == "scale":
        text = "k*u" if node.coefficient > 0 else "-u" if node.coefficient == -1 else "-k*u"
        facts = "" if node.coefficient == -1 else ", where k > 0 is a constant"
    elif node.kind == "square":
        text = "u**2"
    elif node.kind == "sum":
        text = " + ".join(names) + (" + c" if node.has_constant else "")
        facts = ", where c is a constant" if node.has_constant else ""
    else:
        text = node.text
    return ", ".join(names), text, facts


def node_questions(node: Node) -> tuple[Question, Question]:
    """The two questions about one operator, with only that operator in context."""
    params, text, facts = operator_form(node)
    head = f"Let g({params}) = {text}{facts}. As a function of {params}, is g"
    truth = node.truth
    return (Question(f"{head} convex, concave, affine, or neither? {ONE_WORD}", CURVATURES, truth.curvature),
            Question(f"{head} increasing, decreasing, or neither? {ONE_WORD}", MONOTONICITIES, truth.monotonicity))


def run_decomposed(problem: ConvexProblem, judge: Judge, progress: Progress) -> Verdict:
    tree = parse_expression(problem.expression)
    curvatures: list[str] = []  # each node's curvature as the rules derive it from the judge's answers
    records: list[NodeJudgement] = []
    for i, node in enumerate(tree.nodes):
        if i % 16 == 0:
            progress(i / len(tree.nodes), f"node {i + 1}/{len(tree.nodes)}")
        answers = []
        text = operator_form(node)[1]
        for question, q in zip(("curvature", "monotonicity"), node_questions(node)):
            judged = judge(q)
            answers.append(judged.answer)
            records.append(NodeJudgement(node=i, kind=node.kind, rule=_rule(node, question), text=text,
                                         question=question, answer=judged.answer, truth=q.truth))
        arguments = [AFFINE if c < 0 else curvatures[c] for c in node.children]
        curvatures.append(compose(Properties(*answers), arguments))
    return Verdict(answer=as_answer(curvatures[-1]), nodes=tuple(records))


CONVEX_STRATEGIES.register(ConvexStrategy(
    name="direct", label="Direct", run=run_direct,
    help="the whole expression in one question; the answer is the most probable of convex, concave, neither"))
CONVEX_STRATEGIES.register(ConvexStrategy(
    name="decomposed", label="Decomposed (AST)", run=run_decomposed,
    help="sympy parses the expression into its tree; the model judges each operator's curvature and "
         "monotonicity with only that node in context; the composition rules combine the answers"))
