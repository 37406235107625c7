#!/usr/bin/env bash
# Finds the OCI registry the tests push plugins to and pull them from (Debian's
# `docker-registry`, the CNCF distribution registry), installing it with apt-get when it is
# missing, and prints its path. Idempotent: a run that finds it installs nothing.
set -euo pipefail

find_bin() {
    if command -v docker-registry >/dev/null 2>&1; then
        command -v docker-registry
        return 0
    fi
    if [[ -x /usr/bin/docker-registry ]]; then
        echo /usr/bin/docker-registry
        return 0
    fi
    return 1
}

if find_bin; then
    exit 0
fi
echo "install-registry: installing docker-registry with apt-get" >&2
"$(dirname "$0")/apt-install.sh" docker-registry
# The package starts a system service on :5000; the tests start their own on free ports.
sudo=""
if [[ "$(id -u)" != 0 ]]; then sudo="sudo"; fi
$sudo systemctl disable --now docker-registry >/dev/null 2>&1 || true
find_bin
