"""Fetch web pages safely and turn them into clean text paragraphs.

CRAG's web step (paper, section 4.5 and Appendix B) follows the result URLs, transcribes
the pages and splits them into paragraphs. :class:`PageFetcher` does that with guards:

- only ``http`` and ``https`` URLs;
- the host name is resolved once and every address is checked: private, loopback,
  link-local, multicast, reserved and unspecified addresses are refused unless
  ``allow_private=True``; the connection then goes to the checked address (no second DNS
  lookup), so a name cannot re-resolve to a private address in between;
- redirects are followed by hand (at most ``max_redirects``), each hop checked again;
- a timeout per socket operation and an overall deadline per page;
- a size cap: reading stops at ``max_bytes``;
- only HTML, XHTML and plain-text responses are read.

The page's text is *data*: it is extracted with trafilatura (lxml as a fallback), control
characters are removed, and the methods place it in the prompt's quoted "Passages" block,
never as instructions.
"""

from __future__ import annotations

import codecs
import contextvars
import functools
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator
from urllib.parse import quote, urljoin, urlsplit

from langgraph.errors import GraphBubbleUp

from ..errors import InputError

HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("text/plain",)


class FetchError(Exception):
    """A page could not be fetched (refused, failed, too slow, wrong type)."""


@dataclass
class FetchedPage:
    url: str
    title: str
    text: str
    paragraphs: list[str] = field(default_factory=list)
    truncated: bool = False
    content_type: str = ""
    status: int = 200


def is_public_address(ip: str) -> bool:
    addr = ipaddress.ip_address(ip)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return not (
        addr.is_private
        or addr.is_loopback
        or addr.is_link_local
        or addr.is_multicast
        or addr.is_reserved
        or addr.is_unspecified
        or getattr(addr, "is_site_local", False)
        or not addr.is_global  # the shared-address range 100.64.0.0/10 (carrier NAT) and the like
    )


_PATH_SAFE = "/%?=&:;@!$'()*+,~-._[]"


def check_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path+query) of an http(s) URL, or :class:`FetchError`."""
    try:
        u = urlsplit(url.strip())
    except ValueError as e:
        raise FetchError(f"bad URL {url!r}: {e}") from e
    scheme = (u.scheme or "").lower()
    if scheme not in ("http", "https"):
        raise FetchError(f"refused {url!r}: only http and https URLs are fetched")
    if not u.hostname:
        raise FetchError(f"bad URL {url!r}: no host")
    if u.username or u.password:
        raise FetchError(f"refused a URL of {u.hostname!r}: credentials in URLs are not allowed (nor shown)")
    try:
        port = u.port or (443 if scheme == "https" else 80)
    except ValueError as e:
        raise FetchError(f"bad URL {url!r}: {e}") from e
    # a search engine's "Café" or "a b" address: percent-encoded (http.client sends ASCII only)
    path = quote(u.path or "/", safe=_PATH_SAFE) + (f"?{quote(u.query, safe=_PATH_SAFE)}" if u.query else "")
    try:
        host = u.hostname.encode("idna").decode("ascii")
    except UnicodeError as e:
        raise FetchError(f"bad URL {url!r}: {e}") from e
    return scheme, host, port, path


def resolve(host: str, port: int, allow_private: bool) -> list[str]:
    """Resolve ``host``; refuse non-public addresses unless allowed. Returns every address, in
    the resolver's order (the connection tries each: ``localhost`` gives ``::1`` first, which a
    server listening on 127.0.0.1 alone refuses; only ``::1`` was tried until 2026-12-03)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise FetchError(f"cannot resolve {host!r}: {e}") from e
    addrs = list(dict.fromkeys(str(i[4][0]) for i in infos))
    if not addrs:
        raise FetchError(f"cannot resolve {host!r}")
    if not allow_private and (bad := [a for a in addrs if not is_public_address(a)]):  # every address checked
        raise FetchError(f"refused {host!r}: resolves to a private or loopback address ({bad[0]}); "
                         "set allow_private to fetch from local networks")
    return addrs


def _connect(ips: list[str], port: int, timeout: float | None, deadline: float) -> socket.socket:
    """A socket to the first of the checked ``ips`` that answers (a refused or unreachable one: the
    next), within ``deadline``; the last address's error when none does."""
    err: OSError = OSError(f"no address to connect to (port {port})")
    for ip in ips:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            return socket.create_connection((ip, port), min(timeout or left, left))
        except OSError as e:
            err = e
    raise err


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, ips: list[str], timeout: float, deadline: float):
        super().__init__(host, port, timeout=timeout)
        self._ips, self._deadline = ips, deadline

    def connect(self):
        self.sock = _connect(self._ips, self.port, self.timeout, self._deadline)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, ips: list[str], timeout: float, deadline: float, context: ssl.SSLContext):
        super().__init__(host, port, timeout=timeout, context=context)
        self._ips, self._deadline, self._ctx = ips, deadline, context

    def connect(self):
        raw = _connect(self._ips, self.port, self.timeout, self._deadline)
        self.sock = self._ctx.wrap_socket(raw, server_hostname=self.host)


