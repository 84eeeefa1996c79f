import io
import os
import stat
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = ROOT / "sample_docs"
CHROMA = ROOT.parent / "shared" / "datasets" / "chroma-eval"

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def sample_paths() -> list[Path]:
    return sorted(p for p in SAMPLE_DOCS.iterdir() if p.is_file() and p.name != "README.md")


def chroma_corpora() -> list[Path]:
    return sorted((CHROMA / "corpora").glob("*.md"))


@pytest.fixture(scope="session")
def chroma_dir() -> Path:
    if not CHROMA.is_dir():
        pytest.fail(f"the chroma-eval data set is missing at {CHROMA}")
    return CHROMA


settings.register_profile(
    "thorough", max_examples=400, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def write(path: Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path``, creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def make_zip(members: dict[str, str | bytes], *, symlinks: dict[str, str] | None = None) -> bytes:
    """A deflated zip of ``members`` (name -> content), plus symlink entries."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the real-browser tests in one xdist group (``--dist loadgroup``): one worker
    drives Chromium and its server while the others run the rest of the suite, so two
    browser sessions never compete for the two cores of this machine."""
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.xdist_group("browser"))


def show_explore_tab(at, label: str):
    """Open Explore's tab ``label`` in an AppTest, as a click on it does, and rerun."""
    from pages.state import EXPLORE_TAB_KEY, EXPLORE_TABS

    assert label in EXPLORE_TABS, label
    at.session_state[EXPLORE_TAB_KEY] = label
    return at.run()
