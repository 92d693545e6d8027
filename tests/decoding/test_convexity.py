"""ConvexBench strategies: the oracle judge reaches F1 = 1 at every depth; the model judge's scores are the
candidates' log-probabilities; both strategies run end to end on tiny random models, cached."""
import pytest
import torch

from backend.decoding.convexity import (CONVEX_STRATEGIES, ModelJudge, OracleJudge, Question, answer, answer_on_model,
                                        run_convex_batch, typed_problem)
from backend.decoding.convexity.scores import bootstrap_f1, macro_f1
from backend.decoding.convexity.strategies import node_questions
from backend.errors import UserError
from backend.tasks.convexity import convex_problems, derive, parse_expression
from tests.decoding.helpers import sequence_log_prob


@pytest.mark.parametrize("depth", [2, 5, 10, 20, 50, 100])
def test_decomposed_with_an_oracle_judge_reaches_f1_one(depth):
    problems = convex_problems(9, depth, seed=7)
    rows = [answer(p, "decomposed", OracleJudge()) for p in problems]
    assert macro_f1([r.label for r in rows], [r.answer for r in rows]) == 1.0
    assert all(n.answer == n.truth for r in rows for n in r.nodes)
    assert all(r.questions == 2 * len(parse_expression(r.expression).nodes) for r in rows)


def test_a_wrong_node_answer_changes_the_verdict():
    """The rules really combine the judge's answers: a judge that calls exp concave flips exp chains."""
    def liar(q: Question):
        from backend.decoding.convexity.judge import Judged
        wrong = "concave" if q.truth == "convex" and "exp(u)" in q.prompt else q.truth
        return Judged(answer=wrong, log_probs=())

    problem = typed_problem("exp(exp(x)) + y**2")
    assert answer(problem, "decomposed", OracleJudge()).answer == "convex"
    assert answer(problem, "decomposed", liar).answer == "neither"


def test_node_questions_hold_only_their_node():
    problem = convex_problems(3, 30)[1]
    tree = parse_expression(problem.expression)
    for node in tree.nodes:
        for q in node_questions(node):
            assert len(q.prompt) < 400 and problem.expression not in q.prompt


def test_f1_and_intervals():
    labels = ["convex", "concave", "neither"] * 4
    assert macro_f1(labels, labels) == 1.0
    assert macro_f1(labels, ["convex"] * 12) == pytest.approx((2 * 4 / (2 * 4 + 8)) / 3)
    lo, hi = bootstrap_f1(labels, ["convex"] * 6 + labels[6:])
    assert 0 <= lo <= hi <= 1


def test_model_judge_scores_are_candidate_log_probs(tiny_handle):
    judge = ModelJudge(tiny_handle)
    q = Question("Is exp(x) convex, concave, or neither?", ("convex", "concave", "neither"), "convex")
    judged = judge(q)
    context = torch.tensor([judge._context(q.prompt)])
    cands = [judge._candidate_ids(c) for c in q.candidates]
    assert len({c[0] for c in cands}) == 1  # the byte tokenizer: all start with " ", so scored whole
    for ids, score in zip(cands, judged.log_probs):
        assert score == pytest.approx(sequence_log_prob(tiny_handle, context, ids), abs=1e-3)
    assert judged.answer == q.candidates[max(range(3), key=judged.log_probs.__getitem__)]
    assert judge(q) is judged and judge.forwards == 1  # a repeated question is answered once
    # distinct first tokens: one forward scores each candidate's first token, as teacher forcing would
    first = judge.first_token_scores(context[0].tolist(), [[ord("a")], [ord("b")], [ord("c")]])
    for tok, score in zip("abc", first):
        assert score == pytest.approx(sequence_log_prob(tiny_handle, context, [ord(tok)]), abs=1e-3)


@pytest.mark.parametrize("strategy", ["direct", "decomposed"])
def test_both_strategies_run_end_to_end_on_a_tiny_model_and_are_cached(strategy):
    from backend.models import load

    handle = load("tiny-llama")
    problem = convex_problems(2, 2, seed=1)[1]
    first = answer_on_model(handle, problem, strategy)
    assert first.value.answer in ("convex", "concave", "neither") and first.value.forwards >= 1
    again = answer_on_model(handle, problem, strategy)
    assert again.cached and again.value.answer == first.value.answer


def test_a_batch_reports_f1_per_strategy_and_depth_and_per_rule_accuracy():
    from backend.models import load

    handle = load("tiny-qwen2")
    seen = []
    done = run_convex_batch(handle, ["direct", "decomposed"], [1, 2], problems=3,
                            progress=lambda f, m: seen.append(f))
    table = done.value.f1_table()
    assert [(r["strategy"], r["depth"], r["n"]) for r in table] == [
        ("direct", 1, 3), ("direct", 2, 3), ("decomposed", 1, 3), ("decomposed", 2, 3)]
    assert all(0 <= r["f1_lo"] <= r["f1"] <= r["f1_hi"] <= 1 or r["f1"] != r["f1"] for r in table)
    rules = done.value.rule_accuracy()
    assert rules and all(r["n"] >= 1 for r in rules)
    assert seen and seen[-1] == 1.0
    again = run_convex_batch(handle, ["direct", "decomposed"], [1, 2], problems=3)
    assert again.cached
    from backend.store import reopen

    record, value = reopen(again.run_id)  # what the Runs page reopens
    assert record["feature"] == "decoding" and value == done.value


@pytest.mark.parametrize("call,field", [
    (lambda h: run_convex_batch(h, ["direct"], [0], 3), "depth"),
    (lambda h: run_convex_batch(h, ["direct"], [-2], 3), "depth"),
    (lambda h: run_convex_batch(h, ["direct"], [2], 0), "problems"),
    (lambda h: run_convex_batch(h, [], [2], 3), "strategies"),
    (lambda h: run_convex_batch(h, ["greedy"], [2], 3), "convexity strategy"),
    (lambda h: typed_problem("exp(x"), "expression"),
])
def test_bad_input_names_the_field(call, field):
    from backend.models import load

    with pytest.raises(UserError, match=field):
        call(load("tiny-llama"))


def test_strategies_are_registered_in_order():
    assert CONVEX_STRATEGIES.names() == ("direct", "decomposed")
