#!/usr/bin/env bash
# A HomeClaw Bus plugin in plain shell, on mosquitto_sub / mosquitto_pub and jq.
#
#   scripts/examples/shell/echo_plugin.sh --url mqtt://127.0.0.1:1883 \
#       --descriptor scripts/examples/shell/echo_plugin.json [--id shecho] [--heartbeat-sec 30] \
#       [--username NAME]   (password from $HOMECLAW_PLUGIN_PASSWORD)
#
# Every capability echoes its `text` parameter back (and all parameters as data).
#
# Two MQTT connections, because the mosquitto tools cannot subscribe and publish on one:
#   - mosquitto_sub, long-lived, client id <client-id>-sub: receives acks, invokes, control and the
#     Core status, and carries the will (retained offline status with this run's epoch);
#   - mosquitto_pub, one short connection per message, always client id <client-id>: registration,
#     results, heartbeats and the online/offline status. Publishes are made one at a time from the
#     main loop (heartbeats included), so two connections with that id never overlap, and the Core
#     sees every registration and result coming from the same client (its ownership check).
set -u

ROOT=homeclaw
URL=mqtt://127.0.0.1:1883
DESCRIPTOR=""
PLUGIN_ID=""
CLIENT_ID=""
USERNAME=""
PASSWORD="${HOMECLAW_PLUGIN_PASSWORD:-}"
HEARTBEAT_SEC=30

while [ $# -gt 0 ]; do
  case "$1" in
    --url) URL="$2"; shift 2 ;;
    --descriptor) DESCRIPTOR="$2"; shift 2 ;;
    --id) PLUGIN_ID="$2"; shift 2 ;;
    --client-id) CLIENT_ID="$2"; shift 2 ;;
    --username) USERNAME="$2"; shift 2 ;;
    --password) PASSWORD="$2"; shift 2 ;;
    --heartbeat-sec) HEARTBEAT_SEC="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "echo_plugin: unknown argument $1" >&2; exit 64 ;;
  esac
done

log() { echo "echo_plugin: $*" >&2; }

for tool in mosquitto_sub mosquitto_pub jq; do
  command -v "$tool" >/dev/null 2>&1 || { log "$tool is required (apt-get install mosquitto-clients jq)"; exit 69; }
done
[ -n "$DESCRIPTOR" ] && [ -r "$DESCRIPTOR" ] || { log "--descriptor FILE is required and must be readable"; exit 64; }
jq -e 'type == "object"' "$DESCRIPTOR" >/dev/null 2>&1 || { log "$DESCRIPTOR is not a JSON object"; exit 65; }
[ -n "$PLUGIN_ID" ] || PLUGIN_ID=$(jq -r '.id // empty' "$DESCRIPTOR")
if ! [[ "$PLUGIN_ID" =~ ^[a-z0-9][a-z0-9_-]{0,63}$ ]]; then
  log "plugin id '$PLUGIN_ID' must match ^[a-z0-9][a-z0-9_-]{0,63}\$"; exit 64
fi
[[ "$HEARTBEAT_SEC" =~ ^[0-9]+$ ]] && [ "$HEARTBEAT_SEC" -gt 0 ] || { log "--heartbeat-sec must be a positive integer"; exit 64; }
[ -n "$CLIENT_ID" ] || CLIENT_ID="homeclaw-plugin-$PLUGIN_ID"

# mqtt://[user:pass@]host[:port]
rest="${URL#*://}"
[ "$rest" != "$URL" ] || { log "--url must look like mqtt://host:port"; exit 64; }
case "${URL%%://*}" in mqtt|tcp) ;; *) log "only mqtt:// URLs are supported"; exit 64 ;; esac
rest="${rest%%/*}"
if [[ "$rest" == *@* ]]; then
  userinfo="${rest%@*}"; rest="${rest##*@}"
  [ -n "$USERNAME" ] || USERNAME="${userinfo%%:*}"
  [[ "$userinfo" == *:* ]] && [ -z "$PASSWORD" ] && PASSWORD="${userinfo#*:}"
fi
HOST="${rest%%:*}"
PORT=1883
[[ "$rest" == *:* ]] && PORT="${rest##*:}"

AUTH=()
[ -n "$USERNAME" ] && AUTH+=(-u "$USERNAME")
[ -n "$PASSWORD" ] && AUTH+=(-P "$PASSWORD")

