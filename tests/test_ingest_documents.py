"""``ragraphs ingest`` of PDF and DOCX files, built here with real writers (fpdf2, python-docx,
pypdf's encryption), into a real Chroma store embedded with MiniLM."""

from __future__ import annotations

import contextlib
import json
import zipfile
from pathlib import Path

import pytest

from ragraphs.cli import main
from ragraphs.errors import InputError
from ragraphs.ingest import read_file
from ragraphs.tools.vectorstore import ChromaCorpus

OKAPI_1 = "The okapi is a giraffid mammal native to the Ituri rainforest of the Congo basin."
OKAPI_2 = "Okapis have striped hindquarters, and they eat leaves, buds and fruit of the understory."
QUOKKA = "The quokka is a small wallaby that lives on Rottnest Island off the coast of Western Australia."
QUOKKA_TABLE = ("Body weight", "2.5 to 5 kilograms")


def write_pdf(path: Path, pages: list[str], title: str | None = None) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 8, text)
    pdf.output(str(path))
    return path


def write_docx(path: Path, heading: str, paragraphs: list[str], table: tuple[str, str] | None = None,
               title: str = "") -> Path:
    import docx

    d = docx.Document()
    d.core_properties.title = title
    if heading:
        d.add_heading(heading, level=1)
    for p in paragraphs:
        d.add_paragraph(p)
    if table:
        t = d.add_table(rows=1, cols=2)
        t.cell(0, 0).text, t.cell(0, 1).text = table
    d.save(str(path))
    return path


def encrypt_pdf(src: Path, dst: Path, password: str) -> Path:
    from pypdf import PdfWriter

    w = PdfWriter(clone_from=str(src))
    w.encrypt(user_password=password, owner_password="owner-" + password, algorithm="RC4-128")
    with open(dst, "wb") as fh:
        w.write(fh)
    return dst


