"""A SearXNG-format search server on 127.0.0.1 that serves real pages, for timing web paths.

The pages are a benchmark file's paragraphs (pooled, e.g. 2Wiki dev), each an HTML page
with a title and the text (kept plain: the project's extractor falls back to
every paragraph of very small pages, so page chrome would end up in the knowledge); ``/search?q=...&format=json`` answers
in SearXNG's JSON shape (``results: [{title, url, content}]``, ``content`` a snippet) from a
BM25 index over the pages. ``ragraphs.tools.websearch.SearxngSearch`` reads it and the
methods fetch the result URLs with the guarded page fetcher, as they would on the web.

    python bench/searxng_pages.py ../shared/data/2wikimultihopqa.dev.jsonl --port 8890
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, urlsplit

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title} - Dev Encyclopedia</title>
<style>body {{font-family: sans-serif}}</style><script>var page = "{pid}";</script></head>
<body><article>
{paragraphs}
</article></body></html>"""


def make_server(paths: list[str], port: int = 0, snippet_chars: int = 200) -> ThreadingHTTPServer:
    from ragraphs.datasets import load_dataset, pooled_passages
    from ragraphs.tools.bm25 import BM25Index

    passages = []
    for p in paths:
        passages += pooled_passages(load_dataset(p))
    pages = {p["id"]: p for p in passages}
    index = BM25Index(list(pages.values()))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def _send(self, body: bytes, ctype: str, status: int = 200) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            u = urlsplit(self.path)
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            if u.path == "/search":
                q = (parse_qs(u.query).get("q") or [""])[0]
                hits = index.search(q, 10) if q.strip() else []
                results = [{"title": p["title"], "url": f"{base}/page/{quote(p['id'])}",
                            "content": p["text"][:snippet_chars], "engine": "local"} for p in hits]
                self._send(json.dumps({"query": q, "results": results}).encode(), "application/json")
                return
            if u.path.startswith("/page/"):
                p = pages.get(u.path[len("/page/"):])
                if p is None:
                    self._send(b"not found", "text/plain", 404)
                    return
                sentences = [s.strip() for s in p["text"].split(". ") if s.strip()]
                paras = "\n".join(f"<p>{html.escape(s)}</p>" for s in [". ".join(sentences)])
                body = PAGE.format(title=html.escape(p["title"]), pid=html.escape(p["id"]), paragraphs=paras)
                self._send(body.encode("utf-8"), "text/html; charset=utf-8")
                return
            self._send(b"not found", "text/plain", 404)

    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.handle_error = lambda request, client_address: None
    return srv


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    srv = make_server(args.data, args.port)
    print(f"http://127.0.0.1:{srv.server_address[1]}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
