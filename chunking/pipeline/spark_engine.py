"""The Spark engine: the same run as Spark jobs, on a local session or a cluster.

The driver lists the corpus with the core's rules (:func:`~chunking.documents.corpus.
list_sources`: recursion, hidden files, zips, limits) and cuts the list into *waves*
of about :data:`WAVE_BYTES`. Each wave is one Spark job::

    binaryFile (the wave's files) -> mapInPandas(cut_partition) -> write.parquet(staging)

``cut_partition`` cuts each document with :meth:`Job.chunk
<chunking.pipeline.documents.Job.chunk>` and, with ``--embed``, embeds the partition's
rows with the model loaded once per Python worker (:func:`get_embedder` caches it in
the process, and Spark reuses its Python workers). When the job has written its
Parquet files, the wave's staging folder is renamed into ``parts/spark-<run>-<wave>/``:
the rename is the commit, so an interrupted run (an executor that dies, Ctrl+C) keeps
the waves already committed and the next run skips their documents and redoes only
the rest, without duplicates.

Spark reads files, not zip members, and silently drops files whose name starts with
``_`` or ``.``: those documents are copied into the wave's staging folder under a
plain name first. The driver checks that each file opens, so a file that cannot be
read is an ``errors.jsonl`` line instead of a failed job. Workers record what became of
every document in one small JSON Lines file per partition (rewritten by a retried
task), which the driver reads into ``errors.jsonl`` and the counts.

Where it runs: ``local[N]`` (``--workers N``) by default; ``--spark-master URL`` for a
standalone (``spark://``) or other cluster master, ``--spark-master sc://…`` or the
``SPARK_REMOTE`` variable for Spark Connect; an active session (a notebook's) is used as
it is. On a cluster the inputs and ``--out`` must be on storage that this process and
every executor see under the same path.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..documents.corpus import CorpusLimits, Source, doc_id, read_source
from .documents import COLUMNS, EMBEDDING, Job, Outcome
from .output import DocKey, Done, RunOutput, embedding_texts
from .progress import Progress

if TYPE_CHECKING:
    from .settings import RunSettings

INSTALL_HINT = "pip install 'chunk-explorer[spark]'"
CONNECT_HINT = "pyspark's connect extra: pip install 'pyspark[connect]==4.3.0'"
JAVA_HINT = (
    "--engine spark needs Java 17 or newer: install it (Debian/Ubuntu: "
    "sudo apt-get install openjdk-17-jre-headless; macOS: brew install openjdk@17) "
    "or point JAVA_HOME at one"
)
#: Bytes of documents per Spark job (a wave): what an interruption can cost at most.
WAVE_BYTES = 64 * 2**20
#: Documents per wave, whatever their size.
WAVE_DOCUMENTS = 20_000
#: Documents per Arrow batch handed to ``cut_partition``: a few, since one may be 50 MB.
DOCUMENTS_PER_BATCH = 8
#: Seconds to wait for a cluster master to answer before giving up.
CONNECT_TIMEOUT = 5.0
#: Spark Connect's default port.
CONNECT_PORT = 15002
#: The variable pyspark sets once a Spark Connect session has started in the process.
CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"
#: A corpus name: the Python worker that meets it exits at once, as a dying executor
#: would (read by the driver when the run starts; for the fault tests).
FAULT_ENV = "CHUNK_EXPLORER_SPARK_FAULT"
#: Spark's messages below ERROR stay off the terminal (the JVM's own log4j2 file), and
#: so do the stack traces of a failed task: the run names the failure in one line.
LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = fatal
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = fatal
logger.writer.name = org.apache.spark.sql.execution.datasources.FileFormatWriter
logger.writer.level = fatal
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = fatal
"""
#: pyspark warns about pandas 3 in every Python worker; the run's output is checked.
QUIET_WARNINGS = "ignore:PySpark does not yet fully support pandas:FutureWarning"


