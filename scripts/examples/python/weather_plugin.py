#!/usr/bin/python3
"""A HomeClaw Bus plugin in Python with paho-mqtt (1.x or 2.x): a weather demo answering from a
built-in table, no network needed.

    /usr/bin/python3 scripts/examples/python/weather_plugin.py --url mqtt://127.0.0.1:1883 --id pyweather

What every plugin does on the bus: connect with a stable client id, a will and TCP_NODELAY;
subscribe to its own registered/invoke/control topics and the Core status; publish its retained
status and its descriptor; heartbeat; answer each invoke on result/<request_id>; re-register when the
Core is reborn or asks for it.
"""
import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from urllib.parse import urlparse

import paho.mqtt.client as mqtt

# Topic names are built from the root, as in src/protocol/topics.ts.
ROOT = "homeclaw"


def topic(*parts):
    return "/".join((ROOT,) + parts)


FORECASTS = {
    "paris": ("sunny", 24),
    "london": ("light rain", 17),
    "berlin": ("cloudy", 19),
    "tokyo": ("humid and warm", 29),
    "new york": ("thunderstorms", 26),
    "sydney": ("clear", 21),
}


def make_descriptor(plugin_id):
    return {
        "id": plugin_id,
        "name": "Python weather",
        "description": "Weather forecasts for a few cities, from a built-in table.",
        "examples": ["what is the weather in Paris", "will it rain in London tomorrow"],
        "type": "mqtt",
        "capabilities": [
            {
                "id": "forecast",
                "name": "Forecast",
                "description": "The weather forecast for a city.",
                "parameters": [
                    {"name": "city", "type": "string", "required": True, "description": "City name"},
                    {
                        "name": "days",
                        "type": "integer",
                        "required": False,
                        "default": 1,
                        "description": "How many days ahead (1-3)",
                    },
                ],
                "post_process": False,
            }
        ],
        "config": {"max_concurrency": 1},
    }


def forecast(params):
    """Returns (success, text_or_error, data)."""
    city = params["city"].strip()
    days = params.get("days", 1)
    entry = FORECASTS.get(city.lower())
    if entry is None:
        known = ", ".join(sorted(name.title() for name in FORECASTS))
        return False, 'no forecast for "%s" (known cities: %s)' % (city, known), None
    sky, temp = entry
    text = "%s: %s, %d°C%s" % (city.title(), sky, temp, "" if days == 1 else " for the next %d days" % days)
    return True, text, {"city": city.title(), "sky": sky, "temperature_c": temp, "days": days}


JSON_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def check_parameters(capability, params):
    """Every problem with the parameters, as the Core's JSON Schema check would list them."""
    problems = []
    declared = {p["name"]: p for p in capability["parameters"]}
    for name, spec in declared.items():
        if name not in params:
            if spec.get("required", True):
                problems.append('missing required parameter "%s"' % name)
        elif not JSON_TYPES[spec["type"]](params[name]):
            problems.append("parameter %s must be %s" % (name, spec["type"]))
    for name in params:
        if name not in declared:
            problems.append('unknown parameter "%s"' % name)
    return problems


HANDLERS = {"forecast": forecast}


