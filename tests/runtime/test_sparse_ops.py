"""Sparse kernels of the operators (runtime.ops.sparse, runtime._sparse_arith): values
against SciPy and against the dense result, output storage types against MXNet's table,
requests, gradients, the storage fallback, bad input."""

import contextlib
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import runtime as rt
from runtime import _sparse_arith as K
from runtime import _sparse_common as C
from runtime import nd
from runtime.nd.sparse import CSRNDArray, RowSparseNDArray
from runtime.ops import registry
from tests.runtime.opcheck import check_grad, check_requests

S = nd.sparse
FLOATS = [np.float32, np.float64]
CSR_CONTAINERS = [sp.csr_matrix, sp.csr_array]     # scikit-learn's CSR_CONTAINERS
TOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def no_fallback():
    """A storage fallback is an error unless a test allows it (``fallback('silent')``), so
    that every result here comes from a sparse kernel; the mode is restored after."""
    old = rt.set_storage_fallback("error")
    yield
    rt.set_storage_fallback(old)


@contextlib.contextmanager
def fallback(mode):
    old = rt.set_storage_fallback(mode)
    try:
        yield
    finally:
        rt.set_storage_fallback(old)


@pytest.fixture
def threads():
    """Set the thread count of the kernels, with every input big enough for threads."""
    old, old_cutoff = C.get_num_threads(), C.set_arith_serial_cutoff(0)
    old_backoff = C.set_contention_backoff(0)        # threads even on a busy machine
    yield C.set_num_threads
    C.set_num_threads(old)
    C.set_arith_serial_cutoff(old_cutoff)
    C.set_contention_backoff(old_backoff)


# -- data -----------------------------------------------------------------------------------

def rand_dense(shape, dtype, density=0.3, seed=0, zero_rows=()):
    """Values in +-[0.5, 2) at about ``density`` of the positions; listed rows zero."""
    rng = np.random.default_rng(seed)
    vals = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    a = np.where(rng.random(shape) < density, vals, 0.0).astype(dtype)
    for r in zero_rows:
        a[r] = 0
    return a


def rand_csr(shape, dtype, density=0.3, seed=0, zero_rows=()):
    """A canonical scipy.sparse.csr_matrix with empty rows."""
    return sp.csr_matrix(rand_dense(shape, dtype, density, seed, zero_rows))


# Shapes of the CSR operand: empty, one row, empty rows, all rows full, and one big
# enough for the threaded paths (SERIAL_CUTOFF elements of work and more).
CSR_CASES = {
    "0x5": ((0, 5), 0.3, ()),
    "4x0": ((4, 0), 0.3, ()),
    "3x4-nnz0": ((3, 4), 0.0, ()),
    "1x7": ((1, 7), 0.5, ()),
    "7x5-empty-rows": ((7, 5), 0.4, (0, 3, 6)),
    "6x6-dense": ((6, 6), 1.0, ()),
    "300x257": ((300, 257), 0.05, (5, 6, 7)),
}


def csr_case(case, dtype, seed=0):
    shape, density, zero_rows = CSR_CASES[case]
    return rand_csr(shape, dtype, density, seed, zero_rows)


def as_nd(m, container=sp.csr_matrix):
    return S.csr_matrix(container(m))


def rsp_dense(shape, dtype, rows, seed=0):
    """A dense array whose only nonzero rows are ``rows`` (every value there nonzero)."""
    rng = np.random.default_rng(seed)
    a = np.zeros(shape, dtype)
    for r in rows:
        a[r] = (rng.uniform(0.5, 2.0, shape[1:]) * rng.choice([-1, 1], shape[1:])).astype(dtype)
    return a


def close(got, want, dtype):
    tol = TOL[np.dtype(dtype)]
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=tol * 10, atol=tol)


def assert_csr_like(x, ref, dtype):
    """csr ``x`` holds exactly the pattern of canonical SciPy ``ref`` and its values."""
    assert isinstance(x, CSRNDArray) and x.stype == "csr"
    assert np.dtype(x.dtype) == np.dtype(dtype) and x.shape == ref.shape
    x.check_format(full_check=True)
    np.testing.assert_array_equal(x.indptr.asnumpy(), ref.indptr)
    np.testing.assert_array_equal(x.indices.asnumpy(), ref.indices)
    close(x.data.asnumpy(), ref.data, dtype)


def assert_rsp(x, dense, rows, dtype):
    """row_sparse ``x`` stores exactly ``rows`` and equals ``dense``."""
    assert isinstance(x, RowSparseNDArray) and x.stype == "row_sparse"
    assert np.dtype(x.dtype) == np.dtype(dtype) and x.shape == dense.shape
    x.check_format(full_check=True)
    np.testing.assert_array_equal(x.indices.asnumpy(), np.asarray(rows, np.int64))
    close(x.tostype("default").asnumpy(), dense, dtype)


def assert_dense(x, want, dtype):
    assert x.stype == "default" and np.dtype(x.dtype) == np.dtype(dtype)
    assert x.shape == want.shape, (x.shape, want.shape)
    close(x.asnumpy(), want, dtype)


def fallback_warnings(fn):
    """Run fn with the fallback in 'warn' mode; returns (result, fallback warnings).  The
    invoker warns once per signature and process, so an empty list proves nothing about
    a fallback; a nonempty one does."""
    with fallback("warn"), warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = fn()
    return res, [w for w in rec if issubclass(w.category, rt.StorageFallbackWarning)]


# -- dot ------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CSR_CASES))
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_dot_csr_dense(case, dtype):
    m = csr_case(case, dtype)
    k = m.shape[1]
    b = rand_dense((k, 3), dtype, 1.0, seed=1)
    for container in CSR_CONTAINERS:
        a = as_nd(m, container)
        got = nd.dot(a, nd.array(b, dtype=dtype))
        assert_dense(got, np.asarray(container(m) @ b), dtype)
        assert_dense(a @ nd.array(b, dtype=dtype), m.toarray() @ b, dtype)
    # vector and N-D right-hand sides keep MXNet's shapes
    v = rand_dense((k,), dtype, 1.0, seed=2)
    assert_dense(nd.dot(as_nd(m), nd.array(v, dtype=dtype)), m.toarray() @ v, dtype)
    b3 = rand_dense((k, 2, 2), dtype, 1.0, seed=3)
    assert_dense(nd.dot(as_nd(m), nd.array(b3, dtype=dtype)),
                 np.tensordot(m.toarray(), b3, 1), dtype)


