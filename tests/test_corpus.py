"""chunking.documents.corpus: zips, uploads and CLI inputs under limits, names that never escape."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chunking.documents.corpus import (
    CorpusError,
    CorpusLimits,
    Member,
    doc_id,
    expand_inputs,
    list_sources,
    read_source,
    uploaded_members,
    zip_members,
)
from tests.conftest import make_zip, write
from tests.test_run import unreadable_file


def names(members: object) -> list[str]:
    return [m.name for m in members]  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- zips


def test_zip_members_streams_documents_and_skips_folders_symlinks_hidden() -> None:
    data = make_zip(
        {
            "docs/": b"",
            "docs/a.md": b"# A\n\nalpha",
            "./docs//b.txt": b"beta",
            "__MACOSX/docs/._a.md": b"junk",
            "docs/.hidden": b"secret",
        },
        symlinks={"docs/link.txt": "/etc/passwd"},
    )
    members = list(zip_members(data))
    assert members == [Member("docs/a.md", b"# A\n\nalpha"), Member("docs/b.txt", b"beta")]


@pytest.mark.parametrize("bad", ["../evil.txt", "docs/../../evil.txt", "/etc/passwd", "C:/x.txt"])
def test_zip_member_escaping_the_archive_is_refused(bad: str) -> None:
    data = make_zip({"ok.txt": b"fine", bad: b"evil"})
    with pytest.raises(CorpusError, match="leaves the archive"):
        list(zip_members(data))


def test_zip_limits_are_checked_before_reading() -> None:
    data = make_zip({f"{i}.txt": b"text %d" % i for i in range(5)})
    with pytest.raises(CorpusError, match="more than 3 files"):
        list(zip_members(data, CorpusLimits(max_files=3)))
    with pytest.raises(CorpusError, match="total size"):
        list(zip_members(data, CorpusLimits(max_total_bytes=20)))


def test_zip_bomb_is_refused_by_its_ratio() -> None:
    data = make_zip({"bomb.txt": b"a" * 2_000_000})
    with pytest.raises(CorpusError, match="zip bomb"):
        list(zip_members(data))
    assert len(list(zip_members(data, CorpusLimits(max_ratio=10_000)))) == 1


def test_zip_member_over_the_document_limit() -> None:
    data = make_zip({"big.txt": os.urandom(3000)})
    with pytest.raises(CorpusError, match=r"big\.txt is .* over the"):
        list(zip_members(data, CorpusLimits(max_file_bytes=1000)))


def test_lying_zip_header_cannot_bomb() -> None:
    """A member whose header declares fewer bytes than it holds is refused, not read."""
    honest = make_zip({"a.txt": b"x" * 5000})
    info_offset = honest.rindex(b"PK\x01\x02")  # central directory entry
    lying = bytearray(honest)
    lying[info_offset + 24 : info_offset + 28] = (10).to_bytes(4, "little")  # file_size
    with pytest.raises(CorpusError, match=r"a\.txt"):
        list(zip_members(bytes(lying), CorpusLimits(max_ratio=10_000)))


def test_not_a_zip() -> None:
    with pytest.raises(CorpusError, match="not a valid zip"):
        list(zip_members(b"plain text"))


# ------------------------------------------------------------------------- uploads


def test_uploaded_members_expand_zips_and_share_limits() -> None:
    files = [("a.txt", b"alpha"), ("more.zip", make_zip({"b.md": b"beta", "c.md": b"gamma"}))]
    assert names(uploaded_members(files)) == ["a.txt", "b.md", "c.md"]
    with pytest.raises(CorpusError, match="more than 2 files"):
        list(uploaded_members(files, CorpusLimits(max_files=2)))
    with pytest.raises(CorpusError, match=r"a\.txt is"):
        list(uploaded_members([("a.txt", b"x" * 11)], CorpusLimits(max_file_bytes=10)))


def test_uploaded_names_lose_their_folders() -> None:
    assert names(uploaded_members([("../../x/evil.txt", b"text")])) == ["evil.txt"]


# ---------------------------------------------------------------------- CLI inputs


def test_folder_is_recursive_sorted_and_skips_hidden_files(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write(corpus / "b.txt", "b")
    write(corpus / "a" / "z.md", "z")
    write(corpus / ".git" / "config", "hidden")
    write(corpus / ".env", "hidden")
    write(corpus / "__pycache__" / "m.pyc", b"\x00")
    members = list(expand_inputs([str(corpus)]))
    assert names(members) == ["corpus/a/z.md", "corpus/b.txt"]
    assert members[0].data == b"z"


def test_symlinks_inside_folders_are_not_followed(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "secret.txt", "secret")
    corpus = tmp_path / "corpus"
    write(corpus / "a.txt", "a")
    (corpus / "link.txt").symlink_to(outside)
    (corpus / "linked_dir").symlink_to(outside.parent, target_is_directory=True)
    assert names(expand_inputs([str(corpus)])) == ["corpus/a.txt"]


def test_globs_files_and_zips(tmp_path: Path) -> None:
    write(tmp_path / "x1.txt", "one")
    write(tmp_path / "x2.txt", "two")
    write(tmp_path / "y.md", "why")
    write(tmp_path / "pack.zip", make_zip({"in/z.md": b"zed"}))
    inputs = [str(tmp_path / "x*.txt"), str(tmp_path / "pack.zip"), str(tmp_path / "x1.txt")]
    members = list(expand_inputs(inputs))
    assert names(members) == ["x1.txt", "x2.txt", "pack.zip/in/z.md"]  # x1 listed once
    assert members[-1].data == b"zed"


def test_missing_inputs_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="was not found"):
        list(expand_inputs([str(tmp_path / "nope.txt")]))
    with pytest.raises(CorpusError, match="matches no file"):
        list(expand_inputs([str(tmp_path / "*.nothing")]))
    (tmp_path / "empty").mkdir()
    write(tmp_path / "empty" / ".hidden", "x")
    with pytest.raises(CorpusError, match="no files"):
        list(expand_inputs([str(tmp_path / "empty")]))
    with pytest.raises(CorpusError, match="no input"):
        list_sources([])


def test_zip_with_escaping_member_refused_as_input(tmp_path: Path) -> None:
    zipped = write(tmp_path / "bad.zip", make_zip({"ok.txt": b"ok", "../../evil.txt": b"x"}))
    with pytest.raises(CorpusError, match=r"bad\.zip .*leaves the archive"):
        list_sources([str(zipped)])
    assert not (tmp_path.parent / "evil.txt").exists()


def test_sources_are_listed_without_reading(tmp_path: Path) -> None:
    write(tmp_path / "big.txt", "x" * 5000)
    sources = list_sources([str(tmp_path)])
    assert [(s.name, s.size) for s in sources] == [(f"{tmp_path.name}/big.txt", 5000)]
    with pytest.raises(CorpusError, match="over the"):
        read_source(sources[0], CorpusLimits(max_file_bytes=100))
    with pytest.raises(CorpusError, match="cannot be read"):
        list(expand_inputs([unreadable_file(tmp_path)]))


def test_doc_id_is_a_content_hash() -> None:
    assert doc_id(b"abc") == doc_id(b"abc") != doc_id(b"abd")
    assert len(doc_id(b"abc")) == 16
