"""Measuring and advice: statistics and warnings of a set of chunks (:mod:`.report`),
per-document statistics of a corpus (:mod:`.corpus_stats`) and the strategy
recommender (:mod:`.recommend`)."""
