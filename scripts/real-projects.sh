#!/usr/bin/env bash
# Fetches the real open-source projects that tests/e2e/real_projects_test.cpp
# races hydra on, as Debian source packages, into .cache/real-projects/ (git
# ignores .cache/). A second run finds them there and downloads nothing.
#
#   cjson  cJSON 1.7.15 (CMake, ctest, Unity) with Debian's patches; the test
#          uses upstream's "add NULL checkings (#809)" (CVE-2023-50471 and
#          CVE-2023-50472), which Debian carries as a patch.
#
# apt is pointed at a private deb-src list made from this machine's own
# sources (the same mirrors, Types switched to deb-src) and private lists and
# cache folders, so the system's apt configuration is left untouched.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache/real-projects"
ready="$cache/cjson/source/cJSON-1.7.15"
patch_name=0001-add-null-checkings.patch

if [ -f "$ready/cJSON.c" ] && [ -f "$cache/cjson/source/$patch_name" ]; then
  exit 0
fi

apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
sources=()
for f in /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && sources+=("$f"); done
if [ ${#sources[@]} -eq 0 ]; then
  echo "real-projects.sh: no deb822 sources in /etc/apt/sources.list.d to derive a deb-src list from" >&2
  exit 1
fi
sed 's/^Types:.*$/Types: deb-src/' "${sources[@]}" >"$apt_dir/deb-src.sources"
apt_opts=(
  -o "Dir::Etc::SourceList=$apt_dir/deb-src.sources"
  -o "Dir::Etc::SourceParts=$apt_dir/no-parts"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::Cache=$apt_dir/cache"
  -o "Debug::NoLocking=1"
)
mkdir -p "$apt_dir/no-parts"
apt-get "${apt_opts[@]}" update -qq

download="$cache/cjson/download"
rm -rf "$download" && mkdir -p "$download"
(cd "$download" && apt-get "${apt_opts[@]}" source --download-only -qq cjson=1.7.15-1+deb12u4 2>/dev/null ||
  apt-get "${apt_opts[@]}" source --download-only -qq cjson)
orig="$(ls "$download"/cjson_1.7.15.orig.tar.* 2>/dev/null | head -n1)"
debian="$(ls "$download"/cjson_1.7.15-*.debian.tar.* 2>/dev/null | head -n1)"
if [ -z "$orig" ] || [ -z "$debian" ]; then
  echo "real-projects.sh: the cjson source package is not version 1.7.15 any more; the test needs 1.7.15" >&2
  exit 1
fi

staging="$cache/cjson/source.new"
rm -rf "$staging" && mkdir -p "$staging/debian-tar"
tar -xf "$orig" -C "$staging"
tar -xf "$debian" -C "$staging/debian-tar"
cp "$staging/debian-tar/debian/patches/$patch_name" "$staging/$patch_name"
rm -rf "$staging/debian-tar" "$cache/cjson/source"
mv "$staging" "$cache/cjson/source"
rm -rf "$download"
