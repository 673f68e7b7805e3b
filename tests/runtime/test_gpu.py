"""GPU arrays (marked gpu: skipped without an NVIDIA driver)."""

import numpy as np
import pytest

import allocator
import runtime as rt
from runtime import nd
from tests.runtime.conftest import assert_same

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool"])
def test_create_and_copy_back(dtype):
    ref = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    x = nd.array(ref, ctx=rt.gpu(0), dtype=dtype)
    assert x.ctx == rt.gpu(0)
    assert_same(x, ref)
    assert_same(nd.zeros((2, 2), ctx=rt.gpu(0), dtype=dtype), np.zeros((2, 2), dtype))
    assert_same(nd.ones(3, ctx=rt.gpu(0), dtype=dtype), np.ones(3, dtype))


def test_device_memory_comes_from_the_gpu_pool():
    pool = allocator.get_pool("gpu(0)")
    start = pool.memory_stats()["allocated_bytes.all.current"]
    x = nd.zeros((1024, 1024), ctx=rt.gpu(0))
    assert pool.memory_stats()["allocated_bytes.all.current"] >= start + 4 << 20
    cai = x.__cuda_array_interface__
    assert cai["shape"] == (1024, 1024) and cai["typestr"] == "<f4"
    del x
    assert pool.memory_stats()["allocated_bytes.all.current"] == start


@pytest.mark.parametrize("n", [10, 3 << 20])   # small, and large enough for pinned staging
def test_copies_between_host_and_device(n):
    ref = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    g = nd.array(ref).copyto(rt.gpu(0))
    assert_same(g, ref)
    h = g.copyto(rt.cpu())
    assert_same(h, ref)
    g2 = g.copy()
    assert g2.ctx == rt.gpu(0)
    assert_same(g2, ref)
    dst = nd.zeros(n, ctx=rt.gpu(0))
    nd.array(ref).copyto(dst)
    assert_same(dst, ref)


def test_views_and_setitem_on_gpu():
    ref = np.arange(12, dtype=np.float32).reshape(4, 3)
    x = nd.array(ref, ctx=rt.gpu(0))
    assert_same(x[1:3], ref[1:3])
    assert_same(x[2], ref[2])
    assert_same(x.reshape(-1), ref.reshape(-1))
    x[1] = 7
    ref[1] = 7
    assert_same(x, ref)
    with pytest.raises(TypeError, match="device memory"):
        memoryview(x)
    assert_same(x.astype("int32"), ref.astype(np.int32))


def test_sparse_to_gpu_and_back():
    ref = np.array([[0, 1, 0], [2, 0, 3]], np.float32)
    c = nd.sparse.csr_matrix(ref).copyto(rt.gpu(0))
    assert c.ctx == rt.gpu(0) and c.stype == "csr"
    assert_same(c.tostype("default"), ref)
    r = nd.sparse.row_sparse_array(ref, ctx=rt.gpu(0))
    assert_same(r.tostype("default"), ref)


def test_dlpack_with_cupy():
    cupy = pytest.importorskip("cupy")
    x = nd.array([[1, 2], [3, 4]], ctx=rt.gpu(0))
    c = cupy.from_dlpack(x)
    assert int(c.data.ptr) == x.__cuda_array_interface__["data"][0]
    y = nd.from_dlpack(cupy.arange(4, dtype=cupy.float32))
    assert y.ctx == rt.gpu(0)
    assert_same(y, np.arange(4, dtype=np.float32))
