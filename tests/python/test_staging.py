"""The staging pipeline's settings and trace (Context.set_staging, stage_trace):
argument handling on the host backend, and host arrays through the pipeline on
the CUDA backend (skipped where no usable GPU exists)."""

import ctypes

import numpy as np
import pytest

import gpk
from gpk import _library
from helpers import assert_gemm_close, cuda_context_or_skip, gemm_reference, random_array

SIZE_BITS = 8 * ctypes.sizeof(ctypes.c_size_t)


# ------------------------------------------------------------- constants --


def test_stage_event_layout_matches_the_header():
    # int32 kind, int32 stream, int64 chunk, uint64 bytes, double start_ms, end_ms
    s = _library.StageEventStruct
    assert ctypes.sizeof(s) == 40
    assert [s.kind.offset, s.stream.offset, s.chunk.offset, s.bytes.offset, s.start_ms.offset, s.end_ms.offset] == [
        0, 4, 8, 16, 24, 32,
    ]


def test_every_function_has_a_prototype():
    declared = _library.PROTOTYPES
    for name in ("gpk_set_staging", "gpk_stage_trace"):
        restype, argtypes = declared[name]
        assert restype is ctypes.c_int
        function = getattr(_library.lib(), name)
        assert function.restype is ctypes.c_int and function.argtypes == argtypes


# ------------------------------------------------------ host: arguments --


@pytest.mark.parametrize("streams", [1, 2, 4, 16])
def test_set_staging_accepts_streams_in_range(ctx, streams):
    ctx.set_staging(streams)
    ctx.set_staging(streams, chunk_bytes=1, device_bytes=1)
    ctx.set_staging(streams, 2**SIZE_BITS - 1, 2**SIZE_BITS - 1)
    ctx.set_staging(float(streams), 1e6, 0)  # integral floats, as elsewhere in the package
    assert ctx.sum(np.arange(10)) == 45  # the host backend has no use for them


@pytest.mark.parametrize("streams", [0, -1, 17, 1000, 2**31 - 1, -(2**31)])
def test_set_staging_refuses_streams_out_of_range(ctx, streams):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.set_staging(streams)
    assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
    assert "streams" in info.value.message
    assert info.value.function == "gpk_set_staging"


@pytest.mark.parametrize("streams", [2**31, -(2**31) - 1, 2**64])
def test_set_staging_refuses_streams_outside_a_c_int(ctx, streams):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.set_staging(streams)
    assert "streams" in info.value.message


@pytest.mark.parametrize("name", ["chunk_bytes", "device_bytes"])
@pytest.mark.parametrize("value", [-1, 2**SIZE_BITS, -(2**70)])
def test_set_staging_refuses_sizes_outside_size_t(ctx, name, value):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.set_staging(4, **{name: value})
    assert name in info.value.message


@pytest.mark.parametrize("value", [1.5, "4", None, [4]])
def test_set_staging_wants_integers(ctx, value):
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.set_staging(value)
    assert "streams" in info.value.message
    with pytest.raises(gpk.InvalidArgumentError):
        ctx.set_staging(2, chunk_bytes=value)
    with pytest.raises(gpk.InvalidArgumentError):
        ctx.set_staging(2, device_bytes=value)


def test_set_staging_failure_keeps_the_settings(ctx):
    ctx.set_staging(2, 4096)
    with pytest.raises(gpk.InvalidArgumentError):
        ctx.set_staging(0)
    ctx.set_staging(3)


def test_stage_trace_is_empty_on_the_host_backend(ctx, rng):
    assert ctx.stage_trace() == []
    a = random_array(rng, (5, 7), np.float64)
    ctx.gemm(a, a.T)
    ctx.transpose(a)
    ctx.sum(a)
    assert ctx.stage_trace() == []


def test_stage_trace_c_arguments(ctx):
    lib = _library.lib()
    h = ctx._h()
    count = ctypes.c_int64(-5)
    assert lib.gpk_stage_trace(h, None, 0, ctypes.byref(count)) == gpk.SUCCESS
    assert count.value == 0
    events = (_library.StageEventStruct * 2)()
    assert lib.gpk_stage_trace(h, events, 2, ctypes.byref(count)) == gpk.SUCCESS
    assert count.value == 0
    # count NULL, capacity < 0, events NULL with capacity > 0
    assert lib.gpk_stage_trace(h, events, 2, None) == gpk.ERROR_INVALID_ARGUMENT
    assert b"count" in lib.gpk_last_error(h)
    assert lib.gpk_stage_trace(h, events, -1, ctypes.byref(count)) == gpk.ERROR_INVALID_ARGUMENT
    assert b"capacity" in lib.gpk_last_error(h)
    assert lib.gpk_stage_trace(h, None, 1, ctypes.byref(count)) == gpk.ERROR_INVALID_ARGUMENT
    assert b"events" in lib.gpk_last_error(h)
    assert lib.gpk_stage_trace(None, None, 0, ctypes.byref(count)) == gpk.ERROR_INVALID_HANDLE
    assert lib.gpk_set_staging(None, 4, 0, 0) == gpk.ERROR_INVALID_HANDLE


