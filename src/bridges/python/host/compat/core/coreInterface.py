"""The Core as a HomeClaw built-in plugin sees it (`self.coreInst`).

The host passes an instance whose send_response_* methods deliver the text as the reply to the request
being run. History, memory and LLM access are not offered to Python plugins: those methods answer
empty (None, [] or "").
"""
from typing import Any, List, Optional, Tuple


class CoreInterface:
    async def send_response_to_request_channel(self, response: str, request: Any = None) -> None:
        return None

    async def send_response_for_plugin(self, response: str, request: Any = None) -> None:
        return None

    async def send_response_to_latest_channel(self, response: str) -> None:
        return None

    async def send_response_to_channel_by_key(self, key: str, response: str) -> None:
        return None

    def check_permission(self, *args: Any, **kwargs: Any) -> bool:
        return True

    def get_latest_chat_info(self) -> Tuple[Optional[str], Optional[str], Optional[str]]:
        return None, None, None

    def get_latest_chats(self, *args: Any, **kwargs: Any) -> List[Any]:
        return []

    def get_latest_chats_by_role(self, *args: Any, **kwargs: Any) -> List[Any]:
        return []

    def add_chat_history(self, *args: Any, **kwargs: Any) -> None:
        return None

    def add_chat_history_by_role(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def add_user_input_to_memory(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def openai_chat_completion(self, *args: Any, **kwargs: Any) -> Optional[str]:
        return None

    def get_session_id(self, *args: Any, **kwargs: Any) -> str:
        return ""

    def get_run_id(self, *args: Any, **kwargs: Any) -> str:
        return ""
