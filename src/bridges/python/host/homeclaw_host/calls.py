"""Runs one invocation against a plugin instance: picks the method, passes the parameters the way the
plugin's form expects them, awaits coroutines under the deadline, and turns the answer into JSON.

  method named after the capability id  -> method(**params)   (or method(params) / attribute style)
  invoke (RAGFlow)                       -> invoke(**params), or invoke(params) for a single-argument invoke
  run                                    -> run(request) when it takes an argument, else run() with
                                            self.promptRequest / self.user_input set (HomeClaw)
"""
import asyncio
import contextlib
import inspect
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from base.base import PluginRequest, PromptRequest
from core.coreInterface import CoreInterface

from .discovery import PluginEntry

_RESERVED = {"get_metadata", "initialize", "cleanup", "invoke", "run"}
_DICT_ARGUMENT_NAMES = {"arguments", "args", "params", "parameters"}
_current = threading.local()


class Cancellation:
    """Lets the main thread cancel a call; only coroutines can actually be interrupted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._task: Optional["asyncio.Task[Any]"] = None
        self.requested = False

    def attach(self, loop: asyncio.AbstractEventLoop, task: "asyncio.Task[Any]") -> None:
        with self._lock:
            self._loop, self._task = loop, task
            if self.requested:
                loop.call_soon_threadsafe(task.cancel)

    def cancel(self) -> bool:
        """Returns whether the call can be interrupted (it is a coroutine)."""
        with self._lock:
            self.requested = True
            if self._loop is not None and self._task is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._task.cancel)
                return True
            return False


class HostCore(CoreInterface):
    """`coreInst` of HomeClaw built-ins: a reply sent while a call runs becomes that call's answer."""

    def __init__(self, log: Any) -> None:
        self._log = log

    def _deliver(self, response: Any) -> None:
        pushed: Optional[List[str]] = getattr(_current, "pushed", None)
        if pushed is None:
            self._log.warning("a reply sent outside of a request was dropped: %.200s", response)
            return
        pushed.append("" if response is None else str(response))

    async def send_response_to_request_channel(self, response: str, request: Any = None) -> None:
        self._deliver(response)

    async def send_response_for_plugin(self, response: str, request: Any = None) -> None:
        self._deliver(response)

    async def send_response_to_latest_channel(self, response: str) -> None:
        self._deliver(response)


def _bindable(function: Callable[..., Any], params: Dict[str, Any]) -> Tuple[str, Optional[inspect.Signature]]:
    """How to pass params: 'kwargs', 'dict' (one positional argument), 'none' (no arguments) or 'mismatch'."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return "kwargs", None
    try:
        signature.bind(**params)
        return "kwargs", signature
    except TypeError:
        pass
    positional = [p for p in signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    if len(positional) == 1 and not any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values()):
        # RAGFlow's earlier tools took all arguments as one dict: invoke(self, arguments).
        only = positional[0].name
        unexpected = set(params) - set(signature.parameters)
        if (unexpected and only not in params) or (not params and only in _DICT_ARGUMENT_NAMES):
            return "dict", signature
    if not signature.parameters:
        return "none", signature
    return "mismatch", signature


def _takes_positional(function: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in parameters)


def _target(entry: PluginEntry, capability: str) -> Tuple[str, Callable[..., Any]]:
    instance = entry.instance
    if capability in entry.methods and capability not in _RESERVED:
        return capability, getattr(instance, capability)
    if "invoke" in entry.methods:
        return "invoke", instance.invoke
    if "run" in entry.methods:
        return "run", instance.run
    raise LookupError(f"{entry.cls.__name__} has no method {capability}() and no invoke() or run() to fall back on")


def _await(value: Any, deadline_ms: Optional[float], cancellation: Cancellation) -> Any:
    if not inspect.isawaitable(value):
        return value

    async def bounded() -> Any:
        if deadline_ms is None:
            return await value
        remaining = max(deadline_ms / 1000.0 - time.time(), 0.001)
        return await asyncio.wait_for(value, timeout=remaining)

    loop = asyncio.new_event_loop()
    try:
        task = loop.create_task(bounded())
        cancellation.attach(loop, task)
        return loop.run_until_complete(task)
    finally:
        loop.close()


def _requests(message: Dict[str, Any], params: Dict[str, Any]) -> Tuple[PluginRequest, PromptRequest]:
    raw = message.get("request") if isinstance(message.get("request"), dict) else {}
    user_input = params.get("user_input") if isinstance(params.get("user_input"), str) else raw.get("user_input") or ""
    fields = {k: raw.get(k) for k in PluginRequest._fields if k in raw}
    request = PluginRequest(**{**fields, "user_input": user_input, "capability_id": message.get("capability"),
                               "capability_parameters": dict(params)})
    prompt = PromptRequest(
        request_id=raw.get("request_id") or "",
        channel_name=raw.get("channel_name") or "",
        user_name=raw.get("user_name") or "",
        user_id=raw.get("user_id") or "",
        text=user_input,
        timestamp=time.time(),
        request_metadata={"capability_id": message.get("capability"), "capability_parameters": dict(params),
                          "session_id": raw.get("session_id"), "metadata": raw.get("metadata") or {}},
    )
    return request, prompt


def _answer(value: Any, pushed: List[str]) -> Any:
    if value is None:
        return "\n".join(pushed)
    if isinstance(value, (str, int, float, bool, list, dict)):
        return value
    for attribute in ("model_dump", "to_dict", "dict"):
        method = getattr(value, attribute, None)
        if callable(method):
            dumped = method()
            if isinstance(dumped, dict):
                return dumped
    return str(value)


def run_call(entry: PluginEntry, message: Dict[str, Any], cancellation: Cancellation) -> Any:
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    capability = str(message.get("capability") or "")
    deadline = message.get("deadline") if isinstance(message.get("deadline"), (int, float)) else None
    name, function = _target(entry, capability)
    request, prompt = _requests(message, params)
    instance = entry.instance
    uses_attributes = entry.kind == "homeclaw"
    lock = entry.attribute_lock if uses_attributes else contextlib.nullcontext()
    _current.pushed = []
    try:
        with lock:
            if uses_attributes:
                instance.promptRequest = prompt
                instance.user_input = request.user_input
            if name == "run":
                takes_argument = _takes_positional(function)
                value = function(request) if takes_argument else function()
                return _answer(_await(value, deadline, cancellation), _current.pushed)
            how, signature = _bindable(function, params)
            if how == "kwargs":
                value = function(**params)
            elif how == "dict":
                value = function(params)
            elif how == "none" and uses_attributes:
                # HomeClaw passes a capability's parameters through the plugin's config.
                saved = instance.config
                instance.config = {**(saved if isinstance(saved, dict) else {}), **params}
                try:
                    return _answer(_await(function(), deadline, cancellation), _current.pushed)
                finally:
                    instance.config = saved
            else:
                raise TypeError(f"{entry.cls.__name__}.{name}{signature} does not accept the parameters {sorted(params)}")
            return _answer(_await(value, deadline, cancellation), _current.pushed)
    finally:
        _current.pushed = None
        if uses_attributes:
            instance.promptRequest = None
