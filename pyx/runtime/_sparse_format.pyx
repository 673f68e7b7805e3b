"""Storage casts (dense <-> CSR, dense <-> row_sparse) and format checks, compiled.

Layouts are MXNet's.  CSR: data (nnz,), indices int64 (nnz,), indptr int64 (rows+1,), column
indices sorted ascending within each row.  row_sparse: data (nstored, *row_shape), indices
int64 (nstored,), row numbers strictly increasing; the kernels see dense and data arrays as
2-D (rows, prod(row_shape)).

Every kernel writes into arrays that the caller allocated (the caller owns memory in its own
pool) and returns a count.  Each public function validates and converts its arguments, then
hands typed memoryviews to a fused-type `cdef ... noexcept nogil` loop that runs without the
GIL, parallel over rows with OpenMP once the input has SERIAL_CUTOFF elements or more (the
thread count is runtime._sparse_common's).  No input makes a kernel read or write out of
bounds: offsets are checked before they are used, and a kernel that finds its arguments
inconsistent raises after the loop.

float16 is handled as uint16 bit patterns, nonzero when (bits & 0x7fff) != 0, so that -0.0
counts as zero (as `x != 0` does for float32/float64); bool is handled as uint8.
"""

import numpy as np

from cython.parallel cimport prange
from libc.string cimport memcpy, memset

from runtime._sparse_common cimport (
    INDEX_ORDER, INDEX_RANGE, VALID, Defect, as_array, as_index, as_values, check_indptr,
    check_length, indptr_message, lower_bound, raise_bad_column, rows_as_bytes, threads_for)
from runtime._types cimport index_t, numeric, uint8_t, uint16_t

__all__ = [
    "check_csr", "check_rsp", "csr_count", "csr_fill", "csr_to_dense", "rsp_count",
    "rsp_fill", "rsp_to_dense",
]

# rsp_count tests a row for a nonzero this many elements at a time, so that the inner loop
# vectorizes and still stops early.
cdef enum:
    _ANY_BLOCK = 256

cdef object _INT64 = np.dtype(np.int64)
cdef object _UINT8 = np.dtype(np.uint8)
cdef object _BOOL = np.dtype(np.bool_)


cdef object _mask(object a, str name, bint out):
    a = as_array(a, name, 1, out)
    if a.dtype == _BOOL:
        return a.view(_UINT8)
    if a.dtype != _UINT8:
        raise TypeError(f"{name} must have dtype uint8 or bool (got {a.dtype!r})")
    return a


# ---------------------------------------------------------------------------------------
# Format checks.  The loops return a defect kind and where it is; Python writes the message.
# The row-pointer check (indptr_message, check_indptr) is _sparse_common's: the arithmetic
# uses it too.

cdef Defect _check_csr_indices(const index_t[::1] indptr, const index_t[::1] indices,
                               index_t ncols, Py_ssize_t* where,
                               Py_ssize_t* row) noexcept nogil:
    """Indices in [0, ncols) and strictly increasing per row; indptr already valid."""
    cdef Py_ssize_t r, k, lo, hi
    cdef index_t c
    for r in range(indptr.shape[0] - 1):
        lo = indptr[r]
        hi = indptr[r + 1]
        for k in range(lo, hi):
            c = indices[k]
            if c < 0 or c >= ncols:
                where[0] = k
                row[0] = r
                return INDEX_RANGE
            if k > lo and c <= indices[k - 1]:
                where[0] = k
                row[0] = r
                return INDEX_ORDER
    return VALID


cdef Defect _check_rsp_indices(const index_t[::1] indices, index_t nrows,
                               Py_ssize_t* where) noexcept nogil:
    cdef Py_ssize_t k
    cdef index_t r
    for k in range(indices.shape[0]):
        r = indices[k]
        if r < 0 or r >= nrows:
            where[0] = k
            return INDEX_RANGE
        if k > 0 and r <= indices[k - 1]:
            where[0] = k
            return INDEX_ORDER
    return VALID


cdef str _csr_indices_message(const index_t[::1] indptr, const index_t[::1] indices,
                              index_t ncols):
    cdef Py_ssize_t where = 0, row = 0
    cdef Defect d
    with nogil:
        d = _check_csr_indices(indptr, indices, ncols, &where, &row)
    if d == INDEX_RANGE:
        return (f"indices must be in [0, ncols={ncols}) "
                f"(got indices[{where}]={indices[where]} in row {row})")
    if d == INDEX_ORDER:
        return (f"indices must be strictly increasing within each row (got "
                f"indices[{where}]={indices[where]} <= indices[{where - 1}]="
                f"{indices[where - 1]} in row {row})")
    return None


