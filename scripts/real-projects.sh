#!/usr/bin/env bash
# Fetches the real open-source projects that tests/e2e/real_projects_test.cpp
# races hydra on, as Debian source packages, into .cache/real-projects/ (git
# ignores .cache/). A second run finds them there and downloads nothing.
#
#   cjson  cJSON 1.7.15 (CMake, ctest, Unity) with Debian's patches; the test
#          uses upstream's "add NULL checkings (#809)" (CVE-2023-50471 and
#          CVE-2023-50472), which Debian carries as a patch.
#   jinja2 Jinja 3.1.2 (pytest) with Debian's patches that come before
#          upstream's "disallow invalid characters in keys to xmlattr filter"
#          (CVE-2024-34064), whose patch the test applies itself.
#
# apt is pointed at a private deb-src list made from this machine's own
# sources (the same mirrors, Types switched to deb-src) and private lists and
# cache folders, so the system's apt configuration is left untouched.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache/real-projects"
cjson_patch=0001-add-null-checkings.patch
jinja2_patch=0002-disallow-invalid-characters-in-keys-to-xmlattr-filte.patch

have_cjson() { [ -f "$cache/cjson/source/cJSON-1.7.15/cJSON.c" ] && [ -f "$cache/cjson/source/$cjson_patch" ]; }
have_jinja2() { [ -f "$cache/jinja2/source/Jinja2-3.1.2/src/jinja2/filters.py" ] && [ -f "$cache/jinja2/source/$jinja2_patch" ]; }
if have_cjson && have_jinja2; then
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

# Downloads source package $1 at upstream version $2 into $cache/$1/download,
# preferring the Debian revision $3 the tests were written against.
download() {
  local package="$1" version="$2" revision="$3" dir="$cache/$1/download"
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && { apt-get "${apt_opts[@]}" source --download-only -qq "$package=$revision" 2>/dev/null ||
    apt-get "${apt_opts[@]}" source --download-only -qq "$package"; })
  if ! ls "$dir"/*_"$version".orig.tar.* >/dev/null 2>&1 || ! ls "$dir"/*.debian.tar.* >/dev/null 2>&1; then
    echo "real-projects.sh: the $package source package is not version $version any more; the tests need $version" >&2
    exit 1
  fi
}

# Unpacks $1's download into $cache/$1/source: the upstream tree with Debian's
# patches applied up to (not including) the patch named $2, and that patch
# beside the tree.
unpack() {
  local package="$1" stop="$2" dir="$cache/$1"
  local staging="$dir/source.new"
  rm -rf "$staging" && mkdir -p "$staging/debian-tar"
  tar -xf "$(ls "$dir"/download/*.orig.tar.*)" -C "$staging"
  tar -xf "$(ls "$dir"/download/*.debian.tar.*)" -C "$staging/debian-tar"
  local patches="$staging/debian-tar/debian/patches" tree
  tree="$(find "$staging" -mindepth 1 -maxdepth 1 -type d ! -name debian-tar)"
  cp "$patches/$stop" "$staging/$stop"
  while read -r p; do
    case "$p" in ''|'#'*) continue ;; esac
    [ "$p" = "$stop" ] && break
    patch -d "$tree" -p1 -s -N <"$patches/$p"
  done <"$patches/series"
  rm -rf "$staging/debian-tar" "$dir/source" "$dir/download"
  mv "$staging" "$dir/source"
}

if ! have_cjson; then
  download cjson 1.7.15 1.7.15-1+deb12u4
  unpack cjson "$cjson_patch"
fi
if ! have_jinja2; then
  download jinja2 3.1.2 3.1.2-1+deb12u3
  unpack jinja2 "$jinja2_patch"
fi