def import_pyspark() -> Any:
    """pyspark's ``SparkSession``, or a ValueError naming the extra to install."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise ValueError(f"--engine spark needs pyspark: {INSTALL_HINT}") from None
    return SparkSession


# ------------------------------------------------------------------ connecting


def java_major(java: str) -> int | None:
    """The major version of the ``java`` executable (8 for 1.8), None if it does not run."""
    try:
        shown = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', shown.stderr + shown.stdout)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def find_java() -> str:
    """The ``java`` Spark will start (``JAVA_HOME`` first, then ``PATH``); a ValueError
    saying how to install one when there is none, or it is older than 17."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home, "bin", "java")) if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        raise ValueError(JAVA_HINT)
    major = java_major(java)
    if major is None or major < 17:
        found = f"found Java {major} at {java}" if major else f"{java} does not run"
        raise ValueError(f"{JAVA_HINT} ({found})")
    return java


def master_address(url: str) -> list[tuple[str, int]]:
    """The (host, port) pairs a ``spark://`` or ``sc://`` URL names (several for a
    standalone master with standbys: ``spark://a:7077,b:7077``)."""
    scheme, _, rest = url.partition("://")
    default = CONNECT_PORT if scheme == "sc" else 7077
    hosts = rest.split("/", 1)[0].split(";", 1)[0]
    found = []
    for host in hosts.split(","):
        parts = urlsplit(f"//{host}")
        if not parts.hostname:
            raise ValueError(f"--spark-master {url} names no host")
        found.append((parts.hostname, parts.port or default))
    return found


def check_reachable(url: str) -> None:
    """A ValueError in one line when no master of ``url`` accepts a connection (Spark
    itself would retry for a minute, then print a stack trace)."""
    reasons = []
    for host, port in master_address(url):
        try:
            with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
                return
        except OSError as exc:
            reasons.append(f"{host}:{port}: {exc.strerror or exc}")
    raise ValueError(
        f"cannot reach the Spark master {url} ({'; '.join(reasons)}); check --spark-master "
        "or SPARK_REMOTE, and that the master is running"
    )


def log_config() -> str:
    """A log4j2 file that keeps the JVM at ERROR (written once per temporary folder)."""
    path = Path(tempfile.gettempdir(), f"chunk-explorer-spark-log4j2-{os.getuid()}.properties")
    if not path.is_file() or path.read_text(encoding="utf-8") != LOG4J2:
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(LOG4J2, encoding="utf-8")
        os.replace(temporary, path)
    return path.as_uri()


def connect(settings: RunSettings) -> tuple[Any, bool]:
    """The Spark session of the run and whether this call started it (and so must stop
    it): ``--spark-master``, else an active session (a notebook's), else ``SPARK_REMOTE``
    (Spark Connect), else ``local[workers]``."""
    session = import_pyspark()
    master = settings.spark_master
    if master is not None and master.startswith(("spark://", "sc://")):
        check_reachable(master)
    active = session.getActiveSession()
    if master is None and active is not None:
        return active, False
    remote = os.environ.get("SPARK_REMOTE") if master is None else None
    if master is not None and master.startswith("sc://"):
        remote = master
    if remote is not None:
        if remote.startswith("sc://") and remote != master:
            check_reachable(remote)
        if remote.startswith("local"):  # pyspark starts a Connect server here
            find_java()
            os.environ["PYSPARK_PYTHON"] = sys.executable
        from pyspark.errors import PySparkException

        try:
            return session.builder.remote(remote).getOrCreate(), True
        except ImportError as exc:  # grpcio-status and the rest of pyspark[connect]
            raise ValueError(
                f"Spark Connect (SPARK_REMOTE, sc://) needs {CONNECT_HINT} ({exc})"
            ) from None
        except PySparkException as exc:  # SESSION_ALREADY_EXIST: a classic session runs here
            raise ValueError(f"cannot start a Spark Connect session for {remote}: {exc}") from None
    if active is not None:  # one session per process: Spark would return this one anyway
        return active, False
    find_java()
    local = master is None or master.startswith("local")
    # Local Python workers must be this interpreter (the system python3 lacks pyarrow);
    # a cluster's nodes may set their own.
    python = sys.executable if local else os.environ.get("PYSPARK_PYTHON", sys.executable)
    os.environ["PYSPARK_PYTHON"] = python
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    builder = (
        session.builder.master(master or f"local[{settings.workers}]")
        .appName("chunk-explorer run")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.pyspark.python", python)
        .config("spark.pyspark.driver.python", sys.executable)
        .config("spark.executorEnv.PYTHONWARNINGS", QUIET_WARNINGS)
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_config()}")
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=QUIET_WARNINGS.split(":")[1])
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        warm_up(spark, spark.sparkContext.defaultParallelism)
    return spark, True


