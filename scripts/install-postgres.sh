#!/usr/bin/env bash
# Finds the PostgreSQL server binaries the tests run (initdb, pg_ctl, createdb), installing
# Debian's `postgresql` with apt-get when there are none, and prints their folder. Idempotent:
# a run that finds them installs nothing.
set -euo pipefail

find_bin() {
    local candidate
    if command -v initdb >/dev/null 2>&1; then
        candidate="$(dirname "$(readlink -f "$(command -v initdb)")")"
        if [[ -x "$candidate/pg_ctl" && -x "$candidate/createdb" ]]; then
            echo "$candidate"
            return 0
        fi
    fi
    # Debian keeps them off PATH, one folder per major version: the newest wins.
    for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [[ -x "$candidate/initdb" && -x "$candidate/pg_ctl" && -x "$candidate/createdb" ]]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if find_bin; then
    exit 0
fi
echo "install-postgres: installing postgresql with apt-get" >&2
"$(dirname "$0")/apt-install.sh" postgresql
find_bin
