# Sourced by scripts/test.sh and scripts/aarch64.sh: the one machine-wide
# ccache every build tree of the suite compiles through. ccache (Debian's
# package) keys on the compiler binary, so native, sanitizer, clang and
# cross objects share the cache without colliding. CI clones into a new
# folder each run: BASEDIR + NOHASHDIR let those clones hit the same entries.
# The size bound holds all of those trees; a run that set a smaller one would
# evict the others' entries.
#
# use_ccache ROOT: exports the ccache settings and sets LAUNCHER to the cmake
# arguments that compile through it (empty, and nothing exported, without
# ccache).
use_ccache() {
  LAUNCHER=()
  command -v ccache >/dev/null || return 0
  export CCACHE_DIR=${NXDNS_CCACHE_DIR:-/var/cache/nxdns/ccache}
  export CCACHE_BASEDIR=$1 CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
  mkdir -p "$CCACHE_DIR"
  LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
}