def warm_up(spark: Any, workers: int) -> None:
    """Start the session's Python workers, the chunking code imported in each, so that
    the start-up is counted apart from the run (the first job would pay it)."""
    frame = spark.range(workers, numPartitions=workers)
    frame.mapInPandas(_warm, frame.schema).collect()


def _warm(batches: Iterator[Any]) -> Iterator[Any]:
    import importlib

    for name in ("pandas", "pyarrow.parquet", "chunking.core", "chunking.pipeline.output"):
        importlib.import_module(name)  # once per Python worker, as the run's jobs would
    yield from batches


# ------------------------------------------------------------------------- run


def run_spark(
    sources: Sequence[Source],
    job: Job,
    settings: RunSettings,
    limits: CorpusLimits,
    output: RunOutput,
    before: Done,
    progress: Progress,
    committed: Callable[[], None] | None = None,
) -> dict[str, float]:
    """Run the corpus on Spark, one job per wave; fill ``progress``'s counts; call
    ``committed`` after each wave is committed (the sinks); return the timings."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=QUIET_WARNINGS.split(":")[1])
        began = time.perf_counter()
        #: pyspark sets it on a Connect session's start and never clears it, so that a
        #: later classic session in this process would try Spark Connect instead.
        connect_mode = os.environ.get(CONNECT_MODE)
        spark, started_here = connect(settings)
        #: Starting (or joining) the session: the JVM and, locally, the Python workers.
        timings = {"startup_seconds": time.perf_counter() - began}
        try:
            timings |= _run_waves(
                spark, sources, job, settings, limits, output, before, progress, committed
            )
        finally:
            if started_here:
                spark.stop()
                if connect_mode is None:
                    os.environ.pop(CONNECT_MODE, None)
    return timings


def _run_waves(
    spark: Any,
    sources: Sequence[Source],
    job: Job,
    settings: RunSettings,
    limits: CorpusLimits,
    output: RunOutput,
    before: Done,
    progress: Progress,
    committed: Callable[[], None] | None,
) -> dict[str, float]:
    """Each wave as one Spark job, committed as it ends."""
    timings = {"chunk_seconds": 0.0, "embed_seconds": 0.0}
    staging = output.staging()
    errors = output.errors()
    fault = os.environ.get(FAULT_ENV)
    batch_key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    batch_size = spark.conf.get(batch_key)
    spark.conf.set(batch_key, str(DOCUMENTS_PER_BATCH))
    try:
        for number, wave in enumerate(waves(sources)):
            folder = staging / f"wave-{number:05d}"
            readable, names = _stage(wave, limits, folder / "inputs", errors.add, progress)
            if not readable:
                continue
            wanted = set(names.values())
            done = frozenset(key for key in before.chunks if key[1] in wanted)
            _write(spark, readable, names, job, settings, done, folder, fault)
            _commit(folder / "parts", output.parts / f"spark-{output.run_id}-{number:05d}")
            for name, value in _tally(folder / "outcomes", errors.add, progress).items():
                timings[name] += value
            shutil.rmtree(folder, ignore_errors=True)
            if committed is not None:
                committed()
        shutil.rmtree(staging, ignore_errors=True)
    finally:
        errors.close()
        if batch_size is not None:
            spark.conf.set(batch_key, batch_size)
    return timings


def waves(sources: Sequence[Source]) -> Iterator[list[Source]]:
    """The corpus in order, cut into groups of at most :data:`WAVE_BYTES` (or one
    document when it is bigger) and :data:`WAVE_DOCUMENTS` documents."""
    wave: list[Source] = []
    size = 0
    for source in sources:
        if wave and (size + source.size > WAVE_BYTES or len(wave) >= WAVE_DOCUMENTS):
            yield wave
            wave, size = [], 0
        wave.append(source)
        size += source.size
    if wave:
        yield wave


def _stage(
    wave: list[Source],
    limits: CorpusLimits,
    inputs: Path,
    error: Callable[[dict[str, Any]], None],
    progress: Progress,
) -> tuple[list[str], dict[str, str]]:
    """The paths Spark reads and the corpus name of each (by :func:`spark_path`); the
    documents that cannot be read are recorded as errors here."""
    paths: list[str] = []
    names: dict[str, str] = {}
    for number, source in enumerate(wave):
        try:
            path = _readable_path(source, limits, inputs / str(number))
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            outcome = Outcome(source.name, None, source.size, error=f"cannot be read: {reason}")
            error(outcome.error_record())
            progress.advance(outcome)
            continue
        paths.append(path)
        names[path] = source.name
    return paths, names


def _readable_path(source: Source, limits: CorpusLimits, folder: Path) -> str:
    """An absolute path Spark reads ``source`` from; raises when it cannot be read.
    Zip members, and files Spark would take for hidden (``_x``, ``.x``), are copied."""
    hidden = Path(source.path).name.startswith(("_", "."))
    if source.member is not None or hidden:
        data = read_source(source, limits)
        folder.mkdir(parents=True)
        path = folder / f"document{Path(source.name).suffix}"
        path.write_bytes(data)
        return os.path.abspath(path)
    if source.size > limits.max_file_bytes:
        read_source(source, limits)  # raises the size message without reading it all
    with open(source.path, "rb") as handle:
        handle.read(1)
    return os.path.abspath(source.path)


def spark_path(path: str) -> str:
    """A path as the driver wrote it, from the URI Spark shows (``file:/a b/c.md``,
    ``dbfs:/Volumes/x``): no scheme, one leading slash, nothing escaped."""
    bare = re.sub(r"^[A-Za-z][\w+.-]*:", "", path)
    return "/" + bare.lstrip("/")


def output_schema(embedded: bool) -> Any:
    """The Spark schema of the chunk rows (the same columns as every part file)."""
    from pyspark.sql.types import (
        ArrayType,
        FloatType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    numbers = ("index", "start", "end", "size")
    fields = [StructField(c, LongType() if c in numbers else StringType()) for c in COLUMNS]
    if embedded:
        fields.append(StructField(EMBEDDING, ArrayType(FloatType())))
    return StructType(fields)


def _write(
    spark: Any,
    paths: list[str],
    names: dict[str, str],
    job: Job,
    settings: RunSettings,
    done: frozenset[DocKey],
    folder: Path,
    fault: str | None,
) -> None:
    """One wave as one Spark job: read, cut (and embed), write Parquet into ``folder``."""
    (folder / "outcomes").mkdir(parents=True)
    frame = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(paths)
    cut = partial(
        cut_partition,
        job=job,
        names={spark_path(path): name for path, name in names.items()},
        done=done,
        log_dir=str(folder / "outcomes"),
        model=settings.embed_model,
        fault=fault,
    )
    rows = frame.select("path", "content").mapInPandas(
        cut, output_schema(settings.embed_model is not None)
    )
    try:
        rows.write.option("maxRecordsPerFile", settings.part_rows).parquet(str(folder / "parts"))
    except Exception as exc:  # Py4J, Spark Connect and pyspark errors share no base
        raise ValueError(
            f"the Spark job failed ({failure(str(exc))}); the documents committed so far are "
            "kept: run the same command again to finish"
        ) from None


def failure(text: str) -> str:
    """What went wrong, in a few words, from a Spark error's many lines: a Python
    worker's exception, else the reason the task was lost, else the first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    python = [line for line in lines if re.match(r"^[A-Z]\w*(Error|Exception): ", line)]
    lost = re.search(r"most recent failure: .*?\): (?:[\w.$]+: )?([^\n]+)", text)
    if python:
        reason = python[-1]
    elif lost:
        reason = lost.group(1).split(". Consider ")[0]
    else:
        reason = lines[0] if lines else "no reason given"
    return reason if len(reason) <= 200 else reason[:199] + "…"


