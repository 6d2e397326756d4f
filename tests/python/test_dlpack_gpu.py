"""The array libraries on the GPU: PyTorch tensors, CuPy arrays and JAX arrays
through gemm, batched matmul, reduce and transpose, each result compared with the
library's own, on the default stream and on a user stream with work pending before
the call (that writes an input) and after it (that reads the result).

Two routes in: PyTorch and CuPy arrays as they are go through
__cuda_array_interface__ and are read and written on the context's stream (so the
user-stream case sets the context's stream to it); the same arrays behind a wrapper
with DLPack alone go through DLPack, where the stream rule orders the work with no
set_stream: the producer's stream before gpk's, gpk's before the consumer's. JAX
arrays go through DLPack as they are. Values are small integers, so every product
and sum is exact in float32 (TF32 included) and results compare exactly.

Skipped without a usable GPU, and per library when it is not importable."""

import numpy as np
import pytest

import gpk
from helpers import cuda_context_or_skip

SPIN = 50_000_000  # GPU clock cycles of pending work: tens of milliseconds


@pytest.fixture(scope="module")
def gpu():
    context = cuda_context_or_skip()
    yield context
    context.close()


class DLPackOnly:
    """An array seen through DLPack alone (no __cuda_array_interface__, a library
    gpk does not know): gpk's results for it are gpk.Arrays."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class Torch:
    name = "torch"

    def __init__(self):
        self.torch = pytest.importorskip("torch")
        if not self.torch.cuda.is_available():
            pytest.skip("PyTorch sees no GPU")

    def array(self, values):
        return self.torch.as_tensor(values, device="cuda")

    def numpy(self, x):
        self.torch.cuda.synchronize()
        return x.cpu().numpy()

    def owns(self, x):
        return isinstance(x, self.torch.Tensor) and x.is_cuda

    def from_dlpack(self, x):
        return self.torch.from_dlpack(x)

    def pointer(self, x):
        return x.data_ptr()

    def new_stream(self):
        return self.torch.cuda.Stream()

    def on(self, stream):
        return self.torch.cuda.stream(stream)

    def default_stream(self):
        return self.torch.cuda.default_stream()

    def spin(self):
        self.torch.cuda._sleep(SPIN)

    def synchronize(self):
        self.torch.cuda.synchronize()


class Cupy:
    name = "cupy"

    def __init__(self):
        self.cupy = pytest.importorskip("cupy")
        try:
            self.cupy.cuda.runtime.getDeviceCount()
        except Exception as e:  # noqa: BLE001  (CuPy raises its own runtime errors)
            pytest.skip(f"CuPy sees no GPU: {e}")
        self.kernel = self.cupy.RawKernel(
            r'''extern "C" __global__ void spin(long long cycles) {
                    long long start = clock64();
                    while (clock64() - start < cycles) {}
                }''', "spin")

    def array(self, values):
        return self.cupy.asarray(values)

    def numpy(self, x):
        self.cupy.cuda.runtime.deviceSynchronize()
        return self.cupy.asnumpy(x)

    def owns(self, x):
        return isinstance(x, self.cupy.ndarray)

    def from_dlpack(self, x):
        return self.cupy.from_dlpack(x)

    def pointer(self, x):
        return x.data.ptr

    def new_stream(self):
        return self.cupy.cuda.Stream(non_blocking=True)

    def on(self, stream):
        return stream

    def default_stream(self):
        return self.cupy.cuda.Stream.null

    def spin(self):
        self.kernel((1,), (1,), (np.int64(SPIN),))

    def synchronize(self):
        self.cupy.cuda.runtime.deviceSynchronize()


LIBRARIES = {"torch": Torch, "cupy": Cupy}


@pytest.fixture(params=sorted(LIBRARIES))
def lib(request, gpu):
    return LIBRARIES[request.param]()


def small_ints(rng, shape, dtype):
    return rng.integers(-4, 5, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_operation_on_the_default_stream(gpu, lib, rng, dtype):
    A, B = small_ints(rng, (96, 64), dtype), small_ints(rng, (64, 80), dtype)
    S = small_ints(rng, (5, 96, 64), dtype)
    a, b, s = lib.array(A), lib.array(B), lib.array(S)
    c = gpu.gemm(a, b)
    m = gpu.matmul(s, b)
    t = gpu.transpose(a)
    for got in (c, m, t):
        assert lib.owns(got), f"{type(got)} is not a {lib.name} array"
    np.testing.assert_array_equal(lib.numpy(c), lib.numpy(a @ b))
    np.testing.assert_array_equal(lib.numpy(m), lib.numpy(s @ b))
    np.testing.assert_array_equal(lib.numpy(t), lib.numpy(a.T))
    assert gpu.reduce(a) == float(a.sum())
    out = lib.array(np.full((96, 80), np.nan, dtype))
    assert gpu.gemm(a, b, out=out) is out
    np.testing.assert_array_equal(lib.numpy(out), lib.numpy(a @ b))


def test_user_stream_through_the_array_interface(gpu, lib, rng):
    """Arrays read through __cuda_array_interface__ are used on the context's
    stream: set to the user's, the work before and after is ordered with gpk's."""
    A, B = small_ints(rng, (64, 64), np.float32), small_ints(rng, (64, 32), np.float32)
    values = lib.array(A)
    b = lib.array(B)
    a = lib.array(np.zeros_like(A))
    stream = lib.new_stream()
    lib.synchronize()
    try:
        with lib.on(stream):
            gpu.set_stream(stream)
            lib.spin()  # pending before: a gets its values only after this
            a[...] = values
            c = gpu.gemm(a, b)
            t = gpu.transpose(a)
            m = gpu.matmul(a[None], b)
            total = gpu.reduce(a)
            after = (c * 2, t * 2, m * 2)  # pending after: reads gpk's results
    finally:
        gpu.set_stream(None)
    lib.synchronize()
    want = lib.numpy(values @ b)
    np.testing.assert_array_equal(lib.numpy(after[0]), 2 * want)
    np.testing.assert_array_equal(lib.numpy(after[1]), 2 * A.T)
    np.testing.assert_array_equal(lib.numpy(after[2]), 2 * want[None])
    assert total == float(A.sum())


@pytest.mark.parametrize("stream_kind", ["default", "user"])
def test_streams_through_dlpack(gpu, lib, rng, stream_kind):
    """The context on its default stream, the arrays through DLPack: a producer's
    pending write of an input is waited for (gpk passes its stream to __dlpack__),
    and a consumer on its stream waits for gpk's result (its from_dlpack passes its
    stream, which waits for gpk's event) -- while gpk's own stream is kept busy
    first, so that a consumer not made to wait would read the result too early."""
    A, B = small_ints(rng, (64, 64), np.float32), small_ints(rng, (64, 32), np.float32)
    values = lib.array(A)
    b = lib.array(B)
    a = lib.array(np.zeros_like(A))
    stream = lib.new_stream() if stream_kind == "user" else lib.default_stream()
    lib.synchronize()
    with lib.on(stream):
        lib.spin()
        a[...] = values
        if stream_kind == "user":
            with lib.on(lib.default_stream()):
                lib.spin()  # gpk's stream (the legacy default) busy before its work
        results = [gpu.gemm(DLPackOnly(a), DLPackOnly(b)), gpu.transpose(DLPackOnly(a)),
                   gpu.matmul(DLPackOnly(a[None]), DLPackOnly(b))]
        total = gpu.reduce(DLPackOnly(a))
        for r in results:
            assert isinstance(r, gpk.Array) and r.device == f"cuda:{gpu.device}"
        taken = [lib.from_dlpack(r) for r in results]
        assert [lib.pointer(x) for x in taken] == [r.ptr for r in results], "from_dlpack copied"
        after = [x * 2 for x in taken]
    lib.synchronize()
    want = lib.numpy(values @ b)
    np.testing.assert_array_equal(lib.numpy(after[0]), 2 * want)
    np.testing.assert_array_equal(lib.numpy(after[1]), 2 * A.T)
    np.testing.assert_array_equal(lib.numpy(after[2]), 2 * want[None])
    assert total == float(A.sum())


def test_dlpack_output_on_the_device(gpu, lib, rng):
    A, B = small_ints(rng, (48, 16), np.float64), small_ints(rng, (16, 24), np.float64)
    a, b = lib.array(A), lib.array(B)
    out = lib.array(np.full((48, 24), np.nan))
    assert gpu.gemm(DLPackOnly(a), DLPackOnly(b), out=DLPackOnly(out)).array is out
    gpu.synchronize()
    np.testing.assert_array_equal(lib.numpy(out), A @ B)
    # C and a separate out: C is copied on the device into scratch, then out.
    C = small_ints(rng, (48, 24), np.float64)
    gpu.gemm(DLPackOnly(a), DLPackOnly(b), DLPackOnly(lib.array(C)), beta=3.0, out=DLPackOnly(out))
    gpu.synchronize()
    np.testing.assert_array_equal(lib.numpy(out), A @ B + 3 * C)
    got = lib.from_dlpack(gpu.gemm(DLPackOnly(a), DLPackOnly(b), DLPackOnly(lib.array(C)), beta=-1.0))
    np.testing.assert_array_equal(lib.numpy(got), A @ B - C)


def test_jax_arrays_come_back_as_jax_arrays(gpu, rng):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    try:
        device = jax.devices("gpu")[gpu.device]
    except (RuntimeError, IndexError) as e:
        pytest.skip(f"JAX has no GPU {gpu.device}: {e}")
    A, B = small_ints(rng, (64, 48), np.float32), small_ints(rng, (48, 40), np.float32)
    a, b = jax.device_put(A, device), jax.device_put(B, device)
    s = jax.device_put(small_ints(rng, (3, 64, 48), np.float32), device)
    c, m, t = gpu.gemm(a, b), gpu.matmul(s, b), gpu.transpose(a)
    for got in (c, m, t):
        assert isinstance(got, jax.Array), type(got)
    np.testing.assert_array_equal(np.asarray(c), np.asarray(jnp.matmul(a, b)))
    np.testing.assert_array_equal(np.asarray(m), np.asarray(jnp.matmul(s, b)))
    np.testing.assert_array_equal(np.asarray(t), np.asarray(a.T))
    assert gpu.reduce(a) == float(jnp.sum(a))


def test_a_tensor_on_another_gpu_is_refused(gpu):
    torch = pytest.importorskip("torch")
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU")
    other = 1 if gpu.device == 0 else 0
    x = torch.ones((4, 4), device=f"cuda:{other}")
    with pytest.raises(gpk.InvalidArgumentError, match=f"A is on cuda:{other} but the context is on cuda:{gpu.device}"):
        gpu.gemm(DLPackOnly(x), torch.ones((4, 4), device=f"cuda:{gpu.device}"))


def test_gpk_arrays_on_the_device(gpu, rng):
    A = small_ints(rng, (8, 8), np.float32)
    result = gpu.gemm(DLPackOnly(_device_array(A)), DLPackOnly(_device_array(np.eye(8, dtype=np.float32))))
    assert isinstance(result, gpk.Array) and result.__dlpack_device__() == (2, gpu.device)
    interface = result.__cuda_array_interface__
    assert interface["data"][0] == result.ptr and interface["shape"] == (8, 8)
    assert gpu.reduce(result) == float(A.sum())  # and as an input again
    with pytest.raises(TypeError, match="on the GPU"):
        np.asarray(result)


def _device_array(values):
    """A device array of whichever GPU library is installed."""
    try:
        import torch

        if torch.cuda.is_available():
            return torch.as_tensor(values, device="cuda")
    except ImportError:
        pass
    cupy = pytest.importorskip("cupy")
    return cupy.asarray(values)


# ------------------------------------------------ result memory reused (_cuda.py) --


def test_results_reuse_their_memory(gpu, lib, rng):
    """A loop of calls whose results are taken and dropped takes memory from the
    driver for the first few alone: the rest reuse the blocks given back."""
    from gpk import _cuda

    A, B = small_ints(rng, (64, 64), np.float32), small_ints(rng, (64, 64), np.float32)
    a, b = lib.array(A), lib.array(B)
    want = A @ B
    pool = _cuda.pool(gpu.device)
    for _ in range(3):  # warm-up
        lib.from_dlpack(gpu.gemm(DLPackOnly(a), DLPackOnly(b)))
    lib.synchronize()
    fresh = pool.fresh
    for _ in range(50):
        r = lib.from_dlpack(gpu.gemm(DLPackOnly(a), DLPackOnly(b)))
        np.testing.assert_array_equal(lib.numpy(r), want)
        del r
    assert pool.fresh - fresh <= 5, f"{pool.fresh - fresh} of 50 results took new memory"


def test_memory_a_consumer_still_reads_is_not_reused(gpu, lib, rng):
    """A result taken on a user stream, read there by work queued behind pending
    work, then dropped: its memory must not serve the next result (gpk's stream,
    written at once) until the consumer's reading is done."""
    A, B = small_ints(rng, (128, 128), np.float32), small_ints(rng, (128, 128), np.float32)
    a, b = lib.array(A), lib.array(B)
    stream = lib.new_stream()
    lib.synchronize()
    with lib.on(stream):
        x = lib.from_dlpack(gpu.gemm(DLPackOnly(a), DLPackOnly(b)))
        lib.spin()  # the consumer's stream busy: the reading below waits behind it
        doubled = x * 2
        first = lib.pointer(x)
        del x  # the deleter runs; the reading is still queued
    second = gpu.gemm(DLPackOnly(b), DLPackOnly(a))  # gpk's stream: written at once
    assert second.ptr != first, "memory still read on the consumer's stream was handed out again"
    taken = lib.from_dlpack(second)
    lib.synchronize()
    np.testing.assert_array_equal(lib.numpy(doubled), 2 * (A @ B))
    np.testing.assert_array_equal(lib.numpy(taken), B @ A)


def test_closing_a_context_frees_the_idle_result_memory(gpu, lib, rng):
    from gpk import _cuda

    A = small_ints(rng, (32, 32), np.float32)
    a = lib.array(A)
    with gpk.Context("cuda", device=gpu.device) as ctx:
        for _ in range(3):
            r = lib.from_dlpack(ctx.gemm(DLPackOnly(a), DLPackOnly(a)))
            np.testing.assert_array_equal(lib.numpy(r), A @ A)
            del r
        assert _cuda.pool(gpu.device).idle_bytes() > 0
    assert _cuda.pool(gpu.device).idle_bytes() == 0
