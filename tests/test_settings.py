"""Run settings: every context's defaults are valid, and a value of the wrong kind is refused
with the setting's name when the context is built (in Python, on the command line, in Studio)."""

import os
from dataclasses import dataclass, field, fields
from pathlib import Path

import pytest

from ragraphs.errors import ConfigError
from ragraphs.settings import (ChatContext, CRAGContext, DRRAGContext, ERM4Context, MIGRESContext,
                               RAGContext, check_setting_names, context_from, settings_for)

CLASSES = (RAGContext, CRAGContext, DRRAGContext, ERM4Context, MIGRESContext)
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("cls", CLASSES + (ChatContext,))
def test_defaults_are_valid_and_described(cls):
    ctx = cls()
    assert len(fields(ctx)) >= 10
    for f in fields(ctx):  # Studio's context form and `ragraphs methods` show these
        assert len(f.metadata.get("description", "")) >= 10, f"{cls.__name__}.{f.name} has no description"


@pytest.mark.parametrize("cls", CLASSES + (ChatContext,))
def test_every_setting_is_named_in_the_readme_or_docs(cls):
    """A setting the docs never name is one a user cannot find outside `ragraphs methods`."""
    text = (ROOT / "README.md").read_text(encoding="utf-8") + "".join(
        p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))
    missing = [f.name for f in fields(cls) if f"`{f.name}`" not in text and f"`{f.name}=" not in text]
    assert not missing, f"{cls.__name__}: not named in README.md or docs/: {missing}"


@pytest.mark.parametrize("cls, values, message", [
    (CRAGContext, {"upper": "abc"}, "'upper' must be a number, got 'abc'"),
    (CRAGContext, {"upper": True}, "'upper' must be a number, got true"),
    (DRRAGContext, {"k2": -3}, "'k2' must be a whole number >= 1, got -3"),
    (DRRAGContext, {"k2": 2.5}, "'k2' must be a whole number >= 1, got 2.5"),
    (DRRAGContext, {"strategy": "xyz"}, "'strategy' must be one of sm | qdc | cis | cfs, got 'xyz'"),
    (DRRAGContext, {"fusion_k": "a"}, "'fusion_k' must be a whole number >= 1 or null, got 'a'"),
    (RAGContext, {"cut_asides": 1}, "'cut_asides' must be true or false, got 1"),
    (MIGRESContext, {"reader_evidence": "all"}, "'reader_evidence' must be one of followups | passages | gathered"),
    # a budget of 0 tokens read as the model's own default, a 4th query was never asked (until 2026-11-30)
    (MIGRESContext, {"judge_max_tokens": 0}, "'judge_max_tokens' must be a whole number >= 1, got 0"),
    (MIGRESContext, {"max_queries": 5}, "'max_queries' must be a whole number from 1 to 3, got 5"),
    (CRAGContext, {"rewrite_max_tokens": 0}, "'rewrite_max_tokens' must be a whole number >= 1, got 0"),
    (ERM4Context, {"theta": 0}, "'theta' must be a whole number >= 1, got 0"),
])
def test_a_value_of_the_wrong_kind_names_its_setting(cls, values, message):
    with pytest.raises(ConfigError) as e:
        cls(**values)
    assert message in str(e.value)
    with pytest.raises(ConfigError):  # the command line's path too
        context_from(cls, values)


def test_numbers_of_the_other_kind_and_nulls_are_read_as_meant():
    ctx = DRRAGContext(pair_threshold=1, fusion_k=None, k1=None)
    assert ctx.pair_threshold == 1 and ctx.fusion_k is None and ctx.k1 is None
    assert CRAGContext(upper=1, lower=-1).lower == -1  # whole numbers where a float is read
    assert context_from(CRAGContext, {"upper": None}).upper == CRAGContext().upper  # null: the default


