"""DLPack on the host backend, with numpy's own __dlpack__ (numpy >= 1.22; versioned
capsules from numpy 2.1): tensors of any library as every array argument, read in
place; versioned capsules asked for first and unversioned ones taken from older
producers; read-only and copied tensors refused as outputs; tensors gpk cannot reach
refused with their argument and both devices named; results handed back to the
caller's library through its from_dlpack, or as a gpk.Array, which implements the
protocol itself. The GPU side is in test_dlpack_gpu.py."""

import ctypes
import gc

import numpy as np
import pytest

import gpk
from gpk import _arrays, _dlpack

numpy_version = tuple(int(part) for part in np.__version__.split(".")[:2])
if numpy_version < (1, 22):
    pytest.skip("numpy < 1.22 has no __dlpack__", allow_module_level=True)
versioned_numpy = pytest.mark.skipif(numpy_version < (2, 1), reason="numpy < 2.1 makes no versioned capsules")


class Tensor:
    """A tensor of a library gpk does not know, exporting a numpy array through the
    array API's __dlpack__ (keywords passed on), and recording each request."""

    def __init__(self, array):
        self.array = array
        self.requests = []

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.requests.append({"stream": stream, "max_version": max_version})
        kwargs = {"stream": stream}
        if max_version is not None:
            kwargs["max_version"] = max_version
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class OldTensor(Tensor):
    """A producer from before DLPack 1.0: __dlpack__ takes stream alone, so asking
    for max_version is a TypeError, and its capsules are unversioned."""

    def __dlpack__(self, stream=None):
        self.requests.append({"stream": stream})
        return self.array.__dlpack__()


class Namespace:
    """An array API namespace whose from_dlpack makes NamespacedTensors."""

    received = []

    @staticmethod
    def from_dlpack(x):
        Namespace.received.append(x)
        return NamespacedTensor(np.from_dlpack(x))


class NamespacedTensor(Tensor):
    def __array_namespace__(self, api_version=None):
        return Namespace


def address(array):
    return np.asarray(array).__array_interface__["data"][0]


@pytest.fixture
def no_leak():
    """Every tensor gpk hands out is released once its consumers are gone."""
    gc.collect()
    before = _dlpack.exported_count()
    yield
    gc.collect()
    assert _dlpack.exported_count() == before


@pytest.mark.parametrize("kind", [Tensor, OldTensor], ids=["versioned", "unversioned"])
def test_every_operation_reads_dlpack_tensors(either_calls, rng, kind, no_leak):
    ctx = either_calls
    A, B = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    C = rng.standard_normal((5, 4))
    got = ctx.gemm(kind(A), kind(B), kind(C), alpha=2.0, beta=-1.0)
    np.testing.assert_allclose(np.asarray(got), 2 * A @ B - C, rtol=1e-12)
    S, T = rng.standard_normal((3, 5, 2)), rng.standard_normal((2, 6))
    np.testing.assert_allclose(np.asarray(ctx.matmul(kind(S), kind(T))), S @ T, rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(ctx.transpose(kind(A))), A.T)
    assert ctx.reduce(kind(A)) == ctx.reduce(A)
    assert ctx.max(kind(A.astype(np.float32))) == A.astype(np.float32).max()


@versioned_numpy
def test_versioned_capsules_are_asked_for_and_host_memory_gets_no_stream(ctx, rng):
    a, b = Tensor(rng.standard_normal((2, 2))), Tensor(rng.standard_normal((2, 2)))
    ctx.gemm(a, b)
    assert a.requests == [{"stream": None, "max_version": (1, 0)}] == b.requests


def test_producers_without_max_version_are_asked_again(ctx, rng):
    a = OldTensor(rng.standard_normal((2, 2)))
    ctx.gemm(a, a)
    assert a.requests == [{"stream": None}, {"stream": None}]  # A, then B: one request each


