"""MXNet 1.x's test_ndarray.py test_ndarray_indexing / test_ndarray_slice, ported.

ndrt follows MXNet 1.x: a basic key that leaves no axis gives shape (1,) (``is_scalar``
cases compare through ``asscalar``).  MXNet refuses ``x[key] = v`` while recording; ndrt
records it (DESIGN.md: the tape records __setitem__ through operators), so the setitem
autograd case checks the gradient instead of an error."""

import numpy as np
import pytest

from runtime import autograd, nd


def _np_int(index, t=np.int32):
    conv = lambda v: None if v is None else t(v)
    if isinstance(index, slice):
        return slice(conv(index.start), conv(index.stop), conv(index.step))
    return tuple(slice(conv(e.start), conv(e.stop), conv(e.step)) if isinstance(e, slice)
                 else conv(e) for e in index)


def _cases():
    s = slice
    out = [(0, False), (np.int32(0), False), (np.int64(0), False),
           (5, False), (np.int32(5), False), (np.int64(5), False),
           (-1, False), (np.int32(-1), False), (np.int64(-1), False)]
    for sl in [s(5), s(1, 5), s(1, 5, 2), s(7, 0, -1), s(None, 6), s(None, 6, 3), s(1, None),
               s(1, None, 3), s(None, None, 2), s(None, None, -1), s(None, None, -2)]:
        out += [(sl, False), (_np_int(sl), False), (_np_int(sl, np.int64), False)]
    for t in [(s(None), s(None), 1, 8), (s(None), s(None), -1, 8), (s(None), s(None), 1, -8),
              (s(None), s(None), -1, -8), (s(None), 2, s(1, 5), 1), (1, 2, 3), (-1, -2, -3),
              (s(None, None, -1), 2, s(1, 5), 1), (s(None, None, -1), 2, s(1, 7, 2), 1),
              (s(1, 8, 2), s(14, 2, -2), s(3, 8), s(0, 7, 3)), (s(1, 8, 2), 1, s(3, 8), 2)]:
        out += [(t, False), (_np_int(t), False), (_np_int(t, np.int64), False)]
    for t in [(1, 2, 3, 4), (-4, -3, -2, -1)]:
        out += [(t, True), (_np_int(t), True), (_np_int(t, np.int64), True)]
    out += [((1, Ellipsis, -1), False), ((s(2), Ellipsis, None, 0), False), (None, False),
            ((1, None, -2, 3, -4), False), ((1, s(2, 5), None), False),
            ((s(None), s(1, 4), None, s(2, 3)), False),
            ((s(1, 3), s(1, 3), s(1, 3), s(1, 3), None), False),
            ((s(1, 3), s(1, 3), None, s(1, 3), s(1, 3)), False),
            ((None, s(1, 2), 3, None), False), ((1, None, 2, 3, None, None, 4), False)]
    i32, i64 = np.int32, np.int64
    out += [([1], False), ([1, 2], False), ([2, 1, 3], False), ([7, 5, 0, 3, 6, 2, 1], False),
            (np.array([6, 3], i32), False), (np.array([[3, 4], [0, 6]], i32), False),
            (np.array([[7, 3], [2, 6], [0, 5], [4, 1]], i32), False),
            (np.array([[7, 3], [2, 6], [0, 5], [4, 1]], i64), False),
            (np.array([[2], [0], [1]], i32), False), (np.array([[2], [0], [1]], i64), False),
            ("nd", [4, 7], i32), ("nd", [4, 7], i64), ("nd", [[3, 6], [2, 1]], i32),
            ("nd", [[3, 6], [2, 1]], i64), ("nd", [[7, 3], [2, 6], [0, 5], [4, 1]], i32),
            ("nd", [[7, 3], [2, 6], [0, 5], [4, 1]], i64),
            ((1, [2, 3]), False), ((1, [2, 3], np.array([[3], [0]], i32)), False),
            ((1, [2, 3], np.array([[3], [0]], i64)), False),
            ((1, [2], np.array([[5], [3]], i32), s(None)), False),
            ((1, [2], np.array([[5], [3]], i64), s(None)), False),
            ((1, [2, 3], np.array([[6], [0]], i32), s(2, 5)), False),
            ((1, [2, 3], np.array([[4], [7]], i64), s(2, 5, 2)), False),
            ((1, [2], np.array([[3]], i32), s(None, None, -1)), False),
            ((1, [2], np.array([[3]], i32), np.array([[5, 7], [2, 4]], i64)), False),
            ([0], False), ([0, 1], False), ([1, 2, 3], False), ([2, 0, 5, 6], False),
            (([1, 1], [2, 3]), False), (([1], [4], [5]), False), (([1], [4], [5], [6]), False),
            (([[1]], [[2]]), False), (([[1]], [[2]], [[3]], [[4]]), False),
            ((s(0, 2), [[1], [6]], s(0, 2), s(0, 5, 2)), False),
            (([[[[1]]]], [[1]], s(0, 3), [1, 5]), False),
            (([[[[1]]]], 3, s(0, 3), [1, 3]), False), (([[[[1]]]], 3, s(0, 3), 0), False),
            (([[[[1]]]], [[2], [12]], s(0, 3), s(None)), False),
            (([1, 2], s(3, 5), [2, 3], [3, 4]), False), (([1, 2], s(3, 5), (2, 3), [3, 4]), False),
            (([1, 2], s(3, 5), None, None, [3, 4]), False),
            ((s(None), s(3, 5), None, None, [2, 3], [3, 4]), False),
            ((s(None), s(3, 5), None, [2, 3], None, [3, 4]), False),
            ((None, s(None), s(3, 5), [2, 3], None, [3, 4]), False),
            ((None, s(None), None, s(3, 5), [2, 3], None, [3, 4]), False),
            (([2, 3, 4], None, [3, 4, 6], None, s(1, 2), None, [1, 2, 3]), False)]
    return out


