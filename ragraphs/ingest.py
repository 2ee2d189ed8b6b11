"""Turn files into passages and add them to a corpus, idempotently.

Readers: plain text, Markdown, HTML (main text extracted with trafilatura, scripts and
styles dropped), PDF and DOCX (langchain-community's ``PyPDFLoader`` over pypdf and
``Docx2txtLoader`` over docx2txt), Jupyter notebooks (as Markdown), JSONL of ``{title, text}`` rows, and the benchmark files
(each question's paragraphs pooled into one corpus). Directories are walked. An http(s)
address is fetched (:func:`read_url`: an HTML page's main text, a text page or a PDF).
Unreadable files (encrypted, empty, corrupt, binary) are reported and skipped; the rest are
ingested.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterable

from .errors import ConfigError, InputError
from .sources import (is_url, iter_files, not_documents, one_name_per_file, page_address, path_list,  # noqa: F401
                      name_text, path_text, printable_path)  # (importable from here as before)
from .ingest_remove import gone_ids  # noqa: F401  (importable from here as before)
from .state.types import Passage, make_passage, passage_id
from .tools.documents import (decode_text as _decode, docx_title, html_file_text, html_to_text, notebook_markdown, pdf_pages,
                              read_docx, text_encoding, url_pdf_pages)
from .tools.text import CHUNK_WORDS, chunk_lines, chunk_table, chunk_text

MD_EXT = {".md", ".markdown"}
HTML_EXT = {".html", ".htm", ".xhtml"}
HTML_OPENINGS = ("<!doctype html", "<html")  # a file or page read as HTML whatever its name or type
JSON_EXT = {".jsonl", ".json", ".ndjson"}
PDF_EXT = {".pdf"}
DOCX_EXT = {".docx"}
# source code and configuration: chunked by whole lines, indentation kept (run into sentences until 2026-12-02)
CODE_EXT = {".py", ".pyi", ".js", ".jsx", ".ts", ".tsx", ".java", ".kt", ".scala", ".c", ".h", ".cc", ".cpp", ".hpp",
            ".cs", ".go", ".rs", ".rb", ".php", ".swift", ".m", ".r", ".jl", ".lua", ".pl", ".sh", ".bash", ".zsh",
            ".ps1", ".sql", ".css", ".scss", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".xml", ".diff", ".patch"}
# this package's Python at 150 words a chunk: median 381 MiniLM tokens, 799 of 863 chunks past the 256-token
# window; at 60 (2/5): median 149, 4 of 2,215 past (2026-12-02)
CODE_WORDS_SHARE = 2
# whether a passage (title, text) fits the encoder's window: ingest cuts a chunk again until it does
Fits = Callable[[str, str], bool]
MAX_FILE_BYTES = 200 * 1024 * 1024
MAX_URL_BYTES = 50 * 1024 * 1024
URL_TIMEOUT_S = 20.0


@dataclass
class IngestReport:
    files: int = 0
    passages: int = 0
    added: int = 0
    skipped_files: list[str] = field(default_factory=list)
    skipped_dirs: list[str] = field(default_factory=list)
    removed: int = 0  # passages of an earlier version of a file or page ingested again
    removed_gone: int = 0  # with sync: passages of files no longer in the folders walked
    walked: list[str] = field(default_factory=list)  # every file met (read or not), absolute
    unwalked: list[str] = field(default_factory=list)  # folders that could not be listed: sync removes nothing under them
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _md_title(text: str, fallback: str) -> str:
    """A Markdown file's title: its front matter's ``title:``, else its first ATX heading
    (``# Title``) outside fenced code, else ``fallback``."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":  # YAML front matter
        for line in lines[1:]:
            if line.strip() in ("---", "..."):
                break
            m = re.match(r"title:\s*(.+)", line)
            if m and m.group(1).strip().strip("'\""):
                return m.group(1).strip().strip("'\"")
    fenced = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6}\s+\S", line):
            return line.lstrip("#").strip().rstrip("#").strip() or fallback
    return fallback


