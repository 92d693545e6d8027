"""RC (reasoning-summary cycles) on a tiny random model: the prompt sequence, budget accounting, the answer after
every cycle, the plain reference of a batch, and bad input. The tiny models have 256 positions and a byte
tokenizer, so the questions and the summary instruction are short."""
import json
import re

import pytest

from backend.decoding import DecodeConfig, run_one, run_batch, settings_for
from backend.decoding import rc_prompts as prompts
from backend.decoding.algorithms.rc import planned_tokens
from backend.decoding.context import DecodeContext
from backend.errors import UserError
from backend.models import load
from backend.tasks.arithmetic import Problem, extract_answer, format_prompt

SHORT = "Sum up."
PROBLEM = Problem(id="p1", question="2 + 3?", answer=5, solution="", split="upload", difficulty=1)


def rc(max_new_tokens=7, seed=0, **options) -> DecodeConfig:
    return DecodeConfig(strategy="rc", max_new_tokens=max_new_tokens, seed=seed,
                        extra={"summary_instruction": SHORT, "summary_tokens": 5, **options})


@pytest.fixture(scope="module")
def handle():
    return load("tiny-llama")


@pytest.fixture
def calls(monkeypatch):
    """Every context RC hands to the kernel, in order (the ids `[1, T]` and the token budget)."""
    seen = []
    original = DecodeContext.rollout

    def spy(self, n, temperature, max_new_tokens, greedy=False, context_ids=None, on_step=None):
        seen.append((context_ids if context_ids is not None else self.prompt_ids, max_new_tokens))
        return original(self, n, temperature, max_new_tokens, greedy, context_ids, on_step)

    monkeypatch.setattr(DecodeContext, "rollout", spy)
    return seen


@pytest.mark.parametrize("chat", [True, False])
def test_the_prompt_sequence_is_question_reasoning_summary_request_restart(handle, calls, chat):
    r = run_one(handle, PROBLEM, rc(cycles=3, seed=1), chat=chat).value
    tok, prompt = handle.tokenizer, format_prompt(PROBLEM)
    assert len(r.cycles) == 3 and len(calls) == 5  # reasoning, summary, reasoning, summary, reasoning
    first, summary1, second, summary2, third = (ids for ids, _ in calls)
    question = tok(prompt, return_tensors="pt")["input_ids"] if not chat else None
    if question is not None:
        assert first.tolist() == question.tolist()
    c1, c2, c3 = r.cycles
    # the summary request is the cycle's own conversation, then the instruction
    assert summary1.tolist() == prompts.summary_ids(tok, prompt, c1.reasoning, SHORT, chat).tolist()
    # the restart holds the question and the summary, not the reasoning it summarised
    assert second.tolist() == prompts.restart_ids(tok, prompt, c1.summary, chat).tolist()
    assert summary2.tolist() == prompts.summary_ids(tok, prompts.restart_text(prompt, c1.summary), c2.reasoning,
                                                    SHORT, chat).tolist()
    assert third.tolist() == prompts.restart_ids(tok, prompt, c2.summary, chat).tolist()
    assert [c.prompt_tokens for c in r.cycles] == [first.shape[1], second.shape[1], third.shape[1]]
    assert c3.summary == "" and c3.summary_tokens == 0  # no summary after the last cycle
    text = tok.decode(second[0].tolist())
    assert PROBLEM.question in text and prompts.RESTART_HEADING in text


def test_plain_format_joins_the_pieces_as_text(handle):
    ids = prompts.summary_ids(handle.tokenizer, "Q?", "reasoning", "Sum up.", chat=False)
    assert handle.tokenizer.decode(ids[0].tolist(), skip_special_tokens=True) == "Q?\n\nreasoning\n\nSum up.\n"


@pytest.mark.parametrize("options, max_new_tokens", [
    (dict(cycles=3), 7),
    (dict(cycles=4, summary_tokens=3), 5),
    (dict(cycles=8, total_tokens=20), 7),  # the total decides: fewer cycles, the last one clipped
    (dict(cycles=2, total_tokens=9), 7),
])
def test_budget_accounting(handle, calls, options, max_new_tokens):
    config = rc(max_new_tokens, seed=2, **options)
    r = run_one(handle, PROBLEM, config).value
    s = config.extra["summary_tokens"]
    assert all(c.reasoning_tokens <= max_new_tokens and c.summary_tokens <= s for c in r.cycles)
    assert all(budget <= max_new_tokens for _, budget in calls)  # nothing asked of the kernel beyond the budget
    spent = sum(c.reasoning_tokens + c.summary_tokens for c in r.cycles)
    assert r.tokens_generated == spent <= planned_tokens(config)
    assert r.cycle_tokens[-1] == spent and list(r.cycle_tokens) == sorted(r.cycle_tokens)
    if options.get("total_tokens"):
        assert spent <= options["total_tokens"]
    else:
        assert len(r.cycles) == options["cycles"]
    assert len(r.token_ids) == r.cycles[-1].reasoning_tokens


