"""Storage casts (dense <-> CSR, dense <-> row_sparse), format checks, and the arithmetic
of the sparse operators (products with dense matrices, elementwise ops, sums, retain),
compiled.

Layouts are MXNet's.  CSR: data (nnz,), indices int64 (nnz,), indptr int64 (rows+1,), column
indices sorted ascending within each row.  row_sparse: data (nstored, *row_shape), indices
int64 (nstored,), row numbers strictly increasing; the kernels see dense and data arrays as
2-D (rows, prod(row_shape)).

Every kernel writes into arrays that the caller allocated (the caller owns memory in its own
pool) and returns a count.  Each public function validates and converts its arguments, then
hands typed memoryviews to a fused-type `cdef ... noexcept nogil` loop that runs without the
GIL, parallel over rows with OpenMP once the input has SERIAL_CUTOFF elements or more.  No
input makes a kernel read or write out of bounds: offsets are checked before they are used,
and a kernel that finds its arguments inconsistent raises after the loop.

float16 is handled as uint16 bit patterns, nonzero when (bits & 0x7fff) != 0, so that -0.0
counts as zero (as `x != 0` does for float32/float64); bool is handled as uint8.
"""

import os

import numpy as np

from cython.parallel cimport prange
from openmp cimport omp_get_thread_num, omp_get_wtime
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memcpy, memset

from runtime._types cimport floating, index_t, numeric, uint8_t, uint16_t

__all__ = [
    "SERIAL_CUTOFF", "check_csr", "check_rsp", "csr_count", "csr_fill", "csr_to_dense",
    "get_num_threads", "rsp_count", "rsp_fill", "rsp_to_dense", "set_num_threads",
    # arithmetic
    "csr_binary_count", "csr_binary_fill", "csr_column_counts", "csr_dot_dense", "csr_sum",
    "csr_t_dot_dense", "dense_dot_csr_t", "rsp_add_n", "rsp_binary", "rsp_binary_count",
    "rsp_mul_dense", "rsp_retain", "rsp_union_count", "square_sum",
    "ARITH_SERIAL_CUTOFF", "set_arith_serial_cutoff", "set_contention_backoff",
]

# Inputs with fewer elements than this run on one thread: starting a team costs more.
SERIAL_CUTOFF = 65536
cdef Py_ssize_t _serial_cutoff = SERIAL_CUTOFF
# rsp_count tests a row for a nonzero this many elements at a time, so that the inner loop
# vectorizes and still stops early.
cdef enum:
    _ANY_BLOCK = 256


def _default_num_threads(omp_num_threads, Py_ssize_t cpus):
    """The CPUs this process may run on (`cpus`), fewer when OMP_NUM_THREADS asks for fewer.

    OMP_NUM_THREADS is read as libgomp reads it: the first entry of a comma-separated list,
    a positive integer.  Any other value is ignored, as libgomp ignores it (libgomp prints
    "Invalid value for environment variable OMP_NUM_THREADS" itself when it loads), so that
    a bad environment never makes the import fail.
    """
    n = max(1, cpus)
    first = (omp_num_threads or "").split(",")[0].strip()
    if first.isascii() and first.isdigit() and int(first) > 0:
        n = min(n, int(first))
    return n


def _usable_cpus():
    """CPUs in the affinity mask (taskset, cgroup cpusets), not all those of the machine."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


cdef int _num_threads = _default_num_threads(os.environ.get("OMP_NUM_THREADS"),
                                             _usable_cpus())


# libgomp keeps its thread team after a parallel region, and fork() copies its bookkeeping
# but not its threads: a child that starts a region of more than one thread waits forever
# for threads that do not exist (a fork-based multiprocessing.Pool or data-loader worker
# hangs).  A region of one thread never wakes the team, so the child runs the kernels on
# one thread.  pthread_atfork rather than os.register_at_fork, so that a fork by C code is
# covered too; the handler only stores an int, which is safe in a child of a threaded
# process.
cdef extern from "<pthread.h>" nogil:
    int pthread_atfork(void (*prepare)() noexcept nogil, void (*parent)() noexcept nogil,
                       void (*child)() noexcept nogil)


cdef void _one_thread_after_fork() noexcept nogil:
    global _num_threads
    _num_threads = 1


if pthread_atfork(NULL, NULL, _one_thread_after_fork) != 0:
    raise MemoryError("pthread_atfork: out of memory")


def set_num_threads(int n):
    """Set the number of OpenMP threads the kernels use on large inputs.

    The default is the number of CPUs in the process's affinity mask, or OMP_NUM_THREADS
    when that is smaller; a child created by fork() starts at 1.  Raising it in such a child
    is safe only if the thread that forked had never run a region of several threads.
    """
    global _num_threads
    if n < 1:
        raise ValueError(f"n must be >= 1 (got {n})")
    _num_threads = n


def get_num_threads():
    """The number of OpenMP threads the kernels use on large inputs."""
    return _num_threads


cdef int _threads_for(Py_ssize_t rows, Py_ssize_t work) noexcept:
    """Threads for a loop over `rows` rows touching `work` elements: small stays serial."""
    if work < _serial_cutoff or rows < 2:
        return 1
    return <int>min(<Py_ssize_t>_num_threads, rows)


# ---------------------------------------------------------------------------------------
# Argument validation and conversion (with the GIL).

# dtype -> (dtype the loops see, mask for uint16 bit patterns in the zero test)
cdef dict _KERNEL_DTYPES = {
    np.dtype(np.float16): (np.dtype(np.uint16), 0x7fff),
    np.dtype(np.bool_): (np.dtype(np.uint8), 0xffff),
    np.dtype(np.float32): (np.dtype(np.float32), 0xffff),
    np.dtype(np.float64): (np.dtype(np.float64), 0xffff),
    np.dtype(np.int8): (np.dtype(np.int8), 0xffff),
    np.dtype(np.uint8): (np.dtype(np.uint8), 0xffff),
    np.dtype(np.int16): (np.dtype(np.int16), 0xffff),
    np.dtype(np.uint16): (np.dtype(np.uint16), 0xffff),
    np.dtype(np.int32): (np.dtype(np.int32), 0xffff),
    np.dtype(np.int64): (np.dtype(np.int64), 0xffff),
}
_DTYPE_NAMES = ", ".join(str(d) for d in _KERNEL_DTYPES)
cdef object _INT64 = np.dtype(np.int64)
cdef object _UINT8 = np.dtype(np.uint8)
cdef object _BOOL = np.dtype(np.bool_)


cdef object _array(object a, str name, int ndim, bint out):
    """`a` itself after checking kind, ndim, contiguity (and writeability for outputs)."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray (got {type(a).__name__})")
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D (got shape {a.shape!r})")
    if not a.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous (got strides {a.strides!r})")
    if out and not a.flags.writeable:
        raise ValueError(f"{name} must be writeable (got a read-only array)")
    if a.size == 0:
        # NumPy calls any empty array C-contiguous whatever its strides; memoryviews do not.
        # Nothing is read from or written to an empty array, so a fresh one does as well.
        a = np.empty(a.shape, a.dtype)
    return a


