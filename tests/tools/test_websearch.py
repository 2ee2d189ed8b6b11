"""Web search backends and the guarded page fetcher, against real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from ragraphs.errors import ConfigError
from ragraphs.state.types import make_passage
from ragraphs.tools.fetch import FetchError, PageFetcher, extract_page, is_public_address
from ragraphs.tools.websearch import (
    DuckDuckGoSearch,
    OfflineCorpusSearch,
    SearxngSearch,
    WebSearchError,
    make_web_search,
    prefer_wikipedia,
    search_checked,
)

PAGE = """<!doctype html><html><head><title>Evan Abraham - Example Encyclopedia</title>
<script>var secret = "SCRIPT-TEXT-MUST-NOT-APPEAR";</script><style>p {color: red}</style></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a> | NAV-TEXT</nav>
<article><h1>Evan Abraham</h1>
<p>Evan Abraham (1853-1911) was a Welsh trade unionist and politician.</p>
<p>He was born in Swansea, Wales. He worked as a tinplate worker before he became active in the union movement.</p>
<p>Later in life he served on the local council for many years and was known for his work on housing.</p>
</article><footer>Copyright FOOTER-TEXT</footer></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    routes: dict = {}

    def log_message(self, *a):  # quiet
        pass

    def do_GET(self):
        u = urlsplit(self.path)
        fn = self.routes.get(u.path)
        if fn is None:
            self.send_response(404)
            self.end_headers()
            return
        fn(self, parse_qs(u.query))


def _send(h, body: bytes, ctype="text/html; charset=utf-8", status=200, headers=None):
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(body)))
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(body)


@pytest.fixture
def server():
    routes: dict = {}
    handler = type("H", (_Handler,), {"routes": routes})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.handle_error = lambda request, client_address: None  # a client that gave up is expected
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    yield base, routes
    srv.shutdown()
    srv.server_close()


def test_addresses_classified():
    assert not is_public_address("127.0.0.1")
    assert not is_public_address("10.1.2.3")
    assert not is_public_address("192.168.0.1")
    assert not is_public_address("169.254.169.254")  # cloud metadata
    assert not is_public_address("100.64.0.1")  # shared address space (carrier-grade NAT)
    assert not is_public_address("::1")
    assert not is_public_address("::ffff:127.0.0.1")
    assert not is_public_address("0.0.0.0")
    assert is_public_address("93.184.216.34")


def test_fetcher_refuses_schemes_and_private_hosts(server):
    base, routes = server
    routes["/page"] = lambda h, q: _send(h, PAGE.encode())
    f = PageFetcher(timeout=2)
    for url in ("file:///etc/passwd", "ftp://example.org/x", "gopher://x", "javascript:alert(1)", "http://user:pw@example.org/"):
        with pytest.raises(FetchError):
            f.fetch(url)
    with pytest.raises(FetchError, match="private or loopback"):
        f.fetch(base + "/page")
    with pytest.raises(FetchError, match="private or loopback"):
        f.fetch("http://localhost:9/")
    # allowed when configured
    page = PageFetcher(timeout=2, allow_private=True).fetch(base + "/page")
    assert "He was born in Swansea, Wales." in page.text


def test_fetcher_extracts_main_text_without_scripts_or_chrome(server):
    base, routes = server
    routes["/page"] = lambda h, q: _send(h, PAGE.encode())
    page = PageFetcher(timeout=2, allow_private=True).fetch(base + "/page")
    assert page.title.startswith("Evan Abraham")
    assert any(p.startswith("He was born in Swansea") for p in page.paragraphs)
    assert "SCRIPT-TEXT-MUST-NOT-APPEAR" not in page.text and "color: red" not in page.text
    assert "NAV-TEXT" not in page.text and "FOOTER-TEXT" not in page.text
    assert len(page.paragraphs) >= 3


def test_fetcher_size_cap_timeout_type_and_redirects(server):
    base, routes = server
    big = ("<html><body>" + "<p>" + "word " * 2000 + "</p>" * 1 + "</body></html>").encode()
    routes["/big"] = lambda h, q: _send(h, big)
    routes["/bin"] = lambda h, q: _send(h, b"\x00\x01\x02", ctype="application/octet-stream")
    routes["/err"] = lambda h, q: _send(h, b"nope", status=500)

    def slow(h, q):
        time.sleep(3)
        _send(h, PAGE.encode())

    routes["/slow"] = slow
    routes["/hop"] = lambda h, q: _send(h, b"", status=302, headers={"Location": "/big"})
    routes["/loop"] = lambda h, q: _send(h, b"", status=302, headers={"Location": "/loop"})
    routes["/to-file"] = lambda h, q: _send(h, b"", status=302, headers={"Location": "file:///etc/passwd"})
    f = PageFetcher(timeout=1, max_bytes=1000, allow_private=True)
    _u, status, _c, body, truncated = f.get(base + "/big")
    assert status == 200 and truncated and len(body) == 1000
    with pytest.raises(FetchError, match="not a text page"):
        f.fetch(base + "/bin")
    with pytest.raises(FetchError, match="HTTP 500"):
        f.fetch(base + "/err")
    t0 = time.monotonic()
    with pytest.raises(FetchError):
        f.fetch(base + "/slow")
    assert time.monotonic() - t0 < 2.5
    final, *_ = f.get(base + "/hop")
    assert final.endswith("/big")
    with pytest.raises(FetchError, match="redirects"):
        f.get(base + "/loop")
    with pytest.raises(FetchError, match="only http"):
        f.get(base + "/to-file")


