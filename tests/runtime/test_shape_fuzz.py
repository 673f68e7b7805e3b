"""Random shapes — huge (up to 2**63 - 1 and beyond), negative, reshape codes — through
creation, reshape, views and sparse shapes: a result equal to NumPy's or a clean exception,
never a signal.

The fuzzing runs in a child interpreter (``run_isolated``), so that a crash fails the test
instead of killing pytest.  NumPy is asked without allocating (a zero-stride view) whether
it accepts a shape; ndrt follows it, except that it allows 32 dimensions (NumPy 2: 64)
and that a valid shape of more than 2**50 bytes (the largest pool block) is out of memory.
"""

import random

import numpy as np

from tests.runtime.conftest import DTYPES, run_isolated

SMALL = [0, 1, 1, 2, 2, 3, 4, 6]
HUGE = [2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 40, 2 ** 47, 2 ** 50, 2 ** 51, 2 ** 53, 2 ** 61,
        2 ** 62, 2 ** 62 + 1, 2 ** 63 - 1, 2 ** 63, 2 ** 64, 2 ** 70]
NEGATIVE = [-1, -2, -3, -4, -5, -2 ** 31, -2 ** 63, -2 ** 63 - 1]
CODES = [-1, -1, 0, -2, -3, -4]
BUDGET = 1 << 16              # results up to this many bytes are made and compared
POOL_MAX = 1 << 50            # larger valid requests are out of memory


