"""pytest setup of the libmla Python suite.

The package is imported from bindings/python of this checkout (set LIBMLA_TEST_INSTALLED=1 to test
an installed copy instead). The library comes from LIBMLA_PATH, else $MLA_BUILD_ROOT/src (meson
test sets both), else the build tree next to the checkout. Fixture tables: $MLA_TEST_FIXTURES,
else tests/fixtures. GPU tests are marked `gpu` and skip without torch + a CUDA device."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if not os.environ.get("LIBMLA_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))

import libmla  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs torch and a CUDA GPU (sm_90a)")


def _gpu_available():
    try:
        import torch
    except ImportError:
        return False, "torch is not installed"
    if not torch.cuda.is_available():
        return False, "no CUDA device"
    major, minor = torch.cuda.get_device_capability(0)
    if (major, minor) != (9, 0):
        return False, f"device is sm_{major}{minor}, libmla's kernels are sm_90a"
    return True, ""


def pytest_collection_modifyitems(config, items):
    ok, why = None, ""
    for item in items:
        if "gpu" in item.keywords:
            if ok is None:
                ok, why = _gpu_available()
            if not ok:
                item.add_marker(pytest.mark.skip(reason=f"GPU test: {why}"))


@pytest.fixture(scope="session")
def fixtures_dir():
    d = os.environ.get("MLA_TEST_FIXTURES") or os.path.join(ROOT, "tests", "fixtures")
    assert os.path.isdir(d), f"fixture tables not found at {d}"
    return d


@pytest.fixture
def fixture_root(fixtures_dir):
    """The project's fixture tables as the code-object root for one test."""
    libmla.set_codeobject_root(fixtures_dir)
    yield fixtures_dir
    libmla.set_codeobject_root(None)


@pytest.fixture
def build_root():
    """The build tree's own code-object root (real sm_90a tables), by the search order."""
    libmla.set_codeobject_root(None)
    root = libmla.codeobject_root()
    yield root
    libmla.set_codeobject_root(None)


@pytest.fixture(scope="session")
def lib_path():
    return libmla._lib.lib_path
