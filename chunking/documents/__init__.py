"""Documents in: reading files (encodings, PDF, DOCX, HTML, limits) in :mod:`.io`, and
many documents at once (folders, globs, zips under limits) in :mod:`.corpus`."""