def test_searxng_backend_reads_json_api(server):
    base, routes = server
    seen = []

    def search(h, q):
        seen.append(q)
        rows = [
            {"url": "https://example.org/a", "title": "A page", "content": "snippet a"},
            {"url": "https://en.wikipedia.org/wiki/Evan_Abraham", "title": "Evan Abraham", "content": "Welsh trade unionist"},
            {"title": "no url, no content"},
        ]
        _send(h, json.dumps({"query": q["q"][0], "results": rows}).encode(), ctype="application/json")

    routes["/search"] = search
    s = SearxngSearch(base, timeout=2)
    res = s.search("Evan Abraham, born", k=5)
    assert seen[0]["format"] == ["json"] and seen[0]["q"] == ["Evan Abraham, born"]
    assert [p["title"] for p in res] == ["A page", "Evan Abraham"]
    assert all(p["source"] == "web" and p["meta"]["url"] for p in res)
    # Wikipedia pages go first, as in the paper
    assert prefer_wikipedia(res)[0]["title"] == "Evan Abraham"
    routes["/search"] = lambda h, q: _send(h, b"<html>format disabled</html>", status=403)
    with pytest.raises(WebSearchError, match="403"):
        s.search("x")
    # JSON that is not SearXNG's object (a list, or results that are not a list) is one
    # clear WebSearchError, not an AttributeError from inside the reader
    for body in (b"[1, 2]", b'{"results": "none"}'):
        routes["/search"] = lambda h, q, body=body: _send(h, body, ctype="application/json")
        with pytest.raises(WebSearchError, match="'results' list"):
            s.search("x")


def test_make_web_search_specs(data_dir, monkeypatch):
    monkeypatch.delenv("RAGRAPHS_WEB", raising=False)
    assert make_web_search(None) is None and make_web_search("none") is None
    off = make_web_search(f"offline:{data_dir / 'popqa.web.sample.jsonl'}")
    assert isinstance(off, OfflineCorpusSearch)
    hits = off.search("Alan Bjerga journalist", 3)
    assert hits and all(h["source"] == "web" for h in hits)
    monkeypatch.setenv("RAGRAPHS_WEB", "searxng:http://127.0.0.1:8888")
    assert isinstance(make_web_search(None), SearxngSearch)
    assert make_web_search("ddg").name == "ddg"
    for bad in ("offline:", "offline:/no/such/file.jsonl", "searxng:ftp://x", "bing"):
        with pytest.raises(ConfigError):
            make_web_search(bad)


def test_make_web_search_empty_spec_reads_ragraphs_web(data_dir, monkeypatch):
    """An empty spec reads ``RAGRAPHS_WEB``, as ``None`` does and as the ``web`` setting's
    default "" does in the graphs (it returned None until 2026-11-30, against its docstring)."""
    snapshot = data_dir / "popqa.web.sample.jsonl"
    monkeypatch.setenv("RAGRAPHS_WEB", f"offline:{snapshot}")
    for spec in ("", "  ", None):
        assert isinstance(make_web_search(spec), OfflineCorpusSearch)
    assert make_web_search("none") is None and make_web_search("off") is None  # an explicit none wins
    monkeypatch.delenv("RAGRAPHS_WEB")
    assert make_web_search("") is None


def test_extract_page_falls_back_to_paragraphs_for_tiny_pages():
    title, paras = extract_page("<html><head><title>T</title></head><body><p>One short line.</p></body></html>")
    assert title == "T" and paras == ["One short line."]


def test_prefer_wikipedia_is_stable():
    ps = [make_passage(t, t, "web", url=u) for t, u in [("a", "https://x.org"), ("b", "https://de.wikipedia.org/wiki/B"), ("c", "https://y.org")]]
    assert [p["title"] for p in prefer_wikipedia(ps)] == ["b", "a", "c"]


class LocalDDGS:
    """Stands in for a ``ddgs.DDGS`` client: answers ``text()`` from a list (or raises), and
    keeps every call, so the adapter is tested with no network."""

    def __init__(self, rows=None, error=None):
        self.rows, self.error, self.calls = rows or [], error, []

    def text(self, query, **kw):
        self.calls.append((query, kw))
        if self.error is not None:
            raise self.error
        return list(self.rows)


DDG_ROWS = [
    {"title": "Evan  Abraham - Example", "href": "https://example.org/evan", "body": "Evan Abraham was a\nWelsh trade unionist."},
    {"title": "Evan Abraham - Wikipedia", "href": "https://en.wikipedia.org/wiki/Evan_Abraham", "body": "Welsh politician (1853-1911)."},
    {"title": "no body, no link", "href": "", "body": "   "},
    "not a mapping",
    {"title": "Only a link", "href": "https://example.net/only-link", "body": ""},
    {"title": "Fourth", "href": "https://example.com/4", "body": "More text."},
]


def test_duckduckgo_adapter_maps_ddgs_rows_to_web_passages():
    client = LocalDDGS(DDG_ROWS)
    ddg = DuckDuckGoSearch(client=client, region="uk-en", backend="duckduckgo")
    hits = ddg.search("Evan Abraham trade unionist", k=3)
    assert client.calls == [("Evan Abraham trade unionist", {"region": "uk-en", "max_results": 3, "backend": "duckduckgo"})]
    # blank rows and non-mappings are dropped; the first k usable ones kept, in the engine's order
    assert [h["title"] for h in hits] == ["Evan Abraham - Example", "Evan Abraham - Wikipedia", "Only a link"]
    assert hits[0]["text"] == "Evan Abraham was a Welsh trade unionist." and hits[2]["text"] == ""
    assert [h["meta"]["url"] for h in hits] == [DDG_ROWS[0]["href"], DDG_ROWS[1]["href"], DDG_ROWS[4]["href"]]
    assert all(h["source"] == "web" and h["meta"]["engine"] == "ddg" for h in hits)
    assert [h["meta"]["rank"] for h in hits] == [0, 1, 2]
    assert prefer_wikipedia(hits)[0]["title"] == "Evan Abraham - Wikipedia"
    # through the checked call the nodes make: the link-only result is kept for fetching
    got, bad = search_checked(ddg, "Evan Abraham", 5, timeout=5)
    assert bad == 0 and len(got) == 4 and got[3]["title"] == "Fourth"


def test_duckduckgo_adapter_errors_and_empty_answers():
    from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

    assert DuckDuckGoSearch(client=LocalDDGS(error=DDGSException("No results found."))).search("zzqx", 3) == []
    assert DuckDuckGoSearch(client=LocalDDGS([])).search("zzqx", 3) == []
    for err, shown in ((RatelimitException("202 Ratelimit"), "RatelimitException: 202 Ratelimit"),
                       (TimeoutException("timed out"), "TimeoutException"),
                       (ConnectionError("network is unreachable"), "network is unreachable")):
        with pytest.raises(WebSearchError, match=shown):
            DuckDuckGoSearch(client=LocalDDGS(error=err)).search("q", 3)


