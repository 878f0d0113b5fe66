"""Finding and loading the library (each case in a fresh interpreter): LIBMLA_PATH, next to the
package, ImportError listing the paths tried, no GPU driver needed, and `pip install` of
bindings/python into a target folder."""
import glob
import os
import shutil
import subprocess
import sys

import pytest

import libmla

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG = os.path.join(ROOT, "bindings", "python")


def _run(code, env_extra, cwd, pythonpath):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LIBMLA_PATH", "MLA_LIBRARY", "MLA_BUILD_ROOT", "PYTHONPATH")}
    env.update(env_extra)
    env["PYTHONPATH"] = pythonpath
    env["LD_LIBRARY_PATH"] = ""
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                          text=True)


@pytest.fixture
def pkg_copy(tmp_path):
    """bindings/python copied outside the checkout (no build tree above it)."""
    dst = tmp_path / "py"
    shutil.copytree(PKG, dst, ignore=shutil.ignore_patterns("__pycache__", "*.so*", "build",
                                                            "*.egg-info"))
    return dst


def test_libmla_path_file_and_folder(pkg_copy, lib_path):
    code = "import libmla; print(libmla._lib.lib_path, libmla.version())"
    r = _run(code, {"LIBMLA_PATH": lib_path}, "/", str(pkg_copy))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [lib_path, "(0,", "1,", "0)"]
    r = _run(code, {"LIBMLA_PATH": os.path.dirname(lib_path)}, "/", str(pkg_copy))
    assert r.returncode == 0, r.stderr
    assert os.path.dirname(r.stdout.split()[0]) == os.path.dirname(lib_path)


def _builds_above(path):
    """build*/src/libmla.so.0 of every folder above path: the loader would find them first."""
    found, d = [], str(path)
    while True:
        found += glob.glob(os.path.join(d, "build*", "src", "libmla.so.0"))
        parent = os.path.dirname(d)
        if parent == d:
            return found
        d = parent


def test_import_error_lists_paths_tried(pkg_copy):
    stray = _builds_above(pkg_copy / "libmla")
    if stray:  # e.g. a build tree left in /tmp, above pytest's temporary folders
        pytest.skip(f"a build tree above the package copy would load: {stray[0]}")
    r = _run("import libmla", {"LIBMLA_PATH": "/nonexistent/libmla.so.0"}, "/", str(pkg_copy))
    assert r.returncode != 0
    assert "ImportError: libmla: no usable libmla.so found" in r.stderr
    assert "/nonexistent/libmla.so.0:" in r.stderr
    assert "\n  libmla.so.0: " in r.stderr  # the soname through the system loader, last


def test_library_next_to_the_package(pkg_copy, lib_path):
    shutil.copy(lib_path, pkg_copy / "libmla" / "libmla.so.0")
    r = _run("import libmla; print(libmla._lib.lib_path)", {}, "/", str(pkg_copy))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(pkg_copy / "libmla" / "libmla.so.0")


def test_import_and_queries_need_no_gpu_driver(pkg_copy, lib_path):
    code = ("import libmla\n"
            "print(libmla.shape_support(16, 1, 'bf16', 'bf16', arch='sm_90a').backend.value)\n"
            "try:\n"
            "    libmla.Context(0, arch='sm_90a')\n"
            "except libmla.MlaRuntimeUnavailable as e:\n"
            "    print(e.status, '/nonexistent/libcuda.so.1' in e.message)\n")
    r = _run(code, {"LIBMLA_PATH": lib_path, "MLA_LIBCUDA_PATH": "/nonexistent/libcuda.so.1",
                    "MLA_LIBHIP_PATH": "/nonexistent/libamdhip64.so"}, "/", str(pkg_copy))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["sm90", "5", "True"]


def test_pip_install_into_target(pkg_copy, tmp_path, lib_path):
    setuptools = pytest.importorskip("setuptools")
    major_minor = tuple(int(x) for x in setuptools.__version__.split(".")[:2])
    if major_minor < (70, 1):
        pytest.importorskip("wheel", reason="setuptools < 70.1 needs the wheel package")
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                        "--no-index", "--target", str(target), str(pkg_copy)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (target / "libmla" / "planner.py").is_file()
    r = _run("import libmla; print(libmla.__file__); print(libmla.version())",
             {"LIBMLA_PATH": lib_path}, "/", str(target))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(target / "libmla" / "__init__.py"), "(0, 1, 0)"]


def test_this_process_loaded_the_tested_build(lib_path):
    assert os.path.isfile(lib_path)
    assert libmla.lib.mla_version() == 100
