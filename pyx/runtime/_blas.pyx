"""The dense matrix products' BLAS, and the thread team of large elementwise loops.

ndrt's dense host products (``dot``, ``batch_dot``, ``matmul``, ``FullyConnected`` and
their gradients, imperative and planned, the convolutions' and the fused RNN layers'
products) all pass through :func:`matmul_into` (a batch: :func:`matmul`, one call per
matrix).  Two BLAS libraries can serve it:

- **MKL, when it is installed** (Intel's ``mkl`` wheel, a dependency of ndrt on x86-64
  Linux: its ``libmkl_rt`` in the environment's ``lib/``).  MKL is loaded with its GNU
  threading layer, so that its threads are libgomp's, the same OpenMP team as ndrt's own kernels:
  one team for the products and the loops, as PyTorch runs its MKL.  Each call tells MKL
  how many threads it may use (``mkl_set_num_threads_local``): ndrt's thread count
  (``runtime._sparse_common.set_num_threads``, ``OMP_NUM_THREADS``, the affinity mask;
  1 in a child made by ``fork()``, whose libgomp has no team).  The large elementwise
  loops (the operators' short-road ufunc loops, the backward plan's elementwise
  gradients, the dense optimizer updates) then split over that team too
  (``loop_threads``), each element computed as the one-thread loop computes it.
- **NumPy's matmul otherwise** (its OpenBLAS and OpenBLAS's own thread pool), with the
  loops on one thread: beside a second pool whose idle workers spin, splitting them
  would make both wait (docs/autograd.md, "The matrix products' BLAS").

``NDRT_BLAS=numpy`` in the environment keeps NumPy's matmul although MKL is installed.
MKL is also left alone when another library loaded it first with another threading
layer (its Intel OpenMP would be a second team).  :func:`blas_note` says which was taken
and why.  Results differ from NumPy's in the last bits (another BLAS's blocking), and
MKL's may differ with the thread count (its conditional numerical reproducibility mode is
not asked for).
"""

import ctypes
import ctypes.util
import glob
import os
import sys

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uintptr_t

from runtime._sparse_common cimport num_threads, team_threads

cnp.import_array()

__all__ = ["LOOP_SERIAL_CUTOFF", "blas_note", "matmul", "uses_mkl"]

# CBLAS's constants (cblas.h)
cdef enum:
    ROW_MAJOR = 101
    NO_TRANS = 111
    TRANS = 112

ctypedef void (*sgemm_t)(int, int, int, int, int, int, float, const float*, int,
                         const float*, int, float, float*, int) noexcept nogil
ctypedef void (*dgemm_t)(int, int, int, int, int, int, double, const double*, int,
                         const double*, int, double, double*, int) noexcept nogil
ctypedef int (*set_local_t)(int) noexcept nogil

cdef sgemm_t _sgemm = NULL
cdef dgemm_t _dgemm = NULL
cdef set_local_t _set_local = NULL
cdef bint _mkl = False
cdef str _note = ""
cdef object _lib = None          # keeps the library loaded

# Elementwise loops shorter than this run on the calling thread: a hot team costs about a
# microsecond to start, a pass over 128 Ki floats about twenty.
LOOP_SERIAL_CUTOFF = 1 << 17
cdef Py_ssize_t _loop_cutoff = LOOP_SERIAL_CUTOFF
# MKL's threading layers (mkl_service.h): the GNU one runs on libgomp
cdef int MKL_THREADING_INTEL = 0, MKL_THREADING_GNU = 3


def _mkl_path():
    """The path of ``libmkl_rt`` in this environment (the ``mkl`` wheel's ``lib/``), or
    on the loader's path; None when there is none."""
    for prefix in (sys.prefix, sys.exec_prefix):
        found = sorted(glob.glob(os.path.join(prefix, "lib", "libmkl_rt.so*")))
        if found:
            return found[len(found) - 1]
    return ctypes.util.find_library("mkl_rt")


def _take_mkl():
    global _sgemm, _dgemm, _set_local, _mkl, _note, _lib
    if os.environ.get("NDRT_BLAS", "").strip().lower() == "numpy":
        _note = "NumPy's matmul (NDRT_BLAS=numpy); loops on one thread"
        return
    path = _mkl_path()
    if path is None:
        _note = "NumPy's matmul (MKL is not installed: pip install mkl); loops on one thread"
        return
    try:
        lib = ctypes.CDLL(path)
        layer = lib.MKL_Set_Threading_Layer
        layer.argtypes, layer.restype = [ctypes.c_int], ctypes.c_int
        got = layer(MKL_THREADING_GNU)
        addr = [ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
                for name in ("cblas_sgemm", "cblas_dgemm", "MKL_Set_Num_Threads_Local")]
    except (OSError, AttributeError) as e:
        _note = f"NumPy's matmul ({path} is not a usable MKL: {e}); loops on one thread"
        return
    if got != MKL_THREADING_GNU:
        _note = (f"NumPy's matmul ({path} was loaded with threading layer {got}, not the "
                 "GNU one that shares ndrt's OpenMP team); loops on one thread")
        return
    _lib = lib
    _sgemm = <sgemm_t><uintptr_t>addr[0]
    _dgemm = <dgemm_t><uintptr_t>addr[1]
    _set_local = <set_local_t><uintptr_t>addr[2]
    _mkl = True
    _note = f"MKL ({path}) on ndrt's OpenMP team; large loops on the same team"


_take_mkl()


