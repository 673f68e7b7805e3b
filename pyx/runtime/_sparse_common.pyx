"""What the sparse kernel modules share, compiled once: the thread count of every kernel
(with its fork handler and the arithmetic's back-off), the argument validators and the
row-pointer check.  `_sparse_common.pxd` declares the C-level surface that _sparse_format
(storage casts, format checks) and _sparse_arith (operator arithmetic) cimport; Python
reads and sets the thread count here, and takes row_size (the 2-D view of the kernels).
"""

import os

import numpy as np

__all__ = [
    "ARITH_SERIAL_CUTOFF", "SERIAL_CUTOFF", "get_num_threads", "row_size",
    "set_arith_serial_cutoff", "set_contention_backoff", "set_num_threads",
]


# ---------------------------------------------------------------------------------------
# Threads.  One count for every kernel; each kernel asks threads_for / arith_threads (with
# the GIL) how many threads its loop gets.

# Storage casts with fewer elements than this run on one thread: starting a team costs more.
SERIAL_CUTOFF = 65536
cdef Py_ssize_t _serial_cutoff = SERIAL_CUTOFF


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


cdef extern from *:
    """
    #ifndef NDRT_BUILD_INFO
    #define NDRT_BUILD_INFO "unknown"
    #endif
    """
    const char* NDRT_BUILD_INFO


def build_info():
    """How the extensions were built (setup.py's ``build_info``), as a dict of strings:
    cython (the version that generated the C++), cflags, openmp (the modules built with
    it), debug_checks ('1' with NDRT_CYTHON_DEBUG), numpy_headers (the NumPy compiled
    against)."""
    text = NDRT_BUILD_INFO.decode()
    if text == "unknown":
        return {}
    return dict(part.split("=", 1) for part in text.split(";"))


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


cdef int num_threads() noexcept:
    return _num_threads


cdef int threads_for(Py_ssize_t rows, Py_ssize_t work) noexcept:
    """Threads for a storage cast over `rows` rows touching `work` elements: small stays
    serial."""
    if work < _serial_cutoff or rows < 2:
        return 1
    return <int>min(<Py_ssize_t>_num_threads, rows)


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


cdef void back_off() noexcept:
    """With the GIL: run the next _backoff_calls arithmetic calls on one thread."""
    global _backoff_left
    _backoff_left = _backoff_calls


cdef int arith_threads(Py_ssize_t rows, Py_ssize_t work) noexcept:
    return team_threads(rows, work, _arith_cutoff)


cdef int team_threads(Py_ssize_t parts, Py_ssize_t work, Py_ssize_t cutoff) noexcept:
    global _backoff_left
    if work < cutoff or parts < 2 or _num_threads < 2:
        return 1
    if _backoff_left > 0:
        _backoff_left -= 1
        return 1
    return <int>min(<Py_ssize_t>_num_threads, parts)


# ---------------------------------------------------------------------------------------
# The 2-D view in which the kernels see dense arrays and row_sparse data.

def row_size(tuple shape):
    """Elements per row of the 2-D view (shape[0], row_size(shape)) in which the kernels
    see an array of this shape (dense, or the stored rows of row_sparse data).  The shape
    passed shape_size when its array was made, so the product fits in int64."""
    cdef Py_ssize_t n = 1, i
    for i in range(1, len(shape)):
        n *= <Py_ssize_t>shape[i]
    return n


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


cdef object as_array(object a, str name, int ndim, bint out):
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


cdef object as_index(object a, str name, bint out):
    a = as_array(a, name, 1, out)
    if a.dtype != _INT64:
        raise TypeError(f"{name} must have dtype int64 (got {a.dtype!r})")
    return a


cdef tuple as_values(object a, str name, int ndim, bint out, object like):
    """(a viewed with the dtype the loops see, zero-test mask); `like`: required dtype."""
    a = as_array(a, name, ndim, out)
    if like is not None and a.dtype != like:
        raise TypeError(f"{name} must have the dtype {like!r} (got {a.dtype!r})")
    try:
        kernel_dtype, hmask = _KERNEL_DTYPES[a.dtype]
    except KeyError:
        raise NotImplementedError(
            f"{name} must have one of the dtypes {_DTYPE_NAMES} (got {a.dtype!r})") from None
    return a.view(kernel_dtype), hmask


cdef object rows_as_bytes(object a):
    """A C-contiguous 2-D array seen as (rows, row bytes) of uint8."""
    return a.view(_UINT8).reshape(a.shape[0], a.shape[1] * a.dtype.itemsize)


cdef int check_length(object a, str name, Py_ssize_t n, str what) except -1:
    if a.shape[0] != n:
        raise ValueError(f"{name} must have length {what}={n} (got {a.shape[0]})")
    return 0


# ---------------------------------------------------------------------------------------
# The row-pointer check.  The loop returns a defect kind and where it is; Python writes the
# message (the checks of the column and row indices are _sparse_format's).

cdef Defect _indptr_defect(const index_t[::1] indptr, Py_ssize_t nnz,
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


cdef str indptr_message(const index_t[::1] indptr, Py_ssize_t nnz):
    cdef Py_ssize_t where = 0
    cdef Defect d
    with nogil:
        d = _indptr_defect(indptr, nnz, &where)
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


cdef int check_indptr(const index_t[::1] indptr, Py_ssize_t nnz, str prefix) except -1:
    msg = indptr_message(indptr, nnz)
    if msg is not None:
        raise ValueError(prefix + msg)
    return 0


cdef int raise_bad_column(object ip, object idx, Py_ssize_t ncols, str prefix) except -1:
    """IndexError naming the first column outside [0, ncols), if there is one."""
    bad = np.flatnonzero((idx < 0) | (idx >= ncols))
    if bad.size:
        k = int(bad[0])
        row = int(np.searchsorted(ip, k, side="right")) - 1
        raise IndexError(f"{prefix}indices must be in [0, ncols={ncols}) "
                         f"(got {prefix}indices[{k}]={idx[k]} in row {row})")
    return 0
