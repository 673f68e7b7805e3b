"""The invocation path of every operator: check, infer, allocate, dispatch, write back.

``invoke(op, inputs, attrs, out, req)`` runs any registered operator in four steps:

1. checks (``_check_inputs``): the inputs are NDArrays on one context;
2. inference (``_infer``): the outputs' shapes, dtypes and storage types and the
   dispatch mode, computed by the op's pure ``infer_*`` functions once per signature
   (op, attributes, input shapes, dtypes and storage types) and cached, as CuPy caches
   its ufunc routines;
3. dispatch (``_dispatch``): outputs allocated from the pool (or taken from ``out=``),
   requests assigned, and the dense kernel, the sparse kernel or the storage fallback
   run (``_run_dense`` turns the four requests into kernel calls);
4. write-back (``_write_back``): sparse results put into ``out=`` under their requests,
   and the version of every written array bumped.

``invoke_stateful`` also returns the per-call state of ops that declare ``prepare``
(MXNet's OpStatePtr), which the tape keeps per node.

Elementwise ops and full reductions on dense host arrays of one dtype take a shorter
road: the NumPy inner loop of the op's ``ufunc`` for the dtype is looked up once and
called directly on pool memory (``fast_binary`` / ``fast_unary`` / ``fast_reduce``),
which keeps the per-op overhead near NumPy's own.  NDArray's Python operators name their
registry op (``x + y``: "add"); its ``ufunc`` and ``scalar_forms`` fields say the rest.

The recording and training flags are per thread (C ``thread_local``), as MXNet's are;
the short roads read the recording flag without a Python call.
"""
import os
import warnings
from time import perf_counter_ns

import numpy as np

cimport cython
cimport numpy as cnp
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.dict cimport PyDict_Next
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport uint64_t
from libc.float cimport FLT_MAX
from libc.math cimport fabs, isinf
from libc.string cimport memcpy, memset
from cython.parallel cimport prange

from runtime._blas cimport loop_threads

from runtime._ndarray cimport (STYPE_DEFAULT, NDArray, assign, new_dense, np_view,
                               set_operator_impl)
from runtime._tape cimport Entry, on_tape, record
from runtime._types cimport REQ_ADD, REQ_INPLACE, REQ_NULL, REQ_WRITE

from runtime import _device
from runtime._ndarray import DTYPES, STYPES, as_dtype, shape_size
from runtime._storage import cast_storage
from runtime.errors import StorageFallbackError, StorageFallbackWarning, as_mxnet_error

cnp.import_array()
cnp.import_ufunc()

# -- per-thread flags ---------------------------------------------------------------------

# One C thread_local array (a new thread starts with every flag off, as in MXNet); the
# short roads read ndrt_flags[FLAG_RECORDING] without a Python call.
cdef extern from *:
    """
    static thread_local int ndrt_flags[2] = {0, 0};
    """
    int ndrt_flags[2]

cdef enum:
    FLAG_RECORDING = 0
    FLAG_TRAINING = 1


cdef bint _swap_flag(int flag, bint on) noexcept:
    cdef bint prev = ndrt_flags[flag] != 0
    ndrt_flags[flag] = on
    return prev


def is_recording():
    """True while this thread records operations for autograd."""
    return ndrt_flags[FLAG_RECORDING] != 0


def set_recording(bint is_recording):
    """Set this thread's recording flag; returns the previous value."""
    return _swap_flag(FLAG_RECORDING, is_recording)


def is_training():
    """True while this thread runs operators in training mode (Dropout drops)."""
    return ndrt_flags[FLAG_TRAINING] != 0


def set_training(bint train_mode):
    """Set this thread's training flag; returns the previous value."""
    return _swap_flag(FLAG_TRAINING, train_mode)


# -- the direct ufunc-loop road -----------------------------------------------------------

# NumPy's inner loops touch no Python state: callable without the GIL.
ctypedef void (*loop_t)(char**, const cnp.npy_intp*, const cnp.npy_intp*, void*) noexcept nogil

# The fields of NumPy's ufunc object that the fast path reads, declared here rather than
# taken from numpy's own .pxd: NumPy 2.5's .pxd hides them behind properties that older
# headers cannot compile, and a Python attribute lookup would silently replace them.  The
# C compiler takes the layout from the headers it builds with; NumPy keeps that layout for
# every 2.x release (non-limited API), and ``_init_fast_path`` checks it at import.
cdef extern from "numpy/ufuncobject.h":
    ctypedef struct _UFuncFields "PyUFuncObject":
        int nin, nout, nargs
        void** functions
        void** data
        int ntypes
        const char* types

# Requests by name (the codes: runtime._types)
_REQ_NAMES = {"null": REQ_NULL, "write": REQ_WRITE, "inplace": REQ_INPLACE, "add": REQ_ADD}

# What the short road does with an operator.
cdef enum:
    K_NONE = 0
    K_UNARY = 1       # ufunc(x), one ufunc of nin 1
    K_BINARY = 2      # ufunc(x, y) of equal shapes
    K_REDUCE = 3      # a full reduction folding with a binary ufunc (sum: np.add)
    K_MEAN = 4        # K_REDUCE over np.add, divided by the size

cdef enum:
    MAX_UFUNCS = 64   # distinct ufuncs with loops in the tables
    N_TYPES = 32      # NumPy type numbers below this

cdef loop_t loops[MAX_UFUNCS][N_TYPES]
cdef void* loop_data[MAX_UFUNCS][N_TYPES]
cdef list _ufuncs = []           # slot -> the ufunc whose loops are in row ``slot``
cdef Py_ssize_t _n_probed = 0    # slots whose loops _init_fast_path has looked up
cdef bint _fast_enabled = False
cdef str _fast_note = "not set up (no operator registered yet)"

# Elementwise work below this size runs with the GIL held (the release costs more).
cdef Py_ssize_t NOGIL_MIN = 1 << 15


cdef int _find_loops(int slot, object f) except -1:
    """For ufunc ``f``, the legacy inner loop whose operand types all equal one type.

    The loop is chosen by the public ``ufunc.types`` strings; the C struct only gives the
    function and data pointers, after its counts and type numbers are checked against
    what the ufunc reports through Python.  Raises RuntimeError when they disagree.
    """
    cdef _UFuncFields* uf
    cdef int i, j, t, nargs
    for t in range(N_TYPES):
        loops[slot][t] = NULL
        loop_data[slot][t] = NULL
    if not isinstance(f, np.ufunc):
        raise RuntimeError(f"{f!r} is not a NumPy ufunc")
    uf = <_UFuncFields*><PyObject*>f
    if uf.nargs != f.nargs or uf.nin != f.nin or uf.ntypes != f.ntypes:
        raise RuntimeError(f"np.{f.__name__}: the C ufunc struct disagrees with the "
                           f"ufunc's attributes (nargs {uf.nargs} vs {f.nargs})")
    nargs = f.nargs
    if f.nout != 1 or nargs not in (2, 3):
        return 0
    for i, sig in enumerate(f.types):
        chars = sig.replace("->", "")
        if len(set(chars)) != 1 or np.dtype(chars[0]).kind not in "biuf":
            continue
        t = np.dtype(chars[0]).num
        for j in range(nargs):
            if uf.types[i * nargs + j] != t:
                raise RuntimeError(f"np.{f.__name__}: loop {i} is {sig!r} in ufunc.types "
                                   "but not in the C ufunc struct")
        if t < N_TYPES and loops[slot][t] == NULL and uf.functions[i] != NULL:
            loops[slot][t] = <loop_t>uf.functions[i]
            loop_data[slot][t] = uf.data[i]
    return 0


cdef object _probe_values(object dtype, int which):
    """Small operands for the import-time probe (nonzero divisors, exact results)."""
    if dtype.kind == "b":
        return np.array([True, False, True, True], dtype=dtype)
    if dtype.kind == "f":
        v = [0.5, -1.25, 3.0, 2.0] if which == 0 else [2.0, 0.75, -1.5, 4.0]
    else:
        v = [1, 7, 3, 2] if which == 0 else [3, 2, 1, 1]
    return np.array(v, dtype=dtype)