@pytest.mark.parametrize("call", ["set_staging", "stage_trace"])
def test_closed_context_is_refused(call):
    c = gpk.Context("host")
    c.close()
    with pytest.raises(gpk.InvalidHandleError):
        if call == "set_staging":
            c.set_staging(4)
        else:
            c.stage_trace()


# ----------------------------------------------------- CUDA: the pipeline --


@pytest.fixture(scope="module")
def gpu():
    context = cuda_context_or_skip()
    yield context
    context.close()


@pytest.fixture
def cuda(gpu):
    yield gpu
    gpu.set_staging(4, 0, 0)
    gpu.set_variant("gemm", None)


def check_trace(trace, streams, moved):
    assert trace, "a call on host arrays left no trace"
    kinds = {e["kind"] for e in trace}
    assert kinds <= {gpk.STAGE_COPY_IN, gpk.STAGE_COMPUTE, gpk.STAGE_COPY_OUT}
    assert gpk.STAGE_COMPUTE in kinds
    for e in trace:
        assert 0 <= e["stream"] < streams
        assert e["chunk"] >= 0
        assert e["start_ms"] <= e["end_ms"]
        assert e["stage"] == {0: "copy_in", 1: "compute", 2: "copy_out"}[e["kind"]]
        if e["kind"] == gpk.STAGE_COMPUTE:
            assert e["bytes"] == 0
    assert sum(e["bytes"] for e in trace) == moved


@pytest.mark.parametrize("streams,chunk", [(1, 0), (2, 20000), (4, 4096)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_through_the_pipeline(cuda, rng, streams, chunk, dtype):
    m, n, k = 301, 77, 129
    a = random_array(rng, (m, k), dtype)
    b = random_array(rng, (k, n), dtype)
    c = random_array(rng, (m, n), dtype)
    cuda.set_staging(streams, chunk)
    got = cuda.gemm(a, b, C=c, alpha=0.5, beta=-2.0)
    want, scale = gemm_reference(a, b, c, 0.5, -2.0)
    assert_gemm_close(got, want, scale, k, dtype)
    es = np.dtype(dtype).itemsize
    check_trace(cuda.stage_trace(), streams, (m * k + k * n + 2 * m * n) * es)


def test_gemm_out_of_core(cuda, rng):
    # device_bytes far below B's size: B is cut into blocks, A copied once per block.
    m, n, k = 200, 300, 256
    a = random_array(rng, (m, k), np.float64)
    b = random_array(rng, (k, n), np.float64)
    cuda.set_staging(2, 16384, 200 * 1024)
    got = cuda.gemm(a, b)
    want, scale = gemm_reference(a, b)
    assert_gemm_close(got, want, scale, k, np.float64)
    trace = cuda.stage_trace()
    assert len({e["chunk"] for e in trace}) > 2


def test_cap_below_one_chunk_is_out_of_memory(cuda, rng):
    a = random_array(rng, (64, 64), np.float32)
    cuda.set_staging(4, 0, 1024)
    with pytest.raises(gpk.OutOfMemoryError) as info:
        cuda.gemm(a, a)
    assert "device_bytes" in info.value.message
    cuda.set_staging(4, 0, 0)
    got = cuda.gemm(a, a)
    want, scale = gemm_reference(a, a)
    assert_gemm_close(got, want, scale, 64, np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float64])
def test_transpose_and_reduce_through_the_pipeline(cuda, rng, dtype):
    x = random_array(rng, (333, 517), dtype)
    cuda.set_staging(3, 8192)
    assert np.array_equal(cuda.transpose(x), x.T)
    check_trace(cuda.stage_trace(), 3, 2 * x.nbytes)
    assert cuda.max(x) == x.max() and cuda.min(x) == x.min()
    if np.dtype(dtype).kind == "i":
        assert cuda.sum(x) == int(x.astype(np.int64).sum())
    else:
        first = cuda.sum(x)
        assert first == cuda.sum(x)  # the same grouping every run
        assert abs(first - float(x.astype(np.float64).sum())) <= 1e-3 * float(np.abs(x).sum())
    check_trace(cuda.stage_trace(), 3, x.nbytes)