def test_inputs_and_outputs_are_read_in_place(recorded, rng):
    A, B = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    out = np.full((4, 2), np.nan)
    result = recorded.gemm(Tensor(A), Tensor(B), out=Tensor(out))
    assert isinstance(result, Tensor) and result.array is out
    np.testing.assert_allclose(out, A @ B, rtol=1e-12)
    (name, args), = recorded._calls.made
    pointers = {args[9], args[11], args[14]}
    assert pointers == {A.ctypes.data, B.ctypes.data, out.ctypes.data}, "a tensor was copied"


def test_results_go_back_through_the_callers_from_dlpack(ctx, rng, no_leak):
    Namespace.received.clear()
    A, B = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    got = ctx.gemm(NamespacedTensor(A), B)
    assert isinstance(got, NamespacedTensor)
    np.testing.assert_allclose(got.array, A @ B, rtol=1e-12)
    handed, = Namespace.received
    assert isinstance(handed, gpk.Array) and address(got.array) == handed.ptr, "the result was copied"
    # Any of the operands decides; a numpy one does not.
    assert isinstance(ctx.gemm(A, NamespacedTensor(B)), NamespacedTensor)
    assert isinstance(ctx.transpose(NamespacedTensor(A)), NamespacedTensor)
    assert isinstance(ctx.matmul(NamespacedTensor(A[None]), B), NamespacedTensor)
    del got, handed
    Namespace.received.clear()


def test_unknown_libraries_get_a_gpk_array(ctx, rng, no_leak):
    A, B = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    got = ctx.gemm(Tensor(A), Tensor(B))
    assert isinstance(got, gpk.Array) and got.shape == (4, 2) and got.dtype == np.float64
    assert got.device == "cpu" and got.__dlpack_device__() == (1, 0)
    assert got.ptr % 64 == 0
    taken = np.from_dlpack(got)
    assert address(taken) == address(got) == got.ptr
    np.testing.assert_allclose(taken, A @ B, rtol=1e-12)
    # It is an operand like any other, and an output.
    assert ctx.reduce(got) == pytest.approx(float((A @ B).sum()), rel=1e-12)
    assert ctx.gemm(Tensor(2 * A), Tensor(B), out=got) is got
    np.testing.assert_allclose(taken, 2 * A @ B, rtol=1e-12)
    del taken


def test_gpk_arrays_export_both_capsule_kinds_and_release_them(no_leak):
    array = gpk.Array((3, 2), np.float32, order="F")
    np.asarray(array)[...] = np.arange(6, dtype=np.float32).reshape(3, 2)
    for max_version, name in ((None, "dltensor"), ((1, 0), "dltensor_versioned"), ((1, 3), "dltensor_versioned"),
                              ((0, 8), "dltensor")):
        capsule = array.__dlpack__(max_version=max_version)
        assert f'"{name}"' in repr(capsule)
        del capsule  # never consumed: its destructor releases the tensor
    view = np.from_dlpack(array)
    assert view.strides == (4, 12) and address(view) == array.ptr
    np.testing.assert_array_equal(view, np.arange(6).reshape(3, 2))
    with pytest.raises(BufferError, match="no copy"):
        array.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="cuda:0"):
        array.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="stream=None"):
        array.__dlpack__(stream=1)
    assert array.__dlpack__(dl_device=(1, 0), copy=False) is not None


@versioned_numpy
def test_read_only_outputs_are_refused(ctx):
    A = np.ones((2, 2))
    for kind in (Tensor, OldTensor):
        out = np.zeros((2, 2))
        out.flags.writeable = False
        with pytest.raises(gpk.InvalidArgumentError, match="out is read-only") as info:
            ctx.gemm(kind(A), kind(A), out=kind(out))
        assert info.value.status == gpk.ERROR_INVALID_ARGUMENT
        with pytest.raises(gpk.InvalidArgumentError, match="out is read-only"):
            ctx.transpose(kind(A), out=kind(out))
        with pytest.raises(gpk.InvalidArgumentError, match="out is read-only"):
            ctx.matmul(kind(A[None]), kind(A), out=kind(out[None]))
        assert not out.any()
    A.flags.writeable = False  # a read-only input is fine (numpy exports it in a versioned capsule only)
    np.testing.assert_array_equal(np.asarray(ctx.gemm(Tensor(A), Tensor(A))), A @ A)


