#!/usr/bin/env bash
# Installs, pinned, what builds a Python or TypeScript plugin folder into a component, into a
# cached folder (`$AGENT_HOST_TOOLCHAINS`, else ~/.cache/agent-host/toolchains):
#   python      componentize-py, in a virtual environment (python/venv/bin/componentize-py)
#   typescript  componentize-js (with its QuickJS backend), jco for the contract's types
#               (1.14: later ones cannot read a WIT file, `os error 44`),
#               TypeScript's compiler and esbuild (typescript/node_modules/.bin/...)
# Usage: install-plugin-toolchains.sh [python] [typescript]   (both when none is named)
# The host runs this same script (it carries a copy) when it builds a plugin folder whose
# toolchain is missing, so the versions live here and nowhere else. Idempotent: each finished
# install leaves a stamp naming what it holds, and a run that finds the same stamp does
# nothing.
set -euo pipefail

home="${AGENT_HOST_TOOLCHAINS:-$HOME/.cache/agent-host/toolchains}"
python_packages=(componentize-py==0.25.1)
npm_packages=(
    @bytecodealliance/componentize-js@0.23.0
    @bytecodealliance/jco@1.14.0
    typescript@7.0.2
    esbuild@0.28.2
)

install_python() {
    local dir="$home/python" stamp="${python_packages[*]}"
    [[ -f "$dir/installed" && "$(cat "$dir/installed")" == "$stamp" ]] && return 0
    echo "install-plugin-toolchains: installing ${stamp} into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    python3 -m venv "$dir/venv"
    "$dir/venv/bin/pip" install --quiet --disable-pip-version-check "${python_packages[@]}" >&2
    echo "$stamp" > "$dir/installed"
}

install_typescript() {
    local dir="$home/typescript" stamp="${npm_packages[*]}"
    [[ -f "$dir/installed" && "$(cat "$dir/installed")" == "$stamp" ]] && return 0
    echo "install-plugin-toolchains: installing ${stamp} into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "${npm_packages[@]}" >&2
    echo "$stamp" > "$dir/installed"
}

# One install at a time: two hosts building plugin folders at once wait for each other.
mkdir -p "$home"
exec 9>"$home/.lock"
flock 9

languages=("$@")
[[ ${#languages[@]} -eq 0 ]] && languages=(python typescript)
for language in "${languages[@]}"; do
    case "$language" in
        python) install_python ;;
        typescript) install_typescript ;;
        *) echo "install-plugin-toolchains: unknown language \`$language\` (python, typescript)" >&2; exit 2 ;;
    esac
done
# What a caller reads to find the tools: the stamp of each language installed.
for language in "${languages[@]}"; do
    echo "$language $(cat "$home/$language/installed")"
done
