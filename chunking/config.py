"""The registry of strategies and validated configurations.

:func:`strategies` lists the built-in strategies of :mod:`chunking.splitters` (in the
order users see them) and any added with :func:`register`. A :class:`Config` is a
strategy name with its complete, validated parameters; creating one raises
``ValueError`` with a message a user can act on.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .params import Strategy
from .units import TOKENIZER_PREFIX, get_sizer

# The registry is filled on first use, not at import: the strategies' modules (and the
# libraries' adapters) are most of what ``import chunking`` would otherwise cost.
_STRATEGIES: dict[str, Strategy] = {}
_LOADED = threading.Event()
_LOADING = threading.RLock()


def _registry() -> dict[str, Strategy]:
    """Every strategy by name: the built-in ones and the libraries' (their modules are
    imported the first time any strategy is asked for), then those added with
    :func:`register`."""
    if not _LOADED.is_set():
        with _LOADING:
            if not _LOADED.is_set():
                from .libraries import LIBRARIES
                from .splitters import BUILT_IN

                _STRATEGIES.update({s.name: s for s in (*BUILT_IN, *LIBRARIES)})
                _LOADED.set()
    return _STRATEGIES


def __getattr__(name: str) -> Any:
    """``_REGISTRY``: the registry's dict itself, filled (for tests that patch it)."""
    if name == "_REGISTRY":
        return _registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(strategy: Strategy) -> Strategy:
    """Add a strategy to the registry (after the built-in ones); returns it."""
    registry = _registry()
    if strategy.name in registry:
        raise ValueError(f"a strategy named {strategy.name!r} is already registered")
    registry[strategy.name] = strategy
    return strategy


def strategies() -> Mapping[str, Strategy]:
    """Every registered strategy by name, in the order users see them."""
    return MappingProxyType(_registry())


def get_strategy(name: str) -> Strategy:
    registry = _registry()
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(registry)
        raise ValueError(f"unknown strategy {name!r}; choose one of: {known}") from None


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
        if str(values.get("unit", "")).startswith(TOKENIZER_PREFIX):
            get_sizer(values["unit"])  # the user's tokenizer file must load
        return cls(strategy, MappingProxyType(values))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Config:
        if not isinstance(data, Mapping) or "strategy" not in data:
            raise ValueError('a config needs a "strategy" key and optional "params"')
        params = data.get("params", {})
        if not isinstance(params, Mapping):
            raise ValueError('"params" must be an object of parameter names to values')
        return cls.create(str(data["strategy"]), **params)

    @classmethod
    def from_json(cls, text: str | bytes) -> Config:
        """The configuration :meth:`to_json` wrote; ``ValueError`` with the position of a
        JSON error or the reason the configuration is invalid."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
            ) from None
        except UnicodeDecodeError:
            raise ValueError("not UTF-8 text") from None
        return cls.from_dict(data)

    def label(self, *, title: bool = False) -> str:
        """What distinguishes this configuration, on one line:
        ``recursive · 400 tokens · overlap 40`` (plus the threshold where there is one);
        with ``title`` the strategy's label leads (``Recursive · 400 tokens``)."""
        parts = [self.spec.label if title else self.strategy]
        if self.limit is not None:
            parts.append(f"{self.limit} {self.unit}")
        overlap = self.params.get("overlap")
        if overlap:
            parts.append(f"overlap {overlap}")
        threshold = self.params.get("threshold")
        if threshold is not None:
            parts.append(f"threshold {threshold:g}")
        return " · ".join(parts)

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