cdef bint _probe(object f, loop_t fn, void* fdata, object dtype, bint corrupt):
    """Call ``fn`` on a few values and compare with NumPy's own call, bit for bit."""
    cdef char* args[3]
    cdef cnp.npy_intp n = 4
    cdef cnp.npy_intp steps[3]
    cdef int nargs = f.nargs
    cdef cnp.ndarray a = _probe_values(dtype, 0), b = _probe_values(dtype, 1), out
    with np.errstate(all="ignore"):
        ref = f(a, b) if nargs == 3 else f(a)
    out = np.zeros(4, dtype=dtype)
    steps[0] = steps[1] = steps[2] = dtype.itemsize
    args[0] = <char*>cnp.PyArray_DATA(a)
    if nargs == 3:
        args[1] = <char*>cnp.PyArray_DATA(b)
        args[2] = <char*>cnp.PyArray_DATA(out)
    else:
        args[1] = <char*>cnp.PyArray_DATA(out)
    with np.errstate(all="ignore"):
        fn(args, &n, steps, fdata)
    if corrupt:
        out[0] = ~out[0] if dtype.kind in "biu" else out[0] + 1
    return ref.dtype == out.dtype and np.array_equal(ref, out, equal_nan=dtype.kind == "f")


cdef int _drop_failing(int slot, object f, bint corrupt, list failed) except -1:
    cdef int t
    for t in range(N_TYPES):
        if loops[slot][t] != NULL:
            dtype = np.dtype(cnp.PyArray_DescrFromType(t))
            if not _probe(f, loops[slot][t], loop_data[slot][t], dtype, corrupt):
                failed.append(f"{f.__name__}[{dtype}]")
                loops[slot][t] = NULL
                loop_data[slot][t] = NULL
    return 0


def _init_fast_path(bint _corrupt_probe=False):
    """Find NumPy's inner loops of the registered ops' ufuncs, and check each on a probe.

    Any loop whose probe differs from NumPy's result is dropped (its calls take the
    general path); if the ufunc struct cannot be read consistently, the whole fast path
    is off.  Never raises: the general path always works.  ``_corrupt_probe`` makes every
    probe fail (tests use it to check the fallback).  Returns the one-line note that
    ``fast_path_note()`` gives.
    """
    global _fast_note, _fast_enabled, _n_probed
    cdef list failed = []
    cdef int n_loops = 0, slot, t
    _n_probed = len(_ufuncs)
    try:
        for slot in range(len(_ufuncs)):
            _find_loops(slot, _ufuncs[slot])
            _drop_failing(slot, _ufuncs[slot], _corrupt_probe, failed)
    except Exception as e:
        for slot in range(MAX_UFUNCS):
            for t in range(N_TYPES):
                loops[slot][t] = NULL
        _fast_enabled = False
        _fast_note = (f"off (NumPy {np.__version__}: {e}); every operator takes the "
                      "general path")
        return _fast_note
    for slot in range(len(_ufuncs)):
        for t in range(N_TYPES):
            n_loops += loops[slot][t] != NULL
    _fast_enabled = n_loops > 0
    if n_loops == 0:
        _fast_note = (f"off (NumPy {np.__version__}: no inner loop passed its probe); every "
                      "operator takes the general path")
    elif failed:
        _fast_note = (f"active with {n_loops} NumPy {np.__version__} inner loops; "
                      f"{len(failed)} failed their probe and take the general path: "
                      + ", ".join(failed))
    else:
        _fast_note = f"active ({n_loops} NumPy {np.__version__} inner loops, probes passed)"
    return _fast_note


def fast_path_note():
    """One line: whether elementwise ops call NumPy's inner loops directly, and why not."""
    return _fast_note


def set_fast_path(bint enabled):
    """Turn the direct ufunc-loop path off (tests compare both roads)."""
    global _fast_enabled
    _fast_enabled = enabled


# -- what the invoker knows of each operator ---------------------------------------------

@cython.final
cdef class _OpEntry:
    """One registry operator as the short roads and the nd functions see it."""
    cdef object op
    cdef int kind            # K_*
    cdef int slot            # row of its ufunc in ``loops`` (-1: none)
    cdef bint zero_start     # a reduction that starts from its identity 0 (np.add)
    cdef uint64_t types      # bit t: NumPy type number t passes the op's inference
    cdef object scalar_op    # array <op> number
    cdef object rscalar_op   # number <op> array
    cdef dict defaults       # parsed attributes when none are given (None: some required)
    cdef dict parsed         # keyword attributes (see _kwargs_key) -> parsed
    cdef frozenset free      # attributes declared infer=False (None: none)
    # The op's last cached inference (an inline cache before the signature dict): its
    # attributes (a dict this entry owns, ``defaults`` or one of ``parsed``, never
    # modified; else a copy), the inputs' shapes and codes, the inference, and the cache
    # generation it belongs to.
    cdef dict memo_attrs
    cdef tuple memo_inputs
    cdef _Inferred memo_inf
    cdef Py_ssize_t memo_gen

    cdef dict parse(self, dict kwargs):
        """``op.parse_attrs(kwargs)``, remembered for keyword values of plain types (the
        type is part of the key: ``axis=0`` and ``axis=False`` differ).  The dict given
        back is shared: kernels only read attributes."""
        cdef tuple key = _kwargs_key(kwargs)
        cdef dict attrs
        if key is None:
            return self.op.parse_attrs(kwargs)
        attrs = self.parsed.get(key)
        if attrs is None:
            attrs = self.op.parse_attrs(kwargs)
            if len(self.parsed) >= 64:
                self.parsed.clear()
            self.parsed[key] = attrs
        return attrs


cdef dict _by_name = {}      # registry name (and alias) -> _OpEntry
cdef dict _by_op = {}        # Op -> _OpEntry
cdef dict _registry = {}     # the registry's OPS, handed over by connect()


cdef int _slot(object f) except -2:
    cdef int i
    for i in range(len(_ufuncs)):
        if _ufuncs[i] is f:
            return i
    if len(_ufuncs) >= MAX_UFUNCS:
        return -1
    _ufuncs.append(f)
    return len(_ufuncs) - 1


cdef uint64_t _types_of(object op, dict attrs, int n_in, int kind) except? 0:
    """The dtypes (bits by type number) for which the op's inference keeps the dtype of
    its ``n_in`` inputs: the short road never lets in a dtype the op refuses."""
    cdef uint64_t bits = 0
    cdef int t
    for name in DTYPES:
        d = as_dtype(name)
        t = d.num
        if t >= N_TYPES:
            continue
        if kind == K_MEAN and (d.kind != "f" or d.itemsize == 2):
            continue      # an integer mean truncates, a float16 one accumulates in float32
        if op.ufunc is np.power and d.kind != "f":
            continue      # an integer power raises for negative exponents
        try:
            out = op.infer_type(attrs, [d] * n_in)
        except (TypeError, ValueError):
            continue
        if len(out) == 1 and out[0] == d:
            bits |= (<uint64_t>1) << t
    return bits


cdef frozenset _free_attrs(object op):
    """The names of ``op``'s attributes that do not affect inference (Attr.infer False),
    or None when there are none."""
    free = frozenset([n for n, a in op.attrs.items() if not a.infer])
    return free if free else None


cdef _OpEntry _make_entry(object op):
    cdef _OpEntry e = _OpEntry.__new__(_OpEntry)
    cdef int n_in = len(op.inputs)
    e.op = op
    e.kind = K_NONE
    e.slot = -1
    e.types = 0
    e.parsed = {}
    e.free = _free_attrs(op)
    try:
        e.defaults = op.parse_attrs({})
    except TypeError:
        e.defaults = None
    forms = op.scalar_forms
    if forms is not None:
        e.scalar_op = _registry.get(forms[0])
        e.rscalar_op = _registry.get(forms[1])
    uf = op.ufunc
    if uf is None or e.defaults is None or op.variadic or not isinstance(uf, np.ufunc):
        return e
    if uf.nin == 1 and n_in == 1:
        e.kind = K_UNARY
    elif uf.nin == 2 and n_in == 2:
        e.kind = K_BINARY
    elif uf.nin == 2 and n_in == 1:
        # mean is the one reduction that divides after folding; the registry says it by
        # its name only.
        e.kind = K_MEAN if op.name == "mean" else K_REDUCE
    else:
        return e
    # NumPy starts a sum from 0, which fixes where its pairwise summation splits (and
    # makes the sum of [-0.0] 0.0); a reduction without identity starts from the first.
    e.zero_start = uf.identity is not None and uf.identity == 0
    e.slot = _slot(uf)
    if e.slot < 0:
        e.kind = K_NONE
        return e
    e.types = _types_of(op, e.defaults, n_in, e.kind)
    return e


cdef _OpEntry _entry(object op):
    """The entry of ``op``, made on first use for an op registered after connect()."""
    cdef _OpEntry e = _by_op.get(op)
    if e is None:
        e = _by_op[op] = _make_entry(op)
        if len(_ufuncs) > _n_probed:
            _init_fast_path()        # a ufunc new since connect(): find its loops
    return e


