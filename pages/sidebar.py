"""The sidebar: the document every page works on and the configuration that cuts it,
kept in the address bar, and the way back from the guided tour.

``app.py`` draws the sidebar with :func:`document_input` and :func:`strategy_controls`
on every run, whatever the page, so those widgets keep their state across pages. The
pages read what they hold with :func:`require_source` and :func:`require_config` (or
:func:`current_source` and :func:`current_config`, which do not stop the page).
The strategy controls themselves (:mod:`pages.config_controls`) are drawn on pages too,
under a key prefix, for configurations compared with the sidebar's.

Everything about strategies comes from the registry (``chunking.strategies()``): the
widgets, their ranges, help texts and the URL format.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from chunking import Config, Param, strategies
from chunking.documents.io import (
    MAX_BYTES_DEFAULT,
    SUPPORTED_EXTENSIONS,
    Document,
    DocumentError,
    format_size,
    read_bytes,
    read_path,
)
from pages import cached, pdf_view
from pages.cached import Source, text_key
from pages.config_controls import STRATEGY_KEY, apply_config, config_controls, config_from_state
from pages.param_widgets import widget_value
from pages.state import PERSIST, param_key
from pages.upload_limits import (  # noqa: F401 (the sidebar's names too)
    MAX_MB_ENV,
    limit_reason,
    max_upload_bytes,
    uploader_limit_mb,
)

#: The folder of app.py: the repository root, or ``chunk_explorer_app/`` when installed
#: from the wheel (which carries sample_docs/ there too, see pyproject.toml).
ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "sample_docs"
DEFAULT_SAMPLE = "technical_guide.md"
#: Another folder of sample documents instead of ``sample_docs/``.
SAMPLES_ENV = "CHUNK_EXPLORER_SAMPLES"
SOURCES = ("Sample", "Paste", "Upload")
PASTE_NAME = "pasted text"

# Session-state keys of the shared widgets (tests set widgets by these keys).
SOURCE_KEY = "source"
SAMPLE_KEY = "sample"
PASTE_KEY = "pasted"
UPLOAD_KEY = "upload"
ENCODING_KEY = "encoding"
#: The encoding choices offered for uploaded text: detection first, then the common ones.
DETECT = "detect"
ENCODINGS = (
    DETECT,
    "utf-8",
    "cp1252",
    "latin-1",
    "cp1250",
    "cp1251",
    "cp1257",
    "cp1253",
    "cp1254",
    "utf-16",
    "koi8-r",
    "shift_jis",
    "gb18030",
    "big5",
    "euc-kr",
)

#: The last file read from the uploader (name, id, bytes). Streamlit forgets an
#: uploader's file when the uploader is not drawn (Source set to Sample) or when a page
#: change reaches the server without it (a link clicked while the upload still ran);
#: only the user's own "remove" (the uploader's on_change) forgets it here.
_KEPT_UPLOAD = "_ce_kept_upload"
#: The Source (and sample) to go back to after the tour loaded one of its samples.
RETURN_KEY = "_ce_return_to"
#: A tour stop's "Try it" hint, shown at the top of the page it opened until dismissed.
HINT_KEY = "_ce_tour_hint"
_SOURCE_STATE = "_ce_source"
_CONFIG_STATE = "_ce_config"
_CONFIG_ERROR_STATE = "_ce_config_error"
_URL_DONE = "_ce_url_loaded"
_URL_PROBLEMS = "_ce_url_problems"


# ------------------------------------------------------------------------ documents


def load_document(
    data: bytes,
    name: str,
    max_bytes: int = MAX_BYTES_DEFAULT,
    encoding: str | None = None,
    **pdf_options: Any,
) -> Document | str:
    """Read uploaded bytes into a Document, or return the message to show the user
    (``pdf_options``: see :func:`chunking.documents.io.read_bytes`). A file over the
    limit is refused with the app's own reason (the server's setting, not a flag)."""
    if len(data) > max_bytes:
        return f"{name} is {format_size(len(data))}, over {limit_reason(max_bytes)}"
    try:
        return read_bytes(data, name, max_bytes=max_bytes, encoding=encoding, **pdf_options)
    except DocumentError as exc:
        return str(exc)


def sample_dir() -> Path:
    """The folder of sample documents: ``CHUNK_EXPLORER_SAMPLES``, or ``sample_docs/``."""
    raw = os.environ.get(SAMPLES_ENV, "").strip()
    return Path(raw).expanduser() if raw else SAMPLE_DIR


def sample_names() -> list[str]:
    """Readable files in the sample folder (README excluded), the default one first;
    none when the folder is empty or missing. Listed again only when the folder's
    modification time changes (every rerun asks, several times)."""
    folder = sample_dir()
    try:
        mtime = folder.stat().st_mtime_ns
    except OSError:
        return []
    return list(_sample_names(folder, mtime)) if folder.is_dir() else []


@functools.lru_cache(maxsize=4)
def _sample_names(folder: Path, mtime_ns: int) -> tuple[str, ...]:
    names = sorted(
        p.name
        for p in folder.iterdir()
        if p.is_file() and p.suffix.lower() in SUPPORTED_EXTENSIONS and p.stem != "README"
    )
    if DEFAULT_SAMPLE in names:
        names.remove(DEFAULT_SAMPLE)
        names.insert(0, DEFAULT_SAMPLE)
    return tuple(names)


@cached.bounded("samples")
def _sample(path: str) -> Source:
    return Source.of(read_path(Path(path)), "sample")


def no_samples() -> str:
    """What to do when there are no sample documents."""
    return (
        f"No sample documents were found in {sample_dir()}. Paste some text or upload a "
        f"file instead (or point {SAMPLES_ENV} at a folder of documents)."
    )


# Documents and chunks are immutable, so one shared copy (cache_resource) is safe and
# saves copying megabytes of text on every rerun. Chunk metadata is a read-only
# mapping, which st.cache_data could not pickle anyway.
@cached.bounded("uploads", "Reading the document…")
def _upload(
    data_key: str,
    name: str,
    max_bytes: int,
    encoding: str | None,
    _data: bytes,
    pdf_order: str = "layout",
    keep_furniture: bool = False,
) -> Source | str:
    loaded = load_document(
        _data, name, max_bytes, encoding, pdf_order=pdf_order, keep_furniture=keep_furniture
    )
    if isinstance(loaded, str):
        return loaded
    return Source.of(loaded, "upload", data_key)


def _pasted(text: str) -> Source | str:
    if not text.strip():
        return "Paste some text into the box above to chunk it."
    return Source.from_text(text, PASTE_NAME, "paste")


def _upload_help(max_bytes: int) -> str:
    kinds = ", ".join(sorted(SUPPORTED_EXTENSIONS))
    server_mb = int(st.get_option("server.maxUploadSize"))
    beyond = (
        f" (the server's server.maxUploadSize, {server_mb} MB, caps it: raise both)"
        if max_bytes > server_mb * 2**20
        else ""
    )
    return (
        f"At most {limit_reason(max_bytes)}{beyond}. Supported: {kinds}. PDFs need a "
        "text layer; each chunk's metadata keeps its pages and boxes."
    )


def _no_upload(max_bytes: int) -> str:
    """The hint while the uploader holds no file; also what explains a file the browser
    refused for its size (its chip turns red, "File must be 50.0MB or smaller" only in a
    tooltip, and the file never reaches the app)."""
    return (
        f"Upload a file above, or pick a sample. Files are refused over {limit_reason(max_bytes)}."
    )


@dataclass(frozen=True)
class _Kept:
    """An uploaded file as read: enough to decode it again with another encoding; or a
    document read elsewhere (a corpus member opened from the Corpus page)."""

    file_id: str
    name: str
    data: bytes
    #: Set for a document opened from another page: shown as read there.
    document: Document | None = None
    #: The uploader's file when the document was opened: it does not replace it.
    superseded: str | None = None
    #: sha1 of ``data``: what the read document is cached under (content, never the name).
    data_key: str = ""


def open_document(document: Document) -> None:
    """Make ``document`` the sidebar's document, in place of any upload (a callback's
    helper: the Corpus page opens a member this way, keeping its name, type and
    encoding). Uploading another file replaces it."""
    upload = st.session_state.get(UPLOAD_KEY)
    st.session_state[_KEPT_UPLOAD] = _Kept(
        file_id=f"opened:{text_key(document.text)}",
        name=document.name,
        data=b"",
        document=document,
        superseded=upload.file_id if upload is not None else None,
    )
    st.session_state[SOURCE_KEY] = "Upload"


def source_bytes(source: Source) -> bytes:
    """The bytes ``source`` was read from, which ``chunk-explorer run`` hashes into a
    record's ``doc_id``: a sample's file or the upload's; the text in UTF-8 for pasted
    text and a document opened from another page (whose bytes are not kept here)."""
    if source.origin == "sample":
        path = sample_dir() / str(st.session_state.get(SAMPLE_KEY, ""))
        if path.name == source.document.name and path.is_file():
            return path.read_bytes()
    kept = st.session_state.get(_KEPT_UPLOAD)
    if source.origin == "upload" and isinstance(kept, _Kept) and kept.data:
        return kept.data
    return source.document.text.encode("utf-8")


def _on_upload_change() -> None:
    """The user removed the file (or chose another): forget the kept one."""
    if st.session_state.get(UPLOAD_KEY) is None:
        st.session_state.pop(_KEPT_UPLOAD, None)


def _current_upload() -> _Kept | None:
    """The uploader's file, or the one kept from before the uploader forgot it.

    One file per session is kept (its bytes, within the upload size limit), until the
    user removes it or uploads another."""
    upload = st.session_state.get(UPLOAD_KEY)
    kept = st.session_state.get(_KEPT_UPLOAD)
    if upload is not None:
        if not (isinstance(kept, _Kept) and upload.file_id in (kept.file_id, kept.superseded)):
            data = upload.getvalue()
            kept = _Kept(upload.file_id, upload.name, data, data_key=cached.bytes_key(data))
            st.session_state[_KEPT_UPLOAD] = kept
        if kept.document is None:
            return kept
    if isinstance(kept, _Kept) and kept.document is not None:
        st.caption(f"Showing {kept.name}, opened from the Corpus page.")
        return kept
    if isinstance(kept, _Kept):
        st.caption(
            f"Using {kept.name}, uploaded earlier (the box above shows it empty after a page "
            "or source change). Upload another file to replace it."
        )
        return kept
    return None


def _upload_input() -> tuple[Source | str, bool]:
    """The file uploader; returns the document or a message, and whether it is an error."""
    max_bytes, problem = max_upload_bytes()
    if problem:
        st.warning(problem)
    st.file_uploader(
        "File",
        key=UPLOAD_KEY,
        help=_upload_help(max_bytes),
        on_change=_on_upload_change,
        max_upload_size=uploader_limit_mb(max_bytes),
    )
    upload = _current_upload()
    encoding = st.selectbox(
        "Encoding",
        ENCODINGS,
        persist_state=PERSIST,
        key=ENCODING_KEY,
        help="How the bytes of a text file become characters. 'detect' guesses, shows how "
        "sure it is, and warns when another encoding would give different letters; choose "
        "one to override the guess. PDF and DOCX files carry their own.",
    )
    if upload is None:
        return _no_upload(max_bytes), False
    if upload.document is not None:
        return Source.of(upload.document, "upload"), False
    chosen = None if encoding == DETECT else encoding
    if upload.name.lower().endswith(".pdf"):
        order, keep = pdf_view.reading_controls()
        loaded = _upload(upload.data_key, upload.name, max_bytes, chosen, upload.data, order, keep)
        return loaded, isinstance(loaded, str)
    loaded = _upload(upload.data_key, upload.name, max_bytes, chosen, upload.data)
    return loaded, isinstance(loaded, str)


def document_input() -> Source | None:
    """Sidebar widgets that choose the document; problems are shown with what to do."""
    st.header("Document")
    names = sample_names()
    st.session_state.setdefault(SOURCE_KEY, SOURCES[0])
    st.session_state.setdefault(SAMPLE_KEY, names[0] if names else "")
    origin = st.radio("Source", SOURCES, persist_state=PERSIST, key=SOURCE_KEY, horizontal=True)
    loaded: Source | str
    is_error = False
    if origin == "Sample" and not names:
        loaded = no_samples()
    elif origin == "Sample":
        name = st.selectbox(
            "Sample document",
            names,
            persist_state=PERSIST,
            key=SAMPLE_KEY,
            help="Example documents in sample_docs/.",
        )
        loaded = _sample(str(sample_dir() / name)) if name else no_samples()
    elif origin == "Paste":
        loaded = _pasted(st.text_area("Text", persist_state=PERSIST, key=PASTE_KEY, height=180))
    else:
        loaded, is_error = _upload_input()
    _back_button(str(origin))
    if isinstance(loaded, Source):
        st.caption(loaded.document.describe())
        if loaded.document.encoding_warning:
            st.warning(f"{loaded.document.encoding_warning}: use Encoding above.")
    elif is_error:
        st.error(loaded)
    else:
        st.info(loaded)
    st.session_state[_SOURCE_STATE] = loaded
    return loaded if isinstance(loaded, Source) else None


def leave_for_sample(sample: str) -> None:
    """Show ``sample`` (a tour stop), remembering the user's own document and
    configuration to come back to (a callback's helper: it sets widgets before they
    are drawn)."""
    origin = st.session_state.get(SOURCE_KEY)
    if origin != "Sample" and RETURN_KEY not in st.session_state:
        st.session_state[RETURN_KEY] = (origin, config_from_state())
    st.session_state[SOURCE_KEY] = "Sample"
    st.session_state[SAMPLE_KEY] = sample


def back_to_my_document() -> None:
    """Button callback: the Source and configuration the user had before the tour (the
    upload is kept)."""
    origin, config = st.session_state.pop(RETURN_KEY, (None, None))
    if origin in SOURCES:
        st.session_state[SOURCE_KEY] = origin
    if isinstance(config, Config):
        apply_config(config)
    st.session_state.pop(HINT_KEY, None)


def _back_button(origin: str) -> None:
    """After a tour stop loaded a sample: the way back to the user's own document."""
    before = st.session_state.get(RETURN_KEY)
    if before is None:
        return
    if origin != "Sample":  # the user went back by hand
        st.session_state.pop(RETURN_KEY, None)
        return
    own = "uploaded file" if before[0] == "Upload" else "pasted text"
    st.button(
        f"Back to my {own}",
        key="back_to_my_document",
        on_click=back_to_my_document,
        icon=":material/undo:",
        help="The tour loaded a sample; your document is kept and comes back as it was.",
    )


