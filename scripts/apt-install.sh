#!/usr/bin/env bash
# Installs Debian packages with apt-get, one caller at a time: tests started together may
# each find a package missing, and apt-get run twice at once fails on its own lock rather
# than waiting. Callers queue on one lock file; a package another caller installed while
# this one waited is not installed again. Output goes to stderr (callers print paths on
# stdout). Usage: apt-install.sh PACKAGE...
set -euo pipefail

sudo=""
if [[ "$(id -u)" != 0 ]]; then sudo="sudo"; fi
exec 9>"${TMPDIR:-/tmp}/agent-host-apt.lock"
flock 9

missing=()
for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi
# Another program's apt-get (not one of ours) is waited for too, up to ten minutes.
wait_for_lock=(-o DPkg::Lock::Timeout=600)
# A fresh machine's package lists may be empty or old: refresh them only when needed.
if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${wait_for_lock[@]}" "${missing[@]}" >&2; then
    $sudo apt-get update -qq "${wait_for_lock[@]}" >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${wait_for_lock[@]}" "${missing[@]}" >&2
fi
