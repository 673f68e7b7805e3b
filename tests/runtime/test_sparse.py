"""Sparse arrays (``nd.sparse``): every MXNet constructor form, storage casts, slicing,
format checks and bad input — against SciPy (csr) and NumPy (row_sparse)."""

import gc
import itertools
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import runtime as rt
from runtime import nd
from runtime._ndarray import storage_view
from runtime.nd.sparse import CSRNDArray, RowSparseNDArray
from tests.runtime.conftest import DTYPES, assert_same

S = nd.sparse
CSR_CONTAINERS = [sp.csr_matrix, sp.csr_array]     # scikit-learn's CSR_CONTAINERS

# A small matrix with empty rows and columns, negatives and every column used somewhere.
DENSE = np.array([[0, 1, 0, 2],
                  [0, 0, 0, 0],
                  [3, 0, -4, 0],
                  [0, 0, 0, 5],
                  [0, 0, 0, 0]], np.float64)


def sample(dtype, shape=DENSE.shape, density=0.4, seed=0):
    """A dense NumPy array of ``dtype`` with about ``density`` nonzeros (no nonzero rounds
    to zero in any dtype)."""
    rng = np.random.default_rng(seed)
    vals = rng.integers(1, 100, size=shape) * np.where(rng.random(shape) < 0.5, 1, -1)
    if np.dtype(dtype) == np.uint8:
        vals = np.abs(vals)
    a = np.where(rng.random(shape) < density, vals, 0)
    return a.astype(dtype)


# -- references ----------------------------------------------------------------------------

def scipy_ref(dense):
    """SciPy's canonical CSR of ``dense`` (SciPy has no float16: computed in float32, exact)."""
    dense = np.asarray(dense)
    work = dense.astype(np.float32) if dense.dtype == np.float16 else dense
    return sp.csr_matrix(work)


def assert_csr(x, ref, dtype=None):
    """``x`` is a CSRNDArray whose parts equal SciPy matrix ``ref`` (canonical) exactly."""
    ref = sp.csr_matrix(ref)
    ref.sum_duplicates()
    assert isinstance(x, CSRNDArray) and x.stype == "csr"
    assert x.shape == ref.shape
    want = np.dtype(dtype if dtype is not None else ref.dtype)
    assert np.dtype(x.dtype) == want
    indptr, indices, data = x.indptr.asnumpy(), x.indices.asnumpy(), x.data.asnumpy()
    assert indptr.dtype == indices.dtype == np.int64
    np.testing.assert_array_equal(indptr, ref.indptr)
    np.testing.assert_array_equal(indices, ref.indices)
    assert data.dtype == want
    np.testing.assert_array_equal(data, ref.data.astype(want))
    assert x.nnz == ref.nnz
    np.testing.assert_array_equal(x.asnumpy(), ref.toarray().astype(want))
    x.check_format(full_check=True)
    if want != np.float16:                 # SciPy cannot hold float16 (asscipy gives float32)
        m = x.asscipy()
        assert isinstance(m, sp.csr_matrix) and m.dtype == want
        np.testing.assert_array_equal(m.toarray(), ref.toarray().astype(want))


def rsp_ref(dense):
    """(row indices, data rows) of the row_sparse form of ``dense``: rows with a nonzero."""
    dense = np.asarray(dense)
    flat = dense.reshape(dense.shape[0], int(np.prod(dense.shape[1:])))
    rows = np.flatnonzero((flat != 0).any(axis=1))
    return rows, dense[rows]


def assert_rsp(x, dense, dtype=None):
    """``x`` is a RowSparseNDArray holding exactly the nonzero rows of ``dense``."""
    dense = np.asarray(dense)
    want = np.dtype(dtype if dtype is not None else dense.dtype)
    rows, data = rsp_ref(dense)
    assert isinstance(x, RowSparseNDArray) and x.stype == "row_sparse"
    assert x.shape == dense.shape
    assert np.dtype(x.dtype) == want
    idx = x.indices.asnumpy()
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx, rows)
    d = x.data.asnumpy()
    assert d.dtype == want and d.shape == (len(rows),) + dense.shape[1:]
    np.testing.assert_array_equal(d, data.astype(want))
    assert_same(x.tostype("default"), dense.astype(want))
    x.check_format(full_check=True)


# -- csr_matrix: every form ---------------------------------------------------------------

def test_csr_from_dense_list_is_float32():
    x = S.csr_matrix(DENSE.tolist())
    assert_csr(x, sp.csr_matrix(DENSE), dtype=np.float32)
    assert x.ctx == rt.cpu()


def test_csr_from_nested_list_of_ints_and_bools_is_float32():
    assert_csr(S.csr_matrix([[1, 0], [0, 2]]), sp.csr_matrix([[1.0, 0], [0, 2]]), np.float32)
    assert_csr(S.csr_matrix([[True, False]]), sp.csr_matrix([[1.0, 0]]), np.float32)


# dtypes are looped inside the tests rather than parametrized: the autouse pool check
# collects garbage twice per test item, which costs more than these bodies.

def test_csr_from_numpy_and_dense_ndarray_keep_their_dtype():
    for dtype in DTYPES:
        a = sample(dtype)
        assert_csr(S.csr_matrix(a), scipy_ref(a), dtype=dtype)
        x = nd.array(a, dtype=dtype)
        assert_csr(S.csr_matrix(x), scipy_ref(a), dtype=dtype)
        assert x.stype == "default"
        assert_same(x, a)                                   # the source is untouched


def test_csr_from_csr_ndarray_is_a_copy():
    for dtype in DTYPES:
        a = sample(dtype)
        src = S.csr_matrix(a)
        assert_csr(nd.array(src), scipy_ref(a), dtype=dtype)
        assert_csr(S.array(src), scipy_ref(a), dtype=dtype)
        x = S.csr_matrix(src)
        assert_csr(x, scipy_ref(a), dtype=dtype)
        assert x.chunk is not src.chunk
        x[:] = np.zeros(a.shape, dtype)                     # rewrite the copy
        assert x.nnz == 0
        assert_csr(src, scipy_ref(a), dtype=dtype)


def test_csr_from_dense_ndarray_views():
    base = nd.array(np.arange(24, dtype=np.float32).reshape(6, 4) % 3)
    ref = base.asnumpy()
    assert_csr(S.csr_matrix(base[2:5]), sp.csr_matrix(ref[2:5]))
    assert_csr(base[1:4].tostype("csr"), sp.csr_matrix(ref[1:4]))
    flat = nd.array(np.arange(12, dtype=np.float32) % 4)
    assert_csr(flat.reshape(3, 4).tostype("csr"), sp.csr_matrix(flat.asnumpy().reshape(3, 4)))


@pytest.mark.parametrize("with_shape", [True, False])
def test_csr_from_parts(with_shape):
    ref = sp.csr_matrix(DENSE)
    shape = DENSE.shape if with_shape else None
    x = S.csr_matrix((ref.data.tolist(), ref.indices.tolist(), ref.indptr.tolist()),
                     shape=shape)
    if with_shape:
        assert_csr(x, ref, dtype=np.float32)
    else:     # the column count is inferred from the largest column index (3 -> 4 columns)
        assert x.shape == (DENSE.shape[0], int(ref.indices.max()) + 1)
        assert_csr(x, sp.csr_matrix(DENSE[:, :x.shape[1]]), dtype=np.float32)


def test_private_aux_count_as_mxnet():
    # MXNet's BaseSparseNDArray._num_aux, which its test_sparse_ndarray.py reads
    assert S.zeros("row_sparse", (3, 2))._num_aux == 1
    assert S.zeros("csr", (3, 2))._num_aux == 2


def test_csr_from_parts_infers_the_column_count():
    x = S.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]))
    assert x.shape == (2, 2)
    # no index to infer the column count from: MXNet refuses, and so does ndrt
    with pytest.raises(ValueError, match=r"csr_matrix: shape cannot be inferred from empty "
                                         r"indices \(got 0 indices\); give shape"):
        S.csr_matrix(([], [], [0, 0, 0]))
    assert S.csr_matrix(([], [], [0, 0, 0]), shape=(2, 0)).shape == (2, 0)


