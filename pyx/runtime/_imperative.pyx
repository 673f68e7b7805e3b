"""The invocation path of every operator: infer, allocate, assign requests, run, bump.

``invoke(op, inputs, attrs, out, req)`` runs any registered operator.  Elementwise ops on
small dense host arrays take a shorter road: the NumPy ufunc inner loop for the dtype is
looked up once and called directly on pool memory (``fast_binary`` / ``fast_unary``),
which is what keeps the per-op overhead near NumPy's own.
"""
import os
import warnings

import numpy as np

cimport cython
cimport numpy as cnp
from cpython.object cimport PyObject
from libc.stdint cimport uintptr_t
from libc.string cimport memcpy

from runtime._ndarray cimport (STYPE_DEFAULT, Chunk, NDArray, assign, new_dense, np_view,
                               set_operator_impl)

from runtime import _transfer
from runtime._ndarray import as_ctx
from runtime.errors import StorageFallbackError, StorageFallbackWarning

cnp.import_array()
cnp.import_ufunc()

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

# Requests, as MXNet's OpReqType.
cdef enum:
    REQ_NULL = 0
    REQ_WRITE = 1
    REQ_INPLACE = 2
    REQ_ADD = 3
_REQ_NAMES = {"null": REQ_NULL, "write": REQ_WRITE, "inplace": REQ_INPLACE, "add": REQ_ADD}

# Python operator codes shared with runtime._ndarray (see set_operator_impl).
cdef enum:
    N_CODES = 16
    N_TYPES = 32
_BINARY_UFUNCS = {0: np.add, 1: np.subtract, 2: np.multiply, 3: np.true_divide,
                  4: np.mod, 5: np.power, 6: np.equal, 7: np.not_equal, 8: np.less,
                  9: np.less_equal, 10: np.greater, 11: np.greater_equal,
                  13: np.maximum, 14: np.minimum}
_UNARY_UFUNCS = {0: np.negative, 1: np.absolute, 2: np.exp, 3: np.log, 4: np.sqrt,
                 5: np.tanh, 6: np.square, 7: np.sin, 8: np.cos}

cdef loop_t binary_loops[N_CODES][N_TYPES]
cdef void* binary_data[N_CODES][N_TYPES]
cdef loop_t unary_loops[N_CODES][N_TYPES]
cdef void* unary_data[N_CODES][N_TYPES]
# Operator objects of the registry behind each code (filled by runtime.ops).
cdef list _binary_ops = [None] * N_CODES
cdef list _scalar_ops = [None] * N_CODES
cdef list _rscalar_ops = [None] * N_CODES
cdef list _unary_ops = [None] * N_CODES
cdef bint _fast_enabled = True
cdef bint _recording = False


cdef str _fast_note = "not set up"


cdef int _find_loops(dict table, loop_t loops[N_CODES][N_TYPES],
                     void* data[N_CODES][N_TYPES], int nargs) except -1:
    """For each ufunc, the legacy inner loop whose operand types all equal one type.

    The loop is chosen by the public ``ufunc.types`` strings; the C struct only gives the
    function and data pointers, after its counts and type numbers are checked against
    what the ufunc reports through Python.  Raises RuntimeError when they disagree.
    """
    cdef _UFuncFields* uf
    cdef int code, i, j, t
    for code in range(N_CODES):
        for t in range(N_TYPES):
            loops[code][t] = NULL
            data[code][t] = NULL
    for code, f in table.items():
        if not isinstance(f, np.ufunc):
            raise RuntimeError(f"{f!r} is not a NumPy ufunc")
        uf = <_UFuncFields*><PyObject*>f
        if uf.nargs != f.nargs or uf.nin != f.nin or uf.ntypes != f.ntypes:
            raise RuntimeError(f"np.{f.__name__}: the C ufunc struct disagrees with the "
                               f"ufunc's attributes (nargs {uf.nargs} vs {f.nargs})")
        if f.nargs != nargs:
            continue
        for i, sig in enumerate(f.types):
            chars = sig.replace("->", "")
            if len(set(chars)) != 1 or np.dtype(chars[0]).kind not in "biuf":
                continue
            t = np.dtype(chars[0]).num
            for j in range(nargs):
                if uf.types[i * nargs + j] != t:
                    raise RuntimeError(f"np.{f.__name__}: loop {i} is {sig!r} in ufunc.types "
                                       "but not in the C ufunc struct")
            if t < N_TYPES and loops[code][t] == NULL and uf.functions[i] != NULL:
                loops[code][t] = <loop_t>uf.functions[i]
                data[code][t] = uf.data[i]
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


