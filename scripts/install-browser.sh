#!/usr/bin/env bash
# Installs what the web page's browser test needs: Debian's chromium (the browser) and
# playwright-core, pinned, into a cached folder (`$AGENT_HOST_BROWSER_HOME`, else
# ~/.cache/agent-host/browser). playwright-core is the driver only: it never downloads a
# browser of its own, and the test points it at /usr/bin/chromium. Idempotent: a finished
# install leaves a stamp naming what it holds, and a run that finds the same stamp and the
# browser in place does nothing.
set -euo pipefail

home="${AGENT_HOST_BROWSER_HOME:-$HOME/.cache/agent-host/browser}"
npm_packages=(playwright-core@1.65.2)
stamp="${npm_packages[*]}"

if [[ ! -x /usr/bin/chromium ]]; then
    echo "install-browser: installing chromium" >&2
    "$(dirname "$0")/apt-install.sh" chromium
fi

if [[ -f "$home/installed" && "$(cat "$home/installed")" == "$stamp" ]]; then
    exit 0
fi
mkdir -p "$home"
echo "install-browser: installing ${stamp} into $home" >&2
# Belt and braces: playwright-core has no install hook, but nothing here may fetch a browser.
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$home" --no-audit --no-fund \
    --loglevel=error "${npm_packages[@]}" >&2
echo "$stamp" > "$home/installed"