def cut_partition(
    batches: Iterator[Any],
    *,
    job: Job,
    names: dict[str, str],
    done: frozenset[DocKey],
    log_dir: str,
    model: str | None,
    fault: str | None,
) -> Iterator[Any]:
    """A partition's documents (``path``, ``content``) to chunk rows, run in a Python
    worker; what became of each document is logged when the partition ends."""
    import pandas as pd

    outcomes: list[Outcome] = []
    embed_seconds = 0.0
    for batch in batches:
        cut: list[Outcome] = []
        for path, content in zip(batch["path"], batch["content"], strict=True):
            name = names.get(spark_path(str(path)), str(path))
            if fault is not None and name == fault:
                os._exit(17)  # an executor dying mid-run (the fault tests)
            data = bytes(content)
            identity = doc_id(data)
            if (identity, name) in done:
                cut.append(Outcome(name, identity, len(data), skipped=True))
            else:
                cut.append(job.chunk(name, data))
        outcomes += cut
        kept = [o.columns for o in cut if o.columns is not None and not o.skipped]
        columns: dict[str, Any] = {n: [v for c in kept for v in c[n]] for n in COLUMNS}
        if not columns["index"]:
            continue
        if model is not None:
            from ..embedding.models import get_embedder

            began = time.perf_counter()
            vectors = get_embedder(model).embed(embedding_texts(columns))
            columns[EMBEDDING] = [row.astype("float32") for row in vectors]
            embed_seconds += time.perf_counter() - began
        yield pd.DataFrame(columns)
    _log(Path(log_dir), outcomes, embed_seconds)