def connect(dict ops):
    """runtime.ops hands over the registry ({name or alias: Op}) once every operator is
    declared: NDArray's Python operators and the nd functions find their op, its ufunc
    and its scalar forms here.  Returns the fast-path note."""
    _registry.clear()
    _registry.update(ops)
    _by_op.clear()
    _by_name.clear()
    for name, op in ops.items():
        e = _by_op.get(op)
        if e is None:
            e = _by_op[op] = _make_entry(op)
        _by_name[name] = e
    clear_inference_cache()
    return _init_fast_path()


cdef inline int _fast_type(_OpEntry e, NDArray x) noexcept:
    """The NumPy type number of ``x`` when the short road of ``e`` takes it (dense host
    memory, a dtype the op's inference keeps, a loop that passed its probe), else -1.
    While recording, the short roads record their call too (``_record_fast``)."""
    cdef int t
    if not _fast_enabled or _profile_hook is not None or x._stype != STYPE_DEFAULT \
            or not x._chunk.host:
        return -1
    t = (<cnp.dtype>x._dtype).type_num
    if t >= N_TYPES or not (e.types >> t) & 1 or loops[e.slot][t] == NULL:
        return -1
    return t


cdef inline void _run_loop(_OpEntry e, int t, char** args, cnp.npy_intp n,
                           cnp.npy_intp* steps) noexcept:
    """The loop of ``e``'s ufunc for type ``t`` on ``n`` elements (without the GIL when
    that pays; a large one split over the thread team in blocks, each element computed
    as the one loop computes it).  No output has stride 0 (reductions stay short)."""
    cdef loop_t fn = loops[e.slot][t]
    cdef void* data = loop_data[e.slot][t]
    cdef int nin = 1 if e.kind == K_UNARY else 2, nt, i
    cdef cnp.npy_intp part
    if n >= NOGIL_MIN:
        nt = loop_threads(n) if steps[nin] != 0 else 1
        if nt > 1:
            part = (n + nt - 1) // nt
            part = (part + 63) & ~(<cnp.npy_intp>63)
            with nogil:
                for i in prange(nt, num_threads=nt, schedule="static"):
                    _loop_block(fn, data, args, steps, nin + 1, i * part,
                                min(n, (i + 1) * part))
        else:
            with nogil:
                fn(args, &n, steps, data)
    elif n:
        fn(args, &n, steps, data)


cdef void _loop_block(loop_t fn, void* data, char** args, cnp.npy_intp* steps, int nargs,
                      cnp.npy_intp start, cnp.npy_intp stop) noexcept nogil:
    cdef char* block[4]
    cdef cnp.npy_intp n = stop - start
    cdef int j
    if n <= 0:
        return
    for j in range(nargs):
        block[j] = args[j] + start * steps[j]
    fn(block, &n, steps, data)


cdef object fast_binary(_OpEntry e, NDArray a, NDArray b, NDArray out):
    """``a <op> b`` through the ufunc loop, or None when the short road does not apply."""
    cdef int t
    cdef char* args[3]
    cdef cnp.npy_intp steps[3]
    if e.kind != K_BINARY or a._dtype is not b._dtype:
        return None
    t = _fast_type(e, a)
    if t < 0 or b._stype != STYPE_DEFAULT or not b._chunk.host:
        return None
    if a._shape is not b._shape and a._shape != b._shape:
        return None
    if a._chunk.ctx is not b._chunk.ctx and a._chunk.ctx != b._chunk.ctx:
        return None
    if out is not None and ndrt_flags[FLAG_RECORDING]:
        return None            # the general path checks writes into the tape first
    if out is None:
        # an out-grad that backward donated (its last reader): write the result into it
        if a._donated:
            a._donated = False
            out = a
        elif b._donated:
            b._donated = False
            out = b
        else:
            out = new_dense(a._shape, a._dtype, a._chunk.ctx, 0)
    elif (out._stype != STYPE_DEFAULT or out._dtype is not a._dtype or not out._chunk.host
          or (out._shape is not a._shape and out._shape != a._shape)
          or _shifted_overlap(a, out) or _shifted_overlap(b, out)):
        return None
    steps[0] = steps[1] = steps[2] = (<cnp.dtype>a._dtype).itemsize
    args[0] = <char*>(a._chunk.ptr() + a._offset)
    args[1] = <char*>(b._chunk.ptr() + b._offset)
    args[2] = <char*>(out._chunk.ptr() + out._offset)
    _run_loop(e, t, args, a._size(), steps)
    out._chunk.bump()
    if ndrt_flags[FLAG_RECORDING] and (a._entry is not None or b._entry is not None):
        _record_fast(e, [a, b], out)
    return out


cdef int _record_fast(_OpEntry e, list inputs, NDArray out) except -1:
    """Put a short-road call on the tape, as the general path would have."""
    record(e.op, e.defaults, None, inputs, [out])
    return 0


cdef inline bint _shifted_overlap(NDArray x, NDArray out):
    """True when ``x`` and ``out`` share bytes without starting at the same one: the loop
    would read elements it has already written (``x[1:] += x[:-1]``).  Exactly aliased
    operands are fine for an elementwise loop."""
    cdef Py_ssize_t nbytes
    if x._chunk is not out._chunk or x._offset == out._offset:
        return False
    nbytes = x._size() * (<cnp.dtype>x._dtype).itemsize
    return x._offset < out._offset + nbytes and out._offset < x._offset + nbytes


cdef bint add_into(NDArray dst, NDArray src) except -1:
    """``dst += src`` on the short road of "add" (see _imperative.pxd); the caller has
    checked that nothing records the write."""
    cdef _OpEntry e = _by_name.get("add")
    cdef int t
    cdef char* args[3]
    cdef cnp.npy_intp steps[3]
    if e is None or e.kind != K_BINARY or dst._dtype is not src._dtype:
        return False
    t = _fast_type(e, dst)
    if t < 0 or src._stype != STYPE_DEFAULT or not src._chunk.host:
        return False
    if (dst._shape is not src._shape and dst._shape != src._shape) \
            or _shifted_overlap(src, dst):
        return False
    steps[0] = steps[1] = steps[2] = (<cnp.dtype>dst._dtype).itemsize
    args[0] = args[2] = <char*>(dst._chunk.ptr() + dst._offset)
    args[1] = <char*>(src._chunk.ptr() + src._offset)
    _run_loop(e, t, args, dst._size(), steps)
    dst._chunk.bump()
    return True


cdef object fast_unary(_OpEntry e, NDArray a):
    cdef int t
    cdef char* args[2]
    cdef cnp.npy_intp steps[2]
    cdef NDArray out
    t = _fast_type(e, a) if e.kind == K_UNARY else -1
    if t < 0:
        return None
    if a._donated:             # see fast_binary
        a._donated = False
        out = a
        a._chunk.bump()
    else:
        out = new_dense(a._shape, a._dtype, a._chunk.ctx, 0)
    steps[0] = steps[1] = (<cnp.dtype>a._dtype).itemsize
    args[0] = <char*>(a._chunk.ptr() + a._offset)
    args[1] = <char*>(out._chunk.ptr() + out._offset)
    _run_loop(e, t, args, a._size(), steps)
    if ndrt_flags[FLAG_RECORDING] and a._entry is not None:
        _record_fast(e, [a], out)
    return out


cdef Py_ssize_t REDUCE_FAST_MAX = 8192


cdef object fast_reduce(_OpEntry e, NDArray x):
    """A full reduction with default attributes (x.sum(), nd.mean(x)): the binary ufunc
    loop run as NumPy runs a reduction (output stride 0, so NumPy's pairwise summation
    applies)."""
    cdef int t
    cdef char* args[3]
    cdef cnp.npy_intp n
    cdef cnp.npy_intp steps[3]
    cdef Py_ssize_t size = x._size(), isz
    cdef NDArray out
    # Above NumPy's buffer size (8192 elements) some NumPy versions (2.0) reduce in
    # buffered chunks, which rounds differently from one pairwise loop: ufunc.reduce then
    # (the general path), whose overhead no longer matters at that size.
    t = _fast_type(e, x) if ((e.kind == K_REDUCE or e.kind == K_MEAN) and 0 < size
                             and size <= REDUCE_FAST_MAX) else -1
    if t < 0:
        return None
    isz = (<cnp.dtype>x._dtype).itemsize
    out = new_dense((1,), x._dtype, x._chunk.ctx, 0)
    args[0] = <char*>out._chunk.ptr()
    args[1] = <char*>(x._chunk.ptr() + x._offset)
    if e.zero_start:            # zero bits are the 0 of every dtype (and False)
        memset(args[0], 0, isz)
        n = size
    else:
        memcpy(args[0], args[1], isz)
        args[1] += isz
        n = size - 1
    args[2] = args[0]
    steps[0] = steps[2] = 0
    steps[1] = isz
    _run_loop(e, t, args, n, steps)
    if e.kind == K_MEAN:      # as np.mean: the float32 sum divided in float64, rounded
        if t == cnp.NPY_FLOAT32:
            (<float*>args[0])[0] = <float>(<double>(<float*>args[0])[0] / <double>size)
        else:
            (<double*>args[0])[0] /= size
    if ndrt_flags[FLAG_RECORDING] and x._entry is not None:
        _record_fast(e, [x], out)
    return out