cdef bint _probe(object f, loop_t fn, void* fdata, object dtype, int nargs, bint corrupt):
    """Call ``fn`` on a few values and compare with NumPy's own call, bit for bit."""
    cdef char* args[3]
    cdef cnp.npy_intp n = 4
    cdef cnp.npy_intp steps[3]
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


cdef int _drop_failing(dict table, loop_t loops[N_CODES][N_TYPES],
                       void* data[N_CODES][N_TYPES], int nargs, bint corrupt,
                       list failed) except -1:
    cdef int code, t
    for code, f in table.items():
        for t in range(N_TYPES):
            if loops[code][t] != NULL and not _probe(f, loops[code][t], data[code][t],
                                                      np.dtype(cnp.PyArray_DescrFromType(t)),
                                                      nargs, corrupt):
                failed.append(f"{f.__name__}[{np.dtype(cnp.PyArray_DescrFromType(t))}]")
                loops[code][t] = NULL
                data[code][t] = NULL
    return 0


def _init_fast_path(bint _corrupt_probe=False):
    """Find NumPy's inner loops for the fast path and check each on a probe.

    Any loop whose probe differs from NumPy's result is dropped (its calls take the
    general path); if the ufunc struct cannot be read consistently, the whole fast path
    is off.  Never raises: the general path always works.  ``_corrupt_probe`` makes every
    probe fail (tests use it to check the fallback).  Returns the one-line note that
    ``fast_path_note()`` gives.
    """
    global _fast_note, _fast_enabled
    cdef list failed = []
    cdef int n_loops = 0, code, t
    try:
        _find_loops(_BINARY_UFUNCS, binary_loops, binary_data, 3)
        _find_loops(_UNARY_UFUNCS, unary_loops, unary_data, 2)
        _drop_failing(_BINARY_UFUNCS, binary_loops, binary_data, 3, _corrupt_probe, failed)
        _drop_failing(_UNARY_UFUNCS, unary_loops, unary_data, 2, _corrupt_probe, failed)
    except Exception as e:
        for code in range(N_CODES):
            for t in range(N_TYPES):
                binary_loops[code][t] = unary_loops[code][t] = NULL
        _fast_enabled = False
        _fast_note = (f"off (NumPy {np.__version__}: {e}); every operator takes the "
                      "general path")
        return _fast_note
    for code in range(N_CODES):
        for t in range(N_TYPES):
            n_loops += (binary_loops[code][t] != NULL) + (unary_loops[code][t] != NULL)
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


_init_fast_path()


cdef list _binary_defaults = [None] * N_CODES


def _register_codes(binary, scalar, rscalar, unary):
    """runtime.ops tells which registry op implements each Python operator code."""
    for code, op in binary.items():
        _binary_ops[code] = op
        _binary_defaults[code] = op.parse_attrs({})
    for code, op in scalar.items():
        _scalar_ops[code] = op
    for code, op in rscalar.items():
        _rscalar_ops[code] = op
    for code, op in unary.items():
        _unary_ops[code] = op


def set_fast_path(bint enabled):
    """Turn the direct ufunc-loop path off (tests compare both roads)."""
    global _fast_enabled
    _fast_enabled = enabled


