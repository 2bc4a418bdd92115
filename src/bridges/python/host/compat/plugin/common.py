"""Plugin type names RAGFlow groups its plugins by."""

PLUGIN_TYPE_LLM_TOOLS = "llm_tools"
