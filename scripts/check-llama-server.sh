#!/usr/bin/env bash
# The host against a real llama.cpp `llama-server`, under several of llama.cpp's bundled chat
# templates: one `--prompt` turn of the stock deployment (todo, agent-mode, permissions) per
# template, and a table of what the server made of each call. Not part of scripts/test.sh: it
# builds llama.cpp once (cached) and runs a real model.
#
#   scripts/check-llama-server.sh                   the default templates (below)
#   scripts/check-llama-server.sh --all             every template llama.cpp ships
#   scripts/check-llama-server.sh NAME...           these templates (file names without .jinja)
#   INJECTED_AS=system scripts/check-llama-server.sh ...   with `[model] injected_as` set
#
# Each template gets two turns: `text`, the stock prompt as it is, and `tools`, where the server
# is asked for a tool call in every reply (`tool_choice: "required"` through `[model]
# extra_body`; llama-server then constrains the output with a grammar of the template's
# tool-call syntax), so tool calls and their results go back through the template call after
# call, up to 4 calls. Where the syntax lets text come first (Qwen's, Mistral's), the small
# model may talk to the token limit instead, and the turn ends after one call.
# A turn passes when the server accepted every call of it (no 4xx/5xx) and it ended rather
# than failed; the model (SmolLM2-135M at temperature 0) is far too small to follow
# the workflow, and what it says is not judged. Exits 1 when any template failed. Each run's
# files (server log, the host's events, every request and the server's reply to it) are kept
# under .agent-host/llama-check/ and named in the output.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
helpers="$root/scripts/llama-server"
prompt=${LLAMA_CHECK_PROMPT:-"Plan the steps to write a short poem about the sea, track them with your todo tools, then write it."}
# The four the issue names as refusing a `system` message after the user's turn, some lenient
# ones beside them, and Functionary v3.2's, whose syntax starts a reply with the call, so that
# the forced-tools turn makes calls even with this model.
default_templates=(
    Qwen3.5-4B
    mistralai-Mistral-Nemo-Instruct-2407
    mistralai-Ministral-3-14B-Reasoning-2512
    Apertus-8B-Instruct
    Qwen-Qwen3-0.6B
    HuggingFaceTB-SmolLM3-3B
    meta-llama-Llama-3.3-70B-Instruct
    ibm-granite-granite-4.0
    meetkai-functionary-medium-v3.2
)
# Templates whose syntax the model's free text cannot meet: llama-server refuses the text turn's
# reply mid-stream ("The model produced output that does not match the expected peg-native
# format"), whatever the host sent, so only their forced-tools turn says anything of the host.
tools_only=" meetkai-functionary-medium-v3.2 "

eval "$("$helpers/install.sh")"

templates=()
if [ "${1:-}" = "--all" ]; then
    for file in "$LLAMA_TEMPLATES"/*.jinja; do templates+=("$(basename "$file" .jinja)"); done
elif [ $# -gt 0 ]; then
    templates=("$@")
else
    templates=("${default_templates[@]}")
fi
for template in "${templates[@]}"; do
    if [ ! -e "$LLAMA_TEMPLATES/$template.jinja" ]; then
        echo "no template $template in $LLAMA_TEMPLATES" >&2
        exit 2
    fi
done

(cd "$root" && nice -n 19 cargo build -p agent-host)
host="$root/target/debug/agent-host"

run_dir="$root/.agent-host/llama-check/$(date +%Y%m%d-%H%M%S)"
cache_dir="$root/.agent-host/llama-check/cache"
mkdir -p "$run_dir" "$cache_dir"
results="$run_dir/results.jsonl"
server_pid="" recorder_pid=""

stop() {
    for pid in $recorder_pid $server_pid; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    server_pid="" recorder_pid=""
}
trap stop EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits up to $2 seconds for `$1` to succeed; fails when the process $3 died first.
wait_for() {
    local check=$1 seconds=$2 pid=$3
    for _ in $(seq $((seconds * 4))); do
        if eval "$check"; then return 0; fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.25
    done
    return 1
}

echo "llama-server: $LLAMA_SERVER ($LLAMA_VERSION; $("$LLAMA_SERVER" --version 2>&1 | grep -m1 '^version' || echo 'version unknown'))"
echo "model: $LLAMA_MODEL"
echo "runs: $run_dir"
for template in "${templates[@]}"; do
    dir="$run_dir/$template"
    mkdir -p "$dir"
    port=$(free_port)
    # One slot, so the whole context is the turn's; -n bounds every reply on the server's
    # side too, whatever the host asks for.
    nice -n 19 "$LLAMA_SERVER" -m "$LLAMA_MODEL" --host 127.0.0.1 --port "$port" \
        --jinja --chat-template-file "$LLAMA_TEMPLATES/$template.jinja" \
        -c 8192 -np 1 -n 256 -t 2 >"$dir/server.log" 2>&1 &
    server_pid=$!
    if ! wait_for "curl -sf http://127.0.0.1:$port/health >/dev/null" 180 "$server_pid"; then
        echo "{\"template\": \"$template\", \"result\": \"FAIL\", \"first_error\": \"llama-server did not start: see $dir/server.log\"}" >>"$results"
        stop
        continue
    fi
    runs="text tools"
    case "$tools_only" in *" $template "*) runs=tools ;; esac
    for run in $runs; do
        run_dir_one="$dir/$run"
        mkdir -p "$run_dir_one"
        recorder_pid=""
        python3 "$helpers/recorder.py" "http://127.0.0.1:$port" "$run_dir_one/calls.jsonl" \
            "$run_dir_one/recorder.port" &
        recorder_pid=$!
        wait_for "[ -s '$run_dir_one/recorder.port' ]" 30 "$recorder_pid"
        options=()
        [ -n "${INJECTED_AS:-}" ] && options+=(--injected-as "$INJECTED_AS")
        [ "$run" = tools ] && options+=(--force-tools --max-iterations 4)
        python3 "$helpers/config.py" "$root" "http://127.0.0.1:$(cat "$run_dir_one/recorder.port")/v1" \
            "$run_dir_one/sessions.db" "$cache_dir" "${options[@]}" >"$run_dir_one/config.toml"
        echo "== $template ($run)"
        status=0
        env -u OPENAI_API_KEY -u OPENAI_BASE_URL NO_COLOR=1 \
            "$host" --config "$run_dir_one/config.toml" --json --prompt "$prompt" \
            >"$run_dir_one/events.jsonl" 2>"$run_dir_one/host.stderr" </dev/null || status=$?
        # The recorder finishes recording the calls in flight before it exits.
        kill "$recorder_pid" 2>/dev/null || true
        wait "$recorder_pid" 2>/dev/null || true
        recorder_pid=""
        python3 "$helpers/summarize.py" row "$template ($run)" "$run_dir_one/events.jsonl" \
            "$run_dir_one/calls.jsonl" "$status" "$run_dir_one/host.stderr" >>"$results"
    done
    stop
done

echo
python3 "$helpers/summarize.py" table "$results"