@pytest.fixture
def docs(tmp_path) -> Path:
    """A folder of good, encrypted, empty and corrupt PDF and DOCX files, plus a text file."""
    d = tmp_path / "docs"
    (d / "sub").mkdir(parents=True)
    good_pdf = write_pdf(d / "okapi.pdf", [OKAPI_1, OKAPI_2], title="Okapi facts")
    write_docx(d / "sub" / "quokka.docx", "Quokka notes", [QUOKKA], table=QUOKKA_TABLE)
    (d / "notes.md").write_text("# Notes\n\nThe aye-aye is a lemur of Madagascar that taps on wood to find grubs.\n")
    encrypt_pdf(good_pdf, d / "locked.pdf", "s3cret")
    write_pdf(d / "scan.pdf", [""])  # a page with no text layer
    raw = good_pdf.read_bytes()
    (d / "cut.pdf").write_bytes(raw[: len(raw) // 3])
    (d / "empty.pdf").write_bytes(b"")
    good_docx = (d / "sub" / "quokka.docx").read_bytes()
    (d / "sub" / "cut.docx").write_bytes(good_docx[: len(good_docx) // 2])
    (d / "sub" / "empty.docx").write_bytes(b"")
    # a password-protected Office file is an OLE container, not a zip
    (d / "sub" / "locked.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(1024))
    with zipfile.ZipFile(d / "sub" / "not-word.docx", "w") as z:
        z.writestr("hello.txt", "a zip, but no word/document.xml")
    return d


def test_readers_give_titled_chunks_in_page_order(tmp_path):
    pdf = write_pdf(tmp_path / "okapi.pdf", [OKAPI_1, OKAPI_2], title="Okapi facts")
    # each page chunked on its own, its number in meta (pages were joined, and no passage said its
    # page, until 2026-12-01)
    p, p2 = read_file(str(pdf))
    assert p["title"] == p2["title"] == "Okapi facts" and p["source"] == "corpus"
    assert "Ituri rainforest" in p["text"] and "striped hindquarters" in p2["text"]
    assert (p["meta"]["page"], p2["meta"]["page"]) == (1, 2) and p["meta"]["path"] == str(pdf)
    chunks = read_file(str(write_pdf(tmp_path / "long.pdf", [OKAPI_1 * 12, "", OKAPI_2 * 12])), max_words=60)
    assert len(chunks) > 4 and all(c["title"] == "long" for c in chunks)  # no PDF title: the file name
    assert [c["meta"]["chunk"] for c in chunks] == list(range(len(chunks)))
    pages = [c["meta"]["page"] for c in chunks]
    assert pages == sorted(pages) and set(pages) == {1, 3}  # the blank page 2 gives no passage
    assert all(("Ituri" in c["text"]) != ("striped" in c["text"]) for c in chunks if "Ituri" in c["text"] or "striped" in c["text"])
    (q,) = read_file(str(write_docx(tmp_path / "quokka.docx", "Quokka notes", [QUOKKA], table=QUOKKA_TABLE)))
    assert q["title"] == "quokka" and "Quokka notes" in q["text"] and "Rottnest Island" in q["text"]
    # a DOCX's own title is its passages' title, as a PDF's is (the file name was, until 2026-12-01)
    (t,) = read_file(str(write_docx(tmp_path / "minutes.docx", "", [QUOKKA], title="Board Minutes 2026")))
    assert t["title"] == "Board Minutes 2026" and "title_from" not in t["meta"]
    assert "2.5 to 5 kilograms" in q["text"]  # table cells are text too
    # a PDF without a .pdf name is still read as one
    (tmp_path / "report").write_bytes(pdf.read_bytes())
    assert read_file(str(tmp_path / "report"))[0]["text"] == p["text"]


@pytest.mark.parametrize(
    "name, why",
    [
        ("locked.pdf", "encrypted PDF (needs a password)"),
        ("scan.pdf", "PDF without a text layer"),
        ("cut.pdf", "not a readable PDF (corrupt?)"),
        ("empty.pdf", "empty file"),
        ("sub/cut.docx", "not a readable DOCX (corrupt?)"),
        ("sub/empty.docx", "empty file"),
        ("sub/locked.docx", "encrypted (password-protected) or legacy .doc file"),
        ("sub/not-word.docx", "not a readable DOCX (corrupt?)"),
    ],
)
def test_bad_documents_raise_one_line_errors(docs, name, why):
    with pytest.raises(InputError) as e:
        read_file(str(docs / name))
    msg = str(e.value)
    assert msg.startswith(f"{docs / name}: ") and why in msg and "\n" not in msg


def test_ingest_folder_reports_bad_files_keeps_good_ones_and_is_idempotent(docs, tmp_path, capsys, minilm):
    store = tmp_path / "store"
    argv = ["ingest", str(docs), "--store", str(store), "--json", "--quiet"]
    assert main(argv) == 0
    cap = capsys.readouterr()
    summary = json.loads(cap.out.strip().splitlines()[-1])
    assert summary["files"] == 3 and summary["skipped_files"] == 8
    skipped = [line for line in cap.err.splitlines() if line.startswith("skipped: ")]
    assert len(skipped) == 8 and "Traceback" not in cap.err
    for name in ("locked.pdf", "scan.pdf", "cut.pdf", "empty.pdf", "sub/cut.docx", "sub/empty.docx",
                 "sub/locked.docx", "sub/not-word.docx"):
        assert sum(line.startswith(f"skipped: {docs / name}: ") for line in skipped) == 1, name
    assert summary["added"] == summary["passages"] == summary["store_total"] == 4  # okapi.pdf: a passage a page

    corpus = ChromaCorpus(str(store), embeddings=minilm, create=False)
    hits = corpus.search("Which rainforest is the okapi native to?", 1)
    assert hits[0]["title"] == "Okapi facts" and "Ituri rainforest" in hits[0]["text"]
    hits = corpus.search("Where do quokkas live?", 1)
    assert hits[0]["title"] == "quokka" and "Rottnest Island" in hits[0]["text"]

    # the same folder again, and a single file: nothing new
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["added"] == 0 and again["already_present"] == 4 and again["store_total"] == 4
    assert main(["ingest", str(docs / "okapi.pdf"), "--store", str(store), "--json", "--quiet"]) == 0
    single = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert single == {**single, "files": 1, "added": 0, "store_total": 4}


def test_only_bad_documents_exit_non_zero(docs, tmp_path, capsys):
    rc = main(["ingest", str(docs / "locked.pdf"), str(docs / "sub" / "cut.docx"), "--store", str(tmp_path / "s"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"skipped: {docs / 'locked.pdf'}: encrypted PDF" in err
    assert f"skipped: {docs / 'sub' / 'cut.docx'}: not a readable DOCX" in err
    # nothing to store: no store is left behind (an empty one was, until 2026-12-02), down to the folders made for it
    assert not (tmp_path / "s").exists()
    assert main(["ingest", str(docs / "locked.pdf"), "--store", str(tmp_path / "new" / "store"), "--quiet", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["store_total"] == 0 and not (tmp_path / "new").exists()
    (tmp_path / "kept").mkdir()  # an empty folder the user made stays, empty (a store was left in it until 2026-12-03)
    assert main(["ingest", str(docs / "locked.pdf"), "--store", str(tmp_path / "kept"), "--quiet"]) == 1
    assert f"no store made at {tmp_path / 'kept'}" in capsys.readouterr().out and (tmp_path / "kept").is_dir()
    assert not list((tmp_path / "kept").iterdir())
    (tmp_path / "kept" / "mine.txt").write_text("the user's")  # a folder holding anything else: left as it is
    main(["ingest", str(docs / "locked.pdf"), "--store", str(tmp_path / "kept"), "--quiet"])
    assert "no store made" not in capsys.readouterr().out and [p.name for p in (tmp_path / "kept").iterdir()] == ["mine.txt"]


def test_a_folder_walk_leaves_out_stores_environments_and_caches(tmp_path, capsys, minilm):
    """`ragraphs ingest .` in a project folder: its own store, a virtual environment and the
    bytecode and package caches are reported once each and never read; the notes are ingested."""
    project = tmp_path / "project"
    (project / "notes").mkdir(parents=True)
    (project / "notes" / "okapi.md").write_text("# Okapi\n\nThe okapi lives in the Ituri rainforest of Congo.\n")
    (project / "venv" / "lib").mkdir(parents=True)
    (project / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (project / "venv" / "lib" / "README.txt").write_text("a package's read-me, not the user's notes")
    (project / "notes" / "__pycache__").mkdir()
    (project / "notes" / "__pycache__" / "x.txt").write_text("cached")
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "README.md").write_text("# pkg\n\na JavaScript package")
    store = project / "store"
    argv = ["ingest", str(project), "--store", str(store), "--json", "--quiet"]
    assert main(argv) == 0  # the store is created before the walk, so the walk meets it
    cap = capsys.readouterr()
    summary = json.loads(cap.out.strip().splitlines()[-1])
    assert summary == {**summary, "files": 1, "skipped_files": 0, "skipped_dirs": 4, "store_total": 1}
    skipped = sorted(line for line in cap.err.splitlines() if line.startswith("skipped: "))
    assert skipped == sorted([
        f"skipped: {project / 'node_modules'}/: JavaScript packages, not documents",
        f"skipped: {project / 'notes' / '__pycache__'}/: Python's bytecode cache, not documents",
        f"skipped: {store}/: a Chroma store (ragraphs ingest writes there), not documents",
        f"skipped: {project / 'venv'}/: a Python virtual environment, not documents",
    ])
    corpus = ChromaCorpus(str(store), embeddings=minilm, create=False)
    assert [p["title"] for p in corpus.search("Where does the okapi live?", 5)] == ["Okapi"]

    # named on its own, the store is refused the same way, and nothing ingested is an error
    assert main(["ingest", str(store), "--store", str(tmp_path / "other"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"skipped: {store}/: a Chroma store" in err and "Traceback" not in err


@pytest.fixture
def site(tmp_path):
    """A web server on 127.0.0.1: an HTML page, a plain-text page, a PDF, a redirect, an image,
    a missing page and a PDF that is no PDF."""
    pdf = write_pdf(tmp_path / "quokka.pdf", [QUOKKA], title="Quokka facts").read_bytes()
    html = (f"<!doctype html><html><head><title>Okapi - Wildlife notes</title><script>var s='SCRIPT-TEXT';</script>"
            f"</head><body><nav>Home | NAV-TEXT</nav><article><h1>Okapi</h1><p>{OKAPI_1}</p><p>{OKAPI_2}</p>"
            "</article></body></html>").encode()
    pages = {
        "/wiki/Okapi": (200, "text/html; charset=utf-8", html),
        "/notes.txt": (200, "text/plain; charset=utf-8", b"Rottnest Island lies off Perth.\n\nQuokkas live there."),
        "/README.md": (200, "text/markdown", b"# Quokka habitat\n\nQuokkas shelter in dense scrub on Rottnest Island."),
        "/papers/quokka.pdf": (200, "application/pdf", pdf),
        "/logo.png": (200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64),
        "/broken.pdf": (200, "application/pdf", b"%PDF-1.4 cut short"),
        # no charset in the header: the page's <meta> names it
        "/news": (200, "text/html", '<html><head><meta charset="windows-1251"><title>Новости</title></head>'
                                    '<body><p>Мост через реку Зандор открыт.</p></body></html>'.encode("cp1251")),
    }

    pages["/old-okapi"] = (301, None, "/wiki/Okapi")
    with _serving(pages) as base:
        yield base


def test_a_page_whose_charset_only_its_meta_names(site):
    """A server that sends ``text/html`` without a charset: the page is read in the charset its
    ``<meta>`` declares (windows-1251 here), not as UTF-8 or cp1252."""
    from ragraphs.ingest import read_url

    (p,) = read_url(f"{site}/news")
    assert p["title"] == "Новости" and "Мост через реку Зандор открыт." in p["text"]


def test_ingest_pages_by_address_html_text_and_pdf(site, tmp_path, capsys, minilm):
    store = tmp_path / "store"
    good = [f"{site}/old-okapi", f"{site}/notes.txt", f"{site}/papers/quokka.pdf", f"{site}/README.md"]
    bad = [f"{site}/logo.png", f"{site}/gone", f"{site}/broken.pdf", "http://127.0.0.1:9/nothing-listens"]
    assert main(["ingest", *good, *bad, "--store", str(store), "--json", "--quiet"]) == 0
    cap = capsys.readouterr()
    summary = json.loads(cap.out.strip().splitlines()[-1])
    assert summary == {**summary, "files": 4, "skipped_files": 4, "store_total": summary["added"]} and summary["added"] >= 4
    skipped = [line for line in cap.err.splitlines() if line.startswith("skipped: ")]
    assert f"skipped: {site}/logo.png: not a page ingest reads (image/png): HTML, text or PDF" in skipped
    assert f"skipped: {site}/gone: HTTP 404" in skipped
    assert any(line.startswith(f"skipped: {site}/broken.pdf: not a readable PDF") for line in skipped)
    assert any(line.startswith("skipped: http://127.0.0.1:9/nothing-listens: could not be fetched: ") for line in skipped)
    assert "Traceback" not in cap.err

    corpus = ChromaCorpus(str(store), embeddings=minilm, create=False)
    okapi = corpus.search("Which rainforest is the okapi native to?", 1)[0]
    # the page's title and text, read as an HTML file is, from the address the redirect led to
    assert okapi["title"] == "Okapi - Wildlife notes" and "Ituri rainforest" in okapi["text"]
    assert "SCRIPT-TEXT" not in okapi["text"]
    assert okapi["meta"]["url"] == f"{site}/wiki/Okapi"
    quokka = corpus.search("Where do quokkas live?", 3)
    assert {p["title"] for p in quokka} == {"Quokka facts", "notes.txt", "Quokka habitat"}
    assert any("Rottnest Island" in p["text"] and p["meta"]["url"] == f"{site}/papers/quokka.pdf" for p in quokka)

    # the same pages again: nothing new
    assert main(["ingest", *good, "--store", str(store), "--json", "--quiet"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["added"] == 0 and again["store_total"] == summary["store_total"]

    # --remove by address: the fragment is not part of it; a page read through a redirect is taken out by
    # the address given too (it was not, with a warning, until 2026-12-03), and then nothing is left of it
    assert main(["ingest", "--remove", f"{site}/notes.txt#top", f"{site}/old-okapi", "--store", str(store), "--json"]) == 0
    cap = capsys.readouterr()
    removed = json.loads(cap.out)
    assert removed["by_path"][f"{site}/notes.txt#top"] == 1 and removed["by_path"][f"{site}/old-okapi"] >= 1
    assert removed["store_total"] == summary["store_total"] - removed["removed"] and cap.err == ""
    assert main(["ingest", "--remove", f"{site}/wiki/Okapi", "--store", str(store), "--json"]) == 1
    assert capsys.readouterr().err == (f"warning: nothing in the store came from {site}/wiki/Okapi (a page that "
                                       "redirected, ingested before 2026-12-03, is stored under the address it led to)\n")


def test_a_changed_file_ingested_again_replaces_its_earlier_passages(tmp_path, capsys, minilm):
    notes = tmp_path / "notes"
    notes.mkdir()
    okapi, quokka = notes / "okapi.md", notes / "quokka.md"
    okapi.write_text(f"# Okapi\n\n{OKAPI_1}\n")
    quokka.write_text(f"# Quokka\n\n{QUOKKA}\n")
    store = tmp_path / "store"

    def run(*extra):
        assert main(["ingest", *extra, "--store", str(store), "--json", "--quiet"]) == 0
        return json.loads(capsys.readouterr().out.strip().splitlines()[-1])

    first = run(str(notes))
    assert first == {**first, "added": 2, "removed": 0, "store_total": 2}
    second = run(str(notes))  # the same files again: nothing changes
    assert second == {**second, "added": 0, "already_present": 2, "removed": 0, "store_total": 2}
    okapi.write_text(f"# Okapi\n\n{OKAPI_2}\n")  # edited: the old paragraph is gone from the file
    changed = run(str(notes))
    assert changed == {**changed, "added": 1, "removed": 1, "store_total": 2}
    corpus = ChromaCorpus(str(store), embeddings=minilm, create=False)
    texts = {p["title"]: p["text"] for p in corpus.all_passages()}
    assert texts == {"Okapi": f"# Okapi {OKAPI_2}", "Quokka": f"# Quokka {QUOKKA}"}
    hit = corpus.search("What do okapis eat?", 1)[0]
    assert hit["meta"] == {"path": str(okapi), "chunk": 0}  # read back from the store, absolute
    # the file named alone, by a relative path, is the same file
    okapi.write_text(f"# Okapi\n\n{OKAPI_1}\n")
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        again = run("notes/okapi.md")
    finally:
        os.chdir(cwd)
    assert again == {**again, "added": 1, "removed": 1, "store_total": 2}
    # --keep-old keeps the earlier version; a file with no text now keeps what it had
    okapi.write_text(f"# Okapi\n\n{OKAPI_2}\n")
    kept = run(str(okapi), "--keep-old")
    assert kept == {**kept, "added": 1, "removed": 0, "store_total": 3}
    quokka.write_text("")
    emptied = run(str(notes))
    assert emptied == {**emptied, "removed": 1, "store_total": 2}  # the okapi's older version; the quokka stays
    assert {p["title"] for p in corpus.all_passages()} == {"Okapi", "Quokka"}


def notes_and_other(tmp_path: Path) -> tuple[Path, Path]:
    """A folder ``notes`` (the okapi, and the quokka in ``notes/old``) and a file ``other.md`` beside it."""
    notes = tmp_path / "notes"
    (notes / "old").mkdir(parents=True)
    (notes / "okapi.md").write_text(f"# Okapi\n\n{OKAPI_1}\n")
    (notes / "old" / "quokka.md").write_text(f"# Quokka\n\n{QUOKKA}\n")
    other = tmp_path / "other.md"
    other.write_text(f"# Okapi food\n\n{OKAPI_2}\n")
    return notes, other


def test_sync_removes_the_passages_of_files_gone_from_the_folder(tmp_path, capsys, minilm):
    notes, other = notes_and_other(tmp_path)
    store = tmp_path / "store"

    def run(*extra):
        assert main(["ingest", *extra, "--store", str(store), "--json", "--quiet"]) == 0
        return json.loads(capsys.readouterr().out.strip().splitlines()[-1])

    assert run(str(notes), str(other))["store_total"] == 3
    (notes / "old" / "quokka.md").unlink()
    kept = run(str(notes))  # without --sync, a deleted file's passages stay
    assert kept == {**kept, "removed_gone": 0, "store_total": 3}
    synced = run(str(notes), "--sync")
    assert synced == {**synced, "removed_gone": 1, "store_total": 2}
    corpus = ChromaCorpus(str(store), embeddings=minilm, create=False)
    # the file outside the folder is not the folder's to remove
    assert {p["title"] for p in corpus.all_passages()} == {"Okapi", "Okapi food"}
    # a hidden file named on its own stays while it is there (removed as "gone" until 2026-12-01);
    # a file in a hidden folder is one the walk leaves out: removed
    (notes / ".private.md").write_text("# Private\n\nThe okapi keeper's notes.\n")
    (notes / ".drafts").mkdir()
    (notes / ".drafts" / "draft.md").write_text("# Draft\n\nAn okapi draft.\n")
    assert run(str(notes), str(notes / ".private.md"), str(notes / ".drafts" / "draft.md"))["added"] == 2
    synced = run(str(notes), "--sync")
    assert synced == {**synced, "removed_gone": 1, "store_total": 3}
    assert {p["title"] for p in ChromaCorpus(str(store), embeddings=minilm, create=False).all_passages()} == {
        "Okapi", "Okapi food", "Private"}


def test_the_same_text_in_two_files_is_each_file_own(tmp_path, capsys, minilm):
    # one shared id used to be removed with the first file's next version, or with it gone
    for d in ("v1", "v2"):
        (tmp_path / "docs" / d).mkdir(parents=True)
        (tmp_path / "docs" / d / "readme.txt").write_text(OKAPI_1)
    store = tmp_path / "store"

    def run(*extra):
        assert main(["ingest", *extra, "--store", str(store), "--json", "--quiet"]) == 0
        return json.loads(capsys.readouterr().out.strip().splitlines()[-1])

    assert run(str(tmp_path / "docs"))["store_total"] == 2
    (tmp_path / "docs" / "v1" / "readme.txt").write_text(OKAPI_2)
    changed = run(str(tmp_path / "docs" / "v1"))
    assert changed == {**changed, "added": 1, "removed": 1, "store_total": 2}
    corpus = ChromaCorpus(str(store), embeddings=minilm, create=False)
    by_path = {p["meta"]["path"]: p["text"] for p in corpus.all_passages()}
    assert by_path == {str(tmp_path / "docs" / "v1" / "readme.txt"): OKAPI_2,
                       str(tmp_path / "docs" / "v2" / "readme.txt"): OKAPI_1}
    (tmp_path / "docs" / "v1" / "readme.txt").unlink()
    synced = run(str(tmp_path / "docs"), "--sync")
    assert synced == {**synced, "removed_gone": 1, "store_total": 1}  # v2's copy stays


def test_damaged_docx_xml_is_one_skipped_line(tmp_path):
    good = write_docx(tmp_path / "good.docx", "Quokka notes", [QUOKKA])
    with zipfile.ZipFile(good) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    bad = tmp_path / "badxml.docx"
    with zipfile.ZipFile(bad, "w") as z:
        for n, data in parts.items():
            z.writestr(n, data[: len(data) // 2] if n == "word/document.xml" else data)
    with pytest.raises(InputError, match="not a readable DOCX"):
        read_file(str(bad))


def test_a_docx_whose_text_unpacks_past_the_size_cap_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """A DOCX zip bomb: the file is small, its ``word/document.xml`` unpacks to more than the
    cap (200 MiB; 100,000 bytes here, the cap patched down). It is refused from the zip's member
    sizes in the one line ``ingest`` reports as ``skipped: FILE: ...``, naming the file and the
    unpacked size, and nothing is unpacked. **Was a bug** (until
    2026-11-30): the cap was checked on the compressed file only, and docx2txt read the whole
    XML into memory."""
    import ragraphs.ingest as ingest

    good = write_docx(tmp_path / "good.docx", "Quokka notes", [QUOKKA])
    with zipfile.ZipFile(good) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    body = parts["word/document.xml"]
    padding = b"<!--" + b" " * 200_000 + b"-->"  # compresses to a few hundred bytes
    bomb = tmp_path / "docs" / "bomb.docx"
    bomb.parent.mkdir()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in parts.items():
            z.writestr(n, body.replace(b"?>", b"?>" + padding, 1) if n == "word/document.xml" else data)
    write_docx(tmp_path / "docs" / "fine.docx", "Quokka notes", [QUOKKA])
    assert bomb.stat().st_size < 50_000
    monkeypatch.setattr(ingest, "MAX_FILE_BYTES", 100_000)
    with zipfile.ZipFile(bomb) as z:
        unpacked = z.getinfo("word/document.xml").file_size
    loads = []
    from langchain_community.document_loaders import Docx2txtLoader

    real_load = Docx2txtLoader.load
    monkeypatch.setattr(Docx2txtLoader, "load", lambda self: loads.append(self.file_path) or real_load(self))
    with pytest.raises(InputError) as e:
        read_file(str(bomb))
    assert str(e.value) == (f"{bomb}: not a readable DOCX: its text unpacks to {unpacked} bytes, "
                            "over the 100000 bytes limit; split it first")
    assert loads == []
    assert "Rottnest Island" in read_file(str(tmp_path / "docs" / "fine.docx"))[0]["text"]  # under the cap: read


def _damage_first_stream(pdf: Path) -> Path:
    """XOR the first bytes of the file's first stream (fpdf2 writes page 1's compressed text
    there): zlib cannot inflate it, and pypdf only logs that."""
    raw = pdf.read_bytes()
    i = raw.index(b"stream\n") + len(b"stream\n")
    pdf.write_bytes(raw[:i] + bytes(b ^ 0x5A for b in raw[i:i + 8]) + raw[i + 8:])
    return pdf


def test_a_pdf_page_whose_text_stream_is_damaged_is_said_not_taken_for_a_scan(tmp_path, capsys, minilm):
    """One damaged page of two: the other is ingested and a warning names the page; a file
    where no page decodes is "not a readable PDF", not "scanned? run OCR" (until 2026-11-30 the
    page went missing without a word, and such a file read as a scan)."""
    two = _damage_first_stream(write_pdf(tmp_path / "two.pdf", [OKAPI_1, QUOKKA]))
    warned: list[str] = []
    (p,) = read_file(str(two), warn=warned.append)
    assert "Rottnest Island" in p["text"] and "Ituri" not in p["text"]
    assert len(warned) == 1 and warned[0].startswith(f"{two}: 1 of 2 pages gave no text (page 1); pypdf: ")
    one = _damage_first_stream(write_pdf(tmp_path / "one.pdf", [OKAPI_1]))
    with pytest.raises(InputError, match="not a readable PDF \\(corrupt\\?\\): no page's text could be read") as e:
        read_file(str(one))
    assert "OCR" not in str(e.value)
    assert main(["ingest", str(two), "--store", str(tmp_path / "store"), "--json", "--quiet"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out.strip().splitlines()[-1])["added"] == 1
    assert "1 of 2 pages gave no text (page 1)" in cap.err and "Traceback" not in cap.err


def _patch_zip_headers(path: Path, *, method: int | None = None, encrypted: bool = False) -> Path:
    """Set every member's compression method, or its encrypted flag, in the zip's local and
    central headers: what a zip made by another tool (an unknown method) or with a password
    looks like to :mod:`zipfile`."""
    raw = bytearray(path.read_bytes())
    for sig, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        i = raw.find(sig)
        while i >= 0:
            if method is not None:
                raw[i + method_at:i + method_at + 2] = method.to_bytes(2, "little")
            if encrypted:
                raw[i + flag_at] |= 1
            i = raw.find(sig, i + 4)
    path.write_bytes(bytes(raw))
    return path


def _damage_member(path: Path, member: str) -> Path:
    """Flip the first compressed bytes of one member: zlib cannot inflate it."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    raw = bytearray(path.read_bytes())
    name_len, extra_len = (int.from_bytes(raw[info.header_offset + k:info.header_offset + k + 2], "little") for k in (26, 28))
    start = info.header_offset + 30 + name_len + extra_len
    raw[start:start + 6] = bytes(b ^ 0xFF for b in raw[start:start + 6])
    path.write_bytes(bytes(raw))
    return path


def test_a_file_its_library_fails_on_is_one_skipped_line_and_the_folder_goes_on(tmp_path, capsys, minilm):
    """Damage that pypdf and zipfile meet with errors of their own, not their "corrupt file" ones:
    a PDF stream whose filter name is garbled (pypdf: NotImplementedError), a DOCX packed with a
    compression method zipfile lacks (NotImplementedError) or with a password (RuntimeError), and
    a DOCX whose properties part (its title) does not inflate (zlib.error). Each bad file is one
    ``skipped:`` line and the folder's other files are ingested; the DOCX whose title alone is
    damaged is read, titled by its file name. **Was a bug** (until 2026-12-03): each stopped the
    whole ingest with a traceback, and nothing of the folder was stored."""
    folder = tmp_path / "docs"
    folder.mkdir()
    pdf = write_pdf(folder / "filter.pdf", [OKAPI_1])
    pdf.write_bytes(pdf.read_bytes().replace(b"/FlateDecode", b"/FlateDecodX"))
    method = _patch_zip_headers(write_docx(folder / "method.docx", "Quokka notes", [QUOKKA]), method=99)
    locked = _patch_zip_headers(write_docx(folder / "locked.docx", "Quokka notes", [QUOKKA]), encrypted=True)
    titled = _damage_member(write_docx(folder / "titled.docx", "Okapi notes", [OKAPI_2], title="Okapis"),
                            "docProps/core.xml")
    (folder / "good.txt").write_text(OKAPI_2)
    for bad, why in ((pdf, "not a readable PDF \\(corrupt\\?\\): NotImplementedError: Unsupported filter"),
                     (method, "not a readable DOCX \\(corrupt\\?\\): NotImplementedError"),
                     (locked, "encrypted \\(password-protected\\) DOCX")):
        with pytest.raises(InputError, match=why):
            read_file(str(bad))
    (p,) = read_file(str(titled))
    assert p["title"] == "titled" and "striped hindquarters" in p["text"]
    assert main(["ingest", str(folder), "--store", str(tmp_path / "store"), "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out.strip().splitlines()[-1])["added"] == 2, cap.err
    skipped = [line for line in cap.err.splitlines() if "skipped:" in line]
    assert len(skipped) == 3 and all(any(f.name in line for line in skipped) for f in (pdf, method, locked))
    assert "Traceback" not in cap.err


def test_a_reader_failing_on_one_file_skips_that_file_alone(tmp_path, monkeypatch):
    """The last guard of a folder's walk: a reader failing in a way no reader check foresaw (a
    library's own bug) skips that file, named with the error, and the walk goes on. **Was a
    bug** (until 2026-12-03): it stopped the whole walk."""
    import ragraphs.ingest as ingest

    (tmp_path / "a.txt").write_text(OKAPI_1)
    (tmp_path / "b.txt").write_text(QUOKKA)
    real = ingest.read_file

    def read(path, **kw):
        if path.endswith("a.txt"):
            raise RecursionError("maximum recursion depth exceeded")
        return real(path, **kw)

    monkeypatch.setattr(ingest, "read_file", read)
    passages, report = ingest.collect_passages([str(tmp_path)])
    assert [p["meta"]["path"].rsplit("/", 1)[-1] for p in passages] == ["b.txt"]
    assert report.skipped_files == [f"{tmp_path / 'a.txt'}: could not be read (RecursionError: maximum recursion "
                                    "depth exceeded)"]


def test_text_files_of_other_encodings_and_markdown_titles(tmp_path):
    cp = tmp_path / "cafe.txt"
    cp.write_bytes("Le café coûte 3 €. Müller sagt: “Hallo” – gut.".encode("cp1252"))
    assert read_file(str(cp))[0]["text"] == "Le café coûte 3 €. Müller sagt: “Hallo” – gut."
    md = tmp_path / "guide.md"
    md.write_text("---\ntitle: Deployment Guide\n---\n\n```bash\n#!/usr/bin/env bash\n```\n\n# Setup\n\nRun it.\n")
    assert read_file(str(md))[0]["title"] == "Deployment Guide"  # front matter first
    # and the front matter is no text of the passage (it went to the LLM until 2026-11-30)
    assert read_file(str(md))[0]["text"].split()[:2] == ["```bash", "#!/usr/bin/env"]
    unclosed = tmp_path / "rule.md"
    unclosed.write_text("---\nA rule, then text.\n")
    assert read_file(str(unclosed))[0]["text"].split()[:3] == ["---", "A", "rule,"]
    md.write_text("```bash\n#!/usr/bin/env bash\n# a comment\n```\n\n#hashtag line\n\n## Setup ##\n\nRun it.\n")
    assert read_file(str(md))[0]["title"] == "Setup"  # not code, not a hashtag
    # the code keeps its lines (run together until 2026-12-02); a .txt file is prose, as before
    assert read_file(str(md))[0]["text"] == "```bash\n#!/usr/bin/env bash\n# a comment\n```\n#hashtag line ## Setup ## Run it."
    (tmp_path / "guide.txt").write_text(md.read_text())
    assert read_file(str(tmp_path / "guide.txt"))[0]["text"] == "```bash #!/usr/bin/env bash # a comment ``` #hashtag line ## Setup ## Run it."
    # an HTML page's table keeps its rows (trafilatura writes them as pipe rows) and its <pre> code its lines, fenced
    (tmp_path / "units.html").write_text("<html><head><title>Units</title></head><body><article><p>Factors that convert "
                                         "units of length into meters, for every example of this page.</p><table><tr><th>unit"
                                         "</th><th>factor</th></tr><tr><td>km</td><td>1000</td></tr></table><PRE class='py'>"
                                         "<code>def meters(km):\n    return km * 1000</code></PRE></article></body></html>")
    assert read_file(str(tmp_path / "units.html"))[0]["text"].endswith(
        "\n| unit | factor |\n|---|---|\n| km | 1000 |\n```\ndef meters(km):\n    return km * 1000\n```")
    # source code is read by whole lines, its indentation kept (it was cut into "sentences" and run together)
    code = "import math\n\n\ndef area(r):\n    \"\"\"The area. Of a circle.\"\"\"\n    return math.pi * r * r\n"
    (tmp_path / "geometry.py").write_text(code * 40)
    parts = read_file(str(tmp_path / "geometry.py"), max_words=60)  # code: chunks of 2/5 of the words
    assert parts[0]["title"] == "geometry" and parts[0]["text"].startswith(code.rstrip("\n").split("\n\n\n")[0] + "\n\n\ndef area(r):\n    ")
    assert len(parts) > 1 and all(len(p["text"].split()) <= 24 for p in parts) and max(len(p["text"].split()) for p in parts) > 16
    lines = [line for p in parts for line in p["text"].split("\n")]
    assert lines[0] and lines[-1] and [x for x in lines if x] == [x for x in (code * 40).split("\n") if x]  # cut at line ends
    # a CSV file: whole rows, each chunk opening with the header row
    (tmp_path / "towns.csv").write_text("town,country\n" + "".join(f"Town number {i},France\n" for i in range(40)))
    rows = read_file(str(tmp_path / "towns.csv"), max_words=30)
    assert len(rows) > 1 and all(r["text"].startswith("town,country\nTown number ") for r in rows)
    assert [x for r in rows for x in r["text"].split("\n")[1:]] == [f"Town number {i},France" for i in range(40)]


def test_a_jupyter_notebook_is_its_markdown_and_fenced_code(tmp_path):
    """A notebook is read as Markdown: its Markdown cells, each code cell fenced with the
    notebook's language (lines kept), outputs left out; its first heading is the title. Until
    2026-12-02 its raw JSON was the text (``{ "cells": [ { "cell_type": ...``)."""
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
          "cells": [
              {"cell_type": "markdown", "metadata": {}, "source": ["# Okapi notes\n", "\n", OKAPI_1]},
              {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "def habitat():\n    return 'Ituri'",
               "outputs": [{"output_type": "stream", "name": "stdout", "text": ["SECRET OUTPUT\n"]}]},
              {"cell_type": "raw", "metadata": {}, "source": "raw cell"},
              {"cell_type": "code", "metadata": {}, "source": [], "outputs": []}]}
    path = tmp_path / "okapi.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    [passage] = read_file(str(path))
    assert passage["title"] == "Okapi notes"
    assert passage["text"] == f"# Okapi notes {OKAPI_1}\n```python\ndef habitat():\n    return 'Ituri'\n```"
    path.write_text('{"cells": [ {"cell_type": "markdown", "source": "cut')
    with pytest.raises(InputError, match=r"okapi.ipynb: not a readable notebook \(corrupt\?\)"):
        read_file(str(path))


def test_jsonl_rows_without_text_are_named(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"title": "Alpha", "text": "Alpha text."}\n{"title": "Beta", "body": "x"}\n{"text": null}\n')
    said: list[str] = []
    got = read_file(str(rows), warn=said.append)
    assert [p["title"] for p in got] == ["Alpha"]
    assert len(said) == 2 and all("no text" in m for m in said) and "row 2" in said[0]


def test_a_store_built_with_exact_is_read_with_its_own_encoder(tmp_path, capsys):
    (tmp_path / "okapi.md").write_text(f"# Okapi\n\n{OKAPI_1}\n")
    store = tmp_path / "store"
    assert main(["ingest", str(tmp_path / "okapi.md"), "--store", str(store), "--exact", "--quiet"]) == 0
    from ragraphs import Components

    retriever = Components(store_path=str(store), create_collection=False).retriever
    assert retriever.embeddings.name == "all-MiniLM-L6-v2"  # the float model the store was built with
    assert retriever.search("What do okapis eat?", 1)[0]["title"] == "Okapi"


def test_a_chunk_past_the_encoders_window_is_cut_again_until_it_fits(tmp_path, capsys, minilm):
    """Until 2026-12-02 chunks were counted in words only, and ingest warned that a chunk of
    symbols, code or tables ran past the encoder's 256 tokens (its end never embedded): now such
    a chunk is cut again, lines and sentences whole, until it fits; only a title that fills the
    window is left to the warning."""
    from ragraphs.tools.embeddings import past_window
    from ragraphs.tools.vectorstore import embedded_text

    code = tmp_path / "code.md"  # symbols cost a token each: 150 words here are far past 256 tokens
    settings = [f"x{i}=y{i}/z{i};" for i in range(150)]
    table = "\n".join(["| name | value |", "| --- | --- |", *(f"| k{i}.a/b | v{i}-c:d |" for i in range(120))])
    code.write_text("# Config\n\n" + " ".join(settings) + "\n\n" + table + "\n\nThe end of the settings.\n")
    store = tmp_path / "s"
    assert main(["ingest", str(code), "--store", str(store), "--quiet"]) == 0
    assert "run past the encoder" not in capsys.readouterr().err  # "2 of 3 passages (67%)" before
    stored = ChromaCorpus(str(store), embeddings=minilm, create=False).all_passages()
    assert past_window(minilm, [embedded_text(p) for p in stored]) == (0, 256) and len(stored) > 3
    joined = "\n".join(p["text"] for p in stored)
    assert all(s in joined for s in settings) and "The end of the settings." in joined  # nothing lost
    rows = [line for p in stored for line in p["text"].splitlines() if line.startswith("| k")]
    assert set(rows) == {f"| k{i}.a/b | v{i}-c:d |" for i in range(120)}  # each row whole
    # a title or a CSV header row that fills the window by itself cannot be helped by cutting: the
    # text is chunked as without the check (not cut into pieces that all stay past it), and said
    rows_file = tmp_path / "rows.jsonl"
    long_title = " ".join(f"w{i}/" for i in range(200))
    rows_file.write_text(json.dumps({"title": long_title, "text": " ".join(settings)}) + "\n")
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"col{i}/x" for i in range(150)) + "\n" + "\n".join(",".join(str(r) * 150) for r in range(40)) + "\n")
    assert main(["ingest", str(rows_file), str(wide), "--store", str(tmp_path / "t"), "--quiet"]) == 0
    assert "run past the encoder's 256 tokens, and their ends are not embedded: a title or a table's header row fills the " \
           "window by itself" in capsys.readouterr().err
    words_only = read_file(str(rows_file)) + read_file(str(wide))
    stored = ChromaCorpus(str(tmp_path / "t"), embeddings=minilm, create=False).all_passages()
    assert sorted(p["text"] for p in stored) == sorted({p["text"] for p in words_only})  # (equal chunks: one id)


def test_a_chunk_is_cut_to_the_window_of_an_encoder_of_your_own(tmp_path):
    """Embeddings of your own that hold a sentence-transformers model (as ``client``, as
    LangChain's ``HuggingFaceEmbeddings`` do) have their chunks cut to that model's window,
    here 64 tokens; until 2026-12-02 (night) only the packaged MiniLM's window was known, and a
    150-word chunk was embedded by its first 64 tokens only, its end never found."""
    from langchain_core.embeddings import Embeddings
    from sentence_transformers import SentenceTransformer

    from ragraphs.ingest import ingest
    from ragraphs.tools.embeddings import minilm_path, past_window
    from ragraphs.tools.vectorstore import embedded_text

    class Mine(Embeddings):
        def __init__(self):
            self.client = SentenceTransformer(minilm_path(), device="cpu", local_files_only=True)
            self.client.max_seq_length = 64

        def embed_documents(self, texts):
            return self.client.encode(list(texts), normalize_embeddings=True).tolist()

        def embed_query(self, text):
            return self.embed_documents([text])[0]

    sentences = [f"The okapi number {i} lives in the rainforest of the Congo and eats leaves." for i in range(30)]
    (tmp_path / "okapi.md").write_text("# Okapi\n\n" + " ".join(sentences) + "\n")
    mine = Mine()
    corpus = ChromaCorpus(str(tmp_path / "s"), embeddings=mine)
    report = ingest([str(tmp_path / "okapi.md")], corpus, progress=False)
    stored = corpus.all_passages()
    assert not report.warnings and len(stored) > 3  # 150 words make 3 chunks by words alone
    assert past_window(mine, [embedded_text(p) for p in stored]) == (0, 64)
    joined = " ".join(p["text"] for p in stored)
    assert all(s in joined for s in sentences)  # each sentence whole, none lost


def test_a_pretty_printed_json_object_is_one_row(tmp_path):
    doc = tmp_path / "note.json"
    doc.write_text('{\n  "title": "Okapi",\n  "text": "%s"\n}\n' % OKAPI_1)
    said: list[str] = []
    (p,) = read_file(str(doc), warn=said.append)
    assert (p["title"], p["text"], said) == ("Okapi", OKAPI_1, [])


def test_sync_keeps_the_passages_of_a_folder_it_could_not_read(tmp_path, capsys, minilm, monkeypatch):
    """A subfolder the walk cannot list (no permission, a mount away for a moment) is one
    skipped line, and ``--sync`` removes nothing under it (its files' passages were taken for
    gone and removed until 2026-11-30)."""
    import os

    notes = tmp_path / "notes"
    (notes / "private").mkdir(parents=True)
    (notes / "okapi.md").write_text(f"# Okapi\n\n{OKAPI_1}\n")
    (notes / "private" / "quokka.md").write_text(f"# Quokka\n\n{QUOKKA}\n")
    store = tmp_path / "store"
    assert main(["ingest", str(notes), "--store", str(store), "--quiet"]) == 0
    capsys.readouterr()
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith("private"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert main(["ingest", str(notes), "--store", str(store), "--sync", "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["removed_gone"] == 0 and summary["store_total"] == 2
    assert f"skipped: {notes / 'private'}{os.sep}: cannot be read: Permission denied" in err


def test_a_file_name_that_is_not_utf8_and_links_are_said(tmp_path, capsys, minilm):
    """A Latin-1 file name is read (its title with U+FFFD; the whole ingest failed in the
    embedder until 2026-11-30); a link to a folder is one skipped line, not followed; a broken
    link is named as one (it was "a pipe, socket or device")."""
    import os

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text("A good file about the town of Tarnow.\n")
    with open(os.path.join(os.fsencode(docs), b"caf\xe9.txt"), "wb") as fh:
        fh.write(b"A Latin-1 named file about Zebulon.\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "linked.txt").write_text("A linked file about the Brindle hills.\n")
    (docs / "shared").symlink_to(elsewhere, target_is_directory=True)
    (docs / "broken.txt").symlink_to(docs / "nowhere.txt")
    store = tmp_path / "store"
    assert main(["ingest", str(docs), "--store", str(store), "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out.strip().splitlines()[-1])["store_total"] == 2
    titles = {p["title"] for p in ChromaCorpus(str(store), embeddings=minilm, create=False).all_passages()}
    assert titles == {"good", "caf\ufffd"}
    assert f"{docs / 'shared'}{os.sep}: a link to a folder, not followed" in err
    assert f"{docs / 'broken.txt'}: a link to nothing (broken symbolic link)" in err
    # ingested again: the same passages, nothing new, nothing removed
    assert main(["ingest", str(docs), "--store", str(store), "--json", "--quiet", "--sync"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["store_total"] == 2 and again["removed_gone"] == 0


def test_one_file_under_two_names_is_stored_once(tmp_path, capsys, minilm):
    """A file met twice in one ingest (a folder and a link to it) is read once, as the name that
    goes through no link; ingested again under another name, it is the same passages, and a
    changed file read under either name replaces what the other name stored (until 2026-12-02
    each name kept a copy: two equal passages in every search)."""
    import os

    docs = tmp_path / "docs"
    docs.mkdir()
    okapi = docs / "okapi.md"
    okapi.write_text(f"# Okapi\n\n{OKAPI_1}\n")
    link = tmp_path / "link"
    link.symlink_to(docs, target_is_directory=True)

    def run(store, *paths):
        assert main(["ingest", *map(str, paths), "--store", str(tmp_path / store), "--json", "--quiet"]) == 0
        out, err = capsys.readouterr()
        stored = ChromaCorpus(str(tmp_path / store), embeddings=minilm, create=False).all_passages()
        return json.loads(out.strip().splitlines()[-1]), err, stored

    summary, err, stored = run("both", link, docs)  # the link named first: the file is still read as itself
    assert summary == {**summary, "files": 1, "passages": 1, "store_total": 1}
    assert f"warning: {link / 'okapi.md'}: the same file as {okapi}; read once, as that" in err
    assert [p["meta"]["path"] for p in stored] == [str(okapi)]
    summary, err, _ = run("both", docs, okapi)  # a folder and a file in it: read once, no word about it
    assert summary == {**summary, "files": 1, "added": 0, "store_total": 1} and "warning" not in err
    summary, _, stored = run("both", link / "okapi.md")  # another name, the same file: nothing new
    assert summary == {**summary, "added": 0, "already_present": 1, "removed": 0, "store_total": 1}
    assert [p["meta"]["path"] for p in stored] == [str(okapi)]

    _, _, stored = run("linked", link)  # stored under the link's name, with where it leads
    assert [p["meta"] for p in stored] == [{"path": str(link / "okapi.md"), "real": str(okapi), "chunk": 0}]
    okapi.write_text(f"# Okapi\n\n{OKAPI_2}\n")
    summary, _, stored = run("linked", docs)  # changed, read by its own name: the link's copy is the old version
    assert summary == {**summary, "added": 1, "removed": 1, "store_total": 1}
    assert [(p["meta"]["path"], p["text"]) for p in stored] == [(str(okapi), f"# Okapi {OKAPI_2}")]
    okapi.write_text(f"# Okapi\n\n{OKAPI_1}\n")
    summary, _, stored = run("linked", link)  # and the other way round
    assert summary == {**summary, "added": 1, "removed": 1, "store_total": 1}
    assert [p["text"] for p in stored] == [f"# Okapi {OKAPI_1}"]
    # a hard link in the same folder: one file, read once, as the first name the walk meets
    os.link(okapi, docs / "okapi-copy.md")
    summary, err, _ = run("hard", docs)
    assert summary == {**summary, "files": 1, "store_total": 1}
    assert f"{okapi}: the same file as {docs / 'okapi-copy.md'}; read once" in err
    # a text file, titled by its name, and a link to it: one passage whichever name reads it (the
    # link's name titled its copy, and each ingest replaced the other's, until 2026-12-03)
    (tmp_path / "notes").mkdir()
    plain = tmp_path / "notes" / "quokka.txt"
    plain.write_text(QUOKKA)
    (tmp_path / "notes" / "marsupial.txt").symlink_to(plain)
    for name in ("quokka.txt", "marsupial.txt", "quokka.txt"):
        summary, _, stored = run("file-link", tmp_path / "notes" / name)
        assert summary == {**summary, "removed": 0, "store_total": 1} and [p["title"] for p in stored] == ["quokka"]


def test_page_addresses_and_collection_names(tmp_path, capsys):
    """A page's address drops its fragment and lower-cases scheme and host (each spelling was
    another copy); an ``--exact`` store takes a later ingest without the flag with its own
    encoder; names Chroma refuses are refused as names (exit 2, a store error before)."""
    from ragraphs.ingest import page_address

    assert page_address("HTTP://Example.ORG/Page?x=1#part") == "http://example.org/Page?x=1"
    assert page_address("https://user:Pass@host/a") == "https://user:Pass@host/a"
    (tmp_path / "okapi.md").write_text(f"# Okapi\n\n{OKAPI_1}\n")
    (tmp_path / "quokka.md").write_text(f"# Quokka\n\n{QUOKKA}\n")
    store = tmp_path / "store"
    assert main(["ingest", str(tmp_path / "okapi.md"), "--store", str(store), "--exact", "--quiet"]) == 0
    assert main(["ingest", str(tmp_path / "quokka.md"), "--store", str(store), "--quiet"]) == 0
    capsys.readouterr()
    for name in ("a..b", "10.0.0.1"):
        assert main(["ingest", str(tmp_path / "okapi.md"), "--store", str(store), "--collection", name, "--quiet"]) == 2
        assert "bad collection name" in capsys.readouterr().err


def test_a_title_that_is_only_a_file_name_links_nothing(tmp_path, capsys, minilm):
    """DR-RAG's title links read a store's titles: ``notes.txt`` in two folders and ``plan.txt``
    are titled by their names, which name no page, so a text saying "the notes" or "plan" links
    to none of them (every such text linked to each of those files until 2026-11-30); a
    Markdown heading's title still links."""
    docs = tmp_path / "docs"
    (docs / "a").mkdir(parents=True)
    (docs / "b").mkdir()
    (docs / "a" / "notes.txt").write_text("Budget meeting: the Kestrel project.\n")
    (docs / "b" / "notes.txt").write_text("Recipe: boil the beans for an hour.\n")
    (docs / "plan.txt").write_text("See the notes from Monday before you plan the trip.\n")
    (docs / "okapi.md").write_text(f"# Okapi\n\n{OKAPI_1}\n")
    store = tmp_path / "store"
    assert main(["ingest", str(docs), "--store", str(store), "--quiet"]) == 0
    corpus = ChromaCorpus(str(store), embeddings=minilm, create=False)
    named = corpus.title_index().named_in("See the notes from Monday before you plan the trip to see the Okapi.")
    assert [p["title"] for p in named] == ["Okapi"]


def test_sync_keeps_what_was_ingested_through_a_linked_folder(tmp_path, capsys, minilm):
    """A folder ingested by the link's path, then its parent synced: the walk does not follow
    the link, and --sync leaves what lies under it (it removed it as gone)."""
    docs, real = tmp_path / "docs", tmp_path / "real"
    docs.mkdir()
    real.mkdir()
    (real / "okapi.md").write_text(f"# Okapi\n\n{OKAPI_1}\n")
    (docs / "linked").symlink_to(real, target_is_directory=True)
    (docs / "quokka.md").write_text(f"# Quokka\n\n{QUOKKA}\n")
    store = tmp_path / "store"
    assert main(["ingest", str(docs / "linked"), str(docs), "--store", str(store), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["ingest", str(docs), "--store", str(store), "--sync", "--json", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["removed_gone"] == 0 and summary["store_total"] == 2


def test_remove_takes_out_what_a_file_folder_or_page_put_in(tmp_path, capsys, minilm):
    """``ingest --remove``: a file's passages (the file already deleted), a folder's (every file
    under it), nothing read or embedded; a path that matched nothing is a warning and exit 1;
    --sync or --chunk-words beside it is refused."""
    notes, other = notes_and_other(tmp_path)
    store = tmp_path / "store"
    assert main(["ingest", str(notes), str(other), "--store", str(store), "--quiet"]) == 0
    capsys.readouterr()

    other.unlink()  # gone from the disk: its passages are still found by its path
    assert main(["ingest", "--remove", str(other), "--store", str(store), "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == {"removed": 1, "by_path": {str(other): 1}, "store_total": 2}

    assert main(["ingest", "--remove", str(notes / "old"), str(tmp_path / "never.md"), "--store", str(store)]) == 1
    got = capsys.readouterr()
    assert got.out == "removed 1 passage(s) of 1 of 2 path(s); store now holds 1\n"
    assert got.err == f"warning: nothing in the store came from {tmp_path / 'never.md'}\n"
    corpus = ChromaCorpus(str(store), embeddings=minilm, create=False)
    assert [p["title"] for p in corpus.all_passages()] == ["Okapi"]

    assert main(["ingest", "--remove", str(notes), "--sync", "--store", str(store)]) == 2
    assert "--remove reads no files, so --sync would change nothing; drop it" in capsys.readouterr().err
    assert main(["ingest", "--remove", str(notes), "--chunk-words", "80", "--store", str(store)]) == 2
    assert "--remove reads no files, so --chunk-words would change nothing; drop it" in capsys.readouterr().err
    assert main(["ingest", "--remove", str(notes), "--store", str(tmp_path / "no-store")]) == 2
    assert "no store at" in capsys.readouterr().err
    assert not (tmp_path / "no-store").exists()


def test_remove_by_overlapping_paths_links_and_names_that_are_not_utf8(tmp_path, capsys, minilm, monkeypatch):
    """A folder and a file in it named together: both matched, exit 0 (the second was "nothing
    came from" until 2026-11-30, night); a path through a link ingest did not take; two names
    that differ only in bytes that are not UTF-8 stay two files (both were stored as ``caf\\ufffd``,
    so removing one removed the other); a blank path is refused (it named the working folder)."""
    import os

    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "notes" / "a.md").write_text(f"# Okapi\n\n{OKAPI_1}\n")
    (docs / "notes2.md").write_text(f"# Okapi food\n\n{OKAPI_2}\n")
    for name, text in ((b"caf\xe9.txt", QUOKKA), (b"caf\xe8.txt", "Kiwis are flightless birds of New Zealand.")):
        with open(os.path.join(os.fsencode(docs), name), "wb") as fh:
            fh.write(text.encode())
    (tmp_path / "link").symlink_to(docs, target_is_directory=True)
    store = tmp_path / "store"
    assert main(["ingest", str(docs), "--store", str(store), "--quiet"]) == 0
    capsys.readouterr()

    def remove(*paths):
        code = main(["ingest", "--remove", *paths, "--store", str(store), "--json"])
        out, err = capsys.readouterr()
        return code, (json.loads(out) if out else None), err

    monkeypatch.chdir(tmp_path)
    assert remove("") == (2, None, "ragraphs: error: --remove: a blank path names the current folder (an unset "
                                   "variable?); give the path\n")
    assert remove("docs/notes", "docs/notes/a.md") == (0, {"removed": 1, "by_path": {"docs/notes": 1, "docs/notes/a.md": 1},
                                                          "store_total": 3}, "")
    assert remove(os.fsdecode(b"link/caf\xe9.txt")) == (0, {"removed": 1, "by_path": {os.fsdecode(b"link/caf\xe9.txt"): 1},
                                                           "store_total": 2}, "")
    left = {os.path.basename(p["meta"]["path"]) for p in ChromaCorpus(str(store), embeddings=minilm, create=False).all_passages()}
    assert left == {"notes2.md", "caf\\xe8.txt"}  # the sibling file, and the other name that is not UTF-8


def test_a_site_root_is_one_page_with_or_without_its_slash():
    from ragraphs.sources import is_url, page_spellings

    assert page_spellings("HTTP://Example.org#top") == ["http://example.org", "http://example.org/"]
    assert page_spellings("http://example.org/") == ["http://example.org/", "http://example.org"]
    assert page_spellings("http://example.org/?q=1") == ["http://example.org/?q=1"]
    assert page_spellings("http://example.org/wiki/Okapi#x") == ["http://example.org/wiki/Okapi"]
    assert is_url("HTTPS://example.org") and not is_url("https.txt")


def test_a_declared_charset_a_single_path_and_a_pdfs_page_beside_its_passage(tmp_path, capsys, minilm):
    """Review of 2026-12-01: an HTML file in windows-1251 declaring its charset was read as cp1252
    (garbled); ``collect_passages("folder")`` read the string letter by letter and a ``Path`` failed;
    ``ask`` now prints a PDF passage's page beside its file."""
    from ragraphs.ingest import collect_passages

    page = tmp_path / "news.html"
    page.write_bytes('<html><head><meta charset="windows-1251"><title>Новости</title></head><body>'
                     '<p>Мост через реку Зандор открыт.</p></body></html>'.encode("cp1251"))
    (p,) = read_file(str(page))
    assert p["title"] == "Новости" and "Мост через реку Зандор" in p["text"]
    for given in (str(tmp_path), tmp_path):
        assert [q["title"] for q in collect_passages(given)[0]] == ["Новости"]
    pdf = write_pdf(tmp_path / "okapi.pdf", [OKAPI_1, OKAPI_2], title="Okapi facts")
    store = ["--store", str(tmp_path / "store")]
    assert main(["ingest", str(pdf), *store, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["ask", "What stripes does the okapi have?", *store, "--llm", "fake:x", "--retrieval-only"]) == 0
    assert f"{pdf}, page 2): " in capsys.readouterr().out


def test_skip_reasons_in_json_a_langchain_store_refused_and_no_chunk_advice_for_benchmark_rows(tmp_path, capsys, data_dir):
    """Review of 2026-12-01: ``--json`` gave only a count of skipped files (the reasons went to
    stderr); ``ingest(paths, InMemoryVectorStore(...))`` failed with an AttributeError; benchmark
    paragraphs (kept whole for their ids) were counted in the advice to lower --chunk-words."""
    from langchain_core.vectorstores import InMemoryVectorStore

    from fakes import HashEmbeddings
    from ragraphs.errors import ConfigError
    from ragraphs.ingest import ingest

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "bad.pdf").write_bytes(b"%PDF-1.4 broken")
    (tmp_path / "in" / "ok.txt").write_text("The okapi lives in the Ituri rainforest.")
    assert main(["ingest", str(tmp_path / "in"), "--store", str(tmp_path / "s"), "--json", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["skipped_files"] == 1 and summary["skipped"][0].startswith(f"{tmp_path / 'in' / 'bad.pdf'}: ")
    with pytest.raises(ConfigError, match="ingest adds to a ChromaCorpus, not to InMemoryVectorStore"):
        ingest([str(tmp_path / "in" / "ok.txt")], InMemoryVectorStore(HashEmbeddings()))
    from ragraphs.tools.vectorstore import InMemoryCorpus

    # it named InMemoryCorpus among the stores it adds to while refusing it (until 2026-12-03)
    with pytest.raises(ConfigError, match=r"not to InMemoryCorpus: an InMemoryCorpus is made from collect_passages"):
        ingest([str(tmp_path / "in" / "ok.txt")], InMemoryCorpus([]))
    assert main(["ingest", str(data_dir / "musique.sample.jsonl"), "--store", str(tmp_path / "b"), "--quiet",
                 "--chunk-words", "20"]) == 0
    assert "run past the encoder" not in capsys.readouterr().err


def test_a_file_that_cannot_be_read_is_skipped_as_path_then_why(tmp_path):
    """The ``skipped`` line of a file that cannot be read starts with its path, as every other
    skipped file's does (``ingest --json``'s ``skipped`` entries are ``PATH: why``). **Was a gap**
    (until 2026-12-03): ``cannot read PATH: Permission denied``."""
    from ragraphs.ingest import _file_bytes

    gone = tmp_path / "gone.txt"
    with pytest.raises(InputError) as e:
        _file_bytes(str(gone))
    assert str(e.value) == f"{gone}: cannot read it (No such file or directory)"


@contextlib.contextmanager
def _serving(routes: dict):
    """A server on 127.0.0.1 of ``routes[path] = (status, content type or None, body or Location)``
    (a 3xx status redirects to its third item), read as each request comes: a test may change them."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            status, ctype, body = routes.get(self.path, (404, "text/plain", b"not found"))
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", body)
                self.end_headers()
                return
            if ctype:
                self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def moving_site():
    """A server whose pages a test changes (:func:`_serving`)."""
    routes: dict = {}
    with _serving(routes) as base:
        yield base, routes


def test_a_page_read_through_a_redirect_is_replaced_by_its_next_version(moving_site, tmp_path, capsys, minilm):
    """``/latest/guide`` leading to ``/v1/guide``, then to ``/v2/guide``: the second ingest of the
    address given replaces the first's passages, and ``--remove`` of that address takes them out;
    a page that starts to redirect replaces what it stored before. **Was a bug** (until
    2026-12-03): each version stayed (the store held both timeouts), and `--remove` found none."""
    base, routes = moving_site
    page = "<html><head><title>Guide</title></head><body><p>The timeout is {} seconds for every request.</p></body></html>"
    routes["/v1/guide"] = (200, "text/html", page.format(30).encode())
    routes["/v2/guide"] = (200, "text/html", page.format(90).encode())
    routes["/b"] = (200, "text/html", page.format(5).encode())
    routes["/latest/guide"] = (302, None, "/v1/guide")
    store = str(tmp_path / "store")
    argv = ["ingest", f"{base}/latest/guide", f"{base}/b", "--store", store, "--quiet", "--json"]
    assert main(argv) == 0
    routes["/latest/guide"] = (302, None, "/v2/guide")
    routes["/b"], routes["/new/b"] = (301, None, "/new/b"), (200, "text/html", page.format(7).encode())
    assert main(argv) == 0
    capsys.readouterr()
    texts = sorted(p["text"] for p in ChromaCorpus(store, embeddings=minilm, create=False).all_passages())
    assert texts == ["The timeout is 7 seconds for every request.", "The timeout is 90 seconds for every request."]
    assert main(["ingest", "--remove", f"{base}/latest/guide", "--store", store, "--quiet"]) == 0
    texts = [p["text"] for p in ChromaCorpus(store, embeddings=minilm, create=False).all_passages()]
    assert texts == ["The timeout is 7 seconds for every request."]


def test_a_page_is_read_by_its_address_where_its_type_says_little(moving_site):
    """A text page with no Content-Type, a ``README.md`` served as ``text/plain``, Python served as
    ``text/x-python``: read as the same files are (text; Markdown titled by its heading; code by
    whole lines), and a page titled by its address is marked so, as a file titled by its name.
    **Were bugs** (until 2026-12-03): no text found; "README.md" with its code fence run into one
    line; the code run into sentences; the address's name taken for a page title."""
    from ragraphs.ingest import read_url

    base, routes = moving_site
    notes = "\n\n".join(f"Release {i} fixed the {i}th bug in the parser." for i in range(30)).encode()
    routes["/release-notes"] = (200, None, notes)
    routes["/raw/README.md"] = (200, "text/plain", b"# Quokka tools\n\nRun it:\n\n```python\ndef f(x):\n    return x\n```\n")
    routes["/geo.py"] = (200, "text/x-python", b"def area(r):\n    return 3.14 * r * r\n")
    got = read_url(f"{base}/release-notes")
    assert got and "Release 29 fixed" in " ".join(p["text"] for p in got)
    assert got[0]["title"] == "release-notes" and got[0]["meta"]["title_from"] == "file"
    (readme,) = read_url(f"{base}/raw/README.md")
    assert readme["title"] == "Quokka tools" and "def f(x):\n    return x" in readme["text"]
    (code,) = read_url(f"{base}/geo.py")
    assert code["text"] == "def area(r):\n    return 3.14 * r * r"
