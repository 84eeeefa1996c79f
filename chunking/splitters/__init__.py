"""Importing this package registers every built-in strategy, in the order users see them."""

# isort: skip_file
from . import recursive, windows  # noqa: F401
from . import markdown, html, code  # noqa: F401
from . import sentences, conversation, hierarchy  # noqa: F401
from .. import semantic  # noqa: F401
