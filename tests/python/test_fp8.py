"""FP8 and mixed precision through the Python binding: Context.gemm_ex and
Context.gemm_blockscaled, and gemm and matmul handed ml_dtypes' float8 arrays, on
the host backend (both call paths: the compiled module and ctypes), and on the
GPU with CuPy arrays holding FP8 bits (skipped without a GPU or CuPy).

Every result is held to the contract's bound against a float64 reference of the
inputs as they are (ml_dtypes decodes FP8 exactly):
  |C - exact| <= 2^-9 sum_k |alpha a b| + 2^-24 |beta c|, plus one rounding of C
to its dtype (u |C|, u = 2^-24 for float32, 2^-11 float16, 2^-8 bfloat16, and half
the dtype's smallest subnormal near zero). alpha and beta are applied in F32.
"""

import numpy as np
import pytest

import gpk
from helpers import cuda_context_or_skip

ml_dtypes = pytest.importorskip("ml_dtypes", reason="FP8 arrays need ml_dtypes")

E4M3 = np.dtype(ml_dtypes.float8_e4m3fn)
E5M2 = np.dtype(ml_dtypes.float8_e5m2)
BF16 = np.dtype(ml_dtypes.bfloat16)
FP8 = {"e4m3": E4M3, "e5m2": E5M2}
OUT = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16), "bfloat16": BF16}
UNIT = {np.dtype(np.float32): 2.0**-24, np.dtype(np.float16): 2.0**-11, BF16: 2.0**-8}
TINY = {np.dtype(np.float32): 2.0**-150, np.dtype(np.float16): 2.0**-25, BF16: 2.0**-134}


def f64(x):
    return np.asarray(x).astype(np.float64)


def reference(a, b, c=None, alpha=1.0, beta=0.0):
    """The exact result in float64 and the contract's accumulation bound."""
    alpha32, beta32 = float(np.float32(alpha)), float(np.float32(beta))
    a64, b64 = f64(a), f64(b)
    exact = alpha32 * (a64 @ b64)
    bound = 2.0**-9 * abs(alpha32) * (np.abs(a64) @ np.abs(b64))
    if c is not None and beta != 0:
        exact = exact + beta32 * f64(c)
        bound = bound + 2.0**-24 * abs(beta32) * np.abs(f64(c))
    return exact, bound


def assert_within(got, exact, bound):
    """got (any float dtype) within the accumulation bound plus one rounding to its dtype."""
    got = np.asarray(got)
    unit, tiny = UNIT[got.dtype], TINY[got.dtype]
    got64 = f64(got)
    assert got64.shape == exact.shape
    assert np.all(np.isfinite(got64)), "a non-finite element where every input is finite"
    limit = bound * (1 + unit) + unit * np.abs(exact) + tiny
    err = np.abs(got64 - exact)
    worst = np.unravel_index(np.argmax(err - limit), err.shape) if err.size else None
    assert np.all(err <= limit), f"element {worst}: |error| {err[worst]:.3g} > bound {limit[worst]:.3g}"


def fp8_array(rng, shape, dtype, low=-2.0, high=2.0, order="C"):
    return np.asarray(rng.uniform(low, high, shape).astype(dtype), order=order)


def test_constants_are_exported():
    assert (gpk.F8E4M3, gpk.F8E5M2) == (6, 7)
    assert gpk.constants.F8E4M3 == 6 and "F8E5M2" in gpk.__all__


# ------------------------------------------------------------- gemm_ex, host --


@pytest.mark.parametrize("a_name", ["e4m3", "e5m2"])
@pytest.mark.parametrize("b_name", ["e4m3", "e5m2"])
@pytest.mark.parametrize("out_name", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (17, 17, 17), (33, 20, 300)])
def test_gemm_ex_fp8_within_the_bound(either_calls, rng, a_name, b_name, out_name, m, n, k):
    a = fp8_array(rng, (m, k), FP8[a_name])
    b = fp8_array(rng, (k, n), FP8[b_name])
    out = either_calls.gemm_ex(a, b, out_dtype=OUT[out_name])
    assert out.dtype == OUT[out_name] and out.shape == (m, n)
    assert_within(out, *reference(a, b))


