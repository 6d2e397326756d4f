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
