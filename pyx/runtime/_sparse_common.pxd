"""What the sparse kernel modules (_sparse_format, _sparse_arith) share: the thread count,
argument validators, the row-pointer check and the binary search."""

from openmp cimport omp_get_thread_num, omp_get_wtime

from runtime._types cimport index_t


# -- threads: one count for every kernel, set to 1 in a child made by fork() --------------

# Threads for a loop over `rows` rows touching `work` elements: storage casts (serial below
# SERIAL_CUTOFF) and arithmetic (serial below ARITH_SERIAL_CUTOFF, and while backing off
# after a thread started late).  Called with the GIL.
# The thread count (set_num_threads; 1 in a child made by fork).  With the GIL.
cdef int num_threads() noexcept
cdef int threads_for(Py_ssize_t rows, Py_ssize_t work) noexcept
cdef int arith_threads(Py_ssize_t rows, Py_ssize_t work) noexcept
# Threads for work split into `parts` independent parts: one below `cutoff` work or while
# backing off, else the thread count (at most `parts`).  The dense products and loops
# (_blas) use it with their own cutoffs.
cdef int team_threads(Py_ssize_t parts, Py_ssize_t work, Py_ssize_t cutoff) noexcept
# With the GIL, after a parallel region in which a thread started late: the next arithmetic
# calls run on one thread.
cdef void back_off() noexcept

# A parallel region notes when a thread of its team started late (the caller then backs
# off, with the GIL): clear_starts before the region, mark_start in each iteration,
# started_late after it.  The start times of this many threads are tracked.
cdef enum:
    TRACKED_THREADS = 64


cdef inline void clear_starts(double* starts, int nthreads) noexcept nogil:
    cdef int i
    for i in range(min(nthreads, <int>TRACKED_THREADS)):
        starts[i] = 0


cdef inline void mark_start(double* starts) noexcept nogil:
    """Record when the calling thread began its first block of the parallel region."""
    cdef int tid = omp_get_thread_num()
    if tid < TRACKED_THREADS and starts[tid] == 0:
        starts[tid] = omp_get_wtime()


cdef inline bint started_late(double t0, const double* starts, int nthreads) noexcept nogil:
    """Whether a thread started (or, never having started, ended) more than a quarter of
    the region (and 0.2 ms) after it began."""
    cdef double t1 = omp_get_wtime(), late = 0
    cdef int i
    for i in range(min(nthreads, <int>TRACKED_THREADS)):
        late = max(late, (t1 if starts[i] == 0 else starts[i]) - t0)
    return late > 0.25 * (t1 - t0) and late > 2e-4


# -- argument validation and conversion (with the GIL) ------------------------------------

# `a` after checking kind, ndim, C-contiguity (and writeability for outputs).
cdef object as_array(object a, str name, int ndim, bint out)
# A 1-D int64 array (as_array's checks).
cdef object as_index(object a, str name, bint out)
# (a viewed with the dtype the loops see, zero-test mask for float16 bit patterns);
# `like`: the dtype `a` must have, or None.
cdef tuple as_values(object a, str name, int ndim, bint out, object like)
# A C-contiguous 2-D array seen as (rows, row bytes) of uint8.
cdef object rows_as_bytes(object a)
cdef int check_length(object a, str name, Py_ssize_t n, str what) except -1


# -- the row-pointer check, shared by the format checks and the CSR arithmetic -----------

cdef enum Defect:
    VALID = 0
    INDPTR_EMPTY
    INDPTR_FIRST
    INDPTR_ORDER
    INDPTR_LAST
    INDEX_RANGE
    INDEX_ORDER

# A message naming the first defect of an int64 row pointer for `nnz` entries, or None:
# non-empty, indptr[0] == 0, non-decreasing, indptr[-1] == nnz.
cdef str indptr_message(const index_t[::1] indptr, Py_ssize_t nnz)
# ValueError with indptr_message's message (after `prefix`, which names the operand: "a_"),
# if there is one.
cdef int check_indptr(const index_t[::1] indptr, Py_ssize_t nnz, str prefix) except -1
# IndexError naming the first column of the CSR matrix (ip, idx) outside [0, ncols), if
# there is one; `prefix` names the operand ("a_").
cdef int raise_bad_column(object ip, object idx, Py_ssize_t ncols, str prefix) except -1


# -- the binary search --------------------------------------------------------------------

cdef inline Py_ssize_t lower_bound(const index_t* a, Py_ssize_t n, index_t x,
                                   Py_ssize_t step) noexcept nogil:
    """First position p in [0, n) with a[p] + step * p >= x (n when there is none); a[p] +
    step * p must be non-decreasing.  step 0 searches sorted `a`; step 1 over a row pointer
    finds where a share of (stored entries + rows) begins."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if a[mid] + step * mid < x:
            lo = mid + 1
        else:
            hi = mid
    return lo
