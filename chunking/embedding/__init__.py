"""Embeddings of chunk and sentence texts, offline: models (:mod:`.models`), the named
models and how to get them (:mod:`.registry`: the bundled all-MiniLM-L6-v2 in torch, its
ONNX int8 version in :mod:`.onnx` and a static model2vec version in :mod:`.static`, both
built once by :mod:`.derived`), the vector cache (:mod:`.cache`) and 2D/3D projections
for maps (:mod:`.projection`).

Nothing here is imported by ``import chunking``; torch, sentence-transformers, ONNX
Runtime, model2vec and UMAP are imported only inside the functions that need them.
"""