cdef object _index(object a, str name, bint out):
    a = _array(a, name, 1, out)
    if a.dtype != _INT64:
        raise TypeError(f"{name} must have dtype int64 (got {a.dtype!r})")
    return a


cdef object _mask(object a, str name, bint out):
    a = _array(a, name, 1, out)
    if a.dtype == _BOOL:
        return a.view(_UINT8)
    if a.dtype != _UINT8:
        raise TypeError(f"{name} must have dtype uint8 or bool (got {a.dtype!r})")
    return a


cdef tuple _values(object a, str name, int ndim, bint out, object like):
    """(a viewed with the dtype the loops see, zero-test mask); `like`: required dtype."""
    a = _array(a, name, ndim, out)
    if like is not None and a.dtype != like:
        raise TypeError(f"{name} must have the dtype {like!r} (got {a.dtype!r})")
    try:
        kernel_dtype, hmask = _KERNEL_DTYPES[a.dtype]
    except KeyError:
        raise NotImplementedError(
            f"{name} must have one of the dtypes {_DTYPE_NAMES} (got {a.dtype!r})") from None
    return a.view(kernel_dtype), hmask


cdef object _rows_as_bytes(object a):
    """A C-contiguous 2-D array seen as (rows, row bytes) of uint8."""
    return a.view(_UINT8).reshape(a.shape[0], a.shape[1] * a.dtype.itemsize)


cdef int _check_length(object a, str name, Py_ssize_t n, str what) except -1:
    if a.shape[0] != n:
        raise ValueError(f"{name} must have length {what}={n} (got {a.shape[0]})")
    return 0


# ---------------------------------------------------------------------------------------
# Format checks.  The loops return a defect kind and where it is; Python writes the message.

cdef enum Defect:
    VALID = 0
    INDPTR_EMPTY
    INDPTR_FIRST
    INDPTR_ORDER
    INDPTR_LAST
    INDEX_RANGE
    INDEX_ORDER


cdef Defect _check_indptr(const index_t[::1] indptr, Py_ssize_t nnz,
                          Py_ssize_t* where) noexcept nogil:
    """indptr[0] == 0, non-decreasing, indptr[-1] == nnz: then every offset is in [0, nnz]."""
    cdef Py_ssize_t n = indptr.shape[0], i
    if n == 0:
        return INDPTR_EMPTY
    if indptr[0] != 0:
        return INDPTR_FIRST
    for i in range(n - 1):
        if indptr[i] > indptr[i + 1]:
            where[0] = i
            return INDPTR_ORDER
    if indptr[n - 1] != nnz:
        return INDPTR_LAST
    return VALID


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


cdef str _indptr_message(const index_t[::1] indptr, Py_ssize_t nnz):
    cdef Py_ssize_t where = 0
    cdef Defect d
    with nogil:
        d = _check_indptr(indptr, nnz, &where)
    if d == INDPTR_EMPTY:
        return "indptr must have at least one element (got length 0)"
    if d == INDPTR_FIRST:
        return f"indptr[0] must be 0 (got {indptr[0]})"
    if d == INDPTR_ORDER:
        return (f"indptr must be non-decreasing (got indptr[{where}]={indptr[where]} > "
                f"indptr[{where + 1}]={indptr[where + 1]})")
    if d == INDPTR_LAST:
        return f"indptr[-1] must equal nnz={nnz} (got {indptr[indptr.shape[0] - 1]})"
    return None


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
    return _array(np.ascontiguousarray(a, dtype=_INT64), name, 1, False)


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
    msg = _indptr_message(ip, idx.shape[0])
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
                    for j in range(j0, j0 + _BLOCK):
                        v = row[j]
                        if _nz(v, hmask):
                            if k < cap:
                                indices[k] = j
                                data[k] = v
                            k += 1
            j0 += _BLOCK
        else:
            for j in range(j0, n):
                v = row[j]
                if _nz(v, hmask):
                    if k < cap:
                        indices[k] = j
                        data[k] = v
                    k += 1
            j0 = n
    return k


# ---------------------------------------------------------------------------------------
# dense -> CSR

cdef index_t _csr_count(const numeric[:, ::1] dense, index_t[::1] indptr, uint16_t hmask,
                        int nthreads) noexcept nogil:
    cdef Py_ssize_t rows = dense.shape[0], ncols = dense.shape[1], i
    cdef const numeric* base = &dense[0, 0] if rows > 0 and ncols > 0 else NULL
    indptr[0] = 0
    for i in prange(rows, num_threads=nthreads, schedule="static"):
        indptr[i + 1] = _count_nz(base + i * ncols, ncols, hmask)
    for i in range(rows):
        indptr[i + 1] += indptr[i]
    return indptr[rows]


cdef Py_ssize_t _csr_fill(const numeric[:, ::1] dense, const index_t[::1] indptr,
                          index_t[::1] indices, numeric[::1] data, uint16_t hmask,
                          int nthreads) noexcept nogil:
    """Returns the number of rows whose nonzero count differs from indptr (0 when right).

    indptr is valid for len(indices) entries; a row never writes past indptr[i + 1].
    """
    cdef Py_ssize_t rows = dense.shape[0], ncols = dense.shape[1], i, nnz = indices.shape[0]
    cdef Py_ssize_t nbad = 0
    cdef index_t start, cap
    cdef const numeric* base = &dense[0, 0] if rows > 0 and ncols > 0 else NULL
    cdef index_t* ibase = &indices[0] if nnz > 0 else NULL
    cdef numeric* dbase = &data[0] if nnz > 0 else NULL
    for i in prange(rows, num_threads=nthreads, schedule="static"):
        start = indptr[i]
        cap = indptr[i + 1] - start
        nbad += _fill_row(base + i * ncols, ncols, ibase + start, dbase + start, cap,
                          hmask) != cap
    return nbad


