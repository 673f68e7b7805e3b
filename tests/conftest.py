"""Shared pytest setup: the `gpu` marker skips without a driver; pools must balance."""

import gc
import sys

import pytest


def _have_gpu():
    try:
        from allocator import _cuda
        return _cuda.device_count() > 0
    except Exception:
        return False


HAVE_GPU = _have_gpu()


def pytest_collection_modifyitems(config, items):
    if HAVE_GPU:
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and driver")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _allocated():
    import allocator
    return {str(d): p.memory_stats()["allocated_bytes.all.current"]
            for d, p in allocator.pools().items()}


@pytest.fixture(autouse=True)
def pools_balance():
    """Every test must leave each process-wide pool with no more allocated bytes than it
    started with, once the cached backward plans have released their buffers.  gc runs only when the counts differ (a full collection per test would
    double the suite's time); garbage of earlier tests freed meanwhile lowers the count,
    which is fine."""
    before = _allocated()
    yield
    after = _allocated()
    if after != before:
        autograd = sys.modules.get("runtime.autograd")
        if autograd is not None:
            autograd.clear_plan_cache()      # the backward plans keep their buffers
        gc.collect()
        after = _allocated()
    leaked = {d: after[d] - before.get(d, 0) for d in after if after[d] > before.get(d, 0)}
    assert not leaked, f"pool allocated bytes grew during the test: {leaked}"