@pytest.mark.parametrize("case", sorted(CSR_CASES))
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_dot_csr_t_dense_is_row_sparse(case, dtype):
    m = csr_case(case, dtype)
    b = rand_dense((m.shape[0], 4), dtype, 1.0, seed=1)
    used = np.unique(m.indices)
    for container in CSR_CONTAINERS:
        got = nd.dot(as_nd(m, container), nd.array(b, dtype=dtype), transpose_a=True)
        assert_rsp(got, np.asarray(container(m).T @ b), used, dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_dot_embedding_gradient(dtype):
    """dot(E.T, G): a batch of one-hot-like rows, columns shared across rows (duplicated
    patterns), as the gradient of an embedding lookup."""
    rng = np.random.default_rng(4)
    batch, vocab, width = 64, 500, 8
    cols = rng.integers(0, 40, size=(batch, 5))           # few distinct columns
    rows = np.repeat(np.arange(batch), 5)
    e = sp.csr_matrix((np.ones(rows.size, dtype), (rows, cols.ravel())), shape=(batch, vocab))
    e.sum_duplicates()
    g = rand_dense((batch, width), dtype, 1.0, seed=5)
    got = nd.dot(S.csr_matrix(e), nd.array(g, dtype=dtype), transpose_a=True)
    assert_rsp(got, e.T @ g, np.unique(e.indices), dtype)
    # every row holding the same columns
    same = sp.csr_matrix(np.tile(rand_dense((1, 30), dtype, 0.5, seed=6), (40, 1)))
    g = rand_dense((40, 3), dtype, 1.0, seed=7)
    got = nd.dot(S.csr_matrix(same), nd.array(g, dtype=dtype), transpose_a=True)
    assert_rsp(got, same.T @ g, np.unique(same.indices), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("rows", [[], [0], [1, 4], [0, 1, 2, 3, 4, 5]], ids=str)
def test_dot_csr_row_sparse(dtype, rows):
    m = csr_case("7x5-empty-rows", dtype)
    a = as_nd(m)
    r = rsp_dense((5, 3), dtype, [i for i in rows if i < 5], seed=2)
    got = nd.dot(a, S.row_sparse_array(r))
    assert_dense(got, m.toarray() @ r, dtype)
    r7 = rsp_dense((7, 3), dtype, rows, seed=3)
    got = nd.dot(a, S.row_sparse_array(r7), transpose_a=True)
    want = m.toarray().T @ r7
    assert got.stype == "row_sparse"
    close(got.tostype("default").asnumpy(), want, dtype)
    # stored: the columns used by the rows of a that r7 stores
    used = np.unique(m[[i for i in rows if i < 7]].indices) if rows else []
    np.testing.assert_array_equal(got.indices.asnumpy(), np.asarray(used, np.int64))


@pytest.mark.parametrize("case", ["0x5", "4x0", "3x4-nnz0", "7x5-empty-rows", "300x257"])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_dot_dense_csr(case, dtype):
    m = csr_case(case, dtype)
    a = rand_dense((6, m.shape[0]), dtype, 1.0, seed=1)
    got = nd.dot(nd.array(a, dtype=dtype), as_nd(m))
    # MXNet's CPU result: csr whose every row stores every column that m uses
    assert got.stype == "csr"
    got.check_format(full_check=True)
    used = np.unique(m.indices)
    np.testing.assert_array_equal(got.indptr.asnumpy(), np.arange(7) * used.size)
    np.testing.assert_array_equal(got.indices.asnumpy(), np.tile(used, 6))
    close(got.asnumpy(), a @ m.toarray(), dtype)
    # transpose_b: dense
    a2 = rand_dense((2, 3, m.shape[1]), dtype, 1.0, seed=2)
    assert_dense(nd.dot(nd.array(a2, dtype=dtype), as_nd(m), transpose_b=True),
                 a2 @ m.toarray().T, dtype)


def test_dot_float16_and_integer_dtypes():
    m = csr_case("7x5-empty-rows", np.float32)
    b = rand_dense((5, 3), np.float32, 1.0, seed=1)
    got = nd.dot(S.csr_matrix(m, dtype="float16"), nd.array(b, dtype="float16"))
    assert_dense(got, (m.toarray().astype(np.float16).astype(np.float32)
                       @ b.astype(np.float16).astype(np.float32)), np.float16)
    mi = sp.csr_matrix(np.round(m.toarray() * 3).astype(np.int32))
    bi = np.round(b * 3).astype(np.int32)
    gi = np.arange(21, dtype=np.int32).reshape(7, 3) - 10
    with fallback("silent"):                 # integers: the dense kernel, declared stype
        got = nd.dot(S.csr_matrix(mi), nd.array(gi, dtype="int32"), transpose_a=True)
        assert got.stype == "row_sparse" and np.dtype(got.dtype) == np.int32
        np.testing.assert_array_equal(got.asnumpy(), mi.toarray().T @ gi)
        got = nd.dot(S.csr_matrix(mi), nd.array(bi, dtype="int32"))
    assert got.stype == "default"
    np.testing.assert_array_equal(got.asnumpy(), mi.toarray() @ bi)


def test_dot_storage_table():
    """MXNet's CPU storage rules of dot; other combinations fall back to dense."""
    c = S.csr_matrix(rand_dense((4, 4), np.float32, 0.5))
    r = S.row_sparse_array(rsp_dense((4, 4), np.float32, [1, 2]))
    d = nd.array(rand_dense((4, 4), np.float32, 1.0))
    table = [((c, d, False, False), "default"), ((c, d, True, False), "row_sparse"),
             ((c, r, False, False), "default"), ((c, r, True, False), "row_sparse"),
             ((d, c, False, False), "csr"), ((d, c, False, True), "default"),
             ((d, d, False, False), "default")]
    for (x, y, ta, tb), want in table:
        got, warned = fallback_warnings(lambda: nd.dot(x, y, transpose_a=ta, transpose_b=tb))
        assert got.stype == want, (x.stype, y.stype, ta, tb)
        assert not warned
        xd, yd = x.asnumpy(), y.asnumpy()
        close(got.asnumpy(), (xd.T if ta else xd) @ (yd.T if tb else yd), np.float32)
    for x, y, ta, tb in [(c, d, False, True), (c, c, False, False), (r, d, False, False),
                         (d, c, True, False), (d, r, False, False)]:
        with pytest.raises(rt.StorageFallbackError, match="^dot: no kernel for storage types"):
            nd.dot(x, y, transpose_a=ta, transpose_b=tb)
        with fallback("silent"):
            got = nd.dot(x, y, transpose_a=ta, transpose_b=tb)
        assert got.stype == "default"
        xd, yd = x.asnumpy(), y.asnumpy()
        close(got.asnumpy(), (xd.T if ta else xd) @ (yd.T if tb else yd), np.float32)


def test_dot_dense_csr_needs_2d_lhs():
    c = S.csr_matrix(rand_dense((4, 3), np.float32, 0.5))
    with pytest.raises(ValueError, match=r"^dot: dot\(default, csr\) gives a csr array and "
                                         r"needs a 2-D lhs \(got shape \(4,\)\)"):
        nd.dot(nd.ones((4,)), c)
    with pytest.raises(ValueError, match=r"^dot: shapes \(5, 3\) and \(4, 3\) are not aligned"):
        nd.dot(nd.ones((5, 3)), c)


def test_dot_gradients_through_sparse_kernels():
    """The rule of dot (linalg) runs the sparse kernels: d(rhs) of dot(csr, dense) is
    dot(csr.T, g), row_sparse; d(lhs) of dot(dense, csr) is dot(g, csr.T), dense."""
    m = csr_case("7x5-empty-rows", np.float64)
    b = rand_dense((5, 3), np.float64, 1.0, seed=1)
    g = rand_dense((7, 3), np.float64, 1.0, seed=2)
    op = registry.get("dot")
    a = S.csr_matrix(m)
    da, db = op.gradient(op.parse_attrs({}), [a, nd.array(b, dtype="float64")], [],
                         [nd.array(g, dtype="float64")])
    assert db.stype == "row_sparse"
    close(db.asnumpy(), m.toarray().T @ g, np.float64)
    close(da.asnumpy(), g @ b.T, np.float64)
    x = rand_dense((2, 7), np.float64, 1.0, seed=3)
    g2 = rand_dense((2, 5), np.float64, 1.0, seed=4)
    dx, _ = op.gradient(op.parse_attrs({}), [nd.array(x, dtype="float64"), a], [],
                        [nd.array(g2, dtype="float64")])
    assert dx.stype == "default"
    close(dx.asnumpy(), g2 @ m.toarray().T, np.float64)


def test_dot_requests_with_out():
    m = csr_case("7x5-empty-rows", np.float32)
    b = rand_dense((5, 3), np.float32, 1.0, seed=1)
    a, bn = S.csr_matrix(m), nd.array(b)
    want = m.toarray() @ b
    out = nd.full((7, 3), 2.0)
    nd.dot(a, bn, out=out, req="add")
    close(out.asnumpy(), want + 2.0, np.float32)
    nd.dot(a, bn, out=out, req="null")
    close(out.asnumpy(), want + 2.0, np.float32)
    nd.dot(a, bn, out=out)
    close(out.asnumpy(), want, np.float32)
    g = rand_dense((7, 3), np.float32, 1.0, seed=2)
    rsp_out = S.row_sparse_array(rsp_dense((5, 3), np.float32, [0, 4], seed=3))
    before = rsp_out.asnumpy()
    nd.dot(a, nd.array(g), transpose_a=True, out=rsp_out, req="add")
    close(rsp_out.asnumpy(), before + m.toarray().T @ g, np.float32)


# -- add, subtract, multiply ----------------------------------------------------------------

BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}
SCIPY_BINARY = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
                "multiply": lambda a, b: a.multiply(b)}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("case", sorted(CSR_CASES))
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_csr_binary_matches_scipy(name, case, dtype):
    m1 = csr_case(case, dtype, seed=1)
    m2 = csr_case(case, dtype, seed=2)
    pairs = [(m1, m2), (m1, m1), (m1, -m1), (m1, m1.copy() * 0.5)]   # duplicated patterns
    for (p, q), container in zip(pairs, CSR_CONTAINERS * 2):
        got = getattr(nd, name)(as_nd(p, container), as_nd(q, container))
        ref = sp.csr_matrix(SCIPY_BINARY[name](container(p), container(q)))
        ref.eliminate_zeros()
        assert_csr_like(got, ref, dtype)
        close(got.asnumpy(), BINARY[name](p.toarray(), q.toarray()), dtype)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_csr_binary_operators_and_specials(name):
    a = np.array([[np.inf, 0, 1.0], [0, np.nan, 0], [2.0, 0, -1.0]], np.float64)
    b = np.array([[0, 1.0, 1.0], [0, 0, 3.0], [-2.0, 0, 1.0]], np.float64)
    got = getattr(nd, name)(S.csr_matrix(a), S.csr_matrix(b))
    ref = sp.csr_matrix(SCIPY_BINARY[name](sp.csr_matrix(a), sp.csr_matrix(b)))
    np.testing.assert_array_equal(got.asnumpy(), ref.toarray())     # nan == nan here
    x, y = S.csr_matrix(a), S.csr_matrix(b)
    op = {"add": lambda: x + y, "subtract": lambda: x - y, "multiply": lambda: x * y}[name]
    assert op().stype == "csr"
    np.testing.assert_array_equal(op().asnumpy(), ref.toarray())


