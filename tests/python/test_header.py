"""The bindings' constants against include/gpk/gpk.h itself.

The header is the ABI: every GPK_* constant it defines must exist, with its value,
in the Python package (without the GPK_ prefix) and in the Fortran module (as a
parameter of the same name), and neither binding may define one the header lacks.
The version is the project's (meson.build): gpk.__version__, the loaded library's
gpk_version(), the generated gpk_version.h and the Fortran module's parameters agree.
"""

import os
import re

import pytest

import gpk
from gpk import constants

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.environ.get("GPK_HEADER") or os.path.join(ROOT, "include", "gpk", "gpk.h")
FORTRAN = os.environ.get("GPK_FORTRAN_MODULE") or os.path.join(ROOT, "bindings", "fortran", "gpk.f90")

_C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_ENUMERATOR = re.compile(r"\b(GPK_[A-Z0-9_]+)\s*=\s*(-?\d+)\b")
_DEFINE = re.compile(r"^\s*#\s*define\s+(GPK_[A-Z0-9_]+)\s+(-?\d+)\s*$", re.M)
_PARAMETER = re.compile(r"parameter\s*::\s*(GPK_[A-Z0-9_]+)\s*=\s*(-?\d+)", re.I)
_VERSION = ("GPK_VERSION_MAJOR", "GPK_VERSION_MINOR", "GPK_VERSION_PATCH")


def _header_constants(path):
    with open(path) as f:
        text = _C_COMMENT.sub(" ", f.read())
    found = {}
    for pattern in (_ENUMERATOR, _DEFINE):
        for name, value in pattern.findall(text):
            assert name not in found, f"{name} defined twice in {path}"
            found[name] = int(value)
    return found


def _fortran_parameters():
    with open(FORTRAN) as f:
        text = "\n".join(line.split("!", 1)[0] for line in f)
    return {name.upper(): int(value) for name, value in _PARAMETER.findall(text)}


def _version_header():
    """gpk_version.h: the build's (meson sets GPK_VERSION_HEADER), or the copy a
    wheel carries inside the package."""
    for path in (
        os.environ.get("GPK_VERSION_HEADER"),
        os.path.join(os.path.dirname(gpk.__file__), "include", "gpk", "gpk_version.h"),
    ):
        if path and os.path.exists(path):
            return path
    return None


@pytest.fixture(scope="module")
def header():
    found = _header_constants(HEADER)
    # The parser must see the header's enums: a regex gone wrong would otherwise
    # compare nothing and pass.
    assert {"GPK_SUCCESS", "GPK_ERROR_INTERNAL", "GPK_BACKEND_HOST", "GPK_F64", "GPK_STAGE_COPY_OUT"} <= set(found)
    assert len(found) >= 32
    return found


def _python_constants():
    return {
        "GPK_" + name: int(getattr(constants, name))
        for name in constants.__all__
        if name != "Status" and isinstance(getattr(constants, name), int)
    }


def test_python_constants_are_the_headers(header):
    python = _python_constants()
    missing = sorted(set(header) - set(python))
    extra = sorted(set(python) - set(header))
    differ = {name: (python[name], header[name]) for name in set(header) & set(python) if python[name] != header[name]}
    assert not missing, f"gpk.h constants missing from gpk.constants: {missing}"
    assert not extra, f"gpk.constants defines what gpk.h does not: {extra}"
    assert not differ, f"gpk.constants differs from gpk.h (python, header): {differ}"
    # The package's top level exports the same values.
    for name, value in header.items():
        assert getattr(gpk, name[len("GPK_"):]) == value


def test_status_enum_is_the_headers(header):
    statuses = {name: value for name, value in header.items() if name == "GPK_SUCCESS" or name.startswith("GPK_ERROR_")}
    assert {"GPK_" + s.name: int(s) for s in gpk.Status} == statuses


def test_fortran_parameters_are_the_headers(header):
    fortran = _fortran_parameters()
    assert "GPK_SUCCESS" in fortran and len(fortran) >= len(header), "the Fortran parser found too little"
    version = {name: fortran.pop(name, None) for name in _VERSION}
    missing = sorted(set(header) - set(fortran))
    extra = sorted(set(fortran) - set(header))
    differ = {name: (fortran[name], header[name]) for name in set(header) & set(fortran) if fortran[name] != header[name]}
    assert not missing, f"gpk.h constants missing from gpk.f90: {missing}"
    assert not extra, f"gpk.f90 defines what gpk.h does not: {extra}"
    assert not differ, f"gpk.f90 differs from gpk.h (fortran, header): {differ}"
    assert tuple(version[name] for name in _VERSION) == _version_parts(), "gpk.f90's GPK_VERSION_* != the project's"


def _version_parts():
    parts = tuple(int(p) for p in gpk.__version__.split("."))
    assert len(parts) == 3, gpk.__version__
    return parts


def test_one_version_everywhere():
    parts = _version_parts()
    assert gpk.version() == parts, "the loaded libgpk's gpk_version() differs from gpk.__version__"
    path = _version_header()
    if path is None:
        pytest.skip("no gpk_version.h to read (neither the build's nor a wheel's)")
    defined = _header_constants(path)
    assert tuple(defined[name] for name in _VERSION) == parts
