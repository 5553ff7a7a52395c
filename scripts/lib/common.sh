# Shared by scripts/run.sh and scripts/test.sh: install what is missing, then configure and build.
# Idempotent: installed packages are not touched, an up-to-date build does nothing.

KS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KS_BUILD="${KS_BUILD:-$KS_ROOT/build}"

# Debian packages the project builds and tests with.
KS_PACKAGES=(
  g++ cmake make pkg-config
  libsystemc-dev libyaml-cpp-dev libboost-program-options-dev nlohmann-json3-dev
  libeigen3-dev libgtest-dev libbenchmark-dev robin-map-dev python3
  python3-matplotlib  # scripts/plot.py and its test
)

ks_log() { printf '[kernelsight] %s\n' "$*" >&2; }

ks_install_packages() {
  local missing=()
  for pkg in "${KS_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { ks_log "missing packages (${missing[*]}) and not root: install them first"; exit 1; }
    sudo=(sudo)
  fi
  ks_log "installing: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ks_build [cmake targets...]: configure (once) and build. Warnings fail the build under CI.
ks_build() {
  local werror=OFF
  [ "${CI:-}" = "true" ] && werror=ON
  cmake -S "$KS_ROOT" -B "$KS_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKS_WERROR="$werror" \
    ${KS_CMAKE_ARGS[@]+"${KS_CMAKE_ARGS[@]}"} >/dev/null
  local jobs
  jobs="$(nproc 2>/dev/null || echo 2)"
  if [ $# -gt 0 ]; then
    local targets=()
    for t in "$@"; do targets+=(--target "$t"); done
    cmake --build "$KS_BUILD" -j "$jobs" "${targets[@]}"
  else
    cmake --build "$KS_BUILD" -j "$jobs"
  fi
}
