"""How a corpus run is set up (everything but the chunking itself), shared by both
engines."""

from __future__ import annotations

from dataclasses import dataclass

from ..sinks.base import Target, check_collection_name

ENGINES = ("local", "ray", "spark")
#: Rows per part file by default (about 15 MB of text at 400 tokens a chunk).
PART_ROWS = 10_000


@dataclass(frozen=True)
class RunSettings:
    """Where and how a corpus is run (everything but the chunking itself)."""

    out: str
    engine: str = "local"
    workers: int = 1
    #: The embedding model's name for ``--embed``; None: no embedding column.
    embed_model: str | None = None
    force: bool = False
    part_rows: int = PART_ROWS
    progress: bool = False
    #: Vector databases to write too (``KIND:PATH``, :mod:`chunking.sinks`).
    sinks: tuple[str, ...] = ()
    #: Their collection; None: named after the configuration's label.
    collection: str | None = None
    #: The Spark engine's master (``spark://…``, ``sc://…`` for Spark Connect, ``local[N]``);
    #: None: ``SPARK_REMOTE`` when set, else ``local[workers]``.
    spark_master: str | None = None

    def check(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}; choose one of {', '.join(ENGINES)}")
        if self.workers < 1:
            raise ValueError(f"--workers must be at least 1; got {self.workers}")
        if self.spark_master is not None and self.engine != "spark":
            raise ValueError("--spark-master needs --engine spark")
        if self.part_rows < 1:
            raise ValueError(f"--part-rows must be at least 1; got {self.part_rows}")
        if self.sinks and self.embed_model is None:
            raise ValueError("--sink writes each chunk's vector: add --embed")
        keys = [Target.parse(sink).key for sink in self.sinks]
        if len(set(keys)) < len(keys):
            raise ValueError("the same --sink is given twice")
        if self.collection is not None:
            check_collection_name(self.collection)
