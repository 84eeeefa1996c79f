"""How large a file the app's uploaders take, and why: the limit from
``CHUNK_EXPLORER_MAX_MB`` (:func:`max_upload_bytes`), the sentence that explains it
(:func:`limit_reason`) and the per-widget limit every uploader is given, so that its
"… per file" line says the app's limit rather than Streamlit's (:func:`uploader_limit_mb`,
:func:`app_uploader_mb`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

import streamlit as st

from chunking.documents.io import MAX_BYTES_DEFAULT, format_size

MAX_MB_ENV = "CHUNK_EXPLORER_MAX_MB"


def max_upload_bytes(environ: Mapping[str, str] | None = None) -> tuple[int, str | None]:
    """The size limit from ``CHUNK_EXPLORER_MAX_MB`` (default 50 MB) and any problem with it."""
    environ = os.environ if environ is None else environ
    raw = environ.get(MAX_MB_ENV, "").strip()
    if not raw:
        return MAX_BYTES_DEFAULT, None
    try:
        megabytes = float(raw)
    except ValueError:
        megabytes = -1.0
    if not megabytes > 0:
        return MAX_BYTES_DEFAULT, (
            f"{MAX_MB_ENV}={raw!r} is not a positive number of megabytes; using 50 MB"
        )
    return max(1, int(megabytes * 1024 * 1024)), None


def limit_reason(max_bytes: int) -> str:
    """The upload limit, why there is one and what to do about it, to follow "over" (the
    refusal, the empty uploader's hint) or "at most" (its help): for app users, so the
    way to raise it is the server's setting, never a command-line flag."""
    return (
        f"the app's limit of {format_size(max_bytes)} per file (the server keeps each "
        "document in memory for everyone's sessions). Split the file, or ask whoever runs "
        f"the app to raise {MAX_MB_ENV} (in MB, where it is started)"
    )


def uploader_limit_mb(max_bytes: int) -> int:
    """The uploader's own limit in whole megabytes (what its "… per file" line says and
    the browser enforces): the app's limit rounded up, within ``server.maxUploadSize``
    (the most a request may carry); the app's check refuses anything over ``max_bytes``."""
    server_mb = int(st.get_option("server.maxUploadSize"))
    return max(1, min(math.ceil(max_bytes / 2**20), server_mb))


def app_uploader_mb() -> int:
    """The per-file limit of an uploader of one document or of a small file (questions,
    gold boundaries, a projection, a tokenizer): the app's limit."""
    return uploader_limit_mb(max_upload_bytes()[0])
