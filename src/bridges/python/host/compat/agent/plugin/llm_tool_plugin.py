"""Same module as plugin.llm_tool_plugin (newer RAGFlow import path)."""
from plugin.llm_tool_plugin import *  # noqa: F401,F403
from plugin.llm_tool_plugin import (  # noqa: F401
    LLMToolMetadata,
    LLMToolParameter,
    LLMToolPlugin,
    llm_tool_metadata_to_openai_tool,
)