@pytest.mark.parametrize("kind", ["numpy", "ndarray"])
def test_csr_from_parts_keeps_the_data_dtype(kind):
    for dtype in DTYPES:
        a = sample(dtype)
        ref = scipy_ref(a)
        data = ref.data.astype(dtype)
        indices, indptr = ref.indices.astype(np.int32), ref.indptr   # int32 indices accepted
        if kind == "ndarray":
            data, indices, indptr = (nd.array(data, dtype=dtype),
                                     nd.array(indices, dtype="int32"),
                                     nd.array(indptr, dtype="int64"))
        assert_csr(S.csr_matrix((data, indices, indptr), shape=a.shape), ref, dtype=dtype)


def test_csr_explicit_dtype_wins_in_every_form():
    ref = sp.csr_matrix(DENSE)
    parts = (ref.data, ref.indices, ref.indptr)
    coo = ref.tocoo()
    for x in (S.csr_matrix(DENSE, dtype="int32"),
              S.csr_matrix(DENSE.tolist(), dtype="int32"),
              S.csr_matrix(nd.array(DENSE, dtype="float64"), dtype="int32"),
              S.csr_matrix(S.csr_matrix(DENSE), dtype="int32"),
              S.csr_matrix(parts, shape=DENSE.shape, dtype="int32"),
              S.csr_matrix((coo.data, (coo.row, coo.col)), shape=DENSE.shape, dtype="int32"),
              S.csr_matrix(ref, dtype="int32"),
              S.csr_matrix(DENSE.shape, dtype="int32")):
        assert x.dtype == np.int32
    assert_csr(S.csr_matrix(DENSE, dtype="float16"), ref, dtype=np.float16)


def test_csr_from_coo_sums_duplicates_and_sorts():
    data = np.array([5.0, 1.0, 2.0, 3.0, 4.0, -4.0])
    row = np.array([2, 0, 0, 2, 0, 1])
    col = np.array([1, 3, 0, 1, 3, 2])                  # (0, 3) and (2, 1) twice, unsorted
    ref = sp.coo_matrix((data, (row, col)), shape=(4, 5)).tocsr()
    ref.sum_duplicates()
    x = S.csr_matrix((data, (row, col)), shape=(4, 5))
    assert_csr(x, ref, dtype=np.float64)
    np.testing.assert_array_equal(x.indices.asnumpy(), [0, 3, 2, 1])
    np.testing.assert_array_equal(x.data.asnumpy(), [2.0, 5.0, -4.0, 8.0])
    # without a shape: the smallest that holds the indices
    y = S.csr_matrix((data, (row, col)))
    assert y.shape == (3, 4)
    assert_csr(y, ref[:3, :4], dtype=np.float64)


def test_csr_from_coo_dtypes():
    row, col = [0, 0, 1], [1, 1, 0]
    assert S.csr_matrix(([1, 2, 3], (row, col))).dtype == np.float32      # list: float32
    x = S.csr_matrix((np.array([1, 2, 3], np.int8), (row, col)))
    assert x.dtype == np.int8
    np.testing.assert_array_equal(x.data.asnumpy(), np.array([3, 3], np.int8))
    h = S.csr_matrix((np.array([0.5, 0.25, 1], np.float16), (row, col)))   # SciPy lacks f16
    assert h.dtype == np.float16
    np.testing.assert_array_equal(h.data.asnumpy(), np.array([0.75, 1], np.float16))
    n = S.csr_matrix((nd.array([1, 2, 3], dtype="int32"), (nd.array(row, dtype="int64"),
                                                             nd.array(col, dtype="int64"))))
    assert n.dtype == np.int32
    np.testing.assert_array_equal(n.asnumpy(), np.array([[0, 3], [3, 0]], np.int32))
    e = S.csr_matrix(([], ([], [])), shape=(2, 3))
    assert e.shape == (2, 3) and e.nnz == 0 and e.dtype == np.float32


@pytest.mark.parametrize("container", CSR_CONTAINERS)
def test_csr_from_scipy_csr(container):
    for dtype in ["float32", "float64", "int32", "int64", "uint8", "int8", "bool"]:
        a = sample(dtype)
        m = container(a)
        x = S.csr_matrix(m)
        assert_csr(x, scipy_ref(a), dtype=dtype)
        assert_csr(nd.array(m), scipy_ref(a), dtype=dtype)      # nd.array forwards to it
        assert_csr(S.array(m), scipy_ref(a), dtype=dtype)
        assert_csr(S.csr_matrix(m, dtype="float16"), scipy_ref(a), dtype="float16")


@pytest.mark.parametrize("container", CSR_CONTAINERS)
def test_csr_from_scipy_canonicalises_and_does_not_touch_the_source(container):
    # unsorted columns and a duplicate (0, 1) in row 0
    data, indices, indptr = np.array([1.0, 2.0, 3.0, 4.0]), np.array([3, 1, 1, 0]), \
        np.array([0, 3, 3, 4])
    m = container((data, indices, indptr), shape=(3, 4))
    assert not m.has_canonical_format
    x = S.csr_matrix(m)
    want = sp.csr_matrix(m.toarray())
    assert_csr(x, want)
    np.testing.assert_array_equal(x.indices.asnumpy(), [1, 3, 0])
    np.testing.assert_array_equal(m.indices, indices)             # the source is intact
    np.testing.assert_array_equal(m.data, data)


@pytest.mark.parametrize("kind", ["matrix", "array"])
def test_csr_from_other_scipy_formats(kind):
    for fmt in ["coo", "csc", "lil", "dok", "bsr", "dia"]:
        m = getattr(sp, f"{fmt}_{kind}")(DENSE)
        assert_csr(S.csr_matrix(m), sp.csr_matrix(DENSE))
    # COO with duplicates and unsorted entries: summed and sorted
    coo = getattr(sp, f"coo_{kind}")((np.array([1.0, 2.0, 3.0]),
                                      (np.array([1, 0, 1]), np.array([2, 1, 2]))), shape=(2, 3))
    x = S.csr_matrix(coo)
    assert_csr(x, sp.csr_matrix([[0, 2.0, 0], [0, 0, 4.0]]))
    assert coo.nnz == 3                                           # the source is intact


@pytest.mark.parametrize("container", CSR_CONTAINERS)
def test_csr_from_scipy_rejects_invalid_indices(container):
    # SciPy only checks this cheaply: ndrt validates fully before anything reads it
    m = container((np.array([1.0, 2.0]), np.array([0, 7]), np.array([0, 1, 2])), shape=(2, 3))
    with pytest.raises(ValueError, match=r"^csr_matrix: indices must be in \[0, ncols=3\) "
                                         r"\(got indices\[1\]=7 in row 1\)"):
        S.csr_matrix(m)


@pytest.mark.parametrize("container", CSR_CONTAINERS)
def test_csr_from_scipy_shape_must_match(container):
    m = container(DENSE)
    assert_csr(S.csr_matrix(m, shape=DENSE.shape), m)
    with pytest.raises(ValueError, match=r"^csr_matrix: shape \(5, 5\) does not match"):
        S.csr_matrix(m, shape=(5, 5))


def test_csr_from_a_1d_scipy_array_is_refused():
    with pytest.raises(ValueError, match=r"^csr_matrix: arg1 must be 2-D"):
        S.csr_matrix(sp.coo_array(np.array([1.0, 0, 2])))


@pytest.mark.parametrize("shape", [(3, 4), (0, 0), (0, 5), (5, 0)])
def test_csr_empty_shape_form(shape):
    for dtype in [None, "int8", "float64", "bool"]:
        x = S.csr_matrix(shape, dtype=dtype)
        assert_csr(x, sp.csr_matrix(shape), dtype=dtype or np.float32)
        assert x.nnz == 0
    assert_csr(S.csr_matrix(shape, shape=shape), sp.csr_matrix(shape), dtype=np.float32)
    assert_csr(S.csr_matrix(shape, shape=list(shape)), sp.csr_matrix(shape), dtype=np.float32)
    assert_csr(S.csr_matrix((np.int64(shape[0]), np.int32(shape[1]))), sp.csr_matrix(shape),
               dtype=np.float32)


