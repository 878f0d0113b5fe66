#!/usr/bin/env bash
# run_pytest.sh - runs the libmla Python suite (tests/python) for `meson test --suite python`.
# Uses $MLA_TEST_PYTHON or python3 when it has numpy, ml_dtypes and pytest; else a venv in
# $MLA_BUILD_ROOT/pyvenv, created once (`python3 -m venv`, Debian: python3-venv) with those
# packages from PyPI. Exits non-zero (never 77/skip) when pytest cannot run; GPU tests (marked
# `gpu`) skip inside pytest without torch and an sm_90a device. Pass pytest arguments through.
set -u
here=$(cd "$(dirname "$0")" && pwd)
need='import numpy, ml_dtypes, pytest'
py=${MLA_TEST_PYTHON:-python3}
if ! "$py" -c "$need" 2>/dev/null; then
  venv="${MLA_BUILD_ROOT:?MLA_BUILD_ROOT must be set}/pyvenv"
  if ! "$venv/bin/python" -c "$need" 2>/dev/null; then
    echo "run_pytest: $py lacks numpy/ml_dtypes/pytest; creating $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" || { echo "run_pytest: 'python3 -m venv' failed (apt-get install python3-venv)"; exit 1; }
    "$venv/bin/python" -m pip install -q --disable-pip-version-check \
        numpy ml_dtypes pytest 'setuptools>=70.1' ||
      { echo "run_pytest: pip install numpy ml_dtypes pytest failed"; exit 1; }
  fi
  py="$venv/bin/python"
fi
export PYTHONDONTWRITEBYTECODE=1
exec "$py" -m pytest "$here" -q -rs -p no:cacheprovider "$@"