def set_recording(bint on):
    global _recording
    _recording = on


# Elementwise work below this size runs with the GIL held (the release costs more).
cdef Py_ssize_t NOGIL_MIN = 1 << 15


cdef object fast_binary(int code, NDArray a, NDArray b, NDArray out):
    """``a <op> b`` through the ufunc loop, or None when the short road does not apply."""
    cdef loop_t fn
    cdef int t
    cdef char* args[3]
    cdef cnp.npy_intp n
    cdef cnp.npy_intp steps[3]
    cdef void* data
    if (not _fast_enabled or _recording or a._stype != STYPE_DEFAULT
            or b._stype != STYPE_DEFAULT or not a._chunk.host or not b._chunk.host
            or a._dtype is not b._dtype):
        return None
    if a._shape is not b._shape and a._shape != b._shape:
        return None
    t = (<cnp.dtype>a._dtype).type_num
    if t >= N_TYPES or code >= N_CODES:
        return None
    if code == 5 and (<cnp.dtype>a._dtype).kind != "f":
        return None   # integer power raises for negative exponents: the general path
    fn = binary_loops[code][t]
    if fn == NULL:
        return None
    if a._chunk.ctx is not b._chunk.ctx and a._chunk.ctx != b._chunk.ctx:
        return None
    if out is None:
        out = new_dense(a._shape, a._dtype, a._chunk.ctx, 0)
    elif (out._stype != STYPE_DEFAULT or out._dtype is not a._dtype or not out._chunk.host
          or (out._shape is not a._shape and out._shape != a._shape)
          or _shifted_overlap(a, out) or _shifted_overlap(b, out)):
        return None
    data = binary_data[code][t]
    n = a._size()
    steps[0] = steps[1] = steps[2] = (<cnp.dtype>a._dtype).itemsize
    args[0] = <char*>(a._chunk.ptr() + a._offset)
    args[1] = <char*>(b._chunk.ptr() + b._offset)
    args[2] = <char*>(out._chunk.ptr() + out._offset)
    if n >= NOGIL_MIN:
        with nogil:
            fn(args, &n, steps, data)
    elif n:
        fn(args, &n, steps, data)
    out._chunk.bump()
    return out


cdef inline bint _shifted_overlap(NDArray x, NDArray out):
    """True when ``x`` and ``out`` share bytes without starting at the same one: the loop
    would read elements it has already written (``x[1:] += x[:-1]``).  Exactly aliased
    operands are fine for an elementwise loop."""
    cdef Py_ssize_t nbytes
    if x._chunk is not out._chunk or x._offset == out._offset:
        return False
    nbytes = x._size() * (<cnp.dtype>x._dtype).itemsize
    return x._offset < out._offset + nbytes and out._offset < x._offset + nbytes


cdef object fast_unary(int code, NDArray a):
    cdef loop_t fn
    cdef int t
    cdef char* args[2]
    cdef cnp.npy_intp n
    cdef cnp.npy_intp steps[2]
    cdef NDArray out
    if (not _fast_enabled or _recording or a._stype != STYPE_DEFAULT or not a._chunk.host):
        return None
    t = (<cnp.dtype>a._dtype).type_num
    if t >= N_TYPES:
        return None
    fn = unary_loops[code][t]
    if fn == NULL:
        return None
    out = new_dense(a._shape, a._dtype, a._chunk.ctx, 0)
    n = a._size()
    steps[0] = steps[1] = (<cnp.dtype>a._dtype).itemsize
    args[0] = <char*>(a._chunk.ptr() + a._offset)
    args[1] = <char*>(out._chunk.ptr() + out._offset)
    if n >= NOGIL_MIN:
        with nogil:
            fn(args, &n, steps, unary_data[code][t])
    elif n:
        fn(args, &n, steps, unary_data[code][t])
    return out


