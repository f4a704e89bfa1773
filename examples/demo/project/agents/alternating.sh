#!/usr/bin/env bash
# An agent that is right half the time, for `hydra eval`: on even samples
# (HYDRA_SAMPLE, which hydra gives every sample of an evaluation) it does
# what careful does; on odd ones it reads the issue and gives up, changing
# nothing. Deterministic, so an eval report of it is known beforehand:
# pass@1 = 0.5 over an even number of samples.
set -euo pipefail
here=$(dirname "$0")
if (( ${HYDRA_SAMPLE:-0} % 2 == 0 )); then
  exec "$here/careful.sh"
fi
# shellcheck source=common.sh
source "$here/common.sh"

start alternating
read_file README.md
say "I could not find where the coupon is counted twice; leaving the code as it is."
