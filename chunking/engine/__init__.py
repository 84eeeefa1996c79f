"""The machinery strategies are built from, independent of any one strategy.

- :mod:`.spans`: sentence and paragraph spans with exact offsets, trimming;
- :mod:`.packing`: the one packing engine (consecutive segments into chunks of at most
  a size, with overlap), used by every strategy that packs;
- :mod:`.segments`: packing whole segments (sentences, paragraphs, messages) with it;
- :mod:`.recursive`: recursive separator splitting, LangChain-compatible;
- :mod:`.sections`: splitting spans at preferred cut levels around atomic blocks
  (Markdown, HTML and code).
"""