def test_duckduckgo_default_client_is_ddgs_with_the_timeout():
    import ddgs

    ddg = make_web_search("ddg", timeout=3)
    assert isinstance(ddg, DuckDuckGoSearch) and ddg.timeout == 3.0
    client = ddg._client()  # built, not used: no network here
    assert isinstance(client, ddgs.DDGS) and client._timeout == 3


def _langchain_web(docs=None, error=None):
    from langchain_core.retrievers import BaseRetriever

    class UsersWebRetriever(BaseRetriever):  # as TavilySearchAPIRetriever or WikipediaRetriever would be
        def _get_relevant_documents(self, query, *, run_manager=None):
            if error:
                raise error
            return docs

    return UsersWebRetriever()


def test_a_langchain_retriever_serves_as_the_web_search():
    from langchain_core.documents import Document

    from ragraphs.components import Components
    from ragraphs.tools.websearch import LangChainWebSearch, WebSearchError

    docs = [Document(page_content="Lima is the capital\n and largest city of Peru.",
                     metadata={"title": "Lima", "source": "https://en.wikipedia.org/wiki/Lima"}),
            Document(page_content="Peru's capital moved from Jauja.", metadata={"url": "https://example.org/jauja"}),
            Document(page_content="A note with no address.", metadata={"source": "notes.txt"})]
    web = Components(web_search=_langchain_web(docs)).web_search
    assert isinstance(web, LangChainWebSearch) and web.name == "UsersWebRetriever"
    got = web.search("capital of Peru", k=3)
    assert [p["title"] for p in got] == ["Lima", "https://example.org/jauja", ""]
    assert [p["meta"].get("url") for p in got] == ["https://en.wikipedia.org/wiki/Lima", "https://example.org/jauja", ""]
    assert got[0]["text"] == "Lima is the capital and largest city of Peru." and {p["source"] for p in got} == {"web"}
    assert len(web.search("capital of Peru", k=1)) == 1
    with pytest.raises(WebSearchError, match="UsersWebRetriever failed: RuntimeError: quota"):
        LangChainWebSearch(_langchain_web(error=RuntimeError("quota"))).search("q", 3)
    with pytest.raises(ConfigError, match="web_search must be a LangChain retriever, a LangChain tool or have search"):
        Components(web_search="https://my-search.example")


def test_a_langchain_search_tool_serves_as_the_web_search(server):
    """langchain-community's SearxSearchResults tool, against a SearXNG JSON API on 127.0.0.1:
    its ``str(list)`` output becomes web passages, in the engine's order, with their addresses."""
    from langchain_community.tools.searx_search.tool import SearxSearchResults
    from langchain_community.utilities.searx_search import SearxSearchWrapper

    from ragraphs.components import Components
    from ragraphs.tools.websearch import LangChainToolWebSearch

    base, routes = server
    seen = []

    def search(h, q):
        seen.append(q)
        rows = [{"url": "https://en.wikipedia.org/wiki/Evan_Abraham", "title": "Evan Abraham",
                 "content": "Evan Abraham (1853-1911) was a Welsh trade unionist.", "engines": ["wikipedia"],
                 "category": "general"},
                {"url": "https://example.org/swansea", "title": "Swansea", "content": "A city in Wales.",
                 "engines": ["bing"], "category": "general"}]
        _send(h, json.dumps({"query": q["q"][0], "results": rows, "answers": []}).encode(), ctype="application/json")

    routes["/search"] = search
    tool = SearxSearchResults(wrapper=SearxSearchWrapper(searx_host=base + "/search"), num_results=5)
    web = Components(web_search=tool).web_search
    assert isinstance(web, LangChainToolWebSearch) and web.name == "searx_search_results"
    got = web.search("Evan Abraham trade unionist", k=5)
    assert seen and seen[0]["q"] == ["Evan Abraham trade unionist"] and seen[0]["format"] == ["json"]
    assert [p["title"] for p in got] == ["Evan Abraham", "Swansea"]
    assert [p["meta"]["url"] for p in got] == ["https://en.wikipedia.org/wiki/Evan_Abraham", "https://example.org/swansea"]
    assert got[0]["text"] == "Evan Abraham (1853-1911) was a Welsh trade unionist." and {p["source"] for p in got} == {"web"}
    assert len(web.search("Evan Abraham", k=1)) == 1
    routes["/search"] = lambda h, q: _send(h, b"rate limited", status=429)
    with pytest.raises(WebSearchError, match="searx_search_results failed: "):
        web.search("Evan Abraham")


def test_search_tools_outputs_of_every_common_shape_become_passages():
    from langchain_core.documents import Document
    from langchain_core.tools import tool

    from ragraphs.tools.websearch import LangChainToolWebSearch, tool_results

    @tool
    def tavily_like(query: str) -> dict:
        """Search the web."""
        return {"query": query, "results": [{"title": "Lima", "url": "https://en.wikipedia.org/wiki/Lima",
                                             "content": "Lima is the capital of Peru.", "score": 0.9}]}

    web = LangChainToolWebSearch(tavily_like)
    got = web.search("capital of Peru", k=3)
    assert [(p["title"], p["meta"]["url"], p["text"]) for p in got] == [
        ("Lima", "https://en.wikipedia.org/wiki/Lima", "Lima is the capital of Peru.")]
    # DuckDuckGoSearchResults' list and JSON forms, its "snippet: ..." prose and DuckDuckGoSearchRun's text
    ddg = [{"snippet": "Cusco is a city in Peru.", "title": "Cusco", "link": "https://example.org/cusco"}]
    assert tool_results(ddg) == tool_results(json.dumps(ddg)) == [
        {"title": "Cusco", "url": "https://example.org/cusco", "text": "Cusco is a city in Peru."}]
    assert tool_results("Cusco is a city in Peru. It was the Inca capital.") == [
        {"title": "", "url": "", "text": "Cusco is a city in Peru. It was the Inca capital."}]
    assert tool_results("[not a list, just brackets] and prose")[0]["text"].startswith("[not a list")
    assert tool_results([Document(page_content="Machu Picchu is near Cusco.", metadata={"source": "https://example.org/mp"})]) == [
        {"title": "", "url": "https://example.org/mp", "text": "Machu Picchu is near Cusco."}]
    assert tool_results("") == tool_results(None) == tool_results([{"title": "no text, no address"}]) == []

    @tool
    def broken(query: str) -> str:
        """Search the web."""
        raise RuntimeError("quota exceeded")

    with pytest.raises(WebSearchError, match="broken failed: RuntimeError: quota exceeded"):
        LangChainToolWebSearch(broken).search("q")


