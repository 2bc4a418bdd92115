"""Newer RAGFlow releases keep their plugin package under `agent.plugin`; see agent/plugin."""
