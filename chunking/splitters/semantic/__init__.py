"""Semantic chunking: cut where the meaning of consecutive sentences changes.

- :mod:`.methods`: breakpoint methods over a distance series (pure numpy);
- :mod:`.analysis`: sentences, window embeddings, distances, size bounds, cohesion;
- :mod:`.strategy`: the registered ``semantic`` strategy.

Importing this package loads no embedding model and no torch.
"""