CASES = _cases()
SHAPE = (8, 16, 9, 9)


def _key(case):
    """(mx key, numpy key, is_scalar)."""
    if isinstance(case[0], str):
        k = nd.array(case[1], dtype=case[2])
        return k, k.asnumpy(), False
    index, scalar = case
    if isinstance(index, tuple):
        return index, tuple(i.asnumpy() if isinstance(i, nd.NDArray) else i
                            for i in index), scalar
    return index, index, scalar


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_ndarray_indexing_getitem(case):
    a = np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE)
    key, npkey, scalar = _key(case)
    want = a[npkey]
    got = nd.array(a, dtype=a.dtype)[key]
    if scalar:
        assert got.shape == (1,)             # MXNet 1.x
        assert got.asscalar() == want
    else:
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.asnumpy(), want)


def _basic(index):
    ok = lambda i: isinstance(i, (int, np.integer, slice))
    return ok(index) or (isinstance(index, tuple) and all(ok(i) for i in index))


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_ndarray_indexing_setitem(case):
    rng = np.random.default_rng(0)
    key, npkey, scalar = _key(case)
    x = nd.array(np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE), dtype="int32")
    a = x.asnumpy()

    def check(value, npvalue=None):
        a[npkey] = value.asnumpy() if isinstance(value, nd.NDArray) else (
            value if npvalue is None else npvalue)
        x[key] = value
        np.testing.assert_array_equal(x.asnumpy(), a)

    if scalar:
        check(int(rng.integers(-10000, 0)))
        v = [int(rng.integers(-10000, 0))]
        check(v, v[0])
        return
    shp = a[npkey].shape
    check(rng.integers(-10000, 0, size=shp))
    check(int(rng.integers(-10000, 0)))
    if len(shp) > 1:
        v = rng.integers(-10000, 0, size=(shp[-1],))
        check(nd.array(v))
        check(v)
        if _basic(key):
            check(np.array(v.reshape((1, 1, 1) + v.shape)))
        check([int(rng.integers(-10000, 0))] * shp[-1])


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_ndarray_indexing_getitem_autograd(case):
    key, _, _ = _key(case)
    x = nd.array(np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE), dtype="int32")
    x.attach_grad()
    with autograd.record():
        y = x[key]
    y.backward()
    g = nd.zeros_like(x)
    g[key] = nd.ones_like(y)
    np.testing.assert_array_equal(x.grad.asnumpy(), g.asnumpy())