def _csr_count_t(const numeric[:, ::1] dense, index_t[::1] indptr, uint16_t hmask,
                 int nthreads):
    cdef index_t nnz
    with nogil:
        nnz = _csr_count(dense, indptr, hmask, nthreads)
    return nnz


def _csr_fill_t(const numeric[:, ::1] dense, const index_t[::1] indptr,
                index_t[::1] indices, numeric[::1] data, uint16_t hmask, int nthreads):
    cdef Py_ssize_t nbad
    with nogil:
        nbad = _csr_fill(dense, indptr, indices, data, hmask, nthreads)
    return nbad


def csr_count(dense2d, indptr_out):
    """Fill indptr_out (int64, rows+1) with the CSR row pointer of dense2d; return nnz."""
    dense, hmask = _values(dense2d, "dense2d", 2, False, None)
    indptr = _index(indptr_out, "indptr_out", True)
    rows, ncols = dense.shape
    _check_length(indptr, "indptr_out", rows + 1, "rows+1")
    return _csr_count_t(dense, indptr, hmask, _threads_for(rows, dense.size))


def csr_fill(dense2d, indptr, indices_out, data_out):
    """Write the column indices (ascending per row) and values of dense2d's nonzeros.

    indptr is csr_count's row pointer; data_out has dense2d's dtype.  Returns nnz.  Raises
    ValueError when indptr is malformed or does not match the nonzeros of dense2d.
    """
    dense, hmask = _values(dense2d, "dense2d", 2, False, None)
    ip = _index(indptr, "indptr", False)
    indices = _index(indices_out, "indices_out", True)
    data, _ = _values(data_out, "data_out", 1, True, dense2d.dtype)
    rows, ncols = dense.shape
    nnz = indices.shape[0]
    _check_length(ip, "indptr", rows + 1, "rows+1")
    _check_length(data, "data_out", nnz, "nnz")
    msg = _indptr_message(ip, nnz)
    if msg is not None:
        raise ValueError(msg)
    nbad = _csr_fill_t(dense, ip, indices, data, hmask, _threads_for(rows, dense.size))
    if nbad:
        raise ValueError(f"indptr must match the nonzeros of dense2d "
                         f"(got {nbad} rows whose count differs)")
    return nnz


# ---------------------------------------------------------------------------------------
# CSR -> dense

cdef Py_ssize_t _csr_to_dense(const numeric[::1] data, const index_t[::1] indices,
                              const index_t[::1] indptr, numeric[:, ::1] out,
                              int nthreads) noexcept nogil:
    """Zero each row, then scatter its entries; returns how many columns were out of range.

    indptr is valid for len(indices) entries; out-of-range columns are skipped.
    """
    cdef Py_ssize_t rows = out.shape[0], ncols = out.shape[1], i
    cdef Py_ssize_t nbad = 0
    cdef index_t k, c
    cdef numeric* row
    cdef numeric* base = &out[0, 0] if rows > 0 and ncols > 0 else NULL
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


def _csr_to_dense_t(const numeric[::1] data, const index_t[::1] indices,
                    const index_t[::1] indptr, numeric[:, ::1] out, int nthreads):
    cdef Py_ssize_t nbad
    with nogil:
        nbad = _csr_to_dense(data, indices, indptr, out, nthreads)
    return nbad


def csr_to_dense(data, indices, indptr, dense2d_out):
    """Zero dense2d_out and scatter the CSR entries into it; return nnz.

    Duplicate columns are not expected (check_csr finds them): the last one wins.  Raises
    ValueError for a malformed indptr and IndexError for a column outside [0, ncols), after
    having written the valid entries.
    """
    out, _ = _values(dense2d_out, "dense2d_out", 2, True, None)
    vals, _ = _values(data, "data", 1, False, dense2d_out.dtype)
    idx = _index(indices, "indices", False)
    ip = _index(indptr, "indptr", False)
    rows, ncols = out.shape
    nnz = idx.shape[0]
    _check_length(ip, "indptr", rows + 1, "rows+1")
    _check_length(vals, "data", nnz, "nnz")
    msg = _indptr_message(ip, nnz)
    if msg is not None:
        raise ValueError(msg)
    if _csr_to_dense_t(vals, idx, ip, out, _threads_for(rows, out.size + nnz)):
        k = int(np.flatnonzero((idx < 0) | (idx >= ncols))[0])
        row = int(np.searchsorted(ip, k, side="right")) - 1
        raise IndexError(f"indices must be in [0, ncols={ncols}) "
                         f"(got indices[{k}]={idx[k]} in row {row})")
    return nnz


# ---------------------------------------------------------------------------------------
# dense <-> row_sparse

cdef Py_ssize_t _rsp_count(const numeric[:, ::1] dense, uint8_t[::1] rowmask,
                           uint16_t hmask, int nthreads) noexcept nogil:
    cdef Py_ssize_t rows = dense.shape[0], ncols = dense.shape[1], i
    cdef Py_ssize_t n = 0
    cdef bint hit
    cdef const numeric* base = &dense[0, 0] if rows > 0 and ncols > 0 else NULL
    for i in prange(rows, num_threads=nthreads, schedule="static"):
        hit = _any_nz(base + i * ncols, ncols, hmask)
        rowmask[i] = hit
        n += hit
    return n


def _rsp_count_t(const numeric[:, ::1] dense, uint8_t[::1] rowmask, uint16_t hmask,
                 int nthreads):
    cdef Py_ssize_t n
    with nogil:
        n = _rsp_count(dense, rowmask, hmask, nthreads)
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


cdef void _gather_rows(const uint8_t[:, ::1] src, const index_t[::1] rows,
                       uint8_t[:, ::1] dst, int nthreads) noexcept nogil:
    """dst[k] = src[rows[k]] for every k, rows in range (byte rows)."""
    cdef Py_ssize_t rowbytes = src.shape[1], k
    if rowbytes == 0:
        return
    for k in prange(rows.shape[0], num_threads=nthreads, schedule="static"):
        memcpy(&dst[k, 0], &src[rows[k], 0], rowbytes)