cdef str _rsp_message(const index_t[::1] indices, index_t nrows, Defect* defect=NULL):
    cdef Py_ssize_t where = 0
    cdef Defect d
    with nogil:
        d = _check_rsp_indices(indices, nrows, &where)
    if defect != NULL:
        defect[0] = d
    if d == INDEX_RANGE:
        return f"indices must be in [0, nrows={nrows}) (got indices[{where}]={indices[where]})"
    if d == INDEX_ORDER:
        return (f"indices must be strictly increasing (got indices[{where}]="
                f"{indices[where]} <= indices[{where - 1}]={indices[where - 1]})")
    return None


cdef object _checked_index(object a, str name):
    """Any 1-D integer array that casts safely to int64, as a C-contiguous int64 array."""
    a = np.asarray(a)
    if a.dtype.kind not in "iu" or not np.can_cast(a.dtype, _INT64, "safe"):
        raise TypeError(f"{name} must have an integer dtype that casts safely to int64 "
                        f"(got {a.dtype!r})")
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D (got shape {a.shape!r})")
    return as_array(np.ascontiguousarray(a, dtype=_INT64), name, 1, False)


def check_csr(indptr, indices, Py_ssize_t ncols):
    """MXNet's full CSR check: a message naming the first defect, or None if valid.

    Checked in order: indptr non-empty, indptr[0] == 0, indptr non-decreasing,
    indptr[-1] == len(indices), then for each stored entry in storage order: its column in
    [0, ncols) and greater than the previous column of its row.
    """
    if ncols < 0:
        raise ValueError(f"ncols must be >= 0 (got {ncols})")
    ip = _checked_index(indptr, "indptr")
    idx = _checked_index(indices, "indices")
    msg = indptr_message(ip, idx.shape[0])
    if msg is None:
        msg = _csr_indices_message(ip, idx, ncols)
    return msg


def check_rsp(indices, Py_ssize_t nrows):
    """row_sparse check: a message naming the first defect, or None if valid.

    Each stored row number must lie in [0, nrows) and exceed the previous one.
    """
    if nrows < 0:
        raise ValueError(f"nrows must be >= 0 (got {nrows})")
    return _rsp_message(_checked_index(indices, "indices"), nrows)


# ---------------------------------------------------------------------------------------
# Row loops.  They take raw row pointers (derived from the memoryviews by the kernels below)
# so that the compiler sees unit stride and no aliasing with the memoryview structs, and
# vectorizes the zero tests.

# Block of the nonzero scan: a vectorized "any nonzero?" test skips empty blocks.  32 beat
# 16 (which GCC unrolls into scalar compares instead of vectorizing) and 64.
cdef enum:
    _BLOCK = 32


cdef inline bint _nz(numeric v, uint16_t hmask) noexcept nogil:
    if numeric is uint16_t:
        return (v & hmask) != 0
    else:
        return v != 0


cdef inline Py_ssize_t _count_nz(const numeric* row, Py_ssize_t n,
                                 uint16_t hmask) noexcept nogil:
    cdef Py_ssize_t j, c = 0
    for j in range(n):
        c += _nz(row[j], hmask)
    return c


cdef inline bint _block_has_nz(const numeric* block, uint16_t hmask) noexcept nogil:
    """Whether block[:_BLOCK] holds a nonzero (an int sum: the form GCC vectorizes best)."""
    cdef int j, c = 0
    for j in range(_BLOCK):
        c += _nz(block[j], hmask)
    return c != 0


cdef inline bint _any_nz(const numeric* row, Py_ssize_t n, uint16_t hmask) noexcept nogil:
    """Whether row[:n] holds a nonzero, in vectorized blocks that stop at the first hit."""
    cdef Py_ssize_t j0 = 0
    while j0 < n:
        if _count_nz(row + j0, min(<Py_ssize_t>_ANY_BLOCK, n - j0), hmask):
            return True
        j0 += _ANY_BLOCK
    return False