def test_an_async_search_tool_of_your_own_searches_in_sync_and_async_runs():
    """A ``@tool async def`` (``invoke`` refuses it: "StructuredTool does not support sync
    invocation") is awaited on an event loop of its own: CRAG's Incorrect route reads its
    results under ``invoke`` and ``ainvoke``, and a search called where a loop already runs (a
    notebook cell) goes through a thread of its own. **Was a bug** (until 2026-12-03): every
    search failed, recorded as ``web_error``, and CRAG answered from the corpus alone."""
    import asyncio

    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.tools import tool

    from fakes import ConstJudge
    from ragraphs.components import Components
    from ragraphs.graphs.crag import build_crag_graph
    from ragraphs.tools.web_tools import LangChainToolWebSearch

    asked = []

    @tool
    async def web(query: str) -> str:
        """Search the web."""
        asked.append(query)
        await asyncio.sleep(0)
        return json.dumps([{"title": "Lima", "url": "https://en.wikipedia.org/wiki/Lima",
                            "content": "Lima is the capital and largest city of Peru."}])

    class Nothing:
        def search(self, q, k, mode="dense"):
            return [{"id": "x", "title": "Bananas", "text": "A banana is a fruit.", "source": "corpus", "score": 0.1}]

    def graph():
        return build_crag_graph(Components(llm=FakeListChatModel(responses=["Lima"] * 8), retriever=Nothing(),
                                           web_search=web, judges={"evaluator": ConstJudge(-0.9)}))

    context = {"fetch_pages": False}
    for out in (graph().invoke({"question": "What is the capital of Peru?"}, context=context),
                asyncio.run(graph().ainvoke({"question": "What is the capital of Peru?"}, context=context))):
        assert out["action"] == "incorrect" and not out.get("web_error")
        assert [p["meta"]["url"] for p in out["passages"] if p["source"] == "web"] == ["https://en.wikipedia.org/wiki/Lima"]
    assert len(asked) == 2

    async def in_a_running_loop():
        return LangChainToolWebSearch(web).search("capital of Peru", k=1)

    assert [p["title"] for p in asyncio.run(in_a_running_loop())] == ["Lima"] and len(asked) == 3


def test_result_metadata_that_names_a_passage_field_is_left_out():
    from ragraphs.tools.websearch import usable_results

    got, bad = usable_results([{"title": "Evan Abraham", "text": "A Welsh footballer.",
                                 "meta": {"url": "https://en.wikipedia.org/wiki/Evan_Abraham", "source": "wikipedia", "score": 3}}])
    assert bad == 0 and got[0]["source"] == "web" and got[0]["meta"] == {"url": "https://en.wikipedia.org/wiki/Evan_Abraham"}


def test_an_offline_snapshot_skips_what_is_not_a_page_and_never_fetches(tmp_path, capsys):
    from ragraphs.tools.websearch import OfflineCorpusSearch, make_web_search

    snap = tmp_path / "snap.jsonl"
    snap.write_text('{"results": ["a page as a string", {"title": "Lima", "text": "Lima is the capital of Peru.", "url": "https://example.org/Lima"}]}\n')
    (hit,) = OfflineCorpusSearch(str(snap)).search("capital of Peru", 1)
    assert hit["meta"]["offline"] and "not an object" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="is a folder, not a JSONL file"):
        make_web_search(f"offline:{tmp_path}")
    assert make_web_search(f"offline:{snap}, {snap}") is not None  # spaces after the comma


def test_a_trickling_page_meets_the_fetchs_deadline(server):
    base, routes = server

    def drip(h, q):
        h.send_response(200)
        h.send_header("Content-Type", "text/html")
        h.end_headers()
        try:
            for _ in range(200):  # one byte every 0.1 s: 20 s in all
                h.wfile.write(b"x")
                h.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass

    routes["/drip"] = drip
    t0 = time.monotonic()
    with pytest.raises(FetchError, match="timed out"):
        PageFetcher(timeout=0.5, allow_private=True).fetch(f"{base}/drip")
    assert time.monotonic() - t0 < 3.0  # the deadline (2 x timeout), not the page's 20 s


def test_pages_in_their_own_charset_and_addresses_with_non_ascii_characters(server):
    base, routes = server
    page = "<html><head><title>Café</title></head><body><p>Café Müller in Düsseldorf is a café and a long paragraph of text.</p></body></html>"
    routes["/latin"] = lambda h, q: _send(h, page.encode("iso-8859-1"), "text/html; charset=iso-8859-1")
    routes["/meta"] = lambda h, q: _send(h, page.replace("<head>", '<head><meta charset="iso-8859-1">').encode("iso-8859-1"), "text/html")
    routes["/wiki/Caf%C3%A9"] = lambda h, q: _send(h, page.encode("utf-8"))
    f = PageFetcher(timeout=5, allow_private=True)
    for path in ("/latin", "/meta", "/wiki/Café"):
        got = f.fetch(f"{base}{path}")
        assert got.title == "Café" and "Müller in Düsseldorf" in got.text, path


