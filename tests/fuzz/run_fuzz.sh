#!/bin/sh
# run_fuzz.sh [SECONDS]: build the fuzz targets with clang, under
# ASan+UBSan (-fsanitize=fuzzer,address,undefined), into build-fuzz, and run
# each for SECONDS (default 60; CI: 3 targets x 60 s):
#   fuzz_parse  the IR parser and printer; seeds: the corpus graphs (make_seeds.sh)
#   fuzz_npy    the .npy reader; seeds: tests/fuzz/seeds/npy (gen_npy_seeds.py)
#   fuzz_run    parse -> run -> backward; seeds: tests/fuzz/seeds/run (gen_run_seeds.sh)
# Prints how many inputs each target executed. Exits non-zero when any
# target crashed, leaked, hung (-timeout) or failed a check; the reproducer
# is left in build-fuzz/fuzz-artifacts/<target>/ and the log in
# build-fuzz/<target>.log. Replay one: build-fuzz/tests/fuzz/<target> FILE.
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build-fuzz
fuzz=$root/tests/fuzz
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DFUSEBOX_FUZZ=ON -DFUSEBOX_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target fuzz_parse fuzz_npy fuzz_run -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
rm -rf "$build/fuzz-seeds/parse"
"$fuzz/make_seeds.sh" "$build/fuzz-seeds/parse"

failed=0
# run_one TARGET DICT SEEDS [OPTIONS...]
run_one() {
  target=$1 dict=$2 seeds=$3
  shift 3
  corpus=$build/fuzz-corpus/${target#fuzz_}
  artifacts=$build/fuzz-artifacts/$target
  log=$build/$target.log
  mkdir -p "$corpus" "$artifacts"
  set +e
  "$build/tests/fuzz/$target" -max_total_time="$secs" -print_final_stats=1 -dict="$dict" \
    -artifact_prefix="$artifacts/" -rss_limit_mb=4096 "$@" "$corpus" "$seeds" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  echo "run_fuzz: $target ran ${execs:-?} inputs in ${secs}s (${rate:-?}/s), exit status $rc"
  if [ "$rc" -ne 0 ]; then
    grep -v '^\[fusebox' "$log" | tail -n 40
    echo "run_fuzz: $target FAILED, see $log and $artifacts" >&2
    failed=1
  fi
}

run_one fuzz_parse "$fuzz/ir.dict" "$build/fuzz-seeds/parse" -max_len=65536
run_one fuzz_npy "$fuzz/npy.dict" "$fuzz/seeds/npy" -max_len=4096
# fuzz_run: a hang is a bug too (-timeout); big allocations fail cleanly
# inside the target (ASan's max_allocation_size_mb), not at libFuzzer's limit.
run_one fuzz_run "$fuzz/ir.dict" "$fuzz/seeds/run" -max_len=8192 -timeout=30 -malloc_limit_mb=4096
exit $failed
