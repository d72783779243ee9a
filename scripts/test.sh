#!/usr/bin/env bash
# Builds and runs every test: a normal build (warnings as errors), the
# parser fuzzer, and an AddressSanitizer + UndefinedBehaviorSanitizer build.
# FUSEBOX_FUZZ_SECONDS (default 60) sets the fuzzing time; 0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --with-fuzz
jobs=$(nproc)

echo "== normal build =="
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSEBOX_WERROR=ON >/dev/null
cmake --build build-test -j"$jobs"
ctest --test-dir build-test --output-on-failure -j"$jobs"

secs=${FUSEBOX_FUZZ_SECONDS:-60}
if [[ "$secs" != 0 ]]; then
  echo "== parser fuzzing, ${secs}s under ASan =="
  tests/fuzz/run_fuzz.sh "$secs"
fi

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DFUSEBOX_WERROR=ON -DFUSEBOX_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