def tour_hint(url_path: str) -> None:
    """The "Try it" hint of the tour stop that opened the page at ``url_path``, at the
    top of that page until dismissed (drawn before the page runs, so it shows while a
    slow page computes)."""
    hint = st.session_state.get(HINT_KEY)
    if not isinstance(hint, Mapping) or hint.get("page") != url_path:
        return
    with st.container(border=True):
        st.info(f"**Tour · {hint['title']}. Try it:** {hint['text']}", icon=":material/school:")
        if hint.get("slow"):
            st.caption(hint["slow"])
        left, right = st.columns([1, 4])
        left.button("Got it", key="tour_hint_dismiss", on_click=_dismiss_hint)
        if st.session_state.get(RETURN_KEY) is not None:
            right.button(
                "Back to my document",
                key="tour_hint_back",
                on_click=back_to_my_document,
                icon=":material/undo:",
            )


def _dismiss_hint() -> None:
    st.session_state.pop(HINT_KEY, None)


def recommendation_box(source: Source, current: Config | str) -> None:
    """Offer the recommended configuration for the document type on one line (strategy,
    size, unit), with the reasoning behind a "Why" expander."""
    rec = cached.recommendation(source)
    if isinstance(current, Config) and current == rec.config:
        st.success(f"Using the suggested configuration for this {rec.kind}: **{rec.summary}**.")
        with st.expander("Why"):
            st.caption(rec.reason)
        return
    with st.container(border=True):
        st.markdown(f"**Suggested for this {rec.kind}: {rec.summary}**")
        with st.expander("Why"):
            st.caption(rec.reason)
        st.button(
            "Use the suggestion",
            key="use_recommendation",
            on_click=apply_config,
            args=(rec.config,),
            help="Sets the strategy and parameters below to the suggestion.",
        )


