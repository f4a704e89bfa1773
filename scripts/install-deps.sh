#!/usr/bin/env bash
# Installs the Debian 12 packages hydra needs to build and test, and to run:
# bubblewrap confines the agents and their checks (core/sandbox). The test
# group adds Slurm and munge for the cluster executor's tests (a one-node
# cluster that scripts/slurm-cluster.sh starts without their services).
# Idempotent: when every package is already present it returns at once,
# without touching apt's lists.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ccache python3
  libboost1.81-dev libboost-json1.81-dev libboost-filesystem1.81-dev
  libtomlplusplus-dev libgit2-dev libspdlog-dev libcli11-dev libpugixml-dev
  libgtest-dev libgmock-dev libbenchmark-dev libssl-dev
  bubblewrap
)

# Extra groups, selected by the caller:
#   demo  what the demo project's build, test and lint commands run
#   test  what the test suites need beyond the build (markupsafe and patch:
#         the real Jinja project of tests/e2e/real_projects_test.cpp; golang-go:
#         the plain `go test` race of tests/e2e/gamed_scores_test.cpp; nodejs
#         and npm: its `npm run build` race)
#   fuzz  clang 14 and its libFuzzer, for scripts/fuzz.sh
for group in "$@"; do
  case "$group" in
    build) ;;
    demo) packages+=(python3-pytest python3-pyflakes) ;;
    test) packages+=(python3-pytest python3-pyflakes python3-markupsafe patch slurm-wlm munge iproute2 golang-go
                     nodejs npm) ;;
    fuzz) packages+=(clang-14 libclang-rt-14-dev) ;;
    *) echo "install-deps.sh: unknown group '$group' (known: build, demo, test, fuzz)" >&2; exit 2 ;;
  esac
done

# A package counts as present when it is installed or an installed package
# provides it: a newer Node.js packaged with npm inside provides npm, and
# installing Debian's npm beside it would conflict with it.
present=" $(dpkg-query -W -f='${db:Status-Abbrev}|${Package}|${Provides}\n' 2>/dev/null |
  awk -F'|' '$1 ~ /^ii/ { print $2; n = split($3, p, ","); for (i = 1; i <= n; i++) { split(p[i], w, " "); if (w[1] != "") print w[1] } }' |
  tr '\n' ' ')"
missing=()
for p in "${packages[@]}"; do
  if [[ "$present" != *" $p "* ]]; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  sudo=sudo
else
  sudo=
fi
echo "Installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Packages install their services stopped: hydra's tests start their own
# private Slurm and munge daemons (scripts/slurm-cluster.sh), and a machine's
# own must not start behind the user's back. A policy-rc.d that says "no" is
# how Debian's maintainer scripts are told so; one already there is left alone.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# installed by hydra scripts/install-deps.sh while it runs\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  trap '$sudo rm -f "$policy"' EXIT
fi
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
