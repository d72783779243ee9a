#!/bin/sh
# gen_run_seeds.sh: write the seed corpus of fuzz_run (tests/fuzz/seeds/run/):
# every corpus graph up to 6 kB (tests/corpus/cases/*/graph.ir,
# tests/corpus/graphs/*.ir) and the examples, each behind an 8-byte header
# (see fuzz_run.c): forward+backward with 3 more runs, tensors of rank 2 and
# sizes (3, 4) where the type gives none, float32. Run from anywhere.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/tests/fuzz/seeds/run
mkdir -p "$out"
n=0
for f in "$root"/tests/corpus/cases/*/graph.ir "$root"/tests/corpus/graphs/*.ir "$root"/examples/*.ir; do
  [ -f "$f" ] || continue
  [ "$(wc -c <"$f")" -le 6144 ] || continue
  rel=${f#"$root"/}
  name=$(printf '%s' "$rel" | tr '/' '_')
  # flags 0x07, rank 2, sizes 3 4 2, values from 0, int 5, float 1.0 / float32
  { printf '\007\002\003\004\002\000\005\002'; cat "$f"; } >"$out/$name"
  n=$((n + 1))
done
echo "gen_run_seeds: $n seeds in $out"
