"""backend.unicode_text: hidden characters made visible in names; detection's normalisation (NFC, format characters
removed, Latin look-alikes folded) changes attacked text back and leaves real Cyrillic, Greek and Turkish alone."""
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from backend.unicode_text import normalize, visible


def test_a_right_to_left_override_in_a_name_is_shown_not_applied():
    name = "evil-model\u202eko"
    assert visible(name) == "evil-model\\u202eko"
    assert "\u202e" not in visible(name)
    for hidden in ("\u200b", "\u200d", "\u2066", "\u00ad", "\ufeff", "\n", "\x00", "\u2028", "\U000e0041"):
        shown = visible(f"a{hidden}b")
        assert hidden not in shown and shown.startswith("a\\") and shown.endswith("b")
    assert visible("plain name") == "plain name" and visible("Müller · 日本") == "Müller · 日本"


def test_zero_width_and_format_characters_are_removed_and_counted():
    text = "Hello world."
    attacked = "\u200b".join(text) + "\u202e\u00ad\ufeff\u2060"
    clean = normalize(attacked)
    assert clean.text == text and clean.removed == len(text) - 1 + 4 and clean.folded == 0
    assert clean.describe() == f"{len(text) + 3} invisible characters removed"


def test_look_alikes_fold_to_latin_inside_latin_text():
    clean = normalize("The wаtеrmаrk is in а саsе. ＦＵＬＬ width！ Μοdel Κit")
    assert clean.text == "The watermark is in a case. FULL width! Model Kit"
    assert clean.folded == 3 + 1 + 3 + 4 + 1 + 2 + 1 and clean.removed == 0  # wаtеrmаrk а саsе ＦＵＬＬ ！ Μο Κ
    assert "look-alike letters folded to Latin" in clean.describe()


def test_real_cyrillic_greek_and_turkish_text_is_left_alone():
    for text in ("Это первое предложение. А это сор и он.", "Η γάτα κάθεται στο χαλί και ο σκύλος τρέχει.",
                 "Kırmızı ışık yandı.", "日本語の文です。"):
        assert normalize(text).text == unicodedata.normalize("NFC", text) and normalize(text).folded == 0


def test_nfc_composes():
    assert normalize("cafe\u0301").text == "café"


@given(st.text(max_size=200))
def test_normalising_is_idempotent_and_leaves_no_format_character(text):
    once = normalize(text)
    assert normalize(once.text).text == once.text
    assert not any(unicodedata.category(c) == "Cf" for c in once.text)


def test_the_cli_prints_names_with_hidden_characters_written_out(tmp_path, monkeypatch, capsys):
    import json

    from backend.__main__ import main

    monkeypatch.setenv("DASH_STORE", str(tmp_path / "store.duckdb"))
    monkeypatch.setenv("DASH_WATERMARK_SECRET_FILE", str(tmp_path / "secret.key"))
    assert main(["watermark", "identity", "add-model", "--name", "evil-model\u202eko"]) == 0
    assert main(["watermark", "identity", "list"]) == 0
    out = capsys.readouterr().out
    assert "evil-model\\u202eko" in out and "\u202e" not in out
    assert main(["watermark", "identity", "list", "--json"]) == 0
    printed = capsys.readouterr().out
    assert "\u202e" not in printed  # JSON escapes it; the value itself is the name as stored
    assert "evil-model\u202eko" in {row["name"] for row in json.loads(printed)}


# Issue 55 §1: whitespace and separators are one canonical space; controls inside words are removed
SPACED = "The cat sat on the mat. It was warm."


def test_every_whitespace_character_and_run_is_one_ascii_space():
    for space in ("\t", "\n", "\r\n", "  ", " \n\t ", "\u00a0", "\u2003", "\u3000", "\u2028", "\u2029", "\x85"):
        assert normalize(SPACED.replace(" ", space)).text == SPACED, repr(space)
    assert normalize("  " + SPACED + "\n\n").text == SPACED


def test_fillers_in_a_space_s_place_are_spaces_and_inside_words_are_removed():
    for filler in ("\u3164", "\uffa0", "\u180e", "\u115f"):
        as_spaces = normalize(SPACED.replace(" ", filler))
        assert as_spaces.text == SPACED and as_spaces.removed == SPACED.count(" ")
        inside = "".join(c + filler if c.isalpha() and i % 3 == 1 else c for i, c in enumerate(SPACED))
        assert normalize(inside).text == SPACED


def test_control_characters_inside_words_are_removed():
    assert normalize("wa\x01ter\x7fmark i\x1fs he\x9bre").text == "watermark is here"


def test_look_alikes_fold_whatever_other_scripts_the_text_holds():
    cyrillic = "Тhе оnе аnd оnlу оrе"  # words written wholly or partly with Cyrillic twins
    assert normalize(cyrillic + " 日本語の文です。").text == "The one and only ore 日本語の文です。"
    assert normalize("ерос ехро " + "日本語" * 20).text.startswith("epoc expo ")  # look-alike-only words, CJK text
    # real Cyrillic next to such words keeps them: "сор" in Russian prose is a Russian word
    assert normalize("Он сказал: сор и пух. 日本語").text == "Он сказал: сор и пух. 日本語"