def _clean(text: str) -> str:
    """Remove control characters (keep newlines and tabs)."""
    return "".join(ch for ch in text if ch in "\n\t" or ch >= " " and ch != "\x7f")


def extract_page(html: str, url: str = "") -> tuple[str, list[str]]:
    """(title, paragraphs) of an HTML page: trafilatura's main text, lxml as a fallback."""
    from lxml import html as lh

    title, doc = "", None
    html = re.sub(r"^\s*<\?xml\b[^>]*>", "", html)  # decoded: lxml refuses a str with an XML declaration (no title)
    try:
        doc = lh.fromstring(html)
        t = doc.findtext(".//title")
        title = " ".join((t or "").split())
    except Exception:
        doc = None
    import trafilatura  # a broken install is an error, not a silent fallback to the whole body

    text = ""
    try:
        text = (
            trafilatura.extract(
                html, url=url or None, include_comments=False, include_tables=False, favor_recall=True
            )
            or ""
        )
    except Exception:
        text = ""
    paras = [" ".join(p.split()) for p in text.split("\n") if p.strip()]
    if not paras and doc is not None:
        for bad in doc.xpath("//script|//style|//noscript|//template|//nav|//footer|//header"):
            bad.drop_tree()
        paras = [" ".join(el.text_content().split()) for el in doc.xpath("//body//p|//body//li")]
        paras = [p for p in paras if p]
        if not paras:
            body = doc.xpath("//body")
            t = " ".join(body[0].text_content().split()) if body else ""
            paras = [t] if t else []
    paras = [_clean(p) for p in paras]
    return _clean(title), [p for p in paras if p.strip()]


_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.I)


def _header_text(value: str) -> str:
    """A header http.client read as Latin-1, as UTF-8 where its bytes are, as ``requests`` does (a raw
    UTF-8 ``Location: /page/café`` was requested as ``/page/caf%C3%83%C2%A9`` until 2026-12-03)."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _shut(conn: http.client.HTTPConnection, socks: list) -> None:
    """Wake a read blocked on ``conn``'s socket (the fetch's deadline has passed)."""
    for sock in [*socks, conn.sock]:
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


# a charset named in an HTML or XML page's opening, by a <meta> tag or an XML declaration (any
# "charset=" was read, a text page's prose too, until 2026-12-03); the labels a browser reads as
# windows-1252 (WHATWG): an "iso-8859-1" page's curly quotes and euro signs were lost until 2026-12-03
_META_CHARSET = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([\w.:-]+)""", re.I)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml\b[^>]*?encoding\s*=\s*["']([\w.:-]+)""")
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_AS_1252 = frozenset("ansi_x3.4-1968 ascii cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 iso88591 "
                     "iso_8859-1 iso_8859-1:1987 l1 latin1 latin-1 us-ascii".split())


def codec_name(charset: str | None, body: bytes = b"") -> str | None:
    """The codec of ``body``'s byte order mark (UTF-8, UTF-16: it wins, as in a browser), else of the
    ``charset`` label (Latin-1 and ASCII as windows-1252); None for neither or an unknown label."""
    label = (charset or "").strip().strip("\"'").lower()
    try:
        return next((name for bom, name in _BOMS if body.startswith(bom)), None) or (
            codecs.lookup("cp1252" if label in _AS_1252 else label).name if label else None)
    except LookupError:
        return None


def decode_page(body: bytes, charset: str | None = None, ctype: str = "text/html") -> str:
    """A page's text in the charset of its byte order mark, else the one its header names, else, for an
    HTML or XML ``ctype`` ("" read as HTML), the one its XML declaration or ``<meta>`` names, else UTF-8
    (an ISO-8859-1 or windows-1251 page was read as UTF-8, its letters U+FFFD, until 2026-12-01)."""
    name = codec_name(charset, body)
    if not name and (ctype in HTML_TYPES or ctype == "" or ctype.endswith(("/xml", "+xml"))):
        m = _XML_ENCODING.search(body[:1024]) or _META_CHARSET.search(body[:4096])
        name = codec_name(m.group(1).decode("ascii")) if m else None
        name = "utf-8" if name and name.startswith("utf-16") else name  # read in ASCII bytes: not UTF-16 (WHATWG)
    return body.decode(name or "utf-8", "replace")


