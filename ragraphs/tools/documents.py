"""PDF and DOCX text through langchain-community's loaders (``PyPDFLoader`` over pypdf,
``Docx2txtLoader`` over docx2txt): the text of a file, or :class:`InputError` naming the file
and what is wrong with it (encrypted, empty, corrupt, no text layer); and a Jupyter notebook's
cells as Markdown."""

from __future__ import annotations

import codecs
import os
import contextlib
import logging
import re
import warnings
from typing import Callable, Iterator

from ..errors import InputError

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # encrypted Office files and legacy .doc


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split())[:160])


@contextlib.contextmanager
def _library_log(name: str) -> Iterator[list[str]]:
    """A library's warnings about a damaged file, collected off the terminal (the file's one
    report line says what happened)."""
    log = logging.getLogger(name)
    handler = _Collect()
    old_level, old_propagate = log.level, log.propagate
    log.setLevel(logging.WARNING)
    log.propagate = False
    log.addHandler(handler)
    try:
        yield handler.messages
    finally:
        log.removeHandler(handler)
        log.setLevel(old_level)
        log.propagate = old_propagate


def _error_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())[:120]}"


def pdf_pages(path: str, warn: Callable[[str], None] | None = None) -> tuple[str, list[tuple[int, str]]]:
    """(title, [(page number from 1, text), ...]) of a PDF, the pages with text in order;
    :class:`InputError` when it cannot be read.
    Pages whose text pypdf could not decode (a damaged content stream) are said to ``warn``
    while the rest is read; a file where no page decodes is an error naming the damage, not
    "no text layer" (it read as scanned until 2026-11-30)."""
    pages, damage = _load_pdf_pages(path)
    texts = [(d.page_content or "").strip() for d in pages]
    if damage and (not pages or not all(texts)):
        _say_damage(path, texts, damage[-1], warn)
    if not any(texts):
        raise InputError(f"{path}: PDF without a text layer (scanned? run OCR first)")
    meta = pages[0].metadata if pages else {}
    title = str(meta.get("title") or "").strip()
    return title, [(i + 1, t) for i, t in enumerate(texts) if t]


def _load_pdf_pages(path: str) -> tuple[list, list[str]]:
    """A PDF's pages read by pypdf (through LangChain's loader), and the damage pypdf logged
    while reading them; an :class:`InputError` for an encrypted, empty or unreadable file."""
    from langchain_community.document_loaders import PyPDFLoader
    from pypdf.errors import EmptyFileError, FileNotDecryptedError

    try:
        with _library_log("pypdf") as damage, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return PyPDFLoader(path, mode="page").load(), damage
    except FileNotDecryptedError as e:
        raise InputError(f"{path}: encrypted PDF (needs a password); decrypt it first") from e
    except EmptyFileError as e:
        raise InputError(f"{path}: empty file") from e
    except Exception as e:  # pypdf meets a damaged file with many kinds of error (an unknown filter's is
        # a NotImplementedError: it stopped a whole folder's ingest until 2026-12-03)
        if "decrypt" in str(e).lower() or "encrypt" in str(e).lower():
            raise InputError(f"{path}: encrypted PDF (needs a password); decrypt it first") from e
        raise InputError(f"{path}: not a readable PDF (corrupt?): {_error_line(e)}") from e


def _say_damage(path: str, texts: list[str], damage: str, warn: Callable[[str], None] | None) -> None:
    """Pages pypdf could not decode: an error when no page gave text, else said to ``warn``."""
    empty = [i + 1 for i, t in enumerate(texts) if not t]
    if len(empty) == len(texts):
        raise InputError(f"{path}: not a readable PDF (corrupt?): no page's text could be read ({damage})")
    if warn is not None:
        shown = ", ".join(map(str, empty[:10])) + (", ..." if len(empty) > 10 else "")
        warn(f"{path}: {len(empty)} of {len(texts)} pages gave no text (page {shown}); pypdf: {damage}; "
             "the other pages are ingested")


# the parts of a DOCX that docx2txt reads whole into memory (its own patterns)
_DOCX_TEXT_PARTS = re.compile(r"word/document\.xml$|word/header[0-9]*.xml|word/footer[0-9]*.xml")


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB".replace(".0 MiB", " MiB") if n >= 2**20 else f"{n} bytes"


