# Runs first on the board (MicroPython): joins the Wi-Fi and sets the clock, then main.py runs.
import network
import time

import config

wlan = network.WLAN(network.STA_IF)
wlan.active(True)
if not wlan.isconnected():
    wlan.connect(config.WIFI_SSID, config.WIFI_PASSWORD)
    for _ in range(200):
        if wlan.isconnected():
            break
        time.sleep(0.1)
print("wifi:", wlan.ifconfig() if wlan.isconnected() else "not connected")

# A set clock lets main.py drop requests that arrive after their deadline. Without one it answers them.
try:
    import ntptime

    ntptime.settime()
except Exception as error:  # no network time: main.py notices the unset clock
    print("ntp:", error)