cdef Py_ssize_t _lower_bound(const index_t[::1] a, index_t x) noexcept nogil:
    """First position in sorted `a` whose value is >= x."""
    cdef Py_ssize_t lo = 0, hi = a.shape[0], mid
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef void _scatter_rows(const uint8_t[:, ::1] src, const index_t[::1] rows,
                        uint8_t[:, ::1] dst, int nthreads) noexcept nogil:
    """dst[rows[k]] = src[k], every other row of dst zeroed; each dst row written once.

    rows is strictly increasing and in range.  Each thread takes an equal block of dst rows,
    so that clustered stored rows do not leave one thread all the zeroing.
    """
    cdef Py_ssize_t nrows = dst.shape[0], rowbytes = dst.shape[1], nstored = rows.shape[0]
    cdef Py_ssize_t t, i, k, lo, hi
    if rowbytes == 0 or nrows == 0:
        return
    for t in prange(nthreads, num_threads=nthreads, schedule="static"):
        lo = nrows * t // nthreads
        hi = nrows * (t + 1) // nthreads
        k = _lower_bound(rows, lo)
        i = lo
        while i < hi:
            if k < nstored and rows[k] == i:
                memcpy(&dst[i, 0], &src[k, 0], rowbytes)
                k = k + 1
            else:
                memset(&dst[i, 0], 0, rowbytes)
            i = i + 1


def _gather_rows_t(const uint8_t[:, ::1] src, const index_t[::1] rows,
                   uint8_t[:, ::1] dst, int nthreads):
    with nogil:
        _gather_rows(src, rows, dst, nthreads)


def _scatter_rows_t(const uint8_t[:, ::1] src, const index_t[::1] rows,
                    uint8_t[:, ::1] dst, int nthreads):
    with nogil:
        _scatter_rows(src, rows, dst, nthreads)


def rsp_count(dense2d, rowmask_out):
    """Mark (uint8 1/0) the rows of dense2d that hold a nonzero; return how many.

    dense2d is the dense array seen as (shape[0], prod(shape[1:])).
    """
    dense, hmask = _values(dense2d, "dense2d", 2, False, None)
    mask = _mask(rowmask_out, "rowmask_out", True)
    rows = dense.shape[0]
    _check_length(mask, "rowmask_out", rows, "rows")
    return _rsp_count_t(dense, mask, hmask, _threads_for(rows, dense.size))


def rsp_fill(dense2d, rowmask, indices_out, data2d_out):
    """Copy the rows marked in rowmask to data2d_out and their numbers to indices_out.

    Returns the number of rows; indices_out and data2d_out must have exactly that length.
    """
    dense, _ = _values(dense2d, "dense2d", 2, False, None)
    mask = _mask(rowmask, "rowmask", False)
    indices = _index(indices_out, "indices_out", True)
    data, _ = _values(data2d_out, "data2d_out", 2, True, dense2d.dtype)
    rows, ncols = dense.shape
    n = indices.shape[0]
    _check_length(mask, "rowmask", rows, "rows")
    _check_length(data, "data2d_out", n, "len(indices_out)")
    if data.shape[1] != ncols:
        raise ValueError(f"data2d_out must have shape {(n, ncols)!r} (got {data.shape!r})")
    marked = _rsp_select(mask, indices)
    if marked != n:
        raise ValueError(f"indices_out must have length nrows={marked} "
                         f"(the rows marked in rowmask) (got {n})")
    _gather_rows_t(_rows_as_bytes(dense), indices, _rows_as_bytes(data),
                   _threads_for(n, n * ncols))
    return n


def rsp_to_dense(data2d, indices, dense2d_out):
    """Write data2d's rows to rows `indices` of dense2d_out and zero the others; return n.

    Raises IndexError for a row number outside [0, rows) and ValueError when the row numbers
    are not strictly increasing, before writing anything.
    """
    cdef Defect defect
    out, _ = _values(dense2d_out, "dense2d_out", 2, True, None)
    data, _ = _values(data2d, "data2d", 2, False, dense2d_out.dtype)
    idx = _index(indices, "indices", False)
    rows, ncols = out.shape
    n = idx.shape[0]
    _check_length(data, "data2d", n, "len(indices)")
    if data.shape[1] != ncols:
        raise ValueError(f"data2d must have shape {(n, ncols)!r} (got {data.shape!r})")
    msg = _rsp_message(idx, rows, &defect)
    if defect == INDEX_RANGE:
        raise IndexError(msg)
    if defect != VALID:
        raise ValueError(msg)
    _scatter_rows_t(_rows_as_bytes(data), idx, _rows_as_bytes(out),
                    _threads_for(rows, out.size))
    return n


# =======================================================================================
# Arithmetic on sparse storage: products with dense matrices, elementwise ops, sums,
# retain.  Values are float32 or float64 (`floating`; callers take float16 through float32
# and route other dtypes to dense kernels); retain moves bytes and takes every dtype.  The
# def functions validate and convert, the cdef loops run without the GIL, and a loop that
# meets an index it cannot use skips it, counts it, and the def function raises after.

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

# The arithmetic kernels stay on one thread below this much work (multiply-adds, or values
# moved): waking a second thread costs tens of microseconds on an idle machine and up to a
# scheduler time slice on a busy one, more than a millisecond of work saves.
ARITH_SERIAL_CUTOFF = 1 << 21
cdef Py_ssize_t _arith_cutoff = ARITH_SERIAL_CUTOFF


def set_arith_serial_cutoff(Py_ssize_t n):
    """Set the work below which the arithmetic kernels run on one thread; returns the
    previous value (tests lower it to run the threaded paths on small inputs)."""
    global _arith_cutoff
    if n < 0:
        raise ValueError(f"n must be >= 0 (got {n})")
    old = _arith_cutoff
    _arith_cutoff = n
    return old


# A thread team can only be as fast as its slowest thread: on a machine whose other cores
# are busy, a worker may wait a scheduler time slice for a core, and the product then takes
# longer than on one thread.  The products note when a thread started late, and the
# arithmetic kernels then run on one thread for the next _backoff_calls calls before they
# try threads again.  Results do not depend on the thread count (each output row is summed
# by one thread, in storage order).  The counters are process-wide and kernels run without
# the GIL on several Python threads at once, so they are only read and written with the GIL
# held: a region reports that it started late, and its caller backs off after the GIL is
# back.
cdef int _backoff_calls = 32
cdef int _backoff_left = 0
cdef enum:
    _TRACKED_THREADS = 64