def test_csr_shape_must_match_the_source():
    assert_csr(S.csr_matrix(DENSE, shape=DENSE.shape), sp.csr_matrix(DENSE))
    for src in (DENSE, DENSE.tolist(), nd.array(DENSE), S.csr_matrix(DENSE)):
        with pytest.raises(ValueError, match=r"^csr_matrix: shape \(2, 2\) does not match"):
            S.csr_matrix(src, shape=(2, 2))
    with pytest.raises(ValueError, match=r"^csr_matrix: shape \(3, 3\) contradicts \(2, 3\)"):
        S.csr_matrix((2, 3), shape=(3, 3))


@pytest.mark.parametrize("shape", [(0, 0), (0, 4), (4, 0), (3, 4)])
def test_csr_degenerate_and_all_zero(shape):
    for dtype in ["float32", "int64", "bool", "float16"]:
        a = np.zeros(shape, dtype)
        for x in (S.csr_matrix(a), nd.array(a, dtype=dtype).tostype("csr"),
                  S.zeros("csr", shape, dtype=dtype), S.empty("csr", shape, dtype=dtype),
                  nd.zeros(shape, stype="csr", dtype=dtype),
                  nd.empty(shape, stype="csr", dtype=dtype),
                  S.csr_matrix(([], [], [0] * (shape[0] + 1)), shape=shape, dtype=dtype)):
            assert_csr(x, sp.csr_matrix(shape), dtype=dtype)
            assert_same(x.tostype("default"), a)


def test_csr_keeps_nan_and_inf_and_drops_negative_zero():
    a = np.array([[np.nan, -0.0, np.inf], [0.0, -np.inf, 1e-45]], np.float32)
    x = S.csr_matrix(a)
    np.testing.assert_array_equal(x.indptr.asnumpy(), [0, 2, 4])
    np.testing.assert_array_equal(x.indices.asnumpy(), [0, 2, 1, 2])
    np.testing.assert_array_equal(x.asnumpy(), a)
    ref = sp.csr_matrix(a)
    np.testing.assert_array_equal(x.data.asnumpy(), ref.data)
    h = S.csr_matrix(a.astype(np.float16))        # -0.0 is zero in float16 too
    np.testing.assert_array_equal(h.indices.asnumpy(), [0, 2, 1])     # 1e-45 -> 0 in f16


def test_asscipy_of_float16_gives_float32():
    m = S.csr_matrix(np.eye(2, dtype=np.float16)).asscipy()
    assert m.dtype == np.float32
    np.testing.assert_array_equal(m.toarray(), np.eye(2, dtype=np.float32))


# -- row_sparse_array: every form ----------------------------------------------------------

RSP_SHAPES = [(6,), (6, 3), (6, 2, 3), (4, 1, 2, 2), (0,), (0, 3), (5, 0), (3, 0, 2)]


def test_rsp_from_numpy_keeps_its_dtype():
    for dtype, shape in itertools.product(DTYPES, RSP_SHAPES):
        a = sample(dtype, shape, density=0.3, seed=len(shape))
        assert_rsp(S.row_sparse_array(a), a)
        assert_rsp(nd.array(a, dtype=dtype).tostype("row_sparse"), a)
        assert_rsp(S.row_sparse_array(nd.array(a, dtype=dtype)), a)


def test_rsp_from_list_is_float32():
    a = [[0, 0], [1, 2], [0, 0], [0, 3]]
    assert_rsp(S.row_sparse_array(a), np.array(a, np.float32))
    assert_rsp(S.row_sparse_array(a, dtype="int8"), np.array(a, np.int8))


def test_float_indices_holding_whole_numbers_are_taken():
    # MXNet programs write indices as nd.array([...]), which is float32; MXNet 1.9.1
    # stores them as int64
    rsp = S.row_sparse_array((nd.array([[1, 2], [3, 4]]), nd.array([0, 2])), shape=(4, 2))
    assert rsp.indices.dtype == np.int64
    np.testing.assert_array_equal(rsp.asnumpy(), [[1, 2], [0, 0], [3, 4], [0, 0]])
    csr = S.csr_matrix((nd.array([1, 2]), nd.array([1, 0]), nd.array([0, 1, 2])),
                       shape=(2, 2))
    assert csr.indices.dtype == np.int64 and csr.indptr.dtype == np.int64
    np.testing.assert_array_equal(csr.asnumpy(), [[0, 1], [2, 0]])
    coo = S.csr_matrix(([5.0], ([1.0], [2.0])), shape=(2, 3))
    np.testing.assert_array_equal(coo.asnumpy(), [[0, 0, 0], [0, 0, 5]])
    kept = S.retain(rsp, nd.array([2]))
    np.testing.assert_array_equal(kept.indices.asnumpy(), [2])


def test_rsp_from_rsp_ndarray_is_a_copy():
    for dtype in DTYPES:
        a = sample(dtype, (5, 3), density=0.3)
        src = S.row_sparse_array(a)
        x = S.row_sparse_array(src)
        assert x.chunk is not src.chunk
        assert_rsp(x, a)
        x[:] = np.zeros(a.shape, dtype)
        assert_rsp(x, np.zeros_like(a))
        assert_rsp(src, a)
        assert_rsp(S.array(src), a)
        assert_rsp(nd.array(src), a)


@pytest.mark.parametrize("shape", [(6,), (6, 3), (6, 2, 3)])
def test_rsp_from_data_and_indices(shape):
    rows = np.array([1, 3, 4])
    data = np.arange(1, 1 + 3 * int(np.prod(shape[1:]))).reshape((3,) + shape[1:])
    dense = np.zeros(shape, np.float32)
    dense[rows] = data
    x = S.row_sparse_array((data.tolist(), rows.tolist()), shape=shape)
    assert_rsp(x, dense)
    assert x.dtype == np.float32                     # a list: float32
    # without a shape the row count is inferred: the last row index + 1
    assert_rsp(S.row_sparse_array((data.tolist(), rows.tolist())), dense[:5])
    e = S.row_sparse_array((np.zeros((0,) + shape[1:]), []), shape=shape)
    assert_rsp(e, np.zeros(shape))
    with pytest.raises(ValueError, match="shape cannot be inferred from empty indices"):
        S.row_sparse_array((np.zeros((0,) + shape[1:]), []))


def test_rsp_from_data_and_indices_keeps_the_data_dtype():
    for dtype in DTYPES:
        dense = sample(dtype, (5, 2, 2), density=0.5)
        rows, data = rsp_ref(dense)
        assert_rsp(S.row_sparse_array((data, rows), shape=dense.shape), dense)
        x = S.row_sparse_array((nd.array(data, dtype=dtype), nd.array(rows, dtype="int32")),
                               shape=dense.shape)
        assert_rsp(x, dense)
        assert_rsp(S.row_sparse_array((data, rows), shape=dense.shape, dtype="float64"),
                   dense.astype(np.float64))


def test_rsp_keeps_stored_zero_rows():
    # (data, indices) may store rows of zeros: they are kept as given
    x = S.row_sparse_array(([[0.0, 0.0], [1.0, 0.0]], [0, 2]), shape=(3, 2))
    np.testing.assert_array_equal(x.indices.asnumpy(), [0, 2])
    assert_same(x.tostype("default"), np.array([[0, 0], [0, 0], [1, 0]], np.float32))


def test_rsp_shape_only_and_zeros():
    for shape in [(3,), (3, 4), (2, 3, 4), (0,), (0, 2), (2, 0, 1)]:
        for dtype in [None, "int32", "bool"]:
            want = np.zeros(shape, dtype or np.float32)
            for x in (S.row_sparse_array(shape, dtype=dtype),
                      S.zeros("row_sparse", shape, dtype=dtype),
                      S.empty("row_sparse", shape, dtype=dtype),
                      nd.zeros(shape, stype="row_sparse", dtype=dtype),
                      nd.empty(shape, stype="row_sparse", dtype=dtype)):
                assert_rsp(x, want)
                assert x.indices.shape == (0,)
        assert_rsp(S.row_sparse_array(shape, shape=shape), np.zeros(shape, np.float32))
        with pytest.raises(ValueError, match=r"^row_sparse_array: shape .* contradicts"):
            S.row_sparse_array(shape, shape=shape + (1,))
    assert_rsp(S.zeros("row_sparse", 4), np.zeros(4, np.float32))      # an int shape