def test_a_mistyped_name_gets_the_closest_names():
    with pytest.raises(ConfigError) as e:
        check_setting_names(DRRAGContext, {"pair_treshold": 0.5, "k": 4}, "dr-rag")
    msg = str(e.value)
    assert "method 'dr-rag' has no setting 'pair_treshold' (did you mean 'pair_threshold'?)" in msg
    assert "its settings: " in msg and "k2" in msg
    check_setting_names(DRRAGContext, {"pair_threshold": 0.5, "k": 4}, "dr-rag")  # known names pass


def test_settings_scoped_to_a_method_reach_that_method_only():
    values = {"k": 3, "crag.upper": 0.93, "dr-rag.k2": 6}
    methods = ["vanilla", "crag", "dr-rag"]
    assert settings_for("vanilla", values, methods) == {"k": 3}
    assert settings_for("crag", values, methods) == {"k": 3, "upper": 0.93}
    assert settings_for("dr-rag", values, methods) == {"k": 3, "k2": 6}
    with pytest.raises(ConfigError, match="scoped to 'erm4', which is not run here"):
        settings_for("crag", {"erm4.theta": 2}, ["vanilla", "crag"])


def test_eval_grid_gives_each_method_its_scoped_settings_and_an_unchanged_label():
    from ragraphs.evaluation.runner import build_context, iter_specs

    specs = {s.method: s for s in iter_specs(["vanilla", "crag"], [None], [None], settings={"crag.upper": 0.93})}
    assert specs["vanilla"].settings == {} and specs["vanilla"].label == "vanilla"
    assert build_context(specs["crag"]).upper == 0.93
    # the same run as `--method crag --set upper=0.93`: one label, so a comparison resumes it
    alone = iter_specs(["crag"], [None], [None], settings={"upper": 0.93})[0]
    assert alone.label == specs["crag"].label


def test_a_setting_with_a_field_of_its_own_is_that_field():
    """``--set k=4`` is ``--k 4`` (and llm, retrieval, strategy; ``skip_generation=true`` is
    ``--retrieval-only``): one label and one place in the grid. Until 2026-12-02 each was a
    ``-set<hash>`` folder of its own, and ``skip_generation`` scored answers never written."""
    from ragraphs.evaluation.runner import RunSpec, build_context, iter_specs

    by_set = iter_specs(["dr-rag"], [None], [None], settings={"k": 4, "strategy": "cis", "retrieval": "bm25",
                                                               "llm": "fake:x", "skip_generation": True})[0]
    by_option = iter_specs(["dr-rag"], [4], ["cis"], retrieval="bm25", llm="fake:x", retrieval_only=True)[0]
    assert by_set == by_option and by_set.label == "dr-rag-cis-k4-bm25-retrieval-fake_x" and by_set.settings == {}
    ctx = build_context(by_set)
    assert (ctx.k, ctx.strategy, ctx.retrieval, ctx.llm, ctx.skip_generation) == (4, "cis", "bm25", "fake:x", True)
    scoped = {s.method: s for s in iter_specs(["vanilla", "crag"], [None], [None], settings={"crag.k": 2, "upper": 0.9})}
    assert scoped["vanilla"].k is None and scoped["crag"].k == 2 and scoped["crag"].settings == {"upper": 0.9}
    assert RunSpec("vanilla", k=4, settings={"k": 4, "skip_generation": False}) == RunSpec("vanilla", k=4)
    for spec in ({"k": 4, "settings": {"k": 6}}, {"retrieval_only": True, "settings": {"skip_generation": False}}):
        with pytest.raises(ConfigError, match="two values; give one of them"):
            RunSpec("vanilla", **spec)


def test_set_options_parse_as_json_where_they_can():
    from ragraphs.errors import InputError
    from ragraphs.settings import parse_settings

    assert parse_settings(["k=3", "upper=0.9", "cut_asides=false", "external=both", "fusion_k=null", " k2 =6"]) == {
        "k": 3, "upper": 0.9, "cut_asides": False, "external": "both", "fusion_k": None, "k2": 6}
    for bad in ("k", "=3"):
        with pytest.raises(InputError, match="--set expects KEY=VALUE"):
            parse_settings([bad])
    # one key, two values: refused (the last one won, silently, until 2026-12-03); the same value twice is one
    with pytest.raises(InputError, match=r"--set k is given twice \(2, then 5\); give it once"):
        parse_settings(["k=2", "k =5"])
    assert parse_settings(["k=2", "k=2.0"]) == {"k": 2}


