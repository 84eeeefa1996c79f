"""What a long-running server needs to stay bounded: the bounds of every cache the app
keeps, stated in one table (:mod:`chunking.runtime.limits`), and the least-recently-used
store that holds them to a number of entries and of bytes (:mod:`chunking.runtime.lru`).
"""
