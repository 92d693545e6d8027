"""Sample texts for observed attention scores (written for this project; varied on purpose:
prose, code, numbers, a list, repetition, chat-like text). Only their first tokens are used."""
from __future__ import annotations

SAMPLE_TEXTS: tuple[str, ...] = (
    "The river had frozen early that year, and the children of the valley walked across it to school, "
    "counting the cracks in the ice and arguing about which of them would be the first to fall through.",
    "def moving_average(values, window):\n    total = sum(values[:window])\n    out = [total / window]\n"
    "    for i in range(window, len(values)):\n        total += values[i] - values[i - window]\n"
    "        out.append(total / window)\n    return out\n",
    "Invoice 4417: 12 units at 3.75 each, 8 units at 11.20 each, shipping 14.00, tax 7.5 percent. "
    "Subtotal 134.60, tax 10.10, total 158.70. Paid on 2024-03-18 by transfer.",
    "Shopping list: eggs, flour, two lemons, olive oil, basil, parmesan, dried pasta, tinned tomatoes, "
    "garlic, black pepper, sea salt, a bottle of red wine, and something sweet for dessert.",
    "the cat sat on the mat. the cat sat on the mat. the cat sat on the mat. the cat sat on the mat. "
    "the cat sat on the mat. the cat sat on the mat. the cat sat on the mat.",
    "User: Can you explain why the sky looks blue during the day but red at sunset?\nAssistant: Sunlight "
    "scatters off air molecules, and shorter blue wavelengths scatter much more strongly than red ones.",
    "Photosynthesis converts light energy into chemical energy: chlorophyll absorbs photons, water is split, "
    "oxygen is released, and the Calvin cycle fixes carbon dioxide into sugars inside the chloroplast.",
    "Ein kleiner Hund lief über die Straße, blieb plötzlich stehen und sah sich um, als hätte er etwas "
    "Wichtiges vergessen. Dann rannte er weiter, schneller als zuvor.",
)