@pytest.mark.parametrize("cls, values, message", [
    (RAGContext, {"k": 0}, "'k' must be a whole number >= 1, got 0"),
    (MIGRESContext, {"max_iterations": 0}, "'max_iterations' must be a whole number >= 1, got 0"),
    (CRAGContext, {"web": "nope"}, "'web': unknown web search 'nope'"),
    (CRAGContext, {"web": "offline:"}, "'web': offline web search needs a path"),
    (CRAGContext, {"web": "searxng"}, "'web': searxng web search needs a URL"),
    (CRAGContext, {"web_fallback": "intrnal"}, "'web_fallback' must be one of internal | none"),  # was read as none
])
def test_limits_and_the_web_spec_are_checked_when_the_context_is_built(cls, values, message):
    with pytest.raises(ConfigError, match=message):
        cls(**values)


def test_web_specs_of_every_documented_form_are_accepted(tmp_path, monkeypatch):
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text('{"title": "A", "text": "a"}\n', encoding="utf-8")
    offline = f"offline:{tmp_path / 'a.jsonl'},{tmp_path / 'b.jsonl'}"
    for spec in ("", "none", "off", "ddg", "DuckDuckGo", offline, "searxng:http://127.0.0.1:8888"):
        assert CRAGContext(web=spec).web == spec


def test_an_offline_web_file_is_found_from_home_and_a_missing_one_refused_before_a_local_run(tmp_path, monkeypatch, capsys):
    """``offline:~/pages.jsonl`` reads the file under the home folder; a file that is not there is
    refused by ask, chat and eval before a local run, and left to the server for ``eval --server``
    (until 2026-12-01 neither: the first search failed, and CRAG and ERM4 answered on without the web)."""
    from conftest import DATA, free_port, main_captured
    from ragraphs.tools.websearch import make_web_search

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "pages.jsonl").write_text('{"title": "Vienna", "text": "Vienna is the capital of Austria."}\n',
                                          encoding="utf-8")
    assert CRAGContext(web="offline:~/pages.jsonl").web == "offline:~/pages.jsonl"
    assert make_web_search("offline:~/pages.jsonl").search("capital of Austria", 1)[0]["title"] == "Vienna"
    gone = "web=offline:~/pages.jsonl,~/gone.jsonl"
    assert CRAGContext(web=gone[4:]).web == gone[4:]  # the form is the settings' to check; the files a run's
    for argv in (["ask", "Who?", "--method", "crag", "--set", gone],
                 ["chat", "--method", "crag", "--set", gone],
                 ["eval", "--method", "crag", "--data", str(DATA / "hotpotqa.sample.jsonl"), "--limit", "1", "--set", gone]):
        code, out, err = main_captured(capsys, *argv)
        assert code == 2 and err.strip().endswith(f"run setting 'web': offline web corpus not found: {tmp_path / 'gone.jsonl'}"), err
    code, out, err = main_captured(capsys, "ask", "Who?", "--method", "crag", "--set", f"web=offline:{tmp_path}")
    assert code == 2 and "is a folder" in err
    # from the environment: said so; a run that searches no web (ERM4's external=corpus) is not refused
    monkeypatch.setenv("RAGRAPHS_WEB", "offline:~/gone.jsonl")
    code, out, err = main_captured(capsys, "ask", "Who?", "--method", "crag")
    assert code == 2 and err.strip().endswith("gone.jsonl (from RAGRAPHS_WEB)"), err
    code, out, err = main_captured(capsys, "ask", "Who?", "--method", "erm4", "--retrieval-only", "--llm", 'fake:{"question": "Who?", "queries": ["who"]}')
    assert "offline web corpus" not in err, err
    monkeypatch.delenv("RAGRAPHS_WEB")
    # with --server the files are the server's: the run goes on to ask it (nothing listens here)
    code, out, err = main_captured(capsys, "eval", "--method", "crag", "--data", str(DATA / "hotpotqa.sample.jsonl"),
                                   "--limit", "1", "--set", gone, "--server", f"http://127.0.0.1:{free_port()}")
    assert code == 2 and "cannot reach the LangGraph server" in err, err