def test_duckduckgo_results_tool_in_its_default_string_form_keeps_each_link():
    # its string output ("snippet: ..., title: ..., link: ...") was read as one result with no address
    from langchain_community.tools import DuckDuckGoSearchResults
    from langchain_community.utilities import DuckDuckGoSearchAPIWrapper

    from ragraphs.tools.websearch import as_web_search

    class FakeWrapper(DuckDuckGoSearchAPIWrapper):  # the engine's answer, without the network
        def results(self, query, max_results, source=None):
            return [{"snippet": f"{query} one", "title": "One", "link": "https://en.wikipedia.org/wiki/One"},
                    {"snippet": f"{query} two", "title": "Two", "link": "https://example.org/two"}]

    tool = DuckDuckGoSearchResults(api_wrapper=FakeWrapper())
    got = as_web_search(tool).search("Lima", 5)
    assert [(p["title"], p["meta"]["url"]) for p in got] == [("One", "https://en.wikipedia.org/wiki/One"),
                                                            ("Two", "https://example.org/two")]


def test_erm4_reads_the_paragraphs_of_a_fetched_page_its_query_asks_about(server):
    """ERM4 (paper, section 6): a fetched page is cut by BM25 to the paragraphs of the query
    that found it, up to ``max_passage_chars``, in page order; a short page stays whole."""
    from types import SimpleNamespace

    from ragraphs.components import Components
    from ragraphs.nodes.erm4 import make_external_retrieve
    from ragraphs.settings import ERM4Context
    from ragraphs.tools.fetch import query_paragraphs

    base, routes = server
    routes["/page"] = lambda h, q: _send(h, PAGE.encode())

    class OnePage:
        def search(self, query, k=5):
            return [{"id": "w0", "title": "Evan Abraham", "text": "snippet", "source": "web",
                     "meta": {"url": base + "/page"}}]

    node = make_external_retrieve(Components(web_search=OnePage()))
    state = {"queries": ["born in Swansea, Wales"], "outside": [{"query": "born in Swansea, Wales"}]}
    ctx = ERM4Context(external="web", use_memory=False, filter="none", k=1, fetch_allow_private=True,
                      max_passage_chars=150)
    out = node(state, SimpleNamespace(context=ctx))
    (got,) = out["external_knowledge"]
    # the query's paragraph, then the budget's rest from the page's opening (its heading), page order
    assert got["text"] == ("Evan Abraham\nHe was born in Swansea, Wales. He worked as a tinplate worker before he "
                           "became active in the union movement.")
    assert got["meta"]["fetched"] and got["meta"]["paragraphs_kept"] == "2/4"
    whole = node(state, SimpleNamespace(context=ERM4Context(external="web", use_memory=False, filter="none", k=1,
                                                             fetch_allow_private=True)))
    assert "housing" in whole["external_knowledge"][0]["text"]  # the page fits: kept whole
    # paragraphs keep their page order; a query sharing no word keeps the opening
    text = "alpha one\nbeta two\ngamma three\ndelta four"
    assert query_paragraphs("delta beta", text, 20) == ("beta two\ndelta four", 2, 4)
    assert query_paragraphs("zeta", text, 10) == ("alpha one", 1, 4)
    long = "about the harbour " * 400 + "\nother things\nmore other things"
    got, kept, total = query_paragraphs("harbour", long, 1200)
    assert len(got) == 1200 and (kept, total) == (1, 3)  # a long best paragraph is cut to the budget too
    nav = "\n".join(["Navigation: castle tickets"] * 6 + ["The castle was built in 1283."] + ["Other text here."] * 3)
    assert query_paragraphs("castle built", nav, 40) == ("The castle was built in 1283.", 1, 3)
    assert query_paragraphs("castle built 1283", nav, 60)[1:] == (2, 3)  # a repeated line counts once


def test_erm4_fetches_a_page_once_and_keeps_each_querys_cut_and_web_results_reach_the_filter(server):
    """A page two outside queries find is fetched once and cut for each (its own id: both reach the
    filter); with external=both the corpus and the web results alternate in each query's list, so
    the web's reach the mixed order when two queries fill max_knowledge (review of 2026-11-30)."""
    from types import SimpleNamespace

    from fakes import LexicalRetriever
    from ragraphs.components import Components
    from ragraphs.nodes.erm4 import make_external_retrieve
    from ragraphs.nodes.erm4_parsing import filter_candidates
    from ragraphs.settings import ERM4Context
    from ragraphs.state.types import make_passage

    base, routes = server
    gets = []
    body = ("<html><body><article><h1>Evan Abraham</h1>" + "".join(f"<p>Filler paragraph number {i} about nothing.</p>"
            for i in range(12)) + "<p>He was born in Swansea in 1853.</p><p>He died in Cardiff in 1911.</p>"
            "</article></body></html>")
    routes["/evan"] = lambda h, q: (gets.append(1), _send(h, body.encode()))

    class Web:
        def search(self, query, k=5):
            return [{"id": "w", "title": "Evan Abraham", "text": "snippet", "source": "web", "meta": {"url": base + "/evan"}}]

    corpus = [make_passage(f"Doc {i}", f"Evan Abraham Swansea Cardiff note {i}") for i in range(12)]
    node = make_external_retrieve(Components(web_search=Web(), retriever=LexicalRetriever(corpus)))
    qs = ["Evan Abraham born Swansea year", "Evan Abraham died Cardiff year"]
    state = {"queries": qs, "outside": [{"query": q} for q in qs]}
    ctx = ERM4Context(external="both", use_memory=False, filter="none", k=5, fetch_allow_private=True, max_passage_chars=60)
    out = node(state, SimpleNamespace(context=ctx))
    assert len(gets) == 1  # one fetch for both queries
    cuts = [p for p in out["external_knowledge"] if p.get("source") == "web"]
    assert "born in Swansea" in cuts[0]["text"] and "Cardiff" not in cuts[0]["text"]
    assert "died in Cardiff" in cuts[1]["text"] and "Swansea" not in cuts[1]["text"]
    assert cuts[0]["id"] != cuts[1]["id"] and cuts[0]["meta"]["page_id"] == cuts[1]["meta"]["page_id"]
    picked = filter_candidates({"queries": qs, **out}, 4)
    assert sum(p.get("source") == "web" for p in picked) == 2  # corpus 1st, web 1st of each query


