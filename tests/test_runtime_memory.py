"""The server's malloc arena cap (chunking/runtime/memory.py)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from chunking.runtime.memory import ARENA_ENV, limit_malloc_arenas


def _run(code: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="mallopt's arena cap is glibc's",
)
def test_the_cap_is_set_on_glibc_and_a_users_setting_is_kept() -> None:
    code = "from chunking.runtime.memory import limit_malloc_arenas; print(limit_malloc_arenas())"
    assert _run(code, {"PATH": "/usr/bin:/bin"}) == "True"
    assert _run(code, {"PATH": "/usr/bin:/bin", ARENA_ENV: "4"}) == "False"


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        limit_malloc_arenas(0)


def test_the_app_caps_arenas_before_streamlit_starts() -> None:
    from pathlib import Path

    script = (Path(__file__).resolve().parent.parent / "app.py").read_text(encoding="utf-8")
    assert script.index("limit_malloc_arenas()") < script.index("cli.main()")
