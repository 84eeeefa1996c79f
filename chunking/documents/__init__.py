"""Documents in: reading files (encodings, PDF, DOCX, HTML, limits) in :mod:`.io`, many
documents at once (folders, globs, zips under limits) in :mod:`.corpus`, and the user's
own tokenizer files, kept on disk as units, in :mod:`.tokenizers`."""