def test_the_default_result_is_float32(ctx, rng):
    a = fp8_array(rng, (6, 40), E4M3)
    b = fp8_array(rng, (40, 5), E4M3)
    for out in (ctx.gemm_ex(a, b), ctx.gemm(a, b), ctx.matmul(a, b)):
        assert out.dtype == np.float32
        assert_within(out, *reference(a, b))


def test_dtype_arguments_take_constants_names_and_numpy_dtypes(ctx, rng):
    a = fp8_array(rng, (4, 9), E5M2)
    b = fp8_array(rng, (9, 3), E4M3)
    want = ctx.gemm_ex(a, b, out_dtype=BF16)
    for spelled in (gpk.BF16, "bf16", "bfloat16", ml_dtypes.bfloat16):
        got = ctx.gemm_ex(a, b, out_dtype=spelled, a_dtype="float8_e5m2", b_dtype=gpk.F8E4M3)
        assert got.dtype == BF16 and np.array_equal(got.view(np.uint16), want.view(np.uint16))


def test_uint8_bits_with_a_dtype_give_the_float8_result(either_calls, rng):
    # The route for libraries without an FP8 dtype (CuPy): the same bytes, told their dtype.
    a = fp8_array(rng, (12, 70), E4M3)
    b = fp8_array(rng, (70, 9), E5M2)
    want = either_calls.gemm_ex(a, b, out_dtype=np.float32)
    got = either_calls.gemm_ex(a.view(np.uint8), b.view(np.int8), a_dtype=gpk.F8E4M3, b_dtype="e5m2")
    assert np.array_equal(got, want)
    # A bfloat16 result into 16-bit integers, told out_dtype.
    out = np.zeros((12, 9), np.uint16)
    either_calls.gemm_ex(a, b, out=out, out_dtype=gpk.BF16)
    assert np.array_equal(out, either_calls.gemm_ex(a, b, out_dtype=BF16).view(np.uint16))