class CopyingTensor(Tensor):
    """A producer that exports a copy (flag IS_COPIED), as copy=True asks numpy to."""

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.array.__dlpack__(stream=stream, max_version=max_version, copy=True)


@versioned_numpy
def test_copied_outputs_are_refused(ctx):
    out = np.zeros((2, 2))
    with pytest.raises(gpk.InvalidArgumentError, match="out: its __dlpack__.. exported a copy"):
        ctx.gemm(np.ones((2, 2)), np.ones((2, 2)), out=CopyingTensor(out))
    assert not out.any()
    np.testing.assert_array_equal(np.asarray(ctx.gemm(CopyingTensor(np.ones((2, 2))), np.ones((2, 2)))), 2)


class Elsewhere:
    """A tensor that says it is on another device; being asked for a capsule is a
    failure of the test."""

    def __init__(self, device_type, device_id=0):
        self.device = (device_type, device_id)

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        raise AssertionError("a tensor gpk cannot reach was asked for its capsule")


def test_tensors_on_a_gpu_are_refused_by_the_host_backend(ctx):
    out = np.zeros((2, 2))
    with pytest.raises(gpk.InvalidArgumentError) as info:
        ctx.gemm(np.ones((2, 2)), Elsewhere(2, 0), out=out)
    assert info.value.message == "B is on cuda:0 but the context is on the host backend (host memory only)"
    with pytest.raises(gpk.InvalidArgumentError, match="out is on cuda:3 but the context is on the host"):
        ctx.transpose(np.ones((2, 2)), out=Elsewhere(2, 3))
    with pytest.raises(gpk.InvalidArgumentError, match="x is on metal:0; gpk takes host memory"):
        ctx.reduce(Elsewhere(8))
    assert not out.any()


class CudaContext:
    """What the DLPack reader asks of a context, for a CUDA one on GPU 1."""

    backend, device = "cuda", 1

    def _dlpack_stream(self):
        return 1


def test_a_tensor_on_another_gpu_names_both_devices():
    with pytest.raises(gpk.InvalidArgumentError) as info:
        _dlpack.acquire(Elsewhere(2, 0), "A", "Context.gemm", CudaContext(), False)
    assert info.value.message == "A is on cuda:0 but the context is on cuda:1"
    with pytest.raises(gpk.InvalidArgumentError, match="C is on rocm:1"):
        _dlpack.acquire(Elsewhere(10, 1), "C", "Context.gemm", CudaContext(), False)
    array = gpk.Array((1,), np.float32)
    array._device = 0  # a device array's identity, without a GPU (nothing is freed)
    array._host = None
    try:
        with pytest.raises(gpk.InvalidArgumentError, match="A is on cuda:0 but the context is on cuda:1"):
            _arrays.as_input(array, "A", "Context.gemm", CudaContext())
    finally:
        array.ptr = None


def test_unsupported_dtypes_and_broken_producers_are_named(ctx):
    with pytest.raises(gpk.NotSupportedError, match="A has dtype int8"):
        ctx.gemm(Tensor(np.ones((2, 2), np.int8)), np.ones((2, 2)))
    with pytest.raises(gpk.NotSupportedError, match="x has dtype complex128"):
        ctx.reduce(Tensor(np.ones(3, np.complex128)))

    class NoCapsule(Tensor):
        def __dlpack__(self, **kwargs):
            return "capsule"

    class Failing(Tensor):
        def __dlpack_device__(self):
            raise RuntimeError("device lost")

    with pytest.raises(gpk.InvalidArgumentError, match="B: its __dlpack__.. returned 'capsule'"):
        ctx.gemm(np.ones((2, 2)), NoCapsule(np.ones((2, 2))))
    with pytest.raises(gpk.InvalidArgumentError, match="A: its __dlpack_device__.. failed: RuntimeError"):
        ctx.transpose(Failing(np.ones((2, 2))))


