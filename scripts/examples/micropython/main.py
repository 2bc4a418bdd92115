# HomeClaw Bus plugin for a small device: the ESP32 template (MicroPython, umqtt.simple).
#
# A desk lamp on a relay joins the bus as the plugin "desk-lamp" with two capabilities, "switch" and
# "status". It keeps to what such a device can do:
#   - MQTT 3.1.1 through umqtt.simple's MQTTClient only (connect, set_callback, set_last_will, subscribe,
#     publish, check_msg, ping, disconnect), every publish at QoS 0;
#   - packets of a few hundred bytes: it registers by reference, {id, epoch, descriptor_url}, and the
#     Core fetches the descriptor (lamp.json) over HTTP; the Core sends it short requests (no empty
#     fields, no conversation context unless a capability declares "wants_context": true);
#   - no retained subscriptions: it listens to its own invoke, control and registered topics only.
#     After a Core restart its next heartbeat brings it back (or the Core asks it to register again).
# Without DESCRIPTOR_URL it only heartbeats: an administrator registered it once over HTTP.
#
# It also runs unchanged under CPython with any module offering umqtt.simple's API (the tests do so).
import json
import time

from umqtt.simple import MQTTClient

import config

try:
    from machine import Pin  # on the board: the relay; elsewhere the lamp is only a variable

    RELAY = Pin(config.RELAY_PIN, Pin.OUT)
except ImportError:
    RELAY = None

ROOT = b"homeclaw/plugins/"
PLUGIN_ID = config.PLUGIN_ID
T_REGISTER = ROOT + b"register"
T_REGISTERED = ROOT + b"registered/" + PLUGIN_ID.encode()
T_INVOKE = ROOT + b"invoke/" + PLUGIN_ID.encode()
T_CONTROL = ROOT + b"control/" + PLUGIN_ID.encode()
T_HEARTBEAT = ROOT + b"heartbeat/" + PLUGIN_ID.encode()
T_STATUS = ROOT + b"status/" + PLUGIN_ID.encode()
T_RESULT = ROOT + b"result/"

# MicroPython on the ESP32 counts time from 2000-01-01, CPython from 1970-01-01; the bus uses the latter.
EPOCH_OFFSET = 946684800 if time.gmtime(0)[0] == 2000 else 0


def now_ms():
    return int((time.time() + EPOCH_OFFSET) * 1000)


def clock_is_set():
    # An ESP32 without network time starts in the year 2000: its deadlines checks would be meaningless.
    return time.gmtime()[0] >= 2024


def next_epoch():
    # A number that grows with every start, so the Core can tell this run's will from an older one.
    try:
        with open("epoch.txt") as stored:
            epoch = int(stored.read()) + 1
    except (OSError, ValueError):
        epoch = 1
    with open("epoch.txt", "w") as stored:
        stored.write(str(epoch))
    return epoch


EPOCH = next_epoch()
lamp = {"on": False}
session = {"client": None, "registered": False, "seq": 0}


def set_lamp(on):
    lamp["on"] = on
    if RELAY is not None:
        RELAY.value(1 if on else 0)


def run_capability(capability, parameters):
    if capability == "switch":
        on = parameters.get("on")
        if not isinstance(on, bool):
            return False, "parameter on must be true or false"
        set_lamp(on)
        return True, "The desk lamp is now on." if on else "The desk lamp is now off."
    if capability == "status":
        return True, "The desk lamp is on." if lamp["on"] else "The desk lamp is off."
    return False, "unknown capability " + str(capability)


def answer(request_id, success, text):
    result = {"request_id": request_id, "plugin_id": PLUGIN_ID, "success": success, "text" if success else "error": text}
    session["client"].publish(T_RESULT + request_id.encode(), json.dumps(result).encode())


def on_invoke(payload):
    try:
        request = json.loads(payload)
        request_id = request["request_id"]
    except (ValueError, KeyError, TypeError):
        print("unreadable request dropped")
        return
    if clock_is_set() and now_ms() > request.get("deadline", 0):
        print("request", request_id, "arrived after its deadline; dropped")
        return
    success, text = run_capability(request.get("capability_id"), request.get("parameters") or {})
    answer(request_id, success, text)


def on_message(topic, payload):
    if topic == T_INVOKE:
        on_invoke(payload)
    elif topic == T_REGISTERED:
        ack = json.loads(payload)
        session["registered"] = ack.get("ok") is True
        print("registered" if session["registered"] else "registration refused: " + str(ack.get("errors")))
    elif topic == T_CONTROL:
        register()


def register():
    if config.DESCRIPTOR_URL:
        message = {
            "id": PLUGIN_ID,
            "epoch": EPOCH,
            "descriptor_url": config.DESCRIPTOR_URL,
            "heartbeat_interval_sec": config.HEARTBEAT_SEC,
        }
        session["client"].publish(T_REGISTER, json.dumps(message).encode())
    else:
        heartbeat()


def heartbeat():
    session["seq"] += 1
    beat = {"epoch": EPOCH, "seq": session["seq"], "ts": now_ms()}
    session["client"].publish(T_HEARTBEAT, json.dumps(beat).encode())


def connect():
    client = MQTTClient(config.CLIENT_ID, config.BROKER, config.PORT, config.USER, config.PASSWORD, keepalive=config.KEEPALIVE)
    client.set_callback(on_message)
    offline = json.dumps({"state": "offline", "epoch": EPOCH}).encode()
    client.set_last_will(T_STATUS, offline, retain=True, qos=1)
    client.connect(clean_session=True)
    session["client"] = client
    for topic in (T_REGISTERED, T_INVOKE, T_CONTROL):
        client.subscribe(topic)
    # Overwrites the retained will of an earlier run.
    client.publish(T_STATUS, json.dumps({"state": "online", "epoch": EPOCH}).encode(), retain=True)
    register()
    return client


def main():
    client = connect()
    last_beat = time.time()
    last_sent = time.time()
    while True:
        try:
            client.check_msg()
            now = time.time()
            if now - last_beat >= config.HEARTBEAT_SEC:
                heartbeat()
                last_beat = last_sent = now
            elif now - last_sent >= config.KEEPALIVE:
                client.ping()
                last_sent = now
            time.sleep(0.05)
        except OSError as error:
            # The connection is gone (Wi-Fi, broker restart): connect again after a pause.
            print("connection lost:", error)
            time.sleep(2)
            try:
                client = connect()
            except OSError as again:
                print("reconnect failed:", again)


try:
    main()
except KeyboardInterrupt:
    session["client"].disconnect()
