#!/usr/bin/env bash
# Instructions per model call of the load bench (BENCHMARKS.md, the method of "Issue 36"):
# the whole bench process under callgrind for 300 and for 600 sessions of the todo workflow,
# the difference over the 1,800 model calls between them, so start-up and loading cancel out.
# The plugins' compiled code comes from a cache warmed first, so no measured run compiles or
# checks an artifact (either is most of a run's instructions, and not the same run to run).
#
#   scripts/instructions-per-model-call.sh [LOAD_BENCH_EXECUTABLE]
#
# It builds the stock plugins, and without an executable the bench as the figures in
# BENCHMARKS.md were (release, without LTO, 16 codegen units: minutes rather than a quarter
# of an hour). Needs valgrind.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bench=${1:-}
# `--prebuilt` takes the stock plugins from where this build leaves them.
(cd "$root/plugins" && cargo build --quiet --release --target wasm32-wasip2 --workspace)
if [[ -z $bench ]]; then
    bench=$(cd "$root" && CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
        cargo bench -p agent-host-cli --bench load --no-run --message-format=json 2>/dev/null |
        grep -o '"executable":"[^"]*/load-[^"]*"' | tail -n 1 | cut -d'"' -f4)
    [[ -n $bench ]] || { echo "the load bench did not build" >&2; exit 1; }
fi
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -m 700 "$work/cache"
cd "$root/cli"
run=("$bench" --prebuilt --sessions 0 --no-startup --compile-cache "$work/cache")
# Twice: the first compiles, the second checks each artifact once and leaves the memo that
# spares every later start the check.
for _ in 1 2; do
    valgrind --tool=none "${run[@]}" --serial 5 >"$work/warm.log" 2>&1 || { cat "$work/warm.log" >&2; exit 1; }
done
for sessions in 300 600; do
    valgrind --tool=callgrind --callgrind-out-file="$work/$sessions.out" "${run[@]}" --serial "$sessions" \
        >"$work/$sessions.log" 2>&1 &
done
wait
refs() { grep -o 'refs: *[0-9,]*' "$work/$1.log" | tr -dc '0-9'; }
echo "instructions per model call: $(( ($(refs 600) - $(refs 300)) / 1800 ))"