@pytest.mark.parametrize("call, match", [
    (lambda: S.zeros("csr", (2 ** 62, 2 ** 62)),
     r"^sparse\.zeros: shape \(4611686018427387904, 4611686018427387904\) is too large: its "
     r"size overflows int64$"),
    (lambda: S.zeros("row_sparse", (2 ** 62, 2 ** 62)), r"^sparse\.zeros: shape .* too large"),
    (lambda: S.zeros("csr", (2 ** 63 - 1, 2)), "its size overflows int64"),
    (lambda: S.zeros("csr", (-1, 2)), r"^sparse\.zeros: shape must contain non-negative"),
    (lambda: S.zeros("row_sparse", (1,) * 33), "at most 32 dimensions"),
    (lambda: S.csr_matrix((2 ** 62, 2 ** 62)), r"^csr_matrix: shape .* too large"),
    (lambda: S.row_sparse_array((2 ** 40, 2 ** 40)), r"^row_sparse_array: shape .* too large"),
    (lambda: S.row_sparse_array((np.zeros((0, 2 ** 31)), np.zeros(0, np.int64)),
                                shape=(2 ** 62, 2 ** 31)),
     r"^row_sparse_array: shape \(4611686018427387904, 2147483648\) is too large"),
    (lambda: S.csr_matrix(([], [], [0]), shape=(0, 2 ** 63)), r"^csr_matrix: shape .* too large"),
    (lambda: S.csr_matrix(([], ([], [])), shape=(2 ** 62, 4)), r"^csr_matrix: shape .* too large"),
])
def test_sparse_shapes_are_size_checked(call, match):
    # The logical shape of a sparse array is checked like a dense one: its size, nbytes
    # and dense form must exist.
    with pytest.raises(ValueError, match=match):
        call()


def test_sparse_shapes_huge_but_valid():
    # the dense form of (2**30, 2**30) float32 has 2**62 bytes, which int64 holds: only
    # the stored parts take memory
    x = S.zeros("row_sparse", (2 ** 30, 2 ** 30))
    assert x.shape == (2 ** 30, 2 ** 30) and x.nbytes == 2 ** 62 and x.indices.shape == (0,)
    with pytest.raises(ValueError, match="of float32 is too large: its size in bytes"):
        S.zeros("row_sparse", (2 ** 31, 2 ** 31))
    y = S.row_sparse_array((np.ones((1, 2 ** 10), np.float32), [2 ** 40]),
                           shape=(2 ** 41, 2 ** 10))
    assert y.data.shape == (1, 2 ** 10)
    # indptr of 2**50 rows is 8 PiB: out of memory, before any host temporary is made
    with pytest.raises(MemoryError, match="more than a pool block can hold"):
        S.zeros("csr", (2 ** 50, 1))


def test_rsp_shape_must_match_the_source():
    a = sample("float32", (4, 3))
    for src in (a, a.tolist(), nd.array(a), S.row_sparse_array(a)):
        assert_rsp(S.row_sparse_array(src, shape=(4, 3)), a)
        with pytest.raises(ValueError, match=r"^row_sparse_array: shape \(4, 4\) does not"):
            S.row_sparse_array(src, shape=(4, 4))


def test_sparse_zeros_dense_stype_is_dense():
    z = S.zeros("default", (2, 3), dtype="int8")
    assert z.stype == "default"
    assert_same(z, np.zeros((2, 3), np.int8))


# -- dtype rules (MXNet's) -------------------------------------------------------------------

CSR_DTYPE_RULES = [
    (lambda: [[1, 0]], np.float32),
    (lambda: [[1.5, 0]], np.float32),
    (lambda: np.array([[1, 0]], np.int64), np.int64),
    (lambda: np.array([[1, 0]], np.float64), np.float64),
    (lambda: np.array([[1, 0]], np.uint8), np.uint8),
    (lambda: nd.array([[1, 0]], dtype="int8"), np.int8),
    (lambda: sp.csr_matrix(np.array([[1, 0]], np.int32)), np.int32),
    (lambda: sp.csr_array(np.array([[1, 0]], np.float64)), np.float64),
    (lambda: ([1, 2], [0, 1], [0, 1, 2]), np.float32),
    (lambda: (np.array([1, 2], np.int32), [0, 1], [0, 1, 2]), np.int32),
    (lambda: (nd.array([1, 2], dtype="float64"), [0, 1], [0, 1, 2]), np.float64),
    (lambda: ([1, 2], ([0, 1], [0, 1])), np.float32),
    (lambda: (np.array([1, 2], np.uint8), ([0, 1], [0, 1])), np.uint8),
    (lambda: (2, 2), np.float32),
]
RSP_DTYPE_RULES = [
    (lambda: [[1, 0]], np.float32),
    (lambda: np.array([[1, 0]], np.int32), np.int32),
    (lambda: np.array([True, False]), np.bool_),
    (lambda: nd.array([[1, 0]], dtype="float64"), np.float64),
    (lambda: S.row_sparse_array(np.array([[1, 0]], np.int64)), np.int64),
    (lambda: ([[1, 2]], [0]), np.float32),
    (lambda: (np.array([[1, 2]], np.int8), [0]), np.int8),
    (lambda: (nd.array([[1, 2]], dtype="uint8"), [0]), np.uint8),
    (lambda: (2, 2), np.float32),
]


def test_default_dtype_rules():
    """MXNet: the source's dtype for NDArray, NumPy and SciPy sources (and for ``data`` as
    NumPy/NDArray in the tuple forms), float32 for Python lists; ``dtype=`` wins."""
    for i, (src, want) in enumerate(CSR_DTYPE_RULES):
        assert S.csr_matrix(src()).dtype == want, i
        assert S.csr_matrix(src(), dtype="float16").dtype == np.float16, i
    for i, (src, want) in enumerate(RSP_DTYPE_RULES):
        assert S.row_sparse_array(src()).dtype == want, i
        assert S.row_sparse_array(src(), dtype="int64").dtype == np.int64, i


# -- storage casts ----------------------------------------------------------------------------

def test_tostype_round_trips():
    for dtype in DTYPES:
        a = sample(dtype, (6, 5))
        x = nd.array(a, dtype=dtype)
        c = x.tostype("csr")
        assert_csr(c, scipy_ref(a), dtype=dtype)
        assert_same(c.tostype("default"), a)
        r = x.tostype("row_sparse")
        assert_rsp(r, a)
        assert_same(r.tostype("default"), a)
        assert_same(S.cast_storage(c, "default"), a)
        assert_same(S.cast_storage(r, "default"), a)


@pytest.mark.parametrize("stype", ["default", "csr", "row_sparse"])
def test_tostype_to_the_same_stype_is_a_copy(stype):
    a = sample("float32", (4, 3))
    x = nd.array(a).tostype(stype) if stype != "default" else nd.array(a)
    y = x.tostype(stype)
    assert y is not x and y.stype == stype and y.chunk is not x.chunk
    assert_same(y.tostype("default"), a)
    y[:] = np.ones(a.shape, np.float32)                 # write the copy
    assert_same(x.tostype("default"), a)                # the original is unchanged
    assert_same(y.tostype("default"), np.ones(a.shape, np.float32))


@pytest.mark.parametrize("src, dst", [("csr", "row_sparse"), ("row_sparse", "csr")])
def test_tostype_between_sparse_types_raises(src, dst):
    x = nd.array(sample("float32", (3, 3))).tostype(src)
    with pytest.raises(ValueError, match=rf"^cast_storage: cannot convert {src} to {dst}"):
        x.tostype(dst)
    with pytest.raises(ValueError, match=r"^csr_matrix: arg1 must be a dense or csr"):
        S.csr_matrix(nd.zeros((2, 2), stype="row_sparse"))
    with pytest.raises(ValueError, match=r"^row_sparse_array: arg1 must be a dense or row_sp"):
        S.row_sparse_array(nd.zeros((2, 2), stype="csr"))


def test_tostype_bad_stype_and_shapes():
    x = nd.array(DENSE)
    with pytest.raises(ValueError, match=r"^cast_storage: stype must be one of"):
        x.tostype("coo")
    with pytest.raises(ValueError, match=r"^cast_storage: csr needs a 2-D array"):
        nd.zeros((2, 2, 2)).tostype("csr")
    with pytest.raises(ValueError, match=r"^cast_storage: csr needs a 2-D array"):
        nd.zeros(3).tostype("csr")
    with pytest.raises(ValueError, match=r"^cast_storage: row_sparse needs at least 1"):
        nd.zeros(()).tostype("row_sparse")