def test_a_consumed_capsule_and_an_unknown_major_version_are_refused(ctx, no_leak):
    consumed = np.ones((2, 2)).__dlpack__()
    np.from_dlpack(type("Once", (), {"__dlpack__": lambda self, **k: consumed,
                                     "__dlpack_device__": lambda self: (1, 0)})())

    class Reused(Tensor):
        def __dlpack__(self, **kwargs):
            return consumed

    with pytest.raises(gpk.InvalidArgumentError, match="not an unconsumed DLPack capsule"):
        ctx.reduce(Reused(np.ones(2)))

    class Future(Tensor):
        def __dlpack__(self, **kwargs):
            capsule = self.array.__dlpack__(max_version=(1, 0))
            pointer = _dlpack._get_pointer(capsule, b"dltensor_versioned")
            _dlpack.DLManagedTensorVersioned.from_address(pointer).version.major = 2
            return capsule

    with pytest.raises(gpk.NotSupportedError, match="version 2.0; gpk reads version 1"):
        ctx.reduce(Future(gpk.Array((2,), np.float64)))


def test_strided_tensors_follow_numpys_rules(ctx, rng):
    big = rng.standard_normal((8, 9))
    A = big[::-2, 1::3]  # negative and non-unit strides: copied, as a numpy array would be
    B = rng.standard_normal((3, 5))
    np.testing.assert_allclose(np.asarray(ctx.gemm(Tensor(A), Tensor(B))), A @ B, rtol=1e-12)
    padded = np.zeros((4, 9))
    out = padded[:, 2:7]  # a unit stride along rows: written in place
    ctx.gemm(Tensor(A), Tensor(B), out=Tensor(out))
    np.testing.assert_allclose(out, A @ B, rtol=1e-12)
    assert not padded[:, :2].any() and not padded[:, 7:].any()
    with pytest.raises(gpk.InvalidArgumentError, match="unit stride"):
        ctx.gemm(Tensor(A), Tensor(B), out=Tensor(np.zeros((8, 10))[::2, ::2]))


def test_empty_and_zero_dimensional_tensors(ctx):
    Namespace.received.clear()
    got = ctx.matmul(NamespacedTensor(np.ones((0, 3, 4))), np.ones((4, 2)))
    assert isinstance(got, NamespacedTensor) and got.array.shape == (0, 3, 2)
    assert ctx.reduce(Tensor(np.full((), 2.5))) == 2.5
    assert ctx.reduce(Tensor(np.ones((0, 3)))) == 0.0
    Namespace.received.clear()


def test_c_and_a_separate_out(ctx, rng):
    A, B, C = rng.standard_normal((3, 2)), rng.standard_normal((2, 4)), rng.standard_normal((3, 4))
    out = np.full((3, 4), np.nan)
    ctx.gemm(Tensor(A), Tensor(B), Tensor(C), beta=0.5, out=Tensor(out))
    np.testing.assert_allclose(out, A @ B + 0.5 * C, rtol=1e-12)
    got = ctx.gemm(A, B, NamespacedTensor(C), beta=0.5)
    assert isinstance(got, NamespacedTensor)
    np.testing.assert_allclose(got.array, A @ B + 0.5 * C, rtol=1e-12)


def test_torch_cpu_tensors_come_back_as_torch_tensors(ctx, rng):
    torch = pytest.importorskip("torch")
    A, B = torch.randn(5, 3, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64)
    got = ctx.gemm(A, B)
    assert isinstance(got, torch.Tensor) and got.device.type == "cpu"
    torch.testing.assert_close(got, A @ B)
    out = torch.full((5, 4), float("nan"), dtype=torch.float64)
    assert ctx.gemm(A, B, out=out) is out
    torch.testing.assert_close(out, A @ B)
    assert isinstance(ctx.transpose(A), torch.Tensor)
    assert ctx.reduce(A) == pytest.approx(float(A.sum()), rel=1e-12)


