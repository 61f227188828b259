#!/bin/sh
# Packs a built calibench as a release archive, exactly as the release workflow does:
#
#   scripts/package-release.sh OUT_DIR BINARY [TARGET]
#
# writes OUT_DIR/calibench-TARGET.tar.gz, which holds calibench-TARGET/ with the binary, the
# README and the licences (calibench's, and the DejaVu font's, which the binary embeds), and
# OUT_DIR/calibench-TARGET.tar.gz.sha256 in sha256sum's format. TARGET defaults to the target
# scripts/install.sh picks on this machine, so an archive packed here is what it installs here.
# The names carry no version, so that GitHub's releases/latest/download/ URLs find the newest
# (cargo-binstall and dist read the same names); the version is the binary's own `--version`.
# Both files appear whole or not at all.
set -eu

say() { printf '%s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: scripts/package-release.sh OUT_DIR BINARY [TARGET]"
out=$1
binary=$2
root=$(cd "$(dirname "$0")/.." && pwd)
target=${3:-$("$root/scripts/install.sh" --target)}
[ -f "$binary" ] || die "$binary: no such file"
[ -x "$binary" ] || die "$binary is not executable"
version=$("$binary" --version) || die "$binary --version failed: is it a calibench binary for this machine?"
case "$version" in
    "calibench "*) ;;
    *) die "$binary --version printed \`$version\`, not \`calibench VERSION\`" ;;
esac

name="calibench-$target"
mkdir -p "$out"
work=$(mktemp -d "$out/.package.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

mkdir "$work/$name"
cp "$binary" "$work/$name/calibench"
chmod 755 "$work/$name/calibench"
cp "$root/README.md" "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$work/$name/"
cp "$root/assets/fonts/LICENSE-DejaVu.txt" "$work/$name/"
(cd "$work" && tar -czf "$name.tar.gz" "$name")
if command -v sha256sum >/dev/null 2>&1; then
    (cd "$work" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
else
    (cd "$work" && shasum -a 256 "$name.tar.gz" >"$name.tar.gz.sha256")
fi
mv -f "$work/$name.tar.gz" "$out/$name.tar.gz"
mv -f "$work/$name.tar.gz.sha256" "$out/$name.tar.gz.sha256"
say "packed $version for $target: $out/$name.tar.gz"
