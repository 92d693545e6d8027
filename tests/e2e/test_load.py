"""The load bench's short version: two browser sessions and the CLI on one server for a minute (one session runs
long computations while the other walks every page and pastes a text): no errors, no session sees another's
text, the CLI's runs and the app's are both in the store. The full run (8 sessions x 10 min) is `python -m bench
load`, with its figures in docs/RESULTS.md."""
from bench.load import Plan, run


def test_two_sessions_and_the_cli_for_a_minute():
    # the browsing session reads each page for about a second, as the full bench's users do for longer: a minute
    # still walks every page several times, and the suite's other tests keep the CPU it would burn clicking on.
    # The CLI runs as the server starts and again while the sessions browse (each run is seconds of imports).
    # The long session rests 4 s between its runs: back to back on the tiny model it ran 24 short runs a minute,
    # and its Chromium redrawing their results was most of the test's CPU, taken from the suite's other worker.
    result = run(Plan(sessions=2, seconds=60, step_timeout_s=240, other_model=None, cli_every_s=40,
                      model="tiny-llama", think_s=1.0, long_pause_s=4.0))
    assert result["errors"] == []
    assert result["isolation_violations"] == []
    assert sum(s["pages_checked"] for s in result["sessions"]) >= 4, result["sessions"]
    assert all(s["long_runs"] >= 1 for s in result["sessions"] if s["role"] == "long"), result["sessions"]
    assert result["cli"]["runs"] >= 1 and result["cli"]["failures"] == []
    assert result["store"]["app_runs"] >= 1 and result["store"]["cli_runs"] >= 1, result["store"]