def blas_note():
    """Which BLAS the products use and why (a sentence)."""
    return _note


def uses_mkl():
    """Whether the products run on MKL (and large loops on ndrt's thread team)."""
    return _mkl


cdef bint pooled() noexcept:
    return _mkl


cdef int loop_threads(Py_ssize_t n) noexcept:
    if not _mkl:
        return 1
    return team_threads(n // (_loop_cutoff // 2), n, _loop_cutoff)


cdef int _layout(object x, Py_ssize_t isz, int* trans, int* ld):
    """CBLAS's row-major view of a 2-D array: NO_TRANS and its row stride (elements) when
    it is stored row-major, TRANS and its column stride when it is the transpose of a
    row-major array; 0 otherwise."""
    cdef cnp.ndarray a = x
    cdef Py_ssize_t s0 = a.strides[0], s1 = a.strides[1]
    cdef Py_ssize_t r = a.shape[0], c = a.shape[1]
    if s1 == isz and s0 % isz == 0 and max(c, 1) <= s0 // isz < (1 << 31):
        trans[0], ld[0] = NO_TRANS, <int>(s0 // isz)
        return 1
    if s0 == isz and s1 % isz == 0 and max(r, 1) <= s1 // isz < (1 << 31):
        trans[0], ld[0] = TRANS, <int>(s1 // isz)
        return 1
    if r == 1 and s1 == isz:           # a row: its other stride is arbitrary
        trans[0], ld[0] = NO_TRANS, <int>max(c, 1)
        return 1
    if c == 1 and s0 == isz:           # a column
        trans[0], ld[0] = TRANS, <int>max(r, 1)
        return 1
    return 0


cdef int matmul_into(object a, object b, object c, bint add) except -1:
    cdef int ta, tb, tc, lda, ldb, ldc, nt
    cdef bint f32
    cdef Py_ssize_t m, n, k, isz
    cdef char* pa
    cdef char* pb
    cdef char* pc
    if not _mkl or type(a) is not np.ndarray or type(b) is not np.ndarray \
            or type(c) is not np.ndarray or (<cnp.ndarray>a).ndim != 2 \
            or (<cnp.ndarray>b).ndim != 2 or (<cnp.ndarray>c).ndim != 2:
        return _numpy_matmul(a, b, c, add)
    dt = (<cnp.ndarray>c).dtype
    if dt.num != cnp.NPY_FLOAT32 and dt.num != cnp.NPY_FLOAT64 \
            or (<cnp.ndarray>a).dtype != dt or (<cnp.ndarray>b).dtype != dt:
        return _numpy_matmul(a, b, c, add)
    m, k = (<cnp.ndarray>a).shape[0], (<cnp.ndarray>a).shape[1]
    n = (<cnp.ndarray>b).shape[1]
    isz = dt.itemsize
    if m == 0 or n == 0 or k == 0 or max(m, n, k) >= (1 << 31) \
            or not (<cnp.ndarray>c).flags.writeable \
            or not (_layout(a, isz, &ta, &lda) and _layout(b, isz, &tb, &ldb)
                    and _layout(c, isz, &tc, &ldc) and tc == NO_TRANS) \
            or np.may_share_memory(c, a) or np.may_share_memory(c, b):
        return _numpy_matmul(a, b, c, add)
    pa = <char*>cnp.PyArray_DATA(a)
    pb = <char*>cnp.PyArray_DATA(b)
    pc = <char*>cnp.PyArray_DATA(c)
    nt = num_threads()
    f32 = dt.num == cnp.NPY_FLOAT32
    with nogil:
        _set_local(nt)
        if f32:
            _sgemm(ROW_MAJOR, ta, tb, <int>m, <int>n, <int>k, 1, <float*>pa, lda,
                   <float*>pb, ldb, 1 if add else 0, <float*>pc, ldc)
        else:
            _dgemm(ROW_MAJOR, ta, tb, <int>m, <int>n, <int>k, 1, <double*>pa, lda,
                   <double*>pb, ldb, 1 if add else 0, <double*>pc, ldc)
    return 0


cdef int _numpy_matmul(object a, object b, object c, bint add) except -1:
    if add:
        np.add(c, np.matmul(a, b), out=c)
    else:
        np.matmul(a, b, out=c)
    return 0


def matmul(a, b, out, add=False):
    """``out[...] (+)= a @ b`` for NumPy arrays ``a`` (..., m, k), ``b`` (..., k, n) and
    ``out`` (..., m, n) with the same leading (batch) dimensions: each product on MKL
    where it is used and the layouts allow (each operand stored row-major or as the
    transpose of a row-major array, ``out`` row-major, float32 or float64, no overlap),
    else NumPy's matmul (broadcast batches too); returns ``out``."""
    cdef Py_ssize_t i, nb
    if _mkl and type(a) is np.ndarray and type(b) is np.ndarray and type(out) is np.ndarray \
            and a.ndim == b.ndim == out.ndim > 2 \
            and a.shape[:-2] == b.shape[:-2] == out.shape[:-2]:
        nb = 1
        for d in out.shape[:-2]:
            nb *= d
        a3 = a.reshape((nb,) + a.shape[-2:])
        b3 = b.reshape((nb,) + b.shape[-2:])
        o3 = out.reshape((nb,) + out.shape[-2:])
        if np.may_share_memory(o3, out):        # a view: the products write into out
            for i in range(o3.shape[0]):
                matmul_into(a3[i], b3[i], o3[i], add)
            return out
    matmul_into(a, b, out, add)
    return out