cdef bint _is_scalar(object v):
    return (type(v) is float or type(v) is int or type(v) is bool
            or isinstance(v, (np.integer, np.floating, np.bool_)))


cdef object binary_impl(int code, object a, object b, int flags):
    """The NDArray Python operators: ``a <op> b`` (flags: 1 reflected, 2 in place)."""
    cdef object res
    if flags & 1:
        a, b = b, a
    if isinstance(a, NDArray) and isinstance(b, NDArray):
        if code < N_CODES:
            res = fast_binary(code, <NDArray>a, <NDArray>b, <NDArray>a if flags & 2 else None)
            if res is not None:
                return res
        op = _binary_ops[code]
        if op is None:
            return NotImplemented
        return invoke_parsed(op, [a, b], dict(_binary_defaults[code]), a if flags & 2 else None,
                             None)
    if isinstance(a, NDArray) and _is_scalar(b):
        op = _scalar_ops[code]
        x = a
    elif isinstance(b, NDArray) and _is_scalar(a):
        op = _rscalar_ops[code]
        x, b = b, a
    else:
        # As MXNet: refuse rather than defer, or NumPy would take over an ndarray operand.
        other = b if isinstance(a, NDArray) else a
        raise TypeError(f"NDArray operators take an NDArray or a Python number as the other "
                        f"operand (got {type(other).__module__}.{type(other).__name__}); "
                        "convert it with nd.array()")
    if op is None:
        return NotImplemented
    return invoke_parsed(op, [x], {"scalar": float(b)}, x if flags & 2 else None, None)


@cython.final
cdef class OpFunction:
    """The ``nd`` function of one operator: ``f(*arrays, out=None, req=None, **attrs)``.

    Arrays may also come by their input names (``nd.FullyConnected(data=x, ...)``), in
    order; binary arithmetic takes a Python number on either side (its scalar form);
    plain calls of elementwise ops and full reductions take the direct ufunc-loop road.
    """
    cdef object op
    cdef tuple names
    cdef object scalar_ops          # (op for array <op> s, op for s <op> array) or None
    cdef dict defaults              # parsed attributes when none are given (None: required)
    cdef int unary_code, binary_code, reduce_code
    cdef bint reduce_mean
    cdef readonly str __name__
    cdef readonly object __doc__

    def __init__(self, op, scalar_ops=None, int unary_code=-1, int binary_code=-1,
                 int reduce_code=-1, bint reduce_mean=False, doc=None):
        self.op = op
        self.names = tuple(op.inputs)
        self.scalar_ops = scalar_ops
        try:
            self.defaults = op.parse_attrs({})
        except TypeError:
            self.defaults = None
        self.unary_code = unary_code
        self.binary_code = binary_code
        self.reduce_code = reduce_code
        self.reduce_mean = reduce_mean
        self.__name__ = op.name
        self.__doc__ = doc

    def __call__(self, *args, out=None, req=None, **kwargs):
        cdef object res = None
        cdef Py_ssize_t n = len(args)
        if not kwargs and out is None and req is None:
            if n == 1 and type(args[0]) is NDArray:
                if self.unary_code >= 0:
                    res = fast_unary(self.unary_code, <NDArray>args[0])
                elif self.reduce_code >= 0:
                    res = fast_reduce(self.reduce_code, self.reduce_mean, <NDArray>args[0])
            elif n == 2 and self.binary_code >= 0 and type(args[0]) is NDArray \
                    and type(args[1]) is NDArray:
                res = fast_binary(self.binary_code, <NDArray>args[0], <NDArray>args[1], None)
            if res is not None:
                return res
        arrays = list(args)
        if kwargs:
            for name in self.names[n:]:
                if name not in kwargs:
                    break
                arrays.append(kwargs.pop(name))
        if self.scalar_ops is not None and len(arrays) == 2:
            if isinstance(arrays[0], NDArray) and _is_scalar(arrays[1]):
                return invoke_parsed(self.scalar_ops[0], [arrays[0]],
                                     {"scalar": float(arrays[1])}, out, req)
            if isinstance(arrays[1], NDArray) and _is_scalar(arrays[0]):
                return invoke_parsed(self.scalar_ops[1], [arrays[1]],
                                     {"scalar": float(arrays[0])}, out, req)
        if kwargs or self.defaults is None:
            attrs = self.op.parse_attrs(kwargs)
        else:
            attrs = dict(self.defaults)
        return invoke_parsed(self.op, arrays, attrs, out, req)

    def __repr__(self):
        return f"<nd function {self.__name__}>"


