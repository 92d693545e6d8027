"""Components named in text, checked against the model: heads `L.H`, layers `L`, neurons `L:I` (NAG's ids:
an index of the MLP up projection's output), prompt lists one per line. Every mistake is one UserError line."""
from __future__ import annotations

from backend.errors import UserError
from backend.internals.prompt import check_head, check_layer
from backend.models.architecture import arch_info


def _items(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _pair(item: str, sep: str, what: str, example: str) -> tuple[int, int]:
    try:
        left, right = item.split(sep)
        return int(left), int(right)
    except ValueError:
        raise UserError(f"{what} are written {example}; {item!r} is not.") from None


def heads(model, text: str) -> tuple[tuple[int, int], ...]:
    """`"23.3,29.0"` -> ((23, 3), (29, 0)), each checked against the model."""
    found = []
    for item in _items(text):
        layer, head = _pair(item, ".", "Heads", "LAYER.HEAD, e.g. 5.3")
        found.append((check_layer(model, layer), check_head(model, head)))
    return tuple(dict.fromkeys(found))


def layers(model, text: str, what: str) -> tuple[int, ...]:
    found = []
    for item in _items(text):
        try:
            found.append(check_layer(model, int(item)))
        except ValueError:
            raise UserError(f"{what} are layer numbers such as 5; {item!r} is not one.") from None
    return tuple(dict.fromkeys(found))


def neurons(model, text: str) -> tuple[tuple[int, int], ...]:
    """`"12:401"` -> ((12, 401),), the index checked against the MLP's width."""
    width, found = arch_info(model).intermediate_size, []
    for item in _items(text):
        layer, index = _pair(item, ":", "Neurons", "LAYER:INDEX, e.g. 12:401")
        check_layer(model, layer)
        if not 0 <= index < width:
            raise UserError(f"Neuron {item} does not exist: the MLP has {width} neurons per layer (0..{width - 1}).")
        found.append((layer, index))
    return tuple(dict.fromkeys(found))


def lines(text: str, what: str) -> tuple[str, ...]:
    found = tuple(line.strip() for line in text.splitlines() if line.strip())
    if not found:
        raise UserError(f"The {what} are empty: give at least one text, one per line.")
    return found
