"""Value checks for the test scripts that meson runs directly (no pytest): check() prints one
"ok" / "FAIL" line per compared value and counts the failures; finish() prints the count and
exits non-zero when any failed."""
import sys

failures = 0


def check(what, got, want):
    global failures
    ok = got == want
    failures += 0 if ok else 1
    print(("ok   " if ok else "FAIL ") + what + ": got %r, want %r" % (got, want))


def finish():
    print("%d failed" % failures)
    sys.exit(1 if failures else 0)
