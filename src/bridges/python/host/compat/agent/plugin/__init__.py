"""RAGFlow's `agent.plugin` package: the same modules as `plugin`, under the newer import path.

Both paths name the very same classes, so a plugin written against either one is recognised.
"""