def test_ndarray_slice():
    a = nd.array(np.random.uniform(-10, 10, (10,)))
    a2 = a.asnumpy()
    np.testing.assert_array_equal(a[3:8].asnumpy(), a2[3:8])
    a2[3:8] *= 10
    a[3:8] = a2[3:8]
    np.testing.assert_array_equal(a[3:8].asnumpy(), a2[3:8])

    a = nd.random.uniform(shape=(3, 4, 5, 6, 7))
    a2 = a.asnumpy()
    np.testing.assert_array_equal(a[1, 3:4, :, 1:5].asnumpy(), a2[1, 3:4, :, 1:5])
    assert a[1, 2, 3, 4, 5].asscalar() == a2[1, 2, 3, 4, 5]
    assert a[-1, -2, -3, -4, -5].asscalar() == a2[-1, -2, -3, -4, -5]

    a = nd.array([[0, 1], [2, 3]])
    assert (a[[1, 1, 0], [0, 1, 0]].asnumpy() == [2, 3, 0]).all()
    assert (a[nd.array([1, 1, 0]), nd.array([0, 1, 0])].asnumpy() == [2, 3, 0]).all()

    a = nd.random.uniform(shape=(4, 4))
    a2 = a.asnumpy()
    for i in range(-4, 0):
        assert a[i, i].asscalar() == a2[i, i]
        np.testing.assert_array_equal(a[:, i].asnumpy(), a2[:, i])
        np.testing.assert_array_equal(a[i, :].asnumpy(), a2[i, :])


def test_assign_float_and_row_mxnet_issues():
    a = np.array([47.844944], dtype=np.float32)
    b = nd.zeros(1, dtype=np.float32)
    b[0] = a
    np.testing.assert_array_equal(b.asnumpy(), a)
    b[0] = a[0]
    np.testing.assert_array_equal(b.asnumpy(), a)
    c = nd.zeros((4, 1), dtype=np.int32)
    c[1, 0] = int(16800001)
    assert c.asnumpy()[1, 0] == 16800001
    assert (c - 1).asnumpy()[1, 0] == 16800000
    m = np.random.random((10, 10)).astype(np.float32)
    x = nd.array(m)
    m[0] = m[1]
    x[0] = x[1]
    m[1] = v = np.random.random(10).astype(np.float32).tolist()
    x[1] = v
    m[0, :] = m[1]
    x[0, :] = x[1]
    np.testing.assert_array_equal(x.asnumpy(), m)


def test_bool_mxnet():
    assert not bool(nd.array([]))
    assert not bool(nd.zeros((1,)))
    assert bool(nd.ones((1,)))
    with pytest.raises(ValueError):
        bool(nd.ones((2, 3, 4)))


# -- x[key] = value while recording -------------------------------------------------------
# MXNet 1.x refuses every in-place write while recording; ndrt refuses a write into an
# array on the tape (basic and advanced keys alike) and records a write of a recorded value
# into an array off the tape (_slice_assign / _take_assign), so that its gradient flows.

def _grad_through_setitem(key, shape, wshape, coef):
    w = nd.array(np.arange(1, 1 + int(np.prod(wshape)), dtype=np.float32).reshape(wshape))
    w.attach_grad()
    c = nd.array(coef)
    with autograd.record():
        buf = nd.zeros(shape)
        buf[key] = w * 2
        loss = (buf * c).sum() + w.sum()
    loss.backward()
    return w.grad.asnumpy()


@pytest.mark.parametrize("key,wshape", [
    (slice(0, 1), (1, 4)), ((slice(None), 1), (3,)), ((slice(None), 1), (1,)),
    ((1, 2), (1,)), ((slice(1, 3), slice(0, 4, 2)), (2, 2)), ((None, 1), (1, 1, 4)),
    (([0, 2], 1), (2,)), (([0, 2], slice(1, 3)), (2, 2)), ((np.array([2, 0]),), (2, 4))])
def test_setitem_of_a_recorded_value_records(key, wshape):
    coef = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    got = _grad_through_setitem(key, (3, 4), wshape, coef)
    # d/dw_i: 2 * sum(coef * (zeros with key set to the basis vector e_i)) + 1 (NumPy)
    want = np.empty(int(np.prod(wshape)))
    for i in range(want.size):
        e = np.zeros(want.size, np.float32)
        e[i] = 1
        b = np.zeros((3, 4), np.float32)
        b[key] = e.reshape(wshape) if np.ndim(b[key]) else e[0]    # NumPy: 0-d there
        want[i] = 2 * (coef * b).sum() + 1
    np.testing.assert_allclose(got, want.reshape(wshape), rtol=1e-6)


@pytest.mark.parametrize("key", [slice(0, 1), ([0, 2], 1), (np.array([True, False, True]),)])
def test_setitem_into_an_array_on_the_tape_is_refused(key):
    x = nd.ones((3, 4))
    x.attach_grad()
    before = x.asnumpy().copy()
    with autograd.record():
        with pytest.raises(RuntimeError, match="on the autograd tape while recording"):
            x[key] = 5
    np.testing.assert_array_equal(x.asnumpy(), before)