def set_contention_backoff(int calls):
    """Set how many calls run on one thread after a product saw a thread start late
    (0: never back off); returns the previous value."""
    global _backoff_calls, _backoff_left
    if calls < 0:
        raise ValueError(f"calls must be >= 0 (got {calls})")
    old = _backoff_calls
    _backoff_calls = calls
    _backoff_left = 0
    return old


cdef void _back_off() noexcept:
    """With the GIL: run the next _backoff_calls arithmetic calls on one thread."""
    global _backoff_left
    _backoff_left = _backoff_calls


cdef int _arith_threads(Py_ssize_t rows, Py_ssize_t work) noexcept:
    global _backoff_left
    if work < _arith_cutoff or rows < 2:
        return 1
    if _backoff_left > 0:
        _backoff_left -= 1
        return 1
    return <int>min(<Py_ssize_t>_num_threads, rows)


cdef inline void _clear_starts(double* starts, int nthreads) noexcept nogil:
    cdef int i
    for i in range(min(nthreads, <int>_TRACKED_THREADS)):
        starts[i] = 0


cdef inline void _mark_start(double* starts) noexcept nogil:
    """Record when the calling thread began its first block of the parallel region."""
    cdef int tid = omp_get_thread_num()
    if tid < _TRACKED_THREADS and starts[tid] == 0:
        starts[tid] = omp_get_wtime()


cdef bint _started_late(double t0, const double* starts, int nthreads) noexcept nogil:
    """Whether a thread started (or, never having started, ended) more than a quarter of
    the region (and 0.2 ms) after it began."""
    cdef double t1 = omp_get_wtime(), late = 0
    cdef int i
    for i in range(min(nthreads, <int>_TRACKED_THREADS)):
        late = max(late, (t1 if starts[i] == 0 else starts[i]) - t0)
    return late > 0.25 * (t1 - t0) and late > 2e-4


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
    """`a` after _array's checks, of dtype float32 or float64 (`like`'s when given)."""
    a = _array(a, name, ndim, out)
    if like is not None and a.dtype != like:
        raise TypeError(f"{name} must have the dtype {like!r} (got {a.dtype!r})")
    if a.dtype != _F32 and a.dtype != _F64:
        raise NotImplementedError(f"{name} must have dtype float32 or float64 "
                                  f"(got {a.dtype!r})")
    return a


cdef tuple _csr_args(object indptr, object indices, object data, Py_ssize_t rows, str prefix,
                     object like):
    """(indptr, indices, data) of a CSR matrix with `rows` rows, indptr fully checked."""
    ip = _index(indptr, prefix + "indptr", False)
    idx = _index(indices, prefix + "indices", False)
    vals = _floats(data, prefix + "data", 1, False, like)
    _check_length(ip, prefix + "indptr", rows + 1, "rows+1")
    _check_length(vals, prefix + "data", idx.shape[0], "len(indices)")
    msg = _indptr_message(ip, idx.shape[0])
    if msg is not None:
        raise ValueError(prefix + msg)
    return ip, idx, vals


cdef tuple _csr_pattern(object indptr, object indices):
    """(indptr, indices) of a CSR matrix with len(indptr) - 1 rows, indptr fully checked."""
    ip = _index(indptr, "indptr", False)
    idx = _index(indices, "indices", False)
    msg = _indptr_message(ip, idx.shape[0])
    if msg is not None:
        raise ValueError(msg)
    return ip, idx


cdef Py_ssize_t _rows_of(object indptr) except -1:
    """The number of rows of a CSR matrix with this row pointer."""
    ip = _index(indptr, "indptr", False)
    if ip.shape[0] == 0:
        raise ValueError("indptr must have at least one element (got length 0)")
    return ip.shape[0] - 1


cdef int _raise_bad_column(object ip, object idx, Py_ssize_t ncols, str prefix) except -1:
    """IndexError naming the first column outside [0, ncols), if there is one."""
    bad = np.flatnonzero((idx < 0) | (idx >= ncols))
    if bad.size:
        k = int(bad[0])
        row = int(np.searchsorted(ip, k, side="right")) - 1
        raise IndexError(f"{prefix}indices must be in [0, ncols={ncols}) "
                         f"(got {prefix}indices[{k}]={idx[k]} in row {row})")
    return 0


cdef inline Py_ssize_t _balanced_row(const index_t* indptr, Py_ssize_t rows, Py_ssize_t t,
                                     Py_ssize_t parts) noexcept nogil:
    """First row of block t of `parts` blocks with about equal stored entries + rows."""
    cdef Py_ssize_t lo = 0, hi = rows, mid, target
    if t <= 0:
        return 0
    if t >= parts:
        return rows
    target = (<Py_ssize_t>indptr[rows] + rows) * t // parts
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if indptr[mid] + mid < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline Py_ssize_t _lower_bound_p(const index_t* a, Py_ssize_t n, index_t x) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


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
    cdef double starts[_TRACKED_THREADS]
    cdef double t0
    if rows == 0 or n == 0:
        return 0
    if nthreads <= 1:
        return _spmm_rows(indptr, indices, data, 0, rows, rowmap, ncols, dense, dense_rows,
                          n, out)
    parts = min(rows, <Py_ssize_t>nthreads * _BLOCKS_PER_THREAD)
    _clear_starts(starts, nthreads)
    t0 = omp_get_wtime()
    for t in prange(parts, num_threads=nthreads, schedule="dynamic"):
        _mark_start(starts)
        lo = _balanced_row(indptr, rows, t, parts)
        hi = _balanced_row(indptr, rows, t + 1, parts)
        nbad += _spmm_rows(indptr, indices, data, lo, hi, rowmap, ncols, dense, dense_rows,
                           n, out)
    late[0] = _started_late(t0, starts, nthreads)
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
        _back_off()
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
    rm = _index(rowmap, "rowmap", False) if use_map else np.empty(0, np.int64)
    ncols = rm.shape[0] if use_map else dense.shape[0]
    work = idx.shape[0] * n + rows * n
    if _csr_dot_dense_t(ip, idx, vals, rm, use_map, dense, out, _arith_threads(rows, work)):
        _raise_bad_column(ip, idx, ncols, "")
        raise IndexError(f"rowmap must map the columns into [0, {dense.shape[0]}) (the rows "
                         "of dense2d) or be negative")
    return idx.shape[0]