def test_the_web_spec_from_the_environment_is_checked_too(monkeypatch):
    monkeypatch.setenv("RAGRAPHS_WEB", "nope")
    with pytest.raises(ConfigError, match=r"unknown web search 'nope'.*\(from RAGRAPHS_WEB\)"):
        CRAGContext()
    assert CRAGContext(web="none").web == "none"  # a setting overrides the environment
    monkeypatch.setenv("RAGRAPHS_WEB", "ddg")
    assert CRAGContext().web == ""


def test_a_graph_given_another_methods_settings_says_which_it_runs_with():
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from ragraphs import Components
    from ragraphs.graphs import build_graph
    from ragraphs.settings import context_of

    class NoEmbed:
        def embed_documents(self, texts):
            raise AssertionError("nothing must be embedded")

        embed_query = embed_documents

    from ragraphs.tools.vectorstore import InMemoryCorpus

    c = Components(llm=FakeListChatModel(responses=["x"]), retriever=InMemoryCorpus([], NoEmbed()), embeddings=NoEmbed())
    for method, ctx in (("crag", RAGContext(k=3)), ("migres", DRRAGContext()), ("dr-rag", CRAGContext()),
                        # the baselines too: a subclass of their RAGContext is still another method's
                        ("vanilla", DRRAGContext()), ("none", CRAGContext())):
        with pytest.raises(ConfigError, match=f"runs with .*Context .*got {type(ctx).__name__}"):
            build_graph(method, c).invoke({"question": "who?"}, context=ctx)

    @dataclass(kw_only=True)
    class Mine(RAGContext):  # a user's own settings class, extending ours, is read as it is
        note: str = field(default="", metadata={"description": "a field of the user's own"})

    none = build_graph("none", c)
    for ctx in (RAGContext(k=1), Mine(k=1), {"k": 1}):
        assert none.invoke({"question": "who?"}, context=ctx)["answer"] == "x"

    @dataclass(kw_only=True)
    class FooContext(RAGContext):  # a new method's settings, kept in ragraphs/settings_foo.py as extending.md says
        depth: int = field(default=2, metadata={"description": "a setting of the new method"})

    FooContext.__module__ = "ragraphs.settings_foo"  # refused by vanilla and none too (review of 2026-12-01)
    for method in ("vanilla", "none", "crag"):
        with pytest.raises(ConfigError, match="runs with .*Context .*got FooContext"):
            build_graph(method, c).invoke({"question": "who?"}, context=FooContext())

    class R:  # a runtime: no context gives the defaults, a subclass's settings are the base's too
        context = None
    assert context_of(R(), CRAGContext) == CRAGContext()
    R.context = CRAGContext(k=2)
    assert context_of(R(), RAGContext).k == 2


def test_a_comparison_names_the_scoped_form_for_a_setting_only_some_methods_have():
    from ragraphs.settings import check_shared_settings

    classes = {"vanilla": RAGContext, "crag": CRAGContext}
    with pytest.raises(ConfigError, match=r"'upper' is not a setting of vanilla; to set it for crag only: "
                                          r"--set crag\.upper=0\.93"):
        check_shared_settings({"upper": 0.93}, classes)
    check_shared_settings({"k": 3, "crag.upper": 0.93}, classes)  # shared and scoped settings pass