class Plugin:
    def __init__(self, args):
        url = urlparse(args.url)
        if url.scheme not in ("mqtt", "tcp"):
            raise SystemExit("only mqtt:// URLs are supported, got %r" % args.url)
        self.host = url.hostname or "127.0.0.1"
        self.port = url.port or 1883
        self.plugin_id = args.id
        self.descriptor = make_descriptor(args.id)
        self.capabilities = {c["id"]: c for c in self.descriptor["capabilities"]}
        self.heartbeat_sec = args.heartbeat_sec
        self.epoch = int(time.time() * 1000)
        self.seq = 0
        self.last_core_birth = None
        self.registered = threading.Event()
        self.stopping = threading.Event()
        self.heartbeat_thread = None
        self.unregister = args.unregister

        client_id = args.client_id or "homeclaw-plugin-%s" % args.id
        self.client_id = client_id
        if hasattr(mqtt, "CallbackAPIVersion"):  # paho-mqtt 2.x
            self.client = mqtt.Client(
                mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311, clean_session=True
            )
        else:  # paho-mqtt 1.x
            self.client = mqtt.Client(client_id=client_id, protocol=mqtt.MQTTv311, clean_session=True)
        if args.username:
            self.client.username_pw_set(args.username, args.password)
        self.client.will_set(
            topic("plugins", "status", self.plugin_id),
            json.dumps({"state": "offline", "epoch": self.epoch}),
            qos=1,
            retain=True,
        )
        self.client.reconnect_delay_set(min_delay=1, max_delay=30)
        self.client.on_socket_open = self.on_socket_open
        self.client.on_connect = self.on_connect
        self.client.on_message = self.on_message
        self.client.on_disconnect = self.on_disconnect

    # --- connection -------------------------------------------------------------------------------

    def on_socket_open(self, client, userdata, sock):
        # QoS 1 round trips stall ~40-200 ms behind Nagle's algorithm without this.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def on_connect(self, client, userdata, flags, rc, *rest):  # rest: paho 2.x properties
        if rc != 0:
            code = getattr(rc, "value", rc)  # paho 2.x passes a ReasonCode
            log("connection refused: %s" % CONNACK_REFUSALS.get(code, code))
            return
        client.subscribe(
            [
                (topic("plugins", "registered", self.plugin_id), 1),
                (topic("plugins", "registered", "_invalid"), 1),
                (topic("plugins", "invoke", self.plugin_id), 1),
                (topic("plugins", "control", self.plugin_id), 1),
                (topic("core", "status"), 1),
            ]
        )
        self.publish(topic("plugins", "status", self.plugin_id), {"state": "online", "epoch": self.epoch}, retain=True)
        self.register()

    def on_disconnect(self, client, userdata, *args):
        if not self.stopping.is_set():
            log("disconnected; paho reconnects")

    def register(self):
        message = dict(self.descriptor, epoch=self.epoch, heartbeat_interval_sec=self.heartbeat_sec)
        self.publish(topic("plugins", "register"), message)

    def publish(self, name, payload, qos=1, retain=False):
        return self.client.publish(name, json.dumps(payload), qos=qos, retain=retain)

    # --- incoming ---------------------------------------------------------------------------------

    def on_message(self, client, userdata, msg):
        # Bad input never kills the plugin: log it and carry on.
        try:
            payload = json.loads(msg.payload.decode("utf-8")) if msg.payload else None
        except ValueError:
            log("unreadable message on %s dropped" % msg.topic)
            return
        try:
            if msg.topic == topic("plugins", "invoke", self.plugin_id):
                # A retained invoke is a stored copy replayed on every subscription, not a live request.
                if msg.retain:
                    log("retained invoke ignored")
                    return
                self.on_invoke(payload)
            elif msg.topic == topic("plugins", "registered", self.plugin_id):
                self.on_ack(payload)
            elif msg.topic == topic("plugins", "registered", "_invalid"):
                if isinstance(payload, dict) and payload.get("client_id") == self.client_id:
                    self.on_ack(payload)
            elif msg.topic == topic("plugins", "control", self.plugin_id):
                if isinstance(payload, dict) and payload.get("cmd") == "reregister":
                    log("Core asked for a re-registration")
                    self.register()
            elif msg.topic == topic("core", "status"):
                self.on_core_status(payload, bool(msg.retain))
        except Exception as error:  # noqa: BLE001 - a handler bug must not stop the network loop
            log("message on %s failed: %s" % (msg.topic, error))

    def on_ack(self, ack):
        if not isinstance(ack, dict):
            return
        if ack.get("ok"):
            first = not self.registered.is_set()
            self.registered.set()
            if first:
                print(json.dumps({"event": "registered", "plugin_id": self.plugin_id, "epoch": self.epoch}), flush=True)
                self.heartbeat_thread = threading.Thread(target=self.heartbeat_loop, daemon=True)
                self.heartbeat_thread.start()
        else:
            errors = ack.get("errors") or []
            for error in errors:
                log("registration refused: %s %s" % (error.get("path") or "/", error.get("message")))
            if not self.registered.is_set():
                self.stopping.set()

    def on_core_status(self, status, retained):
        # A live birth (retain flag 0) is a Core that started after we subscribed: it does not know us.
        # A retained one comes with every (re)subscription; the registration sent on connect covers it.
        if not isinstance(status, dict) or not status.get("online") or not isinstance(status.get("ts"), (int, float)):
            return
        if self.last_core_birth is not None and status["ts"] <= self.last_core_birth:
            return
        self.last_core_birth = status["ts"]
        if not retained:
            log("Core (re)started; registering")
            self.register()

    def on_invoke(self, request):
        if not isinstance(request, dict) or not isinstance(request.get("request_id"), str):
            log("invalid invoke dropped")
            return
        request_id = request["request_id"]
        deadline = request.get("deadline")
        if isinstance(deadline, (int, float)) and time.time() * 1000 >= deadline:
            log("invoke %s past its deadline dropped" % request_id)
            return
        capability = self.capabilities.get(request.get("capability_id"))
        params = request.get("parameters")
        if request.get("plugin_id") != self.plugin_id:
            return self.reply(request_id, False, 'request is addressed to plugin "%s"' % request.get("plugin_id"))
        if capability is None:
            return self.reply(
                request_id,
                False,
                'unknown capability "%s" of plugin "%s" (known: %s)'
                % (request.get("capability_id"), self.plugin_id, ", ".join(self.capabilities)),
            )
        if not isinstance(params, dict):
            return self.reply(request_id, False, "parameters must be an object")
        problems = check_parameters(capability, params)
        if problems:
            return self.reply(request_id, False, "invalid parameters: " + "; ".join(problems))
        try:
            success, text, data = HANDLERS[capability["id"]](params)
        except Exception as error:  # noqa: BLE001 - reported to the caller as a failed result
            return self.reply(request_id, False, str(error) or type(error).__name__)
        self.reply(request_id, success, text, data)

    def reply(self, request_id, success, text, data=None):
        result = {"request_id": request_id, "plugin_id": self.plugin_id, "success": success}
        if success:
            result["text"] = text
            if data is not None:
                result["data"] = data
        else:
            result["error"] = text
        self.publish(topic("plugins", "result", request_id), result)

    # --- liveness ---------------------------------------------------------------------------------

    def heartbeat_loop(self):
        while not self.stopping.wait(self.heartbeat_sec):
            if self.client.is_connected():
                self.seq += 1
                beat = {"epoch": self.epoch, "seq": self.seq, "ts": int(time.time() * 1000)}
                self.publish(topic("plugins", "heartbeat", self.plugin_id), beat, qos=0)

    def run(self):
        self.client.connect_async(self.host, self.port, keepalive=30)
        self.client.loop_start()
        try:
            while not self.stopping.wait(0.5):
                pass
        finally:
            self.shutdown()
        return 0 if self.registered.is_set() else 2

    def stop(self, *_):
        self.stopping.set()

    def shutdown(self):
        if self.client.is_connected():
            info = self.publish(
                topic("plugins", "status", self.plugin_id), {"state": "offline", "epoch": self.epoch}, retain=True
            )
            info.wait_for_publish(timeout=2)
            if self.unregister:
                self.publish(topic("plugins", "unregister"), {"plugin_id": self.plugin_id}).wait_for_publish(timeout=2)
        self.client.disconnect()
        self.client.loop_stop()


