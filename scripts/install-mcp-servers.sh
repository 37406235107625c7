#!/usr/bin/env bash
# Installs the reference MCP servers the tests run against, pinned, into a cached folder
# (`$AGENT_HOST_MCP_HOME`, else ~/.cache/agent-host/mcp): server-everything and
# server-filesystem from the npm registry, mcp-server-time from PyPI in a virtual
# environment. Idempotent: a finished install leaves a stamp naming what it holds, and a
# run that finds the same stamp does nothing.
set -euo pipefail

home="${AGENT_HOST_MCP_HOME:-$HOME/.cache/agent-host/mcp}"
npm_packages=(@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31)
pypi_packages=(mcp-server-time==2026.10.19)
stamp="${npm_packages[*]} ${pypi_packages[*]}"

if [[ -f "$home/installed" && "$(cat "$home/installed")" == "$stamp" ]]; then
    exit 0
fi
mkdir -p "$home"
echo "install-mcp-servers: installing ${stamp} into $home" >&2
npm install --prefix "$home/npm" --no-audit --no-fund --loglevel=error "${npm_packages[@]}" >&2
python3 -m venv "$home/venv"
"$home/venv/bin/pip" install --quiet --disable-pip-version-check "${pypi_packages[@]}" >&2
echo "$stamp" > "$home/installed"
