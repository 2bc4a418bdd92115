"""The HomeClaw Python plugin host: loads one plugin source and serves the Core's calls to it.

Started by the Core as `/usr/bin/python3 -B homeclaw_python_host.py` in the plugin's folder. It speaks
JSON lines (one object per line, UTF-8): the Core sends `init`, then `invoke` and `cancel`; the host
answers `hello` (or `fatal` and exits), then one `result` per invoke. Logs go to stderr. Closing stdin
ends the host. Each call runs in its own thread, so a slow or hung call does not hold up the others.
Standard library only.
"""
import asyncio
import os
import platform
import signal
import sys
import threading
import time
import traceback
from typing import Any, Dict

PROTOCOL = 1
HERE = os.path.dirname(os.path.abspath(__file__))
COMPAT = os.path.join(HERE, "compat")


def serve(wire: Any, log: Any, messages: Any, entries: Any) -> None:
    from homeclaw_host.calls import Cancellation, run_call
    from homeclaw_host.discovery import describe_error

    by_class = {entry.cls.__name__: entry for entry in entries}
    running: Dict[str, Cancellation] = {}

    def call(message: Dict[str, Any]) -> None:
        request_id = str(message.get("id"))
        reply: Dict[str, Any] = {"type": "result", "id": request_id}
        cancellation = running[request_id]
        try:
            target = message.get("target")
            entry = by_class.get(target) if target else (entries[0] if len(entries) == 1 else None)
            if entry is None:
                raise LookupError(f"no plugin class {target!r} in this host")
            reply.update(ok=True, value=run_call(entry, message, cancellation))
        except asyncio.CancelledError:
            reply.update(ok=False, cancelled=True, error="cancelled by the Core")
        except (asyncio.TimeoutError, TimeoutError) as err:
            deadline = message.get("deadline")
            if isinstance(deadline, (int, float)) and time.time() * 1000 >= deadline:
                reply.update(ok=False, timed_out=True, error_type="TimeoutError", error="did not finish before its deadline")
            else:  # the plugin's own timeout (a network call...), an error like any other
                reply.update(ok=False, error_type="TimeoutError", error=describe_error(err), traceback=traceback.format_exc())
        except BaseException as err:  # a plugin's exception (even SystemExit) is its answer, never the host's end
            reply.update(ok=False, error_type=type(err).__name__, error=describe_error(err), traceback=traceback.format_exc())
        finally:
            running.pop(request_id, None)
        wire.send(reply)

    for message in messages:
        if message is None:
            log.warning("ignored a line from the Core that is not a JSON object")
            continue
        kind = message.get("type")
        if kind == "invoke":
            request_id = str(message.get("id"))
            running[request_id] = Cancellation()
            threading.Thread(target=call, args=(message,), name=f"call-{request_id}", daemon=True).start()
        elif kind == "cancel":
            cancellation = running.get(str(message.get("id")))
            if cancellation is not None and not cancellation.cancel():
                log.info("call %s cannot be interrupted (not a coroutine); it keeps running", message.get("id"))
        else:
            log.warning("ignored a message of unknown type %r", kind)


def main() -> int:
    from homeclaw_host.wire import Wire, setup_logging

    wire = Wire()
    log = setup_logging()
    messages = Wire.messages()
    init = next(messages, None)
    if not init or init.get("type") != "init":
        wire.send({"type": "fatal", "error": "the first message must be an init message"})
        return 3
    if init.get("protocol") != PROTOCOL:
        wire.send({"type": "fatal", "error": f"protocol {init.get('protocol')!r} is not supported (this host speaks {PROTOCOL})"})
        return 3
    plugin_dir = os.path.realpath(str(init.get("plugin_dir") or "."))
    # The compat packages come first: a plugin's own plugin.py must not shadow the `plugin` package.
    sys.path[:0] = [COMPAT, plugin_dir]

    from homeclaw_host.calls import HostCore
    from homeclaw_host.discovery import LoadFailure, describe_error, load

    try:
        entries, skipped = load(init, HostCore(log))
    except LoadFailure as failure:
        wire.send({"type": "fatal", "error": str(failure), "traceback": failure.trace})
        return 3
    except BaseException as err:
        wire.send({"type": "fatal", "error": describe_error(err), "traceback": traceback.format_exc()})
        return 3
    for entry in entries:
        if entry.info.get("plugin_type"):
            log.info("Loaded %s plugin %s version %s", entry.info["plugin_type"], entry.cls.__name__, entry.info.get("version"))
    wire.send({
        "type": "hello",
        "protocol": PROTOCOL,
        "pid": os.getpid(),
        "python": platform.python_version(),
        "plugins": [entry.info for entry in entries],
        "skipped": skipped,
    })
    serve(wire, log, messages, entries)
    end_process_group()
    return 0


def end_process_group() -> None:
    """stdin closed: the Core is done with this host, or gone. Processes the plugin started in the host's
    group must not outlive it, even when the Core could not signal them (it was killed)."""
    if os.getpgrp() != os.getpid():
        return  # not started by the Core as a group leader (e.g. run by hand): leave the caller's group alone
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        os.killpg(os.getpgrp(), signal.SIGTERM)
    except OSError:
        pass


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    # Threads still running a plugin call (or started by a plugin) must not keep the host alive.
    os._exit(code)