def test_erm4_fetches_within_its_size_cap_with_one_fetcher_per_settings(server):
    """Review of 2026-12-01: ERM4's page fetches had no size setting (CRAG's fetch_max_bytes did not
    reach them) and every search built a fetcher and its TLS context (30-55 ms each): now
    ``fetch_max_bytes`` caps ERM4's pages too, and one fetcher serves a components' runs with the
    same fetch settings, CRAG's and ERM4's alike."""
    from types import SimpleNamespace

    from ragraphs.components import Components
    from ragraphs.nodes.erm4 import make_external_retrieve
    from ragraphs.nodes.web import page_fetcher
    from ragraphs.settings import CRAGContext, ERM4Context

    base, routes = server
    body = "<html><body><article>" + "".join(f"<p>Paragraph {i} says Evan Abraham was a unionist.</p>"
                                             for i in range(200)) + "</article></body></html>"
    routes["/big"] = lambda h, q: _send(h, body.encode())

    class Web:
        def search(self, query, k=5):
            return [{"id": "w", "title": "Evan Abraham", "text": "snippet", "source": "web", "meta": {"url": base + "/big"}}]

    c = Components(web_search=Web())
    node = make_external_retrieve(c)
    state = {"queries": ["Evan Abraham"], "outside": [{"query": "Evan Abraham"}]}
    ctx = ERM4Context(external="web", use_memory=False, filter="none", k=1, fetch_allow_private=True,
                      fetch_max_bytes=2000, max_passage_chars=100_000)
    (capped,) = node(state, SimpleNamespace(context=ctx))["external_knowledge"]
    (whole,) = node(state, SimpleNamespace(context=ERM4Context(external="web", use_memory=False, filter="none", k=1,
                                                                fetch_allow_private=True, max_passage_chars=100_000)))["external_knowledge"]
    assert capped["meta"].get("truncated") and len(capped["text"]) < 2000 < len(whole["text"])
    assert "truncated" not in whole["meta"]
    first = page_fetcher(c, ctx)
    assert page_fetcher(c, ctx) is first and first.max_bytes == 2000
    assert page_fetcher(c, CRAGContext(fetch_allow_private=True, fetch_max_bytes=2000)) is first  # the same settings
    assert page_fetcher(c, CRAGContext()) is not first and page_fetcher(c, CRAGContext()).max_bytes == 2_000_000
    assert page_fetcher(c, CRAGContext()).ssl_context is first.ssl_context  # one TLS context per process


def test_web_faults_found_in_review(server, tmp_path):
    """Review of 2026-11-30: an offline snapshot's addresses are never fetched (ERM4 fetched them);
    a text page with CRLF line ends is split into its paragraphs; a compressed reply the fetcher
    did not ask for is refused by name; SearXNG's 429 is named as rate limiting; an offline
    backend is built once whatever the run's timeout."""
    import gzip

    from ragraphs.components import Components
    from ragraphs.nodes.web import web_backend
    from ragraphs.settings import CRAGContext
    from ragraphs.tools.fetch import fetch_results

    base, routes = server
    asked = []
    routes["/wiki"] = lambda h, q: (asked.append(1), _send(h, PAGE.encode()))
    snap = OfflineCorpusSearch(passages=[{"id": "p1", "title": "Evan Abraham", "text": "He was a unionist.",
                                          "meta": {"url": base + "/wiki"}}])
    got = snap.search("Evan Abraham unionist", k=1)
    assert got[0]["meta"]["offline"] is True
    out, report = fetch_results(PageFetcher(timeout=2, allow_private=True), got)
    assert out == got and report == [] and asked == []
    routes["/crlf"] = lambda h, q: _send(h, b"First paragraph here.\r\n\r\nSecond one.\r\n", ctype="text/plain")
    page = PageFetcher(timeout=2, allow_private=True).fetch(base + "/crlf")
    assert page.paragraphs == ["First paragraph here.", "Second one."]
    routes["/gz"] = lambda h, q: _send(h, gzip.compress(PAGE.encode()), headers={"Content-Encoding": "gzip"})
    with pytest.raises(FetchError, match="unsupported Content-Encoding 'gzip'"):
        PageFetcher(timeout=2, allow_private=True).fetch(base + "/gz")
    routes["/search"] = lambda h, q: _send(h, b"slow down", status=429)
    with pytest.raises(WebSearchError, match="HTTP 429 .rate limited"):
        SearxngSearch(base).search("x")
    path = tmp_path / "pages.jsonl"
    path.write_text(json.dumps({"title": "Lima", "text": "Lima is the capital of Peru."}) + "\n")
    c = Components()
    first = web_backend(c, CRAGContext(web=f"offline:{path}", web_timeout=1.0))[0]
    assert web_backend(c, CRAGContext(web=f"offline:{path}", web_timeout=2.0))[0] is first
    assert len(c.extra["web_backends"]) == 1


def test_a_benchmark_file_given_as_the_web_snapshot_is_named_with_the_rows_it_lacks(data_dir):
    """Review of 2026-12-01: a file of another shape (benchmark rows) as ``--web`` said only "the
    offline web corpus is empty"; now the file, the rows read and the two shapes it takes."""
    from ragraphs.errors import InputError

    path = str(data_dir / "hotpotqa.sample.jsonl")
    with pytest.raises(InputError) as e:
        OfflineCorpusSearch(path)
    said = str(e.value)
    assert path in said and "row(s) read" in said and '{"question", "results": [' in said
    assert int(said.split(" row(s) read")[0].rsplit("(", 1)[1]) > 0


def test_a_searxng_url_with_a_password_is_refused_without_showing_it(monkeypatch):
    """**Was a bug** (until 2026-12-03): the settings check took ``searxng:http://user:secret@...``, then
    every search failed at the fetcher, the password in warnings, traces and eval files."""
    from ragraphs.settings import CRAGContext, ERM4Context
    from ragraphs.web_specs import web_spec_error

    spec = "searxng:http://user:secret@127.0.0.1:8931/s"
    for build in (lambda: CRAGContext(web=spec), lambda: ERM4Context(web=spec, external="web"),
                  lambda: make_web_search(spec), lambda: SearxngSearch(spec.split(":", 1)[1])):
        with pytest.raises(ConfigError, match="user name or password is refused") as e:
            build()
        assert "secret" not in str(e.value) and "user:" not in str(e.value)
    monkeypatch.setenv("RAGRAPHS_WEB", "searxng:https://:secret@search.example")
    said = web_spec_error("")
    assert said and said.endswith("(from RAGRAPHS_WEB)") and "secret" not in said
    with pytest.raises(ConfigError) as e:
        make_web_search(None)
    assert "secret" not in str(e.value)
    assert web_spec_error("searxng:http://127.0.0.1:8931/s") is None  # no credentials: as before
    with pytest.raises(FetchError) as e:  # a result's page address with a password: refused, not shown
        PageFetcher().fetch("http://user:secret@example.org/")
    assert "secret" not in str(e.value)