# Full reductions with default attributes (x.sum(), nd.mean(x)): the binary ufunc loop
# run as NumPy runs a reduction (output stride 0, so NumPy's pairwise summation applies).
_REDUCE_CODES = {"sum": 0, "mean": 0, "prod": 2, "max": 13, "min": 14}


cdef object fast_reduce(int code, bint mean, NDArray x):
    cdef loop_t fn
    cdef int t
    cdef char* args[3]
    cdef cnp.npy_intp n
    cdef cnp.npy_intp steps[3]
    cdef Py_ssize_t size = x._size(), isz
    cdef NDArray out
    if (not _fast_enabled or _recording or x._stype != STYPE_DEFAULT or not x._chunk.host
            or size == 0):
        return None
    t = (<cnp.dtype>x._dtype).type_num
    if t >= N_TYPES or (mean and t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64):
        return None
    fn = binary_loops[code][t]
    if fn == NULL:
        return None
    isz = (<cnp.dtype>x._dtype).itemsize
    out = new_dense((1,), x._dtype, x._chunk.ctx, 0)
    args[0] = <char*>out._chunk.ptr()
    args[1] = <char*>(x._chunk.ptr() + x._offset)
    memcpy(args[0], args[1], isz)
    args[1] += isz
    args[2] = args[0]
    steps[0] = steps[2] = 0
    steps[1] = isz
    n = size - 1
    if n >= NOGIL_MIN:
        with nogil:
            fn(args, &n, steps, binary_data[code][t])
    elif n:
        fn(args, &n, steps, binary_data[code][t])
    if mean:
        if t == cnp.NPY_FLOAT32:
            (<float*>args[0])[0] /= size
        else:
            (<double*>args[0])[0] /= size
    return out


cdef object reduce_impl(int code, object x):
    """NDArray.sum()/mean()/max()/min() without arguments (codes: 0 sum, 1 mean, 13
    max, 14 min)."""
    if code == 1:
        return fast_reduce(0, True, <NDArray>x)
    return fast_reduce(code, False, <NDArray>x)


cdef object unary_impl(int code, object a):
    cdef object res = fast_unary(code, <NDArray>a)
    if res is not None:
        return res
    return invoke_parsed(_unary_ops[code], [a], {}, None, None)


set_operator_impl(binary_impl, unary_impl, reduce_impl)


# -- storage fallback --------------------------------------------------------------------

_FALLBACK_MODES = ("warn", "silent", "error")
_fallback = {"mode": None}
cdef set _warned = set()


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


cdef _fallback_notice(op, list stypes):
    mode = get_storage_fallback()
    if mode == "silent":
        return
    what = (f"{op.name}: no kernel for storage types ({', '.join(stypes)}); the sparse "
            "inputs are converted to dense temporaries")
    if mode == "error":
        raise StorageFallbackError(what + " — refused by set_storage_fallback('error')")
    key = (op.name, tuple(stypes))
    if key not in _warned:
        _warned.add(key)
        warnings.warn(what, StorageFallbackWarning, stacklevel=4)


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
    return invoke_parsed(op, list(inputs), op.parse_attrs(attrs or {}), out, req)


cdef int _req_code(object op, object r) except -1:
    try:
        return _REQ_NAMES[r]
    except (KeyError, TypeError):
        raise ValueError(f"{op.name}: req must be one of null, write, inplace, add "
                         f"(got {r!r})") from None