RSP_ROWS = [([], []), ([0, 2, 5], [1, 2, 6]), ([3], [3]), ([0, 1, 2, 3, 4, 5, 6], [4]),
            ([1, 5], [])]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("rows", RSP_ROWS, ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_rsp_binary(name, rows, dtype):
    for shape in [(7, 3), (7,), (7, 2, 2)]:
        a = rsp_dense(shape, dtype, rows[0], seed=1)
        b = rsp_dense(shape, dtype, rows[1], seed=2)
        got = getattr(nd, name)(S.row_sparse_array(a), S.row_sparse_array(b))
        stored = (sorted(set(rows[0]) & set(rows[1])) if name == "multiply"
                  else sorted(set(rows[0]) | set(rows[1])))
        assert_rsp(got, BINARY[name](a, b), stored, dtype)
    # x - x keeps its rows (zeros), as MXNet
    x = S.row_sparse_array(rsp_dense((7, 3), dtype, [1, 4]))
    assert_rsp(x - x, np.zeros((7, 3), dtype), [1, 4], dtype)


def test_rsp_binary_large_threaded(threads):
    a = rsp_dense((2000, 64), np.float32, range(0, 2000, 3), seed=1)
    b = rsp_dense((2000, 64), np.float32, range(0, 2000, 2), seed=2)
    for n in (1, 3):
        threads(n)
        for name in BINARY:
            got = getattr(nd, name)(S.row_sparse_array(a), S.row_sparse_array(b))
            close(got.asnumpy(), BINARY[name](a, b), np.float32)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_rsp_times_dense_is_row_sparse(dtype):
    for shape in [(6, 4), (6, 2, 3)]:
        a = rsp_dense(shape, dtype, [0, 3, 5], seed=1)
        d = rand_dense(shape, dtype, 1.0, seed=2)
        x, y = S.row_sparse_array(a), nd.array(d, dtype=dtype)
        for got in (nd.multiply(x, y), nd.multiply(y, x), x * y, y * x):
            assert_rsp(got, a * d, [0, 3, 5], dtype)


def test_binary_storage_table_and_fallbacks():
    c = S.csr_matrix(rand_dense((4, 5), np.float32, 0.5))
    r = S.row_sparse_array(rsp_dense((4, 5), np.float32, [1, 2]))
    d = nd.array(rand_dense((4, 5), np.float32, 1.0))
    table = {("add", "csr", "csr"): "csr", ("add", "row_sparse", "row_sparse"): "row_sparse",
             ("multiply", "row_sparse", "default"): "row_sparse",
             ("multiply", "default", "row_sparse"): "row_sparse",
             ("add", "default", "csr"): "default",
             ("subtract", "row_sparse", "default"): "default",
             ("multiply", "csr", "default"): "csr", ("multiply", "default", "csr"): "csr",
             ("subtract", "csr", "default"): "default", ("add", "csr", "row_sparse"): "default"}
    arrays = {"csr": c, "row_sparse": r, "default": d}
    for (name, s1, s2), want in table.items():
        x, y = arrays[s1], arrays[s2]
        got, warned = fallback_warnings(lambda: getattr(nd, name)(x, y))
        assert got.stype == want, (name, s1, s2)
        if want != "default":
            assert not warned                      # a sparse kernel, no fallback
        close(got.asnumpy(), BINARY[name](x.asnumpy(), y.asnumpy()), np.float32)
    # broadcasting sparse operands: values right, storage as declared, through dense
    b1 = S.csr_matrix(rand_dense((1, 5), np.float32, 1.0, seed=3))
    got, warned = fallback_warnings(lambda: nd.add(c, b1))
    assert got.stype == "csr" and warned and "broadcasting" in str(warned[0].message)
    close(got.asnumpy(), c.asnumpy() + b1.asnumpy(), np.float32)


def test_binary_other_dtypes():
    a = np.array([[0, 3, 0], [1, 0, -2]], np.int32)
    b = np.array([[5, -3, 0], [0, 0, 4]], np.int32)
    for name, fn in BINARY.items():
        got, warned = fallback_warnings(lambda: getattr(nd, name)(S.csr_matrix(a),
                                                                   S.csr_matrix(b)))
        assert got.stype == "csr" and np.dtype(got.dtype) == np.int32
        np.testing.assert_array_equal(got.asnumpy(), fn(a, b))
        got.check_format()
    h = rsp_dense((5, 3), np.float16, [0, 2])
    got = nd.add(S.row_sparse_array(h), S.row_sparse_array(h))
    assert_rsp(got, h + h, [0, 2], np.float16)
    got = nd.multiply(S.csr_matrix(h), S.csr_matrix(h))
    assert got.stype == "csr" and np.dtype(got.dtype) == np.float16
    close(got.asnumpy(), h * h, np.float16)


def test_binary_requests_with_sparse_out():
    a = rsp_dense((6, 3), np.float32, [0, 2], seed=1)
    b = rsp_dense((6, 3), np.float32, [2, 5], seed=2)
    x, y = S.row_sparse_array(a), S.row_sparse_array(b)
    out = S.row_sparse_array(rsp_dense((6, 3), np.float32, [1], seed=3))
    before = out.asnumpy()
    nd.add(x, y, out=out, req="null")
    np.testing.assert_array_equal(out.asnumpy(), before)
    nd.add(x, y, out=out, req="add")
    close(out.asnumpy(), before + a + b, np.float32)
    nd.subtract(x, y, out=out)
    assert_rsp(out, a - b, [0, 2, 5], np.float32)
    x += y                                     # in place: x takes the sum's storage
    assert_rsp(x, a + b, [0, 2, 5], np.float32)
    c = S.csr_matrix(rand_dense((3, 4), np.float32, 0.5, seed=4))
    cout = S.csr_matrix(rand_dense((3, 4), np.float32, 0.5, seed=5))
    cb = cout.asnumpy()
    nd.multiply(c, c, out=cout, req="add")
    close(cout.asnumpy(), cb + c.asnumpy() ** 2, np.float32)


# -- sum, mean ------------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CSR_CASES))
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_csr_sum_mean(case, dtype):
    m = csr_case(case, dtype)
    x = as_nd(m)
    dense = m.toarray()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)          # NumPy: mean of empty
        for axis in (0, 1, -1, -2):
            for keepdims in (False, True):
                got = nd.sum(x, axis=axis, keepdims=keepdims)
                assert_dense(got, dense.sum(axis=axis, keepdims=keepdims), dtype)
                got = nd.mean(x, axis=axis, keepdims=keepdims)
                assert_dense(got, dense.mean(axis=axis, keepdims=keepdims), dtype)
        assert_dense(nd.sum(x, axis=0, exclude=True), dense.sum(axis=1), dtype)
        for container in CSR_CONTAINERS:     # against SciPy's own reduction
            close(nd.sum(as_nd(m, container), axis=0).asnumpy(),
                  np.asarray(container(m).sum(axis=0)).ravel(), dtype)


