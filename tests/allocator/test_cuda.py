"""CUDA pools: the glue on a fake driver (runs everywhere) and the real thing (gpu)."""

import enum
import os
import pickle

import numpy as np
import pytest

import allocator
from allocator import BestFitPool, CudaError, OutOfMemoryError, _cuda

MiB = 1 << 20


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_INVALID_VALUE = 1


class FakeDriver:
    """Enough of cuda.bindings.driver for the allocator, with one device of `total` bytes."""
    CUresult = CUresult
    CU_MEMHOSTALLOC_PORTABLE = 1

    def __init__(self, total=1 << 30, ndev=1):
        self.total, self.ndev, self.live, self.next = total, ndev, {}, 1 << 32
        self.calls = []

    def _ok(self, *vals):
        return (CUresult.CUDA_SUCCESS, *vals)

    def cuInit(self, flags):
        self.calls.append("cuInit")
        return self._ok()

    def cuDeviceGetCount(self):
        return self._ok(self.ndev)

    def cuDeviceGet(self, i):
        return self._ok(i)

    def cuDevicePrimaryCtxRetain(self, dev):
        return self._ok(f"ctx{dev}")

    def cuCtxSetCurrent(self, ctx):
        return self._ok()

    def cuMemGetInfo(self):
        return self._ok(self.total - sum(self.live.values()), self.total)

    def cuMemAlloc(self, n):
        self.calls.append(("cuMemAlloc", n))
        if sum(self.live.values()) + n > self.total:
            return (CUresult.CUDA_ERROR_OUT_OF_MEMORY, 0)
        p, self.next = self.next, self.next + n + MiB
        self.live[p] = n
        return self._ok(p)

    def cuMemFree(self, p):
        self.calls.append(("cuMemFree", p))
        if p not in self.live:
            return (CUresult.CUDA_ERROR_INVALID_VALUE,)
        del self.live[p]
        return self._ok()

    cuMemHostAlloc = lambda self, n, flags: self.cuMemAlloc(n)
    cuMemFreeHost = cuMemFree

    def cuGetErrorName(self, status):
        return self._ok(CUresult(status).name.encode())

    def cuGetErrorString(self, status):
        return self._ok(b"fake error text")


@pytest.fixture
def fake_driver(monkeypatch):
    drv = FakeDriver()
    monkeypatch.setattr(_cuda, "_state", {"pid": None, "driver": drv, "contexts": {}})
    return drv


def test_import_needs_no_driver():
    assert "cuInit" not in str(_cuda._state)    # nothing initialised at import
    assert callable(allocator.get_pool)


def test_initialisation_is_lazy_and_once(fake_driver):
    up = _cuda.CudaUpstream(0, reserve_percent=0)
    assert fake_driver.calls == []
    p = up.alloc(4096)
    up.free(p, 4096)
    up.alloc(4096)
    assert fake_driver.calls.count("cuInit") == 1


def test_status_errors_name_the_call_and_are_picklable(fake_driver):
    with pytest.raises(CudaError, match=r"cuMemFree: CUDA_ERROR_INVALID_VALUE \(fake error text\)") as ei:
        _cuda.call("cuMemFree", 12345)
    err = pickle.loads(pickle.dumps(ei.value))
    assert str(err) == str(ei.value) and err.status == CUresult.CUDA_ERROR_INVALID_VALUE


def test_bad_device_id_is_a_clear_error(fake_driver):
    with pytest.raises(ValueError, match=r"device id must be in \[0, 1\).*gpu\(3\)"):
        _cuda.activate(3)


def test_device_oom_runs_the_ladder_then_raises(fake_driver):
    fake_driver.total = 64 * MiB
    pool = BestFitPool(_cuda.CudaUpstream(0, reserve_percent=0), device="gpu(0)")
    held = pool.alloc(30 * MiB)
    pool.alloc(20 * MiB)                        # cached
    big = pool.alloc(30 * MiB)                  # needs the cached 20 MiB segment back
    assert pool.memory_stats()["num_alloc_retries"] == 1
    with pytest.raises(OutOfMemoryError, match="out of memory on gpu\\(0\\)"):
        pool.alloc(30 * MiB)
    del held, big
    pool.empty_cache()
    assert fake_driver.live == {}