def _md_body(text: str) -> str:
    """A Markdown file's text without its YAML front matter (``---`` ... ``---``), which named
    the title and then went to the LLM as the passage's first words until 2026-11-30."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return text
    for i, line in enumerate(lines[1:], 1):
        if line.strip() in ("---", "..."):
            return "".join(lines[i + 1:])
    return text  # never closed: no front matter, the file as it is


def _titled(fits: Fits | None, title: str) -> Callable[[str], bool] | None:
    """``fits`` for one title's chunks; None when the title alone fills the window (no cut helps)."""
    return None if fits is None or not fits(title, "") else (lambda text: fits(title, text))


def _chunks(title: str, text: str, source: str, max_words: int, cut: Callable[..., list[str]] = chunk_text,
            fits: Fits | None = None) -> list[Passage]:
    """The passages of one file's text; ``meta["path"]`` is the file's absolute path, which
    ingest's replacement of a changed file's old passages matches on."""
    path = path_text(source)
    title = name_text(title)  # (kept as it is: the prompts quote it on one line, the command line escapes it)
    real = path_text(os.path.realpath(source))
    if real != path and title == _stem(source):  # a file read through a link is titled as the file itself: one
        title = _stem(os.path.realpath(source))  # passage id whichever name reads it (they took turns until 2026-12-03)
    # a title that is only the file's name ("notes", "plan") names no page: DR-RAG's title links
    # leave it out (every text saying "notes" linked to every notes.txt until 2026-11-30)
    meta: dict[str, str] = {"title_from": "file"} if title == _stem(os.path.realpath(source)) else {}
    if real != path:  # read through a link: where it led, so that another spelling's passages are replaced
        meta["real"] = real
    return [_file_passage(title, c, path, i, **meta) for i, c in enumerate(cut(text, max_words, fits=_titled(fits, title)))
            if c.strip()]


def _stem(path: str) -> str:
    """A file's name without its extension, as a title."""
    return name_text(os.path.splitext(os.path.basename(path))[0])


_markdown_chunks = partial(chunk_text, keep_lines=True)  # fenced code, pipe tables: their lines kept (since 2026-12-02)


def _paged(chunks: Callable[..., list[Passage]], title: str, pages: list[tuple[int, str]], *args: Any) -> list[Passage]:
    """A PDF's passages, each page chunked on its own with its ``page`` (from 1) in ``meta``, the
    chunks numbered through the file (its pages were joined and chunked across their breaks, and
    no passage said its page, until 2026-12-01)."""
    out: list[Passage] = []
    for page, text in pages:
        for p in chunks(title, text, *args):
            out.append({**p, "meta": {**p["meta"], "chunk": len(out), "page": page}})
    return out


def _file_passage(title: str, text: str, path: str, chunk: int, **meta) -> Passage:
    """A passage of the file or page at ``path``: its id hashes the path (where a link led, its
    ``real`` path: one file under two names is one passage since 2026-12-02) with the title and
    text, so two files holding the same text each keep their own passage (one shared id was
    removed with the first file's next version, or with the first file gone)."""
    where = meta.get("real") or path
    return make_passage(title, text, "corpus", id=passage_id(f"{where}\x1e{title}", text), path=path, chunk=chunk, **meta)


def _file_bytes(path: str) -> bytes:
    """The file's bytes; :class:`InputError` for one that cannot be read or is too large."""
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            raise InputError(f"{path}: larger than {MAX_FILE_BYTES // 2**20} MiB; split it first")
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as e:
        # `PATH: why`, as every other skipped file (it was "cannot read PATH: ..." until 2026-12-03)
        raise InputError(f"{printable_path(path)}: cannot read it ({e.strerror})") from e