cdef inline Py_ssize_t _fill_capped(const numeric* row, Py_ssize_t j0, Py_ssize_t j1,
                                    index_t* indices, numeric* data, Py_ssize_t k,
                                    Py_ssize_t cap, uint16_t hmask) noexcept nogil:
    """Write the column and value of each nonzero of row[j0:j1] at k, k + 1, ... while k <
    cap; returns k advanced past all of them (which may exceed cap)."""
    cdef Py_ssize_t j
    cdef numeric v
    for j in range(j0, j1):
        v = row[j]
        if _nz(v, hmask):
            if k < cap:
                indices[k] = j
                data[k] = v
            k += 1
    return k


cdef inline Py_ssize_t _fill_row(const numeric* row, Py_ssize_t n, index_t* indices,
                                 numeric* data, Py_ssize_t cap,
                                 uint16_t hmask) noexcept nogil:
    """Write the column and value of each nonzero of row[:n], at most `cap` of them.

    Returns how many nonzeros the row holds (which may exceed cap).  Blocks without a
    nonzero are skipped after one vectorized test; a block that fits in what is left of
    cap is written without branches (each element written at k, k advancing on nonzeros:
    the slots past the final k stay within cap and are overwritten or unused).
    """
    cdef Py_ssize_t j0 = 0, j, k = 0
    cdef numeric v
    while j0 < n:
        if n - j0 >= _BLOCK:
            if _block_has_nz(row + j0, hmask):
                if k + _BLOCK <= cap:
                    for j in range(j0, j0 + _BLOCK):
                        v = row[j]
                        indices[k] = j
                        data[k] = v
                        k += _nz(v, hmask)
                else:
                    k = _fill_capped(row, j0, j0 + _BLOCK, indices, data, k, cap, hmask)
            j0 += _BLOCK
        else:
            k = _fill_capped(row, j0, n, indices, data, k, cap, hmask)
            j0 = n
    return k


# ---------------------------------------------------------------------------------------
# dense -> CSR

def _csr_count_t(const numeric[:, ::1] dense, index_t[::1] indptr, uint16_t hmask,
                 int nthreads):
    """Write the row pointer of dense's nonzeros; returns nnz."""
    cdef Py_ssize_t rows = dense.shape[0], ncols = dense.shape[1], i
    cdef const numeric* base = &dense[0, 0] if rows > 0 and ncols > 0 else NULL
    with nogil:
        indptr[0] = 0
        for i in prange(rows, num_threads=nthreads, schedule="static"):
            indptr[i + 1] = _count_nz(base + i * ncols, ncols, hmask)
        for i in range(rows):
            indptr[i + 1] += indptr[i]
    return indptr[rows]


def _csr_fill_t(const numeric[:, ::1] dense, const index_t[::1] indptr,
                index_t[::1] indices, numeric[::1] data, uint16_t hmask, int nthreads):
    """Returns the number of rows whose nonzero count differs from indptr (0 when right).

    indptr is valid for len(indices) entries; a row never writes past indptr[i + 1].
    """
    cdef Py_ssize_t rows = dense.shape[0], ncols = dense.shape[1], i, nnz = indices.shape[0]
    cdef Py_ssize_t nbad = 0
    cdef index_t start, cap
    cdef const numeric* base = &dense[0, 0] if rows > 0 and ncols > 0 else NULL
    cdef index_t* ibase = &indices[0] if nnz > 0 else NULL
    cdef numeric* dbase = &data[0] if nnz > 0 else NULL
    with nogil:
        for i in prange(rows, num_threads=nthreads, schedule="static"):
            start = indptr[i]
            cap = indptr[i + 1] - start
            nbad += _fill_row(base + i * ncols, ncols, ibase + start, dbase + start, cap,
                              hmask) != cap
    return nbad


def csr_count(dense2d, indptr_out):
    """Fill indptr_out (int64, rows+1) with the CSR row pointer of dense2d; return nnz."""
    dense, hmask = as_values(dense2d, "dense2d", 2, False, None)
    indptr = as_index(indptr_out, "indptr_out", True)
    rows, ncols = dense.shape
    check_length(indptr, "indptr_out", rows + 1, "rows+1")
    return _csr_count_t(dense, indptr, hmask, threads_for(rows, dense.size))


