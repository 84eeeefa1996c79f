"""The installed package: what the wheel carries, ``chunk-explorer app``, and data found
without the checkout.

The slow test builds the wheel from a copy of the checkout (pip fetches the build
backend, as for any build), installs it into a fresh virtual environment outside the
checkout (the dependencies come from the running environment) and opens the app from the
installed files: with AppTest, and as a server started by the installed
``chunk-explorer app``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

from chunking import cli
from chunking.cli import chunks as chunks_cli
from chunking.evaluation import QuestionFileError, chroma_eval_dir, load_chroma_eval
from chunking.evaluation.questions import CHROMA_EVAL_ENV
from tests.e2e.harness import free_port, stop_server

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest itself depends on tomli before 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
APP_PACKAGE = "chunk_explorer_app"
#: Not copied when the wheel is built from a copy of the checkout: build outputs, caches
#: and environments (a stale build/ folder could put deleted modules into the wheel).
NOT_SOURCE = (
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
)
STARTUP_SECONDS = 180


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]


def _python_folders(top: Path) -> set[str]:
    """Dotted names of ``top`` and its folders that hold Python modules."""
    return {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in top.rglob("*.py")
        if "__pycache__" not in path.parts
    }


# ------------------------------------------------------------------- wheel contents


def test_the_package_list_matches_the_tree():
    """pyproject.toml lists packages by hand (the app's folder is the repository root):
    a new subpackage of chunking/ must be added there, and a removed one taken out."""
    config = _setuptools()
    listed = set(config["packages"])
    assert {p for p in listed if p.split(".")[0] == "chunking"} == _python_folders(
        ROOT / "chunking"
    )
    assert config["package-dir"] == {APP_PACKAGE: "."}
    assert {p for p in listed if p.split(".")[0] == APP_PACKAGE} == {
        APP_PACKAGE,
        f"{APP_PACKAGE}.pages",
        f"{APP_PACKAGE}.sample_docs",
    }


# ---------------------------------------------------------------- chunk-explorer app


def test_app_command_runs_streamlit_on_the_apps_script():
    command = chunks_cli.app_command(8765)
    assert command[0] == sys.executable  # app.py starts Streamlit itself (see app.py)
    assert command[2:] == ["--server.port", "8765"]
    # Here the package is installed from this checkout (editable), so its app.py is ours.
    assert Path(command[1]).resolve() == ROOT / "app.py"


def test_app_without_streamlit_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "streamlit", None)  # what Python does for a blocked import
    assert cli.main(["app", "--port", "8765"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("chunk-explorer: error: the app needs streamlit")
    assert "pip install 'chunk-explorer[app]'" in err


@pytest.mark.parametrize("port", ["0", "70000"])
def test_app_rejects_a_port_out_of_range(port, capsys):
    assert cli.main(["app", "--port", port]) == cli.EXIT_USAGE
    assert "--port must be between 1 and 65535" in capsys.readouterr().err


def _copy_source(destination: Path) -> Path:
    shutil.copytree(ROOT, destination, ignore=shutil.ignore_patterns(*NOT_SOURCE), symlinks=True)
    return destination


def _build_wheel(source: Path, out: Path) -> Path:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        cwd=out.parent,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = out.glob("chunk_explorer-*.whl")
    return wheel


def _venv_with_wheel(venv: Path, wheel: Path) -> Path:
    """A new virtual environment with the wheel installed; returns its python.

    The running environment's site-packages is appended to its path afterwards (by a
    ``.pth`` line, which does not run that folder's own ``.pth`` files, so the checkout's
    editable install stays out), for the dependencies.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    install = subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python


def _outside_env() -> dict[str, str]:
    """The environment without PYTHONPATH (or any PYTHON* setting) and the app's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CHUNK_EXPLORER"))}
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        STREAMLIT_SERVER_HEADLESS="true",
        STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
        STREAMLIT_SERVER_SCRIPT_HEALTH_CHECK_ENABLED="true",
    )
    return env


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except (urllib.error.URLError, OSError) as exc:
        return 0, str(exc)


def _wait_healthy(process: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the app exited early:\n{log.read_text(errors='replace')}"
        if _get(f"{url}/_stcore/health")[0] == 200:
            return
        time.sleep(0.5)
    raise AssertionError(f"no answer in {STARTUP_SECONDS} s:\n{log.read_text(errors='replace')}")


#: Run in the installed environment: the app's Explore page through AppTest.
APPTEST = """
import json, sys
from pathlib import Path
import chunk_explorer_app, chunking
from streamlit.testing.v1 import AppTest

app = Path(next(iter(chunk_explorer_app.__path__))) / "app.py"
at = AppTest.from_file(str(app), default_timeout=600).run()
at.switch_page("pages/explore_page.py").run()
sidebar = sys.modules["pages.sidebar"]
samples = [w.options for kind in ("selectbox", "radio") for w in at.get(kind)
           if getattr(w, "key", None) == sidebar.SAMPLE_KEY]
