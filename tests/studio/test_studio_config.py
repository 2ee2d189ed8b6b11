"""The LangGraph server configuration files and the module-level graphs they name."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_langgraph_json_lists_every_method_with_descriptions():
    from ragraphs.graphs import METHODS

    cfg = json.loads((ROOT / "langgraph.json").read_text())
    # the built-in methods, and any added to METHODS, each served (docs/extending.md)
    assert {"vanilla", "none", "crag", "dr-rag", "erm4", "migres"} <= set(METHODS)
    assert set(cfg["graphs"]) == set(METHODS) | {"chat"}
    chat = cfg["graphs"].pop("chat")  # any method as a chat: messages in and out
    assert chat["path"] == "ragraphs.graphs.chat:graph" and len(chat["description"]) > 40
    g = importlib.import_module("ragraphs.graphs.chat").graph
    assert g.checkpointer is None and g.name == "chat"
    assert "messages" in g.get_input_jsonschema()["properties"]  # Studio's chat view
    assert {"method", "settings", "k"} <= set(g.get_context_jsonschema()["properties"])
    for name, spec in cfg["graphs"].items():
        assert len(spec["description"]) > 40
        mod, _, attr = spec["path"].partition(":")
        # a module path (the graphs use relative imports), the method's own module
        assert mod == METHODS[name][0] and attr == "graph"
        g = getattr(importlib.import_module(mod), attr)
        assert g.checkpointer is None  # the server brings its own
        assert g.builder.context_schema is not None
        assert g.name == name
        # Studio's forms: the input and the run settings have JSON schemas
        question = g.get_input_jsonschema()["properties"]["question"]
        assert question["type"] == "string" and "question to answer" in question["description"]
        assert "k" in g.get_context_jsonschema()["properties"]
        # and the output's, which Studio and API servers build too (typing_extensions' TypedDict
        # in every state module: pydantic refuses typing's on Python < 3.12)
        assert "answer" in g.get_output_jsonschema()["properties"]
        assert "answer" in g.output_schema.model_json_schema()["properties"]
    assert cfg["env"]["HF_HUB_OFFLINE"] == "1"


def test_postgres_deployment_config_serves_the_same_graphs_with_the_checkpointer_hook():
    main = json.loads((ROOT / "langgraph.json").read_text())
    pg = json.loads((ROOT / "examples" / "langgraph.postgres.json").read_text())
    assert pg["graphs"] == main["graphs"]
    path = pg["checkpointer"]["path"]
    mod, _, attr = path.rpartition(".")  # the server imports "package.module.attribute"
    hook = getattr(importlib.import_module(mod), attr)
    assert hasattr(hook(), "__aenter__")  # an async context manager yielding the saver


def test_server_graphs_take_their_store_from_the_environment(monkeypatch, tmp_path):
    import ragraphs.components as comp

    monkeypatch.setattr(comp, "_DEFAULT", None)
    monkeypatch.setenv("RAGRAPHS_STORE_URL", "http://127.0.0.1:8000")
    monkeypatch.setenv("RAGRAPHS_COLLECTION", "served")
    c = comp.default_components()
    assert c.store_url == "http://127.0.0.1:8000" and c.collection == "served"
    monkeypatch.setattr(comp, "_DEFAULT", None)
    monkeypatch.delenv("RAGRAPHS_STORE_URL")
    monkeypatch.delenv("RAGRAPHS_COLLECTION")
    c = comp.default_components()
    assert c.store_url is None and c.collection == "ragraphs"
    monkeypatch.setattr(comp, "_DEFAULT", None)


def test_the_store_index_embeds_titles_with_minilm_in_both_configs():
    """The server's store gets a vector index over ``title`` with the package's MiniLM: what
    ERM4's reservoir in a store (``reservoir="store"``) matches titles with."""
    import importlib.util

    from ragraphs.tools.embeddings import MiniLMEmbeddings

    main = json.loads((ROOT / "langgraph.json").read_text())
    pg = json.loads((ROOT / "examples" / "langgraph.postgres.json").read_text())
    assert main["store"] == pg["store"]  # both run from the repository root (docs/deployment.md)
    index = main["store"]["index"]
    assert index["dims"] == 384 and index["fields"] == ["title"]
    path, _, name = index["embed"].rpartition(":")
    spec = importlib.util.spec_from_file_location("store_index", ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # as the server loads it: by its path, not as a package module
    assert isinstance(getattr(module, name), MiniLMEmbeddings)