# -- NDArray's Python operators -----------------------------------------------------------

cdef bint _is_scalar(object v):
    return (type(v) is float or type(v) is int or type(v) is bool
            or isinstance(v, (np.integer, np.floating, np.bool_)))


cdef object binary_impl(str name, object a, object b, int flags):
    """``a <op> b`` for the registry op ``name`` (flags: 1 reflected, 2 in place)."""
    cdef object res
    cdef _OpEntry e = _by_name.get(name)
    if e is None:
        return NotImplemented
    if flags & 1:
        a, b = b, a
    if isinstance(a, NDArray) and isinstance(b, NDArray):
        res = fast_binary(e, <NDArray>a, <NDArray>b, <NDArray>a if flags & 2 else None)
        if res is not None:
            return res
        return _invoke(e.op, [a, b], e.defaults, a if flags & 2 else None, None, None, e,
                       True)
    if isinstance(a, NDArray) and _is_scalar(b):
        op = e.scalar_op
        x = a
    elif isinstance(b, NDArray) and _is_scalar(a):
        op = e.rscalar_op
        x, b = b, a
    else:
        # As MXNet: refuse rather than defer, or NumPy would take over an ndarray operand.
        other = b if isinstance(a, NDArray) else a
        raise TypeError(f"NDArray operators take an NDArray or a Python number as the other "
                        f"operand (got {type(other).__module__}.{type(other).__name__}); "
                        "convert it with nd.array()")
    if op is None:
        return NotImplemented
    s = float(b)
    res = fast_scalar(e, op, <NDArray>x, s, op is not e.scalar_op, flags & 2)
    if res is not None:
        return res
    return _invoke(op, [x], {"scalar": s}, x if flags & 2 else None, None, None)


# the ops whose scalar forms (_plus_scalar ...) are their ufunc with the scalar as one
# operand: x <op> s, or s <op> x for the reversed forms (_rminus_scalar, _rdiv_scalar)
cdef frozenset _SCALAR_ROAD = frozenset(["add", "subtract", "multiply", "divide"])


cdef object fast_scalar(_OpEntry e, object op, NDArray x, double s, bint reverse,
                        bint in_place):
    """``x <op> s`` (``s <op> x`` with ``reverse``) for a floating ``x`` through the ufunc
    loop of ``e`` with the scalar as an operand of stride 0, as the scalar op computes it
    (the scalar made a value of x's dtype, NumPy's weak-scalar rule); None when the short
    road does not apply (the general path then runs ``op``)."""
    cdef int t
    cdef char* args[3]
    cdef cnp.npy_intp steps[3]
    cdef float s32
    cdef NDArray out
    if e.kind != K_BINARY or e.op.name not in _SCALAR_ROAD:
        return None
    t = _fast_type(e, x)
    if t == cnp.NPY_FLOAT32:
        if s == s and fabs(s) > FLT_MAX and not isinf(s):
            return None        # NumPy warns of the overflow: the general path
        s32 = <float>s
        args[1] = <char*>&s32
    elif t == cnp.NPY_FLOAT64:
        args[1] = <char*>&s
    else:
        return None
    if in_place:
        if ndrt_flags[FLAG_RECORDING]:
            return None        # the general path checks writes into the tape first
        out = x
    elif x._donated:           # see fast_binary
        x._donated = False
        out = x
    else:
        out = new_dense(x._shape, x._dtype, x._chunk.ctx, 0)
    args[0] = <char*>(x._chunk.ptr() + x._offset)
    args[2] = <char*>(out._chunk.ptr() + out._offset)
    steps[0] = steps[2] = (<cnp.dtype>x._dtype).itemsize
    steps[1] = 0
    if reverse:
        args[0], args[1] = args[1], args[0]
        steps[0], steps[1] = steps[1], steps[0]
    _run_loop(e, t, args, x._size(), steps)
    out._chunk.bump()
    if ndrt_flags[FLAG_RECORDING] and x._entry is not None:
        record(op, {"scalar": s}, None, [x], [out])
    return out


cdef object unary_impl(str name, object a):
    cdef _OpEntry e = _by_name[name]
    cdef object res = fast_unary(e, <NDArray>a)
    if res is not None:
        return res
    return _invoke(e.op, [a], e.defaults, None, None, None, e, True)


cdef object reduce_impl(str name, object x, dict kwargs):
    """x.sum / mean / max / min(**kwargs): without keywords on the short road when it
    applies, with attribute keywords on the general path; None leaves the call to the
    nd function (out=, req=, positional arguments)."""
    cdef _OpEntry e = _by_name.get(name)
    cdef object res
    if e is None:
        return None
    if not kwargs:
        res = fast_reduce(e, <NDArray>x)
        if res is not None or e.defaults is None:
            return res
        return _invoke(e.op, [x], e.defaults, None, None, None, e, True)
    if "out" in kwargs or "req" in kwargs or "data" in kwargs:
        return None
    return _invoke(e.op, [x], e.parse(kwargs), None, None, None, e, True)


set_operator_impl(binary_impl, unary_impl, reduce_impl)