def test_capsule_helpers_agree_with_ctypes_layout():
    # The structs' sizes in the DLPack header (dlpack.h, version 1.0, 64-bit).
    if ctypes.sizeof(ctypes.c_void_p) == 8:
        assert ctypes.sizeof(_dlpack.DLTensor) == 48
        assert ctypes.sizeof(_dlpack.DLManagedTensor) == 64
        assert ctypes.sizeof(_dlpack.DLManagedTensorVersioned) == 80


# ------------------------------------------- the pool of result memory (_cuda.py) --
# BlockPool with a fake driver: addresses from a counter, events whose completion the
# test decides. The GPU side (real streams, a consumer still reading) is in
# test_dlpack_gpu.py.

from gpk import _cuda  # noqa: E402
from gpk.constants import Status  # noqa: E402
from gpk.errors import OutOfMemoryError  # noqa: E402


class FakeEvent:
    def __init__(self, log):
        self.log = log
        self.pending = False
        self.hook = None  # called from done(), as a garbage collection there would run

    def record(self, stream):
        self.log.append(("record", stream))
        self.pending = True

    def wait(self, stream):
        self.log.append(("wait", stream))

    def done(self):
        if self.hook is not None:
            hook, self.hook = self.hook, None
            hook()
        return not self.pending


class FakeDriver:
    def __init__(self, memory=None):
        self.next = 0x1000
        self.live = set()
        self.log = []
        self.events = []
        self.memory = memory  # bytes the fake GPU has; None: no limit

    def alloc(self, nbytes):
        if self.memory is not None and sum(size for _, size in self.live) + nbytes > self.memory:
            raise OutOfMemoryError(Status.ERROR_OUT_OF_MEMORY, "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY", "gpk")
        address, self.next = self.next, self.next + nbytes
        self.live.add((address, nbytes))
        return address

    def release(self, address):
        self.live = {(a, n) for a, n in self.live if a != address}
        self.log.append(("free", address))

    def event(self):
        e = FakeEvent(self.log)
        self.events.append(e)
        return e

    def pool(self):
        return _cuda.BlockPool(self.alloc, self.release, self.event)


def test_pool_reuses_a_block_once_its_streams_are_done():
    d = FakeDriver()
    pool = d.pool()
    address, size = pool.take(1000)
    assert size == 1024 and pool.fresh == 1
    pool.give(address, size, {1, 7})
    assert sorted(e for e in d.log if e[0] == "record") == [("record", 1), ("record", 7)]
    # The streams' work is still queued: another block is taken, not this one.
    other, _ = pool.take(600)
    assert other != address and pool.fresh == 2
    for e in d.events:
        e.pending = False
    again, size_again = pool.take(1024)
    assert (again, size_again) == (address, 1024) and pool.fresh == 2
    assert not any(e[0] == "free" for e in d.log), "a block to be reused went to the driver"
    # Its events serve the next block that comes back: none made anew.
    made = len(d.events)
    pool.give(again, size_again, {3})
    assert len(d.events) == made


