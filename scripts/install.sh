#!/bin/sh
# Installs a prebuilt calibench: the release archive for this OS and CPU, checked against its
# published SHA-256 before anything is installed.
#
#   curl -fsSL https://github.com/calibench/calibench/releases/latest/download/install.sh | sh
#   scripts/install.sh [--target]
#
# Environment:
#   CALIBENCH_INSTALL_DIR   where the binary goes (default ~/.local/bin)
#   CALIBENCH_RELEASE_BASE  the releases to read (default the project's GitHub releases; a
#                           file:// URL works, laid out as GitHub lays out releases:
#                           BASE/download/vVERSION/ARCHIVE and BASE/latest/download/ARCHIVE)
#   CALIBENCH_VERSION       the version to install, such as 0.2.0 (default: the latest release)
#
# `--target` prints the release target this machine takes (x86_64-unknown-linux-musl, …) and
# exits; scripts/package-release.sh names its archives by it.
#
# Exit status: 0 installed; 1 failed (a download, a checksum that does not match: nothing was
# installed); 2 usage; 3 no release archive fits this machine (another OS or CPU, or a version
# with no archive for it): build from source with `cargo install --locked`.
set -eu

DEFAULT_BASE="https://github.com/calibench/calibench/releases"

say() { printf '%s\n' "$*" >&2; }
die() { code=$1; shift; say "error: $*"; exit "$code"; }

# The release target of this machine: musl on Linux (one static binary for every distribution),
# the native target on macOS.
target() {
    os=$(uname -s)
    cpu=$(uname -m)
    case "$cpu" in
        x86_64 | amd64) cpu=x86_64 ;;
        aarch64 | arm64) cpu=aarch64 ;;
        *) die 3 "no release archive for CPU $cpu: build from source with \`cargo install --locked\`" ;;
    esac
    case "$os" in
        Linux) echo "$cpu-unknown-linux-musl" ;;
        Darwin) echo "$cpu-apple-darwin" ;;
        *) die 3 "no release archive for $os: build from source with \`cargo install --locked\`" ;;
    esac
}

sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    else
        die 1 "neither sha256sum nor shasum is installed: the download cannot be checked"
    fi
}

case "${1:-}" in
    --target) target; exit 0 ;;
    -h | --help)
        if [ -f "$0" ]; then sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; else say "see scripts/install.sh"; fi
        exit 0 ;;
    "") ;;
    *) die 2 "unknown argument \`$1\` (scripts/install.sh [--target])" ;;
esac

command -v curl >/dev/null 2>&1 || die 1 "curl is needed to download the release"
command -v tar >/dev/null 2>&1 || die 1 "tar is needed to unpack the release"

triple=$(target)
base=${CALIBENCH_RELEASE_BASE:-$DEFAULT_BASE}
base=${base%/}
version=${CALIBENCH_VERSION:-latest}
version=${version#v}
dir=${CALIBENCH_INSTALL_DIR:-$HOME/.local/bin}
archive="calibench-$triple.tar.gz"
if [ "$version" = latest ]; then
    url="$base/latest/download/$archive"
else
    url="$base/download/v$version/$archive"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/calibench-install.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

say "downloading $url"
status=0
curl -fsSL --retry 2 -o "$work/$archive" "$url" || status=$?
if [ "$status" -ne 0 ]; then
    # 22: the server answered 404 (or another error); 37: a file:// path that is not there.
    # Anything else (no network, a refused connection) is a failure, not a missing archive.
    case "$status" in
        22 | 37) ;;
        *) die 1 "$url could not be downloaded (curl exit $status); nothing was installed" ;;
    esac
    if [ "$version" = latest ]; then
        die 3 "no release archive for $triple at $base: build from source with \`cargo install --locked\`"
    fi
    die 3 "no release archive for $triple in version $version at $base: build from source with \`cargo install --locked\`"
fi
curl -fsSL --retry 2 -o "$work/$archive.sha256" "$url.sha256" ||
    die 1 "$url.sha256 could not be downloaded: the archive cannot be checked, so nothing was installed"

# The expected hash: the line that names the archive, else the file's only line (the layouts
# sha256sum and GitHub write: `HASH  NAME`, `HASH *NAME`, `HASH<TAB>NAME`, or the hash alone),
# without a carriage return or spaces, in lower case.
sums="$work/$archive.sha256"
line=$(tr -d '\r' <"$sums" | awk -v a="$archive" '{ n = $2; sub(/^\*/, "", n) } n == a { print; exit }')
if [ -z "$line" ]; then
    lines=$(tr -d '\r' <"$sums" | awk 'NF > 0' | wc -l | tr -d ' ')
    [ "$lines" = 1 ] ||
        die 1 "$url.sha256 holds $lines lines and none names $archive: the archive cannot be checked, so nothing was installed"
    line=$(tr -d '\r' <"$sums" | awk 'NF > 0')
fi
expected=$(printf '%s\n' "$line" | awk '{ print tolower($1) }')
actual=$(sha256 "$work/$archive" | tr 'A-F' 'a-f')
if [ "$expected" != "$actual" ]; then
    die 1 "checksum does not match: $archive has sha256 $actual (${#actual} characters), the release says $expected (${#expected} characters); nothing was installed"
fi

# Unpacked into a folder of its own; only a regular file named calibench, never a link (which
# could point outside the archive), is made executable and run.
mkdir "$work/unpacked"
tar -xzf "$work/$archive" -C "$work/unpacked" ||
    die 1 "$archive could not be unpacked; nothing was installed"
binary="$work/unpacked/calibench-$triple/calibench"
if [ -L "$binary" ] || [ ! -f "$binary" ]; then
    die 1 "$archive holds no regular file calibench-$triple/calibench (a link, a folder or nothing); nothing was installed"
fi
chmod +x "$binary"
# A binary that cannot run here (the wrong CPU, a damaged file), or that is not calibench, is
# not installed: its --version must be one line, `calibench VERSION`.
installed=$("$binary" --version 2>/dev/null) ||
    die 1 "the calibench in $archive does not run on this machine; nothing was installed"
case "$installed" in
    "calibench "*) ;;
    *) die 1 "the program in $archive is not calibench (its --version does not say \`calibench VERSION\`); nothing was installed" ;;
esac
[ "$(printf '%s\n' "$installed" | wc -l | tr -d ' ')" = 1 ] ||
    die 1 "the program in $archive is not calibench (its --version prints more than one line); nothing was installed"

mkdir -p "$dir" || die 1 "cannot create $dir"
# Copied beside its destination, then renamed over it: the old binary stays whole until the new
# one is complete.
cp "$binary" "$dir/.calibench.$$" || { rm -f "$dir/.calibench.$$"; die 1 "cannot write to $dir"; }
mv -f "$dir/.calibench.$$" "$dir/calibench" || { rm -f "$dir/.calibench.$$"; die 1 "cannot write to $dir"; }
say "installed $installed ($triple) as $dir/calibench"
case ":$PATH:" in
    *":$dir:"*) ;;
    *) say "note: $dir is not on your PATH; add it, or run $dir/calibench" ;;
esac
