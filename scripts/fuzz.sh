#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang++-14 (AddressSanitizer
# and UndefinedBehaviorSanitizer, in their own tree: build-fuzz/) and runs each
# for a bounded time, starting from the corpus kept in tests/fuzz/corpus/.
#
#   scripts/fuzz.sh                      every target, about 100 s in all
#   scripts/fuzz.sh protocol claude      only these targets
#   HYDRA_FUZZ_SECONDS=1200 scripts/fuzz.sh   a longer run, split among the targets
#   HYDRA_FUZZ_MERGE=1 scripts/fuzz.sh   then add the inputs that reached new code
#                                        to tests/fuzz/corpus/ (to commit)
#
# Targets: protocol (framing, JSON-RPC validation and dispatch), tests (the
# test-output parsers and JUnit reports), and one per adapter: claude codex
# cursor gemini opencode aider acp (the ACP session) command. A finding stops
# the script; the input that triggers it is saved in build-fuzz/findings/TARGET/.
# tests/fuzz/README.md says what each target checks.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

all=(protocol tests claude codex cursor gemini opencode aider acp command)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t' (known: ${all[*]})" >&2; exit 2; }
done

scripts/install-deps.sh fuzz

build=build-fuzz
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHYDRA_FUZZ=ON -DHYDRA_BUILD_TESTS=OFF -DHYDRA_BUILD_BENCH=OFF >/dev/null
build_targets=()
for t in "${targets[@]}"; do build_targets+=(--target "${t}_fuzzer"); done
cmake --build "$build" -j"$(nproc)" "${build_targets[@]}"

# The protocol target gets a larger share: its input space is the widest.
total="${HYDRA_FUZZ_SECONDS:-100}"
seconds_for() {
  local n=${#targets[@]}
  if [ "$n" -eq 1 ]; then echo "$total"; return; fi
  local protocol_share=$((total * 3 / 10))
  if [[ " ${targets[*]} " == *" protocol "* ]]; then
    if [ "$1" = protocol ]; then echo "$protocol_share"; else echo $(((total - protocol_share) / (n - 1))); fi
  else
    echo $((total / n))
  fi
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
for t in "${targets[@]}"; do
  dict=tests/fuzz/adapters.dict
  [ "$t" = protocol ] && dict=tests/fuzz/protocol.dict
  [ "$t" = tests ] && dict=tests/fuzz/tests.dict
  seeds="tests/fuzz/corpus/$t"
  work="$build/corpus/$t"          # what this run finds; kept between runs, never committed
  findings="$build/findings/$t"
  mkdir -p "$work" "$findings"
  secs="$(seconds_for "$t")"
  printf '\n==> fuzzing %s for %s s\n' "$t" "$secs"
  if ! "$build/tests/fuzz/${t}_fuzzer" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
      -print_final_stats=1 -dict="$dict" -artifact_prefix="$findings/" "$work" "$seeds" \
      >"$build/fuzz-$t.log" 2>&1; then
    tail -n 60 "$build/fuzz-$t.log" >&2
    echo "fuzz.sh: the $t target found a problem; the input is in $findings/" >&2
    exit 1
  fi
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+.*DONE)' "$build/fuzz-$t.log" || true
  if [ "${HYDRA_FUZZ_MERGE:-0}" = 1 ]; then
    "$build/tests/fuzz/${t}_fuzzer" -merge=1 "$seeds" "$work" >>"$build/fuzz-$t.log" 2>&1
  fi
done
echo
echo "fuzz.sh: no findings in ${targets[*]}"