def test_reserve_percent_keeps_memory_free(fake_driver):
    fake_driver.total = 100 * MiB
    up = _cuda.CudaUpstream(0, reserve_percent=10)
    assert up.alloc(89 * MiB) != 0
    assert up.alloc(2 * MiB) == 0               # would leave less than 10 MiB free


def test_gpu_pool_is_built_from_its_own_settings(fake_driver, monkeypatch):
    from allocator import _registry
    for name, value in (("_pools", {}), ("_cfg", None), ("_bad", {})):
        monkeypatch.setattr(_registry, name, value)
    monkeypatch.setenv("NDRT_GPU_MEM_POOL_RESERVE", "10")
    monkeypatch.setenv("NDRT_CPU_MEM_POOL_TYPE", "bogus")     # not the gpu pool's concern
    pool = allocator.get_pool("gpu(0)")
    assert pool.strategy == "bestfit" and pool.upstream.reserve_percent == 10


def test_missing_driver_gives_a_clear_error(monkeypatch):
    class NoDriver:
        CUresult = CUresult

        def cuInit(self, flags):
            raise RuntimeError('"cuda" is an NVIDIA driver library and can only be found ...')
    monkeypatch.setattr(_cuda, "_state", {"pid": None, "driver": NoDriver(), "contexts": {}})
    with pytest.raises(CudaError, match="no NVIDIA driver could be loaded"):
        _cuda.init()
    assert _cuda.device_count() == 0


def test_forked_child_refuses_cuda(fake_driver):
    _cuda.init()
    pid = os.fork()
    if pid == 0:
        try:
            _cuda.after_fork_in_child()
            try:
                _cuda.init()
                os._exit(3)
            except RuntimeError as e:
                os._exit(0 if "forked" in str(e) else 4)
        finally:
            os._exit(5)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


@pytest.mark.gpu
def test_real_device_pool():
    pool = allocator.get_pool("gpu(0)")
    start = pool.memory_stats()["allocated_bytes.all.current"]
    buf = allocator.alloc(3 * MiB, "gpu(0)")
    cai = buf.__cuda_array_interface__
    assert cai["data"][0] == buf.ptr != 0
    host = np.arange(3 * MiB // 4, dtype=np.float32)
    _cuda.call("cuMemcpyHtoD", buf.ptr, host.ctypes.data, host.nbytes)
    back = np.empty_like(host)
    _cuda.call("cuMemcpyDtoH", back.ctypes.data, buf.ptr, host.nbytes)
    np.testing.assert_array_equal(back, host)
    del buf
    assert pool.memory_stats()["allocated_bytes.all.current"] == start
    free, total = pool.upstream.mem_info()
    assert 0 < free <= total


@pytest.mark.gpu
def test_real_device_oom_is_clean():
    pool = allocator.get_pool("gpu(0)")
    free, total = pool.upstream.mem_info()
    with pytest.raises(OutOfMemoryError, match="gpu\\(0\\)"):
        allocator.alloc(total * 2, "gpu(0)")
    b = allocator.alloc(MiB, "gpu(0)")           # still usable
    del b


@pytest.mark.gpu
def test_real_pinned_pool_is_host_accessible():
    buf = allocator.alloc(MiB, "cpu_pinned")
    a = np.frombuffer(buf, np.uint8)
    a[:] = 5
    assert int(a.sum()) == 5 * MiB
    del a, buf


@pytest.mark.gpu
def test_cupy_allocates_from_our_pool():
    cupy = pytest.importorskip("cupy")
    from allocator.cupy import use_pool
    pool = use_pool(0)
    try:
        before = pool.memory_stats()["allocated_bytes.all.current"]
        x = cupy.arange(1 << 20, dtype=cupy.float32)
        assert pool.memory_stats()["allocated_bytes.all.current"] >= before + 4 * MiB
        assert float(x.sum()) == float(np.arange(1 << 20, dtype=np.float64).sum())
        del x
        assert pool.memory_stats()["allocated_bytes.all.current"] == before
    finally:
        cupy.cuda.set_allocator()


def test_cupy_bridge_without_cupy_says_which_extra(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_cupy(name, *a, **k):
        if name == "cupy":
            raise ImportError("No module named 'cupy'")
        return real_import(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_cupy)
    from allocator.cupy import use_pool
    with pytest.raises(ImportError, match=r"ndrt\[gpu\]"):
        use_pool(0)
