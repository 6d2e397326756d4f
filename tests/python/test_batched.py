"""Context.matmul over stacks of matrices (gpk_gemm_strided_batched), compared with
numpy.matmul: 3-D stacks, 2-D operands and batch extents of 1 broadcast as one
shared matrix, padded and sliced stacks read in place, non-contiguous ones copied,
every variant of the host ladder, errors that leave out untouched; and the same
through CuPy on the CUDA backend (skipped without a GPU or CuPy)."""

import numpy as np
import pytest

import gpk
from helpers import FLOAT_DTYPES, cuda_context_or_skip, random_array


def reference(A, B):
    """numpy.matmul in float64, and the scale of each product's terms."""
    want = np.matmul(A.astype(np.float64), B.astype(np.float64))
    scale = np.matmul(np.abs(A.astype(np.float64)), np.abs(B.astype(np.float64)))
    return want, scale


def assert_matmul_close(got, A, B, dtype):
    want, scale = reference(A, B)
    assert got.shape == want.shape
    assert got.dtype == np.dtype(dtype)
    k = A.shape[-1]
    eps = np.finfo(dtype).eps
    tol = 8 * eps * (k + 2) * np.maximum(scale, np.finfo(dtype).tiny)
    assert np.all(np.isfinite(got)), "matmul produced a non-finite value"
    bad = np.abs(got.astype(np.float64) - want) > tol
    assert not bad.any(), f"{int(bad.sum())} elements differ from numpy.matmul beyond the bound"


