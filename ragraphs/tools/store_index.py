"""The embeddings of the LangGraph store's vector index that ``langgraph.json`` configures.

``langgraph dev`` and a LangGraph deployment load this file by its path
(``"embed": "./ragraphs/tools/store_index.py:embeddings"``), so its import is absolute. The
index embeds the field ``title`` with MiniLM, as ERM4's reservoir in a store
(``reservoir="store"``, :mod:`ragraphs.tools.store_reservoir`) needs: its ``tau`` is a MiniLM
cosine. The model loads on the first text embedded.
"""

from ragraphs.tools.embeddings import MiniLMEmbeddings

embeddings = MiniLMEmbeddings()
