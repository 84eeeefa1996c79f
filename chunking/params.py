"""How a strategy is declared: typed parameters, the strategy record, shared parameters.

A :class:`Strategy` is one declaration (name, description, typed :class:`Param` list,
splitter function, cross-parameter checks). That declaration drives the app's controls,
the CLI flags, config export and the parametrised tests. Strategies are collected, in
the order users see them, by :mod:`chunking.splitters`; :mod:`chunking.config` validates
configurations against them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .model import Piece
from .units import DEFAULT_MODEL, TOKENIZER_UNIT, UNITS, Sizer


@dataclass(frozen=True)
class Param:
    """One parameter of a strategy.

    ``kind`` is one of ``int``, ``float``, ``str``, ``bool`` or ``list`` (a list of
    strings). ``minimum``/``maximum`` bound numbers; ``choices`` bounds strings.
    """

    name: str
    kind: type
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] | None = None
    #: A regular expression that a string outside ``choices`` may match instead (for
    #: example ``tokenizer:PATH`` units), and how to describe it to a user.
    pattern: str | None = None
    pattern_help: str = ""

    def matches_pattern(self, value: Any) -> bool:
        """Whether ``value`` is a string that :attr:`pattern` accepts (outside ``choices``)."""
        return (
            self.pattern is not None
            and isinstance(value, str)
            and re.fullmatch(self.pattern, value) is not None
        )

    def coerce(self, value: Any) -> Any:
        """Return ``value`` as this parameter's type, or raise ``ValueError``."""
        value = self._convert(value)
        if (
            self.choices is not None
            and value not in self.choices
            and not self.matches_pattern(value)
        ):
            options = ", ".join(map(str, self.choices))
            also = f", or {self.pattern_help}" if self.pattern else ""
            raise ValueError(f"{self.name} must be one of {options}{also}; got {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{self.name} must be at least {self.minimum:g}; got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"{self.name} must be at most {self.maximum:g}; got {value!r}")
        return value

    def _convert(self, value: Any) -> Any:
        kind = self.kind
        fail = ValueError(f"{self.name} must be {_KIND_NAMES[kind]}; got {value!r}")
        if kind is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
                return value.lower() in ("true", "1")
            raise fail
        if kind is int or kind is float:
            if isinstance(value, str):
                try:
                    return kind(value.strip())
                except ValueError:
                    raise fail from None
            whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
            if isinstance(value, bool) or not (whole if kind is int else _is_number(value)):
                raise fail
            return kind(value)
        if kind is str:
            if isinstance(value, str):
                return value
            raise fail
        if kind is list:
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except json.JSONDecodeError:
                    raise fail from None
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                return list(value)
            raise fail
        raise TypeError(f"unsupported parameter kind {kind!r}")

    def fresh_default(self) -> Any:
        """The default value; a list default is a new list each time, so that no caller
        can change the declaration by changing the value it was given."""
        return list(self.default) if self.kind is list else self.default

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": _KIND_NAMES[self.kind],
            "default": self.fresh_default(),
            "help": self.help,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "choices": list(self.choices) if self.choices is not None else None,
        }


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))


_KIND_NAMES = {
    int: "an integer",
    float: "a number",
    str: "a string",
    bool: "true or false",
    list: "a list of strings",
}

#: A strategy's work: cut ``text`` into pieces, given validated parameters and a sizer.
Splitter = Callable[[str, Mapping[str, Any], Sizer], Iterable[Piece]]
#: Extra checks across parameters; raises ``ValueError``.
Check = Callable[[Mapping[str, Any]], None]


@dataclass(frozen=True)
class Strategy:
    """One way of cutting documents, declared once.

    ``split(text, params, sizer)`` proposes pieces; ``params`` declares every parameter
    (the app's controls, the CLI's flags and the tests come from it); ``checks`` validate
    parameters against each other; ``limit_param`` names the parameter that bounds a
    chunk's size, which reports and invariant tests hold the chunks to.
    """

    name: str
    label: str
    description: str
    params: tuple[Param, ...]
    split: Splitter = field(repr=False)
    checks: tuple[Check, ...] = ()
    #: Name of the parameter that bounds chunk size, if any.
    limit_param: str | None = "size"

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def defaults(self) -> dict[str, Any]:
        """Every parameter's default, as fresh values (a list default is copied)."""
        return {p.name: p.fresh_default() for p in self.params}

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "description": self.description,
            "params": [p.to_dict() for p in self.params],
        }


# --- parameters shared by many strategies -------------------------------------------


def size_param(default: int, help: str = "Maximum chunk size, in the chosen unit.") -> Param:
    return Param("size", int, default, help, minimum=1, maximum=1_000_000)


def overlap_param(
    default: int = 0, help: str = "How much consecutive chunks share, in the chosen unit."
) -> Param:
    return Param("overlap", int, default, help, minimum=0, maximum=1_000_000)


def unit_param(default: str = "chars", *, tokenizers: bool = True) -> Param:
    """The ``unit`` parameter. ``tokenizers=False`` for a strategy that needs to know a
    unit's internals (fixed windows cut token ids), so only chars, words and tokens."""
    if not tokenizers:
        return Param(
            "unit",
            str,
            default,
            "What size and overlap count: characters, words (whitespace-separated) or "
            "cl100k_base tokens.",
            choices=UNITS[:3],
        )
    return Param(
        "unit",
        str,
        default,
        "What size and overlap count: characters, words (whitespace-separated), "
        "cl100k_base tokens, the word pieces of the embedding model (model), or the "
        "tokens of your own tokenizer file (tokenizer:PATH to a tokenizer.json or "
        ".tiktoken file).",
        choices=UNITS,
        pattern=TOKENIZER_UNIT,
        pattern_help="tokenizer:PATH (a tokenizer.json or .tiktoken file)",
    )


def model_param(
    help: str = f"The embedding model: {DEFAULT_MODEL} (bundled, offline), a named model "
    "(minilm-onnx-int8, minilm-static), a local path to a sentence-transformers model, or "
    "'hash' (a fast fake for tests and debugging).",
) -> Param:
    """The ``model`` parameter of every strategy that embeds: the bundled model by default."""
    return Param("model", str, DEFAULT_MODEL, help)


def overlap_below_size(params: Mapping[str, Any]) -> None:
    if params["overlap"] >= params["size"]:
        raise ValueError(
            f"overlap ({params['overlap']}) must be smaller than size ({params['size']}); "
            "lower the overlap or raise the size"
        )


def segment_overlap_param(what: str, purpose: str = "", note: str = "") -> Param:
    """An ``overlap`` parameter that counts whole segments (``what``), not units."""
    return Param(
        "overlap",
        int,
        0,
        f"How many {what} (not units) to repeat from the end of each chunk at the start of "
        f"the next{purpose}. Lowered automatically where fewer {what} fit{note}.",
        minimum=0,
        maximum=1000,
    )


def overlap_count_below_size(what: str) -> Check:
    """A check for an ``overlap`` parameter that counts whole segments (``what``).

    Every segment is at least one unit, so at most ``size`` segments fit in a chunk;
    repeating ``size`` or more would leave no room for a new one. (At run time the
    packer also lowers the overlap where fewer segments fit.)
    """

    def check(params: Mapping[str, Any]) -> None:
        if params["overlap"] >= params["size"]:
            raise ValueError(
                f"overlap counts {what}, and at most {params['size']} {what} fit in a chunk "
                f"of size {params['size']}; lower the overlap below {params['size']} "
                "(typically 1 or 2) or raise the size"
            )

    return check