# Why a broker refused the connection (MQTT 3.1.1 CONNACK codes, and their MQTT 5 counterparts).
CONNACK_REFUSALS = {
    1: "unacceptable protocol version",
    2: "identifier rejected: this client id belongs to another login (or use --client-id)",
    0x85: "identifier rejected: this client id belongs to another login (or use --client-id)",
    3: "server unavailable, try again later",
    4: "bad username or password",
    0x86: "bad username or password",
    5: "not authorized",
    0x87: "not authorized",
}


def log(message):
    print("weather_plugin: %s" % message, file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="mqtt://127.0.0.1:1883")
    parser.add_argument("--id", default="pyweather")
    parser.add_argument("--username")
    # Prefer the environment: a password on the command line is visible to every user in `ps`.
    parser.add_argument("--password", default=os.environ.get("HOMECLAW_PLUGIN_PASSWORD"))
    parser.add_argument("--client-id")
    parser.add_argument("--heartbeat-sec", type=float, default=30)
    parser.add_argument("--unregister", action="store_true", help="remove the plugin from the Core on exit")
    args = parser.parse_args()
    plugin = Plugin(args)
    signal.signal(signal.SIGTERM, plugin.stop)
    signal.signal(signal.SIGINT, plugin.stop)
    return plugin.run()


if __name__ == "__main__":
    sys.exit(main())