def test_csr_sum_storage_and_fallbacks():
    m = csr_case("7x5-empty-rows", np.float32)
    x = S.csr_matrix(m)
    for kw in ({"axis": 0}, {"axis": 1}, {"axis": 1, "keepdims": True}):
        got, warned = fallback_warnings(lambda: nd.sum(x, **kw))
        assert got.stype == "default" and not warned
    with fallback("silent"):
        for kw in ({}, {"axis": (0, 1)}):
            got = nd.mean(x, **kw)
            assert got.stype == "default"
            close(got.asnumpy(), m.toarray().mean(**kw).reshape(-1), np.float32)
        r = S.row_sparse_array(rsp_dense((4, 3), np.float32, [1]))
        assert nd.sum(r, axis=0).stype == "default"
        xi = S.csr_matrix(np.array([[1, 0, 2], [0, 0, 3]], np.int64))
        np.testing.assert_array_equal(nd.sum(xi, axis=0).asnumpy(), [1, 0, 5])
    with pytest.raises(rt.StorageFallbackError, match=r"^mean: no kernel for storage types "
                                                      r"\(csr\)"):
        nd.mean(x)
    with pytest.raises(ValueError, match=r"^sum: axis 2 is out of range"):
        nd.sum(x, axis=2)


# -- add_n ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_add_n_row_sparse(dtype):
    rows = [[0, 3], [3, 4, 9], [], [1, 9]]
    dense = [rsp_dense((10, 3), dtype, r, seed=i) for i, r in enumerate(rows)]
    xs = [S.row_sparse_array(a) for a in dense]
    for k in (1, 2, 4):
        got = nd.add_n(*xs[:k])
        stored = sorted(set().union(*rows[:k]))
        assert_rsp(got, sum(dense[:k]), stored, dtype)
    got = nd.add_n(S.row_sparse_array(np.zeros((0, 2), dtype)), S.zeros("row_sparse", (0, 2),
                                                                        dtype=dtype))
    assert got.stype == "row_sparse" and got.shape == (0, 2)
    # mixed storage falls back, dense result
    with fallback("silent"):
        got = nd.add_n(xs[0], nd.array(dense[1], dtype=dtype))
    assert got.stype == "default"
    close(got.asnumpy(), dense[0] + dense[1], dtype)


