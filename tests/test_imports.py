"""The shape of the core: ``import chunking`` stays light and free of side effects."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = (
    "streamlit",
    "plotly",
    "pandas",
    "torch",
    "transformers",
    "sentence_transformers",
    "umap",
    "numba",
    "chunking.embedding",
    "chunking.viz",
    "langchain",
    "langchain_core",
    "langchain_text_splitters",
    "langchain_experimental",
    "llama_index",
    "chonkie",
    "semchunk",
    "semantic_text_splitter",
)

PROBE = """
import json, os, sys
import chunking
{work}
print(json.dumps({{
    "heavy": sorted(m for m in {heavy!r} if m in sys.modules),
    "env": {{k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}},
}}))
"""


def probe(work: str) -> dict:
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    }
    code = PROBE.format(work=work, heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "work",
    [
        "",
        "chunking.chunk('One. Two.')",
        "chunking.strategies(); chunking.Config.create('semantic')",
        "[chunking.chunk('# A\\n\\nOne. Two.\\n', name) for name in "
        "('recursive', 'token', 'markdown', 'sentence', 'hierarchy')]",
    ],
    ids=["import", "chunk", "registry with semantic", "several strategies"],
)
def test_the_core_imports_no_ui_no_model_and_sets_no_environment(work: str) -> None:
    seen = probe(work)
    assert seen["heavy"] == []
    assert seen["env"] == {"HF_HUB_OFFLINE": None, "TRANSFORMERS_OFFLINE": None}


def test_every_module_of_the_core_imports_on_its_own() -> None:
    # Each module can be imported first, in a fresh interpreter: no hidden import cycle.
    import pkgutil

    import chunking

    names = [
        m.name
        for m in pkgutil.walk_packages(chunking.__path__, "chunking.")
        if not m.name.startswith("chunking.viz")  # needs the app extra; checked below
    ]
    names.append("chunking.viz.figures")
    code = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]:\n"
        "    for m in [k for k in sys.modules if k == 'chunking' or k.startswith('chunking.')]:\n"
        "        del sys.modules[m]\n"
        "    importlib.import_module(name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert len(names) > 30


def test_the_core_imports_without_numpy() -> None:
    # numpy was most of a cold `import chunking` (issue 37): it loads when a text is first
    # measured, and the word pattern is compiled when words are first counted.
    code = (
        "import json, sys\n"
        "import chunking\n"
        "loaded = sorted(m for m in sys.modules if m == 'numpy' or m.startswith('numpy.'))\n"
        "from chunking.units import word_re\n"
        "words = chunking.chunk('two words 東京 ' * 3, 'fixed', size=4, overlap=0, unit='words')\n"
        "print(json.dumps({'numpy': loaded, 'words': word_re().findall('two words 東京'),\n"
        "                  'chunks': [c.text for c in words]}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["numpy"] == []
    assert seen["words"] == ["two", "words", "東", "京"]
    assert seen["chunks"] == ["two words 東京", "two words 東京", "two words 東京"]
