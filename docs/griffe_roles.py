"""A Griffe extension for the documentation site: the core's docstrings are written with
Sphinx roles (``:func:`chunk```, ``:class:`~.base.Sink```) and reST literal blocks
(``Example::``); mkdocstrings renders Markdown. Roles become inline code showing the
name a reader would write (``~a.b.c`` shows ``c``; a leading ``.`` is dropped), and a
paragraph ending in ``::`` ends in ``:`` (the indented block after it is Markdown code
already). The docstrings themselves are not changed on disk.

Loaded by ``mkdocs.yml`` (``plugins.mkdocstrings.handlers.python.options.extensions``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj|const):`([^`]+)`")
LITERAL = re.compile(r"::[ \t]*$", re.MULTILINE)


def _name(target: str) -> str:
    """What a role shows: its explicit title (``title <target>``), else the target,
    shortened to its last part after ``~``, without a leading dot."""
    titled = re.fullmatch(r"(.+?)\s*<[^>]+>", target)
    if titled:
        return titled.group(1)
    if target.startswith("~"):
        return target.rsplit(".", 1)[-1]
    return target.lstrip(".")


def markdown_docstring(text: str) -> str:
    text = ROLE.sub(lambda m: f"`{_name(m.group(1))}`", text)
    return LITERAL.sub(":", text)


class SphinxRolesToMarkdown(griffe.Extension):
    """Rewrite every loaded docstring with :func:`markdown_docstring`."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
