#!/usr/bin/env bash
# scripts/test.sh [BUILD_DIR] - configure (once), build and run every test suite, then print one
# closing line "N passed, N failed, N skipped" from meson's test log. Exits non-zero when the build
# or any test fails. GPU suites skip (exit 77) on a machine without a GPU.
set -u
cd "$(dirname "$0")/.."
build="${1:-build}"
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" || { echo "0 passed, 1 failed"; exit 1; }
fi
# Build everything first: `meson test` alone builds only what tests declare (not, e.g., the CSV
# tables copied into the build tree's code-object root).
ninja -C "$build" || { echo "0 passed, 1 failed"; exit 1; }
log="$build/meson-logs/testlog.json"
rm -f "$log"  # never count a previous run's results
meson test -C "$build" --print-errorlogs
rc=$?
if [ -f "$log" ]; then
  python3 - "$log" <<'PY'
import json, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    entry = json.loads(line)
    result = entry.get("result", "")
    if entry.get("name", "").split(" / ")[-1] == "python":  # pytest's closing line ("N passed, N skipped in Ts")
        tail = [l for l in (entry.get("stdout") or "").splitlines() if l.strip()]
        print("pytest (suite python): " + (tail[-1] if tail else "(no output)"))
    if result in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif result == "SKIP":
        skipped += 1
    else:
        failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
else
  echo "0 passed, 1 failed"  # meson test did not run (build failure)
fi
exit $rc