# -- cast_storage ---------------------------------------------------------------------------

@pytest.mark.parametrize("src", ["default", "csr", "row_sparse"])
@pytest.mark.parametrize("dst", ["default", "csr", "row_sparse"])
def test_cast_storage(src, dst):
    a = rand_dense((5, 4), np.float32, 0.4, zero_rows=(1, 3))
    x = {"default": nd.array, "csr": S.csr_matrix, "row_sparse": S.row_sparse_array}[src](a)
    if "default" not in (src, dst) and src != dst:
        with pytest.raises(ValueError, match=rf"^cast_storage: cannot convert {src} to {dst} "
                                             r"directly"):
            nd.cast_storage(x, stype=dst)
        return
    got = nd.cast_storage(x, stype=dst)
    assert got.stype == dst and got.chunk is not x.chunk
    np.testing.assert_array_equal(got.asnumpy(), a)
    if dst == "csr":
        assert_csr_like(got, sp.csr_matrix(a), np.float32)


def test_cast_storage_dense_path_requests_grad_and_errors():
    a = rand_dense((3, 4), np.float32, 0.5)
    check_requests("cast_storage", [a], {"stype": "default"})
    for stype in ("default", "csr", "row_sparse"):
        check_grad("cast_storage", [rand_dense((3, 4), np.float64, 1.0)], {"stype": stype})
    with pytest.raises(ValueError, match=r"^cast_storage: csr needs a 2-D array \(got shape "
                                         r"\(2, 2, 2\)\)"):
        nd.cast_storage(nd.ones((2, 2, 2)), stype="csr")
    with pytest.raises(ValueError, match=r"^cast_storage: row_sparse needs at least 1 "):
        nd.cast_storage(nd.array(1.0), stype="row_sparse")
    with pytest.raises(ValueError, match=r"^cast_storage: stype must be one of"):
        nd.cast_storage(nd.ones((2, 2)), stype="coo")
    with pytest.raises(TypeError, match=r"^cast_storage: attribute 'stype' is required"):
        nd.cast_storage(nd.ones((2, 2)))
    # a failed cast leaves out= alone
    out = S.row_sparse_array(rsp_dense((5, 4), np.float32, [2]))
    before = out.asnumpy()
    with pytest.raises(ValueError, match="^cast_storage: cannot convert"):
        nd.cast_storage(S.csr_matrix(a[:, :4].repeat(2, 0)[:5]), stype="row_sparse", out=out)
    np.testing.assert_array_equal(out.asnumpy(), before)


@FUZZ
@given(dense=hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=0,
                                                      max_side=7),
                        elements=st.sampled_from([0.0, 0.0, -0.0, 1.5, -2.0, np.inf])))
def test_cast_storage_fuzz_against_scipy(dense):
    x = nd.array(dense, dtype="float64")
    c = nd.cast_storage(x, stype="csr")
    ref = sp.csr_matrix(dense)
    ref.eliminate_zeros()
    np.testing.assert_array_equal(c.indptr.asnumpy(), ref.indptr)
    np.testing.assert_array_equal(c.indices.asnumpy(), ref.indices)
    np.testing.assert_array_equal(nd.cast_storage(c, stype="default").asnumpy(), dense + 0.0)
    r = nd.cast_storage(x, stype="row_sparse")
    np.testing.assert_array_equal(r.indices.asnumpy(), np.flatnonzero((dense != 0).any(1)))
    np.testing.assert_array_equal(nd.cast_storage(r, stype="default").asnumpy(), dense + 0.0)


# -- _sparse_retain -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "uint8", "bool"])
@pytest.mark.parametrize("shape", [(6, 3), (6,), (6, 2, 2), (6, 0)], ids=str)
def test_retain(dtype, shape):
    a = rsp_dense(shape, np.float64, [0, 2, 3], seed=1)
    a = (np.abs(a) * 3).astype(dtype) if dtype in ("uint8", "bool") else a.astype(dtype)
    x = S.row_sparse_array(a)
    for idx, keep in [([0, 3], [0, 3]), ([1, 3, 5], [1, 3, 5]), ([], []),
                      ([3, 0, 3, 99, -1], [0, 3]), (np.array([2.7, 5.0]), [2, 5])]:
        want = np.zeros_like(a)
        want[keep] = a[keep]
        for fn in (nd.retain, nd._sparse_retain, nd.sparse_retain):
            got = fn(x, nd.array(np.asarray(idx), dtype="float32" if np.asarray(idx).dtype.kind
                                 == "f" else "int64"))
            assert got.stype == "row_sparse" and got.dtype == x.dtype
            got.check_format(full_check=True)
            # every requested row is stored (MXNet), zero when x does not store it
            np.testing.assert_array_equal(got.indices.asnumpy(), np.asarray(keep, np.int64))
            np.testing.assert_array_equal(got.asnumpy(), want)


def test_retain_gradient_and_errors():
    a = rsp_dense((5, 2), np.float64, [1, 2, 4], seed=2)
    x = S.row_sparse_array(a)
    idx = nd.array([2, 3], dtype="int64")
    op = registry.get("_sparse_retain")
    g = rand_dense((5, 2), np.float64, 1.0, seed=3)
    for head in (nd.array(g, dtype="float64"), S.row_sparse_array(g)):
        dx, di = op.gradient({}, [x, idx], [], [head])
        assert di is None and dx.stype == "row_sparse"
        want = np.zeros_like(g)
        want[[2, 3]] = g[[2, 3]]
        np.testing.assert_array_equal(dx.asnumpy(), want)
    with pytest.raises(TypeError, match=r"^_sparse_retain: data must be a row_sparse NDArray "
                                        r"\(got default\)"):
        nd.retain(nd.array(a), idx)
    with pytest.raises(TypeError, match=r"^_sparse_retain: data must be a row_sparse NDArray "
                                        r"\(got csr\)"):
        nd.retain(S.csr_matrix(a), idx)
    with pytest.raises(TypeError, match=r"^_sparse_retain: indices must be a dense NDArray"):
        nd.retain(x, S.row_sparse_array(np.ones((2,))))
    with pytest.raises(TypeError, match=r"^_sparse_retain: indices must be integers or floats "
                                        r"\(got bool\)"):
        nd.retain(x, nd.array([True], dtype="bool"))
    out = S.row_sparse_array(rsp_dense((5, 2), np.float64, [0], seed=4))
    before = out.asnumpy()
    with pytest.raises(TypeError, match="^_sparse_retain: data must be"):
        nd.retain(nd.array(a, dtype="float64"), idx, out=out)
    np.testing.assert_array_equal(out.asnumpy(), before)
    nd.retain(x, idx, out=out)
    assert_rsp(out, np.where(np.isin(np.arange(5), [2, 3])[:, None], a, 0), [2, 3], np.float64)