@cython.final
cdef class OpFunction:
    """The ``nd`` function of one operator, called as MXNet's generated functions are:
    ``f(*arrays, *attrs, out=None, name=None, **attrs)``.

    Positional arguments fill the op's array inputs first (``op.inputs``), then its
    attributes in their declaration order (``op.attrs``, MXNet's documented signature:
    ``nd.sum(x, 1, True)``, ``nd.clip(x, 0, 1)``); ops taking any number of arrays
    (``concat``, ``add_n``) take every positional argument as an array.  Arrays may also
    come by their input names (``nd.FullyConnected(data=x, ...)``); a trailing optional
    input (``bias`` of FullyConnected) may be None or left out.  Binary arithmetic takes a
    Python number on either side (the op's scalar forms); ``name`` is accepted and ignored
    (as MXNet in imperative mode); plain calls of ops with a ufunc take the direct
    ufunc-loop road.
    """
    cdef object op
    cdef _OpEntry e
    cdef tuple names
    cdef tuple attr_names
    cdef bint star            # every positional argument is an array (concat, add_n)
    cdef bint optional        # trailing inputs may be None or left out (FullyConnected)
    cdef bint compact         # any optional input may be None or left out (CTCLoss)
    cdef readonly str __name__
    cdef readonly object __doc__

    def __init__(self, op, doc=None):
        self.op = op
        self.e = _entry(op)
        self.names = tuple(op.inputs)
        self.attr_names = tuple(op.attrs)
        self.star = op.variadic and len(self.names) <= 1
        self.optional = op.variadic and len(self.names) > 1
        self.compact = op.flagged_inputs
        self.__name__ = op.name
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        cdef object res = None, out = None, req = None
        cdef _OpEntry e = self.e
        cdef Py_ssize_t n = len(args)
        if kwargs:
            out = kwargs.pop("out", None)
            req = kwargs.pop("req", None)
            kwargs.pop("name", None)       # MXNet's symbol name: ignored in imperative mode
        elif e.kind != K_NONE:
            if n == 1 and type(args[0]) is NDArray:
                if e.kind == K_UNARY:
                    res = fast_unary(e, <NDArray>args[0])
                else:
                    res = fast_reduce(e, <NDArray>args[0])
            elif n == 2 and type(args[0]) is NDArray and type(args[1]) is NDArray:
                res = fast_binary(e, <NDArray>args[0], <NDArray>args[1], None)
            if res is not None:
                return res
        try:
            return self._call(args, kwargs, out, req)
        except (ValueError, TypeError, IndexError) as exc:
            raise as_mxnet_error(exc)

    cdef object _call(self, tuple args, dict kwargs, object out, object req):
        """The call after the short roads: arguments sorted into arrays and attributes."""
        cdef _OpEntry e = self.e
        cdef Py_ssize_t n = len(args), n_in = len(self.names)
        if self.star or n <= n_in:
            arrays = list(args)
        else:
            arrays = list(args[:n_in])
            kwargs = self._positional_attrs(args, n_in, kwargs)
        if not self.star and (kwargs or self.optional):
            arrays = self._named_inputs(arrays, kwargs)
        if e.scalar_op is not None and len(arrays) == 2:
            if isinstance(arrays[0], NDArray) and _is_scalar(arrays[1]):
                return _invoke(e.scalar_op, [arrays[0]], {"scalar": float(arrays[1])}, out,
                               req, None)
            if isinstance(arrays[1], NDArray) and _is_scalar(arrays[0]):
                return _invoke(e.rscalar_op, [arrays[1]], {"scalar": float(arrays[0])}, out,
                               req, None)
        for v in arrays:
            if not isinstance(v, NDArray):
                self._not_an_array(arrays)
        if kwargs:
            return _invoke(self.op, arrays, e.parse(kwargs), out, req, None, e, True)
        if e.defaults is None:
            return _invoke(self.op, arrays, self.op.parse_attrs(kwargs), out, req, None)
        return _invoke(self.op, arrays, e.defaults, out, req, None, e, True)

    cdef int _not_an_array(self, list arrays) except -1:
        """TypeError naming the first input of ``arrays`` that is not an NDArray."""
        cdef Py_ssize_t i
        for i in range(len(arrays)):
            v = arrays[i]
            if isinstance(v, NDArray):
                continue
            arg = self.names[i] if i < len(self.names) and not self.star else f"#{i}"
            got = f"{type(v).__name__} {v!r}" if _is_scalar(v) or v is None or isinstance(
                v, str) else type(v).__name__
            hint = ("; attributes come after the array inputs "
                    f"({', '.join(self.names)})" if self.attr_names and not self.star else "")
            raise TypeError(f"{self.op.name}: input {arg} must be an NDArray (got {got})"
                            + hint)
        return 0

    cdef dict _positional_attrs(self, tuple args, Py_ssize_t n_in, dict kwargs):
        """``kwargs`` with the positional arguments after the ``n_in`` array inputs added
        under the attribute names, in declaration order (MXNet's signature)."""
        cdef Py_ssize_t i, n = len(args)
        cdef str k
        if n - n_in > len(self.attr_names):
            takes = f"{n_in} array input(s) ({', '.join(self.names)})"
            if self.attr_names:
                takes += (f" and {len(self.attr_names)} attribute(s) "
                          f"({', '.join(self.attr_names)}) by position")
            raise TypeError(f"{self.op.name}: takes {takes} (got {n})")
        kwargs = dict(kwargs) if kwargs else {}
        for i in range(n_in, n):
            k = self.attr_names[i - n_in]
            v = args[i]
            if isinstance(v, NDArray):
                raise TypeError(f"{self.op.name}: argument {k!r} (position {i + 1}) is an "
                                f"attribute, not an array (got an NDArray of shape "
                                f"{v.shape}); the array inputs are "
                                f"{', '.join(self.names)}")
            if k in kwargs:
                raise TypeError(f"{self.op.name}: got multiple values for argument {k!r} "
                                f"(position {i + 1} and keyword)")
            kwargs[k] = v
        return kwargs

    cdef list _named_inputs(self, list arrays, dict kwargs):
        """``arrays`` followed by the inputs given by name (popped from ``kwargs``); for
        ops with optional trailing inputs, the trailing Nones dropped; for ops whose
        inputs are present by their attributes (``flagged_inputs``), every None and
        missing input skipped, as MXNet's generated functions do."""
        cdef Py_ssize_t i, n = len(arrays)
        cdef str name
        missing = None
        for i in range(n, len(self.names)):
            name = self.names[i]
            if name not in kwargs:
                missing = name
                continue
            v = kwargs.pop(name)
            if missing is not None and v is not None and not self.compact:
                raise TypeError(f"{self.op.name}: input {missing} is missing before input "
                                f"{name}")
            arrays.append(v)
        if self.compact:
            arrays = [v for v in arrays if v is not None]
        if self.optional:
            while arrays and arrays[len(arrays) - 1] is None:
                arrays.pop()
        for name in self.names[:n]:
            if name in kwargs:
                raise TypeError(f"{self.op.name}: got multiple values for input {name} (by "
                                "position and keyword)")
        return arrays

    def __repr__(self):
        return f"<nd function {self.__name__}>"


# -- storage fallback --------------------------------------------------------------------

_FALLBACK_MODES = ("warn", "silent", "error")
_fallback = {"mode": None}
cdef set _warned = set()
cdef Py_ssize_t _fallbacks = 0       # storage fallbacks run (every mode), since import


def storage_fallback_count():
    """How many operator calls took the storage fallback since import, in every mode
    ('silent' ones too; 'error' counts the refused calls).  Read it before and after a
    piece of work to know whether that work fell back: the warning comes only once per
    operator, storage types and reason."""
    return _fallbacks


def set_storage_fallback(mode):
    """What an operator without a kernel for sparse inputs does: 'warn' (densify and
    warn once per op and storage types), 'silent' (densify), 'error' (raise
    StorageFallbackError).  The default comes from NDRT_STORAGE_FALLBACK ('warn').

    Returns the previous mode.
    """
    if mode not in _FALLBACK_MODES:
        raise ValueError(f"storage fallback mode must be one of {', '.join(_FALLBACK_MODES)} "
                         f"(got {mode!r})")
    old = get_storage_fallback()
    _fallback["mode"] = mode
    return old


def get_storage_fallback():
    mode = _fallback["mode"]
    if mode is None:
        env = os.environ.get("NDRT_STORAGE_FALLBACK", "warn")
        if env not in _FALLBACK_MODES:
            raise ValueError(f"NDRT_STORAGE_FALLBACK must be one of "
                             f"{', '.join(_FALLBACK_MODES)} (got {env!r})")
        mode = _fallback["mode"] = env
    return mode


# -- inference, cached per signature -----------------------------------------------------

cdef enum:
    MODE_DENSE = 0
    MODE_SPARSE = 1
    MODE_FALLBACK = 2
cdef dict _MODES = {"dense": MODE_DENSE, "sparse": MODE_SPARSE, "fallback": MODE_FALLBACK}

# Signatures kept at most; a full cache is emptied (an attribute that takes a new value
# every call, such as a decaying scalar, must not grow it without bound).
cdef Py_ssize_t INFER_CACHE_SIZE = 4096
cdef dict _infer_cache = {}
cdef Py_ssize_t _hits = 0, _misses = 0
cdef Py_ssize_t _cache_gen = 0        # bumped whenever the cache is emptied (entry memos)


@cython.final
cdef class _Inferred:
    """What inference says of one signature (the cache's value; never modified)."""
    cdef tuple shapes        # of the outputs (tuples of ints)
    cdef tuple dtypes
    cdef tuple stypes        # names
    cdef Py_ssize_t n_out
    cdef int mode            # MODE_*
    cdef tuple in_stypes     # names of the inputs' storage types (None: all dense)
    cdef str why             # of a fallback that the sparse kernel's check asked for
    cdef tuple mutates       # inputs the op writes
    cdef object prepare      # the op's prepare (None: a stateless op)


def clear_inference_cache():
    """Forget every cached inference (and the hit and miss counts).  An op's infer_*
    functions and its ``prepare`` are read when a signature is first seen: clear the
    cache after replacing them."""
    global _hits, _misses, _cache_gen
    _infer_cache.clear()
    _hits = _misses = 0
    _cache_gen += 1


def inference_cache_info():
    """{'hits', 'misses', 'size', 'max_size'} of the invoker's inference cache."""
    return {"hits": _hits, "misses": _misses, "size": len(_infer_cache),
            "max_size": INFER_CACHE_SIZE}


