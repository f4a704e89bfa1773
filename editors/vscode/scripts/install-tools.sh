#!/usr/bin/env bash
# Installs what the VS Code client's tests need, using only Debian's packages
# and the npm registry:
#   - Debian: chromium (driven headless), ripgrep, and the toolchain that
#     code-server's native modules build with (build-essential, libkrb5-dev);
#   - code-server 4.100.3 (VS Code 1.100.3, the newest that runs on Node 20)
#     and playwright-core, into <repository>/.editor-tests/vscode/.
# Safe to run again: what is installed already is kept.
set -euo pipefail
ext="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="$(cd "$ext/../.." && pwd)"
tools="${HYDRA_EDITOR_TOOLS:-$root/.editor-tests}/vscode"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_debian_packages() {
  local missing=()
  for p in chromium ripgrep libkrb5-dev build-essential python3 git; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing Debian packages: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_code_server() {
  local dir="$tools/code-server"
  if [ -x "$dir/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] &&
    [ -f "$dir/node_modules/code-server/out/node/entry.js" ]; then
    return 0
  fi
  mkdir -p "$dir" "$tools/tmp/vscode-ripgrep-cache-1.15.11" "$tools/rg"
  # @vscode/ripgrep's postinstall downloads rg from outside the registries;
  # its cache, seeded with Debian's rg, makes it skip the download.
  cp /usr/bin/rg "$tools/rg/rg"
  tar czf "$tools/tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$tools/rg" rg
  [ -f "$dir/package.json" ] || echo '{"name":"hydra-vscode-e2e-host","private":true}' >"$dir/package.json"
  # yes: node-pty's postinstall runs `npx node-gyp`; unsafe_perm: code-server's
  # postinstall refuses to run as root without it; nodedir: native modules
  # build against Debian's node headers.
  (cd "$dir" && TMPDIR="$tools/tmp" npm_config_yes=true npm_config_unsafe_perm=true npm_config_nodedir=/usr \
    npm install --no-audit --no-fund --loglevel=error code-server@4.100.3)
  test -x "$dir/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg"
}

install_driver() {
  local dir="$tools/driver"
  [ -d "$dir/node_modules/playwright-core" ] && return 0
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"hydra-vscode-e2e-driver","private":true}' >"$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error playwright-core@1.56)
}

install_debian_packages
install_code_server
install_driver
XDG_CONFIG_HOME="$tools/config" XDG_DATA_HOME="$tools/data" node "$tools/code-server/node_modules/code-server/out/node/entry.js" --version | grep -m1 -E "^[0-9]+\." | sed "s/^/code-server: /"