def test_tostype_of_dense_views():
    base = nd.array(np.arange(30, dtype=np.float32).reshape(5, 6) % 4)
    ref = base.asnumpy()
    assert_rsp(base[1:4].tostype("row_sparse"), ref[1:4])
    assert_rsp(base[2].tostype("row_sparse"), ref[2])
    assert_rsp(base.reshape(10, 3).tostype("row_sparse"), ref.reshape(10, 3))
    assert_csr(base.reshape(3, 10).tostype("csr"), sp.csr_matrix(ref.reshape(3, 10)))
    assert_csr(base[3:].tostype("csr"), sp.csr_matrix(ref[3:]))


# -- csr row slices ------------------------------------------------------------------------

SLICES = [slice(None), slice(1, 3), slice(0, 0), slice(3, 1), slice(-3, None),
          slice(None, -2), slice(-100, 100), slice(4, 100), slice(100, 200), slice(2, 3),
          slice(-1, None), slice(1, 4, 1), slice(None, None, None)]


@pytest.mark.parametrize("container", CSR_CONTAINERS)
def test_csr_row_slices_match_scipy(container):
    for dtype in ["float64", "int8", "float16"]:
        a = DENSE.astype(dtype)
        m = container(scipy_ref(a))
        x = S.csr_matrix(a)
        for key in SLICES:
            y = x[key]
            assert_csr(y, sp.csr_matrix(m[key]), dtype=dtype)
            assert y.chunk is not x.chunk and y.ctx == x.ctx
        assert_csr(x, m, dtype=dtype)
    x = S.csr_matrix(DENSE)
    y = x[1:4]
    y[:] = np.ones(y.shape)                          # slices are copies
    assert_csr(x, sp.csr_matrix(DENSE))
    assert_csr(x[1:4][1:], sp.csr_matrix(DENSE[2:4]))     # a slice of a slice


def test_csr_row_slice_of_empty_and_zero_column_matrices():
    for shape in [(0, 3), (4, 0), (0, 0)]:
        x = S.csr_matrix(shape)
        for key in (slice(None), slice(1, 3), slice(-2, None)):
            assert_csr(x[key], sp.csr_matrix(shape)[key], dtype=np.float32)


def test_csr_other_indexing_raises():
    x = S.csr_matrix(DENSE)
    for key in [slice(0, 4, 2), slice(None, None, -1), (0, 1), Ellipsis, [0, 1],
                nd.array([0, 1], dtype="int64"), True]:
        with pytest.raises(TypeError, match=r"csr arrays support only an int or a row slice "
                                            r"x\[a:b\]"):
            x[key]


def test_rsp_indexing():
    x = S.row_sparse_array(DENSE)
    assert x[:] is x
    with pytest.raises(TypeError, match="row_sparse arrays support only"):
        x[0]


# -- parts are copies ---------------------------------------------------------------------

def test_csr_parts_are_dense_copies():
    x = S.csr_matrix(DENSE)
    ref = sp.csr_matrix(DENSE)
    for name in ("data", "indices", "indptr"):
        p = getattr(x, name)
        assert p.stype == "default" and p.ctx == x.ctx
        assert p.chunk is not x.chunk
        p[:] = 0
    assert_csr(x, ref)
    x.data.asnumpy()[:] = 7                                  # the NumPy copy too
    assert_csr(x, ref)


def test_rsp_parts_are_dense_copies():
    x = S.row_sparse_array(DENSE)
    for name in ("data", "indices"):
        p = getattr(x, name)
        assert p.stype == "default"
        p[:] = 0
    assert_rsp(x, DENSE)


# -- check_format ------------------------------------------------------------------------------

CSR3 = np.array([[1, 0, 2], [0, 3, 0], [4, 0, 5]], np.float32)
# indptr [0, 2, 3, 5], indices [0, 2, 1, 0, 2]


CSR_DEFECTS = [      # (aux part: 0 indptr / 1 indices, position, value, rule and position)
    (0, 0, 1, r"indptr\[0\] must be 0 \(got 1\)"),
    (0, 1, 4, r"indptr must be non-decreasing \(got indptr\[1\]=4 > indptr\[2\]=3\)"),
    (0, 2, 1, r"indptr must be non-decreasing \(got indptr\[1\]=2 > indptr\[2\]=1\)"),
    (0, 3, 4, r"indptr\[-1\] must equal nnz=5 \(got 4\)"),
    (1, 1, 3, r"indices must be in \[0, ncols=3\) \(got indices\[1\]=3 in row 0\)"),
    (1, 2, -1, r"indices must be in \[0, ncols=3\) \(got indices\[2\]=-1 in row 1\)"),
    (1, 4, 0, r"indices must be strictly increasing within each row \(got indices\[4\]=0 "
              r"<= indices\[3\]=0 in row 2\)"),
    (1, 0, 2, r"indices must be strictly increasing within each row \(got indices\[1\]=2 "
              r"<= indices\[0\]=2 in row 0\)"),
]


def test_csr_check_format_names_the_rule_and_position():
    for part, pos, value, message in CSR_DEFECTS:
        x = S.csr_matrix(CSR3)
        x.check_format(full_check=True)
        S.check_format(x)
        storage_view(x, part)[pos] = value          # a defect written into valid storage
        for check in (x.check_format, lambda **kw: S.check_format(x, **kw)):
            with pytest.raises(ValueError, match=r"^check_format: " + message):
                check(full_check=True)


def test_csr_check_format_without_full_check_skips_the_index_scan():
    x = S.csr_matrix(CSR3)
    storage_view(x, 1)[0] = 2                 # unsorted row: found only by the full check
    x.check_format(full_check=False)
    with pytest.raises(ValueError, match="strictly increasing"):
        x.check_format()                      # full_check defaults to True
    y = S.csr_matrix(CSR3)
    storage_view(y, 0)[0] = 1                 # the cheap check still reads indptr's ends
    with pytest.raises(ValueError, match=r"^check_format: indptr\[0\] must be 0"):
        y.check_format(full_check=False)


@pytest.mark.parametrize("full_check", ["maybe", None, 1, 0.0])
def test_check_format_full_check_must_be_a_bool(full_check):
    x = S.csr_matrix(CSR3)
    with pytest.raises(TypeError, match=r"^check_format: full_check must be a bool "
                                        rf"\(got {re.escape(repr(full_check))}\)"):
        x.check_format(full_check=full_check)
    with pytest.raises(TypeError, match="full_check must be a bool"):
        S.check_format(nd.zeros(2), full_check)          # checked before the stype
    x.check_format(np.bool_(False))


RSP_DEFECTS = [
    (1, 7, r"indices must be in \[0, nrows=5\) \(got indices\[1\]=7\)"),
    (0, -1, r"indices must be in \[0, nrows=5\) \(got indices\[0\]=-1\)"),
    (1, 0, r"indices must be strictly increasing \(got indices\[1\]=0 <= indices\[0\]=0\)"),
    (0, 3, r"indices must be strictly increasing \(got indices\[1\]=2 <= indices\[0\]=3\)"),
]


def test_rsp_check_format_names_the_rule_and_position():
    for pos, value, message in RSP_DEFECTS:
        x = S.row_sparse_array(DENSE)              # rows 0, 2, 3
        x.check_format()
        storage_view(x, 0)[pos] = value
        x.check_format(full_check=False)
        with pytest.raises(ValueError, match=r"^check_format: " + message):
            x.check_format(full_check=True)
        with pytest.raises(ValueError, match=r"^check_format: " + message):
            S.check_format(x)


def test_check_format_of_dense_and_valid_arrays_passes():
    S.check_format(nd.array(DENSE))
    for x in (S.csr_matrix(DENSE), S.row_sparse_array(DENSE), S.zeros("csr", (0, 0)),
              S.zeros("row_sparse", (0,))):
        assert x.check_format() is None


# -- bad constructor input ------------------------------------------------------------------