T_REGISTER="$ROOT/plugins/register"
T_REGISTERED="$ROOT/plugins/registered/$PLUGIN_ID"
T_INVALID="$ROOT/plugins/registered/_invalid"
T_INVOKE="$ROOT/plugins/invoke/$PLUGIN_ID"
T_CONTROL="$ROOT/plugins/control/$PLUGIN_ID"
T_STATUS="$ROOT/plugins/status/$PLUGIN_ID"
T_HEARTBEAT="$ROOT/plugins/heartbeat/$PLUGIN_ID"
T_CORE="$ROOT/core/status"

now_ms() { date +%s%3N; }
EPOCH=$(now_ms)
SEQ=0
REGISTERED=0
LAST_CORE_BIRTH=""
SUB_PID=""

# publish TOPIC PAYLOAD [QOS] [retain]
publish() {
  local retain=()
  [ "${4:-}" = retain ] && retain=(-r)
  mosquitto_pub -h "$HOST" -p "$PORT" "${AUTH[@]}" -i "$CLIENT_ID" -q "${3:-1}" "${retain[@]}" -t "$1" -m "$2" \
    || log "publish on $1 failed"
}

register() {
  local message
  message=$(jq -c --arg id "$PLUGIN_ID" --argjson epoch "$EPOCH" --argjson hb "$HEARTBEAT_SEC" \
    '. + {id: $id, type: "mqtt", epoch: $epoch, heartbeat_interval_sec: $hb}' "$DESCRIPTOR")
  publish "$T_REGISTER" "$message"
}

heartbeat() {
  SEQ=$((SEQ + 1))
  publish "$T_HEARTBEAT" "{\"epoch\":$EPOCH,\"seq\":$SEQ,\"ts\":$(now_ms)}" 0
}

# reply REQUEST_ID JSON_RESULT_FIELDS
reply() {
  publish "$ROOT/plugins/result/$1" "$(jq -c --arg rid "$1" --arg pid "$PLUGIN_ID" '{request_id: $rid, plugin_id: $pid} + .' <<<"$2")"
}

fail() { # fail REQUEST_ID MESSAGE
  reply "$1" "$(jq -nc --arg e "$2" '{success: false, error: $e}')"
}

on_ack() { # on_ack PAYLOAD
  if [ "$(jq -r '.ok // false' <<<"$1" 2>/dev/null)" = true ]; then
    if [ "$REGISTERED" = 0 ]; then
      REGISTERED=1
      NEXT_BEAT=$(( $(date +%s) + HEARTBEAT_SEC ))
      echo "{\"event\":\"registered\",\"plugin_id\":\"$PLUGIN_ID\",\"epoch\":$EPOCH}"
    fi
  else
    jq -r '(.errors // [])[] | "registration refused: \(.path // "/") \(.message)"' <<<"$1" >&2 2>/dev/null
    [ "$REGISTERED" = 1 ] || { shutdown 2; }
  fi
}

