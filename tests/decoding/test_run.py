"""run_batch reports its rows problem by problem (what the page's table grows from); only the whole batch is stored."""
from backend.decoding import DecodeConfig, run_batch, settings_for
from backend.models import load
from backend.store import NotStored, stored_only
from backend.tasks.arithmetic import load_jsonl_problems

PROBLEMS = "".join(f'{{"question": "{a} plus {a}?", "answer": {2 * a}}}\n' for a in (1, 2, 3))


def test_a_batch_reports_its_rows_after_each_problem_and_stores_only_the_whole(fresh_store):
    handle = load("tiny-llama")
    settings = settings_for([DecodeConfig(strategy="greedy", max_new_tokens=4),
                             DecodeConfig(strategy="sampling", max_new_tokens=4)])
    problems = load_jsonl_problems(PROBLEMS)
    seen = []

    def on_problem(partial, total):
        seen.append(([r.problem_id for r in partial.rows], total))
        try:  # the partial batch is never stored as a batch
            with stored_only():
                run_batch(handle, problems, settings)
            raise AssertionError("a batch was stored before its last problem")
        except NotStored:
            pass

    batch = run_batch(handle, problems, settings, on_problem=on_problem).value
    ids = [p.id for p in problems]
    assert seen == [([pid for pid in ids[:k] for _ in settings], 3) for k in (1, 2, 3)]
    assert [r.problem_id for r in batch.rows] == [pid for pid in ids for _ in settings]
    with stored_only():
        assert run_batch(handle, problems, settings).value == batch