def strategy_controls(source: Source | None) -> Config | None:
    """Sidebar: recommendation, strategy, parameters and the config download."""
    st.header("Strategy")
    problems = st.session_state.pop(_URL_PROBLEMS, None)
    if problems:
        st.warning("Some settings in the link were ignored:\n\n- " + "\n- ".join(problems))
    container = st.container()
    result = config_controls()
    with container:
        if source is not None:  # compared as the widgets show it (unit model unresolved)
            recommendation_box(source, config_from_state() or result)
    config = result if isinstance(result, Config) else None
    if config is None:
        st.error(result)
    else:
        st.download_button(
            "Download config (JSON)",
            data=config.to_json(),
            file_name=f"chunk-config-{config.strategy}.json",
            mime="application/json",
            on_click="ignore",
            key="dl_config_sidebar",
            icon=":material/download:",
        )
    st.session_state[_CONFIG_STATE] = config
    st.session_state[_CONFIG_ERROR_STATE] = None if config else result
    return config


# --------------------------------------------------------------------------- URL


def _url_value(param: Param, value: Any) -> str:
    if param.kind is list:
        return json.dumps(list(value), ensure_ascii=False)
    if param.kind is bool:
        return "true" if value else "false"
    return str(value)


def config_to_query(config: Config, sample: str | None = None) -> dict[str, str]:
    """The query parameters that reproduce ``config`` (and the sample, if any)."""
    query = {"strategy": config.strategy}
    for param in config.spec.params:
        query[param.name] = _url_value(param, config.params[param.name])
    if sample:
        query["sample"] = sample
    return query