# ---------------------------------------------------------------------------------------
# CSR.T x dense -> row_sparse: the stored rows are the columns of A that hold an entry
# (csr_column_counts finds them).  Nothing is transposed: each thread owns a block of result
# rows and walks every row i of A, adding data * D[i] into the rows of the entries of its
# columns (a row's columns are sorted: two bisections find them), so D is read in order,
# each result row is written first and accumulated after (never zeroed), and no two
# threads write one row.

cdef Py_ssize_t _column_counts(const index_t* indptr, const index_t* indices, Py_ssize_t rows,
                               const index_t* rowmap, index_t* counts, Py_ssize_t ncols,
                               Py_ssize_t* nbad) noexcept nogil:
    cdef Py_ssize_t i, k, c, nused = 0
    cdef index_t col
    if ncols > 0:
        memset(counts, 0, ncols * sizeof(index_t))
    for i in range(rows):
        if rowmap != NULL and rowmap[i] < 0:
            continue
        for k in range(indptr[i], indptr[i + 1]):
            col = indices[k]
            if <size_t>col < <size_t>ncols:
                counts[col] += 1
            else:
                nbad[0] += 1
    for c in range(ncols):
        nused += counts[c] != 0
    return nused


def _column_counts_t(const index_t[::1] indptr, const index_t[::1] indices,
                     const index_t[::1] rowmap, bint use_map, index_t[::1] counts):
    cdef Py_ssize_t nused, nbad = 0, ncols = counts.shape[0]
    cdef const index_t* rm = &rowmap[0] if use_map and rowmap.shape[0] > 0 else NULL
    cdef const index_t* ix = &indices[0] if indices.shape[0] > 0 else NULL
    cdef index_t* cb = &counts[0] if ncols > 0 else NULL
    with nogil:
        nused = _column_counts(&indptr[0], ix, indptr.shape[0] - 1, rm, cb, ncols, &nbad)
    return nused, nbad


def csr_column_counts(indptr, indices, counts_out, rowmap=None):
    """counts_out[c] = how many stored entries column c holds; returns how many columns hold
    one (the rows of csr_t_dot_dense's result).

    ``rowmap`` (int64, one entry per row of A) leaves out the rows i with rowmap[i] < 0.
    Raises IndexError for a column outside [0, len(counts_out)).
    """
    counts = _index(counts_out, "counts_out", True)
    ip, idx = _csr_pattern(indptr, indices)
    use_map = rowmap is not None
    rm = _index(rowmap, "rowmap", False) if use_map else np.empty(0, np.int64)
    if use_map:
        _check_length(rm, "rowmap", ip.shape[0] - 1, "rows")
    nused, nbad = _column_counts_t(ip, idx, rm, use_map, counts)
    if nbad:
        _raise_bad_column(ip, idx, counts.shape[0], "")
    return nused


cdef Py_ssize_t _used_columns(const index_t* counts, Py_ssize_t ncols, index_t* colpos,
                              index_t* cols_out, index_t* colptr,
                              Py_ssize_t nused) noexcept nogil:
    """colpos[c]: the row of column c in the result (-1 when c holds no entry); cols_out:
    the used columns ascending; colptr: running entry counts.  Returns how many columns
    hold an entry (writes at most nused of them).  Branch-free over the columns (used or
    not is a coin toss): an unused column's writes land where the next used one writes."""
    cdef Py_ssize_t c, p = 0
    cdef index_t cnt, total = 0
    cdef bint used
    colptr[0] = 0
    for c in range(ncols):
        cnt = counts[c]
        used = cnt > 0
        cnt = cnt * used
        colpos[c] = (p + 1) * used - 1
        if p < nused:
            cols_out[p] = c
            colptr[p + 1] = total + cnt
        total += cnt
        p += used
    return p


cdef Py_ssize_t _csr_t_rows(const index_t* indptr, const index_t* indices, const floating* data,
                            Py_ssize_t rows, const index_t* rowmap, const index_t* colpos,
                            Py_ssize_t ncols, index_t clo, index_t chi, Py_ssize_t plo,
                            Py_ssize_t phi, bint search, const floating* dense,
                            Py_ssize_t dense_rows, Py_ssize_t n, floating* out,
                            uint8_t* touched) noexcept nogil:
    """Rows [plo, phi) of A.T @ D (A's columns [clo, chi)): each entry (i, c) of A adds
    data * D[i] to its row, the first one writing it (``touched`` marks those: rows that
    nothing reaches are zeroed at the end).  Rows of A hold sorted columns, so with
    `search` the entries of a row in [clo, chi) are found by bisection.  Sums run in row
    order of A, as SciPy's.  Returns how many entries had an index that could not be used.
    """
    cdef Py_ssize_t i, j, k, k0, k1, nbad = 0
    cdef index_t r, c, p
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
            k0 += _lower_bound_p(indices + k0, k1 - k0, clo)
            k1 = k0 + _lower_bound_p(indices + k0, k1 - k0, chi)
        drow = dense + r * n
        for k in range(k0, k1):
            if k + _PREFETCH_AHEAD < k1:
                c = indices[k + _PREFETCH_AHEAD]
                if <size_t>c < <size_t>ncols and colpos[c] >= 0:
                    _prefetch(out + colpos[c] * n)
            c = indices[k]
            if <size_t>c >= <size_t>ncols:
                nbad += 1
                continue
            p = colpos[c]
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
                       const index_t[::1] counts, const floating[:, ::1] dense,
                       index_t[::1] cols_out, floating[:, ::1] out, index_t[::1] colpos,
                       index_t[::1] colptr, uint8_t[::1] touched):
    """-1: counts do not match nused; else the number of unusable entries."""
    cdef Py_ssize_t nbad = 0, rows = indptr.shape[0] - 1, ncols = counts.shape[0]
    cdef Py_ssize_t nused = out.shape[0], n = out.shape[1], t, plo, phi, found
    cdef int nthreads = _arith_threads(nused, indices.shape[0] * n + nused * n)
    cdef index_t clo, chi
    cdef const index_t* rm = &rowmap[0] if use_map and rowmap.shape[0] > 0 else NULL
    cdef const index_t* ix = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const floating* dv = &data[0] if data.shape[0] > 0 else NULL
    cdef const index_t* cb = &counts[0] if ncols > 0 else NULL
    cdef index_t* cp = &colpos[0] if ncols > 0 else NULL
    cdef index_t* co = &cols_out[0] if nused > 0 else NULL
    cdef const floating* db = &dense[0, 0] if dense.shape[0] > 0 and n > 0 else NULL
    cdef floating* ob = &out[0, 0] if nused > 0 and n > 0 else NULL
    cdef uint8_t* tb = &touched[0] if nused > 0 else NULL
    cdef double starts[_TRACKED_THREADS]
    cdef double t0
    cdef bint late = False
    with nogil:
        found = _used_columns(cb, ncols, cp, co, &colptr[0], nused)
        if found != nused:
            nbad = -1
        elif nthreads <= 1 or nused < 2:
            nbad = _csr_t_rows(&indptr[0], ix, dv, rows, rm, cp, ncols, 0, ncols, 0, nused,
                               False, db, dense.shape[0], n, ob, tb)
        else:
            # Each thread owns a block of result rows (of about equal entries) and picks
            # the entries of its columns out of every row of A.  The column ranges tile
            # all of int64, so that every entry, used column or not, is seen once.
            _clear_starts(starts, nthreads)
            t0 = omp_get_wtime()
            for t in prange(nthreads, num_threads=nthreads, schedule="static"):
                _mark_start(starts)
                plo = _balanced_row(&colptr[0], nused, t, nthreads)
                phi = _balanced_row(&colptr[0], nused, t + 1, nthreads)
                if plo < phi:
                    clo = co[plo] if plo > 0 else _INDEX_MIN
                    chi = co[phi] if phi < nused else _INDEX_MAX
                    nbad += _csr_t_rows(&indptr[0], ix, dv, rows, rm, cp, ncols, clo, chi,
                                        plo, phi, True, db, dense.shape[0], n, ob, tb)
            late = _started_late(t0, starts, nthreads)
    if late:
        _back_off()
    return nbad


