"""Finds the plugin classes of a plugin source, constructs them and describes them for the Core.

Three class forms are recognised:
  ragflow  - a subclass of LLMToolPlugin, or any class with get_metadata() and invoke();
  homeclaw - a subclass of HomeClaw's BasePlugin (constructed with coreInst, configured, initialised);
  generic  - a class named *Plugin with run() (HomeClaw's run(request) form without the base class).
A folder plugin must resolve to exactly one class; a file under embedded_plugins/ may hold several
LLM tool classes, each its own plugin.
"""
import asyncio
import inspect
import itertools
import os
import re
import sys
import threading
import traceback
from typing import Any, Dict, List, Optional, Tuple

from base.BasePlugin import BasePlugin
from plugin.llm_tool_plugin import LLMToolPlugin

_COMPAT_BASES = (LLMToolPlugin, BasePlugin, object)
_module_numbers = itertools.count()


class LoadFailure(Exception):
    def __init__(self, message: str, trace: Optional[str] = None) -> None:
        super().__init__(message)
        self.trace = trace


class PluginEntry:
    def __init__(self, cls: type, kind: str, module_file: str) -> None:
        self.cls = cls
        self.kind = kind
        self.module_file = module_file
        self.instance: Any = None
        self.methods: List[str] = own_methods(cls)
        # HomeClaw built-ins read the request from attributes of the one instance: one call at a time.
        self.attribute_lock = threading.Lock()
        self.info: Dict[str, Any] = {}


def describe_error(err: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(err), err)).strip()
    return text.splitlines()[-1] if text else type(err).__name__


def own_methods(cls: type) -> List[str]:
    """Public methods the plugin itself defines (not those only inherited from the compat bases)."""
    names = set()
    for klass in cls.__mro__:
        if klass in _COMPAT_BASES:
            continue
        for name, value in vars(klass).items():
            if name.startswith("_"):
                continue
            if inspect.isfunction(value) or isinstance(value, (classmethod, staticmethod)):
                names.add(name)
    return sorted(names)


def module_files(init: Dict[str, Any]) -> List[str]:
    plugin_dir = os.path.realpath(init["plugin_dir"])
    module = init.get("module")
    if init.get("mode") == "file":
        return [os.path.realpath(module)]
    if module:
        path = os.path.realpath(os.path.join(plugin_dir, module))
        if not path.startswith(plugin_dir + os.sep):
            raise LoadFailure(f'config.module "{module}" points outside the plugin folder')
        if not os.path.isfile(path):
            raise LoadFailure(f'config.module "{module}" does not exist')
        return [path]
    default = os.path.join(plugin_dir, "plugin.py")
    if os.path.isfile(default):
        return [default]
    found = sorted(
        os.path.join(plugin_dir, name)
        for name in os.listdir(plugin_dir)
        if name.endswith(".py") and not name.startswith(("_", "."))
    )
    if not found:
        raise LoadFailure(f"no Python module in {plugin_dir}: expected plugin.py (or config.module)")
    return found


def import_file(path: str) -> Any:
    import importlib.util

    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"homeclaw_plugin_{next(_module_numbers)}_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LoadFailure(f"{os.path.basename(path)} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as err:  # SystemExit at import time is a load failure too
        raise LoadFailure(f"importing {os.path.basename(path)} failed: {describe_error(err)}", traceback.format_exc()) from None
    return module


def classify(cls: type) -> Optional[str]:
    if cls.__dict__.get("_skipload_") or inspect.isabstract(cls):
        return None
    if issubclass(cls, LLMToolPlugin):
        return "ragflow"
    if callable(getattr(cls, "get_metadata", None)) and callable(getattr(cls, "invoke", None)):
        return "ragflow"
    if issubclass(cls, BasePlugin):
        return "homeclaw"
    if cls.__name__.endswith("Plugin") and callable(getattr(cls, "run", None)):
        return "generic"
    return None


def classes_of(module: Any) -> List[type]:
    return [value for value in vars(module).values() if inspect.isclass(value) and value.__module__ == module.__name__]


def find_candidates(modules: List[Tuple[str, Any]]) -> List[PluginEntry]:
    found: List[PluginEntry] = []
    for path, module in modules:
        for cls in classes_of(module):
            kind = classify(cls)
            if kind:
                found.append(PluginEntry(cls, kind, path))
    # Intermediate base classes are not plugins themselves: only the most derived ones are.
    return [e for e in found if not any(o.cls is not e.cls and issubclass(o.cls, e.cls) for o in found)]