cdef tuple _signature(object op, dict attrs, list inputs, Py_ssize_t n_in, _OpEntry e):
    """One flat tuple: the op, each attribute's name and value (or the op's entry when
    they are its defaults), then each input's shape and a code of its dtype and storage
    type."""
    cdef _OpEntry defaults = e if e is not None and attrs is e.defaults else None
    cdef Py_ssize_t n_attrs = 0 if defaults is not None else len(attrs)
    cdef Py_ssize_t i, j = 1, pos = 0
    cdef frozenset free = None
    cdef tuple key
    cdef PyObject* k
    cdef PyObject* v
    cdef NDArray x
    cdef object s, c
    if n_attrs:
        free = e.free if e is not None else _free_attrs(op)
        if free is not None:
            for name in free:
                if name in attrs:
                    n_attrs -= 1
    key = PyTuple_New(1 + (1 if defaults is not None else 2 * n_attrs) + 2 * n_in)
    Py_INCREF(op)
    PyTuple_SET_ITEM(key, 0, op)
    if defaults is not None:
        Py_INCREF(defaults)
        PyTuple_SET_ITEM(key, 1, defaults)
        j = 2
    while n_attrs and PyDict_Next(attrs, &pos, &k, &v):
        if free is not None and <object>k in free:
            continue
        Py_INCREF(<object>k)
        PyTuple_SET_ITEM(key, j, <object>k)
        Py_INCREF(<object>v)
        PyTuple_SET_ITEM(key, j + 1, <object>v)
        j += 2
    for i in range(n_in):
        x = <NDArray>inputs[i]
        s = x._shape
        Py_INCREF(s)
        PyTuple_SET_ITEM(key, j, s)
        c = _code(x)
        Py_INCREF(c)
        PyTuple_SET_ITEM(key, j + 1, c)
        j += 2
    return key


cdef tuple _kwargs_key(dict kwargs):
    """Keyword attributes as a key that tells their types apart (name, type, value, ...),
    or None when a value is not of a plain type (int, float, bool, None, str, a tuple of
    ints)."""
    cdef Py_ssize_t j = 0, pos = 0
    cdef tuple key = PyTuple_New(3 * len(kwargs))
    cdef PyObject* k
    cdef PyObject* v
    cdef object t
    while PyDict_Next(kwargs, &pos, &k, &v):
        t = type(<object>v)
        if t is tuple:
            for a in <tuple>v:
                if type(a) is not int:
                    return None
        elif not (t is int or t is float or t is bool or t is str or <object>v is None):
            return None
        Py_INCREF(<object>k)
        PyTuple_SET_ITEM(key, j, <object>k)
        Py_INCREF(t)
        PyTuple_SET_ITEM(key, j + 1, t)
        Py_INCREF(<object>v)
        PyTuple_SET_ITEM(key, j + 2, <object>v)
        j += 3
    return key


cdef inline int _code(NDArray x) noexcept:
    # NDArray dtypes are native and canonical: the type number names one.
    return (<cnp.dtype>x._dtype).type_num * 4 + x._stype


cdef object _MISSING = object()


cdef bint _same_attrs(dict a, dict b, frozenset free) except -1:
    """``a == b``, leaving out the attributes named in ``free`` (None: none)."""
    cdef Py_ssize_t pos = 0
    cdef PyObject* k
    cdef PyObject* v
    if free is None:
        return a == b
    if len(a) != len(b):
        return False
    while PyDict_Next(a, &pos, &k, &v):
        if <object>k in free:
            continue
        w = b.get(<object>k, _MISSING)
        if w is _MISSING or not (w is <object>v or w == <object>v):
            return False
    return True


cdef bint _memo_hit(_OpEntry e, dict attrs, list inputs, Py_ssize_t n_in) except -1:
    """True when the op's last inference is this call's: equal attributes (the same dict
    when the entry owns it), inputs of the same shapes and codes."""
    cdef Py_ssize_t i
    cdef NDArray x
    cdef tuple m = e.memo_inputs
    if (e.memo_inf is None or e.memo_gen != _cache_gen or len(m) != 2 * n_in
            or (e.memo_attrs is not attrs and not _same_attrs(e.memo_attrs, attrs, e.free))):
        return False
    for i in range(n_in):
        x = <NDArray>inputs[i]
        s = m[2 * i]
        if (x._shape is not s and x._shape != s) or <int>m[2 * i + 1] != _code(x):
            return False
    return True


cdef _Inferred _infer(object op, dict attrs, list inputs, Py_ssize_t n_in, _OpEntry e,
                      bint owned):
    """Inference of ``op`` on ``inputs``, from the cache when the signature was seen.

    Attribute values of typed kinds are canonical Python objects (Attr.parse), so equal
    signatures mean equal inference; ops with an 'any' attribute, and unhashable
    attribute values, are never cached.  A failed inference raises every time.  The
    op's entry ``e`` (None for an op registered after connect) remembers its last
    signature, which answers without building the key; ``owned``: ``attrs`` is a dict
    of the entry's."""
    global _hits, _misses, _cache_gen
    cdef _Inferred inf
    cdef tuple key
    if e is not None and _memo_hit(e, attrs, inputs, n_in):
        _hits += 1
        return e.memo_inf
    key = _signature(op, attrs, inputs, n_in, e)
    try:
        inf = _infer_cache.get(key)
    except TypeError:          # an unhashable attribute value
        key = None
        inf = None
    if inf is not None:
        _hits += 1
    else:
        _misses += 1
        inf = _infer_now(op, attrs, inputs, n_in)
        if key is None or not all(a.typed for a in op.attrs.values()):
            return inf
        if len(_infer_cache) >= INFER_CACHE_SIZE:
            _infer_cache.clear()
            _cache_gen += 1
        _infer_cache[key] = inf
    if e is not None:          # the inference last, so that a half-made memo never hits
        e.memo_inf = None
        e.memo_attrs = attrs if owned else dict(attrs)
        e.memo_inputs = key[len(key) - 2 * n_in:]
        e.memo_gen = _cache_gen
        e.memo_inf = inf
    return inf


cdef int _check_count(object op, Py_ssize_t n_in) except -1:
    if not op.variadic and n_in != len(op.inputs):
        raise TypeError(f"{op.name}: takes {len(op.inputs)} array input(s) "
                        f"({', '.join(op.inputs)}) (got {n_in})")
    if op.variadic and n_in == 0:
        raise TypeError(f"{op.name}: needs at least one array input")
    return 0


cdef _Inferred _infer_now(object op, dict attrs, list inputs, Py_ssize_t n_in):
    cdef _Inferred inf = _Inferred.__new__(_Inferred)
    cdef Py_ssize_t i
    cdef bint dense = True
    _check_count(op, n_in)
    shapes = [(<NDArray>x)._shape for x in inputs]
    dtypes = [(<NDArray>x)._dtype for x in inputs]
    for i in range(n_in):
        if (<NDArray>inputs[i])._stype != STYPE_DEFAULT:
            dense = False
            break
    out_shapes = op.infer_shape(attrs, shapes)
    out_dtypes = op.infer_type(attrs, dtypes)
    inf.n_out = len(out_shapes)
    inf.shapes = tuple([tuple(s) for s in out_shapes])
    inf.dtypes = tuple(out_dtypes)
    for i in range(inf.n_out):     # an output too large for int64 bytes, named by its op
        shape_size(inf.shapes[i], np.dtype(inf.dtypes[i]) if i < len(inf.dtypes) else None,
                   f"{op.name}: output shape" if inf.n_out == 1 else
                   f"{op.name}: output {i} shape")
    # a variadic op declares the positions its largest call may write
    inf.mutates = tuple([i for i in op.mutates if i < n_in])
    inf.prepare = op.prepare
    inf.why = None
    if dense and not op.custom_storage:
        inf.in_stypes = None
        inf.stypes = ("default",) * inf.n_out
        inf.mode = MODE_DENSE
        return inf
    inf.in_stypes = tuple([STYPES[(<NDArray>x)._stype] for x in inputs])
    out_stypes, mode = op.infer_storage(attrs, list(inf.in_stypes))
    inf.stypes = tuple(out_stypes)
    inf.mode = _MODES[mode]
    if inf.mode == MODE_SPARSE and op.sparse_check is not None:
        inf.why = op.sparse_check(attrs, shapes, dtypes)
        if inf.why is not None:
            inf.mode = MODE_FALLBACK
    return inf


# -- the profiler's hook ------------------------------------------------------------------

cdef object _profile_hook = None


cdef object profile_hook():
    return _profile_hook


def set_profile_hook(hook):
    """Call ``hook(op_name, ctx, start_ns, end_ns)`` (``time.perf_counter_ns`` clock) after
    the kernel of every operator call; None stops it.  While a hook is set the short roads
    are not taken, so that every call, forward or from a gradient rule, reaches it
    (runtime.profiler sets it)."""
    global _profile_hook
    if hook is not None and not callable(hook):
        raise TypeError(f"set_profile_hook: hook must be callable or None (got {hook!r})")
    _profile_hook = hook


# -- the general path -------------------------------------------------------------------

def invoke(op, inputs, attrs=None, out=None, req=None):
    """Run ``op`` on ``inputs`` with keyword ``attrs`` (validated by the op).

    Parameters
    ----------
    op : runtime.ops.registry.Op
    inputs : list of NDArray
    attrs : dict, optional
    out : NDArray or list of NDArray, optional
        Where to write; an input given as ``out`` is updated in place.
    req : str or list of str, optional
        'write' (default), 'inplace', 'add' (accumulate into ``out``) or 'null' (skip).

    Returns
    -------
    NDArray, or a list of NDArrays for multi-output operators.
    """
    return _invoke(op, list(inputs), op.parse_attrs(attrs or {}), out, req, None)


