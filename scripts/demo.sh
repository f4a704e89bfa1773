#!/usr/bin/env bash
# The README's first command: sets up, builds hydra, and races three scripted
# agents on a small project with a real bug. Needs no API key and no network
# beyond Debian's packages.
#
#   scripts/demo.sh [DIR]            DIR: where to create the demo repository
#                                    (default: a new directory under /tmp)
#   scripts/demo.sh --collab [DIR]   a collaboration instead: the scripted
#                                    builder fixes the bug, the scripted reviewer
#                                    asks for a regression test, the builder adds
#                                    it, and the reviewer approves (two rounds)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=race
if [ "${1:-}" = --collab ]; then
  mode=collab
  shift
fi

echo "==> Installing dependencies"
"$root/scripts/install-deps.sh" demo

echo "==> Building hydra"
"$root/scripts/build.sh" hydra
hydra="$root/build/server/hydra"

demo="${1:-$(mktemp -d /tmp/hydra-demo.XXXXXX)}"
if [ -e "$demo/.git" ]; then
  echo "demo.sh: $demo already holds a git repository; give an empty directory" >&2
  exit 2
fi
echo "==> Creating the demo repository in $demo"
mkdir -p "$demo"
cp -R "$root/examples/demo/project/." "$demo/"
git -C "$demo" init -q
git -C "$demo" add -A
git -C "$demo" -c user.name="hydra demo" -c user.email="demo@hydra.invalid" commit -q -m "shopcart: a small cart library"

cd "$demo"
status=0
if [ "$mode" = collab ]; then
  echo "==> A collaboration on the bug described in README.md: fixer builds, reviewer reviews"
  echo
  "$hydra" collab "Fix the open issue in README.md" --builder fixer --reviewer reviewer || status=$?
else
  echo "==> Racing three agents on the bug described in README.md"
  echo
  "$hydra" race "Fix the open issue in README.md" --agents careful,breaker,sprawler || status=$?
fi

cat <<EOF2

The demo repository is $demo. From there, try:
  $hydra status
  git log --oneline --all
EOF2
exit "$status"
