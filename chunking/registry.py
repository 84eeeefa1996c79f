"""Strategies are declared once, here: name, description and typed parameters.

That one declaration drives the app's controls, the CLI flags, config export and the
parametrised tests. A :class:`Config` validates itself on creation and raises
``ValueError`` with a message a user can act on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from .units import UNITS, Sizer


class Piece(NamedTuple):
    """A span a strategy proposes; the core turns pieces into :class:`Chunk` objects."""

    start: int
    end: int
    metadata: Mapping[str, Any] = MappingProxyType({})
    #: The piece's size when the strategy has already measured it (saves a re-count).
    size: int | None = None


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

    def coerce(self, value: Any) -> Any:
        """Return ``value`` as this parameter's type, or raise ``ValueError``."""
        value = self._convert(value)
        if self.choices is not None and value not in self.choices:
            options = ", ".join(map(str, self.choices))
            raise ValueError(f"{self.name} must be one of {options}; got {value!r}")
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
        if kind is int:
            if isinstance(value, bool):
                raise fail
            if isinstance(value, int):
                return value
            if isinstance(value, float) and value.is_integer():
                return int(value)
            if isinstance(value, str):
                try:
                    return int(value.strip())
                except ValueError:
                    raise fail from None
            raise fail
        if kind is float:
            if isinstance(value, bool):
                raise fail
            if isinstance(value, (int, float)):
                return float(value)
            if isinstance(value, str):
                try:
                    return float(value.strip())
                except ValueError:
                    raise fail from None
            raise fail
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": _KIND_NAMES[self.kind],
            "default": self.default,
            "help": self.help,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "choices": list(self.choices) if self.choices is not None else None,
        }


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
        return {p.name: p.default for p in self.params}

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "description": self.description,
            "params": [p.to_dict() for p in self.params],
        }


_REGISTRY: dict[str, Strategy] = {}


def register(
    name: str,
    *,
    label: str,
    description: str,
    params: Iterable[Param],
    checks: Iterable[Check] = (),
    limit_param: str | None = "size",
) -> Callable[[Splitter], Splitter]:
    """Declare a strategy. Used as a decorator on its splitter function."""

    def decorate(split: Splitter) -> Splitter:
        if name in _REGISTRY:
            raise RuntimeError(f"strategy {name!r} registered twice")
        _REGISTRY[name] = Strategy(
            name, label, description, tuple(params), split, tuple(checks), limit_param
        )
        return split

    return decorate


def strategies() -> Mapping[str, Strategy]:
    """Every registered strategy by name, in registration order."""
    from . import splitters as _  # noqa: F401  (importing registers them)

    return MappingProxyType(_REGISTRY)


def get_strategy(name: str) -> Strategy:
    registry = strategies()
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(registry)
        raise ValueError(f"unknown strategy {name!r}; choose one of: {known}") from None


# --- parameters shared by many strategies -------------------------------------------


def size_param(default: int, help: str = "Maximum chunk size, in the chosen unit.") -> Param:
    return Param("size", int, default, help, minimum=1, maximum=1_000_000)


def overlap_param(
    default: int = 0, help: str = "How much consecutive chunks share, in the chosen unit."
) -> Param:
    return Param("overlap", int, default, help, minimum=0, maximum=1_000_000)


def unit_param(default: str = "chars") -> Param:
    return Param(
        "unit",
        str,
        default,
        "What size and overlap count: characters, words (whitespace-separated) or "
        "cl100k_base tokens.",
        choices=UNITS,
    )


def overlap_below_size(params: Mapping[str, Any]) -> None:
    if params["overlap"] >= params["size"]:
        raise ValueError(
            f"overlap ({params['overlap']}) must be smaller than size ({params['size']}); "
            "lower the overlap or raise the size"
        )


# --- configurations -------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """A validated strategy name and its complete parameters."""

    strategy: str
    params: Mapping[str, Any]

    @classmethod
    def create(cls, strategy: str = "recursive", **params: Any) -> Config:
        spec = get_strategy(strategy)
        unknown = [k for k in params if k not in spec.param_names]
        if unknown:
            allowed = ", ".join(spec.param_names) or "none"
            raise ValueError(
                f"unknown parameter {unknown[0]!r} for strategy {strategy!r}; "
                f"its parameters are: {allowed}"
            )
        values = spec.defaults()
        for key, value in params.items():
            values[key] = spec.param(key).coerce(value)
        for check in spec.checks:
            check(values)
        return cls(strategy, MappingProxyType(values))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Config:
        if not isinstance(data, Mapping) or "strategy" not in data:
            raise ValueError('a config needs a "strategy" key and optional "params"')
        params = data.get("params", {})
        if not isinstance(params, Mapping):
            raise ValueError('"params" must be an object of parameter names to values')
        return cls.create(str(data["strategy"]), **params)

    @property
    def spec(self) -> Strategy:
        return get_strategy(self.strategy)

    @property
    def limit(self) -> int | None:
        name = self.spec.limit_param
        return self.params[name] if name else None

    @property
    def unit(self) -> str:
        return self.params.get("unit", "chars")

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "params": dict(self.params)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def __hash__(self) -> int:
        return hash(self.to_json())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self.to_dict() == other.to_dict()