SHAPES = [(1, 1, 1, 1), (7, 4, 4, 4), (33, 3, 5, 2), (5, 17, 13, 19), (2, 64, 65, 63), (3, 1, 600, 2)]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("batch,m,n,k", SHAPES)
def test_stacks_match_numpy(ctx, rng, dtype, batch, m, n, k):
    A = random_array(rng, (batch, m, k), dtype)
    B = random_array(rng, (batch, k, n), dtype)
    got = ctx.matmul(A, B)
    assert isinstance(got, np.ndarray) and got.flags.c_contiguous
    assert_matmul_close(got, A, B, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("which", ["A 2-D", "B 2-D", "A batch 1", "B batch 1", "both 2-D"])
def test_broadcast_single_matrix(ctx, rng, dtype, which):
    batch, m, n, k = 6, 5, 4, 3
    A = random_array(rng, (batch, m, k), dtype)
    B = random_array(rng, (batch, k, n), dtype)
    if which == "A 2-D":
        A = A[0]
    elif which == "B 2-D":
        B = B[2]
    elif which == "A batch 1":
        A = A[1:2]
    elif which == "B batch 1":
        B = B[3:4]
    else:
        A, B = A[0], B[0]
    got = ctx.matmul(A, B)
    assert got.shape == np.matmul(A, B).shape
    assert_matmul_close(got, A, B, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_padded_and_strided_stacks_in_place(ctx, rng, dtype):
    # Every other matrix of a stack whose rows are padded: ld and stride both
    # larger than the matrices, read without a copy.
    big_a = random_array(rng, (10, 6, 9), dtype)
    big_b = random_array(rng, (10, 5, 7), dtype)
    A = big_a[::2, :, :4]
    B = big_b[::2, :4, :]
    got = ctx.matmul(A, B)
    assert_matmul_close(got, A, B, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_non_contiguous_rows_are_copied(ctx, rng, dtype):
    A = random_array(rng, (4, 6, 5), dtype).transpose(0, 2, 1)  # column-major matrices
    B = random_array(rng, (4, 6, 3), dtype)
    got = ctx.matmul(A, B)
    assert_matmul_close(got, A, B, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_out_is_written_in_place(ctx, rng, dtype):
    A = random_array(rng, (3, 4, 5), dtype)
    B = random_array(rng, (3, 5, 2), dtype)
    backing = np.full((3, 4, 8), np.nan, dtype=dtype)
    out = backing[:, :, 1:3]  # padded rows: the columns around it must keep their NaN
    got = ctx.matmul(A, B, out=out)
    assert got is out
    assert_matmul_close(out, A, B, dtype)
    assert np.isnan(backing[:, :, 0]).all() and np.isnan(backing[:, :, 3:]).all()


def test_every_host_variant(ctx, rng):
    assert ctx.variants("gemm_batched") == ["host"]
    ctx.set_variant("gemm_batched", "host")
    A = random_array(rng, (9, 3, 3), np.float64)
    B = random_array(rng, (9, 3, 3), np.float64)
    assert_matmul_close(ctx.matmul(A, B), A, B, np.float64)
    ctx.set_variant("gemm_batched", "auto")


def test_empty_batch_and_empty_matrices(ctx):
    got = ctx.matmul(np.ones((0, 3, 4), np.float32), np.ones((0, 4, 2), np.float32))
    assert got.shape == (0, 3, 2)
    got = ctx.matmul(np.ones((5, 3, 0)), np.ones((5, 0, 2)))
    assert got.shape == (5, 3, 2) and (got == 0).all()


@pytest.mark.parametrize(
    "a_shape,b_shape",
    [((0, 3, 4), (4, 2)), ((0, 3, 4), (1, 4, 2)), ((1, 3, 4), (0, 4, 2)), ((3, 4), (0, 4, 2)),
     ((0, 3, 4), (0, 4, 2)), ((0, 3, 0), (0, 2)), ((1, 3, 4), (1, 4, 2))],
)
def test_empty_batches_broadcast_as_numpy(recorded, a_shape, b_shape):
    # A stack of 0 against one shared matrix is an empty result, as numpy gives:
    # no product is made, so no operand's pointer reaches the library (an empty
    # stack's would be read past its end), through gpk._calls and ctypes alike.
    A = np.ones(a_shape, np.float32)
    B = np.ones(b_shape, np.float32)
    want = A @ B
    got = recorded.matmul(A, B)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    made = [name for name, _ in recorded._calls.made]
    assert made == ([] if want.size == 0 else ["gemm_strided_batched"])
    out = np.empty(want.shape, np.float32)
    assert recorded.matmul(A, B, out=out) is out
    with pytest.raises(gpk.InvalidArgumentError, match="shape"):
        recorded.matmul(A, B, out=np.empty((want.shape[0] + 1,) + want.shape[1:], np.float32))


@pytest.mark.parametrize(
    "a_shape,b_shape,word",
    [((3, 4, 5), (2, 5, 6), "batch"), ((3, 4, 5), (3, 4, 6), "k"), ((4,), (4, 2), "2-D"), ((2, 2, 2, 2), (2, 2), "3-D")],
)
def test_shape_errors_leave_out_untouched(ctx, a_shape, b_shape, word):
    out = np.full((3, 4, 6), 7.0)
    with pytest.raises(gpk.InvalidArgumentError, match=word):
        ctx.matmul(np.ones(a_shape), np.ones(b_shape), out=out)
    assert (out == 7.0).all()


def test_library_error_leaves_out_untouched(ctx):
    # out overlapping A: the library refuses it (naming A and C) and writes nothing.
    A = np.ones((4, 3, 3))
    B = np.ones((4, 3, 3))
    before = A.copy()
    with pytest.raises(gpk.InvalidArgumentError, match="overlaps"):
        ctx.matmul(A, B, out=A)
    assert (A == before).all()


def test_dtype_mismatch_and_wrong_out(ctx):
    A = np.ones((2, 3, 3), np.float32)
    with pytest.raises(gpk.InvalidArgumentError, match="dtype"):
        ctx.matmul(A, np.ones((2, 3, 3), np.float64))
    out = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(gpk.InvalidArgumentError, match="shape"):
        ctx.matmul(A, np.ones((2, 3, 3), np.float32), out=out)
    assert (out == 0).all()
    with pytest.raises(gpk.InvalidArgumentError, match="dtype"):
        ctx.matmul(A, A, out=np.zeros((2, 3, 3), np.float64))


def test_ops_constant():
    from gpk.constants import OPS

    assert OPS["gemm_batched"] == gpk.OP_GEMM_BATCHED == 4


# ---- CUDA backend through CuPy ------------------------------------------------------


@pytest.fixture(scope="module")
def gpu():
    context = cuda_context_or_skip()
    yield context
    context.close()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("batch,m,n,k", [(100, 4, 4, 4), (9, 17, 33, 65), (2, 128, 128, 128)])
def test_cupy_stacks(gpu, rng, dtype, batch, m, n, k):
    cupy = pytest.importorskip("cupy")
    A = random_array(rng, (batch, m, k), dtype)
    B = random_array(rng, (k, n), dtype)  # shared
    variants = gpu.variants("gemm_batched") + ["auto"]
    for variant in variants:
        gpu.set_variant("gemm_batched", variant)
        try:
            got = gpu.matmul(cupy.asarray(A), cupy.asarray(B))
        except gpk.NotSupportedError as e:
            assert variant in str(e)
            continue
        gpu.synchronize()
        assert isinstance(got, cupy.ndarray)
        assert_matmul_close(cupy.asnumpy(got), A, np.broadcast_to(B, (batch, k, n)), dtype)
    gpu.set_variant("gemm_batched", "auto")


def test_cupy_error_leaves_out_untouched(gpu):
    cupy = pytest.importorskip("cupy")
    out = cupy.full((3, 4, 4), 5.0)
    with pytest.raises(gpk.InvalidArgumentError):
        gpu.matmul(out, cupy.ones((3, 4, 4)), out=out)
    assert bool((out == 5.0).all())