def test_a_mistyped_name_in_a_dict_context_is_a_clear_error_before_any_node_runs():
    """LangGraph builds the graph's settings class from a dict context itself; the name check
    sits in the class, so the error names the closest settings, not a dataclass TypeError."""
    from langchain_core.language_models.fake import FakeListLLM

    from ragraphs import Components
    from ragraphs.graphs import build_graph

    class NoCall(FakeListLLM):
        def _call(self, *a, **k):  # pragma: no cover - the point is that it is never reached
            raise AssertionError("the LLM must not be called")

    g = build_graph("none", Components(llm=NoCall(responses=["x"])))
    with pytest.raises(ConfigError, match=r"RAGContext has no setting 'kk' \(did you mean 'k'\?\)"):
        g.invoke({"question": "Who?"}, context={"kk": 3})
    with pytest.raises(ConfigError, match=r"CRAGContext has no setting 'uper' \(did you mean 'upper'\?\)"):
        CRAGContext(uper=0.3)
    assert CRAGContext(upper=0.3).upper == 0.3


def test_the_name_check_leaves_room_for_a_users_own_subclass():
    import abc

    @dataclass(kw_only=True)
    class WithMixin(RAGContext, abc.ABC):  # another metaclass in the mix: no conflict
        note: str = field(default="", metadata={"description": "the user's own"})

    assert WithMixin(note="a", k=2).k == 2
    with pytest.raises(ConfigError, match="did you mean 'note'"):
        WithMixin(nte="a")

    class OwnInit(RAGContext):  # its own __init__ takes what it likes
        def __init__(self, user_id=None, **kw):
            super().__init__(**kw)
            self.user_id = user_id

    assert OwnInit(user_id=3, k=2).user_id == 3


def test_written_reads_an_overwrite_in_each_form_a_stream_gives():
    from langgraph.types import Overwrite

    from ragraphs.state import written

    from ragraphs.state import reset

    for form in (Overwrite([1]), {"value": [1], "type": "__overwrite__"}, {"__overwrite__": [1]}, [1], reset([1])):
        assert written(form) == [1]
    assert written({"value": 1, "type": "other"}) == {"value": 1, "type": "other"}


def test_cross_setting_and_floor_checks():
    """Refused when the context is built (accepted until 2026-11-30): CRAG's ``lower`` above its
    ``upper`` (the two rules contradict), ``strip_sentences=0`` (a crash inside ``refine``), and
    ``fusion_k=0`` (it meant the retriever's own hybrid); ``fusion_k=None`` still means that."""
    from ragraphs.settings import CRAGContext, DRRAGContext

    for make, message in ((lambda: CRAGContext(upper=-0.9, lower=0.59), "lower \\(0.59\\) is above upper"),
                          (lambda: CRAGContext(strip_sentences=0), "'strip_sentences' must be a whole number >= 1"),
                          (lambda: DRRAGContext(fusion_k=0), "'fusion_k' must be a whole number >= 1 or null")):
        with pytest.raises(ConfigError, match=message):
            make()
    assert DRRAGContext(fusion_k=None).fusion_k is None and CRAGContext(upper=0.5, lower=0.5).lower == 0.5


@pytest.mark.parametrize("cls,values,needle", [
    (RAGContext, {"max_passage_chars": 0}, "must be a whole number >= 1"),
    (MIGRESContext, {"max_passages": 0}, "must be a whole number >= 1"),
    (CRAGContext, {"upper": float("nan")}, "must be a number, got NaN"),
    (DRRAGContext, {"pair_threshold": 5.0}, "from 0 to 1"),
    (MIGRESContext, {"nli_threshold": 3.0}, "from 0 to 1"),
    (ERM4Context, {"filter_threshold": 7.0}, "from -1 to 1"),  # dropped every passage until 2026-12-03
])
def test_settings_out_of_their_range_are_refused(cls, values, needle):
    """Each was taken without a word until 2026-11-30: ``max_passage_chars=0`` sent the LLM
    passages of no text, ``upper=nan`` routed no question to Correct, a cut above 1 accepted
    no pair and no statement."""
    with pytest.raises(ConfigError, match=needle):
        context_from(cls, values)
    assert context_from(cls, {"pair_threshold": 0.5} if cls is DRRAGContext else {}) is not None


def test_a_number_too_large_for_a_float_is_refused_by_name():
    with pytest.raises(ConfigError, match="'upper' must be a number"):
        context_from(CRAGContext, {"upper": 10**400})  # an OverflowError traceback before