def test_the_fetcher_connects_to_the_next_checked_address_when_one_refuses(server, monkeypatch):
    """``localhost`` resolving to ``::1`` first, the server listening on 127.0.0.1 alone: the fetch
    goes on to the next address, each one still checked. **Was a bug** (until 2026-12-03): only
    the first address was tried (ConnectionRefusedError)."""
    import socket

    base, routes = server
    routes["/page"] = lambda h, q: _send(h, PAGE.encode())
    port = int(base.rsplit(":", 1)[1])
    real = socket.getaddrinfo
    answers = {"pages.test": ["::1", "127.0.0.2", "127.0.0.1"], "mixed.test": ["93.184.216.34", "127.0.0.1"]}

    def getaddrinfo(host, *a, **kw):
        if host not in answers:
            return real(host, *a, **kw)
        return [(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                 (ip, port, 0, 0) if ":" in ip else (ip, port)) for ip in answers[host]]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    page = PageFetcher(timeout=2, allow_private=True).fetch(f"http://pages.test:{port}/page")
    assert "He was born in Swansea, Wales." in page.text
    for host, bad in (("pages.test", "::1"), ("mixed.test", "127.0.0.1")):  # every address checked
        with pytest.raises(FetchError, match=rf"private or loopback address \({bad}\)"):
            PageFetcher(timeout=2).fetch(f"http://{host}:{port}/page")


def test_a_pages_charset_from_its_bom_its_header_as_a_browser_reads_it_or_its_own_declaration(server):
    """**Was a bug** (until 2026-12-03): a UTF-16 page with a BOM labelled UTF-8 (or not at all)
    was read as UTF-8; "iso-8859-1" lost windows-1252's curly quotes and euro sign; an XHTML
    page's XML declaration was ignored; a text page saying "charset=utf-16" was read as UTF-16."""
    from ragraphs.tools.fetch import decode_page

    base, routes = server
    page = "<html><head><title>Café</title></head><body><p>“Café Müller” costs €5 in Düsseldorf, a long enough paragraph.</p></body></html>"
    routes["/u16"] = lambda h, q: _send(h, page.encode("utf-16"), "text/html")
    routes["/u16-labelled-utf8"] = lambda h, q: _send(h, page.encode("utf-16"), "text/html; charset=utf-8")
    routes["/u16be"] = lambda h, q: _send(h, b"\xfe\xff" + page.encode("utf-16-be"), "text/html")
    routes["/latin1"] = lambda h, q: _send(h, page.encode("cp1252"), "text/html; charset=iso-8859-1")
    xhtml = ("<?xml version='1.0' encoding='iso-8859-1'?>\n<html xmlns='http://www.w3.org/1999/xhtml'>"
             + page.replace("“", '"').replace("”", '"').replace("€", "EUR ")[6:])
    routes["/xhtml"] = lambda h, q: _send(h, xhtml.encode("iso-8859-1"), "application/xhtml+xml")
    text = "This page says charset=utf-16 in its prose.\n\nCafé Müller in Düsseldorf."
    routes["/plain"] = lambda h, q: _send(h, text.encode("utf-8"), "text/plain")
    f = PageFetcher(timeout=5, allow_private=True)
    for path in ("/u16", "/u16-labelled-utf8", "/u16be", "/latin1"):
        got = f.fetch(base + path)
        assert got.title == "Café" and "“Café Müller” costs €5 in Düsseldorf" in got.text, path
    got = f.fetch(base + "/xhtml")
    assert got.title == "Café" and '"Café Müller" costs EUR 5 in Düsseldorf' in got.text
    assert f.fetch(base + "/plain").paragraphs == ["This page says charset=utf-16 in its prose.", "Café Müller in Düsseldorf."]
    assert decode_page('<meta charset="ascii"><p>€</p>'.encode("cp1252")).endswith("<p>€</p>")
    assert decode_page("<p>charset=utf-16 café</p>".encode()) == "<p>charset=utf-16 café</p>"  # no <meta>: UTF-8


def test_searxng_answers_in_any_json_encoding_and_copies_count_once(server):
    """**Was a bug** (until 2026-12-03): the answer was always read as UTF-8 (a BOM: "Unexpected
    UTF-8 BOM", UTF-16: "Expecting value", a declared ISO-8859-1: mojibake), and results were cut
    to k before copies of one address were dropped (3 copies and 5 pages gave 3 pages)."""
    base, routes = server
    answer = json.dumps({"results": [{"url": "https://example.org/cafe", "title": "Café", "content": "A café."}]},
                        ensure_ascii=False)
    for name, body, ctype in (("bom", answer.encode("utf-8-sig"), "application/json"),
                              ("utf16", answer.encode("utf-16"), "application/json"),
                              ("utf16-labelled-utf8", answer.encode("utf-16"), "application/json; charset=utf-8"),
                              ("latin1", answer.encode("iso-8859-1"), "application/json; charset=iso-8859-1"),
                              ("utf8", answer.encode("utf-8"), "application/json")):
        routes["/search"] = lambda h, q, body=body, ctype=ctype: _send(h, body, ctype)
        assert [(p["title"], p["text"]) for p in SearxngSearch(base, timeout=2).search("cafe")] == [("Café", "A café.")], name
    rows = [{"url": "https://example.org/same", "title": "Same", "content": "copy"}] * 3 + [
        {"url": f"https://example.org/{i}", "title": f"Page {i}", "content": f"page {i}"} for i in range(5)]
    routes["/search"] = lambda h, q: _send(h, json.dumps({"results": rows}).encode(), "application/json")
    got = SearxngSearch(base, timeout=2).search("x", k=5)
    assert [p["meta"]["url"] for p in got] == ["https://example.org/same"] + [f"https://example.org/{i}" for i in range(4)]
    assert [p["meta"]["rank"] for p in got] == [0, 1, 2, 3, 4]


