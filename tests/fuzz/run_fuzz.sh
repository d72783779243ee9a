#!/bin/sh
# run_fuzz.sh [SECONDS]: build the fuzz targets with clang into build-fuzz,
# seed fuzz_parse from the corpus graphs, run it for SECONDS (default 60) and
# print how many inputs it executed. Exits non-zero on any crash, leak or
# failed round trip (the reproducer is left in build-fuzz/fuzz-artifacts/).
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build-fuzz
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DFUSEBOX_FUZZ=ON -DFUSEBOX_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target fuzz_parse -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
seeds=$build/fuzz-seeds/parse
corpus=$build/fuzz-corpus/parse
artifacts=$build/fuzz-artifacts
mkdir -p "$corpus" "$artifacts"
rm -rf "$seeds"
"$root/tests/fuzz/make_seeds.sh" "$seeds"
log=$build/fuzz_parse.log
set +e
"$build/tests/fuzz/fuzz_parse" -max_len=65536 -max_total_time="$secs" -print_final_stats=1 \
  -dict="$root/tests/fuzz/ir.dict" -artifact_prefix="$artifacts/" -rss_limit_mb=4096 \
  "$corpus" "$seeds" >"$log" 2>&1
rc=$?
set -e
tail -n 25 "$log"
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
echo "run_fuzz: fuzz_parse ran ${execs:-?} inputs in ${secs}s (${rate:-?}/s), exit status $rc"
if [ "$rc" -ne 0 ]; then
  echo "run_fuzz: FAILED, see $log and $artifacts" >&2
  exit 1
fi
