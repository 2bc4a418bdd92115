"""The LLM tool plugin base class, under the module name RAGFlow plugin files import it from.

A tool plugin is a class that derives from LLMToolPlugin, sets `_version_`, describes itself with the
classmethod `get_metadata()` (a tool name, a description and a map of parameters) and does its work in
`invoke(**params)`, returning a string. The HomeClaw host calls `invoke` with the parameters as keyword
arguments, the way RAGFlow does.
"""
from typing import Any, TypedDict

from .common import PLUGIN_TYPE_LLM_TOOLS

__all__ = [
    "LLMToolParameter",
    "LLMToolMetadata",
    "LLMToolPlugin",
    "llm_tool_metadata_to_openai_tool",
    "PLUGIN_TYPE_LLM_TOOLS",
]


class LLMToolParameter(TypedDict, total=False):
    type: str
    description: str
    displayDescription: str
    required: bool


class LLMToolMetadata(TypedDict, total=False):
    name: str
    displayName: str
    description: str
    displayDescription: str
    parameters: dict[str, LLMToolParameter]


class LLMToolPlugin:
    """Base of every LLM tool plugin; subclasses are the plugins."""

    plugin_type = PLUGIN_TYPE_LLM_TOOLS

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # RAGFlow's plugin library exposes a plugin's name (its class name unless `_alias_` is set) and
        # its version (`_version_`) on the class; its loader logs both.
        if "name" not in cls.__dict__:
            cls.name = cls.__dict__.get("_alias_", cls.__name__)
        if "version" not in cls.__dict__:
            cls.version = getattr(cls, "_version_", None)

    @classmethod
    def get_metadata(cls) -> LLMToolMetadata:
        raise NotImplementedError(f"{cls.__name__} does not implement get_metadata()")

    def invoke(self, **kwargs: Any) -> str:
        raise NotImplementedError(f"{type(self).__name__} does not implement invoke()")


def llm_tool_metadata_to_openai_tool(llm_tool_metadata: LLMToolMetadata) -> dict[str, Any]:
    """The OpenAI function-tool form of a tool's metadata."""
    parameters = llm_tool_metadata.get("parameters") or {}
    return {
        "type": "function",
        "function": {
            "name": llm_tool_metadata["name"],
            "description": llm_tool_metadata.get("description", ""),
            "parameters": {
                "type": "object",
                "properties": {
                    key: {"type": spec.get("type", "string"), "description": spec.get("description", "")}
                    for key, spec in parameters.items()
                },
                "required": [key for key, spec in parameters.items() if spec.get("required")],
            },
        },
    }