BAD_INPUT = [
    # csr_matrix
    (lambda: S.csr_matrix([[1, 2], [3]]), ValueError,
     r"csr_matrix: arg1 must be a rectangular array-like"),
    (lambda: S.csr_matrix([["a", "b"]]), TypeError, r"csr_matrix: arg1 must hold numbers"),
    (lambda: S.csr_matrix(np.zeros((2, 2), np.uint16)), TypeError,
     r"csr_matrix: the source's dtype must be one of"),
    (lambda: S.csr_matrix([[1]], dtype="complex64"), TypeError, r"csr_matrix: dtype must be"),
    (lambda: S.csr_matrix(np.zeros((2, 2, 2))), ValueError,
     r"csr_matrix: arg1 must be 2-D \(got shape \(2, 2, 2\)\)"),
    (lambda: S.csr_matrix(nd.zeros((2, 2, 2))), ValueError, r"csr_matrix: arg1 must be 2-D"),
    (lambda: S.csr_matrix([1, 2, 3]), ValueError, r"csr_matrix: arg1 must be 2-D"),
    (lambda: S.csr_matrix((2, 3, 4)), ValueError, r"csr_matrix: csr arrays are 2-D"),
    (lambda: S.csr_matrix((-1, 3)), ValueError, r"csr_matrix: shape must contain non-neg"),
    (lambda: S.csr_matrix(([1.0], [0], [0, 1]), shape=(1, 2, 3)), ValueError,
     r"csr_matrix: shape must be 2-D"),
    (lambda: S.csr_matrix(([1.0], ([0], [0])), shape=(1, 2, 3)), ValueError,
     r"csr_matrix: shape must be 2-D"),
    (lambda: S.csr_matrix((1, 2, 3, 4, 5)), ValueError, r"csr_matrix: csr arrays are 2-D"),
    (lambda: S.csr_matrix(([1.0], [0], [0, 1], None)), ValueError,
     r"csr_matrix: a tuple argument must be"),
    (lambda: S.csr_matrix(([1.0, 2.0], [0.0, 1.5], [0, 1, 2])), ValueError,
     r"csr_matrix: indices must hold whole numbers \(got indices\[1\]=1.5\)"),
    (lambda: S.csr_matrix(([1.0, 2.0], [0, 1], [0.0, 1.0, np.inf])), ValueError,
     r"csr_matrix: indptr must hold whole numbers \(got indptr\[2\]=inf\)"),
    (lambda: S.csr_matrix(([1.0, 2.0], [0, 1], ["0", "1", "2"])), TypeError,
     r"csr_matrix: indptr must hold integers \(got dtype <U1\)"),
    (lambda: S.csr_matrix((["x"], [0], [0, 1])), TypeError,
     r"csr_matrix: data must hold numbers"),
    (lambda: S.csr_matrix(([1.0, 2.0], [0, -1], [0, 1, 2]), shape=(2, 3)), ValueError,
     r"csr_matrix: indices must be in \[0, ncols=3\) \(got indices\[1\]=-1 in row 1\)"),
    (lambda: S.csr_matrix(([1.0, 2.0, 3.0], [0, 1], [0, 1, 2]), shape=(2, 3)), ValueError,
     r"csr_matrix: data and indices must have the same length \(got 3 and 2\)"),
    (lambda: S.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(3, 3)), ValueError,
     r"csr_matrix: indptr must have rows \+ 1 = 4 entries"),
    (lambda: S.csr_matrix(([1.0, 2.0], [0, 1], [0, 2, 1]), shape=(2, 3)), ValueError,
     r"csr_matrix: indptr\[-1\] must equal nnz=2"),
    (lambda: S.csr_matrix(([1.0, 2.0], [0, 1], [1, 1, 2]), shape=(2, 3)), ValueError,
     r"csr_matrix: indptr\[0\] must be 0"),
    (lambda: S.csr_matrix(([1.0, 2.0], [1, 0], [0, 2, 2]), shape=(2, 3)), ValueError,
     r"csr_matrix: indices must be strictly increasing within each row"),
    (lambda: S.csr_matrix(([1.0], [0], [])), ValueError,
     r"csr_matrix: indptr must have at least one entry"),
    (lambda: S.csr_matrix(([[1.0]], [0], [0, 1])), ValueError, r"csr_matrix: data must be 1-D"),
    (lambda: S.csr_matrix(([1.0], [[0]], [0, 1])), ValueError,
     r"csr_matrix: indices must be 1-D"),
    (lambda: S.csr_matrix(([1.0, 2.0], [0, 5], [0, 1, 2]), shape=(2, 3)), ValueError,
     r"csr_matrix: indices must be in \[0, ncols=3\) \(got indices\[1\]=5 in row 1\)"),
    (lambda: S.csr_matrix(([1.0, 2.0], ([0, 5], [0, 1])), shape=(2, 3)), ValueError,
     r"csr_matrix: shape \(2, 3\) is too small for the indices \(need at least \(6, 2\)\)"),
    (lambda: S.csr_matrix(([1.0, 2.0], ([0, -1], [0, 1]))), ValueError,
     r"csr_matrix: row indices must be >= 0 \(got row\[1\]=-1\)"),
    (lambda: S.csr_matrix(([1.0, 2.0], ([0, 1], [-3, 1]))), ValueError,
     r"csr_matrix: col indices must be >= 0 \(got col\[0\]=-3\)"),
    (lambda: S.csr_matrix(([1.0, 2.0], ([0, 1], [0.5, 1]))), ValueError,
     r"csr_matrix: col must hold whole numbers"),
    (lambda: S.csr_matrix(([1.0, 2.0], ([0, 1], [0]))), ValueError,
     r"csr_matrix: data, row and col must be 1-D of one length"),
    (lambda: S.csr_matrix(DENSE, shape=(5,)), ValueError, r"csr_matrix: shape \(5,\) does"),
    # row_sparse_array
    (lambda: S.row_sparse_array([[1, 2], [3]]), ValueError,
     r"row_sparse_array: arg1 must be a rectangular array-like"),
    (lambda: S.row_sparse_array(np.float32(1)), ValueError,
     r"row_sparse_array: arg1 must have at least 1 dimension"),
    (lambda: S.row_sparse_array(nd.zeros(())), ValueError,
     r"row_sparse_array: arg1 must have at least 1 dimension"),
    (lambda: S.row_sparse_array(()), ValueError,
     r"row_sparse_array: shape must have at least 1 dimension"),
    (lambda: S.row_sparse_array((2, -1)), ValueError,
     r"row_sparse_array: shape must contain non-negative"),
    (lambda: S.row_sparse_array(np.zeros(2, np.complex64)), TypeError,
     r"row_sparse_array: the source's dtype must be one of"),
    (lambda: S.row_sparse_array([[1.0]], dtype="str"), TypeError,
     r"row_sparse_array: dtype must be one of"),
    (lambda: S.row_sparse_array(([[1.0, 2.0]], [0.5]), shape=(2, 2)), ValueError,
     r"row_sparse_array: indices must hold whole numbers \(got indices\[0\]=0.5\)"),
    (lambda: S.row_sparse_array(([[1.0, 2.0]], [np.nan]), shape=(2, 2)), ValueError,
     r"row_sparse_array: indices must hold whole numbers \(got indices\[0\]=nan\)"),
    (lambda: S.row_sparse_array(([["a"]], [0]), shape=(2, 1)), TypeError,
     r"row_sparse_array: data must hold numbers"),
    (lambda: S.row_sparse_array(([[1.0, 2.0]], [-1]), shape=(2, 2)), ValueError,
     r"row_sparse_array: indices must be in \[0, nrows=2\) \(got indices\[0\]=-1\)"),
    (lambda: S.row_sparse_array(([[1.0, 2.0]], [5]), shape=(2, 2)), ValueError,
     r"row_sparse_array: indices must be in \[0, nrows=2\) \(got indices\[0\]=5\)"),
    (lambda: S.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [1, 0]), shape=(2, 2)), ValueError,
     r"row_sparse_array: indices must be strictly increasing \(got indices\[1\]=0 <= "),
    (lambda: S.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [1, 1]), shape=(2, 2)), ValueError,
     r"row_sparse_array: indices must be strictly increasing \(got indices\[1\]=1 <= "),
    (lambda: S.row_sparse_array(([[1.0, 2.0]], [0, 1]), shape=(2, 2)), ValueError,
     r"row_sparse_array: data has 1 rows but indices has 2 entries"),
    (lambda: S.row_sparse_array(([[1.0, 2.0]], [0]), shape=(2, 3)), ValueError,
     r"row_sparse_array: data rows must have shape \(3,\)"),
    (lambda: S.row_sparse_array(([1.0, 2.0], [0, 1]), shape=(2, 2)), ValueError,
     r"row_sparse_array: data rows must have shape"),
    (lambda: S.row_sparse_array((1.0, [0])), ValueError,
     r"row_sparse_array: data must have at least 1 dimension"),
    (lambda: S.row_sparse_array(([[1.0]], [0], [0])), ValueError,
     r"row_sparse_array: a tuple argument must be a shape or \(data, indices\)"),
    (lambda: S.row_sparse_array(([[1.0]], [[0]])), ValueError,
     r"row_sparse_array: indices must be 1-D"),
    # zeros / empty
    (lambda: S.zeros("coo", (2, 2)), ValueError,
     r"sparse.zeros: stype must be one of default, row_sparse, csr \(got 'coo'\)"),
    (lambda: S.empty("dense", (2, 2)), ValueError, r"sparse.zeros: stype must be one of"),
    (lambda: S.zeros("csr", (2, 2, 2)), ValueError, r"sparse.zeros: csr arrays are 2-D"),
    (lambda: S.zeros("csr", (2,)), ValueError, r"sparse.zeros: csr arrays are 2-D"),
    (lambda: S.zeros("row_sparse", ()), ValueError,
     r"sparse.zeros: row_sparse arrays have at least 1 dimension"),
    (lambda: S.zeros("csr", (2, -2)), ValueError, r"sparse.zeros: shape must contain non-neg"),
    (lambda: S.zeros("csr", "2x2"), TypeError, r"sparse.zeros: shape must be a tuple of ints"),
    (lambda: S.zeros("csr", (2.0, 2)), TypeError, r"sparse.zeros: shape must be a tuple"),
    (lambda: S.zeros("csr", (2, 2), dtype=np.uint16), TypeError,
     r"sparse.zeros: dtype must be one of"),
    (lambda: nd.zeros((2, 2), stype="coo"), ValueError, r"sparse.zeros: stype must be one of"),
    # retain / array
    (lambda: S.retain(nd.array(DENSE), [0]), TypeError,
     r"retain: data must be a row_sparse NDArray \(got default\)"),
    (lambda: S.retain(S.csr_matrix(DENSE), [0]), TypeError,
     r"retain: data must be a row_sparse NDArray \(got csr\)"),
    (lambda: S.retain(S.row_sparse_array(DENSE), [0.5]), ValueError,
     r"retain: indices must hold whole numbers"),
    (lambda: S.retain(S.row_sparse_array(DENSE), [[0]]), ValueError,
     r"retain: indices must be 1-D"),
    (lambda: S.array(nd.array(DENSE)), TypeError, r"sparse.array: source_array must be sparse"),
]