cpdef object invoke_parsed(object op, list inputs, dict attrs, object out, object req):
    """``invoke`` with attributes already validated (``op.parse_attrs``)."""
    return _invoke(op, inputs, attrs, out, req, None)


def invoke_stateful(op, list inputs, dict attrs, out=None, req=None):
    """``invoke_parsed`` that also returns the call's state: ``(result, state)``, state
    being what ``op.prepare(attrs)`` made for this call (None for ops without
    ``prepare``).  The tape keeps it per node and hands it to the gradient rule."""
    cdef list box = []
    res = _invoke(op, inputs, attrs, out, req, box)
    return res, (box[0] if box else None)


cdef object _invoke(object op, list inputs, dict attrs, object out, object req,
                    list state_box, _OpEntry e=None, bint owned=False):
    """One call: checks, inference, dispatch, write-back.  ``state_box`` receives the
    per-call state; ``e``: the entry of ``op`` when the caller has it; ``owned``:
    ``attrs`` is a dict of that entry (its defaults, or one its parse cache gave).  A
    refusal is raised as an MXNetError that keeps its built-in class
    (``errors.as_mxnet_error``)."""
    try:
        return _invoke_op(op, inputs, attrs, out, req, state_box, e, owned)
    except (ValueError, TypeError, IndexError) as exc:
        raise as_mxnet_error(exc)


cdef object _invoke_op(object op, list inputs, dict attrs, object out, object req,
                       list state_box, _OpEntry e, bint owned):
    cdef Py_ssize_t i, n_in = len(inputs)
    cdef _Inferred inf
    ctx = _check_inputs(op, inputs, n_in)
    if e is None:
        e = _by_op.get(op)
    inf = _infer(op, attrs, inputs, n_in, e, owned)
    if out is None and req is None and inf.mode == MODE_DENSE and inf.n_out == 1:
        out = _donated_input(op, inputs, n_in, inf)
    outs = _outputs(op, out, inf, ctx)
    reqs = _requests(op, req, inf.n_out, outs)
    if ndrt_flags[FLAG_RECORDING] and (out is not None or inf.mutates):
        _refuse_tape_writes(op, outs, inputs, inf.mutates)
    state = None if inf.prepare is None else inf.prepare(attrs)
    if state_box is not None:
        state_box.append(state)
    if req is not None:
        for i in range(inf.n_out):
            if reqs[i] != REQ_NULL:
                break
        else:
            return outs[0] if inf.n_out == 1 else outs
    if _profile_hook is None:
        _dispatch(op, attrs, inputs, outs, reqs, inf, ctx, inf.prepare is not None, state)
    else:
        start = perf_counter_ns()
        _dispatch(op, attrs, inputs, outs, reqs, inf, ctx, inf.prepare is not None, state)
        _profile_hook(op.name, ctx, start, perf_counter_ns())
    if inf.mutates:
        for i in inf.mutates:
            (<NDArray>inputs[i])._chunk.bump()
    if ndrt_flags[FLAG_RECORDING] and on_tape(inputs):
        record(op, attrs, state, inputs, outs)
    return outs[0] if inf.n_out == 1 else outs


cdef object _donated_input(object op, list inputs, Py_ssize_t n_in, _Inferred inf):
    """An input that backward donated (an out-grad nobody else reads) and that the op may
    overwrite with its result (``op.inplace``, same shape and dtype): the result goes
    into it instead of a new array, as on the short roads.  None when there is none."""
    cdef Py_ssize_t j
    cdef NDArray x
    for j in range(n_in):
        x = <NDArray>inputs[j]
        if x._donated:
            if ((j, 0) in op.inplace and x._stype == STYPE_DEFAULT
                    and x._shape == inf.shapes[0] and x._dtype == inf.dtypes[0]):
                x._donated = False
                return x
    return None


cdef int _refuse_tape_writes(object op, list outs, list inputs, tuple mutates) except -1:
    """While recording, an operator must not write into an array on the tape (out=, an
    in-place operator, setitem, or an input it mutates): the gradients recorded from its
    old values would be wrong.  Raised before anything is written, as MXNet does.

    An input that the op mutates may be a variable with grad_req 'null' (MXNet's aux
    states: BatchNorm's moving statistics, marked by a training layer): no gradient
    flows into it, and a node that saved its old value finds the new version at backward
    (the version check), so the write is allowed."""
    cdef Py_ssize_t i
    targets = [o for o in outs if o is not None] + [
        inputs[i] for i in mutates if not _null_variable(<NDArray>inputs[i])]
    for o in targets:
        if (<NDArray>o)._entry is not None:
            raise RuntimeError(
                f"{op.name}: cannot write into an array on the autograd tape while recording "
                f"(shape {o.shape!r}): the gradients recorded from its old values would be "
                "wrong; write outside autograd.record(), or into a copy")
    return 0


cdef bint _null_variable(NDArray x) noexcept:
    """True when ``x`` is a variable whose gradient is not wanted (grad_req 'null')."""
    cdef Entry e = <Entry>x._entry if x._entry is not None else None
    return e is not None and e.node.op is None and e.node.grad_req == 0


cdef object _check_inputs(object op, list inputs, Py_ssize_t n_in):
    """The context of the inputs: NDArrays, all on one context."""
    cdef Py_ssize_t i
    if n_in == 0:
        _check_count(op, n_in)
    for i in range(n_in):
        if not isinstance(inputs[i], NDArray):
            _check_count(op, n_in)
            arg = op.inputs[i] if i < len(op.inputs) and not op.variadic else f"#{i}"
            raise TypeError(f"{op.name}: input {arg} must be an NDArray (got "
                            f"{type(inputs[i]).__name__})")
    ctx = (<NDArray>inputs[0])._chunk.ctx
    for i in range(1, n_in):
        c = (<NDArray>inputs[i])._chunk.ctx
        if c is not ctx and c != ctx:
            raise ValueError(f"{op.name}: all inputs must be on one context (got {ctx} and "
                             f"{c})")
    return ctx


cdef list _outputs(object op, object out, _Inferred inf, object ctx):
    cdef NDArray x
    if out is None:
        return [None] * inf.n_out
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != inf.n_out:
        raise ValueError(f"{op.name}: out must hold {inf.n_out} array(s) (got {len(outs)})")
    for i, o in enumerate(outs):
        if not isinstance(o, NDArray):
            raise TypeError(f"{op.name}: out must be an NDArray (got {type(o).__name__})")
        x = <NDArray>o
        if x._shape != inf.shapes[i]:
            raise ValueError(f"{op.name}: out has shape {x._shape!r}, the result has "
                             f"{inf.shapes[i]!r}")
        if x._dtype != inf.dtypes[i]:
            raise TypeError(f"{op.name}: out has dtype {x._dtype}, the result has "
                            f"{inf.dtypes[i]}")
        if STYPES[x._stype] != inf.stypes[i]:
            raise ValueError(f"{op.name}: out has storage type {STYPES[x._stype]!r}, the "
                             f"result has {inf.stypes[i]!r}")
        if x._chunk.ctx is not ctx and x._chunk.ctx != ctx:
            raise ValueError(f"{op.name}: out is on {x._chunk.ctx}, the inputs on {ctx}")
    return outs


cdef int _req_code(object op, object r) except -1:
    try:
        return _REQ_NAMES[r]
    except (KeyError, TypeError):
        raise ValueError(f"{op.name}: req must be one of null, write, inplace, add "
                         f"(got {r!r})") from None


cdef list _WRITE1 = [REQ_WRITE]


cdef list _requests(object op, object req, Py_ssize_t n_out, list outs):
    """The request of each output (a list nobody modifies)."""
    if req is None:
        return _WRITE1 if n_out == 1 else [REQ_WRITE] * n_out
    rs = list(req) if isinstance(req, (list, tuple)) else [req] * n_out
    if len(rs) != n_out:
        raise ValueError(f"{op.name}: req must hold {n_out} request(s) (got {len(rs)})")
    codes = [_req_code(op, r) for r in rs]
    for i in range(n_out):
        if (codes[i] == REQ_ADD or codes[i] == REQ_INPLACE) and outs[i] is None:
            raise ValueError(f"{op.name}: req {rs[i]!r} needs an out= array to write into")
    return codes


