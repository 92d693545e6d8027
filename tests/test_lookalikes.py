"""backend.lookalikes: every entry of the confusables table folds to a Latin letter inside a Latin word, NFKC or
not (issue 55 §1: the lunate sigma and U+037A were carried away by NFKC before the fold saw them)."""
import unicodedata

from backend.lookalikes import before_nfkc, table
from backend.unicode_text import normalize


def test_every_table_entry_maps_to_an_ascii_letter():
    for char, latin in table().items():
        # the table's letter, or the one NFKC says a compatibility form is (the mathematical bold I is an I)
        expected = {f"a{latin}a", f"a{unicodedata.normalize('NFKC', char)}a"}
        assert normalize(f"a{char}a").text in expected, (hex(ord(char)), unicodedata.name(char, "?"))
        assert normalize(f"a{char}a").text.isascii()


def test_the_entries_nfkc_would_spoil_are_folded_before_it():
    assert {"\u03f2", "\u03f9", "\u037a"} <= set(before_nfkc())
    assert normalize("\u03f2at \u03f9at f\u037ash").text == "cat Cat fish"
    assert normalize("ｗａｔｅｒ").text == "water"  # a compatibility form of an ASCII letter: NFKC's answer


def test_turkish_dotless_and_dotted_i_stay():
    assert normalize("Kırmızı İstanbul").text == "Kırmızı İstanbul"
