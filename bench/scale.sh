#!/bin/sh
# The scale benchmark of issue #12: microseconds per node for every stage of
# fusebox on graphs of growing size. Goal: the figure at 64k nodes within 2x
# of the figure at 1k nodes for every row (nothing grows faster than the graph).
#
#   bench/scale.sh BUILD_DIR [SIZES]
#
# SIZES defaults to "1000 4000 16000 64000". Shapes (bench/scale_gen.c):
#   chain  one dependence chain (sigmoid, mul, tanh, add, ...)
#   wide   n/3 products of x with distinct constants summed by a tree of adds
# Stages, each one `fusebox` process, timed by wall clock and, when
# /usr/bin/time is there, by CPU time (user + sys, children included): each
# cell prints "WALL/CPU" microseconds per node (the machine may be shared:
# CPU time is the steadier figure, but /usr/bin/time counts in 10 ms steps:
# 10 us per node at 1k nodes; the ratio column compares both):
#   print            print --passes default
#   explain          explain --fuser F
#   run              run --fuser F
#   explain-bwd      explain --fuser F --backward
#   run-bwd          run --fuser F --backward
# for every fuser in FUSERS (default "none legacy"; "tensorexpr" and
# "nvfuser_like" work too), for the shapes in SHAPES
# (default "chain wide"), the stages in STAGES (default all five). A cell that runs longer
# than CAP seconds (default 30) is killed and printed "> CAPs"; a cell that
# fails prints "fail" (its stderr is kept in the work directory). The fusers
# compile their kernels into a fresh FUSEBOX_CACHE_DIR shared by the
# whole run (CACHE=DIR: that directory instead, kept, so that a later run
# finds the kernels an earlier one compiled; nvfuser_like's PoCL programs
# are kept there too, in pocl/); with WARM=1 (the default) every cell of a fuser other than
# `none` runs once untimed first (cap WARM_CAP, default 600 s: cold compiles
# are slow), so that the figure is the host's work with
# the kernels in the disk cache, not the system compiler's (WARM=0: the
# first size pays the compiles). The figure includes the process's start
# (a few ms), which makes the small sizes look a little dearer per node.
# Builds nothing: BUILD_DIR must hold fusebox, plugins/ and bench/scale_gen.
set -eu

BUILD=${1:?usage: bench/scale.sh BUILD_DIR [SIZES]}
SIZES=${2:-1000 4000 16000 64000}
CAP=${CAP:-30}
WARM=${WARM:-1}
WARM_CAP=${WARM_CAP:-600}
FUSERS=${FUSERS:-none legacy}
SHAPES=${SHAPES:-chain wide}
STAGES=${STAGES:-print explain run explain-bwd run-bwd}
FB=$BUILD/fusebox
GEN=$BUILD/bench/scale_gen
[ -x "$FB" ] || { echo "scale.sh: no $FB" >&2; exit 1; }
[ -x "$GEN" ] || { echo "scale.sh: no $GEN (cmake --build $BUILD --target scale_gen)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/fusebox_scale.XXXXXX)
export FUSEBOX_CACHE_DIR="${CACHE:-$WORK/cache}"
export FUSEBOX_PLUGIN_PATH="$BUILD/plugins"
mkdir -p "$FUSEBOX_CACHE_DIR"
echo "# work directory $WORK, kernel cache $FUSEBOX_CACHE_DIR, cap ${CAP}s per cell, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# load: $(uptime)"

# cell NAME N CMD...: prints microseconds per node (or "> CAPs" / "fail")
cell() {
  name=$1 n=$2
  shift 2
  if [ "$WARM" = 1 ] && [ "$fuser" != none ] && [ "$fuser" != - ]; then
    rc=0
    timeout -s KILL "$WARM_CAP" "$@" >/dev/null 2>"$WORK/$name.warm.err" || rc=$?
    if [ "$rc" -ne 0 ]; then
      if [ "$rc" -eq 137 ]; then printf 'warm> %ss' "$WARM_CAP"; else printf 'fail'; fi
      return 0
    fi
  fi
  t0=$(date +%s%N)
  rc=0
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%U %S' -o "$WORK/$name.time" timeout -s KILL "$CAP" "$@" >"$WORK/$name.out" \
      2>"$WORK/$name.err" || rc=$?
  else
    timeout -s KILL "$CAP" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
  fi
  if [ "$rc" -eq 0 ]; then
    t1=$(date +%s%N)
    awk -v t0="$t0" -v t1="$t1" -v n="$n" 'BEGIN { printf "%.1f", (t1 - t0) / 1000 / n }'
    if [ -s "$WORK/$name.time" ]; then
      awk -v n="$n" 'END { printf "/%.1f", ($1 + $2) * 1e6 / n }' "$WORK/$name.time"
    fi
  else
    if [ "$rc" -eq 137 ]; then printf '> %ss' "$CAP"; else printf 'fail'; fi
  fi
}

printf '%-6s %-12s %-7s' shape stage fuser
for n in $SIZES; do printf ' %14s' "${n}"; done
printf '  %s\n' 'last/first (us per node, wall/cpu)'
for shape in $SHAPES; do
  for n in $SIZES; do
    mkdir -p "$WORK/$shape$n"
    "$GEN" "$shape" "$n" "$WORK/$shape$n"
  done
  rows=""
  case " $STAGES " in *" print "*) rows="print:-" ;; esac
  for f in $FUSERS; do
    for stage in $STAGES; do [ "$stage" = print ] || rows="$rows $stage:$f"; done
  done
  for row in $rows; do
    stage=${row%%:*} fuser=${row#*:}
    printf '%-6s %-12s %-7s' "$shape" "$stage" "$fuser"
    first='' last=''
    for n in $SIZES; do
      d="$WORK/$shape$n" g="$WORK/$shape$n/graph.ir" x="$WORK/$shape$n/x.npy"
      id="$shape$n-$stage-$fuser"
      case $stage in
        print) v=$(cell "$id" "$n" "$FB" print "$g" --passes default) ;;
        explain) v=$(cell "$id" "$n" "$FB" explain "$g" --fuser "$fuser" --input "$x") ;;
        run) v=$(cell "$id" "$n" "$FB" run "$g" --fuser "$fuser" --input "$x") ;;
        explain-bwd) v=$(cell "$id" "$n" "$FB" explain "$g" --fuser "$fuser" --input "$x" --backward) ;;
        run-bwd) v=$(cell "$id" "$n" "$FB" run "$g" --fuser "$fuser" --input "$x" --backward) ;;
      esac
      printf ' %14s' "$v"
      [ -n "$first" ] || first=$v
      last=$v
    done
    awk -v a="$first" -v b="$last" 'BEGIN {
      if (a + 0 > 0 && b ~ /^[0-9.]+(\/[0-9.]+)?$/) {
        na = split(a, x, "/"); nb = split(b, y, "/")
        printf "  %.1fx", y[1] / x[1]
        if (na == 2 && nb == 2 && x[2] > 0) printf "/%.1fx", y[2] / x[2]
        printf "\n"
      } else print "  -"
    }'
  done
done