# -- _square_sum ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + [np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("rows", [[], [0, 3, 4], [0, 1, 2, 3, 4, 5]], ids=str)
def test_square_sum_row_sparse(dtype, rows):
    a = rsp_dense((6, 4), dtype, rows, seed=1)
    x = S.row_sparse_array(a)
    sq = a.astype(np.float64) ** 2
    for name in ("_square_sum", "square_sum"):
        fn = getattr(nd, name)
        assert_dense(fn(x, axis=0), sq.sum(0), dtype)
        assert_dense(fn(x, axis=0, keepdims=True), sq.sum(0, keepdims=True), dtype)
        assert_dense(fn(x, axis=1), sq.sum(1), dtype)
        assert_dense(fn(x, axis=-1), sq.sum(1), dtype)
        got = fn(x, axis=1, keepdims=True)     # MXNet: row_sparse, the rows of x
        assert_rsp(got, sq.sum(1, keepdims=True), rows, dtype)
    # other axes, 3-D arrays and dense inputs run the dense kernel
    with fallback("silent"):
        assert_dense(nd.square_sum(x), sq.sum().reshape(1), dtype)
        a3 = rsp_dense((4, 2, 3), np.float32, [1, 3])
        got = nd.square_sum(S.row_sparse_array(a3), axis=2)
    assert_dense(got, (a3 ** 2).sum(2), np.float32)
    assert_dense(nd.square_sum(nd.array(a, dtype=dtype), axis=1), sq.sum(1), dtype)


def test_square_sum_dense_requests_grad_and_row_sparse_grad():
    a = rand_dense((3, 4), np.float32, 1.0)
    for attrs in ({"axis": 1}, {"axis": 0, "keepdims": True}, {}):
        check_requests("_square_sum", [a], attrs)
        check_grad("_square_sum", [a.astype(np.float64)], attrs)
    x = S.row_sparse_array(rsp_dense((5, 3), np.float64, [0, 3], seed=2))
    xd = x.asnumpy()
    op = registry.get("_square_sum")
    for attrs in ({"axis": 0}, {"axis": 1}, {"axis": 1, "keepdims": True}):
        parsed = op.parse_attrs(attrs)
        out = nd.square_sum(x, **attrs)
        g = rand_dense(out.shape, np.float64, 1.0, seed=4)
        head = nd.array(g, dtype="float64")
        if out.stype == "row_sparse":
            head = nd.cast_storage(head, stype="row_sparse")
        (dx,) = op.gradient(parsed, [x], [out], [head])
        assert dx.stype == "row_sparse"               # MXNet: the rows of x
        np.testing.assert_array_equal(dx.indices.asnumpy(), [0, 3])
        close(dx.asnumpy(), 2 * xd * np.broadcast_to(g.reshape(
            (1, 3) if attrs["axis"] == 0 else (5, 1)), xd.shape), np.float64)
    with pytest.raises(ValueError, match=r"^_square_sum: axis 3 is out of range"):
        nd.square_sum(x, axis=3)


# -- the storage fallback -------------------------------------------------------------------

def test_fallback_error_mode():
    c = S.csr_matrix(rand_dense((3, 4), np.float32, 0.5))
    rt.set_storage_fallback("warn")
    old = rt.set_storage_fallback("error")
    assert old == "warn"
    try:
        with pytest.raises(rt.StorageFallbackError, match=r"^exp: no kernel for storage types "
                                                          r"\(csr\)"):
            nd.exp(c)
        with pytest.raises(rt.StorageFallbackError, match=r"^add: no sparse kernel for dtype "
                                                          r"int32"):
            nd.add(S.csr_matrix(np.ones((2, 2), np.int32)), S.csr_matrix(np.ones((2, 2),
                                                                               np.int32)))
        assert nd.add(c, c).stype == "csr"           # sparse kernels are no fallback
    finally:
        rt.set_storage_fallback(old)
    assert rt.get_storage_fallback() == "warn"


