"""Guided tour: five levels of chunking and a last stop, "Where would you cut?" (the
sample gold segmentation), each with a button that opens the right page on a fitting
sample document with fitting settings.

A button's callback sets the sidebar's widgets (sample document, strategy, parameters:
the keys in :mod:`pages.sidebar`) and, for the Semantic and Map pages, a one-time
hand-over of their own settings (:func:`pages.state.hand_over`); the next run switches to
the page. The user's own document is kept (the sidebar then offers the way back), and
the stop's "Try it" hint is shown at the top of the page it opens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from chunking import Config, get_strategy, strategies
from chunking.embedding.projection import warm_up
from pages import cached, config_controls, sidebar, state

PAGES = Path(__file__).resolve().parent
EXPLORE = PAGES / "explore_page.py"
SEMANTIC = PAGES / "semantic_page.py"
MAP = PAGES / "map_page.py"
LLM = PAGES / "llm_page.py"
#: The URL path of each page a stop opens (as app.py's st.navigation names them).
URL_PATHS = {EXPLORE: "explore", SEMANTIC: "semantic", MAP: "map", LLM: "llm"}
#: The page a tour button asked for; the next run switches to it.
TARGET_KEY = "_tour_target"
#: What a slow stop says before it starts, and on the page while that page works.
SLOW_NOTE = (
    "This stop embeds every sentence of the essay with the model on this machine's CPU: "
    "about 25 s the first time, instant afterwards."
)
#: The contextual-retrieval stop: what it costs, said before it starts.
LLM_NOTE = (
    "This stop writes a context sentence for each chunk with the offline SmolLM2-135M "
    "model on this machine's CPU: about 20 s to load it, then several seconds per chunk. "
    "The page shows the estimated cost and runs only when you click; answers are cached."
)
#: The semantic stop's settings; every other semantic parameter (but the model the user
#: chose) is set to the registry's default when the stop opens.
SEMANTIC_SETTINGS: Mapping[str, Any] = {"method": "percentile", "threshold": 95.0}


@dataclass(frozen=True)
class Stop:
    """A button of the tour: which page, which sample, which configuration."""

    label: str
    page: Path
    sample: str
    strategy: str
    params: Mapping[str, Any] = field(default_factory=dict)
    semantic: Mapping[str, Any] | None = None
    map_request: Mapping[str, Any] | None = None
    #: Settings for Explore's boundary editor (``{"load": "sample"}``: the sample's gold).
    boundaries: Mapping[str, Any] | None = None
    #: The Explore tab the stop opens (one of ``state.EXPLORE_TABS``).
    tab: str = "Boundaries"
    #: False when the page works without the strategy (the sidebar is then left alone).
    needs_strategy: bool = True
    #: The "Try it" hint shown on the page this stop opens; empty: the level's.
    hint: str = ""
    #: True for stops that embed the document first (announced before they start).
    slow: bool = False
    #: What a slow stop says before it starts, and how long it takes on its button.
    slow_note: str = SLOW_NOTE
    duration: str = "~25 s the first time"

    def __post_init__(self) -> None:
        if self.tab not in state.EXPLORE_TABS:
            raise ValueError(f"tour stop {self.label!r}: no Explore tab {self.tab!r}")


@dataclass(frozen=True)
class Level:
    number: int
    title: str
    text: str
    look_for: str
    stops: tuple[Stop, ...]


LEVELS = (
    Level(
        1,
        "Fixed size",
        "Count off a number of characters (or tokens), cut, and start again, usually with "
        "a little overlap so that a sentence cut in two appears whole in one of the two "
        "chunks. It needs no knowledge of the text at all, which makes it fast and "
        "predictable, and the baseline every other method is measured against.",
        "the red markers fall in the middle of words and sentences. Change the size or the "
        "overlap in the sidebar and watch the cuts move.",
        (
            Stop(
                "Open fixed-size chunks of the essay",
                EXPLORE,
                "long_essay.txt",
                "fixed",
                {"size": 500, "overlap": 50, "unit": "chars"},
            ),
        ),
    ),
    Level(
        2,
        "Recursive",
        "Try the biggest natural break first (a blank line between paragraphs), and only "
        "when a piece is still too large fall back to smaller ones: a line, a sentence end, "
        "a space, and as a last resort a single character. Chunks stay under the limit "
        "but end where the text pauses. This is the sensible default for plain prose.",
        "compared with level 1, chunks now end at paragraph and sentence ends. In the "
        "Chunks tab, pick a chunk: its metadata names the separator it ended on.",
        (
            Stop(
                "Open recursive chunks of the essay",
                EXPLORE,
                "long_essay.txt",
                "recursive",
                {"size": 600, "overlap": 0, "unit": "chars"},
            ),
        ),
    ),
    Level(
        3,
        "Structure-aware (document-specific)",
        "Many documents announce their own structure: headings in Markdown, elements in "
        "HTML, functions and classes in code. Cutting along that structure keeps a section, "
        "a table or a function together and lets each chunk carry its headings as context. "
        "Oversized sections are still split, recursively, inside the section.",
        "in the Markdown guide, every chunk starts at a heading and its metadata lists the "
        "headings above it; a code block or table that fits in a chunk is never cut.",
        (
            Stop(
                "Markdown: the technical guide",
                EXPLORE,
                "technical_guide.md",
                "markdown",
                {"size": 160, "unit": "tokens"},
                hint="in the Markdown guide, every chunk starts at a heading and its metadata "
                "lists the headings above it ('header_path'); a code block or table that fits "
                "in a chunk is never cut.",
            ),
            Stop(
                "HTML: the product page",
                EXPLORE,
                "product_page.html",
                "html",
                {"size": 160, "unit": "tokens"},
                hint="on the product page, chunks start at the h1, h2 and h3 elements and each "
                "one's metadata lists the headings above it ('header_path') and the text a "
                "reader sees without the tags ('visible_text'); the markup stays in the "
                "chunk, so its offsets still point into the page.",
            ),
            Stop(
                "Code: a Python module",
                EXPLORE,
                "inventory.py",
                "code",
                {"size": 200, "unit": "tokens"},
                hint="in the Python module, chunks end between definitions; each chunk's "
                "metadata names the classes and functions it holds ('symbols') and whether "
                "they are classes, methods or a mix ('kind'). The size is 200 tokens, a little "
                "above the usual 160 and still inside the model's window, so that every "
                "function fits whole but the long demo at the end, which is cut at a line: "
                "both of its parts name it.",
            ),
            Stop(
                "Tables: the guide at 120 tokens",
                EXPLORE,
                "technical_guide.md",
                "markdown",
                {"size": 120, "unit": "tokens"},
                hint="at 120 tokens the guide's two tables no longer fit in a chunk: each is cut "
                "only between rows, and every group carries the header, the first in its text, "
                "the next in its metadata ('context', a column of the chunk table) that the "
                "model reads before the rows. Pick a chunk whose 'table_rows' is filled: a "
                "later group shows its header above it.",
                tab="Chunks",
            ),
        ),
    ),
    Level(
        4,
        "Semantic",
        "Embed every sentence (with a neighbour or two for context), measure how far each "
        "one is in meaning from the next, and cut where that distance jumps. Chunks then "
        "follow topics rather than character counts. The price is running an embedding "
        "model over the whole document, and a threshold that has to be chosen.",
        "on the Semantic page, move the threshold and watch breakpoints appear and "
        "disappear on the distance curve; hover a marker to read the two sentences it "
        "separates. The map shows whether chunks of the same topic land together.",
        (
            Stop(
                "Open the semantic breakpoints of the essay",
                SEMANTIC,
                "long_essay.txt",
                "semantic",
                SEMANTIC_SETTINGS,
                semantic=SEMANTIC_SETTINGS,
                needs_strategy=False,
                slow=True,
                hint="move the threshold and watch breakpoints appear and disappear on the "
                "distance curve; hover a marker to read the two sentences it separates.",
            ),
            Stop(
                "Map recursive, fixed and semantic chunks",
                MAP,
                "long_essay.txt",
                "recursive",
                {"size": 600, "overlap": 0, "unit": "chars"},
                map_request={
                    "with": ["Fixed · 500 chars · overlap 50", "Semantic · percentile 95"],
                    "colour": "configuration",
                    "dims": "2D",
                },
                slow=True,
                hint="each point is a chunk, coloured by its configuration: see whether the "
                "chunks of one topic land together, and which cuts scatter a topic across the "
                "map.",
            ),
        ),
    ),
    Level(
        5,
        "Advanced: parent-child and contextual retrieval",
        "Parent-child (our 'Parent-child' strategy) cuts the document twice: large parent "
        "chunks that carry enough context to answer from, and small child chunks inside "
        "them that match questions precisely. A search finds the child and hands the model "
        "its parent. Contextual retrieval goes further: before embedding, a language model "
        "writes a sentence or two placing each chunk within the whole document, and that "
        "note is embedded with the chunk. It costs one language-model call per chunk: the "
        "LLM tools page shows that cost before it runs, with the small offline model "
        "(weak answers, for trying the idea) or any OpenAI-compatible endpoint.",
        "in the service agreement, parents are about 2,000 characters and children about "
        "500: the Chunks tab lists both, and each child's metadata names its parent "
        "('parent') and its level. On the LLM tools page, read the estimated cost, run the "
        "contexts, and compare each chunk with the sentence written for it.",
        (
            Stop(
                "Open parent-child chunks of the service agreement",
                EXPLORE,
                "service_agreement.txt",
                "hierarchy",
                {"size": 2000, "unit": "chars"},
                hint="in the service agreement, parents are about 2,000 characters and children "
                "about 500: the Chunks tab lists both, and each child's metadata names its "
                "parent ('parent') and its level.",
                tab="Chunks",
            ),
            Stop(
                "Parent-child on the technical guide",
                EXPLORE,
                "technical_guide.md",
                "hierarchy",
                {"size": 2000, "unit": "chars"},
                hint="in the technical guide, a parent of about 2,000 characters spans several "
                "sections and its children of about 500 follow the paragraphs inside it: pick "
                "a child in the Chunks tab, its metadata names its parent ('parent'); the "
                "parent's counts its children ('children').",
                tab="Chunks",
            ),
            Stop(
                "Contextual retrieval with the offline model",
                LLM,
                "technical_guide.md",
                "recursive",
                {"size": 600, "unit": "chars"},
                slow=True,
                slow_note=LLM_NOTE,
                duration="cost shown first",
                hint="read the estimated cost, run the contexts, and compare each chunk of the "
                "technical guide with the sentence written to place it in the whole guide.",
            ),
        ),
    ),
    Level(
        6,
        "Where would you cut?",
        "Every strategy above cuts by a rule. Would a person cut there? Segmentation research "
        "answers with boundary metrics against boundaries a person drew: Pk and WindowDiff "
        "(the share of windows where the two disagree; 0 is perfect), boundary similarity B "
        "and boundary F1 (1 is perfect). People do not agree perfectly with each other "
        "either: on published samples, one reader's cuts match another's at B 0.23 to 0.53.",
        "a reader's 40 cuts of the essay are loaded in the “Where would you cut?” tab: the "
        "nine parts and the turns inside them. Paragraph packing at 600 characters makes "
        "every one of them (recall 1.0) and about 115 more (precision 0.26). Open “Edit "
        "boundaries”, click between two words to add a cut, click a ✂ to remove one, "
        "and watch the scores; save the gold to score other strategies on Compare.",
        (
            Stop(
                "Score paragraph chunks against a reader's cuts",
                EXPLORE,
                "long_essay.txt",
                "paragraph",
                {"size": 600, "unit": "chars"},
                boundaries={"load": "sample"},
                tab="Where would you cut?",
            ),
        ),
    ),
)


def available(stop: Stop) -> str | None:
    """Why a stop cannot open (sample or strategy missing), or None when it can."""
    if stop.sample not in sidebar.sample_names():
        return f"the sample {stop.sample} is missing from sample_docs/"
    if stop.needs_strategy and stop.strategy not in strategies():
        return f"the {stop.strategy} strategy is not installed"
    return None


def _open(level: Level, stop: Stop) -> None:
    """Button callback: load the sample and settings (keeping the user's document to
    come back to), leave the hint for the page, then ask for the page."""
    sidebar.leave_for_sample(stop.sample)
    st.session_state[sidebar.HINT_KEY] = {
        "page": URL_PATHS[stop.page],
        "title": f"{level.number} · {level.title}",
        "text": stop.hint or level.look_for,
        "slow": stop.slow_note if stop.slow else "",
    }
    if stop.strategy in strategies():
        config_controls.apply_config(Config.create(stop.strategy, **stop.params))
    if stop.semantic is not None:
        defaults = get_strategy("semantic").defaults()
        defaults.pop("model")
        state.hand_over("semantic", {**defaults, **stop.semantic})
    if stop.map_request is not None:
        state.hand_over("map", stop.map_request)
    if stop.boundaries is not None:
        state.hand_over("boundaries", stop.boundaries)
    if stop.page == EXPLORE:
        state.open_tab(state.EXPLORE_TAB_KEY, stop.tab)
    st.session_state[TARGET_KEY] = str(stop.page)


def stop_button(level: Level, k: int, stop: Stop) -> None:
    problem = available(stop)
    st.button(
        f"{stop.label} ({stop.duration})" if stop.slow else stop.label,
        key=f"tour_{level.number}_{k}",
        on_click=_open,
        args=(level, stop),
        disabled=problem is not None,
        help=problem
        or f"Loads {stop.sample} and opens the page with fitting settings; your own "
        "document is kept, and the sidebar brings it back.",
        icon=":material/arrow_forward:",
    )
    if stop.slow:
        st.caption(stop.slow_note)


def level_card(level: Level) -> None:
    with st.container(border=True):
        st.markdown(f"#### {level.number} · {level.title}")
        st.markdown(level.text)
        st.caption(f"**Try it:** {level.look_for}")
        cols = st.columns(len(level.stops))
        for k, (col, stop) in enumerate(zip(cols, level.stops, strict=True)):
            with col:
                stop_button(level, k, stop)


def current_document() -> None:
    """What the sidebar holds now, cut with its settings, and the way to see it."""
    source, config = sidebar.current_source(), sidebar.current_config()
    if source is None or config is None:
        return  # the sidebar already says what is missing
    chunks = cached.safe_chunks(source, config)
    with st.container(border=True):
        if isinstance(chunks, str):
            st.warning(chunks)
            return
        st.markdown(
            f"**Loaded now:** {source.document.describe()}. "
            f"**{config.label(title=True)}** cuts it into **{len(chunks):,} chunks**."
        )
        st.page_link(EXPLORE, label="See them in Explore", icon=":material/view_agenda:")


def main() -> None:
    target = st.session_state.pop(TARGET_KEY, None)
    if target:
        st.switch_page(Path(target))
    warm_up()  # compile UMAP in the background, for the Map page
    st.title("A guided tour of chunking")
    st.markdown(
        "Retrieval-augmented generation answers questions from pieces of your documents, "
        "so how a document is cut decides what a search can find. The five levels below go "
        "from the simplest cut to the most elaborate, and a last stop asks where you would "
        "cut; each button loads a sample document with settings that show the idea, on the "
        "page that shows it best."
    )
    st.caption(
        "The sidebar always holds the current document and strategy: change either at any "
        "time. Explore shows one configuration in detail, Compare up to four side by side, "
        "Semantic the breakpoints of semantic chunking, and Embedding map where chunks "
        "land in embedding space."
    )
    current_document()
    for level in LEVELS:
        level_card(level)


if __name__ == "__main__":  # Streamlit runs a page as __main__; importing it draws nothing
    main()
