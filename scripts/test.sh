#!/usr/bin/env bash
# Builds and runs every test: a normal build (warnings as errors), the three
# fuzz targets under ASan+UBSan (IR parser, .npy reader, parse -> run ->
# backward; tests/fuzz/run_fuzz.sh), a ThreadSanitizer build of the suites
# that run threads, and an AddressSanitizer + UndefinedBehaviorSanitizer
# build of everything, and `fusebox fuzz` (differential fuzzing against
# none) for every fuser built. FUSEBOX_FUZZ_SECONDS (default 60) is each
# fuzz target's and each fuser's time (three targets and two or three
# fusers: 5-6 minutes at the default); 0 skips fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --with-fuzz --with-chromium
jobs=$(nproc)
# a full run leaves about 1.2 GB of build trees (2026-11: 355 MB normal, 630 MB ASan); the log says what was free
echo "== $(df -Pk . | awk 'NR==2 {printf "%.1f GiB", $4 / 1048576}') free on the disk of $(pwd) =="

echo "== normal build =="
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSEBOX_WERROR=ON >/dev/null
cmake --build build-test -j"$jobs"
ctest --test-dir build-test --output-on-failure -j"$jobs"

secs=${FUSEBOX_FUZZ_SECONDS:-60}
if [[ "$secs" != 0 ]]; then
  echo "== fuzzing: fuzz_parse, fuzz_npy, fuzz_run, ${secs}s each under ASan+UBSan =="
  tests/fuzz/run_fuzz.sh "$secs"
  # differential fuzzing (issue 21): random graphs under each fuser against
  # none, forward and backward; any mismatch or crash fails, its minimized
  # repro is left in build-test/fuzz-repros/<fuser>/
  fusers="legacy tensorexpr"
  if ls build-test/plugins/*nvfuser_like*.so >/dev/null 2>&1; then fusers="$fusers nvfuser_like"; fi
  for f in $fusers; do
    echo "== fusebox fuzz --fuser $f: ${secs}s =="
    build-test/fusebox fuzz --fuser "$f" --seconds "$secs" --backward --out "build-test/fuzz-repros/$f"
  done
fi

echo "== ThreadSanitizer build: the suites that run threads =="
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSEBOX_WERROR=ON -DFUSEBOX_TSAN=ON \
  -DFUSEBOX_BENCH=OFF -DFUSEBOX_TORCH=OFF >/dev/null
tsan_tests="test_parallel|test_interp|test_executor|test_api|test_host_kernel|test_services|test_autodiff_runtime|test_ops_linalg_par"
cmake --build build-tsan -j"$jobs" --target fbx_test_plugins fusebox_cli test_parallel test_interp test_executor test_api \
  test_host_kernel test_services test_autodiff_runtime test_ops_linalg_par
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 CK_FORK=no \
  ctest --test-dir build-tsan --output-on-failure -j"$jobs" -R "^($tsan_tests)\$"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DFUSEBOX_WERROR=ON -DFUSEBOX_SANITIZE=ON -DFUSEBOX_TORCH=OFF >/dev/null
cmake --build build-asan -j"$jobs"
# intercept_tls_get_addr=0: GCC 12's sanitizer runtime takes a dynamic TLS
# block that happens to start 16 bytes into a page for a pre-2.25 glibc
# header and reads a bogus range from the two words before it; at exit
# LeakSanitizer's tracer then faults ("Tracer caught signal 11"). PoCL and
# NVRTC bring such blocks, so the suites that open them failed now and then.
# Without the interceptor, dynamic TLS is still reached through glibc's own
# heap blocks, so leaks stay visible.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