def test_pool_sends_blocks_of_unknown_streams_and_large_ones_to_the_driver():
    d = FakeDriver()
    pool = d.pool()
    for streams in (None, set()):
        address, size = pool.take(100)
        pool.give(address, size, streams)
        assert d.log[-1] == ("free", address) and pool.idle_bytes() == 0
    big, size = pool.take(_cuda.BlockPool.kMaxBlock + 1)
    assert size == _cuda.BlockPool.kMaxBlock + 1
    pool.give(big, size, {1})
    assert d.log[-1] == ("free", big)
    # No more than kMaxIdle bytes kept idle.
    most, idle = _cuda.BlockPool.kMaxBlock, _cuda.BlockPool.kMaxIdle
    blocks = [pool.take(most) for _ in range(idle // most + 1)]
    for address, size in blocks:
        pool.give(address, size, {1})
    assert pool.idle_bytes() == _cuda.BlockPool.kMaxIdle
    assert d.log[-1] == ("free", blocks[-1][0])


def test_pool_frees_idle_blocks_when_the_gpu_is_full_and_at_trim():
    d = FakeDriver(memory=4096)
    pool = d.pool()
    a, sa = pool.take(2048)
    b, sb = pool.take(2048)
    pool.give(a, sa, {1})
    pool.give(b, sb, {1})  # both idle, their events pending
    c, sc = pool.take(4096)  # no room without the idle blocks: they are freed first
    assert sc == 4096 and {("free", a), ("free", b)} <= set(d.log)
    pool.give(c, sc, {1})
    with pytest.raises(OutOfMemoryError):
        pool.take(8192)  # too large even with nothing idle: the error comes through
    assert pool.idle_bytes() == 0
    e, se = pool.take(512)
    pool.give(e, se, {1})
    assert pool.trim() and pool.idle_bytes() == 0 and d.log[-1] == ("free", e)
    assert not d.live
    assert not pool.trim()


def test_pool_takes_a_block_back_from_inside_take():
    """A deleter may run in the middle of take() (a collection while it asks an
    event): the block it gives back is kept, and the one taken is taken once."""
    d = FakeDriver()
    pool = d.pool()
    first, size = pool.take(512)
    second, _ = pool.take(512)
    pool.give(first, size, {1})
    d.events[0].pending = False
    d.events[0].hook = lambda: pool.give(second, size, {2})
    got, _ = pool.take(512)
    assert got == first
    assert pool.idle_bytes() == size
    d.events[-1].pending = False
    assert pool.take(512) == (second, size)
    assert pool.idle_bytes() == 0


@pytest.fixture
def fake_gpu(monkeypatch):
    """gpk.Array on a fake GPU 0: its memory from a BlockPool with the fake driver,
    its events fake ones."""
    d = FakeDriver()
    pool = d.pool()
    monkeypatch.setattr(_cuda, "pool", lambda device: pool)
    monkeypatch.setattr(_cuda, "Event", lambda device: d.event())
    return d, pool


def test_an_array_goes_back_to_the_pool_with_every_stream_it_was_used_on(fake_gpu, no_leak):
    d, pool = fake_gpu
    array = _dlpack.Array((4, 4), np.float32, device=0, stream=9)
    address = array.ptr
    array.written_on(9)
    capsule = array.__dlpack__(stream=5, max_version=(1, 0))
    assert ("wait", 5) in d.log  # the consumer's stream waits for gpk's work
    del array
    gc.collect()
    assert pool.idle_bytes() == 0  # the capsule still holds it
    del capsule  # never consumed: its destructor releases the tensor
    gc.collect()
    assert pool.idle_bytes() == 512
    assert sorted(e[1] for e in d.log if e[0] == "record") == [5, 9, 9]  # written_on's, then the pool's
    assert not any(e[0] == "free" for e in d.log)
    for e in d.events:
        e.pending = False
    assert _dlpack.Array((8, 16), np.float32, device=0, stream=9).ptr == address


@pytest.mark.parametrize("how", ["cuda_array_interface", "stream -1"])
def test_an_array_whose_consumer_stream_is_unknown_goes_to_the_driver(fake_gpu, how):
    d, pool = fake_gpu
    array = _dlpack.Array((4, 4), np.float32, device=0, stream=9)
    address = array.ptr
    if how == "cuda_array_interface":
        assert array.__cuda_array_interface__["data"][0] == address
    else:
        capsule = array.__dlpack__(stream=-1)
        del capsule  # never consumed: its destructor releases the tensor
    del array
    gc.collect()
    assert ("free", address) in d.log and pool.idle_bytes() == 0
