"""CUDA glue over cuda-python's driver API, in RMM's three layers:

1. ``call(name, *args)``: one driver function, one status checker (``check_status``);
2. ``CudaUpstream`` / ``PinnedUpstream``: upstream classes that the pools use;
3. the public functions in :mod:`allocator` (pools, stats, ``cupy.use_pool``).

Nothing here touches the driver at import: ``cuInit`` runs on the first allocation
or query, so ``import allocator`` works on machines with no GPU and no driver.  A
CUDA context does not survive ``fork()``: a forked child that reaches this module
gets a RuntimeError that says so.
"""

import os
import threading

from allocator._upstream import Upstream
from allocator.errors import CudaError

_lock = threading.Lock()
_state = {"pid": None, "driver": None, "contexts": {}}
FORK_MESSAGE = ("CUDA cannot be used in a process forked after CUDA was initialised (the "
                "parent's CUDA context does not survive fork); start workers with "
                "multiprocessing's 'spawn' or 'forkserver' method")


def _driver():
    """The cuda.bindings.driver module (imported on first use; tests may replace it)."""
    if _state["driver"] is None:
        from cuda.bindings import driver
        _state["driver"] = driver
    return _state["driver"]


def check_status(status, call):
    """Raise CudaError naming ``call`` and the driver's error unless ``status`` is success."""
    drv = _driver()
    if status == drv.CUresult.CUDA_SUCCESS:
        return
    try:
        err, name = drv.cuGetErrorName(status)
        name = name.decode() if err == drv.CUresult.CUDA_SUCCESS else str(status)
        err, text = drv.cuGetErrorString(status)
        text = text.decode() if err == drv.CUresult.CUDA_SUCCESS else ""
    except Exception:
        name, text = str(status), ""
    raise CudaError(f"{call}: {name}" + (f" ({text})" if text else ""), int(status))


def call(name, *args):
    """Call driver function ``name`` and return its values after checking the status."""
    out = getattr(_driver(), name)(*args)
    check_status(out[0], name)
    return out[1] if len(out) == 2 else out[1:]


def init():
    """Initialise the driver once per process (lazily)."""
    pid = os.getpid()
    if _state["pid"] == pid:
        return
    if _state["pid"] is not None:
        raise RuntimeError(FORK_MESSAGE)
    with _lock:
        if _state["pid"] == pid:
            return
        try:
            drv = _driver()
            status = drv.cuInit(0)[0]
        except Exception as e:  # no libcuda.so: cuda-python raises when it loads the driver
            raise CudaError(f"cuInit: no NVIDIA driver could be loaded ({e}); install the "
                            "NVIDIA driver or use the CPU device") from None
        check_status(status, "cuInit")
        _state["pid"] = pid


def after_fork_in_child():
    """Forget the parent's contexts; later CUDA use in this process raises FORK_MESSAGE."""
    if _state["pid"] is not None:
        _state["contexts"] = {}
        _state["pid"] = -1


def device_count():
    """Number of CUDA devices, 0 where there is no driver or no device."""
    try:
        init()
        return call("cuDeviceGetCount")
    except CudaError:
        return 0


def activate(device_id):
    """Make the primary context of ``device_id`` current on this thread."""
    init()
    ctx = _state["contexts"].get(device_id)
    if ctx is None:
        n = call("cuDeviceGetCount")
        if not 0 <= device_id < n:
            raise ValueError(f"device id must be in [0, {n}) on this machine "
                             f"(got gpu({device_id}); {n} CUDA device(s) found)")
        dev = call("cuDeviceGet", device_id)
        ctx = _state["contexts"].setdefault(device_id, call("cuDevicePrimaryCtxRetain", dev))
    call("cuCtxSetCurrent", ctx)


def _is_oom(status):
    return status == _driver().CUresult.CUDA_ERROR_OUT_OF_MEMORY


class CudaUpstream(Upstream):
    """Device memory of one GPU (cuMemAlloc / cuMemFree).

    ``reserve_percent`` keeps that share of the device's memory out of the pool's
    reach (MXNet's MXNET_GPU_MEM_POOL_RESERVE): a request that would leave less free
    counts as out of memory, so the pool empties its cache first.
    """

    def __init__(self, device_id=0, reserve_percent=5):
        super().__init__("gpu", device_id, False)
        self.reserve_percent = reserve_percent

    def alloc(self, nbytes):
        activate(self.device_id)
        if self.reserve_percent:
            free, total = call("cuMemGetInfo")
            if free < nbytes + total * self.reserve_percent // 100:
                return 0
        status, ptr = _driver().cuMemAlloc(nbytes)
        if _is_oom(status):
            return 0
        check_status(status, "cuMemAlloc")
        return int(ptr)

    def free(self, ptr, nbytes):
        if _state["pid"] != os.getpid():
            return 0  # forked child: the parent's memory is not ours to free
        activate(self.device_id)
        call("cuMemFree", ptr)
        return 0

    def mem_info(self):
        activate(self.device_id)
        return tuple(call("cuMemGetInfo"))


class PinnedUpstream(Upstream):
    """Page-locked host memory (cuMemHostAlloc, portable to every context) for transfers."""

    def __init__(self):
        super().__init__("cpu_pinned", 0, True)

    def alloc(self, nbytes):
        activate(0)
        drv = _driver()
        status, ptr = drv.cuMemHostAlloc(nbytes, drv.CU_MEMHOSTALLOC_PORTABLE)
        if _is_oom(status):
            return 0
        check_status(status, "cuMemHostAlloc")
        return int(ptr)

    def free(self, ptr, nbytes):
        if _state["pid"] != os.getpid():
            return 0
        activate(0)
        call("cuMemFreeHost", ptr)
        return 0
