"""Graph nodes: small factories ``make_<node>(components) -> fn(state, runtime) -> update``.

Each node does one thing; heavy components come from the graph's :class:`Components`,
run settings from ``runtime.context``.
"""
