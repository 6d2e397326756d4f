"""Contexts, library information and variants on the host backend."""

import os
import threading

import numpy as np
import pytest

import gpk
from helpers import assert_gemm_close, gemm_reference, random_array

OPS = ["gemm", "reduce", "transpose", "pi"]
OP_CODES = [gpk.OP_GEMM, gpk.OP_REDUCE, gpk.OP_TRANSPOSE, gpk.OP_PI]


# --------------------------------------------------------- library facts --


def test_version_matches_the_package():
    version = gpk.version()
    assert version == (0, 1, 0)
    assert ".".join(map(str, version)) == gpk.__version__


def test_library_path_is_the_one_asked_for():
    path = gpk.library_path()
    explicit = os.environ.get("GPK_LIBRARY")
    if explicit:
        assert path == explicit
    assert "gpk" in os.path.basename(path)


@pytest.mark.parametrize(
    "status,text",
    [
        (gpk.SUCCESS, "success"),
        (gpk.ERROR_INVALID_ARGUMENT, "invalid argument"),
        (gpk.ERROR_INVALID_HANDLE, "invalid context handle"),
        (gpk.ERROR_NO_DEVICE, "no usable GPU"),
        (gpk.ERROR_NOT_SUPPORTED, "not supported"),
        (gpk.ERROR_VALIDATION, "validation failed"),
        (gpk.ERROR_INTERNAL, "internal error"),
        (12345, "unknown status"),
    ],
)
def test_status_strings(status, text):
    assert gpk.status_string(status) == text


# ------------------------------------------------------------- lifetime --


def test_host_context(ctx):
    assert ctx.backend == "host"
    assert ctx.device == 0
    assert not ctx.closed
    assert isinstance(ctx.handle, int) and ctx.handle != 0
    assert repr(ctx) == "<gpk.Context backend='host' device=0>"


@pytest.mark.parametrize("backend", ["host", "HOST", gpk.BACKEND_HOST])
def test_backend_spellings(backend):
    with gpk.Context(backend) as c:
        assert c.backend == "host"


def test_host_backend_ignores_the_device_index():
    with gpk.Context("host", device=3) as c:
        assert c.backend == "host"
        assert c.sum(np.arange(5)) == 10


def test_context_manager_closes():
    with gpk.Context("host") as c:
        assert not c.closed
    assert c.closed
    assert repr(c) == "<gpk.Context closed>"


def test_close_twice_is_harmless():
    c = gpk.Context("host")
    c.close()
    c.close()
    assert c.closed


def test_context_manager_closes_on_exception():
    with pytest.raises(RuntimeError):
        with gpk.Context("host") as c:
            raise RuntimeError("boom")
    assert c.closed


def test_auto_backend_falls_back_to_host_without_a_gpu():
    try:
        gpk.Context("cuda").close()
        gpu = True
    except gpk.NoDeviceError:
        gpu = False
    with gpk.Context() as c:
        assert c.backend == ("cuda" if gpu else "host")


def test_contexts_are_independent(rng):
    a, b = gpk.Context("host"), gpk.Context("host")
    try:
        assert a.handle != b.handle
        a.close()
        x = random_array(rng, 100, np.float64)
        assert b.sum(x) == pytest.approx(float(x.sum()), rel=1e-13)
    finally:
        a.close()
        b.close()


def test_one_context_per_thread(rng):
    inputs = [(random_array(rng, (40, 30), np.float64), random_array(rng, (30, 20), np.float64)) for _ in range(4)]
    results, errors = [None] * 4, []

    def work(i):
        try:
            with gpk.Context("host") as c:
                for _ in range(5):
                    results[i] = c.gemm(*inputs[i])
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for (A, B), got in zip(inputs, results):
        want, scale = gemm_reference(A, B)
        assert_gemm_close(got, want, scale, 30, np.float64)


def test_synchronize_and_default_stream(ctx):
    ctx.synchronize()
    ctx.set_stream(None)
    assert ctx.sum([1.0, 2.0]) == 3.0


def test_validation_off_is_accepted(ctx):
    ctx.set_validation(False)
    assert ctx.max([1, 5, 3]) == 5


# ------------------------------------------------------------- variants --


@pytest.mark.parametrize("op", OPS + OP_CODES)
def test_host_variants(ctx, op):
    assert ctx.variants(op) == ["host"]


@pytest.mark.parametrize("name", ["host", "auto", None])
@pytest.mark.parametrize("op", OPS + OP_CODES)
def test_set_variant_then_compute(ctx, op, name):
    ctx.set_variant(op, name)
    x = np.array([[3.0, -1.0], [2.0, 5.0]])
    np.testing.assert_array_equal(ctx.gemm(x, np.eye(2)), x)
    assert ctx.min(x) == -1.0
    np.testing.assert_array_equal(ctx.transpose(x), x.T)
    assert ctx.pi(1000, seed=4) == ctx.pi(1000, seed=4)


def test_chosen_variant_is_used(ctx, rng):
    A = random_array(rng, (17, 9), np.float32)
    B = random_array(rng, (9, 5), np.float32)
    ctx.set_variant("gemm", "host")
    ctx.set_variant("reduce", "host")
    ctx.set_variant("transpose", "host")
    ctx.set_variant("pi", "host")
    want, scale = gemm_reference(A, B)
    assert_gemm_close(ctx.gemm(A, B), want, scale, 9, np.float32)
    assert ctx.max(A) == A.max()
    np.testing.assert_array_equal(ctx.transpose(A), A.T)
    hits = ctx.pi(10_000, seed=1).hits
    ctx.set_variant("pi", "auto")
    assert ctx.pi(10_000, seed=1).hits == hits


@pytest.mark.parametrize("name", ["fastest", "naive", "cublas", "", "HOST"])
def test_unknown_variant_name(ctx, name):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.set_variant("gemm", name)
    error = info.value
    assert error.status == gpk.ERROR_INVALID_ARGUMENT
    assert error.function == "gpk_set_variant"
    assert f"name ('{name}') is not a variant" in error.message
    assert "host backend" in error.message
    assert gpk.last_error() == error.message  # the thread's last failure too


def test_failed_set_variant_keeps_the_previous_choice(ctx):
    ctx.set_variant("reduce", "host")
    with pytest.raises(gpk.InvalidArgumentError):
        ctx.set_variant("reduce", "nope")
    assert ctx.sum([1, 2, 3]) == 6


@pytest.mark.parametrize("op", ["scan", 5, -1, None, 1.0])
def test_unknown_op(ctx, op):
    with pytest.raises(gpk.InvalidArgumentError, match="op"):
        ctx.variants(op)
    with pytest.raises(gpk.InvalidArgumentError, match="op"):
        ctx.set_variant(op, "host")


def test_variant_name_must_be_a_string(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match="name must be a str"):
        ctx.set_variant("gemm", b"host")