def _log(log_dir: Path, outcomes: list[Outcome], embed_seconds: float) -> None:
    """One file per partition, replaced whole (a retried task rewrites its own)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else os.getpid()
    lines = [o.log_line() for o in outcomes]
    lines.append(json.dumps({"embed_seconds": embed_seconds}))
    path = log_dir / f"partition-{partition:05d}.jsonl"
    temporary = log_dir / f".partition-{partition:05d}-{os.getpid()}.tmp"
    temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _commit(written: Path, target: Path) -> None:
    """Keep only the wave's non-empty Parquet files and rename the folder into place."""
    import pyarrow.parquet as pq

    if not written.is_dir():
        return
    for path in written.iterdir():
        if path.suffix != ".parquet" or path.name.startswith((".", "_")):
            path.unlink()  # _SUCCESS, checksum files
        elif pq.ParquetFile(path).metadata.num_rows == 0:
            path.unlink()
    if any(written.iterdir()):
        os.replace(written, target)


def _tally(
    log_dir: Path, error: Callable[[dict[str, Any]], None], progress: Progress
) -> dict[str, float]:
    """Read the wave's partition logs into ``errors.jsonl`` and the progress counts."""
    seconds = embed_seconds = 0.0
    for path in sorted(log_dir.glob("partition-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if "embed_seconds" in entry:
                embed_seconds += entry["embed_seconds"]
                continue
            outcome, chunks = Outcome.from_log(entry)
            if outcome.error is not None:
                error(outcome.error_record())
            progress.advance(outcome)
            progress.chunks += chunks
            seconds += outcome.seconds
    return {"chunk_seconds": seconds, "embed_seconds": embed_seconds}
