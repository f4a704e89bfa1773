#!/usr/bin/env bash
# Tests the VS Code client: type check, unit tests under node --test, then end
# to end in a real VS Code (code-server driven in headless chromium) against
# the real hydra binary. Installs what it needs first (scripts/install-tools.sh:
# Debian's chromium, ripgrep and build tools; code-server and playwright-core
# under <repository>/.editor-tests/vscode/), runs `npm ci` and builds the .vsix
# (and the end-to-end test's probe extension, test/e2e/probe).
#
#   editors/vscode/scripts/test.sh
#   HYDRA_BIN=/path/to/hydra     test this binary (default: build/server/hydra, built if missing)
#   HYDRA_VSCODE_E2E=0           unit tests only
#
# Screenshots of every end-to-end step go to <repository>/.editor-tests/screenshots/.
# Exits non-zero when anything fails.
set -euo pipefail
ext="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="$(cd "$ext/../.." && pwd)"
tools="$root/.editor-tests"

section() { printf '\n==> %s\n' "$*"; }

# The extension's tooling and code-server 4.100.3 need Node.js 20 or later
# (Debian 12's own nodejs package is 18).
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$node_major" -lt 20 ]; then
  echo "editors/vscode/scripts/test.sh: Node.js 20 or later is needed, found $(node --version 2>/dev/null || echo none)" >&2
  exit 2
fi

if [ "${HYDRA_VSCODE_E2E:-1}" != 0 ]; then
  section "Installing what the tests need"
  "$ext/scripts/install-tools.sh"
fi

section "npm ci"
(cd "$ext" && npm ci --no-audit --no-fund --loglevel=error)

section "Type check and unit tests"
(cd "$ext" && npx tsc --noEmit -p . && npm run -s test:unit)

[ "${HYDRA_VSCODE_E2E:-1}" = 0 ] && exit 0

section "Packaging the .vsix"
(cd "$ext" && npm run -s package)
# The end-to-end test's probe: a second extension that writes what VS Code's
# API says (diagnostics, the active diff's sides) where the test reads it.
mkdir -p "$tools/vscode"
(cd "$ext/test/e2e/probe" && "$ext/node_modules/.bin/vsce" package --no-dependencies --allow-missing-repository \
  --skip-license -o "$tools/vscode/probe.vsix" >/dev/null)

hydra="${HYDRA_BIN:-$root/build/server/hydra}"
if [ -z "${HYDRA_BIN:-}" ] && [ ! -x "$hydra" ]; then
  section "Building hydra"
  "$root/scripts/build.sh" hydra
fi
[ -x "$hydra" ] || { echo "no hydra binary at $hydra" >&2; exit 1; }

section "End to end in code-server"
HYDRA_BIN="$hydra" HYDRA_VSIX="$ext/hydra.vsix" HYDRA_PROBE_VSIX="$tools/vscode/probe.vsix" HYDRA_E2E_TOOLS="$tools/vscode" \
  HYDRA_E2E_SHOTS="$tools/screenshots" timeout --kill-after=10 600 node "$ext/test/e2e/run.mjs"
