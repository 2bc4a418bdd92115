"""The request and result records of HomeClaw's plugin standard, as plain classes.

Each record reads as attributes (`request.user_input`) and as a mapping (`request.get("user_input")`,
`request["user_input"]`), and `model_dump()` gives a dict, so code written against HomeClaw's models
works with them.
"""
from typing import Any, Dict


class _Record:
    _fields: Dict[str, Any] = {}

    def __init__(self, **values: Any) -> None:
        for key, default in self._fields.items():
            value = values.pop(key, None)
            if value is None:
                value = dict(default) if isinstance(default, dict) else default
            setattr(self, key, value)
        for key, value in values.items():
            setattr(self, key, value)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: str) -> bool:
        return hasattr(self, key)

    def model_dump(self) -> Dict[str, Any]:
        return {key: value for key, value in vars(self).items() if not key.startswith("_")}

    dict = model_dump
    to_dict = model_dump

    def model_copy(self, deep: bool = False) -> "_Record":
        import copy

        return copy.deepcopy(self) if deep else copy.copy(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model_dump()!r})"


class PluginRequest(_Record):
    """What the Core sends a plugin: the user's text and who, where and what for."""

    _fields = {
        "request_id": "",
        "plugin_id": "",
        "user_input": "",
        "user_id": "",
        "user_name": "",
        "channel_name": "",
        "channel_type": "",
        "app_id": "",
        "session_id": None,
        "chat_context": None,
        "metadata": {},
        "capability_id": None,
        "capability_parameters": {},
        "deadline": None,
    }


class PluginResult(_Record):
    """What a plugin answers: success, the text for the user, or an error."""

    _fields = {
        "request_id": "",
        "plugin_id": "",
        "success": True,
        "text": "",
        "error": None,
        "metadata": {},
    }


class PromptRequest(_Record):
    """The user message a built-in plugin sees as `self.promptRequest` while it runs."""

    _fields = {
        "request_id": "",
        "channel_name": "",
        "request_metadata": {},
        "channelType": "",
        "user_name": "",
        "app_id": "",
        "user_id": "",
        "contentType": "text",
        "system_user_id": None,
        "text": "",
        "action": "respond",
        "host": "",
        "port": 0,
        "images": [],
        "videos": [],
        "audios": [],
        "files": None,
        "timestamp": 0.0,
    }