cdef int _dispatch(object op, dict attrs, list inputs, list outs, list reqs, _Inferred inf,
                   object ctx, bint stateful, object state) except -1:
    """Run the kernel that the mode says: dense (into ``outs`` under ``reqs``), sparse or
    the storage fallback (results written back)."""
    if inf.mode == MODE_DENSE:
        return _run_dense(op, attrs, inputs, outs, inf.shapes, inf.dtypes, reqs, ctx,
                          stateful, state)
    if inf.mode == MODE_FALLBACK:
        _fallback_notice(op, inf)
        results = _run_fallback(op, attrs, inputs, inf, ctx, stateful, state)
    elif op.sparse_out:       # the kernel may write into out= (see registry.Op)
        given = [o if r == REQ_WRITE or r == REQ_INPLACE else None
                 for o, r in zip(outs, reqs)]
        results = (op.compute_sparse(attrs, inputs, given, state) if stateful
                   else op.compute_sparse(attrs, inputs, given))
    else:
        results = (op.compute_sparse(attrs, inputs, state) if stateful
                   else op.compute_sparse(attrs, inputs))
        if not isinstance(results, (list, tuple)):
            results = [results]
    return _write_back(outs, results, reqs)


cdef int _fallback_notice(object op, _Inferred inf) except -1:
    """The storage fallback is about to run: count it, warn once per signature, or
    refuse."""
    global _fallbacks
    _fallbacks += 1
    mode = get_storage_fallback()
    if mode == "silent":
        return 0
    stypes = ", ".join(inf.in_stypes)
    what = (f"{op.name}: no kernel for storage types ({stypes})" if inf.why is None else
            f"{op.name}: no sparse kernel for {inf.why} with storage types ({stypes})")
    what += "; the sparse inputs are converted to dense temporaries"
    if mode == "error":
        raise StorageFallbackError(what + " — refused by set_storage_fallback('error')")
    key = (op.name, inf.in_stypes, inf.why)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(what, StorageFallbackWarning, stacklevel=4)
    return 0


cdef list _run_fallback(object op, dict attrs, list inputs, _Inferred inf, object ctx,
                        bint stateful, object state):
    """The dense kernel on dense temporaries (pool memory), results cast to the inferred
    storage types."""
    cdef Py_ssize_t n = inf.n_out
    # cast_storage's kernels directly: a conversion inside an operator is not an operator
    # call of its own (nothing to record)
    dense_in = [x if (<NDArray>x)._stype == STYPE_DEFAULT else cast_storage(x, "default")
                for x in inputs]
    tmp = [None] * n
    _run_dense(op, attrs, dense_in, tmp, inf.shapes, inf.dtypes, [REQ_WRITE] * n, ctx,
               stateful, state)
    return [t if s == "default" else cast_storage(t, s) for t, s in zip(tmp, inf.stypes)]


cdef int _write_back(list outs, object results, list reqs) except -1:
    """Sparse-path results into ``outs`` under their requests."""
    cdef Py_ssize_t i
    for i in range(len(outs)):
        if reqs[i] == REQ_NULL:
            continue
        if outs[i] is None:
            outs[i] = results[i]
        elif results[i] is outs[i]:     # written in place by a sparse_out kernel
            (<NDArray>outs[i])._chunk.bump()
        elif reqs[i] == REQ_ADD:
            add = (<_OpEntry>_by_name["add"]).op
            assign(outs[i], _invoke(add, [outs[i], results[i]], {}, None, None, None))
        else:
            assign(outs[i], results[i])
    return 0


cdef list _views(list arrays, bint host):
    """The kernel's arrays: NumPy views of host memory, CuPy views of device memory."""
    cdef Py_ssize_t i, n = len(arrays)
    cdef list views
    cdef object v
    if not host:
        return [_device.cupy_view(a) for a in arrays]
    views = PyList_New(n)
    for i in range(n):
        v = np_view(<NDArray>arrays[i])
        Py_INCREF(v)
        PyList_SET_ITEM(views, i, v)
    return views


cdef int _run_dense(object op, dict attrs, list inputs, list outs, tuple shapes, tuple dtypes,
                    list reqs, object ctx, bint stateful, object state) except -1:
    """Run the dense kernel so that each output honours its request."""
    cdef Py_ssize_t i, n_out = len(outs)
    cdef int r
    cdef list post = None
    cdef bint host = (<NDArray>inputs[0])._chunk.host
    compute = op.compute
    if compute is None:
        raise NotImplementedError(f"{op.name}: no dense kernel")
    if not host:
        _check_cupy(op, ctx)
    if n_out > 1 and op.null_outputs:
        return _run_dense_skipping(op, attrs, inputs, outs, shapes, dtypes, reqs, ctx,
                                   host, stateful, state)
    for i in range(n_out):
        if outs[i] is None:
            outs[i] = new_dense(shapes[i], dtypes[i], ctx, 0)
    ins = _views(inputs, host)
    views = _views(outs, host)
    kernel_outs = views
    for i in range(n_out):
        r = reqs[i]
        if r == REQ_ADD or r == REQ_NULL or _aliases(op, i, <NDArray>outs[i], inputs):
            if post is None:
                post = []
                kernel_outs = list(views)
            kernel_outs[i] = np.empty_like(views[i])
            if r != REQ_NULL:
                post.append((i, r))
    _compute(op, compute, attrs, ins, kernel_outs, stateful, state)
    return _finish(post, views, kernel_outs, outs, reqs)


cdef int _finish(list post, list views, list kernel_outs, list outs, list reqs) except -1:
    """After the kernel: temporaries (``post``: (output, request)) added or copied into
    their outputs; every output written gets a new version."""
    cdef Py_ssize_t i
    cdef int r
    if post is not None:
        for i, r in post:
            if r == REQ_ADD:
                np.add(views[i], kernel_outs[i], out=views[i])
            else:
                views[i][...] = kernel_outs[i]
    for i in range(len(outs)):
        if reqs[i] != REQ_NULL:
            (<NDArray>outs[i])._chunk.bump()
    return 0


cdef int _compute(object op, object compute, dict attrs, list ins, list outs, bint stateful,
                  object state) except -1:
    """The dense kernel's call; a NumPy error from inside it names the operator."""
    try:
        if stateful:
            compute(attrs, ins, outs, state)
        else:
            compute(attrs, ins, outs)
    except (ValueError, TypeError, ArithmeticError, IndexError) as e:
        if str(e).startswith(op.name + ":"):
            raise
        raise type(e)(f"{op.name}: {e}") if type(e).__module__ == "builtins" else \
            _builtin_type(e)(f"{op.name}: {e}") from None
    return 0


cdef int _run_dense_skipping(object op, dict attrs, list inputs, list outs, tuple shapes,
                             tuple dtypes, list reqs, object ctx, bint host, bint stateful,
                             object state) except -1:
    """``_run_dense`` for an op with ``null_outputs``: an output of request null is
    neither made nor computed (the kernel gets None there; a result the caller did not
    pass stays None)."""
    cdef Py_ssize_t i, n_out = len(outs)
    cdef int r
    cdef list post = None
    cdef list kernel_outs = [None] * n_out
    cdef list views = [None] * n_out
    ins = _views(inputs, host)
    for i in range(n_out):
        r = reqs[i]
        if r == REQ_NULL:
            continue
        if outs[i] is None:
            outs[i] = new_dense(shapes[i], dtypes[i], ctx, 0)
        views[i] = _views([outs[i]], host)[0]
        if r == REQ_ADD or _aliases(op, i, <NDArray>outs[i], inputs):
            if post is None:
                post = []
            kernel_outs[i] = np.empty_like(views[i])
            post.append((i, r))
        else:
            kernel_outs[i] = views[i]
    _compute(op, op.compute, attrs, ins, kernel_outs, stateful, state)
    return _finish(post, views, kernel_outs, outs, reqs)


cdef type _builtin_type(BaseException e):
    """The first builtin exception class of ``e`` (NumPy's UFuncTypeError -> TypeError)."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return RuntimeError


cdef bint _aliases(object op, Py_ssize_t i, NDArray o, list inputs) except -1:
    """True when output ``i`` shares memory with an input in a way the op cannot do in
    place (the kernel then writes a temporary that is copied over)."""
    cdef Py_ssize_t j
    cdef NDArray x
    for j in range(len(inputs)):
        x = inputs[j]
        if x._chunk is o._chunk:
            if ((j, i) in op.inplace and x._offset == o._offset and x._shape == o._shape):
                continue
            return True
    return False


cdef _check_cupy(object op, object ctx):
    _device.cupy(f"{op.name} on {ctx}")



