"""``chunk-explorer boundaries``: exit codes, JSON keys, marked gold files."""

from __future__ import annotations

import json
import shutil

import pytest

from chunking import Config, run
from chunking.cli import main
from chunking.evaluation.boundaries import boundary_scores
from chunking.evaluation.gold import DEFAULT_MARKER, read_gold
from tests.conftest import ROOT, SAMPLE_DOCS, write

ESSAY = str(SAMPLE_DOCS / "long_essay.txt")
GOLD = str(ROOT / "sample_gold" / "long_essay.gold.json")
KEYS = ("pk", "windowdiff", "b", "precision", "recall", "f1", "k", "tolerance")
PREFIX = "chunk-explorer: error:"
SENTENCES_40 = ("-s", "sentence", "--size", "40", "--unit", "chars")


def run_json(capsys, *args: str) -> dict:
    assert main(["boundaries", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def error_line(capsys, *args: str) -> str:
    assert main(["boundaries", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(PREFIX) and "\n" not in err and "Traceback" not in err
    return err


def test_every_configuration_gets_the_issues_keys(tmp_path, capsys):
    a = write(tmp_path / "a.json", Config.create("paragraph", size=1500, unit="chars").to_json())
    b = write(tmp_path / "b.json", Config.create("fixed", size=1500, unit="chars").to_json())
    data = run_json(capsys, ESSAY, "--gold", GOLD, "--config", str(a), str(b))
    assert [r["config"]["strategy"] for r in data["results"]] == ["paragraph", "fixed"]
    for result in data["results"]:
        for key in KEYS:
            assert key in result
        assert result["tolerance"] == 0 and result["tolerance_unit"] == "chars"
    text = (SAMPLE_DOCS / "long_essay.txt").read_text(encoding="utf-8")
    gold = read_gold(GOLD, text)
    expected = boundary_scores(
        text, gold.boundaries, run(text, Config.create("paragraph", size=1500, unit="chars"))
    )
    assert data["results"][0]["f1"] == expected["f1"]
    assert data["results"][0]["pk"] == expected["pk"]
    assert data["gold"]["boundaries"] == len(gold.boundaries)
    assert data["human_band"]["b"][0] < data["human_band"]["b"][1]


def test_config_may_be_repeated_and_strategy_flags_override(tmp_path, capsys):
    a = write(tmp_path / "a.json", Config.create("paragraph", size=1500, unit="chars").to_json())
    data = run_json(
        capsys, ESSAY, "--gold", GOLD, "--config", str(a), "--config", str(a), "--size", "900"
    )
    assert [r["config"]["params"]["size"] for r in data["results"]] == [900, 900]


def test_strategy_flags_tolerance_and_k(capsys):
    data = run_json(
        capsys,
        ESSAY,
        "--gold",
        GOLD,
        "-s",
        "sentence",
        "--size",
        "800",
        "--unit",
        "chars",
        "--tolerance",
        "1sentence",
        "--k",
        "300",
    )
    (result,) = data["results"]
    assert result["k"] == 300
    assert (result["tolerance"], result["tolerance_unit"]) == (1, "sentences")
    exact = run_json(
        capsys, ESSAY, "--gold", GOLD, "-s", "sentence", "--size", "800", "--unit", "chars"
    )["results"][0]
    assert result["f1"] >= exact["f1"]
    assert exact["k"] != 300


def test_the_text_table_names_the_window_and_the_human_band(capsys):
    assert (
        main(
            [
                "boundaries",
                ESSAY,
                "--gold",
                GOLD,
                "-s",
                "paragraph",
                "--size",
                "1500",
                "--unit",
                "chars",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "40 boundaries" in out
    assert "k = 763 characters" in out and "half the mean gold segment" in out
    assert "b 0.23–0.53, pk 0.29–0.36" in out
    header = next(line for line in out.splitlines() if line.startswith("configuration"))
    for column in ("pk", "windowdiff", "b", "precision", "recall", "f1"):
        assert f" {column}" in header
    assert "paragraph · 1500 chars" in out


def test_a_marked_file_can_be_both_document_and_gold(tmp_path, capsys):
    lesson = write(
        tmp_path / "lesson.txt",
        "Cats purr when they are content.\nThey sleep a lot.\n"
        f"{DEFAULT_MARKER}\nRivers carry water to the sea.\nThey shape valleys.\n",
    )
    data = run_json(
        capsys,
        str(lesson),
        "--gold",
        str(lesson),
        *SENTENCES_40,
    )
    result = data["results"][0]
    assert data["document"]["characters"] == len(lesson.read_text()) - len(DEFAULT_MARKER) - 1
    assert result["gold_boundaries"] == 1
    assert result["matched"] and result["recall"] == 1.0
    clean = write(tmp_path / "clean.txt", lesson.read_text().replace(f"{DEFAULT_MARKER}\n", ""))
    again = run_json(
        capsys,
        str(clean),
        "--gold",
        str(lesson),
        *SENTENCES_40,
    )
    assert again["results"][0]["f1"] == result["f1"]
    custom = write(tmp_path / "custom.txt", lesson.read_text().replace(DEFAULT_MARKER, "---"))
    mine = run_json(
        capsys,
        str(clean),
        "--gold",
        str(custom),
        "--marker=---",
        *SENTENCES_40,
    )
    assert mine["results"][0]["f1"] == result["f1"]


def test_a_gold_file_for_another_document_exits_2(capsys):
    err = error_line(
        capsys, str(SAMPLE_DOCS / "support_chat.txt"), "--gold", GOLD, "-s", "sentence"
    )
    assert "drawn on another text" in err and "support_chat.txt" in err


@pytest.mark.parametrize(
    ("content", "expected"),
    [("{oops", "is not valid JSON"), ('{"document": "x"}', "has no 'sha256', 'boundaries'")],
)
def test_a_bad_gold_file_exits_2(tmp_path, capsys, content, expected):
    bad = write(tmp_path / "bad.json", content)
    assert expected in error_line(capsys, ESSAY, "--gold", str(bad), "-s", "sentence")


def test_a_marked_gold_without_markers_exits_2(tmp_path, capsys):
    copy = tmp_path / "essay.txt"
    shutil.copy(ESSAY, copy)
    err = error_line(capsys, ESSAY, "--gold", str(copy), "-s", "sentence")
    assert "no line holding only the marker" in err and "--marker" in err


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--tolerance", "3 words"], "--tolerance expects"),
        (["--k", "0"], "--k must be a window of at least 1"),
        (["--gold", "missing.json"], "was not found"),
        (["--config", "missing.config.json"], "was not found"),
        (["-s", "nope"], "nope"),
    ],
)
def test_bad_options_exit_2_with_one_line(capsys, extra, expected):
    args = [ESSAY, "--gold", GOLD, *extra]
    if "-s" not in extra and "--config" not in extra:
        args += ["-s", "sentence"]
    assert expected in error_line(capsys, *args)


def test_gold_is_required(capsys):
    assert main(["boundaries", ESSAY]) == 2
    assert "--gold" in capsys.readouterr().err


def test_other_commands_keep_their_single_config(tmp_path, capsys):
    """The command's own --config (several files) must not change the shared one."""
    a = write(tmp_path / "a.json", Config.create("paragraph", size=1500, unit="chars").to_json())
    assert main(["stats", ESSAY, "--config", str(a), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["strategy"] == "paragraph"