def read_docx(path: str, head: bytes, max_bytes: int | None = None) -> str:
    """The text of a DOCX file; :class:`InputError` when it cannot be read, or when the XML
    parts read (document, headers, footers) unpack to more than ``max_bytes``: the file's own
    size is compressed, so a small file could unpack to gigabytes in memory."""
    import zipfile
    import zlib

    from langchain_community.document_loaders import Docx2txtLoader

    if head.startswith(_OLE_MAGIC):
        raise InputError(f"{path}: encrypted (password-protected) or legacy .doc file, not a readable DOCX")
    try:
        if max_bytes is not None:
            with zipfile.ZipFile(path) as z:  # each member's declared size also bounds what zipfile unpacks
                unpacked = sum(i.file_size for i in z.infolist() if _DOCX_TEXT_PARTS.match(i.filename))
            if unpacked > max_bytes:
                raise InputError(f"{path}: not a readable DOCX: its text unpacks to {_size(unpacked)}, "
                                 f"over the {_size(max_bytes)} limit; split it first")
        docs = Docx2txtLoader(path).load()
    except InputError:
        raise
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, SyntaxError, zlib.error, NotImplementedError, EOFError) as e:
        # ParseError is a SyntaxError; an unknown compression method a NotImplementedError (a RuntimeError: caught first)
        raise InputError(f"{path}: not a readable DOCX (corrupt?): {_error_line(e)}") from e
    except RuntimeError as e:  # zipfile's refusal of an encrypted member (it stopped a folder's ingest until 2026-12-03)
        if "encrypted" not in str(e):
            raise
        raise InputError(f"{path}: encrypted (password-protected) DOCX, not readable without its password") from e
    return "\n\n".join(d.page_content for d in docs)


def docx_title(path: str) -> str:
    """A DOCX's own title (``dc:title`` in ``docProps/core.xml``), "" when it has none or it cannot
    be read (a PDF's metadata title was used, a DOCX's not, until 2026-12-01)."""
    import zipfile
    from xml.etree import ElementTree

    try:
        with zipfile.ZipFile(path) as z:
            if z.getinfo("docProps/core.xml").file_size > 1_000_000:
                return ""
            root = ElementTree.fromstring(z.read("docProps/core.xml"))
    except Exception:  # no title, whatever the damage: a damaged, encrypted or oddly packed core.xml (only
        # some of these were caught until 2026-12-03; the text itself is checked by read_docx)
        return ""
    found = root.find("{http://purl.org/dc/elements/1.1/}title")
    return " ".join((found.text or "").split()) if found is not None else ""


def html_to_text(html: str) -> tuple[str, str]:
    """(title, main text) of an HTML page, with a real extractor; scripts never kept."""
    title = ""
    m = re.search(r"<title[^>]*>(.*?)</title>", html, re.I | re.S)
    if m:
        title = " ".join(m.group(1).split())
    text = ""
    import trafilatura  # a broken install is an error, not a silent fallback to the whole body

    # each <pre> block fenced, so that its code keeps its lines in the chunks (run into prose until 2026-12-02)
    fenced = re.sub(r"(</pre\s*>)", "\n```\\1", re.sub(r"(<pre\b[^>]*>)", "\\1```\n", html, flags=re.I), flags=re.I)
    try:
        text = trafilatura.extract(fenced, include_comments=False, include_tables=True, favor_recall=True) or ""
    except Exception:
        text = ""
    if not text.strip():
        from lxml import html as lh

        try:
            doc = lh.fromstring(html)
            for bad in doc.xpath("//script|//style|//noscript|//template"):
                bad.drop_tree()
            text = "\n\n".join(" ".join(t.split()) for t in doc.xpath("//body//text()") if t.strip())
        except Exception:
            text = ""
    return title, text