@functools.lru_cache(maxsize=1)
def _verified_context() -> ssl.SSLContext:
    return ssl.create_default_context()


class PageFetcher:
    """Fetch a page and extract its text (see the module doc for the guards)."""

    def __init__(
        self,
        *,
        timeout: float = 5.0,
        max_bytes: int = 2_000_000,
        allow_private: bool = False,
        max_redirects: int = 3,
        user_agent: str = "ragraphs/0.1 (+CRAG web knowledge)",
        verify_tls: bool = True,
    ):
        if timeout <= 0 or max_bytes <= 0:
            raise InputError("fetch timeout and max_bytes must be positive")
        self.timeout = float(timeout)
        self.max_bytes = int(max_bytes)
        self.allow_private = bool(allow_private)
        self.max_redirects = int(max_redirects)
        self.user_agent = user_agent
        # one verified context per process: building one reads the certificate bundle (30-40 ms,
        # paid on every web search until 2026-12-01)
        self.ssl_context = _verified_context() if verify_tls else ssl._create_unverified_context()

    def get(self, url: str, accept: str = "text/html,application/xhtml+xml,text/plain;q=0.8") -> tuple[str, int, str, bytes, bool]:
        """(final url, status, content type, body, truncated) with every guard applied."""
        final, status, ctype, _charset, body, truncated = self.get_with_charset(url, accept)
        return final, status, ctype, body, truncated

    def get_with_charset(self, url: str, accept: str = "text/html,application/xhtml+xml,text/plain;q=0.8"
                         ) -> tuple[str, int, str, str | None, bytes, bool]:
        """:meth:`get`, with the charset the response's ``Content-Type`` names (None without one)."""
        deadline = time.monotonic() + self.timeout * 2
        for _hop in range(self.max_redirects + 1):
            scheme, host, port, path = check_url(url)
            ips = resolve(host, port, self.allow_private)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise FetchError(f"timed out fetching {url}")
            t = min(self.timeout, remaining)
            conn = (
                _PinnedHTTPSConnection(host, port, ips, t, deadline, self.ssl_context)
                if scheme == "https"
                else _PinnedHTTPConnection(host, port, ips, t, deadline)
            )
            # the deadline holds while headers and body trickle in: the socket is shut when it passes
            socks: list = []  # the response keeps the socket after the connection lets go of it
            watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), _shut, (conn, socks))
            watchdog.daemon = True
            watchdog.start()
            try:
                conn.request("GET", path, headers={"User-Agent": self.user_agent, "Accept": accept, "Accept-Encoding": "identity"})
                socks.append(conn.sock)
                resp = conn.getresponse()
                if resp.status in (301, 302, 303, 307, 308):
                    loc = resp.getheader("Location")
                    if not loc:
                        raise FetchError(f"redirect without Location from {url}")
                    url = urljoin(url, _header_text(loc))
                    continue
                coding = (resp.getheader("Content-Encoding") or "identity").strip().lower()
                if coding not in ("", "identity"):  # asked for identity; a server that compresses anyway
                    raise FetchError(f"unsupported Content-Encoding {coding!r} from {url}")
                full_type = resp.getheader("Content-Type") or ""
                ctype = full_type.split(";")[0].strip().lower()
                m = _CHARSET.search(full_type)
                chunks: list[bytes] = []
                size = 0
                truncated = False
                while True:
                    if time.monotonic() > deadline:
                        raise FetchError(f"timed out reading {url}")
                    chunk = resp.read(min(65536, self.max_bytes - size + 1))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > self.max_bytes:
                        truncated = True
                        break
                if time.monotonic() >= deadline:  # the watchdog's shut socket reads as the end of the page
                    raise FetchError(f"timed out reading {url}")
                body = b"".join(chunks)[: self.max_bytes]
                return url, resp.status, ctype, m.group(1) if m else None, body, truncated
            except (OSError, http.client.HTTPException) as e:
                if time.monotonic() >= deadline:
                    raise FetchError(f"timed out fetching {url}") from e
                raise FetchError(f"failed to fetch {url}: {type(e).__name__}: {e}") from e
            finally:
                watchdog.cancel()
                conn.close()
        raise FetchError(f"too many redirects from {url}")

    def fetch(self, url: str) -> FetchedPage:
        final, status, ctype, charset, body, truncated = self.get_with_charset(url)
        if status >= 400:
            raise FetchError(f"HTTP {status} from {final}")
        if ctype and ctype not in HTML_TYPES + TEXT_TYPES:
            raise FetchError(f"not a text page ({ctype}) at {final}")
        text = decode_page(body, charset, ctype).replace("\r\n", "\n").replace("\r", "\n")
        if ctype in TEXT_TYPES:
            paras = [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]
            title = ""
            paras = [_clean(p) for p in paras]
        else:
            title, paras = extract_page(text, final)
        return FetchedPage(final, title, "\n".join(paras), paras, truncated, ctype, status)


