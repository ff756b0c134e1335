#!/bin/sh
# One entry point for set-up and checks. Each command creates ./.venv when missing and installs what it
# needs, so it works on a fresh machine that has only python3 (3.11+) and git.
#   ./dev.sh sim [ARGS]    the main job: the deterministic simulator on the embedded default home
#   ./dev.sh demo [ARGS]   a small branching conversation appended, forked, written and shown
#   ./dev.sh test [ARGS]   ruff, mypy (strict) and the whole test suite (ARGS go to pytest)
#   ./dev.sh bench [NAME]  the benchmarks (dagmem bench): each figure beside its baseline and its goal
set -eu
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
VENV=.venv

say() {  # one line on stderr before a slow set-up step, so a fresh clone's first minute is not silent
    echo "dev.sh: $*" >&2
}

ensure() {  # ensure EXTRAS: install the project (editable) with those extras, once per pyproject change
    extras=$1
    if [ ! -x "$VENV/bin/python" ]; then
        say "creating ./$VENV with $PY (once)"
        "$PY" -m venv "$VENV"
    fi
    stamp="$VENV/.installed-$extras"
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        say "installing dagmem[$extras] into ./$VENV (pip; a minute or more on a fresh clone)"
        "$VENV/bin/python" -m pip install --disable-pip-version-check -q -e ".[$extras]"
        touch "$stamp"
    fi
    # mypy cannot follow setuptools' editable import hook, so it reads the package through a symlink.
    mkdir -p "$VENV/typecheck"
    ln -sfn "$(pwd)" "$VENV/typecheck/dagmem"
}

cmd=${1:-help}
[ $# -gt 0 ] && shift
case "$cmd" in
    sim)   ensure sim; exec "$VENV/bin/dagmem" sim "$@" ;;
    demo)  ensure sim; exec "$VENV/bin/dagmem" demo "$@" ;;
    bench) ensure sim; exec "$VENV/bin/dagmem" bench "$@" ;;
    test)
        ensure dev
        "$VENV/bin/ruff" check .
        "$VENV/bin/ruff" format --check .
        MYPYPATH="$VENV/typecheck" "$VENV/bin/mypy" -p dagmem
        # Python's default, whatever the environment says: compiled modules are kept (__pycache__/, ignored
        # by git). With PYTHONDONTWRITEBYTECODE set (container images often set it) each pytest worker
        # rewrote every test file's asserts and each of the hundreds of interpreters the tests start
        # compiled the package again.
        unset PYTHONDONTWRITEBYTECODE
        # --rootdir=tests: the checkout's root is the package itself (its __init__.py); in a folder whose
        # name is not an identifier (a clone in "ci-check/") pytest would import it as a test package.
        # One pytest worker more than the cores (pytest-xdist): the tests often wait on fsyncs and on child
        # processes, and the extra worker fills that time (on 2 cores: 8.5 min with 2 workers, 7.5 with 3).
        # `-n 0` after it runs in one process.
        # --dist worksteal: a worker that runs out takes half of the other's queue (tests/conftest.py puts
        # the slowest files first), so the run does not end waiting on one worker's last long test.
        exec "$VENV/bin/python" -m pytest --rootdir=tests -n "$(( $(nproc) + 1 ))" --dist worksteal "$@" ;;
    *) sed -n '2,8p' "$0"; exit 2 ;;
esac