def test_a_bad_value_is_shown_as_the_json_it_was_sent_as(capsys):
    """``--set``, Studio and the SDK send JSON: a refused value reads as written there (``true``,
    ``null``, ``[1, 2]``; ``1e400``, which JSON reads as infinite, as ``Infinity``), text in its
    quotes. Until 2026-11-30 they read as Python (``True``, ``None``, ``inf``)."""
    from conftest import main_captured

    for values, said in (({"cut_asides": None}, "'cut_asides' must be true or false, got null"),
                         ({"upper": True}, "'upper' must be a number, got true"),
                         ({"k": [1, 2]}, "'k' must be a whole number >= 1, got [1, 2]"),
                         ({"upper": float("inf")}, "'upper' must be a number, got Infinity"),
                         ({"upper": "abc"}, "'upper' must be a number, got 'abc'"),
                         ({"upper": 10**400}, "'upper' must be a number, got 1000000000")):
        with pytest.raises(ConfigError) as e:
            context_from(CRAGContext, values, keep_none=True)  # None given, as the command line's null is
        assert said in str(e.value) and len(str(e.value)) < 160, str(e.value)
    for typed, said in (("upper=1e400", "got Infinity"), ("cut_asides=null", "got null"), ("upper=true", "got true")):
        code, out, err = main_captured(capsys, "ask", "Who?", "--method", "crag", "--set", typed)
        assert code == 2 and err.strip().endswith(said), err
    # text that reads as a JSON number: the message says how to give it as text
    code, out, err = main_captured(capsys, "ask", "Who?", "--method", "erm4", "--set", "reservoir_collection=2024")
    assert code == 2 and err.strip().endswith("""got 2024 (--set reads values as JSON: write --set reservoir_collection='"2024"' for the text)"""), err


