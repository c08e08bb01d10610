#!/usr/bin/env bash
# Installs the extension into a throwaway virtualenv, offline, and runs its unit tests there.
#
#   bash extension/test.sh
#   SSEBENCH_AUDIT_REAL_BIN=bin/ssebench-audit bash extension/test.sh   # also runs the real binary
#
# PYTHON picks the interpreter (default python3). Nothing is downloaded: the package is built
# with the setuptools that the venv already has (--no-build-isolation --no-index), from a copy
# of the sources, so no build/ or *.egg-info is left in the tree.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
if [[ -n "${SSEBENCH_AUDIT_REAL_BIN:-}" ]]; then
    # the tests run from another directory: make a relative path absolute
    SSEBENCH_AUDIT_REAL_BIN="$(cd "$(dirname "$SSEBENCH_AUDIT_REAL_BIN")" && pwd)/$(basename "$SSEBENCH_AUDIT_REAL_BIN")"
    export SSEBENCH_AUDIT_REAL_BIN
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/sba-ext.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/src"
cp -R "$here/pyproject.toml" "$here/setup.py" "$here/README.md" "$here/src" "$tmp/src/"
find "$tmp/src" \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +

"$python" -m venv "$tmp/venv"
if ! "$tmp/venv/bin/python" -c 'import setuptools' 2>/dev/null; then
    echo "test.sh: the venv has no setuptools; retrying with --system-site-packages" >&2
    rm -rf "$tmp/venv"
    "$python" -m venv --system-site-packages "$tmp/venv"
    if ! "$tmp/venv/bin/python" -c 'import setuptools'; then
        echo "test.sh: setuptools is not importable from $python: it is needed to build the package" >&2
        exit 1
    fi
fi

PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/python" -m pip install --quiet --no-cache-dir \
    --no-build-isolation --no-index "$tmp/src"

cd "$tmp"
PYTHONDONTWRITEBYTECODE=1 "$tmp/venv/bin/python" -m unittest discover -s "$here/tests" -t "$here/tests" -v
