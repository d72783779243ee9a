# Sourced by bench/*_figures.sh: their shared command line
#   SCRIPT BUILD_DIR [FUSER] [OUT_DIR]
# sets BUILD, FUSER (default BUILD_DIR/plugins/libfbx_legacy.so), ROOT (the
# source tree), CLI (BUILD_DIR/fusebox, which must exist) and OUT (created;
# default a new /tmp/$FIGURES.XXXXXX, FIGURES set by the caller).
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  echo "usage: $0 BUILD_DIR [FUSER] [OUT_DIR]" >&2
  exit 2
fi
BUILD=$1
FUSER=${2:-$BUILD/plugins/libfbx_legacy.so}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLI=$BUILD/fusebox
[ -x "$CLI" ] || { echo "$0: no $CLI (build the fusebox_cli target)" >&2; exit 1; }
OUT=${3:-$(mktemp -d "/tmp/$FIGURES.XXXXXX")}
mkdir -p "$OUT"