def csr_t_dot_dense(indptr, indices, data, dense2d, counts, indices_out, data2d_out,
                    rowmap=None):
    """A.T @ D as row_sparse: A the CSR matrix with len(counts) columns, D dense.

    ``counts`` is what csr_column_counts wrote (same A, same rowmap); ``indices_out``
    receives the columns of A that hold an entry (ascending: the stored rows of the result)
    and ``data2d_out`` (len(indices_out), n) their rows of A.T @ D.  Without ``rowmap`` D
    is ``dense2d`` (rows of A, n); with it (int64, one entry per row of A), D is a
    row_sparse matrix whose stored rows are dense2d: rowmap[i] is the position of row i,
    or negative when it is not stored.  Returns len(indices_out).  Raises ValueError when
    counts do not match A, IndexError for an out-of-range column or rowmap entry.
    """
    out = _floats(data2d_out, "data2d_out", 2, True, None)
    dense = _floats(dense2d, "dense2d", 2, False, data2d_out.dtype)
    cols = _index(indices_out, "indices_out", True)
    cnt = _index(counts, "counts", False)
    rows = _rows_of(indptr)
    ip, idx, vals = _csr_args(indptr, indices, data, rows, "", data2d_out.dtype)
    nused, n = out.shape
    _check_length(cols, "indices_out", nused, "len(data2d_out)")
    if dense.shape[1] != n:
        raise ValueError(f"dense2d must have {n} columns like data2d_out (got shape "
                         f"{dense.shape!r})")
    use_map = rowmap is not None
    rm = _index(rowmap, "rowmap", False) if use_map else np.empty(0, np.int64)
    if use_map:
        _check_length(rm, "rowmap", rows, "rows")
        if rm.shape[0] and int(rm.max()) >= dense.shape[0]:
            raise IndexError(f"rowmap must map the rows into [0, {dense.shape[0]}) (the rows "
                             f"of dense2d) or be negative (got {int(rm.max())})")
    elif dense.shape[0] != rows:
        raise ValueError(f"dense2d must have rows={rows} rows (got shape {dense.shape!r})")
    colpos = np.empty(cnt.shape[0], np.int64)
    colptr = np.empty(nused + 1, np.int64)
    touched = np.empty(nused, np.uint8)
    nbad = _csr_t_dot_dense_t(ip, idx, vals, rm, use_map, cnt, dense, cols, out, colpos,
                              colptr, touched)
    if nbad < 0:
        raise ValueError(f"len(indices_out)={nused} must be the number of nonzero counts")
    if nbad:
        _raise_bad_column(ip, idx, cnt.shape[0], "")
        raise ValueError("counts must be what csr_column_counts gives for these indices "
                         "(a column with entries has count 0)")
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
    if _dense_dot_csr_t_t(a, ip, idx, vals, out, _arith_threads(max(m, r_dim),
                                                              m * idx.shape[0] + m * r_dim)):
        _raise_bad_column(ip, idx, a.shape[1], "")
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


def csr_binary_count(op, a_indptr, a_indices, a_data, b_indptr, b_indices, b_data,
                     indptr_out):
    """Row pointer of A op B ('add', 'subtract', 'multiply') for CSR A and B of one shape,
    counting the nonzero results; returns nnz.  Column indices must be sorted per row."""
    cdef int code = _binop_code(op)
    ip = _index(indptr_out, "indptr_out", True)
    rows = ip.shape[0] - 1
    if rows < 0:
        raise ValueError("indptr_out must have at least one element (got length 0)")
    a = _csr_args(a_indptr, a_indices, a_data, rows, "a_", None)
    b = _csr_args(b_indptr, b_indices, b_data, rows, "b_", a[2].dtype)
    nthreads = _arith_threads(rows, a[1].shape[0] + b[1].shape[0])
    return _csr_binary_t(code, a[0], a[1], a[2], b[0], b[1], b[2], ip, np.empty(0, np.int64),
                         np.empty(0, a[2].dtype), False, nthreads)