on_invoke() { # on_invoke PAYLOAD
  local fields request_id capability deadline target
  # One jq call pulls the fields out, joined by the unit separator: unlike a tab it is not IFS
  # whitespace, so an empty field cannot shift the others.
  fields=$(jq -r '[(.request_id // "" | tostring), (.capability_id // "" | tostring),
                   (.deadline // 0 | tostring), (.plugin_id // "" | tostring)] | join("\u001f")' <<<"$1" 2>/dev/null) \
    || { log "unreadable invoke dropped"; return; }
  IFS=$'\x1f' read -r request_id capability deadline target <<<"$fields"
  # The request id becomes a topic level: refuse anything that could change the topic's structure.
  [[ "$request_id" =~ ^[A-Za-z0-9_-]{1,128}$ ]] || { log "invoke without a valid request_id dropped"; return; }
  [[ "$deadline" =~ ^[0-9]+$ ]] || { fail "$request_id" "invalid request: deadline must be a timestamp in ms"; return; }
  [ "$(now_ms)" -lt "$deadline" ] || { log "invoke $request_id past its deadline dropped"; return; }
  [ "$target" = "$PLUGIN_ID" ] || { fail "$request_id" "request is addressed to plugin \"$target\", not \"$PLUGIN_ID\""; return; }
  if ! jq -e --arg c "$capability" 'any(.capabilities[]; .id == $c)' "$DESCRIPTOR" >/dev/null; then
    local known
    known=$(jq -r '[.capabilities[].id] | join(", ")' "$DESCRIPTOR")
    fail "$request_id" "unknown capability \"$capability\" of plugin \"$PLUGIN_ID\" (known: $known)"
    return
  fi
  local result
  result=$(jq -c '(.parameters // {}) as $p
    | if ($p | type) != "object" then {success: false, error: "parameters must be an object"}
      elif ($p.text | type) != "string" then {success: false, error: "invalid parameters: parameter text must be string"}
      else {success: true, text: $p.text, data: {echoed: $p}} end' <<<"$1")
  reply "$request_id" "$result"
}

on_core_status() { # on_core_status RETAIN_FLAG PAYLOAD
  # A live birth (retain flag 0) is a Core that started after we subscribed: it does not know us.
  # A retained one comes with every (re)subscription and describes a Core that was already up.
  local ts
  ts=$(jq -r 'if .online == true and (.ts | type) == "number" then .ts else empty end' <<<"$2" 2>/dev/null)
  [[ "$ts" =~ ^[0-9]+$ ]] || return
  if [ -n "$LAST_CORE_BIRTH" ] && [ "$ts" -le "$LAST_CORE_BIRTH" ]; then return; fi
  LAST_CORE_BIRTH="$ts"
  [ "$1" = 0 ] && [ "$SUBSCRIBED" = 1 ] && { log "Core (re)started; registering"; register; }
}

shutdown() { # shutdown EXIT_CODE
  trap - TERM INT
  publish "$T_STATUS" "{\"state\":\"offline\",\"epoch\":$EPOCH}" 1 retain
  # A polite disconnect: the broker drops the will, the retained offline status already says it.
  [ -n "$SUB_PID" ] && kill "$SUB_PID" 2>/dev/null
  exit "${1:-0}"
}
trap 'shutdown 0' TERM INT

exec 3< <(exec mosquitto_sub -h "$HOST" -p "$PORT" "${AUTH[@]}" -i "$CLIENT_ID-sub" -q 1 -F "%t %r %p" -k 30 \
  --will-topic "$T_STATUS" --will-payload "{\"state\":\"offline\",\"epoch\":$EPOCH}" --will-qos 1 --will-retain \
  -t "$T_REGISTERED" -t "$T_INVALID" -t "$T_INVOKE" -t "$T_CONTROL" -t "$T_CORE" -t "$T_STATUS")
SUB_PID=$!

# Our own retained online status doubles as the signal that the subscriber is listening: only then
# is it safe to register (the ack must not arrive before we subscribe).
publish "$T_STATUS" "{\"state\":\"online\",\"epoch\":$EPOCH}" 1 retain
SUBSCRIBED=0
NEXT_BEAT=$(( $(date +%s) + HEARTBEAT_SEC ))
STATUS_SENT_AT=$(date +%s)

while true; do
  wait_s=$(( NEXT_BEAT - $(date +%s) ))
  [ "$wait_s" -ge 1 ] || wait_s=1
  if IFS= read -r -t "$wait_s" line <&3; then
    # Each line: topic, retain flag (0/1), payload.
    topic="${line%% *}"
    line="${line#* }"
    retained="${line%% *}"
    payload="${line#* }"
    case "$topic" in
      # A retained invoke (flag 1) is a stored copy replayed on every subscription, not a live request.
      "$T_INVOKE")
        if [ "$retained" = 1 ]; then log "retained invoke ignored"
        elif [ "$REGISTERED" = 1 ]; then on_invoke "$payload"; fi ;;
      "$T_REGISTERED") on_ack "$payload" ;;
      "$T_INVALID")
        [ "$(jq -r '.client_id // empty' <<<"$payload" 2>/dev/null)" = "$CLIENT_ID" ] && on_ack "$payload" ;;
      "$T_CONTROL")
        if [ "$(jq -r '.cmd // empty' <<<"$payload" 2>/dev/null)" = reregister ]; then
          log "Core asked for a re-registration"; register
        fi ;;
      "$T_CORE") on_core_status "$retained" "$payload" ;;
      "$T_STATUS")
        if [ "$SUBSCRIBED" = 0 ] && [ "$(jq -r '"\(.state):\(.epoch)"' <<<"$payload" 2>/dev/null)" = "online:$EPOCH" ]; then
          SUBSCRIBED=1; register
        fi ;;
    esac
  else
    rc=$?
    if [ "$rc" -le 128 ]; then log "subscriber ended"; SUB_PID=""; shutdown 3; fi
  fi
  now_s=$(date +%s)
  if [ "$SUBSCRIBED" = 0 ] && [ $((now_s - STATUS_SENT_AT)) -ge 2 ]; then
    # The subscriber was not ready for the first status: say it again.
    publish "$T_STATUS" "{\"state\":\"online\",\"epoch\":$EPOCH}" 1 retain
    STATUS_SENT_AT=$now_s
  fi
  if [ "$now_s" -ge "$NEXT_BEAT" ]; then
    [ "$REGISTERED" = 1 ] && heartbeat
    NEXT_BEAT=$((now_s + HEARTBEAT_SEC))
  fi
done
