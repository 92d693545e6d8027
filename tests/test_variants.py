"""The contract every family of variants honours (one registry shape), and the registry itself."""
import dataclasses

import pytest

from backend.errors import UserError
from backend.features import load_all
from backend.variants import Registry, Variant, registries

load_all()
FAMILIES = sorted(f for f in registries() if not f.startswith("test-"))  # skip throwaway test registries


def test_every_feature_registers_its_families():
    assert len(FAMILIES) >= 1


@pytest.mark.parametrize("family", FAMILIES)
def test_variants_have_the_common_shape(family):
    registry = registries()[family]
    assert len(registry) >= 1, f"{family} has no variant"
    for variant in registry:
        assert isinstance(variant, Variant)
        assert variant.name and variant.label.strip() and variant.help.strip(), variant
        assert callable(variant.run), variant.name
        assert variant.config is None or dataclasses.is_dataclass(variant.config), variant.name
        assert registry.get(variant.name) is variant
    assert list(registry.labels()) == list(registry.names())


@pytest.mark.parametrize("family", FAMILIES)
def test_unknown_names_are_user_errors_listing_the_known_ones(family):
    registry = registries()[family]
    with pytest.raises(UserError) as err:
        registry.get("no-such-variant")
    assert all(name in str(err.value) for name in registry.names())


def test_a_name_registered_twice_is_refused_and_unregister_removes():
    registry = Registry("test-family-twice", "test thing")
    first = registry.register(Variant("a", "A", "first", print))
    assert registry.register(first) is first  # the same object again is harmless (module reloads)
    with pytest.raises(ValueError):
        registry.register(Variant("a", "A2", "second", print))
    registry.unregister("a")
    assert "a" not in registry and len(registry) == 0
