#!/usr/bin/env bash
# Captures the replies of a real llama-server that tests/e2e/llama_server_replay.rs replays:
# the raw bodies as the server sent them (curl -N), each headed by a `: source:` comment line
# naming the server, its version, the template and the request (SSE readers skip comments).
#
#   scripts/llama-server/capture-fixtures.sh [OUT_DIR]    (default tests/fixtures/llama-server)
#
# The requests are below; temperature 0 and a fixed seed make the replies repeat. Tool calls
# use `tool_choice: "required"`: llama-server then constrains the output to the template's
# tool-call syntax, so even a 135M model calls the tool.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$root/tests/fixtures/llama-server}
eval "$("$root/scripts/llama-server/install.sh")"
version=$("$LLAMA_SERVER" --version 2>&1 | grep -m1 '^version' || echo 'version unknown')
mkdir -p "$out"
scratch=$(mktemp -d)
server_pid=""
stop() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    server_pid=""
}
trap 'stop; rm -rf "$scratch"' EXIT

# Starts llama-server under the template named $1 and sets $base.
serve() {
    stop
    local port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$LLAMA_SERVER" -m "$LLAMA_MODEL" --host 127.0.0.1 --port "$port" --jinja \
        --chat-template-file "$LLAMA_TEMPLATES/$1.jinja" -c 8192 -np 1 -t 2 >"$scratch/server-$1.log" 2>&1 &
    server_pid=$!
    base="http://127.0.0.1:$port"
    template=$1
    for _ in $(seq 720); do
        curl -sf "$base/health" >/dev/null && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.25
    done
    echo "llama-server did not start; its log:" >&2
    cat "$scratch/server-$1.log" >&2
    exit 1
}

# Posts the JSON $2 to /v1/chat/completions and writes the reply to $OUT/$1, headed by the
# source line; prints the HTTP status.
capture() {
    local name=$1 request=$2 status type
    read -r status type < <(curl -sN -o "$scratch/body" -w '%{http_code} %{content_type}\n' \
        -H 'Content-Type: application/json' --data-binary "$request" "$base/v1/chat/completions")
    {
        printf ': source: llama-server %s (%s), model %s, chat template %s.jinja from llama.cpp models/templates, --jinja; HTTP %s, Content-Type %s, to POST /v1/chat/completions %s\n' \
            "$version" "$LLAMA_VERSION" "$(basename "$LLAMA_MODEL")" "$template" "$status" "$type" \
            "$(python3 -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1]), separators=(",", ":")))' "$request")"
        cat "$scratch/body"
    } >"$out/$name"
    echo "$name: HTTP $status, $type" >&2
}

# The stock todo plugin's tool, as the host offers it.
todos_add='{"type":"function","function":{"name":"todos_add","description":"Add todos to the list; each gets the next free id.","parameters":{"type":"object","properties":{"todos":{"type":"array","minItems":1,"items":{"type":"object","properties":{"title":{"type":"string","description":"A short name for the step."},"description":{"type":["string","null"],"description":"Optional detail."}},"required":["title"],"additionalProperties":false}}},"required":["todos"],"additionalProperties":false}}}'
todos_add_one='{"type":"function","function":{"name":"todos_add","description":"Add todos to the list; each gets the next free id.","parameters":{"type":"object","properties":{"todos":{"type":"array","minItems":1,"maxItems":1,"items":{"type":"object","properties":{"title":{"type":"string","enum":["buy milk"]}},"required":["title"],"additionalProperties":false}}},"required":["todos"],"additionalProperties":false}}}'
system='{"role":"system","content":"You are a helpful assistant."}'
ask_tool='{"role":"user","content":"Add one todo: title \"buy milk\", no description."}'

serve Qwen-Qwen2.5-7B-Instruct
capture text.sse '{"model":"m","stream":true,"temperature":0,"seed":1,"max_tokens":48,
  "messages":['"$system"',{"role":"user","content":"Say hello to the sea in one short sentence."}]}'
capture usage.sse '{"model":"m","stream":true,"temperature":0,"seed":1,"max_tokens":48,
  "stream_options":{"include_usage":true},
  "messages":['"$system"',{"role":"user","content":"Name three colours."}]}'
capture length-cut-text.sse '{"model":"m","stream":true,"temperature":0,"seed":1,"max_tokens":6,
  "messages":['"$system"',{"role":"user","content":"Tell me a long story about the sea."}]}'

# Functionary v3.2's syntax starts a reply with the tool's name, so the constrained output is a
# call from its first token (Qwen 2.5's lets text come first, and a small model talks on).
serve meetkai-functionary-medium-v3.2
# With todos_add's schema as the plugin gives it, a small model rambles in the free-text fields
# to the limit (the cut below); here it is narrowed to one item with a fixed title (llama-server
# turns the schema into the grammar), so the call ends. The arguments still fit the real schema.
capture tool-call.sse '{"model":"m","stream":true,"temperature":0,"seed":1,"max_tokens":128,
  "tool_choice":"required","tools":['"$todos_add_one"'],"messages":['"$system"','"$ask_tool"']}'
capture length-cut-tool-call.sse '{"model":"m","stream":true,"temperature":0,"seed":1,"max_tokens":20,
  "tool_choice":"required","tools":['"$todos_add"'],"messages":['"$system"','"$ask_tool"']}'

serve Qwen3.5-4B
capture qwen3.5-system-after-user.json '{"model":"m","stream":true,"temperature":0,"max_tokens":16,
  "messages":['"$system"',{"role":"user","content":"hi"},{"role":"system","content":"Mode: plan."}]}'
