"""runtime._sparse_format: storage casts against SciPy / NumPy, format checks, bad input."""

import contextlib
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from runtime import _sparse_common as C
from runtime import _sparse_format as K

DTYPES = [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int16, np.uint16,
          np.int32, np.int64, np.bool_]
# (300, 257) has more than SERIAL_CUTOFF elements, so it runs the OpenMP path.
SHAPES = [(0, 0), (0, 5), (5, 0), (1, 1), (7, 13), (33, 65), (300, 257)]
FILLS = ["zeros", "nonzero", "sparse", "half"]
CSR_CONTAINERS = [sp.csr_matrix, sp.csr_array]

# The autouse pool fixture of tests/conftest.py is function-scoped; it is harmless around a
# whole @given test, which never touches a pool.
FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@contextlib.contextmanager
def num_threads(n):
    old = C.get_num_threads()
    C.set_num_threads(n)
    try:
        yield
    finally:
        C.set_num_threads(old)


@pytest.fixture(autouse=True)
def restore_num_threads():
    old = C.get_num_threads()
    yield
    C.set_num_threads(old)


def cases(*axes):
    """Every combination of the given axes, run with 1 and with 3 threads.

    Each test item costs a GC pass in the conftest fixture, so the cheap axes are looped
    here rather than parametrized; restore_num_threads resets the thread count.
    """
    for nthreads in (1, 3):
        C.set_num_threads(nthreads)
        yield from itertools.product(*axes)


def make_dense(shape, dtype, fill, seed=0):
    """A dense array; floats get -0.0 among their zeros (a zero for SciPy and for us)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if fill == "zeros":
        a = np.zeros(shape, dtype)
        if dtype.kind == "f":
            a[...] = -0.0
        return a
    if dtype == np.bool_:
        values = np.ones(shape, dtype)
    elif dtype.kind == "f":
        values = rng.uniform(0.5, 100.0, shape) * rng.choice([-1, 1], shape)
    else:
        info = np.iinfo(dtype)
        values = rng.integers(1, min(int(info.max), 1000), shape, endpoint=True)
        if info.min < 0:
            values = values * rng.choice([-1, 1], shape)
    values = values.astype(dtype)
    if fill == "nonzero":
        return values
    density = {"sparse": 0.05, "half": 0.5}[fill]
    zero = np.zeros((), dtype)
    if dtype.kind == "f":
        zero = rng.choice(np.array([0.0, -0.0], dtype), shape)
    return np.where(rng.random(shape) < density, values, zero)


def scipy_csr(dense, container):
    """(indptr, indices, data) as SciPy stores dense, with int64 indices and dense's dtype."""
    src = dense.astype(np.float32) if dense.dtype == np.float16 else dense  # SciPy lacks f16
    m = container(src)
    return (m.indptr.astype(np.int64), m.indices.astype(np.int64),
            m.data.astype(dense.dtype))


def our_csr(dense):
    indptr = np.empty(dense.shape[0] + 1, np.int64)
    nnz = K.csr_count(dense, indptr)
    indices = np.empty(nnz, np.int64)
    data = np.empty(nnz, dense.dtype)
    assert K.csr_fill(dense, indptr, indices, data) == nnz
    return indptr, indices, data


def garbage_like(shape, dtype):
    """An output buffer full of nonzero bytes, to see that kernels zero what they must."""
    return np.full(int(np.prod(shape)) * np.dtype(dtype).itemsize, 0x5A,
                   np.uint8).view(dtype).reshape(shape)


