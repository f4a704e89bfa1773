#!/usr/bin/env bash
# Runs the Neovim client's specs inside real headless Neovim, against the real
# hydra binary, on Debian's Neovim 0.7.2 and on Neovim 0.10. Installs what it
# needs first: Debian's neovim and lua-busted, and Neovim 0.10 from Debian
# trixie's packages, unpacked under <repository>/.editor-tests/ (bookworm's
# glibc is too old for them, so that Neovim runs through trixie's own loader).
#
#   editors/neovim/scripts/test.sh          both versions
#   HYDRA_NVIM_VERSIONS="0.7.2"             only the listed versions (0.7.2, 0.10)
#   HYDRA_BIN=/path/to/hydra                test this binary (default: build/server/hydra, built if missing)
#
# Exits non-zero when a spec fails, when Neovim reports a Lua error anywhere
# (even in a callback the specs did not wait for), or when a run hangs.
set -euo pipefail
plugin="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="$(cd "$plugin/../.." && pwd)"
tools="$root/.editor-tests"
versions="${HYDRA_NVIM_VERSIONS:-0.7.2 0.10}"

section() { printf '\n==> %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Debian packages: the 0.7.2 editor, and busted (pure Lua, loaded by both editors).
install_debian_packages() {
  local missing=()
  for p in neovim lua-busted git; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Neovim 0.10 and the libraries it needs, downloaded with a private apt
# configuration (the system's sources and state are left alone) from the same
# mirror the system uses, and unpacked into a folder.
install_nvim_010() {
  local dir="$tools/nvim-0.10"
  if [ -x "$dir/nvim" ] && "$dir/nvim" --version 2>/dev/null | grep -q '^NVIM v0\.10\.'; then
    return 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir"/apt/{lists/partial,cache/archives/partial,sources.list.d,preferences.d} "$dir/debs"
  local mirror
  mirror="$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
  if [ -z "$mirror" ]; then
    mirror="$(awk '/^deb / && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list)"
  fi
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" >"$dir/apt/sources.list"
  local apt_opts=(
    -o "Dir::Etc::sourcelist=$dir/apt/sources.list" -o "Dir::Etc::sourceparts=$dir/apt/sources.list.d"
    -o "Dir::Etc::preferencesparts=$dir/apt/preferences.d" -o "Dir::State::Lists=$dir/apt/lists"
    -o "Dir::Cache=$dir/apt/cache"
  )
  # As root, apt downloads as root: its _apt user cannot write into this folder.
  [ "$(id -u)" -eq 0 ] && apt_opts+=(-o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -qq
  (cd "$dir/debs" && apt-get "${apt_opts[@]}" download \
    neovim/trixie neovim-runtime/trixie libc6/trixie libluajit-5.1-2/trixie libmsgpack-c2/trixie \
    libtree-sitter0.22/trixie libunibilium4/trixie libuv1t64/trixie libvterm0/trixie lua-lpeg/trixie \
    lua-luv/trixie libutf8proc3/trixie >/dev/null)
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  rm -rf "$dir/apt" "$dir/debs"
  # Started through trixie's loader with trixie's libraries; --library-path
  # (not LD_LIBRARY_PATH) keeps them away from the programs Neovim starts.
  cat >"$dir/nvim" <<'WRAPPER'
#!/bin/sh
r="$(cd "$(dirname "$0")" && pwd)/root"
export VIMRUNTIME="$r/usr/share/nvim/runtime"
exec "$r/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$r/usr/lib/x86_64-linux-gnu" "$r/usr/bin/nvim" "$@"
WRAPPER
  chmod +x "$dir/nvim"
  "$dir/nvim" --version | head -n 1
}

nvim_for() {
  case "$1" in
    0.7.2) echo /usr/bin/nvim ;;
    0.10) echo "$tools/nvim-0.10/nvim" ;;
    *) echo "unknown Neovim version '$1' (known: 0.7.2, 0.10)" >&2; return 2 ;;
  esac
}

# One headless run of every spec. Neovim writes the errors it reports (a Lua
# error in a callback, an E-message) to stderr in headless mode: any of those
# fails the run even when every spec passed.
run_specs() {
  local version="$1" nvim stderr status=0
  nvim="$(nvim_for "$version")"
  section "Specs on $("$nvim" --version | head -n 1)"
  stderr="$(mktemp)"
  HYDRA_BIN="$hydra" HYDRA_PLUGIN_DIR="$plugin" HYDRA_NVIM="$nvim" \
    timeout --kill-after=10 300 "$nvim" --headless --clean -n -i NONE \
    -c "luafile $plugin/scripts/run_specs.lua" 2>"$stderr" || status=$?
  if [ -s "$stderr" ]; then
    echo "--- Neovim's stderr ---"
    cat "$stderr"
    if grep -Eqi 'E[0-9]+:|error|stack traceback' "$stderr"; then
      echo "FAILED: Neovim $version reported an error" >&2
      status=1
    fi
  fi
  rm -f "$stderr"
  if [ "$status" -ne 0 ]; then
    echo "FAILED: specs on Neovim $version (exit $status)" >&2
    return 1
  fi
  echo "passed on Neovim $version"
}

section "Installing what the specs need"
install_debian_packages
case " $versions " in *" 0.10 "*) install_nvim_010 ;; esac

hydra="${HYDRA_BIN:-$root/build/server/hydra}"
if [ -z "${HYDRA_BIN:-}" ] && [ ! -x "$hydra" ]; then
  section "Building hydra"
  "$root/scripts/build.sh" hydra
fi
[ -x "$hydra" ] || { echo "no hydra binary at $hydra" >&2; exit 1; }

failed=0
for version in $versions; do
  run_specs "$version" || failed=1
done
exit "$failed"
