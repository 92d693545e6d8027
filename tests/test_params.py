"""Config fields declared with param(): validation on construction, CLI flags and defaults from the field."""
import argparse
from dataclasses import dataclass

import pytest

from backend.cli.params import add_flags, flag_values
from backend.errors import UserError
from backend.params import Config, default_of, help_of, param, require
from backend.variants import Registry, Variant

SHAPES = Registry("test-params-shapes", "shape")
SHAPES.register(Variant("circle", "Circle", "round", print))
SHAPES.register(Variant("square", "Square", "four sides", print))


@dataclass(frozen=True)
class Example(Config):
    window: int = param(8, "spike window", ge=0, le=64)
    rate: float = param(0.1, "share of tokens (10% = 0.1)", gt=0, le=1, hint="(0.05 is 5%)")
    shape: str = param("circle", "which shape", choices=SHAPES)
    verify: bool = param(True, "also compute the exact value")
    tags: list = param([], "free tags")

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self.window == 0 or self.rate < 1, "a window needs a rate below 1")


def test_defaults_are_valid_and_mutable_defaults_are_not_shared():
    a, b = Example(), Example()
    assert a.window == 8 and a.tags == [] and a.tags is not b.tags


@pytest.mark.parametrize("changes, words", [
    ({"window": -1}, "window must be in [0, 64], got -1"),
    ({"window": 65}, "window must be in [0, 64]"),
    ({"rate": 0.0}, "rate must be in (0, 1], got 0.0. (0.05 is 5%)"),
    ({"rate": float("nan")}, "rate must be a number"),
    ({"shape": "triangle"}, "shape must be one of circle, square, got 'triangle'"),
    ({"rate": 1.0}, "a window needs a rate below 1"),
])
def test_invalid_values_raise_user_errors_on_construction(changes, words):
    with pytest.raises(UserError) as err:
        Example(**changes)
    assert words in str(err.value)


def test_cli_flags_take_default_help_and_choices_from_the_field():
    parser = argparse.ArgumentParser()
    add_flags(parser, Example, {"window": "--window", "shape": "--shape", "verify": "--no-verify"})
    add_flags(parser, Example, ["rate"])
    assert "spike window (default: 8)" in parser.format_help()
    assert "(10% = 0.1)" in parser.format_help()
    args = parser.parse_args(["--shape", "square", "--no-verify"])
    config = Example(**flag_values(args, Example, ("window", "shape", "verify")))
    assert (config.window, config.shape, config.verify) == (8, "square", False)
    with pytest.raises(SystemExit):
        parser.parse_args(["--shape", "triangle"])


def test_field_introspection():
    assert default_of(Example, "rate") == 0.1 and help_of(Example, "shape") == "which shape"
    with pytest.raises(KeyError):
        default_of(Example, "nope")
