"""HomeClaw's built-in plugin base class, under the module name HomeClaw plugins import it from.

A HomeClaw built-in is a subclass constructed with `coreInst`, given its `config` (the plugin's
config.yml merged with plugin.yaml), initialised once with `initialize()`, and then run: either a
method named after a capability id, or `run()`. While it runs, `self.promptRequest` holds the user's
message and `self.user_input` its text; a method that returns nothing may instead send its reply with
`await self.coreInst.send_response_to_request_channel(text, self.promptRequest)`.
"""
from typing import Any, Optional, Tuple


class BasePlugin:
    def __init__(self, coreInst: Any = None) -> None:
        self.config: Optional[dict] = None
        self.initialized = False
        self.coreInst = coreInst
        self.user_input = ""
        self.promptRequest: Any = None
        self.description = ""
        self.plugin_id = ""
        self.keywords: list = []
        self.parameters: dict = {}
        self.registration: Optional[dict] = None

    def initialize(self) -> None:
        config = self.config or {}
        if config.get("description"):
            self.set_description(str(config["description"]))
        raw_id = str(config.get("id") or config.get("plugin_id") or "").strip()
        if raw_id:
            self.plugin_id = raw_id.lower().replace(" ", "_")
        self.initialized = True

    def get_description(self) -> str:
        return self.description

    def set_description(self, description: str) -> None:
        self.description = description

    def get_keywords(self) -> list:
        return self.keywords

    def set_keywords(self, keywords: list) -> None:
        self.keywords = keywords

    def add_keyword(self, keyword: str) -> None:
        self.keywords.append(keyword)

    def remove_keyword(self, keyword: str) -> None:
        self.keywords.remove(keyword)

    def get_parameters(self) -> dict:
        return self.parameters

    def set_parameters(self, parameters: dict) -> None:
        self.parameters = parameters

    async def run(self) -> Any:
        """Override: the plugin's single entry point (self.promptRequest / self.user_input are set)."""
        return None

    async def check_best_plugin(self, text: str) -> Tuple[bool, str]:
        return False, ""

    def cleanup(self) -> None:
        pass