def _json_passages(path: str, name: str, chunks: Callable, max_words: int,
                   warn: Callable[[str], None] | None) -> list[Passage]:
    """A JSON or JSONL file's passages: benchmark rows' paragraphs, ``{title, text}`` rows cut
    into chunks, FlashRAG's ``contents`` rows; a row with no text is skipped with a warning."""
    from .datasets import LOADERS, detect_format, iter_rows

    out: list[Passage] = []
    seen_fmt = None
    for n_rows, row in enumerate(iter_rows(path, warn=warn, example='{"title": ..., "text": ...}'), 1):
        fmt = detect_format(row)
        if fmt is not None:
            seen_fmt = fmt
            for p in LOADERS[fmt](row, fmt).paragraphs:
                q = dict(p)
                q.pop("meta", None)
                out.append(q)  # type: ignore[arg-type]
        elif isinstance(row.get("text"), str):
            title = str(row.get("title") or row.get("id") or name)
            out.extend(chunks(title, row["text"], path, max_words))
        elif isinstance(row.get("contents"), str):  # FlashRAG corpus rows: "title\ntext"
            title, _, text = row["contents"].partition("\n")
            out.extend(chunks(title.strip('"'), text or title, path, max_words))
        elif warn is not None:
            warn(f"{path}: row {n_rows}: no text (a \"text\" or \"contents\" string, or a benchmark row); skipped")
    if not out and seen_fmt is None:
        raise InputError(f"{path}: no rows with text (expected {{title, text}} or a benchmark format)")
    return out


