"""Evaluate chunking on retrieval: gold-span metrics, sweeps and advice.

>>> from chunking import Config
>>> from chunking.evaluation import Question, Reference, evaluate
>>> docs = {"d": "Cats purr. Dogs bark. Fish swim."}
>>> qs = [Question(0, "What do dogs do?", "d", (Reference(11, 21, "Dogs bark."),))]
>>> result = evaluate(docs, qs, Config.create("recursive", size=12, unit="chars"))
>>> result.mean("precision_omega")
1.0
"""

from .advice import Advice, advise, best_row, report
from .core import (
    METRIC_LABELS,
    METRICS,
    REPORT_RECURSIVE,
    REPORT_SEPARATORS,
    Evaluation,
    Progress,
    Retrieved,
    Settings,
    chunk_spans,
    config_columns,
    evaluate,
    locate_by_text,
)
from .questions import (
    Question,
    QuestionFileError,
    Reference,
    chroma_eval_dir,
    load_chroma_eval,
    parse_questions,
    question_counts,
    questions_from_bytes,
    read_corpus,
    read_questions,
)
from .spans import (
    Scores,
    as_spans,
    measure,
    overlap,
    precision_omega,
    retrieval_scores,
    split_references,
    total_length,
    union,
)
from .sweep import (
    Digest,
    Grid,
    SweepResult,
    compare_techniques,
    digest,
    load_grid,
    results_table,
    sweep,
    techniques_table,
)
from .techniques import TABLE_TECHNIQUES, Technique

__all__ = [
    "METRICS",
    "METRIC_LABELS",
    "REPORT_RECURSIVE",
    "REPORT_SEPARATORS",
    "TABLE_TECHNIQUES",
    "Advice",
    "Digest",
    "Evaluation",
    "Grid",
    "Progress",
    "Question",
    "QuestionFileError",
    "Reference",
    "Retrieved",
    "Scores",
    "Settings",
    "SweepResult",
    "Technique",
    "advise",
    "as_spans",
    "best_row",
    "chroma_eval_dir",
    "chunk_spans",
    "compare_techniques",
    "config_columns",
    "digest",
    "evaluate",
    "load_chroma_eval",
    "load_grid",
    "locate_by_text",
    "measure",
    "overlap",
    "parse_questions",
    "precision_omega",
    "question_counts",
    "questions_from_bytes",
    "read_corpus",
    "read_questions",
    "report",
    "results_table",
    "retrieval_scores",
    "split_references",
    "sweep",
    "techniques_table",
    "total_length",
    "union",
]
