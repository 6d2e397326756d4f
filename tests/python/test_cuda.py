"""The CUDA backend with numpy (host) arrays: every variant of every op against
numpy and the host backend. Skipped where no usable GPU exists."""

import math

import numpy as np
import pytest

import gpk
from helpers import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    assert_gemm_close,
    cuda_context_or_skip,
    gemm_reference,
    random_array,
)

OPS = ["gemm", "reduce", "transpose", "pi"]
VENDOR = {"gemm": "cublas", "reduce": "cub", "transpose": "cublas_geam", "pi": "curand_thrust"}


@pytest.fixture(scope="module")
def gpu():
    context = cuda_context_or_skip()
    yield context
    context.close()


@pytest.fixture
def cuda(gpu):
    """The module's CUDA context, set back to its defaults after each test."""
    yield gpu
    for op in OPS:
        gpu.set_variant(op, None)
    gpu.set_validation(False)
    gpu.set_stream(None)


def supports(context, op, dtype):
    """Whether the variant set on context takes dtype: an empty call answers
    NotSupportedError for a dtype the variant lacks; a gemm rung may also refuse a
    dtype it lists for the context's state (wgmma_ws takes F32 in the TF32 math mode
    only), which only a call with work says."""
    try:
        if op == "gemm":
            context.gemm(np.empty((0, 0), dtype), np.empty((0, 0), dtype))
            context.gemm(np.ones((1, 1), dtype), np.ones((1, 1), dtype))
        elif op == "transpose":
            context.transpose(np.empty((0, 0), dtype))
    except gpk.NotSupportedError:
        return False
    return True


def each_variant(context, op, dtype=None):
    """Chooses every variant of op in turn, yielding its name; with dtype, only
    the variants that support it (at least the vendor's and two of ours)."""
    ran = 0
    for name in context.variants(op):
        context.set_variant(op, name)
        if dtype is not None and not supports(context, op, dtype):
            continue
        ran += 1
        yield name
    context.set_variant(op, None)
    assert ran >= 3, f"only {ran} {op} variants support {dtype}"


def test_backend(cuda):
    assert cuda.backend == "cuda"
    assert repr(cuda) == "<gpk.Context backend='cuda' device=0>"
    cuda.synchronize()


def test_auto_takes_the_gpu(gpu):
    with gpk.Context() as c:
        assert c.backend == "cuda"


@pytest.mark.parametrize("op", OPS)
def test_variant_lists(cuda, op):
    names = cuda.variants(op)
    assert names[0] == VENDOR[op]  # index 0 is the vendor library
    assert len(names) >= 2
    assert len(set(names)) == len(names)
    assert "host" not in names and "auto" not in names


def test_host_variant_name_is_unknown_on_cuda(cuda):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        cuda.set_variant("gemm", "host")
    assert "CUDA backend" in info.value.message