def test_a_server_can_lock_the_settings_that_reach_its_files_and_network(monkeypatch):
    """``$RAGRAPHS_LOCKED_SETTINGS``: a run context (a Studio or SDK client's) may not change the
    settings a server names, such as the web backend, private-address fetching or a model path."""
    from ragraphs.settings import CRAGContext, ERM4Context

    monkeypatch.setenv("RAGRAPHS_LOCKED_SETTINGS", "web, fetch_allow_private,llm")
    assert CRAGContext().fetch_allow_private is False and CRAGContext(fetch_allow_private=False, k=2).k == 2
    with pytest.raises(ConfigError, match="'fetch_allow_private' is locked here"):
        CRAGContext(fetch_allow_private=True)
    with pytest.raises(ConfigError, match="'web' is locked here"):
        ERM4Context(web="searxng:http://10.0.0.1:8888")
    with pytest.raises(ConfigError, match="'llm' is locked here"):
        ERM4Context(llm="llamacpp:/etc/passwd")
    # a user's settings class with a required field (docs/extending.md) is built as before
    from dataclasses import dataclass as dc

    from ragraphs.settings import RAGContext

    @dc(kw_only=True)
    class Mine(RAGContext):
        user_id: str

    assert Mine(user_id="u1").user_id == "u1"
    # a setting whose default is made by a factory (the chat's `settings` dict) locks too
    from ragraphs.settings import ChatContext

    monkeypatch.setenv("RAGRAPHS_LOCKED_SETTINGS", "settings")
    assert ChatContext().settings == {}
    with pytest.raises(ConfigError, match="'settings' is locked here"):
        ChatContext(settings={"web": "ddg"})
    # a name no settings class has would leave a setting open: refused, with the closest names
    monkeypatch.setenv("RAGRAPHS_LOCKED_SETTINGS", "fetch_allow_privat,Web")
    with pytest.raises(ConfigError, match="names no setting 'Web'.*'web'|names no setting 'fetch_allow_privat'"):
        CRAGContext()
    # a Literal value in another case is the same value, locked or not
    monkeypatch.setenv("RAGRAPHS_LOCKED_SETTINGS", "retrieval")
    assert RAGContext(retrieval="Dense").retrieval == "dense"
    # a misspelt name fails where the graphs load (a server's start), not only each run
    import subprocess
    import sys

    env = {**os.environ, "RAGRAPHS_LOCKED_SETTINGS": "fetch_allow_privat"}
    r = subprocess.run([sys.executable, "-c", "import ragraphs.graphs"], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "names no setting 'fetch_allow_privat'" in r.stderr
    monkeypatch.delenv("RAGRAPHS_LOCKED_SETTINGS")
    assert CRAGContext(fetch_allow_private=True).fetch_allow_private is True
    assert Mine(user_id="u2").user_id == "u2"


def test_web_settings_out_of_range_and_bad_searxng_addresses_are_refused():
    from ragraphs.settings import CRAGContext, ERM4Context

    for bad in ({"fetch_timeout": 0}, {"web_timeout": -5}, {"web_timeout": 1e308}, {"fetch_max_bytes": 0},
                {"web": "searxng:127.0.0.1:8888"}):
        with pytest.raises(ConfigError):
            CRAGContext(**bad)
    with pytest.raises(ConfigError, match="bad SearXNG URL"):
        ERM4Context(web="searxng:localhost")
    assert CRAGContext(web="searxng:http://127.0.0.1:8888", web_timeout=0.5, fetch_timeout=30).web_timeout == 0.5


def test_studios_form_shows_each_settings_bounds():
    """The JSON schema a Studio form is drawn from carries the bounds the settings are checked
    against (it had none until 2026-12-01: the form took k=0 and the run refused it)."""
    from ragraphs.graphs.crag import graph as crag
    from ragraphs.graphs.migres import graph as migres
    from ragraphs.setting_values import describe_settings
    from ragraphs.settings import CRAGContext

    props = crag.get_context_jsonschema()["properties"]
    assert props["k"]["minimum"] == 1 and (props["web_timeout"]["minimum"], props["web_timeout"]["maximum"]) == (0.01, 3600)
    assert "minimum" not in props["upper"]  # a number without bounds stays without
    props = migres.get_context_jsonschema()["properties"]
    assert (props["max_queries"]["minimum"], props["max_queries"]["maximum"]) == (1, 3) and props["rerank_depth"]["minimum"] == 0
    # every bound the checks read is in the schema, as they read it
    props = crag.get_context_jsonschema()["properties"]
    for row in describe_settings(CRAGContext):
        if ">=" in row["kind"] or " from " in row["kind"]:
            assert "minimum" in props[row["name"]], row["name"]


def test_list_settings_of_a_users_class_are_checked_and_a_setting_without_default_is_named():
    """A field typed ``list[str]`` (or a tuple, a set) takes a list of its items' kind, not a
    string, whose characters a node would read one by one; a field of a user's class with no
    default, not given, is a ``ConfigError`` naming it (``ragraphs methods`` shows it as
    required). **Were bugs** (until 2026-12-03): any value was taken, and a bare ``TypeError``."""
    from ragraphs.setting_values import describe_settings

    @dataclass(kw_only=True)
    class Tagged(RAGContext):
        tags: list[str] = field(default_factory=list, metadata={"description": "tags"})
        pair: tuple[int, ...] = field(default=(1, 2), metadata={"description": "numbers"})

    assert Tagged(tags=["a", "b"], pair=[3]).tags == ["a", "b"]
    with pytest.raises(ConfigError, match=r"'tags' must be a list of items each a string, got 'abc'"):
        Tagged(tags="abc")
    with pytest.raises(ConfigError, match=r"'pair' must be a list of items each a whole number >= 0"):
        Tagged(pair=[1, "x"])

    @dataclass(kw_only=True)
    class Owned(RAGContext):
        owner: str = field(metadata={"description": "who runs it"})

    assert Owned(owner="me").owner == "me"
    with pytest.raises(ConfigError, match=r"Owned: the setting 'owner' has no default"):
        Owned()
    rows = {r["name"]: r for r in describe_settings(Owned)}
    assert rows["owner"]["default"] == "(required)" and rows["k"]["default"] == RAGContext().k
