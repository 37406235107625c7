#!/usr/bin/env bash
# The test command README names: lints, formatting and docs of both workspaces, the plugins'
# own unit tests (natively), then every host test (which builds the plugins for wasm32-wasip2).
# Lints first, so a warning fails in seconds rather than after the suite.
set -euo pipefail
cd "$(dirname "$0")/.."

# A clean clone (CI) has no incremental state to reuse: building without it is faster.
if [ -n "${CI:-}" ]; then
    export CARGO_INCREMENTAL=0
fi

# Each step says how long it took, so a slow CI run shows where its time went.
step() {
    local start=$SECONDS
    "$@"
    echo "test.sh: \`$*\` took $((SECONDS - start)) s" >&2
}

step cargo fmt --all --check
step cargo fmt --all --check --manifest-path plugins/Cargo.toml
step cargo clippy --workspace --all-targets -- -D warnings
# The workspaces' own docs, warnings denied (a broken link fails here); --no-deps, so it
# documents no dependency and reuses what clippy just checked of them: seconds, not minutes.
step env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

# rust-toolchain.toml names the target; an older rustup may not have added it yet. The host
# does the same before building a plugin crate.
rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2
(
    cd plugins
    step cargo clippy --target wasm32-wasip2 --workspace --all-targets -- -D warnings
    step env RUSTDOCFLAGS="-D warnings" cargo doc --target wasm32-wasip2 --workspace --no-deps
    step cargo test --workspace --target "$(rustc -vV | sed -n 's/^host: //p')"
)

# The pinned tools that build the Python and TypeScript plugin folders the host tests load
# (cached: a second run installs nothing); then the two SDKs' own tests and the example
# plugins' unit tests through each SDK's harness, natively.
step scripts/install-plugin-toolchains.sh
step python3 -m unittest discover -s plugins/sdk-python/tests
step env PYTHONPATH=plugins/sdk-python python3 -m unittest discover -s plugins/triage-modes-py
# TypeScript tests bundled as a plugin's own tests are: `agent-host-sdk` (and
# `agent-host-sdk/testing`) aliased to the SDK's folder, the contract's imports left external
# (only exporting a component uses them, and the SDK's package.json lets esbuild leave them
# out), then run under Node's test runner.
typescript_tests() {
    local bin="${AGENT_HOST_TOOLCHAINS:-$HOME/.cache/agent-host/toolchains}/typescript/node_modules/.bin"
    local out
    out=$(mktemp -d)
    "$bin/esbuild" "$@" --bundle --platform=node --format=esm --log-level=warning --outdir="$out" \
        --out-extension:.js=.mjs --external:'agent-host:*' --alias:agent-host-sdk=./plugins/sdk-typescript
    node --test "$out"/*.mjs
    rm -rf "$out"
}
step typescript_tests plugins/sdk-typescript/tests/*.test.ts
step typescript_tests plugins/triage-modes-ts/*.test.ts

step cargo test --workspace