def same(got, want):
    """Equal shapes, dtypes and values (NumPy 2.0's assert_array_equal cannot compare some
    zero-size arrays with huge dimensions, so those stop at the shape)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    if got.size:
        assert np.array_equal(got, want)


def dim(rng):
    r = rng.random()
    return rng.choice(SMALL if r < 0.6 else HUGE if r < 0.85 else NEGATIVE)


def shape(rng, codes=False):
    if rng.random() < 0.03:
        return (1,) * rng.choice([31, 32, 33, 40])
    out = []
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 3, 4])):
        out.append(rng.choice(CODES) if codes and rng.random() < 0.35 else dim(rng))
    return tuple(out)


def numpy_nbytes(shp, dtype):
    """The bytes of ``shp`` of ``dtype`` if NumPy accepts the shape, else None."""
    if len(shp) > 32:
        return None
    try:
        v = np.lib.stride_tricks.as_strided(np.empty((), dtype), shape=shp,
                                            strides=(0,) * len(shp))
    except (ValueError, OverflowError):
        return None
    return v.nbytes


def expect(fn, exc):
    try:
        fn()
    except exc:
        return
    except Exception as e:
        raise AssertionError(f"expected {exc.__name__}, got {type(e).__name__}: {e}")
    raise AssertionError(f"expected {exc.__name__}, got a result")


def check_creation(nd, rng, log):
    shp, dtype = shape(rng), rng.choice(DTYPES)
    nbytes = numpy_nbytes(shp, dtype)
    makers = [("zeros", lambda: nd.zeros(shp, dtype=dtype), np.zeros(1, dtype)[0]),
              ("ones", lambda: nd.ones(shp, dtype=dtype), np.ones(1, dtype)[0]),
              ("full", lambda: nd.full(shp, 7, dtype=dtype), np.full(1, 7, dtype)[0]),
              ("empty", lambda: nd.empty(shp, dtype=dtype), None)]
    for name, make, fill in makers:
        log(f"{name}{shp} {dtype}")
        if nbytes is None:
            expect(make, ValueError)
        elif nbytes > POOL_MAX:
            expect(make, MemoryError)
        elif nbytes <= BUDGET:
            x = make()
            assert x.shape == shp and np.dtype(x.dtype) == np.dtype(dtype)
            if fill is not None:
                same(x.asnumpy(), np.full(shp, fill, dtype))
        elif name == "empty":      # valid and large: memory is taken on first use only
            assert make().shape == shp


def reshape_reference(a, target):
    """What NDArray.reshape gives for targets without MXNet's -2, -3, -4: 0 (copy) and -1
    (infer), then NumPy's reshape; None where it must raise ValueError, ... for targets
    with those codes (the method then agrees with the reshape operator)."""
    if len(target) > 32:
        return None
    if any(v < -1 for v in target):
        return ...
    t = []
    for i, v in enumerate(target):
        if v == 0:
            if i >= a.ndim:
                return None
            v = a.shape[i]
        t.append(v)
    try:
        return a.reshape(t)
    except (ValueError, OverflowError):
        return None


def check_reshape(nd, rng, log):
    src = rng.choice([(), (0,), (1,), (6,), (2, 3), (4, 6), (2, 0, 3), (1, 2, 2, 3)])
    dtype = rng.choice(DTYPES)
    a = (np.arange(int(np.prod(src))) % 7).astype(dtype).reshape(src)
    x = nd.array(a, dtype=dtype)
    target = shape(rng, codes=True)
    if rng.random() < 0.3:           # a valid target now and then
        target = rng.choice([(a.size,), (-1,), (1, -1), (a.size, 1), (-1, 1), (0, -1)])
    want = reshape_reference(a, target)
    forms = [("x.reshape(*t)", lambda: x.reshape(*target)),
             ("x.reshape(t)", lambda: x.reshape(target)),
             ("x.reshape(list(t))", lambda: x.reshape(list(target))),
             ("x.reshape(shape=t)", lambda: x.reshape(shape=target))]
    if want is ...:               # -2, -3, -4: the method and the operator agree
        try:
            want = nd.reshape(x, shape=target).asnumpy()
        except ValueError:
            want = None
    for name, call in forms:
        log(f"{name} {src} -> {target}")
        if want is None:
            expect(call, ValueError)
        else:
            y = call()
            assert y.shape == want.shape, (y.shape, want.shape)
            same(y.asnumpy(), want)
    # the operator: MXNet's codes -2, -3, -4 too; without them it agrees with the method
    log(f"nd.reshape {src} -> {target}")
    try:
        y = nd.reshape(x, shape=target)
    except ValueError:
        assert want is None or any(v < -1 for v in target), "nd.reshape refused a valid shape"
        return
    if not any(v < -1 for v in target):
        assert want is not None and y.shape == want.shape, (y.shape, want)
    assert all(type(d) is int and d >= 0 for d in y.shape) and y.size == a.size
    same(y.asnumpy(), a.reshape(y.shape))


def check_views(nd, rng, log):
    src = rng.choice([(), (0,), (5,), (3, 4), (2, 0, 3)])
    a = np.arange(int(np.prod(src)), dtype=np.float32).reshape(src)
    x = nd.array(a)
    pick = lambda: rng.choice([rng.randint(-6, 6), dim(rng), -dim(rng)])  # noqa: E731
    i = pick()
    log(f"x[{i}] of {src}")
    if not src or not -src[0] <= i < src[0]:
        expect(lambda: x[i], IndexError)
    else:
        same(x[i].asnumpy(), a[i].reshape(a.shape[1:] or (1,)))   # MXNet: (1,), not 0-d
    if src:
        lo, hi = pick(), pick()
        log(f"x[{lo}:{hi}] of {src}")
        same(x[lo:hi].asnumpy(), a[lo:hi])


def check_sparse(nd, rng, log):
    S = nd.sparse
    dtype = rng.choice(DTYPES)
    shp = shape(rng) if rng.random() < 0.3 else (dim(rng), dim(rng))
    logical = numpy_nbytes(shp, dtype)
    log(f"sparse.zeros('csr', {shp}) {dtype}")
    if len(shp) != 2 or logical is None:
        expect(lambda: S.zeros("csr", shp, dtype=dtype), ValueError)
    else:
        indptr = numpy_nbytes((shp[0] + 1,), np.int64)
        if indptr is None:
            expect(lambda: S.zeros("csr", shp, dtype=dtype), ValueError)
        elif indptr > POOL_MAX:
            expect(lambda: S.zeros("csr", shp, dtype=dtype), MemoryError)
        elif indptr <= BUDGET:
            x = S.zeros("csr", shp, dtype=dtype)
            assert x.shape == shp and x.nnz == 0 and x.indptr.shape == (shp[0] + 1,)
            if logical <= BUDGET:
                same(x.tostype("default").asnumpy(),
                                              np.zeros(shp, dtype))
    log(f"row_sparse_array((data, []), shape={shp}) {dtype}")
    rows = numpy_nbytes((0,) + shp[1:], dtype)
    data = np.zeros((0,) + shp[1:], dtype) if rows is not None else np.zeros((0, 1), dtype)
    make = lambda: S.row_sparse_array((data, np.zeros(0, np.int64)), shape=shp,  # noqa: E731
                                      dtype=dtype)
    if not shp or logical is None:
        expect(make, ValueError)
    else:
        x = make()
        assert x.shape == shp and x.indices.shape == (0,)
        if logical <= BUDGET:
            same(x.tostype("default").asnumpy(), np.zeros(shp, dtype))


def fuzz(seed, n):
    """``n`` random cases of each kind; on a failure, the last case logged is named."""
    from runtime import nd
    rng = random.Random(seed)
    last = [""]

    def log(msg):
        last[0] = msg

    for k in range(n):
        for check in (check_creation, check_reshape, check_views, check_sparse):
            try:
                check(nd, rng, log)
            except AssertionError as e:
                raise AssertionError(f"case {k}, {last[0]}: {e}") from None


def test_shapes_fuzz():
    out = run_isolated("from tests.runtime.test_shape_fuzz import fuzz\n"
                       "fuzz(seed=20260813, n=400)\nprint('ok')", timeout=300)
    assert out.strip() == "ok"
