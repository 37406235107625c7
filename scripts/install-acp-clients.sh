#!/usr/bin/env bash
# Installs the ACP clients the tests drive `agent-host acp` with, pinned, into a cached folder
# (`$AGENT_HOST_ACP_HOME`, else ~/.cache/agent-host/acp): the conformance linter `acplint`
# from PyPI in a virtual environment of its own, and the headless client `acpx` from the npm
# registry. Idempotent: a finished install leaves a stamp naming what it holds, and a run
# that finds the same stamp does nothing.
set -euo pipefail

home="${AGENT_HOST_ACP_HOME:-$HOME/.cache/agent-host/acp}"
npm_packages=(acpx@0.19.1)
pypi_packages=(acplint==0.1.0)
stamp="${npm_packages[*]} ${pypi_packages[*]}"

if [[ -f "$home/installed" && "$(cat "$home/installed")" == "$stamp" ]]; then
    exit 0
fi
mkdir -p "$home"
echo "install-acp-clients: installing ${stamp} into $home" >&2
npm install --prefix "$home/npm" --no-audit --no-fund --loglevel=error "${npm_packages[@]}" >&2
python3 -m venv "$home/venv"
"$home/venv/bin/pip" install --quiet --disable-pip-version-check "${pypi_packages[@]}" >&2
echo "$stamp" > "$home/installed"
