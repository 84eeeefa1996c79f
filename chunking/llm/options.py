"""The command-line options of every command that can call a language model.

``--llm-url URL`` and ``--llm-model NAME`` choose an OpenAI-compatible endpoint (the
key comes from ``OPENAI_API_KEY``); without them the offline SmolLM2 is used. ``--yes``
runs without asking after the cost is shown (:func:`confirm`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from .client import LLM, LOCAL_MODEL, make_llm
from .cost import Estimate


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """--llm-url URL, --llm-model NAME (key from OPENAI_API_KEY), --yes"""
    group = parser.add_argument_group("language model")
    group.add_argument(
        "--llm-url",
        metavar="URL",
        help="an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama); the "
        f"key comes from OPENAI_API_KEY. Default: the offline {LOCAL_MODEL} (weak, slow)",
    )
    group.add_argument("--llm-model", metavar="NAME", help="the endpoint's model name")
    group.add_argument(
        "--yes", "-y", action="store_true", help="run without asking once the cost is shown"
    )


def client_from_args(args: argparse.Namespace) -> LLM:
    """The model the options name: the endpoint, or the local SmolLM2 when no --llm-url."""
    return make_llm(getattr(args, "llm_url", None), getattr(args, "llm_model", None))


def confirm(
    cost: Estimate,
    llm: LLM,
    yes: bool,
    *,
    stdin: TextIO | None = None,
    stderr: TextIO | None = None,
) -> None:
    """Show the cost on stderr and ask to go on (unless ``yes``, or nothing is to be
    asked); raise ``ValueError`` when the user declines or cannot be asked."""
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    print(f"cost: {cost.describe()}", file=stderr)
    if llm.note:
        print(f"note: {llm.note}", file=stderr)
    if yes or cost.calls == cost.cached:
        return
    if not stdin.isatty():
        raise ValueError("not run: confirm the cost above with --yes")
    print("Go on? [y/N] ", end="", file=stderr, flush=True)
    if stdin.readline().strip().lower() not in ("y", "yes"):
        raise ValueError("not run: declined")
