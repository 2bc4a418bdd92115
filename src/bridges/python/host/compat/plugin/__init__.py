"""RAGFlow's `plugin` package as the HomeClaw Python host provides it.

RAGFlow plugin files import their base class from `plugin.llm_tool_plugin`; this package supplies that
module (and `plugin.common`) so such a file loads unchanged. RAGFlow's own plugin manager is not needed:
the HomeClaw Core discovers and calls plugins itself.
"""
