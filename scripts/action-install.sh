#!/bin/sh
# The install step of the calibench GitHub Action (action.yml): the release archive for the
# runner, through scripts/install.sh (checksum verified); when no archive fits the runner, a
# build from source at the same version with `cargo install --locked`, saying so. A checksum
# that does not match is a failure, never a reason to build instead.
#
# Environment (set by action.yml):
#   INPUT_VERSION       the version to install, or `latest` (default)
#   ACTION_REPOSITORY   owner/name of the action's repository, whose releases are read
#   ACTION_REF          the ref the action was used at (`v0`), for the build from source
#   CALIBENCH_INSTALL_DIR  where the binary goes (default ~/.local/bin)
#   GITHUB_PATH         the file a step appends directories to PATH through
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
version=${INPUT_VERSION:-latest}
version=${version#v}
export CALIBENCH_VERSION="$version"
export CALIBENCH_INSTALL_DIR="${CALIBENCH_INSTALL_DIR:-$HOME/.local/bin}"
if [ -n "${ACTION_REPOSITORY:-}" ] && [ -z "${CALIBENCH_RELEASE_BASE:-}" ]; then
    export CALIBENCH_RELEASE_BASE="https://github.com/$ACTION_REPOSITORY/releases"
fi

status=0
"$here/install.sh" || status=$?
case "$status" in
    0) ;;
    3)
        target=$("$here/install.sh" --target 2>/dev/null || uname -sm)
        command -v cargo >/dev/null 2>&1 ||
            { echo "error: no release archive fits this runner ($target), and cargo is not installed to build one" >&2; exit 1; }
        build=$(mktemp -d "${TMPDIR:-/tmp}/calibench-build.XXXXXX")
        if [ "$version" = latest ]; then
            echo "::notice::no calibench release archive fits this runner ($target): building the action's own source (${ACTION_REF:-this checkout}) with cargo install --locked; this takes several minutes"
            cargo install --locked --root "$build" --path "$root"
        else
            [ -n "${ACTION_REPOSITORY:-}" ] ||
                { echo "error: no release archive fits this runner ($target), and the action's repository is unknown, so version $version cannot be built" >&2; exit 1; }
            echo "::notice::no calibench $version release archive fits this runner ($target): building v$version from source with cargo install --locked; this takes several minutes"
            cargo install --locked --root "$build" --git "https://github.com/$ACTION_REPOSITORY" --tag "v$version" calibench
        fi
        mkdir -p "$CALIBENCH_INSTALL_DIR"
        cp "$build/bin/calibench" "$CALIBENCH_INSTALL_DIR/.calibench.$$"
        mv -f "$CALIBENCH_INSTALL_DIR/.calibench.$$" "$CALIBENCH_INSTALL_DIR/calibench"
        rm -rf "$build"
        ;;
    *) exit "$status" ;;
esac

if [ -n "${GITHUB_PATH:-}" ]; then
    echo "$CALIBENCH_INSTALL_DIR" >>"$GITHUB_PATH"
fi
"$CALIBENCH_INSTALL_DIR/calibench" --version
