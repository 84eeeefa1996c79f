"""Tables cut between rows with their header (Markdown, HTML, DOCX, CSV and TSV), the
words unit on Chinese, Japanese and Korean, and full-width sentence ends."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chunking
from chunking import Chunk
from chunking.analysis.recommend import recommend
from chunking.analysis.report import inside_sentence, make_report
from chunking.cli import main
from chunking.documents.io import read_bytes
from chunking.engine.packing import RunSizes
from chunking.engine.sections import TABLE_ROW, TABLE_ROW_OVER
from chunking.engine.spans import sentence_spans
from chunking.evaluation.context import embedded_text, header_contexts, with_context
from chunking.output.export import chunk_records, to_csv, to_jsonl
from chunking.splitters.table import dialect_for, record_spans
from chunking.units import WordSizer, get_sizer
from tests.test_invariants import CJK, delimited_tables, markdown_tables

#: (unit, size): a limit in every unit that cuts the tables below into several groups.
LIMITS = [("tokens", 80), ("words", 40), ("chars", 300), ("model", 80)]
REGIONS = ["North", "South", "East", "West"]
MD_HEADER = "| Id | Region | Amount | Note |\n|---|---|---|---|"


def md_rows(n: int, newline: str = "\n") -> str:
    return newline.join(
        f"| {i} | {REGIONS[i % 4]} | {i * 37 % 1000} | item \\| {i} |" for i in range(1, n + 1)
    )


def sales_markdown(n: int = 60) -> str:
    return (
        "# Sales\n\nIntro paragraph.\n\nTable 1: Sales by region\n\n"
        f"{MD_HEADER}\n{md_rows(n)}\n\nAfter the table.\n"
    )


def groups(chunks: Sequence[Chunk]) -> list[Chunk]:
    return [c for c in chunks if "table_group" in c.metadata]


def check_groups(text: str, chunks: Sequence[Chunk], header: str, unit: str, size: int) -> None:
    """Whole-row groups of one table: exact slices, consecutive rows, the header carried
    by every group after the first, and the limit on what a model reads."""
    sizer = get_sizer(unit)
    found = groups(chunks)
    assert len(found) >= 3
    assert [c.metadata["table_group"] for c in found] == list(range(1, len(found) + 1))
    assert {c.metadata["table_groups"] for c in found} == {len(found)}
    rows = [c.metadata["table_rows"] for c in found]
    assert rows[0][0] == 1
    assert all(b[0] == a[1] + 1 for a, b in pairwise(rows))
    assert [c.metadata["boundary"] for c in found] == [TABLE_ROW] * (len(found) - 1) + ["table end"]
    assert "context" not in found[0].metadata and header in found[0].embedding_text
    for c in found:
        assert text[c.start : c.end] == c.text
        assert c.size == sizer.size(c.embedding_text) <= size
        assert not c.flags
    for c in found[1:]:
        assert c.metadata["context"] == header
        assert c.embedding_text == f"{header}\n{c.metadata.get('visible_text', c.text)}"
        assert header not in c.text


# --- Markdown ------------------------------------------------------------------------


@pytest.mark.parametrize(("unit", "size"), LIMITS)
def test_a_markdown_table_over_the_limit_becomes_whole_row_groups(unit: str, size: int) -> None:
    text = sales_markdown()
    chunks = chunking.chunk(text, "markdown", size=size, unit=unit)
    check_groups(text, chunks, MD_HEADER, unit, size)
    rows = set(md_rows(60).split("\n"))
    for c in groups(chunks)[1:]:
        assert set(c.text.split("\n")) <= rows  # whole rows, nothing else
    assert all(c.metadata["header_path"] == ["Sales"] for c in groups(chunks))


def test_the_caption_goes_with_the_first_group_only() -> None:
    text = sales_markdown()
    chunks = chunking.chunk(text, "markdown", size=80, unit="tokens")
    first, *rest = groups(chunks)
    # the heading and intro before the caption join the first group too (they fit)
    assert first.text.startswith(
        "# Sales\n\nIntro paragraph.\n\nTable 1: Sales by region\n\n| Id |"
    )
    assert not any("Table 1" in c.embedding_text for c in rest)
    assert not any("Table 1" in c.text for c in chunks if c is not first)


def test_a_markdown_table_that_fits_stays_whole_with_its_caption() -> None:
    text = sales_markdown(5)
    chunks = chunking.chunk(text, "markdown", size=800, unit="tokens")
    table = text[text.index("Table 1") : text.index("\n\nAfter")]
    assert [c.text for c in chunks] == [text.strip()]  # one section that fits
    chunks = chunking.chunk(text, "markdown", size=100, unit="tokens")
    assert any(table in c.text for c in chunks)  # 96 tokens with its caption
    chunks = chunking.chunk(text, "markdown", size=90, unit="tokens")
    assert any(table[table.index("| Id") :] in c.text for c in chunks)  # 88 without
    assert not any(table in c.text for c in chunks)
    assert not groups(chunks)


def test_two_header_rows_and_crlf_are_carried_verbatim() -> None:
    header = "| Region | Sales |  |\r\n|  | 2023 | 2024 |\r\n|---|---|---|"
    rows = "\r\n".join(f"| {REGIONS[i % 4]} {i} | {i * 3} | {i * 5} |" for i in range(80))
    text = f"Intro.\r\n\r\n{header}\r\n{rows}\r\n"
    chunks = chunking.chunk(text, "markdown", size=60, unit="tokens")
    check_groups(text, chunks, header, "tokens", 60)


def test_a_pipe_table_without_a_delimiter_line_carries_its_first_line() -> None:
    text = "| a | b |\n" + "\n".join(f"| {i} | {i * i} |" for i in range(60))
    chunks = chunking.chunk(text, "markdown", size=20, unit="words")
    check_groups(text, chunks, "| a | b |", "words", 20)


# --- HTML ----------------------------------------------------------------------------

HTML_HEADER = (
    "<thead><tr><th rowspan=2>Id</th><th colspan=2>Figures</th></tr>\n"
    "<tr><th>Region</th><th>Amount</th></tr></thead>"
)


def sales_html(n: int = 80, head: str = HTML_HEADER) -> str:
    rows = "\n".join(
        f"<tr><td>{i}</td><td>{REGIONS[i % 4]}</td><td>{i * 37 % 1000}</td></tr>" for i in range(n)
    )
    return (
        "<html><body><h1>Sales</h1><p>Intro.</p>\n<table><caption>Table 1: sales</caption>\n"
        f"{head}\n<tbody>\n{rows}\n</tbody></table><p>After.</p></body></html>"
    )


@pytest.mark.parametrize(("unit", "size"), [*LIMITS[:3], ("model", 160)])
def test_an_html_table_is_cut_between_rows_with_its_thead(unit: str, size: int) -> None:
    text = sales_html()
    chunks = chunking.chunk(text, "html", size=size, unit=unit, visible_text=False)
    check_groups(text, chunks, HTML_HEADER, unit, size)
    for c in groups(chunks)[1:]:
        assert c.text.startswith("<tr>") and c.text.count("<tr>") == c.text.count("</tr>")
    assert "<caption>" in groups(chunks)[0].text


def test_in_visible_text_mode_the_context_is_the_header_cells_text() -> None:
    text = sales_html()
    chunks = chunking.chunk(text, "html", size=60, unit="tokens")
    check_groups(text, chunks, "Id\nFigures\nRegion\nAmount", "tokens", 60)


def test_leading_th_rows_and_the_rows_a_rowspan_reaches_are_the_header() -> None:
    head = "<tr><th rowspan=2>Id</th><th>Figures</th></tr>\n<tr><td>sub</td></tr>"
    text = sales_html(head=head)
    chunks = chunking.chunk(text, "html", size=80, unit="tokens", visible_text=False)
    check_groups(text, chunks, head, "tokens", 80)


def test_a_nested_table_stays_inside_its_row() -> None:
    inner = "<table><tr><td>in 1</td></tr><tr><td>in 2</td></tr></table>"
    rows = "".join(f"<tr><td>{i}</td><td>{inner}</td></tr>" for i in range(30))
    text = f"<table><tr><th>n</th><th>t</th></tr>{rows}</table>"
    chunks = chunking.chunk(text, "html", size=40, unit="tokens")
    for c in groups(chunks)[1:]:
        assert c.text.startswith("<tr><td>") and c.text.endswith(("</tr>", "</table>"))
        assert c.text.count("<table>") == c.text.count("</table>") - c.text.endswith("</table>")


# --- DOCX ----------------------------------------------------------------------------


def _docx_table(rows: int) -> bytes:
    import docx
    from docx.oxml import OxmlElement

    document = docx.Document()
    document.add_paragraph("Quarterly figures.")
    document.add_paragraph("Table 1: Sales by region", style="Caption")
    table = document.add_table(rows=rows + 2, cols=3)
    for r, row in enumerate(table.rows[2:]):
        for c, cell in enumerate(row.cells):
            cell.text = f"{REGIONS[r % 4]} {r}" if c == 0 else str(r * (c + 3))
    table.cell(0, 0).merge(table.cell(1, 0)).text = "Region"  # a header over two rows
    table.cell(0, 1).merge(table.cell(0, 2)).text = "Sales | units"
    table.cell(1, 1).text = "2023"
    table.cell(1, 2).text = "2024\nforecast"
    table.rows[0]._tr.get_or_add_trPr().append(OxmlElement("w:tblHeader"))
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_a_docx_table_becomes_a_markdown_table_cut_with_its_header() -> None:
    doc = read_bytes(_docx_table(60), "figures.docx")
    header = "| Region | Sales \\| units |  |\n|  | 2023 | 2024 forecast |\n| --- | --- | --- |"
    assert f"Table 1: Sales by region\n\n{header}\n| North 0 | 0 | 0 |" in doc.text
    chunks = chunking.chunk(doc.text, "markdown", size=50, unit="tokens")
    check_groups(doc.text, chunks, header, "tokens", 50)
    assert groups(chunks)[0].text.startswith("Table 1: Sales by region")


# --- CSV and TSV ---------------------------------------------------------------------


def sales_csv(n: int = 120, delimiter: str = ",", newline: str = "\r\n") -> str:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator=newline)
    writer.writerow(["id", "region", "amount", "note"])
    for i in range(n):
        note = f"two\nlines, {i}" if i % 9 == 0 else f"plain {i}"
        writer.writerow([i, REGIONS[i % 4], i * 37 % 1000, note])
    return buffer.getvalue()


@pytest.mark.parametrize(("unit", "size"), LIMITS)
def test_a_csv_becomes_row_groups_with_its_header_line(unit: str, size: int) -> None:
    text = sales_csv()
    doc = read_bytes(text.encode(), "sales.csv")
    assert doc.kind == "csv"
    chunks = chunking.chunk(doc.text, "table", size=size, unit=unit)
    check_groups(doc.text, chunks, "id,region,amount,note", unit, size)
    records = {a for a, _ in record_spans(text, dialect_for(text))}
    assert all(c.start in records for c in chunks)


def test_a_quoted_line_break_stays_in_its_row() -> None:
    text = sales_csv()
    spans = record_spans(text, dialect_for(text))
    assert len(spans) == 121  # the header and 120 rows, 14 of them over two lines
    assert text[slice(*spans[1])] == '0,North,0,"two\nlines, 0"'
    chunks = chunking.chunk(text, "table", size=40, unit="tokens")
    for c in groups(chunks):
        assert c.text.count('"') % 2 == 0  # no quoted cell is cut
        assert list(csv.reader(io.StringIO(c.text, newline="")))[-1][0].isdigit()


def test_tsv_and_a_table_in_a_txt_file_are_detected() -> None:
    tsv = sales_csv(delimiter="\t", newline="\n")
    assert read_bytes(tsv.encode(), "sales.tsv").kind == "csv"
    assert read_bytes(sales_csv().encode(), "export.txt").kind == "csv"
    assert read_bytes(sales_csv().encode(), "export").kind == "csv"
    prose = "Hello, world, again.\nA line, with commas, here.\nAnd a third, one, too.\n"
    assert read_bytes(prose.encode(), "notes.txt").kind == "text"  # no header, ragged
    assert read_bytes(b'{"a": 1, "b": 2, "c": 3}\n' * 5, "rows.txt").kind == "text"
    chunks = chunking.chunk(tsv, "table", size=40, unit="tokens")
    check_groups(tsv, chunks, "id\tregion\tamount\tnote", "tokens", 40)


def test_no_sample_document_is_taken_for_a_table() -> None:
    samples = Path(__file__).parent.parent / "sample_docs"
    texts = [p for p in samples.iterdir() if p.suffix in (".txt", ".md", ".json", "")]
    assert texts
    for path in texts:
        assert read_bytes(path.read_bytes(), path.name).kind != "csv", path.name


def test_several_header_rows_and_a_named_delimiter() -> None:
    text = "region;sales\n;2024\n" + "".join(f"r{i};{i}\n" for i in range(100))
    chunks = chunking.chunk(
        text, "table", size=30, unit="words", header_rows=2, delimiter="semicolon"
    )
    check_groups(text, chunks, "region;sales\n;2024", "words", 30)


def test_a_row_over_the_limit_is_flagged_not_cut() -> None:
    long_note = " ".join(["word"] * 80)
    text = "id,note\n" + "".join(f"{i},short {i}\n" for i in range(20)) + f"99,{long_note}\n"
    text += "".join(f"{i},short {i}\n" for i in range(20, 40))
    chunks = chunking.chunk(text, "table", size=30, unit="words")
    over = [c for c in chunks if c.size > 30]
    assert len(over) == 1 and over[0].flags == (TABLE_ROW_OVER,)
    assert over[0].text == f"99,{long_note}"  # the whole row, alone
    assert over[0].metadata["context"] == "id,note"
    assert all(c.size <= 30 for c in chunks if c is not over[0])


def test_the_recommender_suggests_the_table_strategy_for_csv() -> None:
    assert recommend(sales_csv(), "sales.csv").strategy == "table"
    assert recommend(sales_csv(delimiter="\t"), "export.txt").strategy == "table"
    assert recommend(sales_csv(delimiter="\t"), "export.txt").kind == "csv"
    assert recommend("Plain prose. Another sentence.\n\nMore prose.", "a.txt").strategy != "table"


def test_the_cli_splits_a_csv_as_a_table_and_exports_the_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sales.csv"
    path.write_text(sales_csv(), encoding="utf-8", newline="")
    assert main(["split", str(path), "--size", "60", "--unit", "tokens"]) == 0
    out, err = capsys.readouterr()
    assert "'table'" in err
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) > 3
    assert all(r["metadata"]["context"] == "id,region,amount,note" for r in records[1:])
    assert all(r["metadata"]["table_rows"] for r in records)


# --- what the rest of the project does with table chunks ------------------------------


def test_exports_carry_the_context_in_every_record() -> None:
    chunks = chunking.chunk(sales_csv(), "table", size=60, unit="tokens")
    records = chunk_records(chunks)
    assert [r["metadata"].get("context") for r in records[1:]] == ["id,region,amount,note"] * (
        len(records) - 1
    )
    lines = to_jsonl(records).splitlines()
    assert json.loads(lines[1])["metadata"]["context"] == "id,region,amount,note"
    rows = list(csv.DictReader(io.StringIO(to_csv(records), newline="")))
    assert json.loads(rows[-1]["metadata"])["context"] == "id,region,amount,note"


def test_a_table_cut_into_groups_is_not_a_mid_sentence_warning() -> None:
    text = sales_markdown()
    doc = read_bytes(text.encode(), "sales.md")
    config = chunking.Config.create("markdown", size=80, unit="tokens")
    chunks = chunking.run(text, config)
    found = groups(chunks)
    sentences = sentence_spans(text)
    assert any(inside_sentence(sentences, c.end) for c in found[:-1])  # the segmenter's view
    report = make_report(doc, config, chunks)
    warned = {i for w in report.warnings if w.kind == "mid_sentence" for i in w.chunks}
    assert not warned & {c.index for c in found}


def test_the_headers_context_keeps_the_table_header() -> None:
    text = sales_markdown()
    chunks = chunking.chunk(text, "markdown", size=80, unit="tokens")
    contexts = header_contexts(text, chunks, "sales.md")
    found = {c.index for c in groups(chunks)}
    assert contexts[0] == "sales.md > Sales"
    for c, context in zip(chunks, contexts, strict=True):
        if c.index in found and c.metadata.get("context"):
            assert context == f"sales.md > Sales\n{MD_HEADER}"
    contextual = with_context(chunks, contexts)
    later = [c for c in contextual if c.index in found][1]
    assert embedded_text(later).startswith(f"sales.md > Sales\n{MD_HEADER}\n\n| ")


def test_wordpieces_and_truncation_count_the_header_a_model_reads() -> None:
    text = sales_markdown()
    config = chunking.Config.create("markdown", size=200, unit="tokens")
    chunks = chunking.run(text, config)
    report = make_report(read_bytes(text.encode(), "sales.md"), config, chunks)
    model = get_sizer("model")
    assert report.sizes["model"] == [model.size(c.embedding_text) for c in chunks]


# --- generated tables ----------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(text=markdown_tables(), size=st.integers(5, 60), unit=st.sampled_from(["words", "tokens"]))
def test_generated_markdown_tables_are_cut_at_line_starts(text: str, size: int, unit: str) -> None:
    chunks = chunking.chunk(text, "markdown", size=size, unit=unit)
    sizer = get_sizer(unit)
    for c in groups(chunks):
        assert c.start == 0 or text[c.start - 1] == "\n"
        assert c.size == sizer.size(c.embedding_text)
        assert c.size <= size or c.flags == (TABLE_ROW_OVER,)
        if c.metadata["table_group"] > 1:
            assert c.metadata["context"].rstrip().endswith("---|")


@settings(max_examples=150, deadline=None)
@given(
    text=delimited_tables().filter(str.strip),
    size=st.integers(3, 60),
    unit=st.sampled_from(["chars", "tokens"]),
)
def test_generated_csv_is_cut_at_record_starts(text: str, size: int, unit: str) -> None:
    chunks = chunking.chunk(text, "table", size=size, unit=unit)
    spans = record_spans(text, dialect_for(text))
    starts = {a for a, _ in spans}
    for c in groups(chunks):
        assert c.start in starts
        assert c.size <= size or c.flags == (TABLE_ROW_OVER,)
        if c.metadata["table_group"] > 1 and c.metadata.get("context"):
            assert c.metadata["context"] == text[slice(*spans[0])]


# --- words and sentences in Chinese, Japanese and Korean -----------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("今天天气很好", 6),
        ("日本語の文です", 7),
        ("カタカナ と ひらがな", 9),
        ("안녕하세요 세계", 7),
        ("中文 and English", 4),
        ("abc中文def", 4),
        ("plain words only", 3),
        ("Élève à l'école", 3),
    ],
)
def test_the_words_unit_counts_each_ideograph_kana_and_syllable(text: str, words: int) -> None:
    assert get_sizer("words").size(text) == words


def test_a_words_limit_holds_on_chinese_text() -> None:
    text = "今天天气很好。我们去公园吧！你觉得呢？" * 20
    for strategy in ("recursive", "sentence", "fixed"):
        chunks = chunking.chunk(text, strategy, size=30, overlap=0, unit="words")
        assert len(chunks) > 10
        assert all(c.size == len(c.text) <= 30 for c in chunks)  # one word a character


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab .\n\t中文かカ한。，ｶ", max_size=40), st.data())
def test_word_joins_are_exact_with_ideographs(text: str, data: st.DataObject) -> None:
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=8))))
    spans = [(a, b) for a, b in pairwise([0, *cuts, len(text)]) if b > a]
    sizer = WordSizer()
    runs = RunSizes.of(text, spans, sizer)
    for i in range(len(spans)):
        for j in range(i, len(spans)):
            assert runs.estimate(i, j) == sizer.size(text[spans[i][0] : spans[j][1]])


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (
            "今天天气很好。我们去公园吧！你觉得呢？",
            ["今天天气很好。", "我们去公园吧！", "你觉得呢？"],
        ),
        ("彼は来た！？本当だ。", ["彼は来た！？", "本当だ。"]),
        ("全角．次の文．値は３．１４です。", ["全角．", "次の文．", "値は３．１４です。"]),
        ("半角｡次の文｡", ["半角｡", "次の文｡"]),
        ("他说：“你好！”然后走了。", ["他说：“你好！”", "然后走了。"]),
    ],
)
def test_sentences_end_at_full_width_marks(text: str, sentences: list[str]) -> None:
    assert [text[a:b] for a, b in sentence_spans(text)] == sentences


@settings(max_examples=200, deadline=None)
@given(CJK)
def test_sentence_spans_of_cjk_text_are_in_order_and_cover_it(text: str) -> None:
    spans = sentence_spans(text)
    assert all(a < b <= c for (a, b), (c, _) in pairwise(spans))
    covered = "".join(text[a:b] for a, b in spans)
    assert "".join(text.split()) == "".join(covered.split())
