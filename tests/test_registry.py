"""Config validation and the declarations every registered strategy makes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import chunking
from chunking import Config, Param
from chunking.config import get_strategy

STRATEGIES = list(chunking.strategies())
KINDS = (int, float, str, bool, list)


# ------------------------------------------------------------------ unknown names


def test_unknown_strategy_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown strategy 'nope'") as info:
        Config.create("nope")
    for name in STRATEGIES:
        assert name in str(info.value)


def test_unknown_parameter_names_the_strategy_and_its_parameters() -> None:
    with pytest.raises(ValueError, match="unknown parameter 'bogus'") as info:
        Config.create("recursive", bogus=1)
    message = str(info.value)
    assert "'recursive'" in message
    for name in get_strategy("recursive").param_names:
        assert name in message


# -------------------------------------------------------------------- wrong types


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"size": "abc"}, "size must be an integer"),
        ({"size": True}, "size must be an integer"),
        ({"size": 2.5}, "size must be an integer"),
        ({"size": [10]}, "size must be an integer"),
        ({"strip_whitespace": "maybe"}, "strip_whitespace must be true or false"),
        ({"strip_whitespace": 1}, "strip_whitespace must be true or false"),
        ({"separators": [1, 2]}, "separators must be a list of strings"),
        ({"separators": "not json"}, "separators must be a list of strings"),
        ({"keep_separator": 3}, "keep_separator must be a string"),
    ],
)
def test_wrong_types_are_rejected_with_the_parameter_name(params: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        Config.create("recursive", **params)


def test_text_values_are_converted_to_the_declared_type() -> None:
    config = Config.create(
        "recursive",
        size="250",
        overlap=10.0,
        strip_whitespace="false",
        separators='["\\n\\n", " "]',
    )
    assert config.params["size"] == 250
    assert config.params["overlap"] == 10
    assert isinstance(config.params["overlap"], int)
    assert config.params["strip_whitespace"] is False
    assert config.params["separators"] == ["\n\n", " "]


# ------------------------------------------------------------------------ ranges


@pytest.mark.parametrize(
    ("strategy", "params", "fragment"),
    [
        ("recursive", {"size": 0}, "size must be at least 1"),
        ("recursive", {"size": -5}, "size must be at least 1"),
        ("recursive", {"overlap": -1}, "overlap must be at least 0"),
        ("recursive", {"size": 10**9}, "size must be at most"),
        ("recursive", {"unit": "bytes"}, "unit must be one of chars, words, tokens"),
        ("recursive", {"keep_separator": "middle"}, "keep_separator must be one of"),
        ("sliding", {"window": 0}, "window must be at least 1"),
        ("token", {"unit": "chars"}, "unit must be one of tokens"),
    ],
)
def test_out_of_range_values_are_rejected(strategy: str, params: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        Config.create(strategy, **params)


@pytest.mark.parametrize("overlap", [100, 101, 5000])
@pytest.mark.parametrize("strategy", ["recursive", "fixed", "token"])
def test_overlap_must_stay_below_size(strategy: str, overlap: int) -> None:
    with pytest.raises(ValueError, match=rf"overlap \({overlap}\) must be smaller than size"):
        Config.create(strategy, size=100, overlap=overlap)


def test_overlap_just_below_size_is_accepted() -> None:
    assert Config.create("recursive", size=100, overlap=99).params["overlap"] == 99


def test_stride_must_not_exceed_window() -> None:
    with pytest.raises(ValueError, match=r"stride \(201\) must not exceed window \(200\)"):
        Config.create("sliding", window=200, stride=201)
    assert Config.create("sliding", window=200, stride=200).params["stride"] == 200


# -------------------------------------------------------------------- round trips


ROUND_TRIP = [
    ("recursive", {"size": 321, "overlap": 12, "unit": "words", "separators": ["\n", " "]}),
    ("fixed", {"size": 64, "overlap": 8, "unit": "tokens"}),
    ("sliding", {"window": 90, "stride": 30}),
    ("token", {"size": 128, "overlap": 16}),
]


@pytest.mark.parametrize(("strategy", "params"), ROUND_TRIP)
def test_to_dict_from_dict_round_trip(strategy: str, params: dict) -> None:
    config = Config.create(strategy, **params)
    again = Config.from_dict(config.to_dict())
    assert again == config
    assert hash(again) == hash(config)
    for key, value in params.items():
        assert again.params[key] == value


@pytest.mark.parametrize(("strategy", "params"), ROUND_TRIP)
def test_to_json_round_trip(strategy: str, params: dict) -> None:
    config = Config.create(strategy, **params)
    data = json.loads(config.to_json())
    assert data["strategy"] == strategy
    assert Config.from_dict(data) == config


def test_from_dict_fills_in_defaults() -> None:
    config = Config.from_dict({"strategy": "fixed", "params": {"size": 70}})
    assert config.params == {**get_strategy("fixed").defaults(), "size": 70}


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"params": {}}, 'needs a "strategy" key'),
        (["recursive"], 'needs a "strategy" key'),
        ({"strategy": "recursive", "params": [1, 2]}, '"params" must be an object'),
        ({"strategy": "recursive", "params": {"size": 0}}, "size must be at least 1"),
    ],
)
def test_from_dict_rejects_malformed_configs(data: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        Config.from_dict(data)  # type: ignore[arg-type]


def test_configs_differing_in_one_param_are_not_equal() -> None:
    assert Config.create("recursive", size=100) != Config.create("recursive", size=101)


# --------------------------------------------------- every registered strategy


@pytest.mark.parametrize("name", STRATEGIES)
def test_defaults_validate(name: str) -> None:
    spec = get_strategy(name)
    config = Config.create(name)
    assert dict(config.params) == spec.defaults()
    assert Config.from_dict(json.loads(config.to_json())) == config


@pytest.mark.parametrize("name", STRATEGIES)
def test_strategy_is_described(name: str) -> None:
    spec = get_strategy(name)
    assert spec.name == name
    assert spec.label.strip()
    assert len(spec.description.split()) >= 5, "describe what the strategy does"
    assert len(set(spec.param_names)) == len(spec.params), "duplicate parameter names"
    if spec.limit_param is not None:
        assert spec.limit_param in spec.param_names
    json.dumps(spec.to_dict())  # the CLI and config export need it serialisable


PARAMS = [
    pytest.param(name, p, id=f"{name}.{p.name}")
    for name, spec in chunking.strategies().items()
    for p in spec.params
]


@pytest.mark.parametrize(("name", "param"), PARAMS)
def test_param_has_help_and_a_valid_default(name: str, param: Param) -> None:
    assert param.kind in KINDS
    assert len(param.help.split()) >= 3, f"{name}.{param.name} needs help text"
    default = param.fresh_default()
    assert param.coerce(default) == default
    if param.choices is not None:
        assert param.default in param.choices
    if param.minimum is not None and param.maximum is not None:
        assert param.minimum <= param.maximum


@pytest.mark.parametrize(("name", "param"), PARAMS)
def test_param_rejects_a_value_of_another_type(name: str, param: Param) -> None:
    wrong = {int: "x", float: "x", str: 7, bool: "maybe", list: 7}[param.kind]
    with pytest.raises(ValueError, match=param.name):
        param.coerce(wrong)


# ------------------------------------------------------------------ light import


def test_import_chunking_does_not_load_heavy_libraries() -> None:
    code = (
        "import sys, chunking, chunking.cli, chunking.analysis.recommend, chunking.documents.io\n"
        "chunking.strategies()\n"
        "heavy = [m for m in ('streamlit', 'torch', 'sentence_transformers', 'umap') "
        "if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "", f"imported at start-up: {result.stdout.strip()}"


def test_changing_a_configs_list_parameter_leaves_the_declaration_alone() -> None:
    # Regression: Config.create used to hand out the registry's own default list, so
    # appending to one configuration's separators changed every later configuration.
    first = Config.create("recursive")
    declared = list(first.params["separators"])
    first.params["separators"].append("x")
    assert Config.create("recursive").params["separators"] == declared
    assert chunking.get_strategy("recursive").defaults()["separators"] == declared
    assert chunking.get_strategy("recursive").to_dict()["params"][3]["default"] == declared