def assert_bits_equal(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def rsp_reference(dense2d):
    return np.flatnonzero(dense2d.any(axis=1)).astype(np.int64)


# --- dense <-> CSR ----------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_csr_matches_scipy_and_round_trips(dtype, shape):
    for fill, container in cases(FILLS, CSR_CONTAINERS):
        dense = make_dense(shape, dtype, fill)
        indptr, indices, data = our_csr(dense)
        ref_indptr, ref_indices, ref_data = scipy_csr(dense, container)
        np.testing.assert_array_equal(indptr, ref_indptr, err_msg=fill)
        np.testing.assert_array_equal(indices, ref_indices, err_msg=fill)
        assert_bits_equal(data, ref_data)
        assert K.check_csr(indptr, indices, shape[1]) is None

        out = garbage_like(shape, dtype)
        assert K.csr_to_dense(data, indices, indptr, out) == indices.shape[0]
        np.testing.assert_array_equal(out, dense, err_msg=fill)  # -0.0 back as +0.0


@pytest.mark.parametrize("container", CSR_CONTAINERS, ids=lambda c: c.__name__)
def test_csr_to_dense_matches_toarray(container):
    m = container(sp.random(500, 300, density=0.03, format="csr", random_state=1,
                            dtype=np.float64))
    out = garbage_like(m.shape, np.float64)
    K.csr_to_dense(m.data, m.indices.astype(np.int64), m.indptr.astype(np.int64), out)
    np.testing.assert_array_equal(out, m.toarray())


def test_threads_agree_on_large_input():
    dense = make_dense((700, 300), np.float32, "sparse", seed=3)
    results = []
    for n in (1, 2, 5):
        with num_threads(n):
            results.append(our_csr(dense))
    for got in results[1:]:
        for a, b in zip(got, results[0]):
            assert_bits_equal(a, b)


def test_float16_negative_zero_is_zero():
    bits = np.array([[0x8000, 0x0000, 0x3C00, 0x8000],   # -0, +0, 1.0, -0
                     [0x8000, 0x8000, 0x0000, 0x8000],   # zeros only
                     [0x0001, 0x8001, 0x7C00, 0x7E00]],  # subnormals, inf, nan
                    np.uint16)
    dense = bits.view(np.float16)
    indptr, indices, data = our_csr(dense)
    np.testing.assert_array_equal(indptr, [0, 1, 1, 5])
    np.testing.assert_array_equal(indices, [2, 0, 1, 2, 3])
    np.testing.assert_array_equal(data.view(np.uint16), [0x3C00, 0x0001, 0x8001, 0x7C00, 0x7E00])
    mask = np.empty(3, np.uint8)
    assert K.rsp_count(dense, mask) == 2
    np.testing.assert_array_equal(mask, [1, 0, 1])
    # uint16 itself keeps every bit: 0x8000 is a nonzero there.
    mask_u16 = np.empty(3, np.uint8)
    assert K.rsp_count(bits, mask_u16) == 3


def test_float_specials_follow_scipy():
    dense = np.array([[-0.0, np.nan, 0.0, np.inf, -np.inf, 1e-45]], np.float32)
    indptr, indices, data = our_csr(dense)
    ref = sp.csr_matrix(dense)
    np.testing.assert_array_equal(indices, ref.indices)
    np.testing.assert_array_equal(data, ref.data)  # nan == nan for assert_array_equal


def test_read_only_and_empty_strided_inputs():
    dense = make_dense((40, 30), np.float64, "sparse")
    dense.setflags(write=False)
    indptr, indices, data = our_csr(dense)
    np.testing.assert_array_equal(indptr, sp.csr_matrix(dense).indptr)
    # NumPy calls an empty slice C-contiguous whatever its strides.
    empty = np.zeros((5, 10), np.float32)[:, :0]
    indptr = np.empty(6, np.int64)
    assert K.csr_count(empty, indptr) == 0
    np.testing.assert_array_equal(indptr, 0)


def test_csr_fill_rejects_a_stale_indptr():
    dense = make_dense((50, 40), np.float32, "sparse")
    indptr, indices, data = our_csr(dense)
    dense2 = dense.copy()
    dense2[3, :] = 1.0  # more nonzeros than indptr has room for
    with pytest.raises(ValueError, match=r"indptr must match the nonzeros of dense2d \(got 1 rows"):
        K.csr_fill(dense2, indptr, indices, data)
    bad = indptr.copy()
    bad[-1] += 1
    with pytest.raises(ValueError, match=r"indptr\[-1\] must equal nnz="):
        K.csr_fill(dense, bad, indices, data)
    bad = indptr.copy()
    bad[1], bad[2] = bad[2] + 1, bad[1]
    with pytest.raises(ValueError, match="non-decreasing"):
        K.csr_fill(dense, bad, indices, data)


def test_csr_to_dense_rejects_bad_offsets_and_columns():
    data = np.ones(3, np.float32)
    out = np.empty((2, 4), np.float32)
    with pytest.raises(ValueError, match=r"indptr\[-1\] must equal nnz=3 \(got 100\)"):
        K.csr_to_dense(data, np.array([0, 1, 2]), np.array([0, 1, 100]), out)
    with pytest.raises(IndexError, match=r"indices must be in \[0, ncols=4\) "
                                         r"\(got indices\[2\]=4 in row 1\)"):
        K.csr_to_dense(data, np.array([0, 1, 4]), np.array([0, 1, 3]), out)
    with pytest.raises(IndexError, match=r"got indices\[0\]=-1 in row 0"):
        K.csr_to_dense(data, np.array([-1, 1, 2]), np.array([0, 1, 3]), out)


# --- dense <-> row_sparse ---------------------------------------------------------------

RSP_SHAPES = [(0, 0), (0, 4), (6, 0), (1, 1), (9, 4, 3), (40, 17), (500, 160)]


@pytest.mark.parametrize("shape", RSP_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_rsp_matches_numpy(dtype, shape):
    for (fill,) in cases(FILLS):
        dense = make_dense(shape, dtype, fill)
        if fill in ("sparse", "half") and shape[0] > 2:
            dense[1::3] = 0  # whole zero rows, too
        dense2d = dense.reshape(shape[0], int(np.prod(shape[1:])))
        ref_rows = rsp_reference(dense2d)

        mask = garbage_like(shape[0], np.uint8)
        n = K.rsp_count(dense2d, mask)
        assert n == ref_rows.shape[0]
        np.testing.assert_array_equal(np.flatnonzero(mask), ref_rows, err_msg=fill)
        assert set(np.unique(mask)) <= {0, 1}

        indices = np.empty(n, np.int64)
        data = garbage_like((n, dense2d.shape[1]), dtype)
        assert K.rsp_fill(dense2d, mask, indices, data) == n
        np.testing.assert_array_equal(indices, ref_rows, err_msg=fill)
        assert_bits_equal(data, dense2d[ref_rows])
        assert K.check_rsp(indices, shape[0]) is None

        out = garbage_like(dense2d.shape, dtype)
        assert K.rsp_to_dense(data, indices, out) == n
        np.testing.assert_array_equal(out, dense2d, err_msg=fill)
        assert_bits_equal(out[ref_rows], dense2d[ref_rows])


@pytest.mark.parametrize("rows", [[], [0], [599], [0, 1, 2, 3], [5, 6, 7, 590, 591],
                                  list(range(0, 600, 7))], ids=str)
def test_rsp_to_dense_clustered_rows(rows):
    # Stored rows bunched at one end must not leave other rows unzeroed.
    rows = np.array(rows, np.int64)
    data = np.arange(rows.shape[0] * 130, dtype=np.float64).reshape(-1, 130) + 1
    ref = np.zeros((600, 130))
    ref[rows] = data
    for _ in cases():
        out = garbage_like((600, 130), np.float64)
        K.rsp_to_dense(data, rows, out)
        np.testing.assert_array_equal(out, ref)


def test_rsp_bool_mask_and_errors():
    dense = make_dense((8, 5), np.int32, "half")
    ref_rows = rsp_reference(dense)
    mask = np.empty(8, np.bool_)
    n = K.rsp_count(dense, mask)
    np.testing.assert_array_equal(np.flatnonzero(mask), ref_rows)
    with pytest.raises(ValueError, match=f"indices_out must have length nrows={n}"):
        K.rsp_fill(dense, mask, np.empty(n + 1, np.int64), np.empty((n + 1, 5), np.int32))
    with pytest.raises(ValueError, match=r"data2d_out must have shape"):
        K.rsp_fill(dense, mask, np.empty(n, np.int64), np.empty((n, 4), np.int32))
    out = np.empty((8, 5), np.int32)
    data = np.ones((2, 5), np.int32)
    with pytest.raises(IndexError, match=r"indices must be in \[0, nrows=8\) \(got indices\[1\]=8\)"):
        K.rsp_to_dense(data, np.array([0, 8]), out)
    with pytest.raises(ValueError, match=r"strictly increasing \(got indices\[1\]=3 <= indices\[0\]=3\)"):
        K.rsp_to_dense(data, np.array([3, 3]), out)


# --- format checks ----------------------------------------------------------------------

@pytest.mark.parametrize("indptr, indices, ncols, message", [
    ([0, 2, 4], [0, 1, 2, 3], 8, None),
    ([0], [], 0, None),
    ([0, 0, 0], [], 0, None),
    ([], [], 3, "indptr must have at least one element (got length 0)"),
    ([5, 6, 7], [0, 1], 8, "indptr[0] must be 0 (got 5)"),
    ([-1, 1], [0, 1], 8, "indptr[0] must be 0 (got -1)"),
    ([0, 2, 5, 7, 5, 12], list(range(12)), 8,
     "indptr must be non-decreasing (got indptr[3]=7 > indptr[4]=5)"),
    ([0, 4, 6, 10], list(range(12)), 8, "indptr[-1] must equal nnz=12 (got 10)"),
    ([0, 1, 100], [0, 1, 2], 8, "indptr[-1] must equal nnz=3 (got 100)"),
    ([0, 100, 3], [0, 1, 2], 8, "indptr must be non-decreasing (got indptr[1]=100 > indptr[2]=3)"),
    ([0, 3, 6], [0, 1, 2, 3, 9, 10], 8,
     "indices must be in [0, ncols=8) (got indices[4]=9 in row 1)"),
    ([0, 2, 3], [-1, 2, 0], 8, "indices must be in [0, ncols=8) (got indices[0]=-1 in row 0)"),
    ([0, 2, 4, 6], [0, 1, 2, 5, 3, 3], 8,
     "indices must be strictly increasing within each row "
     "(got indices[5]=3 <= indices[4]=3 in row 2)"),
    ([0, 3], [4, 2, 9], 8,  # the first defect in storage order wins
     "indices must be strictly increasing within each row "
     "(got indices[1]=2 <= indices[0]=4 in row 0)"),
    ([0, 2, 3], [0, 1, 0], 2, None),  # order restarts with each row
    ([0, 1], [0], 0, "indices must be in [0, ncols=0) (got indices[0]=0 in row 0)"),
])
def test_check_csr_messages(indptr, indices, ncols, message):
    assert K.check_csr(np.array(indptr, np.int64), np.array(indices, np.int64), ncols) == message


@pytest.mark.parametrize("indices, nrows, message", [
    ([], 0, None),
    ([0, 3, 9], 10, None),
    ([0, 3, 11, 12], 10, "indices must be in [0, nrows=10) (got indices[2]=11)"),
    ([-4], 10, "indices must be in [0, nrows=10) (got indices[0]=-4)"),
    ([0, 1, 4, 4], 10, "indices must be strictly increasing (got indices[3]=4 <= indices[2]=4)"),
    ([5, 2, 99], 10, "indices must be strictly increasing (got indices[1]=2 <= indices[0]=5)"),
])
def test_check_rsp_messages(indices, nrows, message):
    assert K.check_rsp(np.array(indices, np.int64), nrows) == message


@pytest.mark.parametrize("container", CSR_CONTAINERS, ids=lambda c: c.__name__)
def test_check_csr_accepts_scipy_int32_arrays(container):
    m = container(sp.random(60, 70, density=0.1, format="csr", random_state=0))
    assert m.indices.dtype == np.int32
    assert K.check_csr(m.indptr, m.indices, m.shape[1]) is None


def test_check_argument_errors():
    with pytest.raises(TypeError, match="casts safely to int64"):
        K.check_csr(np.zeros(2, np.float64), np.zeros(0, np.int64), 3)
    with pytest.raises(TypeError, match="casts safely to int64"):
        K.check_rsp(np.zeros(2, np.uint64), 3)
    with pytest.raises(ValueError, match="must be 1-D"):
        K.check_rsp(np.zeros((2, 2), np.int64), 3)
    with pytest.raises(ValueError, match=r"ncols must be >= 0 \(got -1\)"):
        K.check_csr([0], [], -1)
    with pytest.raises(ValueError, match=r"nrows must be >= 0 \(got -2\)"):
        K.check_rsp([], -2)


# --- fuzzing: garbage never crashes, and check_csr agrees with a plain reference --------

_I64 = np.iinfo(np.int64)
_ints = st.one_of(st.integers(-3, 12), st.integers(_I64.min, _I64.max))
_int_arrays = hnp.arrays(np.int64, st.integers(0, 10), elements=_ints)


def _csr_valid(indptr, indices, ncols):
    if len(indptr) == 0 or indptr[0] != 0 or indptr[-1] != len(indices):
        return False
    if np.any(np.diff(indptr) < 0):
        return False
    for r in range(len(indptr) - 1):
        row = indices[indptr[r]:indptr[r + 1]]
        if np.any(row < 0) or np.any(row >= ncols) or np.any(np.diff(row) <= 0):
            return False
    return True


@FUZZ
@given(indptr=_int_arrays, indices=_int_arrays, ncols=st.integers(0, 10))
def test_check_csr_fuzz(indptr, indices, ncols):
    msg = K.check_csr(indptr, indices, ncols)
    assert msg is None or isinstance(msg, str)
    assert (msg is None) == _csr_valid(indptr, indices, ncols)


@FUZZ
@given(indices=_int_arrays, nrows=st.integers(0, 10))
def test_check_rsp_fuzz(indices, nrows):
    msg = K.check_rsp(indices, nrows)
    valid = bool(np.all((indices >= 0) & (indices < nrows)) and np.all(np.diff(indices) > 0))
    assert (msg is None) == valid


@FUZZ
@given(indptr=_int_arrays, indices=_int_arrays, ncols=st.integers(0, 6))
def test_csr_to_dense_fuzz(indptr, indices, ncols):
    rows = max(len(indptr) - 1, 0)
    if len(indptr) == 0:
        indptr = np.zeros(1, np.int64)
    data = np.arange(1, len(indices) + 1, dtype=np.float32)
    out = np.empty((rows, ncols), np.float32)
    try:
        K.csr_to_dense(data, indices, indptr, out)
    except (ValueError, IndexError):
        return
    if K.check_csr(indptr, indices, ncols) is None:
        ref = sp.csr_matrix((data, indices, indptr), shape=(rows, ncols)).toarray()
        np.testing.assert_array_equal(out, ref)


@FUZZ
@given(dense=hnp.arrays(np.int8, hnp.array_shapes(min_dims=2, max_dims=2, min_side=0,
                                                   max_side=6),
                        elements=st.sampled_from([0, 0, 0, 1, -2])),
       indptr=_int_arrays)
def test_csr_fill_fuzz(dense, indptr):
    # csr_fill with someone else's indptr either raises or writes exactly the right thing.
    rows = dense.shape[0]
    indptr = np.resize(indptr, rows + 1) if len(indptr) else np.zeros(rows + 1, np.int64)
    nnz = int(indptr[-1]) if 0 <= indptr[-1] <= 64 else 3
    indices = np.empty(nnz, np.int64)
    data = np.empty(nnz, np.int8)
    try:
        K.csr_fill(dense, indptr, indices, data)
    except ValueError:
        return
    ref = sp.csr_matrix(dense)
    np.testing.assert_array_equal(indptr, ref.indptr)
    np.testing.assert_array_equal(indices, ref.indices)
    np.testing.assert_array_equal(data, ref.data)


@FUZZ
@given(indices=_int_arrays, nrows=st.integers(0, 8))
def test_rsp_to_dense_fuzz(indices, nrows):
    data = np.ones((len(indices), 3), np.int16)
    out = np.empty((nrows, 3), np.int16)
    try:
        K.rsp_to_dense(data, indices, out)
    except (ValueError, IndexError):
        assert K.check_rsp(indices, nrows) is not None
        return
    ref = np.zeros((nrows, 3), np.int16)
    ref[indices] = 1
    np.testing.assert_array_equal(out, ref)


# --- argument validation ----------------------------------------------------------------

def test_argument_errors():
    dense = np.zeros((3, 4), np.float32)
    indptr = np.empty(4, np.int64)
    with pytest.raises(TypeError, match="dense2d must be a numpy.ndarray"):
        K.csr_count([[0.0]], indptr)
    with pytest.raises(ValueError, match=r"dense2d must be 2-D \(got shape \(12,\)\)"):
        K.csr_count(dense.ravel(), indptr)
    with pytest.raises(ValueError, match="dense2d must be C-contiguous"):
        K.csr_count(np.zeros((4, 3), np.float32).T, indptr)
    with pytest.raises(NotImplementedError, match=r"dense2d must have one of the dtypes .* "
                                                  r"\(got dtype\('complex64'\)\)"):
        K.csr_count(dense.astype(np.complex64), indptr)
    with pytest.raises(NotImplementedError):
        K.csr_count(dense.astype(">f4"), indptr)
    with pytest.raises(TypeError, match=r"indptr_out must have dtype int64 \(got dtype\('int32'\)\)"):
        K.csr_count(dense, indptr.astype(np.int32))
    with pytest.raises(ValueError, match=r"indptr_out must have length rows\+1=4 \(got 3\)"):
        K.csr_count(dense, indptr[:3])
    ro = indptr.copy()
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="indptr_out must be writeable"):
        K.csr_count(dense, ro)
    K.csr_count(dense, indptr)
    with pytest.raises(TypeError, match=r"data_out must have the dtype dtype\('float32'\) "
                                        r"\(got dtype\('float64'\)\)"):
        K.csr_fill(dense, indptr, np.empty(0, np.int64), np.empty(0, np.float64))
    with pytest.raises(TypeError, match="data must have the dtype"):
        K.csr_to_dense(np.empty(0, np.float16), np.empty(0, np.int64), indptr, dense)
    with pytest.raises(TypeError, match="rowmask_out must have dtype uint8 or bool"):
        K.rsp_count(dense, np.empty(3, np.int8))