def csr_binary_fill(op, a_indptr, a_indices, a_data, b_indptr, b_indices, b_data, indptr,
                    indices_out, data_out):
    """Write the columns and values of A op B; indptr is csr_binary_count's.  Returns nnz.
    Raises ValueError when indptr is malformed or does not match A op B."""
    cdef int code = _binop_code(op)
    ip = _index(indptr, "indptr", False)
    rows = ip.shape[0] - 1
    if rows < 0:
        raise ValueError("indptr must have at least one element (got length 0)")
    a = _csr_args(a_indptr, a_indices, a_data, rows, "a_", None)
    b = _csr_args(b_indptr, b_indices, b_data, rows, "b_", a[2].dtype)
    idx = _index(indices_out, "indices_out", True)
    vals = _floats(data_out, "data_out", 1, True, a[2].dtype)
    _check_length(vals, "data_out", idx.shape[0], "len(indices_out)")
    msg = _indptr_message(ip, idx.shape[0])
    if msg is not None:
        raise ValueError(msg)
    nthreads = _arith_threads(rows, a[1].shape[0] + b[1].shape[0])
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
    cdef int nthreads = _arith_threads(n, n * w)
    with nogil:
        k = _rsp_merge(op != OP_MUL, ai, a_idx.shape[0], bi, b_idx.shape[0], oi, pa, pb, n)
        if k == n and w > 0:
            _rsp_rows(op, ad, bd, pa, pb, n, w, od, nthreads)
    return k


def rsp_binary_count(op, a_indices, b_indices):
    """Number of stored rows of A op B for row_sparse A and B (sorted row indices)."""
    cdef int code = _binop_code(op)
    cdef const index_t[::1] a = _index(a_indices, "a_indices", False)
    cdef const index_t[::1] b = _index(b_indices, "b_indices", False)
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
    ai = _index(a_indices, "a_indices", False)
    bi = _index(b_indices, "b_indices", False)
    oi = _index(indices_out, "indices_out", True)
    _check_length(ad, "a_data2d", ai.shape[0], "len(a_indices)")
    _check_length(bd, "b_data2d", bi.shape[0], "len(b_indices)")
    _check_length(out, "data2d_out", oi.shape[0], "len(indices_out)")
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
    idx = _index(indices, "indices", False)
    _check_length(data, "data2d", idx.shape[0], "len(indices)")
    _check_length(out, "data2d_out", idx.shape[0], "len(indices)")
    if data.shape[1] != out.shape[1] or dense.shape[1] != out.shape[1]:
        raise ValueError(f"data2d, dense2d and data2d_out must have one row length (got "
                         f"{data.shape[1]}, {dense.shape[1]} and {out.shape[1]})")
    if _rsp_mul_dense_t(idx, data, dense, out, _arith_threads(idx.shape[0], out.size)):
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
    arrays = [_index(a, f"indices_list[{j}]", False) for j, a in enumerate(indices_list)]
    return _union(arrays, np.empty(0, np.int64))


def _rsp_accumulate_t(const index_t[::1] out_idx, floating[:, ::1] out,
                      const index_t[::1] idx, const floating[:, ::1] data, int nthreads):
    cdef Py_ssize_t n = idx.shape[0], nu = out_idx.shape[0], w = out.shape[1], k, j, p
    cdef Py_ssize_t nbad = 0
    if n == 0 or w == 0:
        return 0
    with nogil:
        for k in prange(n, num_threads=nthreads, schedule="static"):
            p = _lower_bound_p(&out_idx[0], nu, idx[k])
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
    oi = _index(indices_out, "indices_out", True)
    if len(indices_list) != len(data2d_list):
        raise ValueError(f"indices_list and data2d_list must have one length (got "
                         f"{len(indices_list)} and {len(data2d_list)})")
    idx = [_index(a, f"indices_list[{j}]", False) for j, a in enumerate(indices_list)]
    data = [_floats(d, f"data2d_list[{j}]", 2, False, data2d_out.dtype)
            for j, d in enumerate(data2d_list)]
    _check_length(out, "data2d_out", oi.shape[0], "len(indices_out)")
    for j in range(len(idx)):
        _check_length(data[j], f"data2d_list[{j}]", idx[j].shape[0], f"len(indices_list[{j}])")
        if data[j].shape[1] != out.shape[1]:
            raise ValueError(f"data2d_list[{j}] must have rows of length {out.shape[1]} "
                             f"(got shape {data[j].shape!r})")
    n = _union(idx, oi)
    if n != oi.shape[0]:
        raise ValueError(f"indices_out must have length {n} (the union of the rows) "
                         f"(got {oi.shape[0]})")
    out.fill(0)
    for j in range(len(idx)):
        if _rsp_accumulate_t(oi, out, idx[j], data[j], _arith_threads(idx[j].shape[0],
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
    ip, idx, vals = _csr_args(indptr, indices, data, _rows_of(indptr), "", out.dtype)
    if axis == 1:
        _check_length(res, "out", ip.shape[0] - 1, "rows")
    acc = np.empty(res.shape[0] if axis == 0 else 0, np.float64)
    if _csr_sum_t(ip, idx, vals, axis, scale, res, acc,
                  _arith_threads(ip.shape[0] - 1, idx.shape[0])):
        _raise_bad_column(ip, idx, res.shape[0], "")
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
    _check_length(res, "out", a.shape[1 - axis], "columns" if axis == 0 else "rows")
    acc = np.empty(a.shape[1] if axis == 0 else 0, np.float64)
    _square_sum_t(a, axis, res, acc, _arith_threads(a.shape[0], a.size))
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
        p = _lower_bound_p(ib, nin, keep[k])
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
    data, _ = _values(data2d, "data2d", 2, False, None)
    out, _ = _values(data2d_out, "data2d_out", 2, True, data2d.dtype)
    idx = _index(indices, "indices", False)
    kp = _index(keep, "keep", False)
    oi = _index(indices_out, "indices_out", True)
    _check_length(data, "data2d", idx.shape[0], "len(indices)")
    _check_length(oi, "indices_out", kp.shape[0], "len(keep)")
    _check_length(out, "data2d_out", kp.shape[0], "len(keep)")
    if data.shape[1] != out.shape[1]:
        raise ValueError(f"data2d and data2d_out must have one row length (got "
                         f"{data.shape[1]} and {out.shape[1]})")
    _retain_t(idx, _rows_as_bytes(data), kp, oi, _rows_as_bytes(out),
              _arith_threads(kp.shape[0], out.size))
    return kp.shape[0]