def csr_fill(dense2d, indptr, indices_out, data_out):
    """Write the column indices (ascending per row) and values of dense2d's nonzeros.

    indptr is csr_count's row pointer; data_out has dense2d's dtype.  Returns nnz.  Raises
    ValueError when indptr is malformed or does not match the nonzeros of dense2d.
    """
    dense, hmask = as_values(dense2d, "dense2d", 2, False, None)
    ip = as_index(indptr, "indptr", False)
    indices = as_index(indices_out, "indices_out", True)
    data, _ = as_values(data_out, "data_out", 1, True, dense2d.dtype)
    rows, ncols = dense.shape
    nnz = indices.shape[0]
    check_length(ip, "indptr", rows + 1, "rows+1")
    check_length(data, "data_out", nnz, "nnz")
    check_indptr(ip, nnz, "")
    nbad = _csr_fill_t(dense, ip, indices, data, hmask, threads_for(rows, dense.size))
    if nbad:
        raise ValueError(f"indptr must match the nonzeros of dense2d "
                         f"(got {nbad} rows whose count differs)")
    return nnz


# ---------------------------------------------------------------------------------------
# CSR -> dense

def _csr_to_dense_t(const numeric[::1] data, const index_t[::1] indices,
                    const index_t[::1] indptr, numeric[:, ::1] out, int nthreads):
    """Zero each row, then scatter its entries; returns how many columns were out of range.

    indptr is valid for len(indices) entries; out-of-range columns are skipped.
    """
    cdef Py_ssize_t rows = out.shape[0], ncols = out.shape[1], i
    cdef Py_ssize_t nbad = 0
    cdef index_t k, c
    cdef numeric* row
    cdef numeric* base = &out[0, 0] if rows > 0 and ncols > 0 else NULL
    with nogil:
        for i in prange(rows, num_threads=nthreads, schedule="static"):
            row = base + i * ncols
            if ncols > 0:
                memset(row, 0, ncols * sizeof(numeric))
            for k in range(indptr[i], indptr[i + 1]):
                c = indices[k]
                if <size_t>c < <size_t>ncols:
                    row[c] = data[k]
                else:
                    nbad += 1
    return nbad


def csr_to_dense(data, indices, indptr, dense2d_out):
    """Zero dense2d_out and scatter the CSR entries into it; return nnz.

    Duplicate columns are not expected (check_csr finds them): the last one wins.  Raises
    ValueError for a malformed indptr and IndexError for a column outside [0, ncols), after
    having written the valid entries.
    """
    out, _ = as_values(dense2d_out, "dense2d_out", 2, True, None)
    vals, _ = as_values(data, "data", 1, False, dense2d_out.dtype)
    idx = as_index(indices, "indices", False)
    ip = as_index(indptr, "indptr", False)
    rows, ncols = out.shape
    nnz = idx.shape[0]
    check_length(ip, "indptr", rows + 1, "rows+1")
    check_length(vals, "data", nnz, "nnz")
    check_indptr(ip, nnz, "")
    if _csr_to_dense_t(vals, idx, ip, out, threads_for(rows, out.size + nnz)):
        raise_bad_column(ip, idx, ncols, "")
    return nnz


# ---------------------------------------------------------------------------------------
# dense <-> row_sparse

def _rsp_count_t(const numeric[:, ::1] dense, uint8_t[::1] rowmask, uint16_t hmask,
                 int nthreads):
    """Mark the rows of dense that hold a nonzero; returns how many."""
    cdef Py_ssize_t rows = dense.shape[0], ncols = dense.shape[1], i
    cdef Py_ssize_t n = 0
    cdef bint hit
    cdef const numeric* base = &dense[0, 0] if rows > 0 and ncols > 0 else NULL
    with nogil:
        for i in prange(rows, num_threads=nthreads, schedule="static"):
            hit = _any_nz(base + i * ncols, ncols, hmask)
            rowmask[i] = hit
            n += hit
    return n


cdef Py_ssize_t _rsp_select(const uint8_t[::1] rowmask, index_t[::1] indices) noexcept nogil:
    """Write the numbers of the marked rows (as many as fit); return how many are marked."""
    cdef Py_ssize_t i, k = 0, n = indices.shape[0]
    for i in range(rowmask.shape[0]):
        if rowmask[i]:
            if k < n:
                indices[k] = i
            k += 1
    return k


