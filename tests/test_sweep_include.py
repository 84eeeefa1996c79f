"""A sweep grid's included configurations (the app adds the sidebar's, issue 38 point 2):
evaluated after the axes' combinations, once, and kept through the grid's JSON."""

from __future__ import annotations

import json

import pytest

from chunking import Config
from chunking.evaluation.sweep import Grid


def test_an_included_configuration_is_evaluated_after_the_combinations() -> None:
    mine = Config.create("recursive", size=160, unit="tokens")
    grid = Grid(strategies=("token",), sizes=(200, 400), units=("tokens",), include=(mine,))
    configs, skipped = grid.configs()
    assert [c.label() for c in configs] == [
        "token · 200 tokens",
        "token · 400 tokens",
        mine.label(),
    ]
    assert configs[-1] == mine and not skipped


def test_an_included_configuration_equal_to_a_combination_is_evaluated_once() -> None:
    grid = Grid(strategies=("token",), sizes=(200,), units=("tokens",))
    same = grid.configs()[0][0]
    configs, _ = Grid(
        strategies=("token",), sizes=(200,), units=("tokens",), include=(same,)
    ).configs()
    assert configs == [same]


def test_included_configurations_survive_the_json_round_trip() -> None:
    mine = Config.create("sentence", size=120, unit="words")
    grid = Grid(strategies=("recursive",), sizes=(300,), include=(mine,))
    again = Grid.from_dict(json.loads(json.dumps(grid.to_dict())))
    assert again.include == (mine,)
    assert again.configs() == grid.configs()
    assert "include" not in again.fixed


def test_a_bad_include_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="include"):
        Grid.from_dict({"strategy": ["recursive"], "include": "recursive"})
    with pytest.raises(ValueError, match="strategy"):
        Grid.from_dict({"strategy": ["recursive"], "include": [{"params": {}}]})
