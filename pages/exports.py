"""Downloads and exports: download buttons for files built on click
(:func:`download_buttons`, :func:`deferred`) and the configuration as code for a
library (:func:`code_export`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from chunking import Config
from pages.state import PERSIST

# --------------------------------------------------------------------- downloads


def deferred(make: Callable[..., str | bytes], *args: Any) -> Callable[[], str | bytes]:
    """A no-argument callable for st.download_button: the file is built on click."""
    return lambda: make(*args)


#: One download button: label, data (or what builds it on click), file suffix, MIME type.
Download = tuple[str, "str | bytes | Callable[[], str | bytes]", str, str]


def download_buttons(downloads: Sequence[Download], stem: str, key: str) -> None:
    """One download button per file, side by side: ``stem.suffix``, keys ``key`` + the
    suffix; files built by a callable are only built when clicked."""
    columns = st.columns(len(downloads))
    for column, (label, data, suffix, mime) in zip(columns, downloads, strict=True):
        column.download_button(
            label,
            data=data,
            file_name=f"{stem}.{suffix}",
            mime=mime,
            on_click="ignore",
            key=f"{key}{suffix}",
            icon=":material/download:",
            width="stretch",
        )


# --------------------------------------------------------------------- export as code

_FIDELITY_NOTE = {
    "exact": "gives the same chunks as here",
    "approximate": "the closest settings; the chunks differ",
    "unavailable": "no equivalent",
}


def code_export(config: Config, key: str) -> None:
    """The configuration as code for a chosen library: fidelity, what differs, the
    snippet (with a copy button) and a download."""
    from chunking.output.snippets import TARGETS, snippet

    target = st.selectbox(
        "Library",
        TARGETS,
        key=f"{key}.target",
        persist_state=PERSIST,
        help="Python snippets define split(text) -> list[str]: paste them into a pipeline.",
    )
    made = snippet(config, str(target))
    message = f"**{made.fidelity}**: {_FIDELITY_NOTE[made.fidelity]}"
    if made.note:
        message += f". {made.note[0].upper()}{made.note[1:]}."
    if made.fidelity == "exact":
        st.success(message, icon=":material/check_circle:")
    elif made.fidelity == "approximate":
        st.warning(message, icon=":material/warning:")
    else:
        st.info(message, icon=":material/block:")
        return
    st.code(made.code, language=made.language)
    suffix = "sh" if made.language == "bash" else "py"
    st.download_button(
        f"Download {target} snippet",
        data=made.code,
        file_name=f"{config.strategy}_{target}.{suffix}",
        mime="text/x-python" if suffix == "py" else "text/x-shellscript",
        on_click="ignore",
        key=f"{key}.download",
        icon=":material/download:",
    )
