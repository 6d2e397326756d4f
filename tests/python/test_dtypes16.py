"""The 16-bit dtypes and the math mode through the Python binding: numpy float16
and ml_dtypes' bfloat16 in and out of gemm, reduce and transpose on the host
backend, CuPy float16 arrays on the GPU, and Context.math_mode.

The gemm bound per element is F32 accumulation, 4 * 2^-24 * (k + 2) * sum |a b|,
plus one rounding of the result: u |C| with u = 2^-11 (float16), 2^-8 (bfloat16),
and half the smallest subnormal near zero."""

import numpy as np
import pytest

import gpk
from helpers import cuda_context_or_skip

try:
    import ml_dtypes
except ImportError:  # bfloat16 cases skip without it
    ml_dtypes = None

UNIT = {"float16": 2.0**-11, "bfloat16": 2.0**-8}
TINY = {"float16": 2.0**-25, "bfloat16": 2.0**-134}


def dtype_of(name):
    if name == "bfloat16":
        if ml_dtypes is None:
            pytest.skip("ml_dtypes is not installed: no bfloat16 dtype for numpy")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(np.float16)


def check_gemm(name, got, a, b, c=None, alpha=1.0, beta=0.0):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    alpha32, beta32 = float(np.float32(alpha)), float(np.float32(beta))
    ref = alpha32 * (a64 @ b64)
    if c is not None and beta != 0:
        ref = ref + beta32 * c.astype(np.float64)
    k = a.shape[1]
    abs_sum = abs(alpha32) * (np.abs(a64) @ np.abs(b64))
    if c is not None and beta != 0:
        abs_sum = abs_sum + abs(beta32) * np.abs(c.astype(np.float64))
    bound = 4 * 2.0**-24 * (k + 2) * abs_sum * (1 + UNIT[name]) + UNIT[name] * np.abs(ref) + TINY[name]
    got64 = np.asarray(got).astype(np.float64)
    assert got64.shape == ref.shape
    assert np.all(np.isfinite(got64))
    err = np.abs(got64 - ref)
    worst = np.argmax(err - bound)
    assert np.all(err <= bound), f"error {err.flat[worst]:.3g} > bound {bound.flat[worst]:.3g}"


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (17, 33, 65), (65, 17, 255), (4, 5, 0)])
def test_gemm(ctx, rng, name, m, n, k):
    dt = dtype_of(name)
    a = rng.uniform(-1, 1, (m, k)).astype(dt)
    b = rng.uniform(-1, 1, (k, n)).astype(dt)
    out = ctx.gemm(a, b)
    assert out.dtype == dt
    if k == 0:
        assert np.all(out.astype(np.float64) == 0)
    else:
        check_gemm(name, out, a, b)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_gemm_transposes_beta_and_out(ctx, rng, name):
    dt = dtype_of(name)
    a = np.asfortranarray(rng.uniform(-1, 1, (40, 30)).astype(dt))  # op(A) = A.T: 30 x 40
    b = rng.uniform(-1, 1, (25, 40)).astype(dt)  # op(B) = B.T: 40 x 25
    c = rng.uniform(-1, 1, (30, 25)).astype(dt)
    c_before = c.copy()
    out = ctx.gemm(a, b, C=c, alpha=-0.5, beta=2.0, transa=True, transb=True)
    check_gemm(name, out, a.T, b.T, c=c_before, alpha=-0.5, beta=2.0)
    assert np.array_equal(c.view(np.uint16), c_before.view(np.uint16))  # C is only read
    # beta == 0: a NaN already in out must not leak.
    out2 = np.full((30, 25), np.nan, dtype=dt)
    ctx.gemm(a, b, transa=True, transb=True, out=out2)
    check_gemm(name, out2, a.T, b.T)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_gemm_rounds_once(ctx, name):
    dt = dtype_of(name)
    # 1 + 2^-p (half an ulp of the dtype at 1) + a little: rounding the F32 result
    # gives the value above 1, whereas a 16-bit accumulation would lose the little.
    half_ulp = UNIT[name]
    a = np.array([[1.0, half_ulp, half_ulp / 4]], dtype=np.float64).astype(dt)
    b = np.ones((3, 1), dtype=dt)
    got = float(ctx.gemm(a, b)[0, 0])
    exact = float(a.astype(np.float64).sum())
    assert got == float(np.array(exact).astype(dt)) and got > 1.0


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_reduce(ctx, rng, name):
    dt = dtype_of(name)
    x = rng.uniform(-8, 8, 10007).astype(dt)
    x64 = x.astype(np.float64)
    total = ctx.reduce(x)
    assert isinstance(total, float)
    bound = 4 * 2.0**-24 * (np.log2(x.size + 1) + 2) * np.abs(x64).sum()
    assert abs(total - x64.sum()) <= bound
    assert ctx.min(x) == x64.min() and ctx.max(x) == x64.max()
    x[5000] = np.nan
    assert np.isnan(ctx.max(x)) and np.isnan(ctx.sum(x))
    assert ctx.reduce(x[:0]) == 0.0


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_transpose_moves_bits(ctx, rng, name):
    dt = dtype_of(name)
    bits = rng.integers(0, 2**16, (37, 29), dtype=np.uint16)  # NaN payloads, subnormals, everything
    a = bits.view(dt)
    out = ctx.transpose(a)
    assert out.dtype == dt
    assert np.array_equal(out.view(np.uint16), bits.T)