cpdef object invoke_parsed(object op, list inputs, dict attrs, object out, object req):
    """``invoke`` with attributes already validated."""
    cdef Py_ssize_t i, j, n_in = len(inputs), n_out
    cdef NDArray x, o
    name = op.name
    if not op.variadic and n_in != len(op.inputs):
        raise TypeError(f"{name}: takes {len(op.inputs)} array input(s) "
                        f"({', '.join(op.inputs)}) (got {n_in})")
    if op.variadic and n_in == 0:
        raise TypeError(f"{name}: needs at least one array input")
    for i in range(n_in):
        if not isinstance(inputs[i], NDArray):
            arg = op.inputs[i] if i < len(op.inputs) and not op.variadic else f"#{i}"
            raise TypeError(f"{name}: input {arg} must be an NDArray (got "
                            f"{type(inputs[i]).__name__})")
    ctx = (<NDArray>inputs[0])._chunk.ctx
    for i in range(1, n_in):
        c = (<NDArray>inputs[i])._chunk.ctx
        if c is not ctx and c != ctx:
            raise ValueError(f"{name}: all inputs must be on one context (got {ctx} and {c})")
    shapes = [(<NDArray>v)._shape for v in inputs]
    dtypes = [(<NDArray>v)._dtype for v in inputs]
    dense = True
    for i in range(n_in):
        if (<NDArray>inputs[i])._stype != STYPE_DEFAULT:
            dense = False
            break
    out_shapes = op.infer_shape(attrs, shapes)
    out_dtypes = op.infer_type(attrs, dtypes)
    n_out = len(out_shapes)
    if dense and not op.custom_storage:
        stypes = None
        out_stypes = ["default"] * n_out
        mode = "dense"
    else:
        stypes = [v.stype for v in inputs]
        out_stypes, mode = op.infer_storage(attrs, stypes)

    outs = _outputs(op, out, n_out, out_shapes, out_dtypes, out_stypes, ctx)
    reqs = _requests(op, req, n_out, outs)
    for i in range(n_out):
        if reqs[i] != REQ_NULL:
            break
    else:
        return _result(outs, n_out)
    if mode == "dense":
        _run_dense(op, attrs, inputs, outs, out_shapes, out_dtypes, reqs, ctx)
    else:
        if mode == "fallback":
            _fallback_notice(op, stypes)
            dense_in = [v if v.stype == "default" else v.tostype("default") for v in inputs]
            tmp = [None] * n_out
            _run_dense(op, attrs, dense_in, tmp, out_shapes, out_dtypes, [REQ_WRITE] * n_out, ctx)
            results = [t if s == "default" else t.tostype(s) for t, s in zip(tmp, out_stypes)]
        else:
            results = op.compute_sparse(attrs, inputs)
            if not isinstance(results, (list, tuple)):
                results = [results]
        for i in range(n_out):
            if reqs[i] == REQ_NULL:
                continue
            if outs[i] is None:
                outs[i] = results[i]
            elif reqs[i] == REQ_ADD:
                from runtime.ops import registry
                assign(outs[i], invoke_parsed(registry.get("add"), [outs[i], results[i]], {},
                                              None, None))
            else:
                assign(outs[i], results[i])
    for i in op.mutates:
        (<NDArray>inputs[i])._chunk.bump()
    return _result(outs, n_out)


cdef object _result(list outs, Py_ssize_t n_out):
    return outs[0] if n_out == 1 else outs


