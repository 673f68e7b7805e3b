"""The arithmetic of the sparse operators, compiled: products with dense matrices,
elementwise ops, sums, add_n, retain, square_sum.

Layouts are _sparse_format's (MXNet's).  Values are float32 or float64 (`floating`; callers
take float16 through float32 and route other dtypes to dense kernels); retain moves bytes
and takes every dtype.  Every kernel writes into arrays that the caller allocated and
returns a count.  The def functions validate and convert, the cdef loops run without the
GIL (most of them parallel over rows with OpenMP once the work reaches ARITH_SERIAL_CUTOFF:
runtime._sparse_common holds the thread count and that cutoff), and a loop that meets an
index it cannot use skips it, counts it, and the def function raises after.
"""

import numpy as np

from cython.parallel cimport prange
from openmp cimport omp_get_wtime
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memcpy, memset

from runtime._sparse_common cimport (
    TRACKED_THREADS, arith_threads, as_array, as_index, as_values, back_off, check_indptr,
    check_length, clear_starts, lower_bound, mark_start, raise_bad_column, rows_as_bytes,
    started_late)
from runtime._types cimport floating, index_t, uint8_t

__all__ = [
    "ColumnPlan", "csr_binary_count", "csr_binary_fill", "csr_column_plan", "csr_dot_dense",
    "csr_sum", "csr_t_dot_dense", "dense_dot_csr_t", "rsp_add_n", "rsp_binary", "rsp_binary_count",
    "rsp_mul_dense", "rsp_retain", "rsp_union_count", "square_sum",
]

cdef extern from *:
    """
    #define NDRT_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 1)
    """
    void _prefetch "NDRT_PREFETCH"(const void* p) noexcept nogil

cdef enum:
    # Products prefetch the dense rows of the entries this far ahead (at most this many
    # bytes of each), and split rows into this many blocks per thread.
    _PREFETCH_AHEAD = 8
    _PREFETCH_BYTES = 256
    _BLOCKS_PER_THREAD = 8

cdef index_t _INDEX_MAX = 0x7fffffffffffffff
cdef index_t _INDEX_MIN = -_INDEX_MAX - 1

cdef object _F32 = np.dtype(np.float32)
cdef object _F64 = np.dtype(np.float64)

cdef enum BinOp:
    OP_ADD = 0
    OP_SUB = 1
    OP_MUL = 2

cdef dict _BINOPS = {"add": OP_ADD, "subtract": OP_SUB, "multiply": OP_MUL}


cdef int _binop_code(object op) except -1:
    try:
        return _BINOPS[op]
    except (KeyError, TypeError):
        raise ValueError(f"op must be one of {', '.join(map(repr, _BINOPS))} (got {op!r})") \
            from None


cdef object _floats(object a, str name, int ndim, bint out, object like):
    """`a` after as_array's checks, of dtype float32 or float64 (`like`'s when given)."""
    a = as_array(a, name, ndim, out)
    if like is not None and a.dtype != like:
        raise TypeError(f"{name} must have the dtype {like!r} (got {a.dtype!r})")
    if a.dtype != _F32 and a.dtype != _F64:
        raise NotImplementedError(f"{name} must have dtype float32 or float64 "
                                  f"(got {a.dtype!r})")
    return a


cdef tuple _csr_args(object indptr, object indices, object data, Py_ssize_t rows, str prefix,
                     object like):
    """(indptr, indices, data) of a CSR matrix with `rows` rows, indptr fully checked."""
    ip = as_index(indptr, prefix + "indptr", False)
    idx = as_index(indices, prefix + "indices", False)
    vals = _floats(data, prefix + "data", 1, False, like)
    check_length(ip, prefix + "indptr", rows + 1, "rows+1")
    check_length(vals, prefix + "data", idx.shape[0], "len(indices)")
    check_indptr(ip, idx.shape[0], prefix)
    return ip, idx, vals


cdef tuple _csr_pattern(object indptr, object indices):
    """(indptr, indices) of a CSR matrix with len(indptr) - 1 rows, indptr fully checked."""
    ip = as_index(indptr, "indptr", False)
    idx = as_index(indices, "indices", False)
    check_indptr(ip, idx.shape[0], "")
    return ip, idx


cdef Py_ssize_t _rows_of(object indptr, str name, bint out) except -1:
    """The number of rows of a CSR matrix with this row pointer (argument `name`)."""
    ip = as_index(indptr, name, out)
    if ip.shape[0] == 0:
        raise ValueError(f"{name} must have at least one element (got length 0)")
    return ip.shape[0] - 1