def test_fallback_warns_once_per_signature():
    # A fresh interpreter: the warned signatures are process-wide.
    code = """
import warnings
import numpy as np
import runtime as rt
from runtime import nd
rt.set_storage_fallback("warn")
c = nd.sparse.csr_matrix(np.eye(3, dtype=np.float32))
r = nd.sparse.row_sparse_array(np.eye(3, dtype=np.float32))
with warnings.catch_warnings(record=True) as rec:
    warnings.simplefilter("always")
    for _ in range(3):
        y = nd.exp(c)
    nd.exp(r)
    nd.add(c, c)
ws = [str(w.message) for w in rec if issubclass(w.category, rt.StorageFallbackWarning)]
assert np.allclose(y.asnumpy(), np.exp(np.eye(3))), y
assert len(ws) == 2, ws
assert ws[0].startswith("exp: no kernel for storage types (csr)"), ws
assert ws[1].startswith("exp: no kernel for storage types (row_sparse)"), ws
print("ok")
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


# -- kernels: threads agree, bad input ------------------------------------------------------

def test_kernels_agree_across_thread_counts(threads):
    m = csr_case("300x257", np.float64, seed=3)
    indptr, indices = m.indptr.astype(np.int64), m.indices.astype(np.int64)
    b = rand_dense((257, 40), np.float64, 1.0, seed=4)
    g = rand_dense((300, 40), np.float64, 1.0, seed=5)
    results = []
    for n in (1, 2, 3):
        threads(n)
        out = np.empty((300, 40))
        K.csr_dot_dense(indptr, indices, m.data, b, out)
        plan = K.csr_column_plan(indptr, indices, 257)
        rows, data = np.empty(plan.nused, np.int64), np.empty((plan.nused, 40))
        K.csr_t_dot_dense(indptr, indices, m.data, g, plan, rows, data)
        dt = np.empty((6, 300))
        K.dense_dot_csr_t(rand_dense((6, 257), np.float64, 1.0, seed=6), indptr, indices,
                          m.data, dt)
        results.append((out, rows, data, dt))
    for got in results[1:]:
        for x, y in zip(got, results[0]):
            np.testing.assert_array_equal(x, y)            # same sums, same order
    np.testing.assert_array_equal(results[0][0], m @ b)    # bit-identical to SciPy
    np.testing.assert_array_equal(results[0][2], (m.T @ g)[results[0][1]])


def test_threaded_ops_match_serial(threads):
    """Inputs past SERIAL_CUTOFF run on OpenMP threads: same values as one thread."""
    m1 = rand_csr((1500, 400), np.float64, 0.12, seed=1, zero_rows=(3, 4))
    m2 = rand_csr((1500, 400), np.float64, 0.12, seed=2)
    r1 = rsp_dense((1500, 64), np.float64, range(0, 1500, 2), seed=3)
    r2 = rsp_dense((1500, 64), np.float64, range(0, 1500, 3), seed=4)
    d = rand_dense((1500, 64), np.float64, 1.0, seed=5)
    keep = nd.array(np.arange(0, 1500, 2), dtype="int64")

    def run():
        a, b = S.csr_matrix(m1), S.csr_matrix(m2)
        x, y = S.row_sparse_array(r1), S.row_sparse_array(r2)
        res = [nd.add(a, b), nd.multiply(a, b), nd.sum(a, axis=1), nd.mean(a, axis=0),
               nd.add_n(x, y, x), nd.subtract(x, y), nd.multiply(x, nd.array(d, dtype="float64")),
               nd.square_sum(x, axis=1), nd.square_sum(x, axis=0), nd.retain(x, keep)]
        return [v.asnumpy() for v in res]

    threads(1)
    serial = run()
    threads(3)
    for got, want in zip(run(), serial):
        np.testing.assert_array_equal(got, want)
    close(serial[0], m1.toarray() + m2.toarray(), np.float64)
    close(serial[2], m1.toarray().sum(1), np.float64)
    close(serial[4], 2 * r1 + r2, np.float64)
    close(serial[7], (r1 ** 2).sum(1), np.float64)


def test_csr_t_dot_wide_matrix_matches_scipy(threads):
    """dot(csr.T, dense) and dot(csr.T, row_sparse) on a matrix with 2**40 columns (a
    plan proportional to the stored entries: an array per column would not fit; columns
    that need four radix passes), repeated columns and empty rows, bit-identical to
    SciPy on the used columns at every thread count."""
    rng = np.random.default_rng(7)
    ncols = 1 << 40
    cols = np.array([5, 3, 1 << 39, (1 << 40) - 1, 2048, 2047, 1 << 22, 3], np.int64)
    rows, n = 300, 6
    indptr = np.zeros(rows + 1, np.int64)
    per_row = rng.integers(0, 5, rows)
    per_row[[0, 17, 299]] = 0
    indptr[1:] = np.cumsum(per_row)
    indices = np.concatenate([np.sort(rng.choice(cols, k, replace=False)) for k in per_row])
    data = rng.standard_normal(indices.size)
    g = rng.standard_normal((rows, n))
    used = np.unique(indices)
    # SciPy on the used columns (its index space cannot hold 2**40 columns)
    small = sp.csr_matrix((data, np.searchsorted(used, indices), indptr),
                          shape=(rows, used.size))
    want = small.T @ g
    rowmap = np.where(np.arange(rows) % 3 == 0, -1, np.arange(rows) // 2)
    dense_rows = rows // 2 + 1
    stored = rng.standard_normal((dense_rows, n))
    sparse_rhs = np.zeros((rows, n))
    sparse_rhs[rowmap >= 0] = stored[rowmap[rowmap >= 0]]
    keep = np.repeat(rowmap >= 0, per_row)
    used_m = np.unique(indices[keep])
    want_m = (small.T @ sparse_rhs)[np.searchsorted(used, used_m)]
    for t in (1, 2, 3):
        threads(t)
        plan = K.csr_column_plan(indptr, indices, ncols)
        np.testing.assert_array_equal(plan.cols, used)
        out_rows, out = np.empty(plan.nused, np.int64), np.empty((plan.nused, n))
        assert K.csr_t_dot_dense(indptr, indices, data, g, plan, out_rows, out) == used.size
        np.testing.assert_array_equal(out_rows, used)
        np.testing.assert_array_equal(out, want)
        plan = K.csr_column_plan(indptr, indices, ncols, rowmap)
        out_rows, out = np.empty(plan.nused, np.int64), np.empty((plan.nused, n))
        K.csr_t_dot_dense(indptr, indices, data, stored, plan, out_rows, out, rowmap)
        np.testing.assert_array_equal(out_rows, used_m)
        np.testing.assert_array_equal(out, want_m)


def test_csr_column_plan_counts_and_sorts_alike():
    """Few columns (at most twice the entries) are counted, many are radix-sorted: the
    same pattern gives the same plan either way, with and without a rowmap."""
    rng = np.random.default_rng(7)
    a = sp.random(300, 200, density=0.05, format="csr", random_state=rng)
    indptr, indices = a.indptr.astype(np.int64), a.indices.astype(np.int64)
    rowmap = np.where(np.arange(300) % 4 == 0, -1, np.arange(300)).astype(np.int64)
    for rm in (None, rowmap):
        counted = K.csr_column_plan(indptr, indices, 200, rm)            # 200 <= 2 * nnz
        sorted_ = K.csr_column_plan(indptr, indices, 1 << 40, rm)        # radix sort
        for field in ("cols", "pos", "colptr"):
            np.testing.assert_array_equal(getattr(counted, field), getattr(sorted_, field))
    with pytest.raises(IndexError):
        K.csr_column_plan(indptr, indices, 100)                          # columns >= 100


def test_csr_t_dot_op_many_columns_matches_scipy():
    """The operator on a (64, 1,000,000) CSR batch: the row_sparse result holds the used
    columns of SciPy's product, bit-identical."""
    m = sp.random(64, 1_000_000, density=2e-5, format="csr", random_state=3,
                  dtype=np.float32)
    m.sum_duplicates()
    m.sort_indices()
    g = np.random.default_rng(4).standard_normal((64, 8)).astype(np.float32)
    r = nd.dot(S.csr_matrix(m), nd.array(g), transpose_a=True)
    assert r.stype == "row_sparse" and r.shape == (1_000_000, 8)
    used = np.unique(m.indices)
    np.testing.assert_array_equal(r.indices.asnumpy(), used)
    np.testing.assert_array_equal(r.data.asnumpy(), (m.T @ g)[used])


