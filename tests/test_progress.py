"""Partial results reach whoever watches a progress, through sub-tasks, and cost nothing when nobody does."""
from backend.progress import Partial, SubProgress, report_partial, scaled, silent, unshown, wants_partials
from tests.support.partials import PartialsSeen


def test_a_plain_progress_ignores_partials_and_a_watcher_gets_them():
    report_partial(silent, Partial("rows", 1, 2, "problems"))  # nobody watches: nothing happens
    assert not wants_partials(silent) and not wants_partials(lambda f, m: None)
    seen = PartialsSeen()
    report_partial(seen, Partial("rows", 1, 2, "problems"))
    assert wants_partials(seen) and seen.partials == [Partial("rows", 1, 2, "problems")]
    assert seen.partials[0].line() == "1 of 2 problems"


def test_scaled_maps_the_fraction_and_passes_partials_through():
    seen = PartialsSeen()
    part = scaled(seen, 0.5, 1.0)
    part(0.5, "half of the second half")
    report_partial(part, Partial("so far", 3, 4, "rows"))
    assert seen.fractions == [0.75] and seen.done() == [3]


def test_a_sub_task_converts_its_partials_or_hides_them_and_converts_only_when_watched():
    seen, converted = PartialsSeen(), []

    def convert(partial):
        converted.append(partial)
        return Partial(f"table with {partial.value}", partial.done, partial.total, "lines")

    report_partial(SubProgress(seen, convert=convert), Partial("row", 1, 3, "sentences"))
    report_partial(SubProgress(seen, convert=unshown), Partial("a head map", 1, 1, "maps"))
    assert [p.value for p in seen.partials] == ["table with row"]
    report_partial(SubProgress(silent, convert=convert), Partial("row", 2, 3, "sentences"))
    assert len(converted) == 1 and not wants_partials(SubProgress(silent))