cdef inline Py_ssize_t _balanced_row(const index_t* indptr, Py_ssize_t rows, Py_ssize_t t,
                                     Py_ssize_t parts) noexcept nogil:
    """First row of block t of `parts` blocks with about equal stored entries + rows."""
    if t <= 0:
        return 0
    if t >= parts:
        return rows
    return lower_bound(indptr, rows, (<Py_ssize_t>indptr[rows] + rows) * t // parts, 1)


# ---------------------------------------------------------------------------------------
# CSR x dense (and CSR x row_sparse) -> dense

cdef inline const floating* _dense_row(const index_t* indices, Py_ssize_t k,
                                      const index_t* rowmap, Py_ssize_t ncols,
                                      const floating* dense, Py_ssize_t dense_rows,
                                      Py_ssize_t n, Py_ssize_t* nbad) noexcept nogil:
    """The row of dense that entry k multiplies, or NULL (unstored row, or a bad index)."""
    cdef index_t c = indices[k]
    if <size_t>c >= <size_t>ncols:
        nbad[0] += 1
        return NULL
    if rowmap != NULL:
        c = rowmap[c]
        if c < 0:
            return NULL
    if c >= dense_rows:
        nbad[0] += 1
        return NULL
    return dense + c * n


cdef inline void _prefetch_row(const index_t* indices, Py_ssize_t k, Py_ssize_t ncols,
                               const floating* dense, Py_ssize_t n) noexcept nogil:
    """Ask for the first cache lines of the dense row of entry k (no fault if it is bad)."""
    cdef index_t c = indices[k]
    cdef const char* p
    cdef Py_ssize_t b, nbytes = min(n * <Py_ssize_t>sizeof(floating), <Py_ssize_t>_PREFETCH_BYTES)
    if <size_t>c < <size_t>ncols:
        p = <const char*>(dense + c * n)
        b = 0
        while b < nbytes:
            _prefetch(p + b)
            b += 64


cdef Py_ssize_t _spmm_rows(const index_t* indptr, const index_t* indices, const floating* data,
                           Py_ssize_t lo, Py_ssize_t hi, const index_t* rowmap,
                           Py_ssize_t ncols, const floating* dense, Py_ssize_t dense_rows,
                           Py_ssize_t n, floating* out) noexcept nogil:
    """out[i] = sum over k in row i of data[k] * dense[col(k)], for rows [lo, hi).

    col(k) is indices[k], or rowmap[indices[k]] when rowmap is given (a negative entry
    marks a row that is not stored: it contributes nothing).  Returns how many entries were
    skipped for a column outside [0, ncols) or a row outside dense.  The sum runs in
    storage order (as SciPy's), two entries per pass over the output row, with the dense
    rows of later entries prefetched: random rows of dense are the cost.
    """
    cdef Py_ssize_t i, j, k, kend, nbad = 0, last = indptr[hi]
    cdef floating v0, v1
    cdef floating* orow
    cdef const floating* d0
    cdef const floating* d1
    for i in range(lo, hi):
        orow = out + i * n
        memset(orow, 0, n * sizeof(floating))
        k = indptr[i]
        kend = indptr[i + 1]
        while k < kend:
            if rowmap == NULL and k + _PREFETCH_AHEAD < last:
                _prefetch_row(indices, k + _PREFETCH_AHEAD, ncols, dense, n)
                _prefetch_row(indices, k + _PREFETCH_AHEAD + 1, ncols, dense, n)
            d0 = _dense_row(indices, k, rowmap, ncols, dense, dense_rows, n, &nbad)
            v0 = data[k]
            if k + 1 < kend:
                d1 = _dense_row(indices, k + 1, rowmap, ncols, dense, dense_rows, n, &nbad)
                v1 = data[k + 1]
                k += 2
            else:
                d1 = NULL
                k += 1
            if d0 != NULL and d1 != NULL:
                for j in range(n):
                    orow[j] = orow[j] + v0 * d0[j] + v1 * d1[j]
            elif d0 != NULL:
                for j in range(n):
                    orow[j] += v0 * d0[j]
            elif d1 != NULL:
                for j in range(n):
                    orow[j] += v1 * d1[j]
    return nbad


cdef Py_ssize_t _spmm(const index_t* indptr, const index_t* indices, const floating* data,
                      Py_ssize_t rows, const index_t* rowmap, Py_ssize_t ncols,
                      const floating* dense, Py_ssize_t dense_rows, Py_ssize_t n,
                      floating* out, int nthreads, bint* late) noexcept nogil:
    """_spmm_rows over all rows: with threads, in blocks of about equal work handed out
    dynamically (a thread that the shared machine slows down takes fewer blocks).  Sets
    *late when a thread started late."""
    cdef Py_ssize_t t, lo, hi, nbad = 0, parts
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    if rows == 0 or n == 0:
        return 0
    if nthreads <= 1:
        return _spmm_rows(indptr, indices, data, 0, rows, rowmap, ncols, dense, dense_rows,
                          n, out)
    parts = min(rows, <Py_ssize_t>nthreads * _BLOCKS_PER_THREAD)
    clear_starts(starts, nthreads)
    t0 = omp_get_wtime()
    for t in prange(parts, num_threads=nthreads, schedule="dynamic"):
        mark_start(starts)
        lo = _balanced_row(indptr, rows, t, parts)
        hi = _balanced_row(indptr, rows, t + 1, parts)
        nbad += _spmm_rows(indptr, indices, data, lo, hi, rowmap, ncols, dense, dense_rows,
                           n, out)
    late[0] = started_late(t0, starts, nthreads)
    return nbad


def _csr_dot_dense_t(const index_t[::1] indptr, const index_t[::1] indices,
                     const floating[::1] data, const index_t[::1] rowmap, bint use_map,
                     const floating[:, ::1] dense, floating[:, ::1] out, int nthreads):
    cdef Py_ssize_t nbad, rows = out.shape[0], n = out.shape[1]
    cdef Py_ssize_t ncols = rowmap.shape[0] if use_map else dense.shape[0]
    cdef const index_t* rm = &rowmap[0] if use_map and rowmap.shape[0] > 0 else NULL
    cdef const index_t* ix = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const floating* dv = &data[0] if data.shape[0] > 0 else NULL
    cdef const floating* db = &dense[0, 0] if dense.shape[0] > 0 and n > 0 else NULL
    cdef floating* ob = &out[0, 0] if rows > 0 and n > 0 else NULL
    cdef bint late = False
    with nogil:
        nbad = _spmm(&indptr[0], ix, dv, rows, rm, ncols, db, dense.shape[0], n, ob, nthreads,
                     &late)
    if late:
        back_off()
    return nbad


def csr_dot_dense(indptr, indices, data, dense2d, out2d, rowmap=None):
    """out2d = A @ D: A the CSR matrix (out2d.shape[0] rows), D dense; returns nnz.

    Without ``rowmap`` D is ``dense2d`` (ncols, n).  With ``rowmap`` (int64, (ncols,)) D
    is a row_sparse matrix whose stored rows are ``dense2d``: ``rowmap[c]`` is the position
    of row c in dense2d, or negative when row c is not stored.  Rows of A run in parallel
    in blocks of about equal stored entries.  Raises IndexError for a column outside
    [0, ncols) or a rowmap entry outside dense2d (the other rows are written).
    """
    out = _floats(out2d, "out2d", 2, True, None)
    dense = _floats(dense2d, "dense2d", 2, False, out2d.dtype)
    rows, n = out.shape
    ip, idx, vals = _csr_args(indptr, indices, data, rows, "", out2d.dtype)
    if dense.shape[1] != n:
        raise ValueError(f"dense2d must have {n} columns like out2d (got shape "
                         f"{dense.shape!r})")
    use_map = rowmap is not None
    rm = as_index(rowmap, "rowmap", False) if use_map else np.empty(0, np.int64)
    ncols = rm.shape[0] if use_map else dense.shape[0]
    work = idx.shape[0] * n + rows * n
    if _csr_dot_dense_t(ip, idx, vals, rm, use_map, dense, out, arith_threads(rows, work)):
        raise_bad_column(ip, idx, ncols, "")
        raise IndexError(f"rowmap must map the columns into [0, {dense.shape[0]}) (the rows "
                         "of dense2d) or be negative")
    return idx.shape[0]


# ---------------------------------------------------------------------------------------
# CSR.T x dense -> row_sparse: the stored rows are the columns of A that hold an entry
# (csr_column_plan finds them, in time and memory proportional to the stored entries: a
# stable radix sort of the entries' columns, never an array as long as the columns).
# Nothing is transposed: each thread owns a block of result rows and walks every row i of
# A, adding data * D[i] into the rows of the entries of its columns (a row's columns are
# sorted: two bisections find them), so D is read in order, each result row is written
# first and accumulated after (never zeroed), and no two threads write one row.

cdef enum:
    # The radix sort of csr_column_plan takes this many bits of a column a pass.
    _RADIX_BITS = 11
    _RADIX = 1 << _RADIX_BITS


cdef class ColumnPlan:
    """The result rows of A.T @ D for one CSR pattern (what csr_column_plan gives):
    ``cols`` the columns of A that hold an entry, ascending (the stored rows of the
    result); ``pos`` the result row of each stored entry of A (-1 for the entries of the
    rows that a rowmap leaves out); ``colptr`` (len(cols) + 1) running entry counts of
    the columns (the threads' balance)."""
    cdef readonly object cols, pos, colptr
    cdef readonly Py_ssize_t ncols
    cdef readonly bint use_map

    @property
    def nused(self):
        return self.cols.shape[0]


cdef inline bint _dropped_row(const index_t* indptr, const index_t* rowmap, Py_ssize_t i,
                              index_t* pos) noexcept nogil:
    """Whether row i is outside the plan (rowmap[i] < 0); its entries' pos are then -1."""
    cdef Py_ssize_t k
    if rowmap == NULL or rowmap[i] >= 0:
        return False
    for k in range(indptr[i], indptr[i + 1]):
        pos[k] = -1
    return True


cdef Py_ssize_t _plan_columns(const index_t* indptr, const index_t* indices, Py_ssize_t rows,
                              const index_t* rowmap, Py_ssize_t ncols, index_t* pos,
                              index_t* keys, index_t* vals, index_t* keys2, index_t* vals2,
                              index_t* cols_out, index_t* colptr,
                              Py_ssize_t* nbad) noexcept nogil:
    """Fill pos, cols_out and colptr (see ColumnPlan); returns the number of used columns.
    keys, vals, keys2, vals2: scratch of nnz entries.  Columns outside [0, ncols) are
    counted in nbad (nothing else is then written)."""
    cdef Py_ssize_t i, k, j, m = 0, p = -1, shift = 0
    cdef index_t c, last = -1
    cdef index_t hist[_RADIX]
    cdef index_t* t
    for i in range(rows):
        if _dropped_row(indptr, rowmap, i, pos):
            continue
        for k in range(indptr[i], indptr[i + 1]):
            c = indices[k]
            if <size_t>c < <size_t>ncols:
                keys[m] = c
                vals[m] = k
                m += 1
            else:
                nbad[0] += 1
    if nbad[0] or m == 0:
        return 0
    # least significant digit first: stable, so a column's entries keep their order
    while True:
        memset(hist, 0, sizeof(hist))
        for j in range(m):
            hist[(keys[j] >> shift) & (_RADIX - 1)] += 1
        c = 0
        for j in range(_RADIX):
            c, hist[j] = c + hist[j], c
        for j in range(m):
            i = (keys[j] >> shift) & (_RADIX - 1)
            keys2[hist[i]] = keys[j]
            vals2[hist[i]] = vals[j]
            hist[i] += 1
        t = keys
        keys = keys2
        keys2 = t
        t = vals
        vals = vals2
        vals2 = t
        shift += _RADIX_BITS
        if shift >= 63 or ((<size_t>(ncols - 1)) >> shift) == 0:
            break
    for j in range(m):
        c = keys[j]
        if c != last:
            p += 1
            cols_out[p] = c
            colptr[p] = j
            last = c
        pos[vals[j]] = p
    colptr[p + 1] = m
    return p + 1


cdef Py_ssize_t _plan_columns_counted(const index_t* indptr, const index_t* indices,
                                      Py_ssize_t rows, const index_t* rowmap,
                                      Py_ssize_t ncols, index_t* pos, index_t* counts,
                                      index_t* cols_out, index_t* colptr,
                                      Py_ssize_t* nbad) noexcept nogil:
    """_plan_columns by counting, for a column count not far above the entry count: one
    count per column (``counts``: ncols zeros), then each used column's result row, then
    each entry's, with no sort."""
    cdef Py_ssize_t i, k, p = 0, run = 0
    cdef index_t c
    for i in range(rows):
        if rowmap != NULL and rowmap[i] < 0:
            continue
        for k in range(indptr[i], indptr[i + 1]):
            c = indices[k]
            if <size_t>c < <size_t>ncols:
                counts[c] += 1
            else:
                nbad[0] += 1
    if nbad[0]:
        return 0
    for c in range(ncols):
        if counts[c]:
            cols_out[p] = c
            colptr[p] = run
            run += counts[c]
            counts[c] = p          # from here on: the column's result row
            p += 1
        else:
            counts[c] = -1
    colptr[p] = run
    for i in range(rows):
        if _dropped_row(indptr, rowmap, i, pos):
            continue
        for k in range(indptr[i], indptr[i + 1]):
            pos[k] = counts[indices[k]]
    return p


def csr_column_plan(indptr, indices, Py_ssize_t ncols, rowmap=None):
    """The ColumnPlan of A.T @ D for the CSR pattern (indptr, indices) of a matrix with
    ``ncols`` columns: time and memory proportional to the stored entries (a matrix with
    no more columns than twice its entries is counted column by column instead of
    sorted: cheaper, and still no array longer than twice the entries).

    ``rowmap`` (int64, one entry per row of A) leaves out the rows i with rowmap[i] < 0.
    Raises IndexError for a column outside [0, ncols).
    """
    cdef ColumnPlan plan = ColumnPlan.__new__(ColumnPlan)
    cdef Py_ssize_t nnz, nused, nbad = 0
    ip, idx = _csr_pattern(indptr, indices)
    if ncols < 0:
        raise ValueError(f"ncols must be >= 0 (got {ncols})")
    rows = ip.shape[0] - 1
    use_map = rowmap is not None
    rm = as_index(rowmap, "rowmap", False) if use_map else np.empty(0, np.int64)
    if use_map:
        check_length(rm, "rowmap", rows, "rows")
    nnz = idx.shape[0]
    pos = np.empty(nnz, np.int64)
    cols = np.empty(min(nnz, ncols), np.int64)
    colptr = np.empty(cols.shape[0] + 1, np.int64)
    colptr[0] = 0
    if ncols <= 2 * nnz:
        nused = _column_count_t(ip, idx, rm, use_map, ncols, pos, np.zeros(ncols, np.int64),
                                cols, colptr, &nbad)
    else:
        nused = _column_plan_t(ip, idx, rm, use_map, ncols, pos, np.empty((4, nnz), np.int64),
                               cols, colptr, &nbad)
    if nbad:
        raise_bad_column(ip, idx, ncols, "")
    plan.cols = cols[:nused]
    plan.pos = pos
    plan.colptr = colptr[:nused + 1]
    plan.ncols = ncols
    plan.use_map = use_map
    return plan


cdef Py_ssize_t _column_plan_t(const index_t[::1] indptr, const index_t[::1] indices,
                               const index_t[::1] rowmap, bint use_map, Py_ssize_t ncols,
                               index_t[::1] pos, index_t[:, ::1] scratch, index_t[::1] cols,
                               index_t[::1] colptr, Py_ssize_t* nbad) except -1:
    cdef Py_ssize_t nused, nnz = indices.shape[0]
    cdef const index_t* rm = &rowmap[0] if use_map and rowmap.shape[0] > 0 else NULL
    if nnz == 0:
        return 0
    with nogil:
        nused = _plan_columns(&indptr[0], &indices[0], indptr.shape[0] - 1, rm, ncols,
                              &pos[0], &scratch[0, 0], &scratch[1, 0], &scratch[2, 0],
                              &scratch[3, 0], &cols[0], &colptr[0], nbad)
    return nused


cdef Py_ssize_t _column_count_t(const index_t[::1] indptr, const index_t[::1] indices,
                                const index_t[::1] rowmap, bint use_map, Py_ssize_t ncols,
                                index_t[::1] pos, index_t[::1] counts, index_t[::1] cols,
                                index_t[::1] colptr, Py_ssize_t* nbad) except -1:
    cdef Py_ssize_t nused
    cdef const index_t* rm = &rowmap[0] if use_map and rowmap.shape[0] > 0 else NULL
    if indices.shape[0] == 0:
        return 0
    with nogil:
        nused = _plan_columns_counted(&indptr[0], &indices[0], indptr.shape[0] - 1, rm,
                                      ncols, &pos[0], &counts[0], &cols[0], &colptr[0], nbad)
    return nused


cdef Py_ssize_t _csr_t_rows(const index_t* indptr, const index_t* indices, const floating* data,
                            Py_ssize_t rows, const index_t* rowmap, const index_t* pos,
                            index_t clo, index_t chi, Py_ssize_t plo, Py_ssize_t phi,
                            bint search, const floating* dense, Py_ssize_t dense_rows,
                            Py_ssize_t n, floating* out, uint8_t* touched) noexcept nogil:
    """Rows [plo, phi) of A.T @ D (A's columns [clo, chi)): each entry k of A adds
    data * D[i] to its row pos[k], the first one writing it (``touched`` marks those: rows
    that nothing reaches are zeroed at the end).  Rows of A hold sorted columns, so with
    `search` the entries of a row in [clo, chi) are found by bisection.  Sums run in row
    order of A, as SciPy's.  Returns how many entries could not be used (a rowmap entry
    past D, an entry that the plan does not place)."""
    cdef Py_ssize_t i, j, k, k0, k1, nbad = 0
    cdef index_t r, p, q
    cdef floating v
    cdef floating* orow
    cdef const floating* drow
    if phi > plo:
        memset(touched + plo, 0, phi - plo)
    for i in range(rows):
        r = i
        if rowmap != NULL:
            r = rowmap[i]
            if r < 0:
                continue
        k0 = indptr[i]
        k1 = indptr[i + 1]
        if k0 == k1:
            continue
        if r >= dense_rows:
            nbad += 1
            continue
        if search:
            k0 += lower_bound(indices + k0, k1 - k0, clo, 0)
            k1 = k0 + lower_bound(indices + k0, k1 - k0, chi, 0)
        drow = dense + r * n
        for k in range(k0, k1):
            if k + _PREFETCH_AHEAD < k1:
                q = pos[k + _PREFETCH_AHEAD]
                if q >= plo and q < phi:
                    _prefetch(out + q * n)
            p = pos[k]
            if p < plo or p >= phi:
                nbad += p < 0
                continue
            v = data[k]
            orow = out + p * n
            if touched[p]:
                for j in range(n):
                    orow[j] += v * drow[j]
            else:
                touched[p] = 1
                for j in range(n):
                    orow[j] = v * drow[j]
    for p in range(plo, phi):
        if not touched[p] and n > 0:
            memset(out + p * n, 0, n * sizeof(floating))
    return nbad


def _csr_t_dot_dense_t(const index_t[::1] indptr, const index_t[::1] indices,
                       const floating[::1] data, const index_t[::1] rowmap, bint use_map,
                       const index_t[::1] pos, const index_t[::1] cols,
                       const index_t[::1] colptr, const floating[:, ::1] dense,
                       index_t[::1] cols_out, floating[:, ::1] out, uint8_t[::1] touched):
    """The number of unusable entries."""
    cdef Py_ssize_t nbad = 0, rows = indptr.shape[0] - 1
    cdef Py_ssize_t nused = out.shape[0], n = out.shape[1], t, plo, phi
    cdef int nthreads = arith_threads(nused, indices.shape[0] * n + nused * n)
    cdef index_t clo, chi
    cdef const index_t* rm = &rowmap[0] if use_map and rowmap.shape[0] > 0 else NULL
    cdef const index_t* ix = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const floating* dv = &data[0] if data.shape[0] > 0 else NULL
    cdef const index_t* pp = &pos[0] if pos.shape[0] > 0 else NULL
    cdef const index_t* co = &cols[0] if nused > 0 else NULL
    cdef const floating* db = &dense[0, 0] if dense.shape[0] > 0 and n > 0 else NULL
    cdef floating* ob = &out[0, 0] if nused > 0 and n > 0 else NULL
    cdef uint8_t* tb = &touched[0] if nused > 0 else NULL
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late = False
    if nused:
        cols_out[:] = cols
    with nogil:
        if nthreads <= 1 or nused < 2:
            nbad = _csr_t_rows(&indptr[0], ix, dv, rows, rm, pp, 0, 0, 0, nused, False, db,
                               dense.shape[0], n, ob, tb)
        else:
            # Each thread owns a block of result rows (of about equal entries) and picks
            # the entries of its columns out of every row of A.  The column ranges tile
            # all of int64, so that every entry, used column or not, is seen once.
            clear_starts(starts, nthreads)
            t0 = omp_get_wtime()
            for t in prange(nthreads, num_threads=nthreads, schedule="static"):
                mark_start(starts)
                plo = _balanced_row(&colptr[0], nused, t, nthreads)
                phi = _balanced_row(&colptr[0], nused, t + 1, nthreads)
                if plo < phi:
                    clo = co[plo] if plo > 0 else _INDEX_MIN
                    chi = co[phi] if phi < nused else _INDEX_MAX
                    nbad += _csr_t_rows(&indptr[0], ix, dv, rows, rm, pp, clo, chi, plo,
                                        phi, True, db, dense.shape[0], n, ob, tb)
            late = started_late(t0, starts, nthreads)
    if late:
        back_off()
    return nbad


def csr_t_dot_dense(indptr, indices, data, dense2d, ColumnPlan plan, indices_out,
                    data2d_out, rowmap=None):
    """A.T @ D as row_sparse: A the CSR matrix with plan.ncols columns, D dense.

    ``plan`` is what csr_column_plan gave for this A (same pattern, same rowmap);
    ``indices_out`` receives plan.cols (the stored rows of the result) and ``data2d_out``
    (plan.nused, n) their rows of A.T @ D.  Without ``rowmap`` D is ``dense2d`` (rows of
    A, n); with it (int64, one entry per row of A), D is a row_sparse matrix whose stored
    rows are dense2d: rowmap[i] is the position of row i, or negative when it is not
    stored.  Returns plan.nused.  Raises ValueError when the plan does not match A or the
    outputs, IndexError for a rowmap entry past dense2d.
    """
    if plan is None:
        raise TypeError("plan must be a ColumnPlan (csr_column_plan's), not None")
    out = _floats(data2d_out, "data2d_out", 2, True, None)
    dense = _floats(dense2d, "dense2d", 2, False, data2d_out.dtype)
    cols = as_index(indices_out, "indices_out", True)
    rows = _rows_of(indptr, "indptr", False)
    ip, idx, vals = _csr_args(indptr, indices, data, rows, "", data2d_out.dtype)
    nused, n = out.shape
    check_length(cols, "indices_out", nused, "len(data2d_out)")
    if nused != plan.cols.shape[0]:
        raise ValueError(f"len(indices_out)={nused} must be the plan's number of used "
                         f"columns {plan.cols.shape[0]}")
    use_map = rowmap is not None
    if plan.pos.shape[0] != idx.shape[0] or plan.use_map != use_map:
        raise ValueError("plan must be what csr_column_plan gives for these indices and "
                         "rowmap")
    if dense.shape[1] != n:
        raise ValueError(f"dense2d must have {n} columns like data2d_out (got shape "
                         f"{dense.shape!r})")
    rm = as_index(rowmap, "rowmap", False) if use_map else np.empty(0, np.int64)
    if use_map:
        check_length(rm, "rowmap", rows, "rows")
        if rm.shape[0] and int(rm.max()) >= dense.shape[0]:
            raise IndexError(f"rowmap must map the rows into [0, {dense.shape[0]}) (the rows "
                             f"of dense2d) or be negative (got {int(rm.max())})")
    elif dense.shape[0] != rows:
        raise ValueError(f"dense2d must have rows={rows} rows (got shape {dense.shape!r})")
    touched = np.empty(nused, np.uint8)
    nbad = _csr_t_dot_dense_t(ip, idx, vals, rm, use_map, plan.pos, plan.cols, plan.colptr,
                              dense, cols, out, touched)
    if nbad:
        raise ValueError("plan must be what csr_column_plan gives for these indices and "
                         "rowmap (an entry of a row in use has no place)")
    return nused


# ---------------------------------------------------------------------------------------
# dense x CSR.T -> dense

cdef Py_ssize_t _dns_csr_t_block(const floating* a, Py_ssize_t k_dim, const index_t* indptr,
                                 const index_t* indices, const floating* data,
                                 Py_ssize_t ilo, Py_ssize_t ihi, Py_ssize_t rlo,
                                 Py_ssize_t rhi, Py_ssize_t r_dim,
                                 floating* out) noexcept nogil:
    """out[i, r] = sum over k in row r of B of data[k] * a[i, indices[k]] for the block."""
    cdef Py_ssize_t i, r, k, nbad = 0
    cdef index_t c
    cdef floating s
    cdef const floating* arow
    for i in range(ilo, ihi):
        arow = a + i * k_dim
        for r in range(rlo, rhi):
            s = 0
            for k in range(indptr[r], indptr[r + 1]):
                c = indices[k]
                if <size_t>c < <size_t>k_dim:
                    s = s + data[k] * arow[c]
                else:
                    nbad += 1
            out[i * r_dim + r] = s
    return nbad


def _dense_dot_csr_t_t(const floating[:, ::1] a, const index_t[::1] indptr,
                       const index_t[::1] indices, const floating[::1] data,
                       floating[:, ::1] out, int nthreads):
    cdef Py_ssize_t m = out.shape[0], r_dim = out.shape[1], k_dim = a.shape[1]
    cdef Py_ssize_t t, lo, hi, nbad = 0
    cdef const floating* ab = &a[0, 0] if m > 0 and k_dim > 0 else NULL
    cdef const index_t* ix = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const floating* dv = &data[0] if data.shape[0] > 0 else NULL
    cdef floating* ob = &out[0, 0] if m > 0 and r_dim > 0 else NULL
    cdef const index_t* ip = &indptr[0]
    if m == 0 or r_dim == 0:
        return 0
    with nogil:
        if nthreads <= 1:
            nbad = _dns_csr_t_block(ab, k_dim, ip, ix, dv, 0, m, 0, r_dim, r_dim, ob)
        elif m >= nthreads:       # blocks of rows of the dense operand
            for t in prange(nthreads, num_threads=nthreads, schedule="static"):
                lo = m * t // nthreads
                hi = m * (t + 1) // nthreads
                nbad += _dns_csr_t_block(ab, k_dim, ip, ix, dv, lo, hi, 0, r_dim, r_dim, ob)
        else:                     # few rows: blocks of rows of B, balanced by entries
            for t in prange(nthreads, num_threads=nthreads, schedule="static"):
                lo = _balanced_row(ip, r_dim, t, nthreads)
                hi = _balanced_row(ip, r_dim, t + 1, nthreads)
                nbad += _dns_csr_t_block(ab, k_dim, ip, ix, dv, 0, m, lo, hi, r_dim, ob)
    return nbad


def dense_dot_csr_t(dense2d, indptr, indices, data, out2d):
    """out2d = D @ B.T: D dense (m, k), B the CSR matrix (out2d.shape[1], k); returns nnz.

    Raises IndexError for a column of B outside [0, k) (the other values are written).
    """
    out = _floats(out2d, "out2d", 2, True, None)
    a = _floats(dense2d, "dense2d", 2, False, out2d.dtype)
    m, r_dim = out.shape
    ip, idx, vals = _csr_args(indptr, indices, data, r_dim, "", out2d.dtype)
    if a.shape[0] != m:
        raise ValueError(f"dense2d must have {m} rows like out2d (got shape {a.shape!r})")
    if _dense_dot_csr_t_t(a, ip, idx, vals, out, arith_threads(max(m, r_dim),
                                                              m * idx.shape[0] + m * r_dim)):
        raise_bad_column(ip, idx, a.shape[1], "")
    return idx.shape[0]


# ---------------------------------------------------------------------------------------
# CSR (op) CSR -> CSR, values merged row by row; zero results are not stored (MXNet's CPU
# kernel and SciPy drop them too).  Entries present on one side only meet a zero: so
# inf * (missing) stores nan, as SciPy does.

cdef inline floating _binop(int op, floating a, floating b) noexcept nogil:
    if op == OP_ADD:
        return a + b
    if op == OP_SUB:
        return a - b
    return a * b


cdef inline Py_ssize_t _put(index_t c, floating r, index_t* oi, floating* ov, Py_ssize_t k,
                            Py_ssize_t cap) noexcept nogil:
    if r != 0:
        if k < cap:
            oi[k] = c
            ov[k] = r
        return k + 1
    return k


cdef Py_ssize_t _merge_row(int op, const index_t* ai, const floating* av, Py_ssize_t na,
                           const index_t* bi, const floating* bv, Py_ssize_t nb,
                           index_t* oi, floating* ov, Py_ssize_t cap) noexcept nogil:
    """op of one row of A and B (columns ascending); writes at most cap entries, returns
    how many nonzero results the row has."""
    cdef Py_ssize_t p = 0, q = 0, k = 0
    cdef index_t ca, cb
    cdef floating zero = 0
    while p < na and q < nb:
        ca = ai[p]
        cb = bi[q]
        if ca < cb:
            k = _put(ca, _binop(op, av[p], zero), oi, ov, k, cap)
            p += 1
        elif cb < ca:
            k = _put(cb, _binop(op, zero, bv[q]), oi, ov, k, cap)
            q += 1
        else:
            k = _put(ca, _binop(op, av[p], bv[q]), oi, ov, k, cap)
            p += 1
            q += 1
    while p < na:
        k = _put(ai[p], _binop(op, av[p], zero), oi, ov, k, cap)
        p += 1
    while q < nb:
        k = _put(bi[q], _binop(op, zero, bv[q]), oi, ov, k, cap)
        q += 1
    return k


def _csr_binary_t(int op, const index_t[::1] a_ip, const index_t[::1] a_ix,
                  const floating[::1] a_v, const index_t[::1] b_ip, const index_t[::1] b_ix,
                  const floating[::1] b_v, index_t[::1] indptr, index_t[::1] indices_out,
                  floating[::1] data_out, bint fill, int nthreads):
    """Count pass (fill=False: indptr gets the row pointer, returns nnz) or fill pass
    (returns the number of rows whose count differs from indptr)."""
    cdef Py_ssize_t rows = indptr.shape[0] - 1, i, nbad = 0, nnz = indices_out.shape[0]
    cdef index_t start, cap, total = 0
    cdef const index_t* aix = &a_ix[0] if a_ix.shape[0] > 0 else NULL
    cdef const floating* av = &a_v[0] if a_v.shape[0] > 0 else NULL
    cdef const index_t* bix = &b_ix[0] if b_ix.shape[0] > 0 else NULL
    cdef const floating* bv = &b_v[0] if b_v.shape[0] > 0 else NULL
    cdef index_t* oi = &indices_out[0] if nnz > 0 else NULL
    cdef floating* ov = &data_out[0] if nnz > 0 else NULL
    with nogil:
        if not fill:
            indptr[0] = 0
            for i in prange(rows, num_threads=nthreads, schedule="static"):
                indptr[i + 1] = _merge_row(op, aix + a_ip[i], av + a_ip[i],
                                           a_ip[i + 1] - a_ip[i], bix + b_ip[i],
                                           bv + b_ip[i], b_ip[i + 1] - b_ip[i], NULL, NULL, 0)
            for i in range(rows):
                indptr[i + 1] += indptr[i]
            total = indptr[rows]
        else:
            for i in prange(rows, num_threads=nthreads, schedule="static"):
                start = indptr[i]
                cap = indptr[i + 1] - start
                nbad += _merge_row(op, aix + a_ip[i], av + a_ip[i], a_ip[i + 1] - a_ip[i],
                                   bix + b_ip[i], bv + b_ip[i], b_ip[i + 1] - b_ip[i],
                                   oi + start, ov + start, cap) != cap
    return nbad if fill else total


cdef tuple _csr_operands(Py_ssize_t rows, object a_indptr, object a_indices, object a_data,
                         object b_indptr, object b_indices, object b_data):
    """_csr_args of both operands of A op B (`rows` rows, one dtype)."""
    a = _csr_args(a_indptr, a_indices, a_data, rows, "a_", None)
    return a, _csr_args(b_indptr, b_indices, b_data, rows, "b_", a[2].dtype)


def csr_binary_count(op, a_indptr, a_indices, a_data, b_indptr, b_indices, b_data,
                     indptr_out):
    """Row pointer of A op B ('add', 'subtract', 'multiply') for CSR A and B of one shape,
    counting the nonzero results; returns nnz.  Column indices must be sorted per row."""
    cdef int code = _binop_code(op)
    ip = as_index(indptr_out, "indptr_out", True)
    rows = _rows_of(ip, "indptr_out", True)
    a, b = _csr_operands(rows, a_indptr, a_indices, a_data, b_indptr, b_indices, b_data)
    nthreads = arith_threads(rows, a[1].shape[0] + b[1].shape[0])
    return _csr_binary_t(code, a[0], a[1], a[2], b[0], b[1], b[2], ip, np.empty(0, np.int64),
                         np.empty(0, a[2].dtype), False, nthreads)


def csr_binary_fill(op, a_indptr, a_indices, a_data, b_indptr, b_indices, b_data, indptr,
                    indices_out, data_out):
    """Write the columns and values of A op B; indptr is csr_binary_count's.  Returns nnz.
    Raises ValueError when indptr is malformed or does not match A op B."""
    cdef int code = _binop_code(op)
    ip = as_index(indptr, "indptr", False)
    rows = _rows_of(ip, "indptr", False)
    a, b = _csr_operands(rows, a_indptr, a_indices, a_data, b_indptr, b_indices, b_data)
    idx = as_index(indices_out, "indices_out", True)
    vals = _floats(data_out, "data_out", 1, True, a[2].dtype)
    check_length(vals, "data_out", idx.shape[0], "len(indices_out)")
    check_indptr(ip, idx.shape[0], "")
    nthreads = arith_threads(rows, a[1].shape[0] + b[1].shape[0])
    nbad = _csr_binary_t(code, a[0], a[1], a[2], b[0], b[1], b[2], ip, idx, vals, True,
                         nthreads)
    if nbad:
        raise ValueError(f"indptr must match the nonzero results of a {op} b (got {nbad} "
                         "rows whose count differs)")
    return idx.shape[0]


# ---------------------------------------------------------------------------------------
# row_sparse (op) row_sparse -> row_sparse: the union of the stored rows for add and
# subtract, the intersection for multiply (a row missing on one side multiplies zeros).
# Rows whose result is zero stay stored (MXNet keeps them too).

cdef Py_ssize_t _rsp_merge(bint union, const index_t* a, Py_ssize_t na, const index_t* b,
                           Py_ssize_t nb, index_t* out, index_t* sa, index_t* sb,
                           Py_ssize_t cap) noexcept nogil:
    """Merge sorted a and b; out[k] the row, sa[k] / sb[k] its position in a / b or -1.
    Writes at most cap rows; returns how many the merge has."""
    cdef Py_ssize_t p = 0, q = 0, k = 0
    cdef index_t r, pa, pb
    while p < na or q < nb:
        if q >= nb or (p < na and a[p] < b[q]):
            r, pa, pb = a[p], p, -1
            p += 1
        elif p >= na or b[q] < a[p]:
            r, pa, pb = b[q], -1, q
            q += 1
        else:
            r, pa, pb = a[p], p, q
            p += 1
            q += 1
        if union or (pa >= 0 and pb >= 0):
            if k < cap:
                out[k] = r
                sa[k] = pa
                sb[k] = pb
            k += 1
    return k


cdef void _rsp_rows(int op, const floating* ad, const floating* bd, const index_t* sa,
                    const index_t* sb, Py_ssize_t n, Py_ssize_t w, floating* od,
                    int nthreads) noexcept nogil:
    cdef Py_ssize_t k, j
    cdef floating* o
    cdef const floating* x
    cdef const floating* y
    for k in prange(n, num_threads=nthreads, schedule="static"):
        o = od + k * w
        if sa[k] >= 0 and sb[k] >= 0:
            x = ad + sa[k] * w
            y = bd + sb[k] * w
            if op == OP_ADD:
                for j in range(w):
                    o[j] = x[j] + y[j]
            elif op == OP_SUB:
                for j in range(w):
                    o[j] = x[j] - y[j]
            else:
                for j in range(w):
                    o[j] = x[j] * y[j]
        elif sa[k] >= 0 and op != OP_MUL:
            memcpy(o, ad + sa[k] * w, w * sizeof(floating))
        elif sb[k] >= 0 and op == OP_ADD:
            memcpy(o, bd + sb[k] * w, w * sizeof(floating))
        elif sb[k] >= 0 and op == OP_SUB:
            y = bd + sb[k] * w
            for j in range(w):
                o[j] = -y[j]
        else:
            memset(o, 0, w * sizeof(floating))


def _rsp_binary_t(int op, const index_t[::1] a_idx, const floating[:, ::1] a_data,
                  const index_t[::1] b_idx, const floating[:, ::1] b_data,
                  index_t[::1] out_idx, floating[:, ::1] out_data, index_t[::1] sa,
                  index_t[::1] sb):
    cdef Py_ssize_t n = out_idx.shape[0], w = out_data.shape[1], k
    cdef const index_t* ai = &a_idx[0] if a_idx.shape[0] > 0 else NULL
    cdef const index_t* bi = &b_idx[0] if b_idx.shape[0] > 0 else NULL
    cdef index_t* oi = &out_idx[0] if n > 0 else NULL
    cdef index_t* pa = &sa[0] if n > 0 else NULL
    cdef index_t* pb = &sb[0] if n > 0 else NULL
    cdef const floating* ad = &a_data[0, 0] if a_data.shape[0] > 0 and w > 0 else NULL
    cdef const floating* bd = &b_data[0, 0] if b_data.shape[0] > 0 and w > 0 else NULL
    cdef floating* od = &out_data[0, 0] if n > 0 and w > 0 else NULL
    cdef int nthreads = arith_threads(n, n * w)
    with nogil:
        k = _rsp_merge(op != OP_MUL, ai, a_idx.shape[0], bi, b_idx.shape[0], oi, pa, pb, n)
        if k == n and w > 0:
            _rsp_rows(op, ad, bd, pa, pb, n, w, od, nthreads)
    return k


def rsp_binary_count(op, a_indices, b_indices):
    """Number of stored rows of A op B for row_sparse A and B (sorted row indices)."""
    cdef int code = _binop_code(op)
    cdef const index_t[::1] a = as_index(a_indices, "a_indices", False)
    cdef const index_t[::1] b = as_index(b_indices, "b_indices", False)
    cdef const index_t* ap = &a[0] if a.shape[0] > 0 else NULL
    cdef const index_t* bp = &b[0] if b.shape[0] > 0 else NULL
    cdef Py_ssize_t n
    with nogil:
        n = _rsp_merge(code != OP_MUL, ap, a.shape[0], bp, b.shape[0], NULL, NULL, NULL, 0)
    return n


def rsp_binary(op, a_indices, a_data2d, b_indices, b_data2d, indices_out, data2d_out):
    """Write the rows of A op B ('add', 'subtract', 'multiply') for row_sparse A and B.

    The data arrays are the stored rows seen as 2-D; indices_out and data2d_out hold
    rsp_binary_count rows.  Returns that number; ValueError when it does not match.
    """
    cdef int code = _binop_code(op)
    out = _floats(data2d_out, "data2d_out", 2, True, None)
    ad = _floats(a_data2d, "a_data2d", 2, False, data2d_out.dtype)
    bd = _floats(b_data2d, "b_data2d", 2, False, data2d_out.dtype)
    ai = as_index(a_indices, "a_indices", False)
    bi = as_index(b_indices, "b_indices", False)
    oi = as_index(indices_out, "indices_out", True)
    check_length(ad, "a_data2d", ai.shape[0], "len(a_indices)")
    check_length(bd, "b_data2d", bi.shape[0], "len(b_indices)")
    check_length(out, "data2d_out", oi.shape[0], "len(indices_out)")
    w = out.shape[1]
    if ad.shape[1] != w or bd.shape[1] != w:
        raise ValueError(f"a_data2d, b_data2d and data2d_out must have one row length (got "
                         f"{ad.shape[1]}, {bd.shape[1]} and {w})")
    n = oi.shape[0]
    sa = np.empty(n, np.int64)
    sb = np.empty(n, np.int64)
    k = _rsp_binary_t(code, ai, ad, bi, bd, oi, out, sa, sb)
    if k != n:
        raise ValueError(f"indices_out must have length {k} (the rows of a {op} b) "
                         f"(got {n})")
    return n


def _rsp_mul_dense_t(const index_t[::1] idx, const floating[:, ::1] data,
                     const floating[:, ::1] dense, floating[:, ::1] out, int nthreads):
    cdef Py_ssize_t n = idx.shape[0], w = out.shape[1], rows = dense.shape[0], k, j
    cdef Py_ssize_t nbad = 0
    cdef index_t r
    if n == 0 or w == 0:
        return 0
    with nogil:
        for k in prange(n, num_threads=nthreads, schedule="static"):
            r = idx[k]
            if <size_t>r < <size_t>rows:
                for j in range(w):
                    out[k, j] = data[k, j] * dense[r, j]
            else:
                nbad += 1
    return nbad


def rsp_mul_dense(indices, data2d, dense2d, data2d_out):
    """data2d_out[k] = data2d[k] * dense2d[indices[k]]: row_sparse times dense, keeping the
    stored rows.  Returns len(indices); IndexError for a row outside dense2d."""
    out = _floats(data2d_out, "data2d_out", 2, True, None)
    data = _floats(data2d, "data2d", 2, False, data2d_out.dtype)
    dense = _floats(dense2d, "dense2d", 2, False, data2d_out.dtype)
    idx = as_index(indices, "indices", False)
    check_length(data, "data2d", idx.shape[0], "len(indices)")
    check_length(out, "data2d_out", idx.shape[0], "len(indices)")
    if data.shape[1] != out.shape[1] or dense.shape[1] != out.shape[1]:
        raise ValueError(f"data2d, dense2d and data2d_out must have one row length (got "
                         f"{data.shape[1]}, {dense.shape[1]} and {out.shape[1]})")
    if _rsp_mul_dense_t(idx, data, dense, out, arith_threads(idx.shape[0], out.size)):
        k = int(np.flatnonzero((idx < 0) | (idx >= dense.shape[0]))[0])
        raise IndexError(f"indices must be in [0, nrows={dense.shape[0]}) "
                         f"(got indices[{k}]={idx[k]})")
    return idx.shape[0]


# ---------------------------------------------------------------------------------------
# add_n of row_sparse arrays: the union of the stored rows, each input added into it.

cdef Py_ssize_t _union_k(index_t** lists, Py_ssize_t* lens, Py_ssize_t* pos, Py_ssize_t k,
                         index_t* out, Py_ssize_t cap) noexcept nogil:
    """Union of k sorted lists (a k-way merge); writes at most cap, returns its size."""
    cdef Py_ssize_t j, n = 0
    cdef index_t m = 0, v
    cdef bint found
    for j in range(k):
        pos[j] = 0
    while True:
        found = False
        for j in range(k):
            if pos[j] < lens[j]:
                v = lists[j][pos[j]]
                if not found or v < m:
                    m = v
                    found = True
        if not found:
            return n
        for j in range(k):
            if pos[j] < lens[j] and lists[j][pos[j]] == m:
                pos[j] += 1
        if n < cap:
            out[n] = m
        n += 1


cdef Py_ssize_t _union(list arrays, index_t[::1] out) except -1:
    cdef Py_ssize_t k = len(arrays), j, n
    cdef const index_t[::1] mv
    cdef index_t** lists = <index_t**>PyMem_Malloc(max(k, 1) * sizeof(index_t*))
    cdef Py_ssize_t* lens = <Py_ssize_t*>PyMem_Malloc(max(k, 1) * 2 * sizeof(Py_ssize_t))
    if lists == NULL or lens == NULL:
        PyMem_Free(lists)
        PyMem_Free(lens)
        raise MemoryError()
    try:
        for j in range(k):
            mv = arrays[j]
            lens[j] = mv.shape[0]
            lists[j] = <index_t*>&mv[0] if mv.shape[0] > 0 else NULL
        with nogil:
            n = _union_k(lists, lens, lens + k, k, &out[0] if out.shape[0] > 0 else NULL,
                         out.shape[0])
    finally:
        PyMem_Free(lists)
        PyMem_Free(lens)
    return n


def rsp_union_count(indices_list):
    """Number of distinct rows stored by row_sparse arrays with these (sorted) indices."""
    arrays = [as_index(a, f"indices_list[{j}]", False) for j, a in enumerate(indices_list)]
    return _union(arrays, np.empty(0, np.int64))


def _rsp_accumulate_t(const index_t[::1] out_idx, floating[:, ::1] out,
                      const index_t[::1] idx, const floating[:, ::1] data, int nthreads):
    cdef Py_ssize_t n = idx.shape[0], nu = out_idx.shape[0], w = out.shape[1], k, j, p
    cdef Py_ssize_t nbad = 0
    if n == 0 or w == 0:
        return 0
    with nogil:
        for k in prange(n, num_threads=nthreads, schedule="static"):
            p = lower_bound(&out_idx[0], nu, idx[k], 0)
            if p < nu and out_idx[p] == idx[k]:
                for j in range(w):
                    out[p, j] += data[k, j]
            else:
                nbad += 1
    return nbad


def rsp_add_n(indices_list, data2d_list, indices_out, data2d_out):
    """The sum of row_sparse arrays: indices_out gets the union of the stored rows
    (rsp_union_count of them), data2d_out their sums.  Returns the number of rows."""
    out = _floats(data2d_out, "data2d_out", 2, True, None)
    oi = as_index(indices_out, "indices_out", True)
    if len(indices_list) != len(data2d_list):
        raise ValueError(f"indices_list and data2d_list must have one length (got "
                         f"{len(indices_list)} and {len(data2d_list)})")
    idx = [as_index(a, f"indices_list[{j}]", False) for j, a in enumerate(indices_list)]
    data = [_floats(d, f"data2d_list[{j}]", 2, False, data2d_out.dtype)
            for j, d in enumerate(data2d_list)]
    check_length(out, "data2d_out", oi.shape[0], "len(indices_out)")
    for j in range(len(idx)):
        check_length(data[j], f"data2d_list[{j}]", idx[j].shape[0], f"len(indices_list[{j}])")
        if data[j].shape[1] != out.shape[1]:
            raise ValueError(f"data2d_list[{j}] must have rows of length {out.shape[1]} "
                             f"(got shape {data[j].shape!r})")
    n = _union(idx, oi)
    if n != oi.shape[0]:
        raise ValueError(f"indices_out must have length {n} (the union of the rows) "
                         f"(got {oi.shape[0]})")
    out.fill(0)
    for j in range(len(idx)):
        if _rsp_accumulate_t(oi, out, idx[j], data[j], arith_threads(idx[j].shape[0],
                                                                     data[j].size)):
            raise ValueError(f"indices_list[{j}] must be sorted")
    return n


# ---------------------------------------------------------------------------------------
# Sums: CSR along an axis, squares of 2-D rows or columns.  Accumulated in float64.

def _csr_sum_t(const index_t[::1] indptr, const index_t[::1] indices,
               const floating[::1] data, int axis, double scale, floating[::1] out,
               double[::1] acc, int nthreads):
    cdef Py_ssize_t rows = indptr.shape[0] - 1, n = out.shape[0], i, k, nbad = 0
    cdef index_t c
    cdef double s
    with nogil:
        if axis == 1:
            for i in prange(rows, num_threads=nthreads, schedule="static"):
                s = 0
                for k in range(indptr[i], indptr[i + 1]):
                    s = s + data[k]
                out[i] = <floating>(s * scale)
        else:
            for i in range(n):
                acc[i] = 0
            for k in range(indices.shape[0]):
                c = indices[k]
                if <size_t>c < <size_t>n:
                    acc[c] += data[k]
                else:
                    nbad += 1
            for i in range(n):
                out[i] = <floating>(acc[i] * scale)
    return nbad


def csr_sum(indptr, indices, data, int axis, out, double scale=1.0):
    """out = scale * (A summed along axis): axis 0 gives the column sums (len(out) columns),
    axis 1 the row sums.  Returns nnz."""
    res = _floats(out, "out", 1, True, None)
    if axis not in (0, 1):
        raise ValueError(f"axis must be 0 or 1 (got {axis})")
    ip, idx, vals = _csr_args(indptr, indices, data, _rows_of(indptr, "indptr", False), "",
                              out.dtype)
    if axis == 1:
        check_length(res, "out", ip.shape[0] - 1, "rows")
    acc = np.empty(res.shape[0] if axis == 0 else 0, np.float64)
    if _csr_sum_t(ip, idx, vals, axis, scale, res, acc,
                  arith_threads(ip.shape[0] - 1, idx.shape[0])):
        raise_bad_column(ip, idx, res.shape[0], "")
    return idx.shape[0]


def _square_sum_t(const floating[:, ::1] a, int axis, floating[::1] out, double[::1] acc,
                  int nthreads):
    cdef Py_ssize_t rows = a.shape[0], w = a.shape[1], i, j
    cdef double s, v
    with nogil:
        if axis == 1:
            for i in prange(rows, num_threads=nthreads, schedule="static"):
                s = 0
                for j in range(w):
                    v = a[i, j]
                    s = s + v * v
                out[i] = <floating>s
        else:
            for j in range(w):
                acc[j] = 0
            for i in range(rows):
                for j in range(w):
                    v = a[i, j]
                    acc[j] += v * v
            for j in range(w):
                out[j] = <floating>acc[j]


def square_sum(data2d, int axis, out):
    """out = (data2d ** 2) summed along axis (0: one value per column, 1: per row)."""
    res = _floats(out, "out", 1, True, None)
    a = _floats(data2d, "data2d", 2, False, out.dtype)
    if axis not in (0, 1):
        raise ValueError(f"axis must be 0 or 1 (got {axis})")
    check_length(res, "out", a.shape[1 - axis], "columns" if axis == 0 else "rows")
    acc = np.empty(a.shape[1] if axis == 0 else 0, np.float64)
    _square_sum_t(a, axis, res, acc, arith_threads(a.shape[0], a.size))
    return a.shape[1 - axis]


# ---------------------------------------------------------------------------------------
# retain: the rows `keep` of a row_sparse array, stored rows copied, the others zero.

cdef void _retain(const index_t[::1] idx, const uint8_t[:, ::1] src, const index_t[::1] keep,
                  index_t[::1] out_idx, uint8_t[:, ::1] dst, int nthreads) noexcept nogil:
    cdef Py_ssize_t n = keep.shape[0], nin = idx.shape[0], rowbytes = dst.shape[1], k, p
    cdef const index_t* ib = &idx[0] if nin > 0 else NULL
    for k in prange(n, num_threads=nthreads, schedule="static"):
        out_idx[k] = keep[k]
        if rowbytes == 0:
            continue
        p = lower_bound(ib, nin, keep[k], 0)
        if p < nin and ib[p] == keep[k]:
            memcpy(&dst[k, 0], &src[p, 0], rowbytes)
        else:
            memset(&dst[k, 0], 0, rowbytes)


def _retain_t(const index_t[::1] idx, const uint8_t[:, ::1] src, const index_t[::1] keep,
              index_t[::1] out_idx, uint8_t[:, ::1] dst, int nthreads):
    with nogil:
        _retain(idx, src, keep, out_idx, dst, nthreads)


def rsp_retain(indices, data2d, keep, indices_out, data2d_out):
    """Rows ``keep`` (sorted, unique) of the row_sparse array (indices, data2d): indices_out
    = keep, data2d_out[k] = the stored row keep[k], or zeros when it is not stored.  Any
    dtype.  Returns len(keep)."""
    data, _ = as_values(data2d, "data2d", 2, False, None)
    out, _ = as_values(data2d_out, "data2d_out", 2, True, data2d.dtype)
    idx = as_index(indices, "indices", False)
    kp = as_index(keep, "keep", False)
    oi = as_index(indices_out, "indices_out", True)
    check_length(data, "data2d", idx.shape[0], "len(indices)")
    check_length(oi, "indices_out", kp.shape[0], "len(keep)")
    check_length(out, "data2d_out", kp.shape[0], "len(keep)")
    if data.shape[1] != out.shape[1]:
        raise ValueError(f"data2d and data2d_out must have one row length (got "
                         f"{data.shape[1]} and {out.shape[1]})")
    _retain_t(idx, rows_as_bytes(data), kp, oi, rows_as_bytes(out),
              arith_threads(kp.shape[0], out.size))
    return kp.shape[0]