def read_file(path: str, max_words: int = CHUNK_WORDS, warn: Callable[[str], None] | None = None,
              fits: Fits | None = None) -> list[Passage]:
    """Passages of one file; raises :class:`InputError` when it cannot be read. With ``fits``, a
    chunk it refuses is cut again (see :func:`~ragraphs.tools.text.chunk_text`)."""
    chunks = partial(_chunks, fits=fits)
    ext = os.path.splitext(path)[1].lower()
    raw = _file_bytes(path)
    name = os.path.splitext(os.path.basename(path))[0]
    if ext in PDF_EXT | DOCX_EXT and not raw:
        raise InputError(f"{path}: empty file")
    if ext in PDF_EXT or raw.startswith(b"%PDF-"):
        title, pages = pdf_pages(path, warn=warn)
        return _paged(chunks, title or name, pages, path, max_words)
    if ext in DOCX_EXT:
        text = read_docx(path, raw[:8], MAX_FILE_BYTES)  # checked first: a damaged file is named by it
        return chunks(docx_title(path) or name, text, path, max_words)
    if text_encoding(raw) is None:
        raise InputError(f"{path}: binary file, not text")
    if ext == ".ipynb":  # Markdown cells and fenced code, not the JSON (until 2026-12-02)
        text = notebook_markdown(path, _decode(raw))
        return chunks(_md_title(text, name), text, path, max_words, _markdown_chunks)
    if ext in JSON_EXT:
        return _json_passages(path, name, chunks, max_words, warn)
    text = _decode(raw)
    if ext in HTML_EXT or text.lstrip()[:15].lower().startswith(HTML_OPENINGS):
        title, body = html_to_text(html_file_text(raw, text))
        return chunks(title or name, body, path, max_words, _markdown_chunks)  # trafilatura writes tables as pipe rows
    if ext in MD_EXT:
        return chunks(_md_title(text, name), _md_body(text), path, max_words, _markdown_chunks)
    if ext in CODE_EXT:  # code reads about 2.5 MiniLM tokens a "word": 2/5 of the words fit the encoder's window
        return chunks(name, text, path, max(1, max_words * CODE_WORDS_SHARE // 5), chunk_lines)
    if ext in (".csv", ".tsv"):
        return chunks(name, text, path, max_words, chunk_table)
    return chunks(name, text, path, max_words)


def read_url(url: str, max_words: int = CHUNK_WORDS, fetcher=None, warn: Callable[[str], None] | None = None,
             fits: Fits | None = None) -> list[Passage]:
    """Passages of the page at ``url``: an HTML page's main text (titled by its ``<title>``), a text page
    (Markdown titled by its first heading, code by lines) or a PDF; :class:`InputError` when it cannot be read.

    The address is one the user gave, so private and loopback hosts (an intranet wiki, a
    server on this machine) are allowed, unlike the web search's result pages; every other
    guard of :class:`~ragraphs.tools.fetch.PageFetcher` holds (redirects checked, a deadline,
    a size cap of :data:`MAX_URL_BYTES`). Each passage keeps the final address in ``meta``
    (``path`` and ``url``)."""
    from urllib.parse import urlsplit

    final, ctype, charset, body = _fetch_page(url, fetcher)
    name = final.rstrip("/").rsplit("/", 1)[-1] or final
    # where the address given led elsewhere: its next ingest replaces these passages (each old version stayed until 2026-12-03)
    asked = a if (a := page_address(url)) != final else ""
    if ctype == "application/pdf" or body.startswith(b"%PDF-"):
        title, pages = url_pdf_pages(url, body, warn)
        return _paged(partial(_url_chunks, fits=fits, asked=asked), title or os.path.splitext(name)[0], pages, final, max_words)
    ext = os.path.splitext(urlsplit(final).path)[1].lower()
    ctype = _sniffed(ctype, ext, body)
    title, text = _page_text(url, ctype, charset, body, name)
    if ext in CODE_EXT and ctype.startswith("text/") and ctype not in ("text/html", "text/markdown", "text/x-markdown"):
        return _url_chunks(title, text, final, max(1, max_words * CODE_WORDS_SHARE // 5), chunk_lines, fits, asked)
    rows_kept = ctype in ("text/markdown", "text/x-markdown", "text/html", "application/xhtml+xml")  # code, tables
    return _url_chunks(title, text, final, max_words, _markdown_chunks if rows_kept else chunk_text, fits, asked,
                       named=title == name)


def _sniffed(ctype: str, ext: str, body: bytes) -> str:
    """A page's type where its header says little (none, text/plain, octet-stream), read as :func:`read_file` reads
    a file: by extension, an HTML opening, else text (a typeless text page gave nothing until 2026-12-03)."""
    if ctype not in ("", "text/plain", "application/octet-stream"):
        return ctype
    if ext in MD_EXT:
        return "text/markdown"
    if ext in HTML_EXT or body.lstrip()[:15].decode("ascii", "ignore").lower().startswith(HTML_OPENINGS):
        return "text/html"
    return "text/plain" if ctype or text_encoding(body[:65536]) is not None else ctype


def _fetch_page(url: str, fetcher=None) -> tuple[str, str, str | None, bytes]:
    """The page at ``url`` fetched: its final address, content type, charset and body; an
    :class:`InputError` for a page that could not be fetched, an HTTP error, a page over
    :data:`MAX_URL_BYTES` or an empty one."""
    from .tools.fetch import FetchError, PageFetcher

    fetcher = fetcher or PageFetcher(timeout=URL_TIMEOUT_S, max_bytes=MAX_URL_BYTES, allow_private=True,
                                     user_agent="ragraphs/0.1 (ingest)")
    try:
        final, status, ctype, charset, body, truncated = fetcher.get_with_charset(
            url, accept="text/html,application/xhtml+xml,application/pdf,text/markdown,text/plain;q=0.8")
    except (FetchError, InputError) as e:
        raise InputError(f"{url}: could not be fetched: {' '.join(str(e).split())[:160]}") from e
    if status >= 400:
        raise InputError(f"{url}: HTTP {status}")
    if truncated:
        raise InputError(f"{url}: larger than {MAX_URL_BYTES // 2**20} MiB")
    if not body.strip():
        raise InputError(f"{url}: empty page")
    return page_address(final), ctype, charset, body


def _page_text(url: str, ctype: str, charset: str | None, body: bytes, name: str) -> tuple[str, str]:
    """A fetched page's title and text by its content type: Markdown (titled by its first
    heading), any other text (by ``name``), HTML (its main text, titled by ``<title>``)."""
    from .tools.fetch import TEXT_TYPES, decode_page

    decoded = (lambda raw: decode_page(raw, charset)) if charset else _decode
    if ctype in ("text/markdown", "text/x-markdown"):
        text = decoded(body)
        return _md_title(text, name), _md_body(text)
    if ctype in TEXT_TYPES or (ctype.startswith("text/") and ctype != "text/html"):
        return name, decoded(body)
    if ctype in ("", "text/html", "application/xhtml+xml"):
        title, text = html_to_text(decoded(body) if charset else html_file_text(body, decoded(body)))
        return title or name, text
    raise InputError(f"{url}: not a page ingest reads ({ctype}): HTML, text or PDF")


def _url_chunks(title: str, text: str, final: str, max_words: int, cut: Callable[..., list[str]] = chunk_text,
                fits: Fits | None = None, asked: str = "", named: bool = False) -> list[Passage]:
    """A page's passages (``asked``: the address that led to it; ``named``: titled by its address, as a file by its name)."""
    meta = {**({"asked": asked} if asked else {}), **({"title_from": "file"} if named else {})}
    return [_file_passage(title, c, final, i, url=final, **meta)
            for i, c in enumerate(cut(text, max_words, fits=_titled(fits, title))) if c.strip()]


def collect_passages(
    paths: Iterable[str], max_words: int = CHUNK_WORDS, warn: Callable[[str], None] | None = None,
    fits: Fits | None = None,
) -> tuple[list[Passage], IngestReport]:
    report = IngestReport()
    passages: list[Passage] = []
    paths = path_list(paths)
    if not paths:
        raise InputError("nothing to ingest: give at least one file or directory")
    missing = [p for p in paths if not is_url(p) and not os.path.exists(p)]
    if missing and len(missing) == len(paths):
        raise InputError(f"no such file or directory: {missing[0]}")
    for p in missing:
        report.skipped_files.append(f"{p}: no such file or directory")
    files = list(dict.fromkeys(iter_files((p for p in paths if p not in missing), skipped_dir=report.skipped_dirs.append,
                                          unreadable=report.unwalked.append)))  # a file named twice is read once
    read_as = one_name_per_file(files)
    for f in files:
        if not is_url(f):
            report.walked.append(path_text(f))
            if _not_read(f, read_as, report):
                continue
        got = _read_one(f, max_words, fits, report)
        if got is None:
            continue
        report.files += 1
        if not got:
            report.warnings.append(f"{printable_path(f) if not is_url(f) else f}: no text found; nothing ingested from it")
        passages.extend(got)
    report.passages = len({p["id"] for p in passages})
    return passages, report


def _not_read(f: str, read_as: dict[str, str], report: IngestReport) -> bool:
    """Whether the walk leaves ``f`` unread, said in ``report``: a broken link, no regular file,
    or a file read under another name."""
    if os.path.islink(f) and not os.path.exists(f):
        report.skipped_files.append(f"{printable_path(f)}: a link to nothing (broken symbolic link)")
    elif not os.path.isfile(f):  # a named pipe would block the read for ever
        report.skipped_files.append(f"{printable_path(f)}: not a regular file (a pipe, socket or device)")
    elif read_as.get(f, f) != f:  # stored twice, under each name, until 2026-12-02
        report.warnings.append(f"{printable_path(f)}: the same file as {printable_path(read_as[f])}; read once, as that")
    else:
        return False
    return True


def _read_one(f: str, max_words: int, fits: Fits | None, report: IngestReport) -> list[Passage] | None:
    """The passages of one file or page; None when it is skipped, said in ``report``."""
    try:
        if is_url(f):
            return read_url(f, max_words=max_words, warn=report.warnings.append, fits=fits)
        return read_file(f, max_words=max_words, warn=report.warnings.append, fits=fits)
    except InputError as e:
        report.skipped_files.append(str(e))
    except Exception as e:  # a reader's library failing on a file it should have refused: that file
        # skipped, not the whole run stopped (a damaged PDF or DOCX stopped it until 2026-12-03)
        report.skipped_files.append(f"{printable_path(f) if not is_url(f) else f}: could not be read "
                                    f"({type(e).__name__}: {' '.join(str(e).split())[:160]})")
    return None


def _earlier_versions(corpus, passages: list[Passage]) -> set[str]:
    """Ids of the stored passages that ``passages`` replace: those of the same files and pages
    that these are not (an earlier version), also where the file was read under another name,
    a link to it or the file a link leads to (both were kept until 2026-12-02)."""
    kept: dict[str, set[str]] = {}
    reals: set[str] = set()  # where each file leads
    for p in passages:
        meta = p.get("meta") or {}
        if meta.get("path"):
            kept.setdefault(meta["path"], set()).add(p["id"])
            reals.add(meta.get("real") or meta["path"])
    if not kept:
        return set()
    stale = set().union(*(corpus.ids_from(path) for path in kept))
    if pages := {p for p in kept if is_url(p)}:  # a page: what its address, or the one that led here, gave before
        asked = sorted({str(m["asked"]) for p in passages if (m := p.get("meta") or {}).get("asked")} | pages)
        stale |= corpus.ids_from(asked, key="asked") | corpus.ids_from(asked)
    stale |= corpus.ids_from(sorted(reals), key="real")  # read before through a link to it ("real" stored since 2026-12-02)
    stale |= corpus.ids_from(sorted(reals - set(kept)))  # read now through a link, before as the file it leads to
    return stale - set().union(*kept.values())


def ingest(
    paths: Iterable[str],
    corpus,
    *,
    max_words: int = CHUNK_WORDS,
    progress: bool = True,
    replace: bool = True,
    sync: bool = False,
) -> IngestReport:
    """Read ``paths`` and add their passages to ``corpus`` (a ChromaCorpus); idempotent.

    With ``replace``, a file or page ingested before and changed since has its earlier
    passages removed once the new ones are stored (``report.removed``); a file that could not
    be read this time, or held no text, keeps what it had. With ``sync``, the passages of files
    that were ingested from a folder of ``paths`` and are no longer in it (deleted, moved, or
    in a folder the walk now leaves out) are removed too (``report.removed_gone``)."""
    import time

    if not callable(getattr(corpus, "add", None)):  # a LangChain store failed with an AttributeError until 2026-12-01
        # (it named InMemoryCorpus as one it adds to, refusing it, until 2026-12-03)
        raise ConfigError(f"ingest adds to a ChromaCorpus, not to {type(corpus).__name__}: an InMemoryCorpus is made "
                          "from collect_passages' passages (InMemoryCorpus(passages, embeddings)); for a LangChain "
                          "vector store, add them as Documents (ragraphs.graphs.retriever.passage_document) with its "
                          "add_documents")
    paths = path_list(paths)  # read twice with sync
    with warnings.catch_warnings():  # tqdm.auto warns in a notebook kernel without ipywidgets
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm

    t0 = time.perf_counter()
    from .tools.embeddings import past_window, window_fits
    from .tools.vectorstore import embedded_text

    fit = window_fits(getattr(corpus, "embeddings", None))  # a chunk past the window is cut again (since 2026-12-02)
    fits = None if fit is None else (lambda title, text: fit(embedded_text(make_passage(title, text, "corpus"))))
    passages, report = collect_passages(paths, max_words=max_words, fits=fits)
    # benchmark paragraphs (no chunk number) are kept whole, and are not counted
    unique = [p for p in {p["id"]: p for p in passages}.values() if "chunk" in (p.get("meta") or {})]
    cut, window = past_window(getattr(corpus, "embeddings", None), [embedded_text(p) for p in unique])
    if cut:  # the encoder reads the first `window` tokens only: the rest of these is never found
        report.warnings.append(f"{cut} of {len(unique)} passages run past the encoder's {window} tokens, and their ends are "
                               "not embedded: a title or a table's header row fills the window by itself")
    bar = tqdm(total=report.passages, desc="embedding", unit="passage", disable=not progress or not report.passages,
               dynamic_ncols=True)
    try:
        report.added = corpus.add(passages, progress=bar.update)
    finally:
        bar.close()
    if replace and hasattr(corpus, "ids_from"):
        report.removed = corpus.remove(sorted(_earlier_versions(corpus, passages)))
    if sync and hasattr(corpus, "ids_from"):
        report.removed_gone = corpus.remove(sorted(gone_ids(corpus, paths, set(report.walked), report.unwalked)))
    report.seconds = time.perf_counter() - t0
    return report