cdef list _outputs(object op, object out, Py_ssize_t n_out, list shapes, list dtypes,
                   list stypes, object ctx):
    if out is None:
        return [None] * n_out
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != n_out:
        raise ValueError(f"{op.name}: out must hold {n_out} array(s) (got {len(outs)})")
    for i, o in enumerate(outs):
        if not isinstance(o, NDArray):
            raise TypeError(f"{op.name}: out must be an NDArray (got {type(o).__name__})")
        if o.shape != tuple(shapes[i]):
            raise ValueError(f"{op.name}: out has shape {o.shape!r}, the result has "
                             f"{tuple(shapes[i])!r}")
        if np.dtype(o.dtype) != dtypes[i]:
            raise TypeError(f"{op.name}: out has dtype {np.dtype(o.dtype)}, the result has "
                            f"{dtypes[i]}")
        if o.stype != stypes[i]:
            raise ValueError(f"{op.name}: out has storage type {o.stype!r}, the result has "
                             f"{stypes[i]!r}")
        if o.ctx != ctx:
            raise ValueError(f"{op.name}: out is on {o.ctx}, the inputs on {ctx}")
    return outs


cdef list _requests(object op, object req, Py_ssize_t n_out, list outs):
    if req is None:
        return [REQ_WRITE] * n_out
    rs = list(req) if isinstance(req, (list, tuple)) else [req] * n_out
    if len(rs) != n_out:
        raise ValueError(f"{op.name}: req must hold {n_out} request(s) (got {len(rs)})")
    codes = [_req_code(op, r) for r in rs]
    for i in range(n_out):
        if (codes[i] == REQ_ADD or codes[i] == REQ_INPLACE) and outs[i] is None:
            raise ValueError(f"{op.name}: req {rs[i]!r} needs an out= array to write into")
    return codes


cdef object _views(list arrays, object ctx):
    if ctx.device_type != "gpu":
        return [np_view(<NDArray>a) for a in arrays]
    return [_transfer.cupy_view(a) for a in arrays]


cdef int _run_dense(object op, dict attrs, list inputs, list outs, list shapes, list dtypes,
                    list reqs, object ctx) except -1:
    """Run the dense kernel so that each output honours its request."""
    cdef Py_ssize_t i, n_out = len(outs)
    cdef NDArray o
    if op.compute is None:
        raise NotImplementedError(f"{op.name}: no dense kernel")
    if ctx.device_type == "gpu":
        _check_cupy(op, ctx)
    for i in range(n_out):
        if outs[i] is None:
            outs[i] = new_dense(tuple(shapes[i]), dtypes[i], ctx, 0)
    ins = _views(inputs, ctx)
    views = _views(outs, ctx)
    kernel_outs = list(views)
    post = []
    for i in range(n_out):
        o = outs[i]
        r = reqs[i]
        if r == REQ_ADD or r == REQ_NULL or (r != REQ_ADD and _aliases(op, i, o, inputs)):
            kernel_outs[i] = np.empty_like(views[i])
            if r != REQ_NULL:
                post.append((i, r))
    try:
        op.compute(attrs, ins, kernel_outs)
    except (ValueError, TypeError, ArithmeticError, IndexError) as e:
        if str(e).startswith(op.name + ":"):
            raise
        # a NumPy error from inside a kernel: say which operator it came from
        raise type(e)(f"{op.name}: {e}") if type(e).__module__ == "builtins" else \
            _builtin_type(e)(f"{op.name}: {e}") from None
    for i, r in post:
        if r == REQ_ADD:
            np.add(views[i], kernel_outs[i], out=views[i])
        else:
            views[i][...] = kernel_outs[i]
    for i in range(n_out):
        if reqs[i] != REQ_NULL:
            (<NDArray>outs[i])._chunk.bump()
    return 0


cdef type _builtin_type(BaseException e):
    """The first builtin exception class of ``e`` (NumPy's UFuncTypeError -> TypeError)."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return RuntimeError


cdef bint _aliases(object op, Py_ssize_t i, NDArray o, list inputs):
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
    try:
        import cupy  # noqa: F401
    except ImportError:
        raise ImportError(f"{op.name} on {ctx} needs CuPy for its GPU kernel: pip install "
                          "'ndrt[gpu]'") from None
