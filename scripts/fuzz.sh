#!/usr/bin/env bash
# Builds the libFuzzer targets of the file readers with clang (ASan+UBSan) and runs each for a
# bounded time, starting from the seed files in tests/fuzz/corpus. A crash, a leak, an
# out-of-bounds read or a broken invariant fails the run; libFuzzer leaves the input that did it
# in build/fuzz/crash-* (rerun one with: build/fuzz/tests/fuzz/TARGET FILE).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
scripts/install-deps.sh
build=build/fuzz
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTFPROF_BUILD_FUZZERS=ON -DTFPROF_BUILD_TESTS=OFF -DTFPROF_BUILD_EXAMPLES=OFF \
  -DTFPROF_BUILD_BENCHMARKS=OFF -DTFPROF_SANITIZE="address;undefined" -DTFPROF_ABSEIL=system \
  >/dev/null
rm -f "$build"/crash-* "$build"/leak-* "$build"/timeout-* "$build"/oom-*
targets=(fuzz_tfrecord fuzz_step_stats_message fuzz_convert fuzz_trace_loader)
# Per-input limits from the bound docs/cli.md states (peak memory under 64 MiB + 3 x (input +
# output) + 128 bytes an event, time linear or n log n): a 16 KiB input makes at most a few tens of
# MB of output (an XPlane whose events share one long name), so well under 200 MiB; ASan's
# shadow memory and its 256 MB quarantine come on top. Every run of a 16 KiB input takes
# milliseconds; 5 s is a hang or a quadratic path. The hostile-* seeds are issue 32's shapes.
max_len=16384
timeout_s=5
rss_limit_mb=1024
malloc_limit_mb=512
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
for target in "${targets[@]}"; do
  corpus="$build/corpus-$target"
  mkdir -p "$corpus"
  cp -n tests/fuzz/corpus/* "$corpus/"
  echo "=== fuzz.sh: $target for ${seconds}s"
  (cd "$build" && "./tests/fuzz/$target" -max_total_time="$seconds" -max_len="$max_len" \
    -timeout="$timeout_s" -rss_limit_mb="$rss_limit_mb" -malloc_limit_mb="$malloc_limit_mb" \
    -print_final_stats=1 "corpus-$target" 2>&1 | grep -E "^(#[0-9]+ +DONE|INFO: seed corpus|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)" || true)
  # libFuzzer exits nonzero on a finding; grep above only trims its output, so check for crash files.
  if compgen -G "$build/crash-*" >/dev/null || compgen -G "$build/leak-*" >/dev/null || \
     compgen -G "$build/timeout-*" >/dev/null || compgen -G "$build/oom-*" >/dev/null; then
    echo "fuzz.sh: $target found a problem: $(ls "$build"/crash-* "$build"/leak-* "$build"/timeout-* "$build"/oom-* 2>/dev/null)"
    exit 1
  fi
done
echo "fuzz.sh: no findings"
