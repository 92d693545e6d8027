"""The one list of features (backend.features.FEATURES) is what the CLI, the app's navigation and load_all read."""
import argparse

from backend.features import FEATURES, PLUG_INS, feature, registering_modules


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    """The top-level commands, each once (an alias such as `disagreement` for `disagree` is the same parser)."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list({id(sub): name for name, sub in reversed(action.choices.items())}.values())[::-1]


def test_the_cli_has_the_core_commands_then_one_per_feature_in_order():
    import importlib

    from backend.__main__ import build_parser, command_modules
    from backend.cli import models_cmd, runs_cmd, store_cmd, verbs_cmd

    core = [models_cmd, runs_cmd, store_cmd, verbs_cmd]
    assert command_modules() == [*core, *(importlib.import_module(f.cli) for f in FEATURES)]
    assert len(_commands(build_parser())) == len(core) + len(FEATURES)


def test_the_navigation_lists_the_feature_pages_in_the_features_order():
    from app.views import FEATURES as VIEWS

    assert [v.script for v in VIEWS] == [f.page for f in FEATURES]


def test_plug_ins_register_after_every_feature_of_their_own():
    modules = registering_modules()
    own = [m for f in FEATURES for m in f.registering_modules]
    assert list(modules[:len(own)]) == own and list(modules[len(own):]) == [p.module for p in PLUG_INS]
    for plug_in in PLUG_INS:
        assert feature(plug_in.host).plug_in_face, f"{plug_in.host} declares no plug-in face"

