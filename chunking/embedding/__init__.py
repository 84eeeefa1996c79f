"""Embeddings of chunk and sentence texts, offline: models (:mod:`.models`), the vector
cache (:mod:`.cache`) and 2D/3D projections for maps (:mod:`.projection`).

Nothing here is imported by ``import chunking``; torch, sentence-transformers and UMAP
are imported only inside the functions that need them.
"""