print(json.dumps({
    "app": str(app),
    "chunking": chunking.__file__,
    "sidebar": sidebar.__file__,
    "exceptions": [e.value for e in at.exception],
    "samples": [list(s) for s in samples],
    "chunks": [m.value for m in at.metric if m.label == "Chunks"],
}))
"""


@pytest.mark.slow
def test_the_wheel_serves_the_app_outside_the_checkout(tmp_path):
    wheel = _build_wheel(_copy_source(tmp_path / "source"), tmp_path / "wheels")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (ROOT / "chunking").rglob("*.py"):
        if "__pycache__" not in path.parts:
            assert path.relative_to(ROOT).as_posix() in names
    for folder in ("pages", "sample_docs"):
        for path in (ROOT / folder).iterdir():
            if path.is_file():
                assert f"{APP_PACKAGE}/{folder}/{path.name}" in names
    assert f"{APP_PACKAGE}/app.py" in names
    assert f"{APP_PACKAGE}/.streamlit/config.toml" in names

    python = _venv_with_wheel(tmp_path / "venv", wheel)
    installed = tmp_path / "venv" / "lib"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _outside_env()

    # The Explore page, run by AppTest from the installed files, cuts an installed sample.
    probe = subprocess.run(
        [str(python), "-c", APPTEST], cwd=elsewhere, env=env, capture_output=True, text=True
    )
    assert probe.returncode == 0, probe.stdout[-3000:] + probe.stderr[-3000:]
    seen = json.loads(probe.stdout.strip().splitlines()[-1])
    assert seen["exceptions"] == []
    for key in ("app", "chunking", "sidebar"):
        assert Path(seen[key]).is_relative_to(installed), seen
    sample_dir = Path(seen["app"]).parent / "sample_docs"
    on_disk = {p.name for p in sample_dir.iterdir() if p.is_file() and p.stem != "README"}
    assert len(seen["samples"]) == 1 and set(seen["samples"][0]) == on_disk
    assert len(seen["chunks"]) == 1 and int(seen["chunks"][0].replace(",", "")) > 0

    # The installed command starts a server on the installed app.py.
    port = free_port()
    log = tmp_path / "server.log"
    command = [str(tmp_path / "venv" / "bin" / "chunk-explorer"), "app", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=elsewhere, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(process, url, log)
        # The command became the server (exec): its arguments name the installed script.
        argv = Path(f"/proc/{process.pid}/cmdline").read_bytes().split(b"\0")
        script = Path(seen["app"])
        assert str(script).encode() in argv
        # Streamlit runs the script once more in a bare session: "ok" if it raised nothing.
        status, body = _get(f"{url}/_stcore/script-health-check")
        for _ in range(2):  # a cold first run may pass Streamlit's own 60 s limit
            if body != "timeout":
                break
            status, body = _get(f"{url}/_stcore/script-health-check")
        assert (status, body) == (200, "ok"), log.read_text(errors="replace")
    finally:
        stop_server(process)


# --------------------------------------------------------------- chroma-eval location


def test_chroma_eval_is_found_next_to_the_working_directory(chroma_dir, tmp_path, monkeypatch):
    monkeypatch.delenv(CHROMA_EVAL_ENV, raising=False)
    (tmp_path / "shared" / "datasets").mkdir(parents=True)
    (tmp_path / "shared" / "datasets" / "chroma-eval").symlink_to(chroma_dir)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")  # ../shared/datasets/chroma-eval
    assert chroma_eval_dir().resolve() == chroma_dir.resolve()
    monkeypatch.chdir(tmp_path)  # ./shared/datasets/chroma-eval
    assert chroma_eval_dir().resolve() == chroma_dir.resolve()


def test_an_explicit_chroma_eval_place_is_never_second_guessed(chroma_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(chroma_dir.parents[2])  # where ./shared/datasets/chroma-eval exists
    assert chroma_eval_dir().resolve() == chroma_dir.resolve()
    monkeypatch.setenv(CHROMA_EVAL_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(QuestionFileError, match="nowhere") as error:
        chroma_eval_dir()
    assert "shared" not in str(error.value)
    # The argument comes first, then the environment, wherever the working directory is.
    monkeypatch.setenv(CHROMA_EVAL_ENV, str(chroma_dir))
    with pytest.raises(QuestionFileError, match=str(tmp_path)):
        load_chroma_eval(["chatlogs"], root=tmp_path)
    monkeypatch.chdir(tmp_path)
    assert chroma_eval_dir() == chroma_dir


def test_a_missing_chroma_eval_names_every_place_tried(tmp_path, monkeypatch):
    monkeypatch.delenv(CHROMA_EVAL_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(QuestionFileError) as error:
        load_chroma_eval(["chatlogs"])
    message = str(error.value)
    assert str(tmp_path.parent / "shared" / "datasets" / "chroma-eval") in message
    assert str(tmp_path / "shared" / "datasets" / "chroma-eval") in message
    assert CHROMA_EVAL_ENV in message


LOAD_CHATLOGS = """
import json, chunking
from chunking.evaluation import load_chroma_eval
documents, questions = load_chroma_eval(["chatlogs"])
print(json.dumps([chunking.__file__, sorted(documents), len(questions)]))
"""


def test_chroma_eval_is_found_from_a_package_installed_elsewhere(chroma_dir, tmp_path):
    """Regression: the location was worked out from the package's own file, so a copy of
    the package outside the checkout (a wheel install) looked in the wrong place."""
    site = tmp_path / "site-packages"
    shutil.copytree(
        ROOT / "chunking", site / "chunking", ignore=shutil.ignore_patterns("__pycache__")
    )
    (tmp_path / "work" / "shared" / "datasets").mkdir(parents=True)
    (tmp_path / "work" / "shared" / "datasets" / "chroma-eval").symlink_to(chroma_dir)
    project = tmp_path / "work" / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if k != CHROMA_EVAL_ENV}
    env["PYTHONPATH"] = str(site)
    run = subprocess.run(
        [sys.executable, "-c", LOAD_CHATLOGS], cwd=project, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    module, documents, count = json.loads(run.stdout)
    assert Path(module).is_relative_to(site)
    expected_documents, expected_questions = load_chroma_eval(["chatlogs"], root=chroma_dir)
    assert documents == sorted(expected_documents)
    assert count == len(expected_questions) > 0
