"""Graph nodes: small factories ``make_<node>(components) -> fn(state, runtime) -> update``.

Each node does one thing; heavy components come from the graph's :class:`Components`,
run settings from the run's context, read once as ``ctx = context_of(runtime, XContext)``
(the method's dataclass in :mod:`ragraphs.settings`), so that a graph invoked without
``context=`` runs on the class's defaults, and one given another method's settings says so.
Nodes never import a graph module.
"""