def test_bad_input_raises_a_clear_error():
    """Each bad input raises exactly ``exc`` with a message that starts with the function
    name (one test with a loop: the pool check per test item costs more than the calls)."""
    wrong = []
    for i, (call, exc, message) in enumerate(BAD_INPUT):
        try:
            call()
        except Exception as e:
            if type(e) is not exc or not re.match(message, str(e)):
                wrong.append(f"case {i}: {type(e).__name__}: {e}  (want {exc.__name__} "
                             f"matching {message!r})")
        else:
            wrong.append(f"case {i}: no exception (want {exc.__name__} {message!r})")
    assert not wrong, "\n".join(wrong)
    with pytest.raises(ValueError, match="tpu"):                # the context's own error
        S.csr_matrix(DENSE, ctx="tpu")


def test_bad_input_leaves_the_inputs_unchanged():
    data = np.array([1.0, 2.0, 3.0])
    indices = np.array([0, 1])
    indptr = np.array([0, 1, 2])
    nd_data = nd.array(data)
    copies = [a.copy() for a in (data, indices, indptr)]
    for d in (data, nd_data):
        with pytest.raises(ValueError):
            S.csr_matrix((d, indices, indptr), shape=(2, 3))
    for a, c in zip((data, indices, indptr), copies):
        np.testing.assert_array_equal(a, c)
    assert_same(nd_data, data.astype(np.float32))
    m = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 7]), np.array([0, 1, 2])),
                      shape=(2, 3))
    with pytest.raises(ValueError):
        S.csr_matrix(m)
    np.testing.assert_array_equal(m.indices, [0, 7])
    src = S.row_sparse_array(DENSE)
    with pytest.raises(ValueError):
        S.row_sparse_array(src, shape=(1, 1))
    assert_rsp(src, DENSE)


# -- retain ----------------------------------------------------------------------------------

def retain_ref(dense, idx):
    out = np.zeros_like(dense)
    keep = [i for i in np.unique(np.asarray(idx, np.int64)) if 0 <= i < dense.shape[0]]
    out[keep] = dense[keep]
    return out


@pytest.mark.parametrize("shape", [(5, 4), (5,), (5, 2, 2)])
def test_retain_matches_numpy(shape):
    dense = sample("float32", shape, density=0.6, seed=3)
    dense[1] = 0                                     # an empty row that is asked for
    x = S.row_sparse_array(dense)
    for idx in [[0, 2], [2, 0], [3], [1], [], [0, 0, 3], [0, 1, 2, 3, 4], [4, 100],
                np.array([2, 3], np.int32), np.array([0, 3], np.uint8)]:
        want = retain_ref(dense, idx)
        for y in (S.retain(x, idx), x.retain(idx),
                  x.retain(nd.array(np.asarray(idx, np.int64), dtype="int64")),
                  x.retain(nd.array(np.asarray(idx, np.int64), dtype="int32"))):
            assert isinstance(y, RowSparseNDArray) and y.dtype == x.dtype and y.ctx == x.ctx
            assert y.chunk is not x.chunk
            assert_same(y.tostype("default"), want)
            y.check_format()
            stored = y.indices.asnumpy()
            assert set(stored.tolist()) <= set(np.asarray(idx, np.int64).tolist())
    assert_rsp(x, dense)                             # the source is unchanged


def test_retain_of_empty_and_int_arrays():
    z = S.zeros("row_sparse", (3, 2), dtype="int8")
    assert_same(z.retain([0, 1]).tostype("default"), np.zeros((3, 2), np.int8))
    a = sample("int64", (4, 3), density=0.7)
    assert_same(S.row_sparse_array(a).retain([1, 3]).tostype("default"), retain_ref(a, [1, 3]))


# -- copies, contexts, dtypes ---------------------------------------------------------------

@pytest.mark.parametrize("make", [S.csr_matrix, S.row_sparse_array], ids=["csr", "rsp"])
def test_copyto_and_copy(make):
    a = sample("float32", (4, 3))
    x = make(a)
    for y in (x.copyto(rt.cpu()), x.copy(), x.copyto("cpu")):
        assert y.stype == x.stype and y.chunk is not x.chunk and y.dtype == x.dtype
        assert y.ctx == rt.cpu()
        assert_same(y.tostype("default"), a)
        y[:] = np.zeros(a.shape, np.float32)
        assert_same(x.tostype("default"), a)
    assert x.as_in_context(rt.cpu()) is x
    dst = make(np.zeros((4, 3), np.float64))
    assert x.copyto(dst) is dst
    assert dst.dtype == np.float64
    assert_same(dst.tostype("default"), a.astype(np.float64))
    dense = nd.zeros((4, 3))              # another storage type: cast (MXNet's CopyFromTo)
    assert x.copyto(dense) is dense and dense.stype == "default"
    assert_same(dense, a)
    with pytest.raises(ValueError, match="shape"):
        x.copyto(make(np.zeros((2, 3), np.float32)))
    with pytest.raises(TypeError, match="copyto: other must be"):
        x.copyto(3)


@pytest.mark.parametrize("make", [S.csr_matrix, S.row_sparse_array], ids=["csr", "rsp"])
def test_construct_on_a_context(make):
    a = sample("float32", (4, 3))
    for ctx in (rt.cpu(), "cpu", rt.Context("cpu", 0)):
        x = make(a, ctx=ctx)
        assert x.ctx == rt.cpu()
        assert_same(x.tostype("default"), a)
    with rt.cpu():
        assert make(a).ctx == rt.cpu()