def test_kernel_argument_errors():
    indptr, indices = np.array([0, 1, 3]), np.array([0, 1, 4])
    data = np.ones(3)
    out = np.empty((2, 2))
    with pytest.raises(IndexError, match=r"indices must be in \[0, ncols=3\) \(got "
                                         r"indices\[2\]=4 in row 1\)"):
        K.csr_dot_dense(indptr, indices, data, np.ones((3, 2)), out)
    with pytest.raises(ValueError, match=r"indptr\[-1\] must equal nnz=3"):
        K.csr_dot_dense(np.array([0, 1, 2]), indices, data, np.ones((5, 2)), out)
    with pytest.raises(NotImplementedError, match="must have dtype float32 or float64"):
        K.csr_dot_dense(indptr, indices, data.astype(np.int32), np.ones((5, 2), np.int32),
                        out.astype(np.int32))
    with pytest.raises(TypeError, match="dense2d must have the dtype"):
        K.csr_dot_dense(indptr, indices, data, np.ones((5, 2), np.float32), out)
    plan = K.csr_column_plan(indptr, indices, 5)
    with pytest.raises(ValueError, match=r"len\(indices_out\)=2 must be the plan's number of "
                                         r"used columns 3"):
        K.csr_t_dot_dense(indptr, indices, data, np.ones((2, 2)), plan,
                          np.empty(2, np.int64), np.empty((2, 2)))
    with pytest.raises(ValueError, match="plan must be what csr_column_plan gives"):
        K.csr_t_dot_dense(indptr, indices, data, np.ones((2, 2)), plan,
                          np.empty(3, np.int64), np.empty((3, 2)), rowmap=np.array([0, 1]))
    with pytest.raises(IndexError, match=r"indices must be in \[0, ncols=4\) \(got "
                                         r"indices\[2\]=4 in row 1\)"):
        K.csr_column_plan(indptr, indices, 4)
    with pytest.raises(ValueError, match=r"op must be one of 'add', 'subtract', 'multiply'"):
        K.rsp_binary_count("divide", np.array([0]), np.array([1]))
    with pytest.raises(ValueError, match=r"indices_out must have length 2"):
        K.rsp_binary("add", np.array([0]), np.ones((1, 2)), np.array([1]), np.ones((1, 2)),
                     np.empty(3, np.int64), np.empty((3, 2)))
    with pytest.raises(IndexError, match=r"indices must be in \[0, nrows=2\) \(got "
                                         r"indices\[1\]=7\)"):
        K.rsp_mul_dense(np.array([0, 7]), np.ones((2, 2)), np.ones((2, 2)), np.empty((2, 2)))
    ip = np.empty(3, np.int64)
    nnz = K.csr_binary_count("add", indptr, indices, data, indptr, indices, data, ip)
    with pytest.raises(ValueError, match="indptr must match the nonzero results"):
        K.csr_binary_fill("multiply", indptr, indices, data, np.array([0, 0, 0]),
                          np.empty(0, np.int64), np.empty(0), ip, np.empty(nnz, np.int64),
                          np.empty(nnz))


# -- hypothesis: elementwise against SciPy --------------------------------------------------

_sparse_values = st.sampled_from([0.0, 0.0, 0.0, 1.0, -1.0, 2.5, 0.5])


@FUZZ
@given(a=hnp.arrays(np.float64, st.tuples(st.integers(0, 6), st.integers(0, 6)),
                    elements=_sparse_values),
       seed=st.integers(0, 2 ** 16), name=st.sampled_from(sorted(BINARY)))
def test_csr_binary_fuzz(a, seed, name):
    rng = np.random.default_rng(seed)
    b = np.where(rng.random(a.shape) < 0.5, rng.choice([0.0, 1.0, -1.0, 3.0], a.shape), 0.0)
    got = getattr(nd, name)(S.csr_matrix(a), S.csr_matrix(b))
    ref = sp.csr_matrix(SCIPY_BINARY[name](sp.csr_matrix(a), sp.csr_matrix(b)))
    ref.eliminate_zeros()
    np.testing.assert_array_equal(got.indptr.asnumpy(), ref.indptr)
    np.testing.assert_array_equal(got.indices.asnumpy(), ref.indices)
    np.testing.assert_array_equal(got.data.asnumpy(), ref.data)


@FUZZ
@given(rows=st.tuples(st.lists(st.integers(0, 9), max_size=10),
                      st.lists(st.integers(0, 9), max_size=10)),
       name=st.sampled_from(sorted(BINARY)))
def test_rsp_binary_fuzz(rows, name):
    ra, rb = sorted(set(rows[0])), sorted(set(rows[1]))
    a, b = rsp_dense((10, 2), np.float64, ra, seed=1), rsp_dense((10, 2), np.float64, rb, seed=2)
    got = getattr(nd, name)(S.row_sparse_array((a[ra], ra), shape=(10, 2)),
                            S.row_sparse_array((b[rb], rb), shape=(10, 2)))
    np.testing.assert_array_equal(got.asnumpy(), BINARY[name](a, b))
    want = sorted(set(ra) & set(rb)) if name == "multiply" else sorted(set(ra) | set(rb))
    np.testing.assert_array_equal(got.indices.asnumpy(), np.asarray(want, np.int64))


@FUZZ
@given(a=hnp.arrays(np.float64, st.tuples(st.integers(0, 6), st.integers(0, 6)),
                    elements=_sparse_values),
       n=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_dot_fuzz(a, n, seed):
    rng = np.random.default_rng(seed)
    m = sp.csr_matrix(a)
    b = rng.standard_normal((a.shape[1], n))
    g = rng.standard_normal((a.shape[0], n))
    x = S.csr_matrix(m)
    np.testing.assert_allclose(nd.dot(x, nd.array(b, dtype="float64")).asnumpy(), m @ b,
                               rtol=1e-12, atol=1e-12)
    t = nd.dot(x, nd.array(g, dtype="float64"), transpose_a=True)
    np.testing.assert_array_equal(t.indices.asnumpy(), np.unique(m.indices))
    np.testing.assert_allclose(t.asnumpy(), m.T @ g, rtol=1e-12, atol=1e-12)


# -- GPU ------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_sparse_ops_on_gpu():
    """Through host copies: the results live on the GPU and equal the CPU ones."""
    ctx = rt.gpu(0)
    m = csr_case("7x5-empty-rows", np.float32)
    b = rand_dense((5, 3), np.float32, 1.0, seed=1)
    x = S.csr_matrix(m, ctx=ctx)
    y = nd.dot(x, nd.array(b, ctx=ctx))
    assert y.ctx == ctx
    close(y.asnumpy(), m.toarray() @ b, np.float32)
    t = nd.dot(x, nd.array(rand_dense((7, 3), np.float32, 1.0), ctx=ctx), transpose_a=True)
    assert t.ctx == ctx and t.stype == "row_sparse"
    s = nd.add(x, x)
    assert s.ctx == ctx and s.stype == "csr"
    close(s.asnumpy(), 2 * m.toarray(), np.float32)
    close(nd.sum(x, axis=0).asnumpy(), m.toarray().sum(0), np.float32)


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_scalar_comparisons_keep_storage_where_mxnet_does(stype):
    # MXNet 1.9.1: sparse when the comparison is false at 0 (x == 2, x > 1, x != 0,
    # x >= 2), dense otherwise (x == 0, x < 1, x <= 1)
    dense = np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 0.0], [2.0, -1.0, 3.0]])
    x = nd.array(dense).tostype(stype)
    cases = [(lambda a: a == 2, True), (lambda a: a > 1, True), (lambda a: a != 0, True),
             (lambda a: a >= 2, True), (lambda a: a == 0, False), (lambda a: a < 1, False),
             (lambda a: a <= 1, False), (lambda a: a == 2.5, False)]
    for fn, sparse in cases:
        with fallback("error" if sparse else "silent"):     # a sparse result: no fallback
            got = fn(x)
        assert got.stype == (stype if sparse else "default")
        np.testing.assert_array_equal(got.asnumpy(), fn(dense).astype(np.float64))
