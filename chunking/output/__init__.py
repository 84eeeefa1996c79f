"""Output: chunks as records, JSONL, CSV, Parquet and configurations (:mod:`.export`),
and a configuration as code for other libraries (:mod:`.snippets`)."""