def query_to_state(
    query: Mapping[str, str], samples: Sequence[str]
) -> tuple[dict[str, Any], list[str]]:
    """Session-state values for the widgets described by ``query``, and what was ignored."""
    registry = strategies()
    state: dict[str, Any] = {}
    problems: list[str] = []
    sample = query.get("sample")
    if sample is not None:
        if sample in samples:
            state[SOURCE_KEY], state[SAMPLE_KEY] = "Sample", sample
        elif samples:
            problems.append(f"sample {sample!r} does not exist; showing {samples[0]}")
        else:
            problems.append(f"sample {sample!r} does not exist: there are no sample documents")
    name = query.get("strategy")
    if name is None:
        return state, problems
    if name not in registry:
        problems.append(f"strategy {name!r} is unknown; choose one of {', '.join(registry)}")
        return state, problems
    state[STRATEGY_KEY] = name
    for param in registry[name].params:
        if param.name in query:
            try:
                value = param.coerce(query[param.name])
            except ValueError as exc:
                problems.append(str(exc))
                continue
            state[param_key(name, param.name)] = widget_value(param, value)
    return state, problems


def apply_url_once() -> None:
    """On a session's first run, set the widgets from the link's query parameters."""
    if st.session_state.get(_URL_DONE):
        return
    st.session_state[_URL_DONE] = True
    query = {k: st.query_params[k] for k in st.query_params}
    state, problems = query_to_state(query, sample_names())
    for key, value in state.items():
        st.session_state[key] = value
    if problems:
        st.session_state[_URL_PROBLEMS] = problems