def test_erm4_fetches_and_keeps_a_page_its_search_returns_three_times_once(server):
    """**Was a bug** (until 2026-12-03): ERM4 (external=web) fetched a page three times and kept
    the three copies among one query's k results."""
    from types import SimpleNamespace

    from ragraphs.components import Components
    from ragraphs.nodes.erm4 import make_external_retrieve
    from ragraphs.settings import ERM4Context

    base, routes = server
    gets: list[str] = []
    for name in ("evan", "other", "third"):
        routes[f"/{name}"] = lambda h, q, name=name: (gets.append(name), _send(h, PAGE.replace("Evan", name.title()).encode()))

    class Copies:
        def search(self, query, k=5):
            return [{"id": f"w{i}", "title": "Evan", "text": "snippet", "source": "web", "meta": {"url": f"{base}/{n}"}}
                    for i, n in enumerate(["evan", "evan", "evan", "other", "third"])]

    node = make_external_retrieve(Components(web_search=Copies()))
    state = {"queries": ["Evan Abraham born"], "outside": [{"query": "Evan Abraham born"}]}
    out = node(state, SimpleNamespace(context=ERM4Context(external="web", use_memory=False, filter="none", k=3,
                                                          fetch_allow_private=True)))
    assert sorted(gets) == ["evan", "other", "third"]
    assert [p["meta"]["url"] for p in out["external_knowledge"]] == [f"{base}/evan", f"{base}/other", f"{base}/third"]


def test_ask_json_names_the_web_searchs_failure_at_its_top(server):
    """``ask --json``'s ``web_error``: why the web search failed, null when it did not. **Was a bug**
    (until 2026-12-03): only deep in ``trace`` (without --json a ``warning:`` line says it)."""
    from argparse import Namespace

    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from fakes import ConstJudge
    from ragraphs.cli.ask import _json_result, run_graph
    from ragraphs.components import Components
    from ragraphs.settings import CRAGContext

    base, routes = server
    routes["/search"] = lambda h, q: _send(h, b"down", status=500)

    class Nothing:
        def search(self, q, k, mode="dense"):
            return [{"id": "x", "title": "Bananas", "text": "A banana is a fruit.", "source": "corpus", "score": 0.1}]

    def ask(web):
        c = Components(llm=FakeListChatModel(responses=["Lima"] * 8), retriever=Nothing(), judges={"evaluator": ConstJudge(-0.9)})
        result = run_graph("crag", "What is the capital of Peru?", c, CRAGContext(web=web, fetch_pages=False))
        return json.loads(json.dumps(_json_result(Namespace(method="crag"), "q", result, 0.0), default=str))

    failed = ask(f"searxng:{base}")
    assert "HTTP 500" in failed["web_error"]
    assert ask("none")["web_error"] is None


def test_a_redirect_to_a_raw_utf8_location_is_followed_to_that_address(server):
    """**Was a bug** (until 2026-12-03): http.client reads a header as Latin-1, so a raw UTF-8
    ``Location: /page/café`` was requested as ``/page/caf%C3%83%C2%A9`` (404)."""
    base, routes = server
    routes["/page/caf%C3%A9"] = lambda h, q: _send(h, PAGE.encode())

    def to(location: bytes):  # a Location header of raw bytes, as some servers send
        return lambda h, q: h.wfile.write(b"HTTP/1.0 302 Found\r\nLocation: " + location + b"\r\nContent-Length: 0\r\n\r\n")

    routes["/hop"] = to("/page/café".encode())
    final, status, *_ = PageFetcher(timeout=2, allow_private=True).get(base + "/hop")
    assert status == 200 and final == base + "/page/café"
    routes["/latin"] = to("/page/café".encode("latin-1"))
    assert PageFetcher(timeout=2, allow_private=True).get(base + "/latin")[:2] == (base + "/page/café", 200)  # Latin-1 stays


def test_a_stub_page_shorter_than_its_snippet_keeps_the_snippet(server):
    """A result whose page is a stub (a meta-refresh "Redirecting...", "please enable JavaScript")
    keeps its snippet, and the report says why; a page that says more replaces it. **Was a bug**
    (until 2026-12-03): "Redirecting..." replaced "The Eiffel Tower is 330 metres tall." as ok."""
    from ragraphs.state.types import make_passage
    from ragraphs.tools.fetch import fetch_results

    base, routes = server
    routes["/stub"] = lambda h, q: _send(h, b'<html><head><meta http-equiv="refresh" content="0; url=/x"></head>'
                                            b"<body><p>Redirecting...</p></body></html>")
    routes["/full"] = lambda h, q: _send(h, PAGE.encode())
    snippet = "The Eiffel Tower is 330 metres tall."
    results = [make_passage("Eiffel Tower", snippet, "web", url=base + "/stub"),
               make_passage("Evan Abraham", "He was a unionist.", "web", url=base + "/full")]
    out, report = fetch_results(PageFetcher(timeout=2, allow_private=True), results)
    assert out[0]["text"] == snippet and report[0]["ok"] is False and "shorter than its snippet" in report[0]["error"]
    assert out[1]["meta"]["fetched"] is True and len(out[1]["text"]) > len("He was a unionist.")


def test_an_offline_snapshots_pages_without_text_are_said(tmp_path, capsys):
    """A snapshot file whose pages are mostly keyed ``{title, body}``: the pages with text are
    read, and one line says how many were left out and the first one's keys. **Was a bug** (until
    2026-12-03): 50 of 51 pages left out without a word."""
    path = tmp_path / "mixed.jsonl"
    rows = [{"title": "Lima", "text": "Lima is the capital of Peru."}]
    rows += [{"title": f"Page {i}", "body": "words"} for i in range(50)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    snap = OfflineCorpusSearch(str(path))
    assert [p["title"] for p in snap.search("capital of Peru", k=3)] == ["Lima"]
    assert f"{path}: left out 50 page(s) with no \"text\" (the first one's keys: 'title', 'body')" in capsys.readouterr().err
