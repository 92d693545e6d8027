"""backend/verbs.py: the derived code version and the registry."""
import importlib
import sys

import pytest

from backend import variants
from backend.variants import Registry, Variant
from backend.verbs import Verb, all_verbs, register, source_digest


def _module(tmp_path, name: str, source: str):
    (tmp_path / f"{name}.py").write_text(source)
    sys.path.insert(0, str(tmp_path))
    try:
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


COMPUTE = '''
def compute(subject, config, progress):
    """Doubles."""
    return 2 * config
'''


def test_docstrings_comments_and_layout_leave_the_version_what_it_was(tmp_path):
    before = source_digest([_module(tmp_path, "verb_a", COMPUTE).compute])
    reworded = COMPUTE.replace('"""Doubles."""', '"""Twice the config."""  # a comment').replace("2 * config",
                                                                                            "2  *  config")
    assert source_digest([_module(tmp_path, "verb_b", reworded).compute]) == before


def test_a_changed_computation_changes_the_version(tmp_path):
    before = source_digest([_module(tmp_path, "verb_c", COMPUTE).compute])
    assert source_digest([_module(tmp_path, "verb_d", COMPUTE.replace("2 *", "3 *")).compute]) != before


def test_what_a_verb_reads_enters_its_version(tmp_path):
    helper = _module(tmp_path, "verb_helper", "SCALE = 2\n")
    compute = _module(tmp_path, "verb_e", COMPUTE).compute
    assert source_digest([compute, helper]) != source_digest([compute])


def test_a_variant_plugged_in_later_enters_the_version(tmp_path, monkeypatch):
    monkeypatch.setattr(variants, "_ALL", dict(variants._ALL))  # the test's family is not left among the registries
    family = Registry("verb-test-family", "test variant")
    first = _module(tmp_path, "verb_variant_a", "def run():\n    return 1\n")
    second = _module(tmp_path, "verb_variant_b", "def run():\n    return 2\n")
    compute = _module(tmp_path, "verb_f", COMPUTE).compute
    family.register(Variant("a", "A", "first", run=first.run))
    alone = Verb("test", "alone", int, compute, "", variants=(family,)).code_version
    family.register(Variant("b", "B", "plugged in", run=second.run))
    assert Verb("test", "plugged", int, compute, "", variants=(family,)).code_version != alone


def test_a_lambda_cannot_be_versioned():
    with pytest.raises(TypeError, match="named functions"):
        source_digest([eval("lambda x: x")])


def test_the_same_verb_declared_twice_is_refused():
    known = all_verbs()[0]
    with pytest.raises(ValueError, match="declared twice"):
        register(Verb(known.feature, known.name, known.config, known.compute, known.help))


@pytest.mark.parametrize("verb", all_verbs(), ids=lambda v: f"{v.feature} {v.name}")
def test_every_verb_has_help_and_a_config_type(verb):
    assert verb.help and isinstance(verb.config, type) and len(verb.code_version) == 12


def test_a_background_run_starts_with_every_code_version_derived(monkeypatch):
    """A verb's first call derives its version by parsing source; in a background thread that parse could meet the
    page's own (CPython 3.11 shares the parser's state between threads): app.ui.run derives them all first."""
    import threading

    from streamlit.testing.v1 import AppTest

    from backend import verbs

    monkeypatch.setattr(verbs, "_VERBS", dict(verbs._VERBS))
    for verb in all_verbs():
        vars(verb).pop("code_version", None)  # as in a fresh process
    derived_at_start = []
    real_start = threading.Thread.start

    def start(thread):
        if thread.name.startswith("background-"):
            derived_at_start.append(all("code_version" in vars(v) for v in verbs._VERBS.values()))
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)

    def page():
        from app.ui.run import start_in_background

        start_in_background("versions", "nothing", lambda progress: None, kept="nothing")

    AppTest.from_function(page).run()
    assert derived_at_start == [True]
