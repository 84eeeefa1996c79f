"""Importing this package registers every built-in strategy."""

from . import recursive, windows  # noqa: F401