@pytest.mark.parametrize("make", [S.csr_matrix, S.row_sparse_array], ids=["csr", "rsp"])
def test_astype(make):
    a = sample("float64", (5, 4)) / 2
    x = make(a)
    for dtype in DTYPES:
        y = x.astype(dtype)
        assert y.stype == x.stype and y.dtype == np.dtype(dtype).type
        assert y.chunk is not x.chunk
        assert_same(y.tostype("default"), a.astype(dtype))   # stored values cast as NumPy
        y.check_format()
    assert x.astype("float64", copy=False) is x
    z = x.astype("float64")
    assert z is not x and z.chunk is not x.chunk


def test_sparse_setitem_full_assignment():
    x = S.csr_matrix(DENSE)
    x[:] = 0
    assert x.nnz == 0
    x[:] = nd.array(CSR3[:, :1].repeat(4, axis=1)[:1].repeat(5, axis=0))
    assert_same(x.tostype("default"), np.ones((5, 4)))
    r = S.row_sparse_array(DENSE)
    r[:] = S.row_sparse_array(DENSE * 2)
    assert_rsp(r, DENSE * 2)
    with pytest.raises(TypeError, match="support only full assignment"):
        r[0] = 1


def test_pickle_round_trips_sparse():
    import pickle
    for x in (S.csr_matrix(DENSE), S.row_sparse_array(sample("int8", (4, 2, 2)))):
        y = pickle.loads(pickle.dumps(x))
        assert type(y) is type(x) and y.dtype == x.dtype and y.shape == x.shape
        assert_same(y.tostype("default"), x.tostype("default").asnumpy())


def test_sparse_memory_returns_to_the_pool():
    import allocator
    pool = allocator.get_pool("cpu")
    gc.collect()
    start = pool.memory_stats()["allocated_bytes.all.current"]
    xs = [S.csr_matrix(sample("float64", (64, 64), seed=i)) for i in range(4)]
    xs += [S.row_sparse_array(sample("float64", (64, 8), seed=i)) for i in range(4)]
    views = [storage_view(x, 0) for x in xs]
    assert pool.memory_stats()["allocated_bytes.all.current"] > start
    del xs
    gc.collect()
    assert pool.memory_stats()["allocated_bytes.all.current"] > start   # views keep chunks
    del views
    gc.collect()
    assert pool.memory_stats()["allocated_bytes.all.current"] == start


# -- properties (hypothesis) ----------------------------------------------------------------

def _dense_arrays(ndim_min, ndim_max):
    @st.composite
    def build(draw):
        dtype = np.dtype(draw(st.sampled_from(DTYPES)))
        shape = draw(hnp.array_shapes(min_dims=ndim_min, max_dims=ndim_max, min_side=0,
                                      max_side=9))
        values = hnp.arrays(dtype, shape, elements=hnp.from_dtype(dtype, allow_nan=True))
        a = draw(values)
        density = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
        keep = draw(hnp.arrays(np.float64, shape, elements=st.floats(0, 1)))
        return np.where(keep < density, a, np.zeros((), dtype)).astype(dtype)
    return build()


@settings(deadline=None, max_examples=150)
@given(a=_dense_arrays(2, 2))
def test_property_dense_csr_round_trip_matches_scipy(a):
    x = nd.array(a, dtype=a.dtype)
    c = x.tostype("csr")
    c.check_format()
    np.testing.assert_array_equal(c.tostype("default").asnumpy(), a)   # NaN == NaN here
    ref = scipy_ref(a)
    np.testing.assert_array_equal(c.indptr.asnumpy(), ref.indptr)
    np.testing.assert_array_equal(c.indices.asnumpy(), ref.indices)
    np.testing.assert_array_equal(c.data.asnumpy(), ref.data.astype(a.dtype))
    d = S.csr_matrix(a)
    assert d.dtype == a.dtype
    np.testing.assert_array_equal(d.indptr.asnumpy(), ref.indptr)
    np.testing.assert_array_equal(d.indices.asnumpy(), ref.indices)
    np.testing.assert_array_equal(d.data.asnumpy(), ref.data.astype(a.dtype))


@settings(deadline=None, max_examples=150)
@given(a=_dense_arrays(1, 4))
def test_property_dense_rsp_round_trip(a):
    r = nd.array(a, dtype=a.dtype).tostype("row_sparse")
    r.check_format()
    np.testing.assert_array_equal(r.tostype("default").asnumpy(), a)
    rows, data = rsp_ref(a)
    np.testing.assert_array_equal(r.indices.asnumpy(), rows)
    np.testing.assert_array_equal(r.data.asnumpy(), data)
    s = S.row_sparse_array(a)
    np.testing.assert_array_equal(s.indices.asnumpy(), rows)
    np.testing.assert_array_equal(s.tostype("default").asnumpy(), a)


@settings(deadline=None, max_examples=100)
@given(a=_dense_arrays(2, 2), data=st.data())
def test_property_csr_row_slices_match_scipy(a, data):
    n = a.shape[0]
    start = data.draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
    stop = data.draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
    got = S.csr_matrix(a)[start:stop]
    ref = scipy_ref(a)[start:stop]
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got.indptr.asnumpy(), ref.indptr)
    np.testing.assert_array_equal(got.indices.asnumpy(), ref.indices)
    np.testing.assert_array_equal(got.asnumpy(), a[start:stop])


# -- GPU (skipped without a driver) -----------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("make", [S.csr_matrix, S.row_sparse_array], ids=["csr", "rsp"])
def test_sparse_on_pinned_memory(make):
    a = sample("float32", (4, 3))
    x = make(a, ctx=rt.cpu_pinned())
    assert x.ctx == rt.cpu_pinned()
    assert_same(x.tostype("default"), a)
    for y in (x.copyto(rt.cpu()), make(a).copyto(rt.cpu_pinned()),
              make(a).as_in_context(rt.cpu_pinned())):
        assert y.stype == x.stype
        assert_same(y.tostype("default"), a)
    with rt.cpu_pinned():
        assert make(nd.array(a, ctx=rt.cpu())).ctx == rt.cpu_pinned()


@pytest.mark.gpu
@pytest.mark.parametrize("make", [S.csr_matrix, S.row_sparse_array], ids=["csr", "rsp"])
def test_sparse_on_gpu(make):
    a = sample("float32", (6, 5))
    x = make(a, ctx=rt.gpu(0))
    assert x.ctx == rt.gpu(0)
    assert_same(x.tostype("default"), a)
    x.check_format()
    assert_same(x.copyto(rt.cpu()).tostype("default"), a)
    assert_same(x.astype("int32").tostype("default"), a.astype(np.int32))
    assert_same(nd.array(a, ctx=rt.gpu(0)).tostype(x.stype).tostype("default"), a)
    if x.stype == "csr":
        assert_csr(x[1:4].copyto(rt.cpu()), sp.csr_matrix(a[1:4]))
    else:
        assert_same(x.retain([0, 2]).tostype("default"), retain_ref(a, [0, 2]))


def test_sparse_namespace_dot_and_retain_are_the_operators():
    import scipy.sparse as sp
    from runtime import nd
    m = sp.random(30, 20, density=0.1, format="csr", random_state=0, dtype=np.float32)
    c = nd.sparse.csr_matrix(m)
    d = np.random.default_rng(0).random((30, 4), dtype=np.float32)
    g = nd.sparse.dot(c, nd.array(d), transpose_a=True)
    assert g.stype == "row_sparse"
    np.testing.assert_allclose(g.tostype("default").asnumpy(), m.T @ d, rtol=1e-5)
    r = nd.sparse.row_sparse_array(np.eye(4, dtype=np.float32))
    kept = nd.sparse.retain(r, [3, 1]).tostype("default").asnumpy()
    np.testing.assert_array_equal(kept, np.diag([0, 1, 0, 1]).astype(np.float32))
    np.testing.assert_array_equal(r.retain(nd.array([0])).tostype("default").asnumpy(),
                                  np.diag([1, 0, 0, 0]).astype(np.float32))
