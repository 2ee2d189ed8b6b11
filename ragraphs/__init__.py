"""ragraphs: advanced RAG methods as typed LangGraph state graphs, offline by default."""

__version__ = "0.1.0"

from .components import Components, default_components  # noqa: E402

__all__ = ["Components", "default_components", "__version__"]