def test_float16_constants_and_errors(ctx):
    assert gpk.F16 == 4 and gpk.BF16 == 5
    with pytest.raises(gpk.InvalidArgumentError):
        ctx.gemm(np.ones((2, 2), np.float16), np.ones((2, 2), np.float32))


def test_math_mode(ctx, rng):
    assert gpk.MATH_DEFAULT == 0 and gpk.MATH_TF32 == 1
    assert ctx.math_mode == "default"
    ctx.math_mode = "tf32"
    assert ctx.math_mode == "tf32"
    # The host backend computes exactly in either mode.
    a = rng.uniform(-1, 1, (33, 17)).astype(np.float32)
    b = rng.uniform(-1, 1, (17, 9)).astype(np.float32)
    got = ctx.gemm(a, b).astype(np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.all(np.abs(got - ref) <= 4 * 2.0**-24 * 19 * (np.abs(a).astype(np.float64) @ np.abs(b)) + 1e-38)
    with pytest.raises(gpk.InvalidArgumentError, match="mode"):
        ctx.math_mode = 2
    assert ctx.math_mode == "tf32"
    ctx.math_mode = gpk.MATH_DEFAULT
    assert ctx.math_mode == "default"


def test_math_mode_rejected_by_the_library(ctx):
    # Below the binding's own check: the C call names `mode` too.
    h = ctx.handle
    assert gpk._library.lib().gpk_set_math_mode(h, 7) == gpk.ERROR_INVALID_ARGUMENT
    assert "mode" in gpk.last_error()


# ---- the GPU: CuPy float16 arrays, the TF32 mode ---------------------------------------------


@pytest.fixture(scope="module")
def gpu():
    context = cuda_context_or_skip()
    yield context
    context.close()


def test_cupy_float16_gemm_reduce_transpose(gpu):
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(16)
    a = rng.uniform(-1, 1, (70, 50)).astype(np.float16)
    b = rng.uniform(-1, 1, (50, 90)).astype(np.float16)
    da, db = cupy.asarray(a), cupy.asarray(b)
    cupy.cuda.Device().synchronize()
    out = gpu.gemm(da, db)
    gpu.synchronize()
    assert out.dtype == np.float16
    check_gemm("float16", cupy.asnumpy(out), a, b)
    assert abs(gpu.reduce(da) - a.astype(np.float64).sum()) <= 4 * 2.0**-24 * 20 * np.abs(a.astype(np.float64)).sum()
    t = gpu.transpose(da)
    gpu.synchronize()
    assert np.array_equal(cupy.asnumpy(t).view(np.uint16), a.T.view(np.uint16))


def test_tf32_mode_on_the_gpu(gpu):
    rng = np.random.default_rng(32)
    a = rng.uniform(-1, 1, (256, 512)).astype(np.float32)
    b = rng.uniform(-1, 1, (512, 128)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    abs_sum = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    gpu.math_mode = "tf32"
    try:
        got = gpu.gemm(a, b).astype(np.float64)
    finally:
        gpu.math_mode = "default"
    # A and B rounded (or truncated) to 10 mantissa bits: (1 + 2^-10)^2 - 1 < 2^-9 + 2^-19 per product.
    assert np.all(np.abs(got - ref) <= (2.0**-9 + 2.0**-19 + 4 * 2.0**-24 * 514) * abs_sum)
    exact = gpu.gemm(a, b).astype(np.float64)
    assert np.all(np.abs(exact - ref) <= 4 * 2.0**-24 * 514 * abs_sum)