# ------------------------------------------------------------------ gemm --


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_gemm_every_variant(cuda, rng, dtype, order):
    cases = [(1, 1, 1, False, False), (17, 13, 19, False, True), (100, 97, 101, True, False),
             (128, 128, 128, True, True), (65, 300, 33, False, False)]
    for name in each_variant(cuda, "gemm", dtype):
        for m, n, k, ta, tb in cases:
            A = random_array(rng, (k, m) if ta else (m, k), dtype, order)
            B = random_array(rng, (n, k) if tb else (k, n), dtype, order)
            C = random_array(rng, (m, n), dtype, order)
            got = cuda.gemm(A, B, C, alpha=1.5, beta=-0.5, transa=ta, transb=tb)
            want, scale = gemm_reference(A, B, C, alpha=1.5, beta=-0.5, transa=ta, transb=tb)
            try:
                assert_gemm_close(got, want, scale, k, dtype)
            except AssertionError as e:
                raise AssertionError(f"variant {name!r}, m={m} n={n} k={k} transa={ta} transb={tb}: {e}") from None


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gemm_beta_zero_nan_does_not_leak(cuda, rng, dtype):
    A = random_array(rng, (33, 17), dtype)
    B = random_array(rng, (17, 29), dtype)
    want, scale = gemm_reference(A, B)
    for name in each_variant(cuda, "gemm", dtype):
        out = np.full((33, 29), np.nan, dtype=dtype)
        cuda.gemm(A, B, out=out)
        assert not np.isnan(out).any(), f"variant {name!r} let NaN leak from C"
        assert_gemm_close(out, want, scale, 17, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gemm_k_zero(cuda, rng, dtype):
    C = random_array(rng, (7, 5), dtype)
    for name in each_variant(cuda, "gemm", dtype):
        got = cuda.gemm(np.empty((7, 0), dtype), np.empty((0, 5), dtype), C, alpha=2.0, beta=3.0)
        np.testing.assert_array_equal(got, (dtype(3.0) * C).astype(dtype), err_msg=f"variant {name!r}")


def test_gemm_integers_not_supported(cuda):
    with pytest.raises(gpk.NotSupportedError):
        cuda.gemm(np.ones((2, 2), np.int32), np.ones((2, 2), np.int32))


def test_gemm_with_validation(cuda, rng):
    cuda.set_validation(True)
    for dtype in FLOAT_DTYPES:
        A = random_array(rng, (70, 50), dtype)
        B = random_array(rng, (50, 90), dtype)
        for name in each_variant(cuda, "gemm", dtype):
            got = cuda.gemm(A, B)  # raises gpk.ValidationError on a mismatch
            want, scale = gemm_reference(A, B)
            assert_gemm_close(got, want, scale, 50, dtype)


# ---------------------------------------------------------------- reduce --


def reduce_input(rng, dtype, op, n):
    """Sums get small integers (exact in float32 below 2^24 whatever the order
    of the additions, so an element lost or counted twice shows); min and max
    get the full range of the dtype."""
    if op == "sum":
        return rng.integers(-3, 4, size=n).astype(dtype)
    return random_array(rng, n, dtype)


def reduce_expected(x, op):
    if op != "sum":
        return {"min": np.min, "max": np.max}[op](x).item()
    if x.dtype.kind == "f":
        return float(np.sum(x, dtype=np.float64))
    return int(np.sum(x.astype(np.int64)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", ["sum", "min", "max"])
def test_reduce_every_variant(cuda, rng, dtype, op):
    sizes = [1, 2, 31, 1000, 4097, 65_536, (1 << 20) + 3]
    inputs = [reduce_input(rng, dtype, op, n) for n in sizes]
    for name in each_variant(cuda, "reduce"):
        for x in inputs:
            got = cuda.reduce(x, op)
            assert got == reduce_expected(x, op), f"variant {name!r}, n={x.size}"
            assert isinstance(got, float if x.dtype.kind == "f" else int)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_reduce_sum_of_fractions(cuda, rng, dtype):
    """Rounding stays within a tree's bound: a few eps per level times sum |x|."""
    for name in each_variant(cuda, "reduce"):
        for n in (1000, 65_536, (1 << 20) + 3):
            x = random_array(rng, n, dtype, low=0.0, high=1.0)
            want = float(np.sum(x, dtype=np.float64))
            tol = 8 * np.finfo(dtype).eps * (math.log2(n) + 1) * want
            got = cuda.sum(x)
            assert abs(got - want) <= tol, f"variant {name!r}, n={n}: {got} vs {want}"


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_reduce_deterministic(cuda, rng, dtype):
    x = random_array(rng, 3_000_001, dtype)
    for name in each_variant(cuda, "reduce"):
        first = cuda.sum(x)
        assert all(cuda.sum(x) == first for _ in range(3)), f"variant {name!r}"


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", ["min", "max"])
def test_reduce_nan_propagates(cuda, rng, dtype, op):
    x = random_array(rng, 1 << 20, dtype)
    for name in each_variant(cuda, "reduce"):
        for where in (0, 777, (1 << 20) - 1):
            y = x.copy()
            y[where] = np.nan
            assert math.isnan(cuda.reduce(y, op)), f"variant {name!r}, NaN at {where}"


def test_reduce_int32_accumulates_in_64_bits(cuda):
    x = np.full(1 << 20, 2**31 - 1, dtype=np.int32)
    for name in each_variant(cuda, "reduce"):
        assert cuda.sum(x) == (1 << 20) * (2**31 - 1), f"variant {name!r}"


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_reduce_empty(cuda, dtype):
    assert cuda.sum(np.empty(0, dtype)) == 0
    with pytest.raises(gpk.InvalidArgumentError, match=r"n \(0\)"):
        cuda.min(np.empty(0, dtype))


def test_reduce_with_validation(cuda, rng):
    cuda.set_validation(True)
    for dtype in ALL_DTYPES:
        x = reduce_input(rng, dtype, "sum", 100_003)
        for name in each_variant(cuda, "reduce"):
            for op in ("sum", "min", "max"):
                assert cuda.reduce(x, op) == reduce_expected(x, op), f"variant {name!r}, {op}"


# ------------------------------------------------------------- transpose --


# The transpose rungs with vector accesses: they refuse a call (or, with host arrays,
# a call any of whose staged pieces) their vectors cannot take, by pointers or leading
# dimensions, with NotSupportedError naming themselves.
VECTOR_TRANSPOSES = {"tile64_vec2", "tile64_vec16"}


def transpose_into(cuda, name, A, out, whole):
    """cuda.transpose(A, out=out); True when the variant took the call. A vector
    rung may refuse it as documented: then `whole` (out's memory, padding
    included) must be as it was."""
    before = whole.copy()
    try:
        cuda.transpose(A, out=out)
    except gpk.NotSupportedError as e:
        if name not in VECTOR_TRANSPOSES:
            raise
        message = str(e)
        assert f"'{name}'" in message and "cannot take this call" in message, message
        assert whole.tobytes() == before.tobytes(), f"variant {name!r} refused shape {A.shape} but wrote out"
        return False
    return True


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_transpose_every_variant(cuda, rng, dtype, order):
    shapes = [(1, 1), (1, 1000), (1000, 1), (33, 65), (64, 64), (257, 129), (1024, 768)]
    inputs = [random_array(rng, s, dtype, order) for s in shapes]
    for name in each_variant(cuda, "transpose"):
        took = 0
        for A in inputs:
            if name == "cublas_geam" and np.dtype(dtype).kind == "i":
                with pytest.raises(gpk.NotSupportedError, match="does not support dtype"):
                    cuda.transpose(A)
                continue
            out = np.full(A.shape[::-1], 7, dtype=A.dtype, order=order)
            if transpose_into(cuda, name, A, out, out):
                took += 1
                np.testing.assert_array_equal(out, A.T, err_msg=f"variant {name!r}, shape {A.shape}")
        if not (name == "cublas_geam" and np.dtype(dtype).kind == "i"):
            # 64 x 64 is aligned for every vector, in one piece or many.
            assert took > 0, f"variant {name!r} took none of the shapes"


def test_transpose_padded_out(cuda, rng):
    A = random_array(rng, (100, 60), np.float32)
    for name in each_variant(cuda, "transpose"):
        big = np.full((70, 120), -1.0, dtype=np.float32)
        out = big[3:63, 5:105]
        if transpose_into(cuda, name, A, out, big):
            np.testing.assert_array_equal(out, A.T, err_msg=f"variant {name!r}")
        mask = np.ones(big.shape, dtype=bool)
        mask[3:63, 5:105] = False
        assert np.all(big[mask] == -1.0), f"variant {name!r} wrote outside out"


def test_transpose_with_validation(cuda, rng):
    cuda.set_validation(True)
    A = random_array(rng, (300, 200), np.float64)
    for name in each_variant(cuda, "transpose"):
        np.testing.assert_array_equal(cuda.transpose(A), A.T, err_msg=f"variant {name!r}")


# -------------------------------------------------------------------- pi --


# Variants whose points do not come from the shared Philox sequence: cuRAND's host
# API, the lecture rung's per-thread XORWOW states (see its source), and the
# quasi-random Sobol points of "sobol".
OWN_FAMILY = {VENDOR["pi"], "lecture", "sobol"}


@pytest.mark.parametrize("samples,seed", [(1, 0), (2, 1), (1001, 7), ((1 << 20) + 1, 42), (10_000_019, 5)])
def test_pi_hits_match_the_host_backend(cuda, samples, seed):
    with gpk.Context("host") as host:
        want = host.pi(samples, seed=seed)
    philox = 0
    for name in each_variant(cuda, "pi"):
        got = cuda.pi(samples, seed=seed)
        assert got.samples == samples
        if name in OWN_FAMILY:
            assert got == cuda.pi(samples, seed=seed), f"variant {name!r} is not reproducible"
            continue
        assert got == want, f"variant {name!r}"
        philox += 1
    assert philox >= 1


def test_pi_one_more_sample_adds_at_most_one_hit(cuda):
    """Sample i is fixed by (i, seed) in every family but cuRAND's host API."""
    for name in each_variant(cuda, "pi"):
        if name == VENDOR["pi"]:
            continue
        for n in (1, 2, 14_335, 14_336, 14_337, 1 << 20):
            a, b = cuda.pi(n, seed=13).hits, cuda.pi(n + 1, seed=13).hits
            assert b - a in (0, 1), f"variant {name!r}, n={n}"


def test_pi_every_variant_is_close_to_pi(cuda):
    for name in each_variant(cuda, "pi"):
        r = cuda.pi(10_000_000, seed=17)
        assert abs(r.estimate - math.pi) < 6 * r.std_error, f"variant {name!r}"


def test_pi_vendor_variant_is_close_to_pi(cuda):
    cuda.set_variant("pi", VENDOR["pi"])
    r = cuda.pi(10_000_000, seed=3)
    assert abs(r.estimate - math.pi) < 6 * r.std_error
    p = r.hits / r.samples
    assert r.std_error == pytest.approx(4 * math.sqrt(p * (1 - p) / r.samples), rel=1e-12)


def test_pi_with_validation(cuda):
    cuda.set_validation(True)
    for name in each_variant(cuda, "pi"):
        r = cuda.pi(1 << 22, seed=8)
        assert abs(r.estimate - math.pi) < 6 * r.std_error, f"variant {name!r}"
