"""Gold segmentation files and marked texts (chunking.evaluation.gold)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking.evaluation.gold import (
    DEFAULT_MARKER,
    KEYS,
    Gold,
    GoldError,
    gold_from_marked,
    load_gold,
    parse_gold,
    parse_marked,
    read_gold,
    text_sha256,
)
from tests.conftest import ROOT, SAMPLE_DOCS

TEXT = "First segment here.\n\nSecond one, longer.\n\nThird and last.\n"
SECOND, THIRD = TEXT.index("Second"), TEXT.index("Third")


def gold_json(**changes: object) -> str:
    data = Gold.create(TEXT, "t.txt", [SECOND, THIRD], note="n", created="2026-01-01").to_dict()
    data.update(changes)
    return json.dumps(data)


def test_a_gold_file_round_trips_with_the_issues_keys(tmp_path):
    gold = Gold.create(TEXT, "t.txt", [THIRD, SECOND, SECOND, 0], note="by hand")
    assert gold.boundaries == (SECOND, THIRD)  # sorted, once each, 0 left out
    assert gold.unit == "chars" and gold.sha256 == text_sha256(TEXT)
    assert gold.created.endswith("+00:00")
    path = tmp_path / "t.gold.json"
    path.write_text(gold.to_json(), encoding="utf-8")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert tuple(data) == KEYS == ("document", "sha256", "boundaries", "unit", "note", "created")
    assert read_gold(path, TEXT) == gold
    assert load_gold(gold.to_json().encode(), TEXT) == gold


def test_the_hash_is_of_the_utf8_text():
    import hashlib

    text = "Grüße, 漢字 🙂"
    assert text_sha256(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_a_gold_file_for_another_text_is_refused_with_both_hashes():
    other = TEXT.replace("longer", "shorter")
    with pytest.raises(GoldError) as error:
        load_gold(gold_json(), other, name="edited.txt")
    message = str(error.value)
    assert "'t.txt' was drawn on another text" in message
    assert text_sha256(TEXT)[:12] in message and text_sha256(other)[:12] in message
    assert "edited.txt" in message and "\n" not in message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("{not json", "is not valid JSON"),
        (b"\xff\xfe", "is not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        (json.dumps({"document": "t.txt"}), "has no 'sha256', 'boundaries'"),
        (gold_json(boundaries=[THIRD, SECOND]), "sorted ascending without repeats"),
        (gold_json(boundaries=[SECOND, SECOND]), "sorted ascending without repeats"),
        (gold_json(boundaries=[0, SECOND]), "boundary 0 is not a segment start"),
        (gold_json(boundaries=[-3]), "boundary -3 is not a segment start"),
        (gold_json(boundaries=[1.5]), "list of whole character offsets"),
        (gold_json(boundaries=[True]), "list of whole character offsets"),
        (gold_json(boundaries="1,2"), "list of whole character offsets"),
        (gold_json(unit="tokens"), "unit 'tokens' is not supported"),
        (gold_json(sha256="abc"), "64 lowercase hexadecimal digits"),
        (gold_json(note=3), "'note' must be a string"),
    ],
)
def test_a_malformed_gold_file_says_what_is_wrong(data, expected):
    with pytest.raises(GoldError, match=expected):
        parse_gold(data, "gold file g.json")


def test_offsets_past_the_end_are_refused():
    with pytest.raises(GoldError, match="past the end of the document"):
        Gold(document="t.txt", sha256=text_sha256(TEXT), boundaries=(len(TEXT),)).check(TEXT)
    with pytest.raises(GoldError, match="outside the document"):
        Gold.create(TEXT, "t.txt", [len(TEXT) + 5])


def test_note_and_created_may_be_missing_from_a_file():
    data = json.loads(gold_json())
    del data["note"], data["created"], data["unit"]
    gold = load_gold(json.dumps(data), TEXT)
    assert (gold.note, gold.created, gold.unit) == ("", "", "chars")


def test_a_missing_gold_file_is_one_clear_error(tmp_path):
    with pytest.raises(GoldError, match="was not found"):
        read_gold(tmp_path / "nope.json", TEXT)


def test_the_sample_gold_is_for_the_long_essay():
    text = (SAMPLE_DOCS / "long_essay.txt").read_text(encoding="utf-8")
    gold = read_gold(ROOT / "sample_gold" / "long_essay.gold.json", text)
    assert gold.document == "long_essay.txt" and gold.note
    with pytest.raises(GoldError, match="another text"):
        read_gold(ROOT / "sample_gold" / "long_essay.gold.json", text + " ")


# ------------------------------------------------------------------------ marked texts


def test_a_marker_line_and_its_line_break_are_removed():
    marked = f"A b.\n{DEFAULT_MARKER}\nC d.\n"
    assert parse_marked(marked) == ("A b.\nC d.\n", [5])


def test_blank_lines_around_a_marker_stay_in_the_document():
    marked = f"A.\n\n{DEFAULT_MARKER}\n\nB.\n"
    text, boundaries = parse_marked(marked)
    assert text == "A.\n\n\nB.\n" and boundaries == [4]


def test_marker_lines_may_have_spaces_and_windows_line_ends():
    marked = f"A.\r\n   {DEFAULT_MARKER}\t\r\nB.\r\n"
    assert parse_marked(marked) == ("A.\r\nB.\r\n", [4])


def test_markers_that_separate_nothing_add_no_boundary():
    marked = f"{DEFAULT_MARKER}\nA.\n{DEFAULT_MARKER}\n{DEFAULT_MARKER}\nB.\n{DEFAULT_MARKER}"
    assert parse_marked(marked) == ("A.\nB.\n", [3])


def test_a_marker_inside_a_line_is_text():
    marked = f"See {DEFAULT_MARKER} here.\n{DEFAULT_MARKER}\nB."
    assert parse_marked(marked) == (
        f"See {DEFAULT_MARKER} here.\nB.",
        [len(marked.split("\n")[0]) + 1],
    )


def test_another_marker_can_be_chosen():
    assert parse_marked("A.\n---\nB.", "---") == ("A.\nB.", [3])
    with pytest.raises(GoldError, match="on one line"):
        parse_marked("A.", "  ")


@given(
    st.lists(
        st.text(st.characters(blacklist_characters="\n\r"), min_size=1, max_size=12).filter(
            lambda line: line.strip() != DEFAULT_MARKER
        ),
        min_size=1,
        max_size=6,
    )
)
def test_segments_joined_by_marker_lines_come_back(lines):
    segments = [line + "\n" for line in lines]
    marked = f"{DEFAULT_MARKER}\n".join(segments)
    text, boundaries = parse_marked(marked)
    assert text == "".join(segments)
    starts, at = [], 0
    for segment in segments[:-1]:
        at += len(segment)
        starts.append(at)
    assert boundaries == starts
    assert [text[a:b] for a, b in zip([0, *starts], [*starts, len(text)], strict=True)] == segments


def test_a_marked_text_becomes_a_gold_segmentation():
    text, gold = gold_from_marked(f"One.\n{DEFAULT_MARKER}\nTwo.\n", "lesson.txt", note="n")
    assert text == "One.\nTwo.\n"
    assert gold.boundaries == (5,) and gold.sha256 == text_sha256(text)
    assert gold.document == "lesson.txt" and gold.note == "n"


def test_a_marked_text_without_a_marker_is_refused():
    with pytest.raises(GoldError, match="no line holding only the marker '<<<BOUNDARY>>>'"):
        gold_from_marked("One.\nTwo.\n", "lesson.txt")
    with pytest.raises(GoldError, match="holds only markers"):
        gold_from_marked(f"{DEFAULT_MARKER}\n\n{DEFAULT_MARKER}\n", "lesson.txt")
