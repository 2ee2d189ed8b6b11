"""Integrations behind small interfaces: llm, embeddings, vectorstore, bm25, websearch, judges, text."""