def html_file_text(raw: bytes, text: str) -> str:
    """An HTML file's text: UTF-8 when its bytes are, else the charset its ``<meta>`` names
    (:func:`~ragraphs.tools.fetch.decode_page`), else ``text`` as :func:`ragraphs.ingest`'s own decoding read it (a
    windows-1251 or Shift JIS page declaring its charset was read as cp1252 until 2026-12-01)."""
    from .fetch import _META_CHARSET, _XML_ENCODING, decode_page

    try:
        raw.decode("utf-8-sig")
        return text
    except UnicodeDecodeError:
        # a charset the page's own <meta> or XML declaration names, as decode_page reads it (any "charset=" until 2026-12-03)
        return decode_page(raw) if _META_CHARSET.search(raw[:4096]) or _XML_ENCODING.search(raw[:1024]) else text


def notebook_markdown(path: str, text: str) -> str:
    """A Jupyter notebook (``.ipynb``) as Markdown: its Markdown cells as they are, each code cell
    fenced with the notebook's language, outputs left out (as langchain-community's
    ``NotebookLoader`` does by default; that loader writes each cell's source as a Python list's
    repr, so the cells are read here). Until 2026-12-02 a notebook was ingested as its raw JSON."""
    import json

    try:
        nb = json.loads(text)
        cells = nb["cells"]
        meta = nb.get("metadata") or {}
        lang = str((meta.get("kernelspec") or {}).get("language") or (meta.get("language_info") or {}).get("name") or "")
        parts = []
        for cell in cells:
            src = cell.get("source") or ""
            src = ("".join(src) if isinstance(src, list) else str(src)).strip("\n")
            if not src.strip():
                continue
            kind = cell.get("cell_type")
            parts.append(f"```{lang}\n{src}\n```" if kind == "code" else src if kind == "markdown" else "")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise InputError(f"{path}: not a readable notebook (corrupt?): {_error_line(e)}") from e
    return "\n\n".join(p for p in parts if p)


_NON_ASCII = re.compile(r"[^\x00-\x7f\ufffd]")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def text_encoding(raw: bytes) -> str | None:
    """How a file's bytes read as text: ``utf-16`` after a byte-order mark; ``utf-16-le`` or
    ``-be`` without one (as some Windows tools write it: a NUL beside every ASCII letter, read
    as a binary file until 2026-12-03); ``utf-8`` (with fall-backs, :func:`decode_text`) with no
    NUL in its first 4 KB; None for a binary file."""
    head = raw[:4096]
    if head[:2] in _UTF16_BOMS:
        return "utf-16"
    if b"\x00" not in head:
        return "utf-8"
    even, odd = head[0::2], head[1::2]
    for enc, zeros, letters in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if len(head) >= 4 and zeros.count(0) >= 0.9 * len(zeros) and 0 not in letters:
            try:  # the head alone (a character cut at its end is no fault)
                codecs.getincrementaldecoder(enc)().decode(head, final=False)
                return enc
            except UnicodeDecodeError:
                return None
    return None


def decode_text(raw: bytes) -> str:
    """A text file's bytes as text (:func:`text_encoding`). UTF-8 text with a few damaged bytes
    stays UTF-8 (the bad bytes become U+FFFD); text in a legacy 8-bit encoding (almost no valid
    multi-byte sequences) is read as Windows' cp1252, else latin-1."""
    enc = text_encoding(raw) or "utf-8"
    if enc != "utf-8":
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            pass
    try:  # utf-8-sig: a byte-order mark is not text (it broke a JSONL file's first line)
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    lenient = raw.decode("utf-8-sig", "replace")
    if len(_NON_ASCII.findall(lenient)) > lenient.count("\ufffd"):
        return lenient
    try:  # Windows' 8-bit text: its euro sign, curly quotes and dashes are not latin-1's controls
        return raw.decode("cp1252")
    except UnicodeDecodeError:  # one of the five bytes cp1252 leaves undefined
        return raw.decode("latin-1")  # never fails; non-UTF-8 text survives mostly readable


def url_pdf_pages(url: str, body: bytes, warn: Callable[[str], None] | None) -> tuple[str, list[tuple[int, str]]]:
    """A fetched PDF's title and pages, read from a temporary copy; its messages name ``url``."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ragraphs-url-") as d:
        path = os.path.join(d, "page.pdf")
        with open(path, "wb") as fh:
            fh.write(body)
        try:
            return pdf_pages(path, warn=(lambda m: warn(m.replace(path, url, 1))) if warn else None)
        except InputError as e:
            raise InputError(f"{url}: {str(e).split(': ', 1)[-1]}") from e
