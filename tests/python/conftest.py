"""Shared fixtures of the Python binding tests.

The library under test is the one named by $GPK_LIBRARY (meson sets it to the
build's libgpk) and the package is the build's copy of bindings/python/gpk; or,
run from outside the source tree, both are a pip-installed wheel's. Reference
computations live in helpers.py beside this file.
"""

import zlib

import numpy as np
import pytest

import gpk


@pytest.fixture
def ctx():
    """A host-backend context, closed after the test."""
    context = gpk.Context("host")
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def rng(request):
    """A numpy generator seeded from the test's name, so every test draws the
    same numbers on every run."""
    seed = zlib.crc32(request.node.nodeid.encode())
    return np.random.default_rng(seed)


@pytest.fixture(params=["compiled", "ctypes"])
def either_calls(request, ctx):
    """The host context `ctx` calling libgpk through gpk._calls, then (second
    parameter) through ctypes alone: the binding's checks are the same on both, and
    a test of them runs on both. Skips the compiled one where it was not built."""
    from gpk import _library

    if request.param == "compiled":
        if not ctx._calls.compiled:
            pytest.skip("gpk._calls was not built (no Python headers)")
    else:
        lib = _library.lib()
        ctx._calls = _library.Calls(tuple(getattr(lib, name) for name in _library._OPERATIONS), False)
    return ctx


class RecordingCalls:
    """Stands for a context's per-operation calls: records each call's name and
    arguments, then makes it."""

    def __init__(self, calls):
        self.made = []
        self._calls = calls
        self.compiled = calls.compiled

    def __getattr__(self, operation):
        function = getattr(self._calls, operation)

        def call(*args):
            self.made.append((operation, args))
            return function(*args)

        return call


@pytest.fixture
def recorded(either_calls):
    """either_calls with its calls recorded (ctx._calls.made)."""
    either_calls._calls = RecordingCalls(either_calls._calls)
    return either_calls
