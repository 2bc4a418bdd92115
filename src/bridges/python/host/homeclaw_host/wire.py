"""The host's side of the JSON-lines protocol: one JSON object per line on the real stdout, logs on stderr.

Plugin code must never write into the protocol stream, so at start the real stdout is kept on a private
file descriptor and fd 1 is pointed at stderr: print(), C extensions and child processes that write to
stdout all end up on stderr, where the Core logs them.
"""
import json
import logging
import os
import sys
import threading
from typing import Any, Dict, Iterator, Optional


def _json_fallback(value: Any) -> Any:
    for attribute in ("model_dump", "to_dict", "dict"):
        method = getattr(value, attribute, None)
        if callable(method):
            try:
                return method()
            except Exception:  # a broken to_dict must not break the answer
                break
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def dumps(message: Dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, default=_json_fallback, allow_nan=False)


class Wire:
    def __init__(self) -> None:
        self._out = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self._lock = threading.Lock()

    def send(self, message: Dict[str, Any]) -> None:
        try:
            text = dumps(message)
        except ValueError as err:  # NaN or infinity in a result
            text = dumps({**{k: v for k, v in message.items() if k in ("type", "id")}, "ok": False,
                          "error": f"the result cannot be sent as JSON: {err}"})
        data = (text + "\n").encode("utf-8")
        with self._lock:
            view = memoryview(data)
            while view:
                written = os.write(self._out, view)
                view = view[written:]

    @staticmethod
    def messages() -> Iterator[Optional[Dict[str, Any]]]:
        """Yields each stdin line parsed as an object (None for a line that is not one) until EOF."""
        stdin = sys.stdin.buffer
        while True:
            line = stdin.readline()
            if not line:
                return
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line.decode("utf-8"))
            except ValueError:
                yield None
                continue
            yield value if isinstance(value, dict) else None


class JsonLogHandler(logging.Handler):
    """Writes log records to stderr as JSON lines the Core recognises by their "hclog" key."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info:
                message = message + "\n" + logging.Formatter().formatException(record.exc_info)
            line = dumps({"hclog": 1, "level": record.levelname.lower(), "logger": record.name, "msg": message})
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def setup_logging() -> logging.Logger:
    root = logging.getLogger()
    root.handlers[:] = [JsonLogHandler()]
    root.setLevel(logging.INFO)
    return logging.getLogger("homeclaw.host")
