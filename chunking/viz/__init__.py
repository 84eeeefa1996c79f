"""Drawing for the app: plotly figures (:mod:`.figures`, :mod:`.semantic`,
:mod:`.evaluation`) and escaped HTML (:mod:`.render`, :mod:`.evidence`).

Needs the ``app`` extra (plotly); the core never imports this package. Importing it
checks that plotly is installed without loading it (the HTML modules do not need it).
"""

from importlib.util import find_spec

if find_spec("plotly") is None:  # pragma: no cover - depends on the installation
    raise ImportError(
        "chunking.viz draws with plotly; install the app extra: pip install 'chunk-explorer[app]'"
    )
