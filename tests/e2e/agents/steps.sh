#!/usr/bin/env bash
# A stand-in for a coding agent in the end-to-end tests of hydra's protocol.
# hydra runs it in the agent's worktree; it carries out its arguments as steps,
# in order, and stops at the first that fails or at `--` (hydra may append the
# task after it):
#
#   write PATH TEXT      write TEXT and a newline to PATH, making directories
#   delete PATH          remove PATH
#   symlink TARGET PATH  make PATH a symbolic link to TARGET
#   say TEXT             print TEXT on stdout
#   shout TEXT           print TEXT on stderr
#   count N              print "line 1" ... "line N" on stdout
#   flood N              print N lines of about 100 bytes on stdout, as fast as it can
#   print-file PATH      copy PATH to stdout (a recorded agent stream)
#   pids FILE            start a background `sleep` and write "<own pid> <its pid>" to FILE
#   wait-for PATH        wait until PATH exists (give up after 120 s)
#   sleep SECONDS
#   exit CODE
set -euo pipefail

fail() {
  echo "steps.sh: $*" >&2
  exit 64
}

need() {
  (($# - 2 >= $1)) || fail "step '$2' needs $1 argument(s)"
}

while (($# > 0)); do
  step=$1
  shift
  case $step in
    --) exit 0 ;;
    write)
      need 2 "$step" "$@"
      mkdir -p -- "$(dirname -- "$1")"
      printf '%s\n' "$2" >"$1"
      shift 2
      ;;
    delete)
      need 1 "$step" "$@"
      rm -- "$1"
      shift
      ;;
    symlink)
      need 2 "$step" "$@"
      ln -s -- "$1" "$2"
      shift 2
      ;;
    say)
      need 1 "$step" "$@"
      printf '%s\n' "$1"
      shift
      ;;
    shout)
      need 1 "$step" "$@"
      printf '%s\n' "$1" >&2
      shift
      ;;
    count)
      need 1 "$step" "$@"
      seq -f 'line %g' 1 "$1"
      shift
      ;;
    flood)
      need 1 "$step" "$@"
      # About 100 bytes a line: a number and padding.
      seq -f "flood %09g ......................................................................................" 1 "$1"
      shift
      ;;
    print-file)
      need 1 "$step" "$@"
      cat -- "$1"
      shift
      ;;
    pids)
      need 1 "$step" "$@"
      sleep 300 </dev/null >/dev/null 2>&1 &
      printf '%s %s\n' "$$" "$!" >"$1.tmp"
      mv -- "$1.tmp" "$1"
      shift
      ;;
    wait-for)
      need 1 "$step" "$@"
      for ((i = 0; i < 1200; i++)); do
        [[ -e $1 ]] && break
        sleep 0.1
      done
      [[ -e $1 ]] || fail "gave up waiting for $1"
      shift
      ;;
    sleep)
      need 1 "$step" "$@"
      sleep "$1"
      shift
      ;;
    exit)
      need 1 "$step" "$@"
      exit "$1"
      ;;
    *)
      fail "unknown step '$step'"
      ;;
  esac
done
