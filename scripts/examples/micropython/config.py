# Settings of the HomeClaw device template (main.py). Edit them, then copy boot.py, config.py and main.py
# to the board (e.g. `mpremote cp boot.py config.py main.py :`).

WIFI_SSID = "my-network"
WIFI_PASSWORD = "my-wifi-password"

# The MQTT broker the HomeClaw Core uses: the Core's embedded broker (its host must listen on the LAN:
# HOMECLAW_MQTT_HOST=0.0.0.0) or the external broker it is a client of.
BROKER = "192.168.1.10"
PORT = 1883
# A plugin credential for this device: `homeclaw credentials add desk-lamp --role plugin` prints the
# password once. None for both on a broker that lets anonymous clients in.
USER = "desk-lamp"
PASSWORD = "the-printed-password"

PLUGIN_ID = "desk-lamp"
CLIENT_ID = "homeclaw-plugin-desk-lamp"

# Registration by reference: where the Core fetches this device's descriptor (lamp.json here) over HTTP.
# None: an administrator registered the device once (POST /api/plugins/register with "type": "mqtt",
# or `homeclaw plugins register lamp.json` after adding "type": "mqtt" to it) and the device only heartbeats.
DESCRIPTOR_URL = "http://192.168.1.10:8000/lamp.json"

KEEPALIVE = 15        # seconds; the broker drops the device after 1.5 x this without a packet
HEARTBEAT_SEC = 10    # below KEEPALIVE, so heartbeats also keep the connection alive
RELAY_PIN = 2         # the GPIO the lamp's relay (or the board's LED) is on