def test_an_answer_after_every_cycle(handle):
    r = run_one(handle, PROBLEM, rc(cycles=3, seed=3)).value
    assert [c.answer for c in r.cycles] == [extract_answer(c.reasoning) for c in r.cycles]
    assert r.output == r.cycles[-1].reasoning and r.answer == r.cycles[-1].answer
    assert r.cycle_correct == tuple(c.answer == 5 for c in r.cycles)
    assert r.summary()["cycle_answers"] == tuple(c.answer for c in r.cycles)
    free = run_one(handle, "Say hi.", rc(cycles=2)).value  # a free prompt: no checker, no answers
    assert [c.answer for c in free.cycles] == [None, None] and free.cycle_correct == (None, None)


def test_cached_and_deterministic(handle, tmp_path, monkeypatch):
    """The strategies' contract (tests/decoding/test_strategies.py) on a question short enough for the tiny model."""
    first = run_one(handle, PROBLEM, rc(cycles=2, seed=4, temperature=0.8))
    again = run_one(handle, PROBLEM, rc(cycles=2, seed=4, temperature=0.8))
    assert not first.cached and again.cached and again.value.cycles == first.value.cycles
    assert first.value.forward_passes >= 3 and first.value.wall_seconds > 0
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "store.duckdb"))  # an empty store: computed afresh
    fresh = run_one(handle, PROBLEM, rc(cycles=2, seed=4, temperature=0.8))
    assert not fresh.cached and fresh.key == first.key and fresh.value.cycles == first.value.cycles


def test_a_batch_runs_plain_decoding_at_the_same_budget_beside_it(handle):
    config = rc(cycles=2)
    settings = settings_for([config])
    assert [s.config.strategy for s in settings] == ["rc", "greedy"]
    assert settings[1].config.max_new_tokens == planned_tokens(config) == 2 * 7 + 5
    swept = settings_for([config], [1, 2])  # one reference per distinct budget
    assert [s.label for s in swept][:2] == ["RC (reasoning-summary cycles) x1", "RC (reasoning-summary cycles) x2"]
    assert [s.config.max_new_tokens for s in swept[2:]] == [7, 19]
    batch = run_batch(handle, [PROBLEM], settings).value
    row = next(r for r in batch.rows if r.strategy == "rc")
    assert len(row.cycle_answers) == 2 and len(row.cycle_tokens) == 2 and row.cycle_correct[-1] == row.correct


@pytest.mark.parametrize("options, message", [
    (dict(cycles=0), "cycles must be in [1, 32], got 0"),
    (dict(summary_tokens=0), "summary_tokens must be in [1, 512]"),
    (dict(total_tokens=3), "total_tokens must be 0 (cycles decide) or at least max_new_tokens"),
    (dict(summary_instruction="  "), "summary_instruction must be a non-empty text"),
    (dict(temperature=-1.0), "temperature must be in"),
    (dict(rounds=2), "Unknown option(s) for rc: rounds"),
])
def test_bad_options_are_refused_naming_the_field(options, message):
    with pytest.raises(UserError, match=re.escape(message)):
        rc(**options)


def test_a_cycle_over_the_context_is_refused_before_any_forward(handle, calls):
    with pytest.raises(UserError) as err:
        run_one(handle, PROBLEM, rc(max_new_tokens=100, summary_tokens=40))  # the prompt alone fits
    message = str(err.value)
    assert "max_new_tokens" in message and "summary_tokens" in message and "context of 256 tokens" in message
    assert calls == []


def test_cli_compare_runs_rc_beside_plain_decoding_and_refuses_a_cycle_over_the_context(tmp_path, capsys):
    from backend.__main__ import main

    upload = tmp_path / "p.jsonl"
    upload.write_text('{"question": "2 + 3?", "answer": 5}\n')
    flags = ["--model", "tiny-llama", "--jsonl", str(upload), "--option", 'summary_instruction="Sum up."',
             "--option", "cycles=2", "--json"]
    assert main(["decode", "compare", "--strategies", "rc", "--max-new-tokens", "4", "--option", "summary_tokens=3",
                 *flags]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["label"] for s in out["summary"]] == ["RC (reasoning-summary cycles)",
                                                    "Greedy at RC's budget (11 tokens)"]
    assert len(out["rows"][0]["cycle_answers"]) == 2 and out["rows"][1]["cycle_answers"] == []
    # plain decoding at RC's budget (2 x 40 + 30 tokens) fits beside the prompt; RC's summary request does not
    assert main(["decode", "compare", "--strategies", "rc", "--max-new-tokens", "40", "--option",
                 "summary_tokens=30", *flags]) == 2
    err = capsys.readouterr().err
    assert "max_new_tokens" in err and "summary_tokens" in err and "Traceback" not in err


def test_cli_problem_sets_as_on_the_page(capsys):
    from backend.__main__ import main

    assert main(["decode", "run", "--model", "tiny-llama", "--set", "long", "--steps", "3", "--json"]) == 2
    assert "--steps must be one of 4, 5, 6, 7, 8 for the long set, got 3" in capsys.readouterr().err
    assert main(["decode", "run", "--model", "tiny-llama", "--strategy", "greedy", "--set", "broad", "--steps", "1",
                 "--max-new-tokens", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["problem_id"].startswith("broad-")
