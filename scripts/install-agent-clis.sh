#!/usr/bin/env bash
# Installs the pinned agent CLIs that the live tests (tests/live/) race for
# real, with npm, under .cache/agents/ (ignored by git). Nothing is installed
# globally. Each pinned version goes into a folder of its own and is marked
# done by a stamp only after its binary answered --version, so a second run
# reuses it and an interrupted run starts that package over.
#
#   scripts/install-agent-clis.sh            install what is missing, print where each binary is
#   scripts/install-agent-clis.sh --env      the same, then print `export` lines for a shell
#   HYDRA_AGENT_CACHE=DIR                    another cache folder (default: .cache/agents)
#
# After it, .cache/agents/bin/ holds one link per binary: put it first on PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${HYDRA_AGENT_CACHE:-$root/.cache/agents}"

# name | npm package | version | binary, relative to the package folder's node_modules
# [| the argument that makes it answer and exit: --version unless given]
pins=(
  "claude|@anthropic-ai/claude-code|2.1.330|.bin/claude"
  "codex|@openai/codex|0.169.0|.bin/codex"
  "gemini|@google/gemini-cli|0.61.0|.bin/gemini"
  "opencode|opencode-ai|1.18.33|.bin/opencode"
  "claude-agent-acp|@zed-industries/claude-agent-acp|0.23.1|.bin/claude-agent-acp"
  # The package's own launcher (.bin/codex-acp) is a node wrapper that leaves
  # the native agent running when it is killed: link the native binary.
  "codex-acp|@zed-industries/codex-acp|0.16.0|@zed-industries/codex-acp-@PLATFORM@/bin/codex-acp|--help"
)

print_env=0
for arg in "$@"; do
  case "$arg" in
    --env) print_env=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "install-agent-clis.sh: unknown option '$arg' (known: --env, --help)" >&2; exit 2 ;;
  esac
done

fail() { echo "install-agent-clis.sh: $*" >&2; exit 1; }

command -v node >/dev/null || fail "node not found on PATH: the agent CLIs need Node.js 20 or later"
command -v npm >/dev/null || fail "npm not found on PATH: the agent CLIs are installed with npm (Node.js 20 or later)"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || fail "Node.js $(node --version) is too old: the agent CLIs need 20 or later"
command -v flock >/dev/null || fail "flock not found on PATH (Debian package util-linux)"

case "$(uname -m)" in
  x86_64) platform=linux-x64 ;;
  aarch64) platform=linux-arm64 ;;
  *) fail "no prebuilt agent CLIs for $(uname -m) (x86_64 and aarch64 only)" ;;
esac

mkdir -p "$cache/pkgs" "$cache/bin"
# Two test runs starting at once must not install into the same folder.
exec 9>"$cache/.lock"
flock 9

export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

installed_any=0
for pin in "${pins[@]}"; do
  IFS='|' read -r name package version binary check <<<"$pin"
  binary="${binary//@PLATFORM@/$platform}"
  dir="$cache/pkgs/$name-$version"
  stamp="$dir/.installed"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$package@$version" ]; then
    echo "Installing $package@$version into ${dir#"$root"/}" >&2
    rm -rf "$dir" "$dir.partial"
    mkdir -p "$dir.partial"
    # Their own package.json keeps npm from walking up into the project's.
    printf '{"name":"hydra-agent-%s","private":true}\n' "$name" >"$dir.partial/package.json"
    if ! npm install --prefix "$dir.partial" --no-save --loglevel=error "$package@$version" \
      >"$dir.partial.log" 2>&1; then
      cat "$dir.partial.log" >&2
      fail "npm install $package@$version failed (log above, also in $dir.partial.log)"
    fi
    mv "$dir.partial" "$dir"
    rm -f "$dir.partial.log"
    exe="$dir/node_modules/$binary"
    [ -x "$exe" ] || fail "$package@$version installed, but its binary $exe is missing or not executable"
    # Some agents wait on their stdin for a protocol: closed, and with a deadline.
    if ! out="$(timeout 120 "$exe" "${check:---version}" </dev/null 2>&1)"; then
      fail "$package@$version installed, but '$exe ${check:---version}' failed: $out"
    fi
    echo "$package@$version" >"$stamp"
    installed_any=1
  fi
  ln -sfn "../pkgs/$name-$version/node_modules/$binary" "$cache/bin/$name"
done

# Stale versions of a pin are left behind by an upgrade: remove them.
for d in "$cache/pkgs"/*; do
  [ -d "$d" ] || continue
  keep=0
  for pin in "${pins[@]}"; do
    IFS='|' read -r name _ version _ <<<"$pin"
    [ "$d" = "$cache/pkgs/$name-$version" ] && keep=1
  done
  [ $keep = 1 ] || rm -rf "$d"
done

[ $installed_any = 1 ] && echo "Agent CLIs ready in ${cache#"$root"/}/bin" >&2
# Where each binary is; on stderr with --env, whose stdout is for `eval`.
[ $print_env = 1 ] && exec 3>&2 || exec 3>&1
for pin in "${pins[@]}"; do
  IFS='|' read -r name package version _ <<<"$pin"
  printf '%-17s %-40s %s\n' "$name" "$package@$version" "$(readlink -f "$cache/bin/$name")" >&3
done
if [ $print_env = 1 ]; then
  printf 'export HYDRA_AGENT_CLI_BIN=%q\n' "$cache/bin"
  printf 'export PATH=%q:"$PATH"\n' "$cache/bin"
fi
