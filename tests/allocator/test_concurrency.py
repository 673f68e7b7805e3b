"""Threads, destructors and fork()."""

import os
import random
import sys
import threading

import numpy as np
import pytest

import allocator
from allocator import BestFitPool, Device, HostUpstream, NaivePool, RoundPool
from tests.allocator.mock import FakeUpstream


# NaivePool takes every block from the OS (page faults dominate), hence its shorter run.
@pytest.mark.parametrize("cls, ops", [(NaivePool, 600), (RoundPool, 3000), (BestFitPool, 3000)])
def test_concurrent_alloc_free_from_threads(cls, ops):
    pool = cls(HostUpstream())
    errors = []

    def work(seed):
        rng = random.Random(seed)
        live = []
        try:
            for _ in range(ops):
                if live and rng.random() < 0.45:
                    b, fill = live.pop(rng.randrange(len(live)))
                    assert bytes(memoryview(b)[:8]) == bytes([fill]) * min(8, b.size)
                else:
                    b = pool.alloc(rng.choice([8, 100, 4096, 70_000, 3 << 20]))
                    fill = seed % 256
                    memoryview(b)[:8] = bytes([fill]) * 8 if b.size >= 8 else memoryview(b)[:8]
                    live.append((b, fill))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)       # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    s = pool.memory_stats()
    assert s["allocated_bytes.all.current"] == 0 == s["allocation.all.current"]
    pool.empty_cache()
    assert pool.memory_stats()["reserved_bytes.all.current"] == 0


def test_buffers_freed_by_finalizers_on_other_threads():
    pool = RoundPool(HostUpstream())

    class Holder:
        def __init__(self):
            self.buf = pool.alloc(1000)
            self.me = self            # cycle: only gc frees it, from whatever thread

        def __del__(self):
            pool.alloc(10)            # allocating from a finalizer is fine too

    def churn():
        for _ in range(2000):
            Holder()
            pool.alloc(64)

    threads = [threading.Thread(target=churn) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        assert not t.is_alive(), "deadlock"
    import gc
    gc.collect()
    assert pool.memory_stats()["allocated_bytes.all.current"] == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_fork_child_host_pool_works_and_device_pool_refuses():
    from allocator import _registry
    fake_gpu = RoundPool(FakeUpstream(kind="gpu"), device=Device("gpu", 0))
    _registry._pools[Device("gpu", 0)] = fake_gpu      # stands in for a CUDA pool
    parent_buf = allocator.alloc(4096)
    np.frombuffer(parent_buf, np.uint8)[:] = 9
    gpu_buf = fake_gpu.alloc(256)
    try:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:                                   # child
            code = 1
            try:
                os.close(r)
                b = allocator.alloc(1 << 20)
                np.frombuffer(b, np.uint8)[:] = 1
                ok_host = int(np.frombuffer(b, np.uint8).sum()) == 1 << 20
                ok_parent = int(np.frombuffer(parent_buf, np.uint8)[0]) == 9
                del b
                try:
                    fake_gpu.alloc(256)
                    msg = "no error"
                except RuntimeError as e:
                    msg = str(e)
                del gpu_buf                            # freeing parent memory: dropped
                os.write(w, f"{ok_host} {ok_parent} {msg}".encode())
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        with os.fdopen(r) as f:
            report = f.read()
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0, report
        assert report.startswith("True True gpu(0) pool: CUDA cannot be used in a process "
                                 "forked"), report
        assert fake_gpu.alloc(256).size == 256         # the parent's pool is untouched
    finally:
        del gpu_buf
        _registry._pools.pop(Device("gpu", 0))