def fetched_pages(fetcher: "PageFetcher", results: list, max_workers: int = 5) -> Iterator[tuple[int, str, FetchedPage | None, str | None]]:
    """Fetch the pages of the web ``results`` that have an address (an offline snapshot's result
    is its page already: never fetched), in parallel, in the caller's context (callbacks, a
    LangGraph ``interrupt()``, which pauses the run); yields ``(index, url, page, None)`` for a
    page with text, ``(index, url, None, why)`` for one whose result keeps its snippet."""
    import concurrent.futures as cf

    urls = [(i, (p.get("meta") or {}).get("url")) for i, p in enumerate(results) if not (p.get("meta") or {}).get("offline")]
    todo = [(i, str(u)) for i, u in urls if u]
    if not todo:
        return
    with cf.ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(todo))), thread_name_prefix="fetch") as pool:
        futs = {i: pool.submit(contextvars.copy_context().run, fetcher.fetch, u) for i, u in todo}
        for i, u in todo:
            try:
                page = futs[i].result()
            except GraphBubbleUp:  # an interrupt() inside the fetcher pauses the run; it is no failure
                raise
            except Exception as e:  # refused, failed, too slow, wrong type: keep the snippet
                yield i, u, None, f"{type(e).__name__}: {str(e)[:200]}"
                continue
            snippet = (results[i].get("text") or "").strip()
            # a stub ("Redirecting...", "please enable JavaScript") says less than the snippet (it replaced it until 2026-12-03)
            if not page.paragraphs or len(page.text) < len(snippet):
                why = "no text extracted" if not page.paragraphs else "the page's text is shorter than its snippet (a stub)"
                yield i, u, None, why + ("; using the snippet" if snippet else "; the result has no snippet")
                continue
            yield i, u, page, None


def fetch_results(fetcher: "PageFetcher", results: list, max_workers: int = 5) -> tuple[list, list[dict]]:
    """Replace each web result's snippet by the text of its page (:func:`fetched_pages`; a page that fails or
    says less keeps its snippet). Returns the results and one report per URL tried (``ok``, ``paragraphs`` or ``error``)."""
    out = list(results)
    report: list[dict] = []
    for i, u, page, error in fetched_pages(fetcher, out, max_workers):
        if page is None:
            report.append({"url": u, "ok": False, "error": error})
            continue
        p = out[i]
        meta = {**(p.get("meta") or {}), "fetched": True, "snippet": (p.get("text") or "")[:500]}
        if page.truncated:
            meta["truncated"] = True
        out[i] = {**p, "title": p.get("title") or page.title, "text": page.text, "meta": meta}
        report.append({"url": u, "ok": True, "paragraphs": len(page.paragraphs)})
    return out, report


def query_paragraphs(query: str, text: str, max_chars: int) -> tuple[str, int, int]:
    """The paragraphs of a fetched page's ``text`` (one a line) that BM25 ranks best for
    ``query`` (those sharing a word with it) first, the rest of ``max_chars`` filled with the
    page's other paragraphs from its opening, all in page order: ERM4's reading of a whole page
    (paper, section 6: BM25 filters a page's irrelevant parts out before it is used and cached).
    A repeated paragraph (navigation, a caption) counts once. Returns the text and how many of
    how many paragraphs were kept."""
    from ..state.types import make_passage
    from .bm25 import BM25Index
    from .text import text_key

    seen: set[str] = set()
    paras = []
    for p in (text or "").split("\n"):
        key = text_key(p)
        if key and key not in seen:
            seen.add(key)
            paras.append(p)
    text = "\n".join(paras)
    if len(text) <= max_chars:
        return text, len(paras), len(paras)
    if len(paras) == 1:  # one long paragraph: its opening, as the reader would read it
        return paras[0][:max_chars], 1, 1
    scores = BM25Index([make_passage("", p, "web") for p in paras]).scores(query)
    matched = [i for i in sorted(range(len(paras)), key=lambda i: (-float(scores[i]), i)) if float(scores[i]) > 0]
    order = matched + [i for i in range(len(paras)) if i not in set(matched)]  # then the page from its opening
    kept: list[int] = []
    used = 0
    for i in order:
        if kept and used + len(paras[i]) > max_chars:
            continue
        kept.append(i)
        used += len(paras[i]) + 1
    kept.sort()
    return "\n".join(paras[i] for i in kept)[:max_chars], len(kept), len(paras)  # one long paragraph is cut too
