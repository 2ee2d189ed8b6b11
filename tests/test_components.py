"""``Components.warm_up``: the models a run will use load before its clock starts."""

from ragraphs.components import Components
from ragraphs.settings import RAGContext


class CountingRetriever:
    def __init__(self):
        self.embedded = []

    def embed_queries(self, queries):
        self.embedded.extend(queries)
        return [[0.0] for _ in queries]


class LazyModel:
    loads = 0

    def _load(self):
        LazyModel.loads += 1


def test_warm_up_embeds_a_query_and_loads_the_llm_once():
    retriever, llm = CountingRetriever(), LazyModel()
    c = Components(retriever=retriever, llm=llm)
    LazyModel.loads = 0
    took = c.warm_up(RAGContext())
    assert retriever.embedded == ["warm up"] and LazyModel.loads == 1
    assert took >= 0.0


def test_warm_up_skips_the_llm_of_a_retrieval_only_run_and_opens_no_store(tmp_path):
    llm = LazyModel()
    c = Components(llm=llm, store_path=str(tmp_path / "never"))
    LazyModel.loads = 0
    c.warm_up(RAGContext(skip_generation=True))
    assert LazyModel.loads == 0
    assert c._retriever is None and not (tmp_path / "never").exists()  # no store was built


def test_a_failing_load_is_left_to_the_run():
    class Broken:
        def embed_queries(self, queries):
            raise RuntimeError("no model file")

    assert Components(retriever=Broken()).warm_up(RAGContext(skip_generation=True)) >= 0.0