def _gather_rows_t(const uint8_t[:, ::1] src, const index_t[::1] rows,
                   uint8_t[:, ::1] dst, int nthreads):
    """dst[k] = src[rows[k]] for every k, rows in range (byte rows)."""
    cdef Py_ssize_t rowbytes = src.shape[1], k
    if rowbytes == 0:
        return
    with nogil:
        for k in prange(rows.shape[0], num_threads=nthreads, schedule="static"):
            memcpy(&dst[k, 0], &src[rows[k], 0], rowbytes)


def _scatter_rows_t(const uint8_t[:, ::1] src, const index_t[::1] rows,
                    uint8_t[:, ::1] dst, int nthreads):
    """dst[rows[k]] = src[k], every other row of dst zeroed; each dst row written once.

    rows is strictly increasing and in range.  Each thread takes an equal block of dst rows,
    so that clustered stored rows do not leave one thread all the zeroing.
    """
    cdef Py_ssize_t nrows = dst.shape[0], rowbytes = dst.shape[1], nstored = rows.shape[0]
    cdef Py_ssize_t t, i, k, lo, hi
    cdef const index_t* rp = &rows[0] if nstored > 0 else NULL
    if rowbytes == 0 or nrows == 0:
        return
    with nogil:
        for t in prange(nthreads, num_threads=nthreads, schedule="static"):
            lo = nrows * t // nthreads
            hi = nrows * (t + 1) // nthreads
            k = lower_bound(rp, nstored, lo, 0)
            i = lo
            while i < hi:
                if k < nstored and rp[k] == i:
                    memcpy(&dst[i, 0], &src[k, 0], rowbytes)
                    k = k + 1
                else:
                    memset(&dst[i, 0], 0, rowbytes)
                i = i + 1


def rsp_count(dense2d, rowmask_out):
    """Mark (uint8 1/0) the rows of dense2d that hold a nonzero; return how many.

    dense2d is the dense array seen as (shape[0], prod(shape[1:])).
    """
    dense, hmask = as_values(dense2d, "dense2d", 2, False, None)
    mask = _mask(rowmask_out, "rowmask_out", True)
    rows = dense.shape[0]
    check_length(mask, "rowmask_out", rows, "rows")
    return _rsp_count_t(dense, mask, hmask, threads_for(rows, dense.size))


def rsp_fill(dense2d, rowmask, indices_out, data2d_out):
    """Copy the rows marked in rowmask to data2d_out and their numbers to indices_out.

    Returns the number of rows; indices_out and data2d_out must have exactly that length.
    """
    dense, _ = as_values(dense2d, "dense2d", 2, False, None)
    mask = _mask(rowmask, "rowmask", False)
    indices = as_index(indices_out, "indices_out", True)
    data, _ = as_values(data2d_out, "data2d_out", 2, True, dense2d.dtype)
    rows, ncols = dense.shape
    n = indices.shape[0]
    check_length(mask, "rowmask", rows, "rows")
    check_length(data, "data2d_out", n, "len(indices_out)")
    if data.shape[1] != ncols:
        raise ValueError(f"data2d_out must have shape {(n, ncols)!r} (got {data.shape!r})")
    marked = _rsp_select(mask, indices)
    if marked != n:
        raise ValueError(f"indices_out must have length nrows={marked} "
                         f"(the rows marked in rowmask) (got {n})")
    _gather_rows_t(rows_as_bytes(dense), indices, rows_as_bytes(data),
                   threads_for(n, n * ncols))
    return n


def rsp_to_dense(data2d, indices, dense2d_out):
    """Write data2d's rows to rows `indices` of dense2d_out and zero the others; return n.

    Raises IndexError for a row number outside [0, rows) and ValueError when the row numbers
    are not strictly increasing, before writing anything.
    """
    cdef Defect defect
    out, _ = as_values(dense2d_out, "dense2d_out", 2, True, None)
    data, _ = as_values(data2d, "data2d", 2, False, dense2d_out.dtype)
    idx = as_index(indices, "indices", False)
    rows, ncols = out.shape
    n = idx.shape[0]
    check_length(data, "data2d", n, "len(indices)")
    if data.shape[1] != ncols:
        raise ValueError(f"data2d must have shape {(n, ncols)!r} (got {data.shape!r})")
    msg = _rsp_message(idx, rows, &defect)
    if defect == INDEX_RANGE:
        raise IndexError(msg)
    if defect != VALID:
        raise ValueError(msg)
    _scatter_rows_t(rows_as_bytes(data), idx, rows_as_bytes(out),
                    threads_for(rows, out.size))
    return n