@pytest.mark.parametrize("transa", [False, True])
@pytest.mark.parametrize("transb", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_every_layout_and_transpose(either_calls, rng, transa, transb, order):
    m, n, k = 19, 23, 150
    a = fp8_array(rng, (k, m) if transa else (m, k), E4M3, order=order)
    b = fp8_array(rng, (n, k) if transb else (k, n), E5M2, order=order)
    out = np.empty((m, n), np.float32, order=order)  # out's order is the call's layout
    either_calls.gemm_ex(a, b, transa=transa, transb=transb, out=out)
    assert_within(out, *reference(a.T if transa else a, b.T if transb else b))


def test_leading_dimensions_above_the_minimum(ctx, rng):
    # Slices of wider arrays: lda, ldb and ldc exceed the smallest they could be.
    wide_a = fp8_array(rng, (21, 61), E4M3)
    wide_b = fp8_array(rng, (50, 31), E4M3)
    a, b = wide_a[:, 3:53], wide_b[:, 5:18]
    wide_out = np.full((21, 40), 9.0, np.float32)
    ctx.gemm_ex(a, b, out=wide_out[:, 7:20])
    assert_within(wide_out[:, 7:20], *reference(a, b))
    assert np.all(wide_out[:, :7] == 9.0) and np.all(wide_out[:, 20:] == 9.0), "written outside out"


def test_alpha_beta_and_c(either_calls, rng):
    a = fp8_array(rng, (8, 260), E4M3)
    b = fp8_array(rng, (260, 11), E4M3)
    c = rng.uniform(-4, 4, (8, 11)).astype(np.float32)
    c_before = c.copy()
    out = either_calls.gemm_ex(a, b, C=c, alpha=0.37, beta=-1.5)
    assert_within(out, *reference(a, b, c, alpha=0.37, beta=-1.5))
    assert np.array_equal(c, c_before), "C is only read unless it is out"
    either_calls.gemm_ex(a, b, C=c, alpha=2.0, beta=1.0, out=c)  # in place, as BLAS does
    assert_within(c, *reference(a, b, c_before, alpha=2.0, beta=1.0))
    # A bfloat16 C with a bfloat16 result.
    c16 = c_before.astype(BF16)
    out16 = either_calls.gemm_ex(a, b, C=c16, beta=0.5)
    assert out16.dtype == BF16
    assert_within(out16, *reference(a, b, c16, beta=0.5))


def test_beta_zero_does_not_read_c_or_out(ctx, rng):
    a = fp8_array(rng, (5, 33), E5M2)
    b = fp8_array(rng, (33, 4), E4M3)
    c = np.full((5, 4), np.nan, np.float32)
    out = np.full((5, 4), np.nan, np.float32)
    ctx.gemm_ex(a, b, C=c, beta=0.0, out=out)
    assert_within(out, *reference(a, b))


def test_k_zero(ctx):
    a = np.zeros((3, 0), E4M3)
    b = np.zeros((0, 4), E4M3)
    assert np.array_equal(ctx.gemm_ex(a, b), np.zeros((3, 4), np.float32))
    c = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(ctx.gemm_ex(a, b, C=c, beta=2.0), 2 * c)


def test_extreme_values_and_subnormals(ctx, rng):
    # E4M3's largest finite (448) and smallest subnormal (2^-9), E5M2's (57344 and
    # 2^-16): their products are exact in F32, and so must the sums of a few be.
    a = np.array([[448, -448, 2.0**-9, 0.015625], [2.0**-9, 2.0**-9, 2.0**-8, -448]], dtype=E4M3)
    b = np.array([[448, 1], [1, -448], [2.0**-9, 57344], [-2.0**-16, 2.0**-16]], dtype=E5M2)
    for out_dtype in (np.float32, BF16):
        got = ctx.gemm_ex(a, b, out_dtype=out_dtype)
        assert_within(got, *reference(a, b))
    # Random subnormal-only operands: every product is below F32's normal range of
    # E4M3 x E4M3 (2^-18 and less), still exact in F32.
    tiny_a = (rng.integers(1, 8, (6, 40)) * 2.0**-9 * rng.choice([-1, 1], (6, 40))).astype(E4M3)
    tiny_b = (rng.integers(1, 8, (40, 5)) * 2.0**-9).astype(E4M3)
    assert_within(ctx.gemm_ex(tiny_a, tiny_b), *reference(tiny_a, tiny_b))


def test_nan_inputs_propagate(ctx, rng):
    a = fp8_array(rng, (4, 20), E4M3)
    b = fp8_array(rng, (20, 6), E4M3)
    a[2, 7] = np.nan  # E4M3's NaN, S.1111.111
    assert a.view(np.uint8)[2, 7] & 0x7F == 0x7F
    out = ctx.gemm_ex(a, b)
    assert np.all(np.isnan(out[2])), "a NaN in row 2 of A must reach all of row 2 of C"
    rows = [0, 1, 3]
    assert_within(out[rows], *reference(a[rows], b))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_16bit_inputs_with_a_float32_result(either_calls, rng, name):
    dt = OUT[name]
    a = rng.uniform(-1, 1, (13, 200)).astype(dt)
    b = rng.uniform(-1, 1, (200, 7)).astype(dt)
    for out in (either_calls.gemm_ex(a, b), either_calls.gemm(a, b, out_dtype=np.float32),
                either_calls.matmul(a, b, out_dtype="float32")):
        assert out.dtype == np.float32
        # Products of 16-bit values are exact in F32 and summed in F32: a bound far
        # below FP8's holds (4 roundings per term of the sum).
        exact, _ = reference(a, b)
        bound = 4 * 2.0**-24 * (200 + 2) * (np.abs(f64(a)) @ np.abs(f64(b)))
        assert np.all(np.abs(f64(out) - exact) <= bound)
    # The same dtype throughout is gemm itself.
    same = either_calls.gemm_ex(a, b, out_dtype=dt)
    assert np.array_equal(same.view(np.uint16), either_calls.gemm(a, b).view(np.uint16))


def test_matmul_stacks_of_fp8(either_calls, rng):
    a = fp8_array(rng, (3, 6, 40), E4M3)
    b = fp8_array(rng, (40, 5), E5M2)  # shared by every product
    out = either_calls.matmul(a, b, out_dtype=BF16)
    assert out.shape == (3, 6, 5) and out.dtype == BF16
    for i in range(3):
        assert_within(out[i], *reference(a[i], b))
    b3 = fp8_array(rng, (3, 40, 5), E4M3)
    given = np.full((3, 6, 5), np.nan, np.float32)
    assert either_calls.matmul(a, b3, out=given) is given
    for i in range(3):
        assert_within(given[i], *reference(a[i], b3[i]))


# ---------------------------------------------------- gemm_blockscaled, host --


def blockscaled_reference(a, b, sa, sb, alpha=1.0):
    """C = alpha sum_q sa[i, q] sb[j // 128, q] (A B over block q), and its bound."""
    a64, b64 = f64(a), f64(b)
    m, k = a64.shape
    n = b64.shape[1]
    alpha32 = float(np.float32(alpha))
    exact = np.zeros((m, n))
    bound = np.zeros((m, n))
    cols = np.arange(n) // 128
    for q in range(-(-k // 128)):
        block = slice(128 * q, 128 * q + 128)
        scale = f64(sa)[:, q][:, None] * f64(sb)[cols, q][None, :]
        exact += scale * (a64[:, block] @ b64[block])
        bound += np.abs(scale) * (np.abs(a64[:, block]) @ np.abs(b64[block]))
    return alpha32 * exact, 2.0**-9 * abs(alpha32) * bound


@pytest.mark.parametrize("transa,transb", [(False, False), (True, False), (False, True), (True, True)])
def test_blockscaled_within_the_bound(either_calls, rng, transa, transb):
    m, n, k = 9, 300, 333  # three blocks along k (the last partial), three column blocks
    a = fp8_array(rng, (m, k), E4M3)
    b = fp8_array(rng, (k, n), E5M2)
    sa = np.asfortranarray(rng.uniform(0.1, 4, (m, 3)).astype(np.float32))
    sb = np.asfortranarray(rng.uniform(0.1, 4, (3, 3)).astype(np.float32))
    A = np.ascontiguousarray(a.T) if transa else a
    B = np.ascontiguousarray(b.T) if transb else b
    out = either_calls.gemm_blockscaled(A, B, sa, sb, alpha=0.5, transa=transa, transb=transb, out_dtype=BF16)
    assert out.dtype == BF16
    assert_within(out, *blockscaled_reference(a, b, sa, sb, alpha=0.5))


def test_blockscaled_scale_forms(ctx, rng):
    m, n, k = 5, 130, 200
    a = fp8_array(rng, (m, k), E4M3)
    b = fp8_array(rng, (k, n), E4M3)
    sa = rng.uniform(0.5, 2, (m, 2)).astype(np.float32)  # C-ordered: copied to column-major
    sb = rng.uniform(0.5, 2, (2, 2))  # float64: converted
    want = blockscaled_reference(a, b, sa, sb)
    assert_within(ctx.gemm_blockscaled(a, b, sa, sb), *want)
    # The C API's own order, flat: scale_a[q * m + i].
    flat_a = np.asfortranarray(sa).ravel(order="F")
    flat_b = np.asfortranarray(sb, dtype=np.float32).ravel(order="F")
    assert_within(ctx.gemm_blockscaled(a, b, flat_a, flat_b), *want)


def test_blockscaled_unit_scales_are_gemm_ex(ctx, rng):
    a = fp8_array(rng, (7, 256), E5M2)
    b = fp8_array(rng, (256, 9), E4M3)
    ones_a, ones_b = np.ones((7, 2), np.float32), np.ones((1, 2), np.float32)
    assert_within(ctx.gemm_blockscaled(a, b, ones_a, ones_b), *reference(a, b))


# ------------------------------------------------------------------- DLPack --


class Producer:
    """A tensor of a library gpk does not know, exporting through __dlpack__ alone."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_float8_and_uint8_tensors(either_calls, rng):
    # FP8 travels under DLPack's own codes (kDLFloat8_e4m3fn, kDLFloat8_e5m2): gpk.Array
    # exports them, numpy cannot. uint8 tensors (numpy's export) carry the bits.
    a = fp8_array(rng, (9, 140), E4M3)
    b = fp8_array(rng, (140, 6), E5M2)
    tensors = []
    for x in (a, b):
        t = gpk.Array(x.shape, x.dtype)
        np.asarray(t)[...] = x
        tensors.append(Producer(t))
    got = either_calls.gemm_ex(*tensors, out_dtype=BF16)
    assert isinstance(got, gpk.Array) and got.dtype == BF16, "an unknown producer's result is a gpk.Array"
    assert_within(np.asarray(got), *reference(a, b))
    bits = either_calls.gemm_ex(Producer(a.view(np.uint8)), Producer(b.view(np.uint8)), a_dtype="e4m3",
                                b_dtype="e5m2")
    assert np.array_equal(np.asarray(bits), either_calls.gemm_ex(a, b))


# ---------------------------------------------------------------- bad input --


def test_bad_dtype_combinations_name_the_operand(either_calls, rng):
    a = fp8_array(rng, (3, 4), E4M3)
    b16 = np.ones((4, 2), np.float16)
    with pytest.raises(gpk.InvalidArgumentError, match="b_dtype"):
        either_calls.gemm_ex(a, b16)
    with pytest.raises(gpk.InvalidArgumentError, match="c_dtype"):
        either_calls.gemm_ex(a, a.T.copy(), out_dtype=np.float64)
    with pytest.raises(gpk.InvalidArgumentError, match="c_dtype"):
        either_calls.gemm_ex(np.ones((3, 4), np.float16), np.ones((4, 2), np.float16), out_dtype=BF16)


def test_a_failed_call_leaves_out_as_it_was(either_calls, rng):
    a = fp8_array(rng, (3, 4), E4M3)
    out = np.full((3, 2), 5.0, np.float64)
    with pytest.raises(gpk.InvalidArgumentError, match="c_dtype"):
        either_calls.gemm_ex(a, fp8_array(rng, (4, 2), E4M3), out=out)
    assert np.all(out == 5.0)


@pytest.mark.parametrize("argument", ["a_dtype", "b_dtype", "out_dtype"])
@pytest.mark.parametrize("value", ["e3m4", "int", True, 99, 2.5])
def test_unknown_dtype_arguments_are_named(ctx, argument, value):
    a = np.ones((2, 2), E4M3)
    with pytest.raises(gpk.InvalidArgumentError, match=argument):
        ctx.gemm_ex(a, a, **{argument: value})


def test_a_dtype_disagreeing_with_the_array_is_named(ctx):
    with pytest.raises(gpk.InvalidArgumentError, match="A has dtype float32 but a_dtype"):
        ctx.gemm_ex(np.ones((2, 2), np.float32), np.ones((2, 2), E4M3), a_dtype=gpk.F8E4M3)
    with pytest.raises(gpk.InvalidArgumentError, match="B has dtype float8_e5m2 but b_dtype"):
        ctx.gemm_ex(np.ones((2, 2), E4M3), np.ones((2, 2), E5M2), b_dtype="e4m3")
    with pytest.raises(gpk.InvalidArgumentError, match="out has dtype uint8 but out_dtype"):
        ctx.gemm_ex(np.ones((2, 2), E4M3), np.ones((2, 2), E4M3), out=np.zeros((2, 2), np.uint8),
                    out_dtype=gpk.BF16)


def test_c_and_out_of_other_dtypes_are_named(ctx):
    a = np.ones((2, 3), E4M3)
    b = np.ones((3, 2), E4M3)
    with pytest.raises(gpk.InvalidArgumentError, match="C has dtype float16"):
        ctx.gemm_ex(a, b, C=np.ones((2, 2), np.float16), beta=1.0, out_dtype=np.float32)
    with pytest.raises(gpk.InvalidArgumentError, match="C has dtype float16"):
        ctx.gemm_ex(a, b, C=np.ones((2, 2), np.float16), beta=1.0, out=np.zeros((2, 2), np.float32))
    with pytest.raises(gpk.InvalidArgumentError, match="out has shape"):
        ctx.gemm_ex(a, b, out=np.zeros((3, 2), np.float32))
    with pytest.raises(gpk.InvalidArgumentError, match="k"):
        ctx.gemm_ex(a, a)


def test_bad_scales_are_named(either_calls):
    a = np.ones((4, 200), E4M3)
    b = np.ones((200, 3), E4M3)
    good_a, good_b = np.ones((4, 2), np.float32), np.ones((1, 2), np.float32)
    with pytest.raises(gpk.InvalidArgumentError, match="scale_a is None"):
        either_calls.gemm_blockscaled(a, b, None, good_b)
    with pytest.raises(gpk.InvalidArgumentError, match="scale_b is None"):
        either_calls.gemm_blockscaled(a, b, good_a, None)
    with pytest.raises(gpk.InvalidArgumentError, match=r"scale_a has shape \(2, 4\)"):
        either_calls.gemm_blockscaled(a, b, np.ones((2, 4), np.float32), good_b)
    with pytest.raises(gpk.InvalidArgumentError, match="scale_b has shape"):
        either_calls.gemm_blockscaled(a, b, good_a, np.ones(3, np.float32))
    with pytest.raises(gpk.InvalidArgumentError, match="scale_a has dtype int32"):
        either_calls.gemm_blockscaled(a, b, np.ones((4, 2), np.int32), good_b)
    # 16-bit operands: the library's rule, naming the operand.
    with pytest.raises(gpk.InvalidArgumentError, match="a_dtype"):
        either_calls.gemm_blockscaled(np.ones((4, 200), np.float16), np.ones((200, 3), np.float16), good_a, good_b)


def test_reduce_refuses_fp8(ctx):
    with pytest.raises(gpk.NotSupportedError, match="float8_e4m3fn"):
        ctx.reduce(np.ones(4, E4M3))


def test_gemm_of_mismatched_non_fp8_dtypes_is_still_refused(ctx):
    # The mixed path opens only for FP8 operands or a dtype argument.
    with pytest.raises(gpk.InvalidArgumentError, match="they must match"):
        ctx.gemm(np.ones((2, 2), np.float32), np.ones((2, 2), np.float64))
    with pytest.raises(gpk.InvalidArgumentError, match="they must match"):
        ctx.matmul(np.ones((2, 2), np.float16), np.ones((2, 2), np.float32))


# ---------------------------------------------------------------------- GPU --


@pytest.fixture(scope="module")
def cuda_ctx():
    context = cuda_context_or_skip()
    yield context
    context.close()


@pytest.fixture
def gpu(cuda_ctx):
    cupy = pytest.importorskip("cupy", reason="the device-array cases use CuPy arrays")
    return cuda_ctx, cupy


def test_gpu_cupy_bits_against_the_bound(gpu):
    ctx, cp = gpu
    rng = np.random.default_rng(8)
    for m, n, k in [(1, 1, 1), (17, 33, 65), (1000, 1000, 1000), (257, 129, 4097)]:
        a = fp8_array(rng, (m, k), E4M3)
        b = fp8_array(rng, (k, n), E5M2)
        da, db = cp.asarray(a.view(np.uint8)), cp.asarray(b.view(np.uint8))
        out = ctx.gemm_ex(da, db, a_dtype=gpk.F8E4M3, b_dtype=gpk.F8E5M2)
        assert isinstance(out, cp.ndarray) and out.dtype == np.float32
        assert_within(cp.asnumpy(out), *reference(a, b))
        bits = cp.empty((m, n), cp.uint16)
        ctx.gemm_ex(da, db, out=bits, a_dtype="e4m3", b_dtype="e5m2", out_dtype=gpk.BF16)
        assert_within(cp.asnumpy(bits).view(BF16), *reference(a, b))


@pytest.mark.parametrize("transa,transb", [(False, False), (True, False), (False, True), (True, True)])
def test_gpu_every_transpose_and_odd_lds(gpu, transa, transb):
    ctx, cp = gpu
    rng = np.random.default_rng(9)
    m, n, k = 301, 203, 517
    wide_a = fp8_array(rng, (k if transa else m, (m if transa else k) + 3), E4M3)
    wide_b = fp8_array(rng, (n if transb else k, (k if transb else n) + 5), E4M3)
    a = wide_a[:, : (m if transa else k)]
    b = wide_b[:, : (k if transb else n)]
    da = cp.asarray(wide_a.view(np.uint8))[:, : a.shape[1]]
    db = cp.asarray(wide_b.view(np.uint8))[:, : b.shape[1]]
    out = ctx.gemm_ex(da, db, transa=transa, transb=transb, a_dtype=gpk.F8E4M3, b_dtype=gpk.F8E4M3,
                      out_dtype=np.float16)
    assert_within(cp.asnumpy(out), *reference(a.T if transa else a, b.T if transb else b))


def test_gpu_blockscaled(gpu):
    ctx, cp = gpu
    rng = np.random.default_rng(10)
    m, n, k = 256, 384, 1000
    a = fp8_array(rng, (m, k), E4M3)
    b = fp8_array(rng, (k, n), E4M3)
    sa = np.asfortranarray(rng.uniform(0.1, 4, (m, 8)).astype(np.float32))
    sb = np.asfortranarray(rng.uniform(0.1, 4, (3, 8)).astype(np.float32))
    out = ctx.gemm_blockscaled(cp.asarray(a.view(np.uint8)), cp.asarray(b.view(np.uint8)), cp.asfortranarray(
        cp.asarray(sa)), cp.asfortranarray(cp.asarray(sb)), a_dtype="e4m3", b_dtype="e4m3")
    assert_within(cp.asnumpy(out), *blockscaled_reference(a, b, sa, sb))
    with pytest.raises(gpk.InvalidArgumentError, match="scale_a is in host memory"):
        ctx.gemm_blockscaled(cp.asarray(a.view(np.uint8)), cp.asarray(b.view(np.uint8)), sa, cp.asarray(sb),
                             a_dtype="e4m3", b_dtype="e4m3")


def test_gpu_host_float8_arrays_through_the_cuda_context(cuda_ctx):
    # Host arrays on a CUDA context go through the staging pipeline, as gemm's do:
    # every transpose, a mix of dtypes, block scales, matmul's stacks.
    rng = np.random.default_rng(11)
    a = fp8_array(rng, (300, 500), E5M2)
    b = fp8_array(rng, (500, 200), E4M3)
    assert_within(cuda_ctx.gemm(a, b, out_dtype=BF16), *reference(a, b))
    for transa, transb in [(True, False), (False, True), (True, True)]:
        A = np.ascontiguousarray(a.T) if transa else a
        B = np.ascontiguousarray(b.T) if transb else b
        assert_within(cuda_ctx.gemm_ex(A, B, transa=transa, transb=transb), *reference(a, b))
    sa = np.asfortranarray(rng.uniform(0.1, 4, (300, 4)).astype(np.float32))
    sb = np.asfortranarray(rng.uniform(0.1, 4, (2, 4)).astype(np.float32))
    assert_within(cuda_ctx.gemm_blockscaled(a, b, sa, sb, out_dtype=np.float16),
                  *blockscaled_reference(a, b, sa, sb))
    stack = fp8_array(rng, (3, 40, 500), E4M3)
    out = cuda_ctx.matmul(stack, b)
    for i in range(3):
        assert_within(out[i], *reference(stack[i], b))