def write_url(source: Source | None, config: Config | None) -> None:
    """Keep the current configuration (and sample name) in the address bar."""
    if config is None:
        return
    sample = source.document.name if source is not None and source.origin == "sample" else None
    # as the widgets show it: a unit model stays "model" in links, resolved on arrival
    query = config_to_query(config_from_state() or config, sample)
    if dict(st.query_params.to_dict()) != query:
        st.query_params.from_dict(query)


# ------------------------------------------------------------- what pages read


def current_source() -> Source | None:
    """The sidebar's document, or None when there is none (nothing is shown)."""
    source = st.session_state.get(_SOURCE_STATE)
    return source if isinstance(source, Source) else None


def current_config() -> Config | None:
    """The sidebar's configuration, or None when it is invalid (nothing is shown)."""
    config = st.session_state.get(_CONFIG_STATE)
    return config if isinstance(config, Config) else None


def require_source() -> Source:
    """The current document, or stop the page with the reason it is missing."""
    source = st.session_state.get(_SOURCE_STATE)
    if isinstance(source, Source):
        return source
    message = source if isinstance(source, str) else "Choose a document in the sidebar."
    st.warning(f"{message}\n\nPick a sample, paste text or upload another file in the sidebar.")
    st.stop()


def require_config() -> Config:
    """The sidebar's configuration, or stop the page with what to fix."""
    config = st.session_state.get(_CONFIG_STATE)
    if isinstance(config, Config):
        return config
    error = st.session_state.get(_CONFIG_ERROR_STATE) or "No configuration."
    st.error(f"{error} Fix it in the sidebar.")
    st.stop()