def select(init: Dict[str, Any], modules: List[Tuple[str, Any]]) -> Tuple[List[PluginEntry], List[Dict[str, str]]]:
    wanted = init.get("class")
    if wanted:
        for path, module in modules:
            cls = vars(module).get(wanted)
            if inspect.isclass(cls):
                return [PluginEntry(cls, classify(cls) or "generic", path)], []
        raise LoadFailure(f'config.class "{wanted}" is not a class defined in {", ".join(os.path.basename(p) for p, _ in modules)}')
    candidates = find_candidates(modules)
    names = ", ".join(os.path.basename(p) for p, _ in modules)
    if init.get("mode") == "file":
        tools = [e for e in candidates if e.kind == "ragflow"]
        skipped = [{"class": e.cls.__name__, "reason": "not an LLM tool plugin (no get_metadata() and invoke())"}
                   for e in candidates if e.kind != "ragflow"]
        return tools, skipped
    if not candidates:
        raise LoadFailure(
            f"no plugin class in {names}: expected a subclass of LLMToolPlugin (RAGFlow) or BasePlugin (HomeClaw), "
            "or a class with get_metadata() and invoke(), or a *Plugin class with run()"
        )
    if len(candidates) > 1:
        listed = ", ".join(e.cls.__name__ for e in candidates)
        verb = "defines" if len(modules) == 1 else "define"
        raise LoadFailure(f"{names} {verb} several plugin classes ({listed}): set config.class in plugin.yaml to choose one")
    return candidates, []


def run_maybe_async(value: Any) -> Any:
    return asyncio.run(value) if inspect.isawaitable(value) else value


def construct(entry: PluginEntry, core: Any) -> None:
    cls = entry.cls
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        signature = None
    try:
        if signature is not None and "coreInst" in signature.parameters:
            entry.instance = cls(coreInst=core)
        else:
            if signature is not None:
                try:
                    signature.bind()
                except TypeError:
                    raise LoadFailure(f"cannot construct {cls.__name__}: its __init__{signature} needs arguments") from None
            entry.instance = cls()
    except LoadFailure:
        raise
    except BaseException as err:
        raise LoadFailure(f"constructing {cls.__name__} failed: {describe_error(err)}", traceback.format_exc()) from None


def configure(entry: PluginEntry, init: Dict[str, Any]) -> None:
    """Gives the instance its config; HomeClaw built-ins also get manifest fields and initialize()."""
    instance = entry.instance
    config = dict(init.get("config") or {})
    own = getattr(instance, "config", None)
    if entry.kind == "homeclaw":
        merged = {**config, **(own if isinstance(own, dict) else {})}
        for key, value in (init.get("manifest") or {}).items():
            if value is not None and not merged.get(key):
                merged[key] = value
        instance.config = merged
        try:
            run_maybe_async(instance.initialize())
        except BaseException as err:
            raise LoadFailure(f"{entry.cls.__name__}.initialize() failed: {describe_error(err)}", traceback.format_exc()) from None
        return
    if own is None:
        try:
            instance.config = config
        except AttributeError:
            pass  # a class with __slots__ or a read-only property keeps its own
    if entry.kind == "generic" and "initialize" in entry.methods:
        try:
            run_maybe_async(instance.initialize())
        except BaseException as err:
            raise LoadFailure(f"{entry.cls.__name__}.initialize() failed: {describe_error(err)}", traceback.format_exc()) from None


def version_of(cls: type) -> Optional[str]:
    for attribute in ("_version_", "version"):
        value = getattr(cls, attribute, None)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    return None


def describe(entry: PluginEntry) -> Dict[str, Any]:
    cls, instance = entry.cls, entry.instance
    doc = inspect.getdoc(cls) if cls.__doc__ else None
    info: Dict[str, Any] = {
        "class": cls.__name__,
        "module": os.path.basename(entry.module_file),
        "kind": entry.kind,
        "version": version_of(cls),
        "has_version_attribute": "_version_" in dir(cls),
        "plugin_type": getattr(cls, "plugin_type", None) if entry.kind == "ragflow" else None,
        "methods": entry.methods,
        "doc": doc.strip().split("\n\n")[0][:500] if doc else None,
    }
    if entry.kind == "ragflow":
        try:
            metadata = run_maybe_async(instance.get_metadata())
        except BaseException as err:
            raise LoadFailure(f"{cls.__name__}.get_metadata() failed: {describe_error(err)}", traceback.format_exc()) from None
        if not isinstance(metadata, dict):
            raise LoadFailure(f"{cls.__name__}.get_metadata() must return a dict, not {type(metadata).__name__}")
        info["metadata"] = metadata
    else:
        plugin_id = getattr(instance, "plugin_id", None)
        description = getattr(instance, "description", None)
        config = getattr(instance, "config", None)
        info["plugin_id"] = plugin_id if isinstance(plugin_id, str) and plugin_id else None
        info["description"] = description if isinstance(description, str) and description else None
        if isinstance(config, dict) and isinstance(config.get("name"), str):
            info["name"] = config["name"]
    return info


def load(init: Dict[str, Any], core: Any) -> Tuple[List[PluginEntry], List[Dict[str, str]]]:
    modules = [(path, import_file(path)) for path in module_files(init)]
    entries, skipped = select(init, modules)
    for entry in entries:
        construct(entry, core)
        configure(entry, init)
        entry.info = describe(entry)
    return entries, skipped
