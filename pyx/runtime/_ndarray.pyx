"""Storage of ndrt: Chunk (one allocation) and NDArray (a cheap view of a chunk).

Dense arrays are C-contiguous; views (``x[i]``, ``x[a:b]``, ``reshape``, ``detach``)
share the chunk with a byte offset.  Sparse arrays keep their data and aux arrays
(int64 indices, MXNet's layouts) in one chunk.  NumPy sees CPU memory zero-copy through
views whose base is the chunk, so memory goes back to the pool only when the last
NDArray and the last NumPy view of it are gone.

This module imports only what lies below it (the allocator, ``runtime.context``,
``runtime._transfer``, ``runtime._indexing``).  What NDArray needs from above comes
through hooks that the higher layers register at import: the operator layer's functions
(``set_method_hook``: ``x.exp()``, and ``T``, ``astype``, ``tostype``, indexing, which
run registry operators so that the tape can record them), and the sparse routines of
``runtime._storage`` (``set_storage_hooks``).
"""
from functools import partial

import numpy as np

cimport cython
cimport numpy as cnp
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.slice cimport PySlice_GetIndicesEx
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport INT64_MAX, int64_t, uintptr_t
from cpython.buffer cimport PyBUF_FORMAT
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from allocator._pool cimport Buffer, Pool, pool_for, pool_generation

from allocator import as_device
from allocator._pool import MAX_ALLOC
from allocator.errors import OutOfMemoryError

from runtime import _device, _indexing, _transfer
from runtime import context as _context
from runtime.context import Context
from runtime.errors import as_mxnet_error

cnp.import_array()


cdef extern from "numpy/arrayobject.h":
    # Declared here: Cython's numpy.pxd does not expose it.  Steals a reference to descr.
    object PyArray_NewFromDescr(type subtype, cnp.dtype descr, int nd, cnp.npy_intp* dims,
                                cnp.npy_intp* strides, void* data, int flags, PyObject* obj)

STYPES = ("default", "row_sparse", "csr")
DTYPES = ("float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool")
_NATIVE = {name: np.dtype(name) for name in DTYPES}
cdef object F32 = _NATIVE["float32"]
cdef object I64 = _NATIVE["int64"]
cdef dict _dtype_cache = {}
# NumPy needs a non-NULL, aligned data pointer even for 0-size arrays.
cdef int64_t _EMPTY[8]
cdef uintptr_t EMPTY_PTR = <uintptr_t>&_EMPTY[0]

# Dimensions an array may have: NumPy 1's limit (NumPy 2 allows 64 but keeps 32 for its
# legacy iterators), and the size of _view's dimension buffer.
cdef enum:
    MAX_NDIM = 32
# Bytes of the largest pool block.
cdef int64_t C_MAX_ALLOC = MAX_ALLOC

cdef enum Init:
    INIT_NONE = 0
    INIT_ZERO = 1
    INIT_DELAY = 2

cdef object _local = _context._local
cdef object _default_ctx = _context._DEFAULT


# -- argument normalisation -------------------------------------------------------------

def as_dtype(dtype, str arg="dtype"):
    """The NumPy dtype ndrt uses for ``dtype`` (None: float32); TypeError if unsupported."""
    if dtype is None:
        return F32
    try:
        d = _dtype_cache.get(dtype)
    except TypeError:
        d = None
    if d is not None:
        return d
    try:
        d = np.dtype(dtype)
    except (TypeError, ValueError):
        d = None
    if d is None or d.name not in _NATIVE:
        raise TypeError(f"{arg} must be one of {', '.join(DTYPES)} (got {dtype!r})")
    d = _NATIVE[d.name]
    try:
        _dtype_cache[dtype] = d
    except TypeError:
        pass   # an unhashable spec: not cached
    return d


cdef tuple as_shape(object shape, str arg="shape"):
    """``shape`` as a tuple of Python ints; its values are checked by shape_size when the
    array is made."""
    cdef tuple t
    if type(shape) is tuple:
        t = <tuple>shape
    elif type(shape) is int or isinstance(shape, np.integer):
        t = (shape,)
    elif isinstance(shape, (list, tuple)):
        t = tuple(shape)
    else:
        raise TypeError(f"{arg} must be an int or a tuple of ints (got {shape!r})")
    for v in t:
        if type(v) is not int:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{arg} must be an int or a tuple of ints (got {shape!r})")
            return as_shape(tuple(int(u) if isinstance(u, np.integer) else u for u in t), arg)
    return t


cpdef object as_ctx(object ctx):
    """The Context for ``ctx`` (None: the current context)."""
    if ctx is None:
        stack = _local.stack
        return stack[len(stack) - 1] if stack else _default_ctx
    if type(ctx) is Context:
        return ctx
    if isinstance(ctx, Context):
        return ctx
    if isinstance(ctx, str):
        d = as_device(ctx)
        return Context(d.kind, d.id)
    raise TypeError(f"ctx must be a Context such as runtime.cpu() or runtime.gpu(0) "
                    f"(got {ctx!r})")


cpdef int64_t shape_size(tuple shape, cnp.dtype dtype=None, str what="shape",
                         bint infer=False) except -1:
    """The number of elements of ``shape``: the one check of every shape that an array
    or a view is made with, so that no later product of its dimensions can overflow.

    NumPy's rule: every dimension an int >= 0, and the product of the nonzero ones (times
    the itemsize of ``dtype``) fits in int64, so (2**62, 0) is a valid uint8 shape and
    (0, 2**62, 2**62) is not; at most MAX_NDIM dimensions.  ``infer`` skips -1 entries
    (reshape's inferred dimension).  ``what`` names the shape in messages
    ("reshape: shape").  Raises ValueError.
    """
    cdef Py_ssize_t nd = len(shape)
    cdef int64_t n = 1, v
    cdef int64_t itemsize = 1 if dtype is None else dtype.itemsize
    cdef int over
    cdef bint zero = False
    if nd > MAX_NDIM:
        raise ValueError(f"{what} must have at most {MAX_NDIM} dimensions (got {nd})")
    for s in shape:
        v = PyLong_AsLongLongAndOverflow(s, &over)
        if over > 0:
            raise ValueError(f"{what} {shape!r} is too large: its size overflows int64")
        if over < 0 or v < 0:
            if infer and v == -1 and over == 0:
                continue
            raise ValueError(f"{what} must contain non-negative integers (got {shape!r})")
        if v == 0:
            zero = True
        elif n > INT64_MAX // v:
            raise ValueError(f"{what} {shape!r} is too large: its size overflows int64")
        else:
            n *= v
    if n > INT64_MAX // itemsize:
        raise ValueError(f"{what} {shape!r} of {dtype} is too large: its size in bytes "
                         "overflows int64")
    return 0 if zero else n


cdef size_t alloc_nbytes(tuple shape, object dtype) except? 0:
    """Bytes of a pool allocation of ``shape`` and ``dtype``; a checked shape too large
    for any pool block is out of memory (NumPy raises MemoryError there too)."""
    cdef int64_t n = shape_size(shape, dtype) * (<cnp.dtype>dtype).itemsize
    if n > C_MAX_ALLOC:
        raise OutOfMemoryError(f"cannot allocate {n} bytes for shape {shape!r} of {dtype}: "
                               f"more than a pool block can hold (2**50 bytes)")
    return n


cdef str _shape_str(tuple shape):
    return "x".join(str(s) for s in shape) if shape else "0-d"


# -- the chunk --------------------------------------------------------------------------

@cython.freelist(64)
cdef class Chunk:
    """One allocation: data (and, for sparse storage, aux arrays) in a pool of ``ctx``.

    ``version`` counts writes; a view's writes bump the chunk it shares.  ``borrowed``
    chunks wrap foreign memory (DLPack) that ndrt never frees; ``delay_alloc`` chunks
    take their memory on first use.
    """

    cdef uintptr_t ptr(self) except? 0:
        if self.delay_alloc:
            self._alloc_data()
            self.delay_alloc = False
        return self.data_ptr

    cdef void bump(self) noexcept:
        self.version += 1

    cdef int _alloc_data(self) except -1:
        cdef Buffer buf
        if self.data_nbytes == 0:
            self.data_ptr = EMPTY_PTR
            return 0
        buf = ctx_pool(self.ctx).buffer(self.data_nbytes)
        self.data_mem = buf
        self.data_ptr = buf.ptr
        return 0

    cdef int _zero(self) except -1:
        if self.data_nbytes == 0:
            return 0
        if self.host:
            memset(<void*>self.data_ptr, 0, self.data_nbytes)
        else:
            _transfer.memset(self.ctx, self.data_ptr, 0, self.data_nbytes)
        return 0

    @property
    def nbytes(self):
        """Bytes of data memory (aux arrays not included)."""
        return self.data_nbytes

    @property
    def data_pointer(self):
        """Address of the data memory (allocating a delayed chunk)."""
        return self.ptr()

    def __repr__(self):
        flags = [f for f, on in (("delayed", self.delay_alloc), ("borrowed", self.borrowed))
                 if on]
        return (f"<Chunk {self.data_nbytes} bytes @{self.ctx} v{self.version}"
                + (f" {' '.join(flags)}" if flags else "") + ">")


cdef object _last_ctx = None
cdef Pool _last_pool = None
cdef Py_ssize_t _last_generation = -1


cdef Pool ctx_pool(object ctx):
    """The pool of ``ctx``; the last one is remembered (by identity) for the hot path.
    Every ``cpu(i)`` shares the one host pool (MXNet accepts any CPU id; the array keeps
    its context)."""
    global _last_ctx, _last_pool, _last_generation
    if ctx is _last_ctx and _last_generation == pool_generation():
        return _last_pool
    pool = pool_for(_default_ctx if ctx.device_type == "cpu" else ctx)
    _last_ctx, _last_pool, _last_generation = ctx, pool, pool_generation()
    return pool


cdef Chunk _chunk(object ctx, tuple storage_shape, object dtype, int init):
    cdef Chunk c = Chunk.__new__(Chunk)
    c.ctx = ctx
    c.host = ctx is _default_ctx or ctx.device_type != "gpu"
    c.storage_shape = storage_shape
    c.data_nbytes = alloc_nbytes(storage_shape, dtype)
    if init == INIT_DELAY:
        c.delay_alloc = True
    else:
        c._alloc_data()
        if init == INIT_ZERO:
            c._zero()
    return c


cdef object _view(uintptr_t ptr, tuple shape, object dtype, object base):
    """A C-contiguous NumPy array over ``ptr`` kept alive by ``base``."""
    cdef cnp.npy_intp dims[MAX_NDIM]
    cdef int nd = len(shape), i
    if nd > MAX_NDIM:       # shape_size refuses such shapes; this guards the buffer
        raise ValueError(f"arrays have at most {MAX_NDIM} dimensions (got {nd})")
    for i in range(nd):
        dims[i] = shape[i]
    Py_INCREF(dtype)  # PyArray_NewFromDescr steals it
    arr = PyArray_NewFromDescr(<type>np.ndarray, <cnp.dtype>dtype, nd, dims, NULL,
                               <void*>(ptr if ptr else EMPTY_PTR), cnp.NPY_ARRAY_CARRAY, NULL)
    cnp.set_array_base(arr, base)
    return arr


cdef object np_view(NDArray x):
    """Zero-copy NumPy view of a dense host array (raises for device or sparse arrays)."""
    if x._stype != STYPE_DEFAULT:
        raise TypeError(f"a {STYPES[x._stype]} array has no dense view: use tostype('default')")
    if not x._chunk.host:
        raise TypeError(f"a {x._chunk.ctx} array is device memory: use asnumpy() for a host "
                        "copy")
    return _view(x._chunk.ptr() + x._offset, x._shape, x._dtype, x._chunk)


cdef NDArray _wrap(type cls, Chunk c, tuple shape, object dtype, int stype, Py_ssize_t offset):
    cdef NDArray a
    if cls is NDArray:
        a = NDArray.__new__(NDArray)
    elif cls is CSRNDArray:
        a = CSRNDArray.__new__(CSRNDArray)
    elif cls is RowSparseNDArray:
        a = RowSparseNDArray.__new__(RowSparseNDArray)
    else:
        a = cls.__new__(cls)
    a._chunk = c
    a._shape = shape
    a._dtype = dtype
    a._stype = stype
    a._offset = offset
    return a


cdef NDArray new_dense(tuple shape, object dtype, object ctx, int init):
    return _wrap(NDArray, _chunk(ctx, shape, dtype, init), shape, dtype, STYPE_DEFAULT, 0)


cdef NDArray new_sparse(int stype, tuple shape, object dtype, object ctx,
                        tuple storage_shape, list aux_shapes):
    """A sparse array whose data and aux memory is allocated but not filled."""
    cdef Chunk c
    cdef Pool pool
    shape_size(shape, dtype)     # size, nbytes and the dense form read the logical shape
    c = _chunk(ctx, storage_shape, dtype, INIT_NONE)
    pool = ctx_pool(ctx)
    c.aux_shapes = aux_shapes
    c.aux_mem = []
    c.aux_ptrs = []
    for s in aux_shapes:
        n = alloc_nbytes(s, I64)
        buf = pool.buffer(n) if n else None
        c.aux_mem.append(buf)
        c.aux_ptrs.append(buf.ptr if n else EMPTY_PTR)
    cls = CSRNDArray if stype == STYPE_CSR else RowSparseNDArray
    return _wrap(cls, c, shape, dtype, stype, 0)


cdef object dense_from_numpy(object src, object ctx):
    """Copy a NumPy array into a new dense array on ``ctx``; TypeError unless its dtype
    is supported (object arrays would put PyObject pointers in pool memory)."""
    cdef NDArray out = new_dense(src.shape, as_dtype(src.dtype), ctx, INIT_NONE)
    if out._chunk.host:
        np.copyto(np_view(out), src, casting="unsafe")
    else:
        _transfer.from_host(ctx, out._chunk.ptr(), np.asarray(src, dtype=out._dtype))
    return out


def from_numpy(src, ctx=None):
    """A new dense array on ``ctx`` (default: the current context) holding a copy of the
    NumPy array ``src`` (same shape and dtype); TypeError for an unsupported dtype."""
    return dense_from_numpy(src, as_ctx(ctx))


def alloc_sparse(stype, shape, dtype, ctx, storage_shape, aux_shapes):
    """A ``stype`` ('csr' or 'row_sparse') array of ``shape`` whose data (of
    ``storage_shape``) and int64 aux arrays (of ``aux_shapes``) are allocated on ``ctx``
    but not filled: the caller writes them (see :func:`storage_view`,
    :func:`write_storage`) and answers for the layout."""
    return new_sparse(STYPES.index(stype), as_shape(shape), as_dtype(dtype), as_ctx(ctx),
                      tuple(storage_shape), [tuple(s) for s in aux_shapes])


def borrow(obj, uintptr_t ptr, shape, dtype, ctx):
    """A dense array over foreign memory ``ptr`` (C-contiguous ``shape`` of NumPy dtype
    ``dtype`` on Context ``ctx``) that ``obj`` keeps alive; ndrt never frees it (DLPack)."""
    cdef Chunk c = Chunk.__new__(Chunk)
    c.ctx = ctx
    c.host = ctx.device_type != "gpu"
    c.storage_shape = tuple(shape)
    c.data_nbytes = shape_size(c.storage_shape, dtype) * (<cnp.dtype>dtype).itemsize
    c.borrowed = True
    c.data_mem = obj
    c.data_ptr = ptr if c.data_nbytes else EMPTY_PTR
    return _wrap(NDArray, c, c.storage_shape, dtype, STYPE_DEFAULT, 0)


# -- the parts of an array's storage ---------------------------------------------------
# Part -1 is the data (a dense array's values, with its view offset and shape; a sparse
# array's stored values, of the chunk's storage shape), parts 0, 1 the int64 aux arrays
# (row_sparse: row indices; csr: indptr, column indices).

cdef inline Py_ssize_t _n_aux(NDArray x):
    return 0 if x._stype == STYPE_DEFAULT else len(x._chunk.aux_shapes)


cdef tuple _part(NDArray x, int i):
    """(address, shape, dtype) of part ``i`` of ``x``."""
    cdef Chunk c = x._chunk
    if not -1 <= i < _n_aux(x):
        raise IndexError(f"a {STYPES[x._stype]} array has storage parts -1 to "
                         f"{_n_aux(x) - 1} (got {i})")
    if i < 0:
        shape = x._shape if x._stype == STYPE_DEFAULT else c.storage_shape
        return c.ptr() + x._offset, shape, x._dtype
    return c.aux_ptrs[i], c.aux_shapes[i], I64


def storage_view(NDArray x, int i):
    """Zero-copy NumPy view of part ``i`` of host array ``x``: the data (i = -1) or aux
    array ``i`` (TypeError for device memory)."""
    if not x._chunk.host:
        raise TypeError(f"a {x._chunk.ctx} array is device memory: use storage_host()")
    ptr, shape, dtype = _part(x, i)
    return _view(ptr, shape, dtype, x._chunk)


def storage_host(NDArray x, int i):
    """Host NumPy array of part ``i`` of ``x`` (see :func:`storage_view`): a zero-copy
    view of host memory, a copy of device memory."""
    if x._chunk.host:
        return storage_view(x, i)
    ptr, shape, dtype = _part(x, i)
    return _transfer.to_host(x._chunk.ctx, ptr, shape, dtype)


def mark_written(NDArray x):
    """Count a write into ``x`` made through its buffer (an in-place MPI collective on a
    zero-copy view): bumps the version, as a write by an operator does."""
    x._chunk.bump()


def write_storage(NDArray x, int i, src):
    """Copy NumPy ``src`` (the part's shape) into part ``i`` of ``x``, cast unsafely to
    the part's dtype, on any context.  No version bump: for filling new arrays."""
    ptr, shape, dtype = _part(x, i)
    if x._chunk.host:
        np.copyto(_view(ptr, shape, dtype, x._chunk), src, casting="unsafe")
    else:
        _transfer.from_host(x._chunk.ctx, ptr,
                            np.broadcast_to(np.asarray(src).astype(dtype, copy=False), shape))


# -- creation ---------------------------------------------------------------------------

def zeros(shape, ctx=None, dtype=None, stype=None):
    """An array of zeros (MXNet's ``nd.zeros``); float32 unless ``dtype`` is given.

    ``stype='csr'`` or ``'row_sparse'`` gives an all-zero sparse array
    (``runtime._storage.zeros``).
    """
    if stype is not None and stype != "default":
        return _hooked(_sparse_zeros, "zeros")(stype, shape, ctx=ctx, dtype=dtype)
    return new_dense(as_shape(shape), as_dtype(dtype), as_ctx(ctx), INIT_ZERO)


def empty(shape, ctx=None, dtype=None, stype=None):
    """An uninitialised array; its memory is taken from the pool on first use.  A sparse
    ``stype`` gives an all-zero array, as MXNet."""
    if stype is not None and stype != "default":
        return _hooked(_sparse_zeros, "empty")(stype, shape, ctx=ctx, dtype=dtype)
    return new_dense(as_shape(shape), as_dtype(dtype), as_ctx(ctx), INIT_DELAY)


def full(shape, val, ctx=None, dtype=None, out=None):
    """An array filled with ``val`` (MXNet's ``nd.full``); writes into ``out`` if given."""
    cdef NDArray a
    if out is not None:
        if not isinstance(out, NDArray):
            raise TypeError(f"out must be an NDArray (got {type(out).__name__})")
        out[...] = val
        return out
    a = new_dense(as_shape(shape), as_dtype(dtype), as_ctx(ctx), INIT_NONE)
    a._fill(val)
    return a


def ones(shape, ctx=None, dtype=None):
    """An array of ones (MXNet's ``nd.ones``); float32 unless ``dtype`` is given."""
    cdef NDArray a = new_dense(as_shape(shape), as_dtype(dtype), as_ctx(ctx), INIT_NONE)
    a._fill(1)
    return a


# -- hooks: what NDArray calls in the layers above, which register it at import ---------

cdef object _method_hook = None
# runtime._storage's sparse routines
cdef object _sparse_zeros = None
cdef object _check_format = None
cdef object _rebuild = None


def set_method_hook(fn):
    """The operator layer installs ``fn(name) -> nd function or None`` (runtime.nd does,
    at import): the functions behind the methods that run operators (``x.exp()``,
    ``x.sum(axis=1)``, ``T``, ``astype``, ``tostype``, indexing)."""
    global _method_hook
    _method_hook = fn


def set_storage_hooks(zeros, check_format, rebuild):
    """runtime._storage installs its sparse routines at import: ``zeros(stype, shape,
    ctx, dtype)`` (zeros/empty of a sparse stype), ``check_format(x, full_check)`` (the
    method) and ``rebuild(*fields)`` (what ``NDArray.__reduce__`` pickles)."""
    global _sparse_zeros, _check_format, _rebuild
    _sparse_zeros, _check_format, _rebuild = zeros, check_format, rebuild


# runtime.nd's reader of MXNet 1.x's pickled NDArrays
cdef object _mxnet_state = None


def set_pickle_hook(fn):
    """runtime.nd installs ``fn(state) -> NDArray`` at import: the array that an MXNet
    1.x pickle's state (``{'handle': the array in MXNet's binary format}``) holds."""
    global _mxnet_state
    _mxnet_state = fn


# runtime.autograd's routines behind attach_grad, grad, backward, and the recording flag
# (views of an array on the tape are made by operators while recording, so that they are
# recorded too)
cdef object _attach_grad = None
cdef object _variable_node = None
cdef object _backward = None
cdef object _is_recording = None


def set_autograd_hooks(attach_grad, variable_node, backward, is_recording):
    """runtime.autograd installs at import: ``attach_grad(x, grad_req, stype)``,
    ``variable_node(x)`` (the tape node of a variable, or None), ``backward(heads,
    head_grads, retain_graph, train_mode)`` and ``is_recording()``."""
    global _attach_grad, _variable_node, _backward, _is_recording
    _attach_grad, _variable_node, _backward = attach_grad, variable_node, backward
    _is_recording = is_recording


cdef inline bint _recording_now() except -1:
    return _is_recording is not None and _is_recording()


cdef object _hooked(object fn, str what):
    """``fn``, registered by a layer above; RuntimeError naming ``what`` if it is not."""
    if fn is None:
        raise RuntimeError(f"{what} needs the layers above runtime._ndarray: import runtime")
    return fn


cdef object _nd(str name):
    """The nd function ``name`` (any registered operator, hidden ones included)."""
    fn = _hooked(_method_hook, f"the operator {name!r}")(name)
    if fn is None:
        raise RuntimeError(f"no operator {name!r} is registered")
    return fn


# -- Python operators: implemented by runtime._imperative, which registers itself here ----

cdef binary_impl_t _binary_impl = NULL
cdef unary_impl_t _unary_impl = NULL


cdef reduce_impl_t _reduce_impl = NULL


cdef void set_operator_impl(binary_impl_t binary, unary_impl_t unary,
                            reduce_impl_t reduce) noexcept:
    global _binary_impl, _unary_impl, _reduce_impl
    _binary_impl = binary
    _unary_impl = unary
    _reduce_impl = reduce


cdef inline object _bin(str op, object a, object b, int flags):
    if _binary_impl == NULL:
        raise RuntimeError("NDArray operators need the operator layer: import runtime")
    return _binary_impl(op, a, b, flags)


cdef inline object _un(str op, object a):
    if _unary_impl == NULL:
        raise RuntimeError("NDArray operators need the operator layer: import runtime")
    return _unary_impl(op, a)


# -- the array --------------------------------------------------------------------------

cdef int _class_stype(NDArray x):
    """The storage type that ``x``'s class holds."""
    if isinstance(x, CSRNDArray):
        return STYPE_CSR
    if isinstance(x, RowSparseNDArray):
        return STYPE_ROW_SPARSE
    return STYPE_DEFAULT


@cython.freelist(128)
cdef class NDArray:
    """An n-dimensional array in pooled memory (MXNet's ``mx.nd.NDArray``).

    Create arrays with :func:`runtime.nd.array`, ``zeros``, ``ones``... rather than
    with this class.  Views (``x[i]``, ``x[a:b]``, ``reshape``, ``detach``) share memory;
    every other indexing returns a copy.
    """

    __array_priority__ = 1000.0

    cdef Py_ssize_t _size(self) noexcept:
        # Unchecked: every shape passed shape_size when its array or view was made.
        cdef Py_ssize_t n = 1
        for s in self._shape:
            n *= <Py_ssize_t>s
        return n

    # -- properties ---------------------------------------------------------------

    @property
    def shape(self):
        """Tuple of array dimensions."""
        return self._shape

    @property
    def dtype(self):
        """The element type, as MXNet gives it: a NumPy scalar type such as ``numpy.float32``."""
        return self._dtype.type

    @property
    def size(self):
        """Number of elements."""
        return self._size()

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def stype(self):
        """Storage type: 'default', 'row_sparse' or 'csr'."""
        return STYPES[self._stype]

    @property
    def ctx(self):
        """The Context the array lives in."""
        return self._chunk.ctx

    @property
    def context(self):
        """Alias of ``ctx``."""
        return self._chunk.ctx

    @property
    def version(self):
        """Write counter of the underlying chunk (bumped by every write)."""
        return self._chunk.version

    @property
    def chunk(self):
        """The Chunk holding this array's memory (shared by its views)."""
        return self._chunk

    @property
    def nbytes(self):
        return self._size() * self._dtype.itemsize

    @property
    def T(self):
        """Transpose (the ``transpose`` operator: a copy); the array itself when
        ``ndim < 2``, as MXNet."""
        if len(self._shape) < 2:
            return self
        return _nd("transpose")(self)

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d array")
        return self._shape[0]

    # -- conversion ---------------------------------------------------------------

    def asnumpy(self):
        """A NumPy copy of the values (dense, on the host)."""
        if self._stype != STYPE_DEFAULT:
            return self.tostype("default").asnumpy()
        if not self._chunk.host:
            return _transfer.to_host(self._chunk.ctx, self._chunk.ptr() + self._offset,
                                     self._shape, self._dtype)
        return np_view(self).copy()

    def asscalar(self):
        """The value of a one-element array as a NumPy scalar."""
        if self._size() != 1:
            raise ValueError(f"asscalar: the array must have exactly one element "
                             f"(got shape {self._shape!r})")
        return self.asnumpy().reshape(())[()]

    def __float__(self):
        return float(self.asscalar())

    def __int__(self):
        return int(self.asscalar())

    def __index__(self):
        if self._dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index (got {self._dtype})")
        return int(self.asscalar())

    def __bool__(self):
        if self._size() == 0:
            return False        # MXNet 1.x: an empty array is false
        if self._size() != 1:
            raise ValueError(f"the truth value of an array with {self._size()} elements is "
                             "ambiguous")
        return bool(self.asscalar())

    def __array__(self, dtype=None, copy=None):
        if self._stype != STYPE_DEFAULT or not self._chunk.host:
            if copy is False:
                raise ValueError(f"a {self.stype} array on {self.ctx} has no zero-copy NumPy "
                                 "view (copy=False)")
            a = self.asnumpy()
        else:
            a = np_view(self)
            if copy:
                a = a.copy()
        if dtype is not None and a.dtype != dtype:
            if copy is False:
                raise ValueError("cannot change dtype without a copy (copy=False)")
            a = a.astype(dtype)
        return a

    def __getbuffer__(self, Py_buffer* view, int flags):
        cdef int nd = len(self._shape), i
        cdef Py_ssize_t* dims
        cdef bytes fmt
        if self._stype != STYPE_DEFAULT or not self._chunk.host:
            raise BufferError(f"a {self.stype} array on {self.ctx} has no buffer view")
        fmt = _FORMATS[self._dtype.char]
        dims = <Py_ssize_t*>malloc(sizeof(Py_ssize_t) * (2 * nd + 1))
        if dims == NULL:
            raise MemoryError()
        for i in range(nd):
            dims[i] = self._shape[i]
        if nd:
            dims[2 * nd - 1] = self._dtype.itemsize
            for i in range(nd - 2, -1, -1):
                dims[nd + i] = dims[nd + i + 1] * dims[i + 1]
        view.buf = <void*>(self._chunk.ptr() + self._offset)
        view.obj = self
        view.len = self._size() * self._dtype.itemsize
        view.readonly = 0
        view.itemsize = self._dtype.itemsize
        view.format = NULL
        if flags & PyBUF_FORMAT:
            view.format = fmt      # the bytes object lives in _FORMATS for good
        view.ndim = nd
        view.shape = dims
        view.strides = dims + nd
        view.suboffsets = NULL
        view.internal = <void*>dims
        self._exports += 1

    def __releasebuffer__(self, Py_buffer* view):
        free(view.internal)
        self._exports -= 1

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export through DLPack (zero-copy for dense arrays)."""
        if self._stype != STYPE_DEFAULT:
            raise TypeError(f"DLPack exports dense arrays only (got {self.stype}); "
                            "use tostype('default')")
        kw = {}
        if max_version is not None:
            kw["max_version"] = max_version
        if dl_device is not None:
            kw["dl_device"] = dl_device
        if copy is not None:
            kw["copy"] = copy
        if self._chunk.host:
            return np_view(self).__dlpack__(stream=stream, **kw)
        return _device.cupy_view(self).__dlpack__(stream=stream, **kw)

    def to_dlpack_for_read(self):
        """A DLPack capsule of this array for reading (MXNet's
        ``NDArray.to_dlpack_for_read``): ``self.__dlpack__()``, sharing the memory."""
        return self.__dlpack__()

    def to_dlpack_for_write(self):
        """A DLPack capsule of this array for writing (MXNet's
        ``NDArray.to_dlpack_for_write``): the consumer's writes land in this array."""
        return self.__dlpack__()

    def __dlpack_device__(self):
        if self._chunk.ctx.device_type == "gpu":
            return (2, self._chunk.ctx.device_id)   # kDLCUDA
        if self._chunk.ctx.device_type == "cpu_pinned":
            return (3, 0)                           # kDLCUDAHost
        return (1, 0)                               # kDLCPU

    @property
    def __cuda_array_interface__(self):
        if self._chunk.host or self._stype != STYPE_DEFAULT:
            raise AttributeError("__cuda_array_interface__ exists for dense GPU arrays only")
        return {"shape": self._shape, "typestr": self._dtype.str,
                "data": (self._chunk.ptr() + self._offset, False), "strides": None,
                "version": 3}

    def __init__(self, handle=None, writable=True):
        """``NDArray(None)`` is an empty float32 array on cpu(0) (of this class's storage
        type): what an MXNet 1.x pickle makes before ``__setstate__`` gives it its array.
        MXNet's ``NDArray(handle)`` wraps a C handle, which ndrt arrays do not have: make
        arrays with ``nd.array``, ``nd.zeros`` or ``nd.empty``."""
        if handle is not None:
            raise TypeError(f"NDArray: handle must be None: ndrt arrays have no C handle; "
                            f"make one with nd.array, nd.zeros or nd.empty (got "
                            f"{type(handle).__name__})")
        cdef int stype = _class_stype(self)
        if stype == STYPE_DEFAULT:
            self._adopt(zeros((0,)))
        else:
            self._adopt(zeros((0, 0), stype=STYPES[stype]))

    cdef int _adopt(self, NDArray src) except -1:
        """Become ``src`` (its memory, shape, dtype; off the tape)."""
        if self._exports:
            raise BufferError("NDArray: cannot replace the memory of an array that buffer "
                              "views still read")
        if src._stype != _class_stype(self):
            raise TypeError(f"NDArray: a {type(self).__name__} cannot hold a "
                            f"{STYPES[src._stype]} array")
        self._chunk = src._chunk
        self._shape = src._shape
        self._offset = src._offset
        self._dtype = src._dtype
        self._stype = src._stype
        self._entry = None
        self._donated = False
        return 0

    def __setstate__(self, state):
        """The array of an MXNet 1.x pickle (``{'handle': bytes}``, MXNet's
        ``__getstate__``): MXNet's pickles load in ndrt (through ``mxnet_compat``, which
        resolves the class they name).  ndrt's own pickles do not come here
        (:meth:`__reduce__`)."""
        self._adopt(_hooked(_mxnet_state, "unpickling an MXNet NDArray")(state))

    def __reduce__(self):
        # runtime._storage.rebuild validates every field (a pickle comes from outside)
        parts = [storage_host(self, i) for i in range(-1, _n_aux(self))]
        if self._chunk.host:        # views of pool memory: the pickle takes copies
            parts = [p.copy() for p in parts]
        return (_hooked(_rebuild, "pickling an NDArray"),
                (STYPES[self._stype], self._dtype.str, self._shape,
                 self._chunk.ctx.device_type, self._chunk.ctx.device_id, parts))

    # -- copies and contexts ------------------------------------------------------

    def copy(self):
        """A deep copy in the same context."""
        return self.copyto(self._chunk.ctx)

    def copyto(self, other):
        """Copy into the NDArray ``other`` (same shape; values cast to its dtype and, as
        MXNet's CopyFromTo, to its storage type) or into a new array on the Context
        ``other``; returns the destination."""
        cdef NDArray dst
        if isinstance(other, NDArray):
            dst = <NDArray>other
            if dst is self:
                return dst
            if dst._shape != self._shape:
                raise ValueError(f"copyto: shape {self._shape!r} does not match the "
                                 f"destination's {dst._shape!r}")
            if dst._stype != self._stype:
                # MXNet's CopyFromTo: the values cast to the destination's storage type
                return self.tostype(dst.stype).copyto(dst)
            if self._stype != STYPE_DEFAULT:
                src = self.copyto(dst.ctx).astype(dst.dtype, copy=False)
                _assign_storage(dst, src)
                return dst
            _copy_dense(dst, self)
            dst._chunk.bump()
            return dst
        if not isinstance(other, (Context, str)):
            raise TypeError(f"copyto: other must be an NDArray or a Context (got {other!r})")
        ctx = as_ctx(other)
        if self._stype != STYPE_DEFAULT:
            return _copy_sparse(self, ctx)
        dst = new_dense(self._shape, self._dtype, ctx, INIT_NONE)
        if dst._chunk.host and self._chunk.host:
            if dst._chunk.data_nbytes:
                memcpy(<void*>dst._chunk.ptr(), <void*>(self._chunk.ptr() + self._offset),
                       dst._chunk.data_nbytes)
        else:
            _copy_dense(dst, self)
        return dst

    def copyto_dense(self, NDArray src):
        """Copy dense ``src`` (same shape) into this dense array, across contexts."""
        _copy_dense(self, src)
        self._chunk.bump()

    def as_in_context(self, context):
        """This array if it is in ``context`` already, else a copy there."""
        ctx = as_ctx(context)
        return self if ctx == self._chunk.ctx else self.copyto(ctx)

    def astype(self, dtype, copy=True):
        """The values cast to ``dtype`` (the ``cast`` operator; sparse arrays keep their
        storage type); ``copy=False`` returns self when nothing changes."""
        d = as_dtype(dtype)
        if d == self._dtype and not copy:
            return self
        return _nd("cast")(self, dtype=d)

    def tostype(self, stype):
        """Convert the storage type ('default', 'csr', 'row_sparse') with the
        ``cast_storage`` operator; always a new array.

        csr <-> row_sparse raises ValueError, as in MXNet.
        """
        return _nd("cast_storage")(self, stype=stype)

    # -- autograd (runtime.autograd) ------------------------------------------------

    def attach_grad(self, grad_req="write", stype=None):
        """Make this array a variable of autograd: ``backward`` writes its gradient into
        ``self.grad`` ('write'), adds it there ('add') or skips it ('null').  ``stype``
        is the gradient's storage type (this array's unless given), as in MXNet."""
        _hooked(_attach_grad, "attach_grad")(self, grad_req, stype)

    @property
    def grad(self):
        """The gradient buffer of a variable (``attach_grad``), None otherwise."""
        node = _hooked(_variable_node, "grad")(self)
        return None if node is None else node.grad

    @property
    def grad_req(self):
        """'write', 'add' or 'null' for a variable, 'null' otherwise."""
        node = _hooked(_variable_node, "grad_req")(self)
        return "null" if node is None else ("null", "write", None, "add")[node.grad_req]

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Compute the gradients of this array with respect to the variables
        (``autograd.backward([self], [out_grad])``)."""
        _hooked(_backward, "backward")([self], [out_grad], retain_graph, train_mode)

    def _renew(self, NDArray src):
        """Hold ``src``'s memory from now on, keeping this array's place on the tape (a
        variable keeps its gradient buffer).  What the tape saved of this array keeps the
        old memory and its version, so a backward after the write reads the values its
        forward read instead of refusing.  While buffer views of the old memory are alive
        (``np.asarray(x)``), ``src`` is copied into it instead, as those views must see
        the new values.  ``src``: a dense array of this array's shape, dtype and
        context."""
        if (self._stype != STYPE_DEFAULT or src._stype != STYPE_DEFAULT
                or src._shape != self._shape or src._dtype != self._dtype
                or src._chunk.ctx != self._chunk.ctx):
            raise ValueError(f"NDArray._renew: src must be a dense array of shape "
                             f"{self._shape!r}, dtype {self._dtype} on {self._chunk.ctx} "
                             f"(got {STYPES[src._stype]} {src._shape!r} {src._dtype} on "
                             f"{src._chunk.ctx})")
        if self._exports:
            assign(self, src)
            return
        self._chunk = src._chunk
        self._offset = src._offset

    def detach(self):
        """A view sharing memory with no autograd history."""
        return _wrap(type(self), self._chunk, self._shape, self._dtype, self._stype,
                     self._offset)

    def wait_to_read(self):
        """No-op: ndrt executes eagerly (kept for MXNet code)."""

    def wait_to_write(self):
        """No-op: ndrt executes eagerly (kept for MXNet code)."""

    # -- views --------------------------------------------------------------------

    def reshape(self, *shape, **kwargs):
        """A view with a new shape: ``x.reshape(2, -1)``, ``x.reshape((2, -1))``,
        ``x.reshape(shape=..., reverse=False)``, with MXNet's special values (0 copies a
        dimension, -1 infers one, -2 copies the rest, -3 merges two, -4 splits one;
        ``reverse`` reads them from the right: the rule of ``nd.reshape``); raises for
        sparse arrays."""
        cdef tuple fast
        if not kwargs and self._stype == STYPE_DEFAULT:
            fast = _plain_reshape(shape, self._size(), self._dtype)
            if fast is not None:
                if self._entry is not None and _recording_now():
                    return _nd("reshape")(self, shape=fast)
                return _wrap(NDArray, self._chunk, fast, self._dtype, STYPE_DEFAULT,
                             self._offset)
        reverse = kwargs.pop("reverse", False) if kwargs else False
        if kwargs:
            if shape or set(kwargs) - {"shape"}:
                raise TypeError(f"reshape takes a shape and reverse (got {shape!r}, "
                                f"{kwargs!r})")
            shape = kwargs["shape"]
        elif len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        if not isinstance(reverse, (bool, np.bool_)):
            raise TypeError(f"reshape: reverse must be a bool (got {reverse!r})")
        if self._stype != STYPE_DEFAULT:
            raise TypeError(f"reshape: {self.stype} arrays cannot be reshaped; convert with "
                            "tostype('default') first")
        try:
            new = mx_reshape("reshape", self._shape, shape, reverse, self._dtype)
        except (ValueError, TypeError) as exc:
            raise as_mxnet_error(exc)            # MXNet's Reshape operator refuses it
        if self._entry is not None and _recording_now():
            return _nd("reshape")(self, shape=new)     # an operator, so that it is recorded
        return _wrap(NDArray, self._chunk, new, self._dtype, STYPE_DEFAULT, self._offset)

    def __getitem__(self, key):
        """``x[i]`` and ``x[a:b]`` (axis 0, step 1) are views; any other key (steps,
        several axes, integer arrays, boolean masks) returns a copy made by an operator
        (``slice``; ``take`` for arrays and masks: see runtime._indexing), with NumPy's
        semantics but for one rule of MXNet 1.x: a key of integers that leaves no axis
        (``x[i]`` of a 1-D array, ``x[i, j]`` of a 2-D one) gives shape (1,), not a 0-d
        array.  csr arrays support row slices ``x[a:b]`` (``slice``, a copy)."""
        cdef Py_ssize_t n, i, start, stop, step, row
        if self._stype == STYPE_CSR:
            return _csr_getitem(self, key)
        if self._stype == STYPE_ROW_SPARSE:
            if isinstance(key, slice) and key == slice(None):
                return self
            raise TypeError(f"row_sparse arrays support only x[:] (got {key!r}); convert "
                            "with tostype('default') to index")
        if self._entry is not None and _recording_now():
            return _getitem(self, key)       # an operator (a copy), so that it is recorded
        if type(key) is slice and self._shape and ((<slice>key).step is None
                                                    or (<slice>key).step == 1):
            n = self._shape[0]
            PySlice_GetIndicesEx(key, n, &start, &stop, &step, &i)
            if stop < start:
                stop = start
            row = self._size() // n * (<cnp.dtype>self._dtype).itemsize if n else 0
            return _wrap(NDArray, self._chunk, _with_first(self._shape, stop - start),
                         self._dtype, STYPE_DEFAULT, self._offset + start * row)
        if type(key) is int or (type(key) is not tuple and isinstance(key, np.integer)):
            if not self._shape:
                raise IndexError("too many indices: a 0-d array cannot be indexed by an int")
            n = self._shape[0]
            try:
                i = key
            except OverflowError:     # beyond Py_ssize_t: out of bounds like any other
                raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}") \
                    from None
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
            row = self._size() // n * (<cnp.dtype>self._dtype).itemsize if n else 0
            return _wrap(NDArray, self._chunk, self._shape[1:] or (1,), self._dtype,
                         STYPE_DEFAULT, self._offset + i * row)
        return _getitem(self, key)

    def __setitem__(self, key, value):
        """Write ``value`` (scalar, NDArray or array-like, broadcast NumPy-style) into
        ``self[key]`` with an operator (``_slice_assign``, ``_slice_assign_scalar``; for
        arrays and masks ``_take_assign``, ``_take_assign_scalar``).  Bumps the version;
        a failed assignment writes nothing.  Sparse arrays take ``x[:] = value``."""
        if self._stype != STYPE_DEFAULT:
            _sparse_setitem(self, key, value)
            return
        _setitem(self, key, value)

    cdef int _fill(self, object val) except -1:
        try:
            if self._chunk.host:
                np_view(self).fill(val)
            else:
                host = np.empty(self._shape, self._dtype)
                host.fill(val)
                _transfer.from_host(self._chunk.ctx, self._chunk.ptr() + self._offset, host)
        except (ValueError, TypeError, OverflowError) as e:
            raise type(e)(f"fill value {val!r} does not fit dtype {self._dtype}: {e}")
        self._chunk.bump()
        return 0

    # -- Python operators: each names its registry operator ------------------------
    # flags: 1 reflected (other <op> self), 2 in place (self <op>= other)

    def __add__(self, other):
        return _bin("add", self, other, 0)

    def __radd__(self, other):
        return _bin("add", self, other, 1)

    def __iadd__(self, other):
        return _bin("add", self, other, 2)

    def __sub__(self, other):
        return _bin("subtract", self, other, 0)

    def __rsub__(self, other):
        return _bin("subtract", self, other, 1)

    def __isub__(self, other):
        return _bin("subtract", self, other, 2)

    def __mul__(self, other):
        return _bin("multiply", self, other, 0)

    def __rmul__(self, other):
        return _bin("multiply", self, other, 1)

    def __imul__(self, other):
        return _bin("multiply", self, other, 2)

    def __truediv__(self, other):
        return _bin("divide", self, other, 0)

    def __rtruediv__(self, other):
        return _bin("divide", self, other, 1)

    def __itruediv__(self, other):
        return _bin("divide", self, other, 2)

    def __mod__(self, other):
        return _bin("mod", self, other, 0)

    def __rmod__(self, other):
        return _bin("mod", self, other, 1)

    def __imod__(self, other):
        return _bin("mod", self, other, 2)

    def __pow__(self, other, mod=None):
        return _bin("power", self, other, 0)

    def __rpow__(self, other, mod=None):
        return _bin("power", self, other, 1)

    def __ipow__(self, other):
        return _bin("power", self, other, 2)

    def __eq__(self, other):
        return _bin("equal", self, other, 0)

    def __ne__(self, other):
        return _bin("not_equal", self, other, 0)

    def __lt__(self, other):
        return _bin("lesser", self, other, 0)

    def __le__(self, other):
        return _bin("lesser_equal", self, other, 0)

    def __gt__(self, other):
        return _bin("greater", self, other, 0)

    def __ge__(self, other):
        return _bin("greater_equal", self, other, 0)

    def __matmul__(self, other):
        return _bin("dot", self, other, 0)

    def __rmatmul__(self, other):
        return _bin("dot", self, other, 1)

    def __neg__(self):
        return _un("negative", self)

    def __abs__(self):
        return _un("abs", self)

    def __pos__(self):
        return self

    def __hash__(self):
        return id(self) >> 4

    def sum(self, *args, **kwargs):
        """Sum over ``axis`` (all axes by default); see ``nd.sum``."""
        cdef object res
        if not args and _reduce_impl != NULL:
            res = _reduce_impl("sum", self, kwargs)
            if res is not None:
                return res
        return _method_hook("sum")(self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        """Mean over ``axis``; see ``nd.mean``."""
        cdef object res
        if not args and _reduce_impl != NULL:
            res = _reduce_impl("mean", self, kwargs)
            if res is not None:
                return res
        return _method_hook("mean")(self, *args, **kwargs)

    def max(self, *args, **kwargs):
        """Maximum over ``axis``; see ``nd.max``."""
        cdef object res
        if not args and _reduce_impl != NULL:
            res = _reduce_impl("max", self, kwargs)
            if res is not None:
                return res
        return _method_hook("max")(self, *args, **kwargs)

    def min(self, *args, **kwargs):
        """Minimum over ``axis``; see ``nd.min``."""
        cdef object res
        if not args and _reduce_impl != NULL:
            res = _reduce_impl("min", self, kwargs)
            if res is not None:
                return res
        return _method_hook("min")(self, *args, **kwargs)

    def __getattr__(self, name):
        # Every public registry operator is also a method (x.sum(axis=1), x.exp()), as in
        # MXNet; hidden ones (_slice_assign) are not.
        if _method_hook is not None and not name.startswith("_"):
            fn = _method_hook(name)
            if fn is not None:
                return partial(fn, self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._shape[0]):
            yield self[i]

    def __repr__(self):
        cls = type(self).__name__
        tail = f"<{cls} {_shape_str(self._shape)} @{self._chunk.ctx}>"
        if self._stype != STYPE_DEFAULT:
            return "\n" + tail
        return f"\n{self.asnumpy()}\n{tail}"

    def __str__(self):
        return self.__repr__()


# Buffer-protocol format of each dtype (bytes kept alive here for the exported char*).
cdef dict _FORMATS = {_NATIVE[n].char: _NATIVE[n].char.encode() for n in DTYPES}


cdef class CSRNDArray(NDArray):
    """2-D compressed sparse row array: ``data``, ``indices`` (int64), ``indptr`` (int64)."""

    @property
    def data(self):
        """The stored values (a dense copy)."""
        return _copy_part(self, -1)

    @property
    def indices(self):
        """Column indices of the stored values (int64, a copy)."""
        return _copy_part(self, 1)

    @property
    def indptr(self):
        """Row pointer (int64, a copy)."""
        return _copy_part(self, 0)

    @property
    def nnz(self):
        return self._chunk.storage_shape[0]

    @property
    def _num_aux(self):
        """Number of auxiliary arrays (MXNet's private count: indptr and indices)."""
        return 2

    def asscipy(self):
        """A ``scipy.sparse.csr_matrix`` copy (float16 values become float32: SciPy has no
        float16 sparse support)."""
        import scipy.sparse as sp
        data = storage_host(self, -1)
        data = data.astype(np.float32) if data.dtype == np.float16 else data.copy()
        return sp.csr_matrix((data, storage_host(self, 1).copy(),
                              storage_host(self, 0).copy()), shape=self._shape)

    def check_format(self, full_check=True):
        """Validate the layout (MXNet's rules); raises ValueError at the first defect."""
        _hooked(_check_format, "check_format")(self, full_check)


cdef class RowSparseNDArray(NDArray):
    """Row-sparse array: ``data`` rows at the sorted int64 row ``indices``."""

    @property
    def data(self):
        """The stored rows (a dense copy)."""
        return _copy_part(self, -1)

    @property
    def indices(self):
        """Row indices of the stored rows (int64, a copy)."""
        return _copy_part(self, 0)

    @property
    def _num_aux(self):
        """Number of auxiliary arrays (MXNet's private count: the row indices)."""
        return 1

    def check_format(self, full_check=True):
        """Validate the layout (MXNet's rules); raises ValueError at the first defect."""
        _hooked(_check_format, "check_format")(self, full_check)

    def retain(self, indices):
        """Keep only the rows in ``indices`` (MXNet's ``sparse.retain`` as a method)."""
        return _nd("retain")(self, indices)


# -- helpers ------------------------------------------------------------------------------

cdef tuple _with_first(tuple shape, Py_ssize_t first):
    """``(first,) + shape[1:]`` in one tuple allocation."""
    cdef Py_ssize_t i, nd = len(shape)
    cdef tuple t = PyTuple_New(nd)
    cdef object v = first
    Py_INCREF(v)
    PyTuple_SET_ITEM(t, 0, v)
    for i in range(1, nd):
        v = shape[i]
        Py_INCREF(v)
        PyTuple_SET_ITEM(t, i, v)
    return t


cdef tuple _plain_reshape(tuple args, Py_ssize_t size, object dtype):
    """The common reshape: ints >= 1 (or one tuple of them) and at most one -1; else None,
    and mx_reshape takes over (and names what is wrong)."""
    cdef Py_ssize_t k, n, infer = -1
    cdef int64_t known
    cdef tuple t = args
    if len(args) == 1 and type(args[0]) is tuple:
        t = <tuple>args[0]
    n = len(t)
    for k in range(n):
        v = t[k]
        if type(v) is not int:
            return None
        if v == -1 and infer < 0:
            infer = k
        elif v < 1:
            return None
    known = shape_size(t, dtype, "reshape: shape", infer >= 0)
    if infer >= 0:
        if size % known:
            return None
        return t[:infer] + (size // known,) + t[infer + 1:]
    return t if known == size else None


def mx_reshape(str op, tuple src, object target, bint reverse=False, dtype=None):
    """MXNet's reshape rule: the shape that ``target`` gives an array of shape ``src``.

    Positive values are kept; 0 copies the input dimension, -1 infers one dimension,
    -2 copies all remaining ones, -3 merges two, -4 splits one into the two values after
    it (one may be -1); ``reverse`` reads both shapes from the right.  ValueError naming
    ``op`` otherwise (also when the shape's bytes of ``dtype`` overflow, as NumPy).
    ``NDArray.reshape`` and the ``reshape`` operator share it.
    """
    cdef tuple t = as_shape_signed(target)
    if reverse:
        return _mx_reshape(op, src[::-1], t[::-1], t, dtype)[::-1]
    return _mx_reshape(op, src, t, t, dtype)


cdef object _source(str op, tuple src, Py_ssize_t k, tuple given):
    """Input dimension ``k`` that a reshape code refers to."""
    if k >= len(src):
        raise ValueError(f"{op}: shape {given!r} refers to input dimension {k}, which "
                         f"{src!r} lacks")
    return src[k]


cdef tuple _mx_reshape(str op, tuple src, tuple target, tuple given, object dtype):
    cdef list out = []
    cdef Py_ssize_t s = 0, infer = -1, i = 0, n = len(target), ns = len(src)
    cdef int64_t size, known
    while i < n:
        p = target[i]
        if p > 0:
            out.append(p)
            s += 1
        elif p == 0:
            out.append(_source(op, src, s, given))
            s += 1
        elif p == -1:
            if infer >= 0:
                raise ValueError(f"{op}: shape {given!r} has more than one -1")
            infer = len(out)
            out.append(-1)
            s += 1
        elif p == -2:
            out.extend(src[s:])
            s = ns
        elif p == -3:
            out.append(_source(op, src, s, given) * _source(op, src, s + 1, given))
            s += 2
        elif p == -4:
            if i + 2 >= n:
                raise ValueError(f"{op}: -4 in shape {given!r} must be followed by two "
                                 "values")
            d0, d1, d2 = _source(op, src, s, given), target[i + 1], target[i + 2]
            s += 1
            i += 2
            if d1 < -1 or d2 < -1 or d1 == 0 or d2 == 0 or d1 == d2 == -1:
                raise ValueError(f"{op}: -4 in shape {given!r} needs two positive values "
                                 "(one may be -1)")
            d1 = d0 // d2 if d1 == -1 else d1
            d2 = d0 // d1 if d2 == -1 else d2
            if d1 * d2 != d0:
                raise ValueError(f"{op}: -4 in shape {given!r} cannot split dimension {d0} "
                                 f"into {d1} x {d2}")
            out += [d1, d2]
        else:
            raise ValueError(f"{op}: shape {given!r} holds {p}; values must be > 0 or one "
                             "of MXNet's 0, -1, -2, -3, -4")
        i += 1
    size = shape_size(src)
    known = shape_size(tuple(out), dtype, f"{op}: shape", infer >= 0)
    if infer >= 0:
        # known == 0 is checked, not divided by: NumPy refuses to infer next to a 0 too.
        if known == 0 or size % known:
            raise ValueError(f"{op}: cannot infer -1 in {given!r} for an array of shape "
                             f"{src!r}")
        out[infer] = size // known
    elif known != size:
        raise ValueError(f"{op}: cannot reshape an array of shape {src!r} ({size} elements) "
                         f"into {tuple(out)!r} (from {given!r})")
    return tuple(out)


cdef tuple as_shape_signed(object shape):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"reshape: shape must be an int or a tuple of ints (got {shape!r})")
    for v in shape:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"reshape: shape must be an int or a tuple of ints (got {shape!r})")
    return tuple(int(v) for v in shape)


cdef NDArray _view_as(NDArray x, tuple shape):
    """A view of dense ``x`` with ``shape`` of the same size (no MXNet special values)."""
    return _wrap(NDArray, x._chunk, shape, x._dtype, STYPE_DEFAULT, x._offset)


cdef NDArray _copy_part(NDArray x, int i):
    """Part ``i`` of ``x``'s storage as a new dense array on x's context."""
    return dense_from_numpy(storage_host(x, i), x._chunk.ctx)


cdef int _copy_dense(NDArray dst, NDArray src) except -1:
    """Dense ``src`` into dense ``dst`` (same shape) on any contexts, cast unsafely to
    dst's dtype.  No version bump."""
    if dst._chunk.host and src._chunk.host:
        np.copyto(np_view(dst), np_view(src), casting="unsafe")
    elif dst._dtype == src._dtype:
        _transfer.copy_bytes(dst._chunk.ctx, dst._chunk.ptr() + dst._offset, src._chunk.ctx,
                             src._chunk.ptr() + src._offset, dst._size() * dst._dtype.itemsize)
    elif dst._chunk.host:
        np.copyto(np_view(dst), src.asnumpy(), casting="unsafe")
    else:
        _transfer.from_host(dst._chunk.ctx, dst._chunk.ptr() + dst._offset,
                            storage_host(src, -1).astype(dst._dtype))
    return 0


cdef NDArray _copy_sparse(NDArray x, object ctx):
    """A copy of sparse ``x`` on ``ctx``, part by part."""
    cdef Chunk c = x._chunk
    cdef NDArray out = new_sparse(x._stype, x._shape, x._dtype, ctx, c.storage_shape,
                                  list(c.aux_shapes))
    cdef Py_ssize_t i
    for i in range(-1, len(c.aux_shapes)):
        dst, shape, dtype = _part(out, i)
        src = _part(x, i)[0]
        n = shape_size(shape) * (<cnp.dtype>dtype).itemsize
        if n == 0:
            continue
        if out._chunk.host and c.host:
            memcpy(<void*><uintptr_t>dst, <void*><uintptr_t>src, n)
        else:
            _transfer.copy_bytes(ctx, dst, c.ctx, src, n)
    return out


cdef int assign(NDArray dst, NDArray src) except -1:
    """Make ``dst`` hold ``src``'s values (same shape and stype; dense values are copied,
    sparse storage is taken over, since its size may change); bumps ``dst``'s version."""
    if dst._stype != src._stype:   # never let a chunk of another layout in
        if dst._stype != STYPE_DEFAULT and src._stype != STYPE_DEFAULT:
            src = src.tostype("default")  # csr <-> row_sparse has no direct conversion
        src = src.tostype(STYPES[dst._stype])
    if dst._stype == STYPE_DEFAULT:
        dst.copyto_dense(src)
    else:
        _assign_storage(dst, src)
    return 0


cdef _assign_storage(NDArray dst, NDArray src):
    """Make sparse ``dst`` hold ``src``'s storage (same stype, shape, dtype and context)."""
    dst._chunk = src._chunk
    dst._offset = src._offset
    dst._chunk.bump()


cdef _sparse_setitem(NDArray x, key, value):
    if not (isinstance(key, slice) and key == slice(None)) and key is not Ellipsis:
        raise TypeError(f"{x.stype} arrays support only full assignment x[:] = value "
                        f"(got key {key!r})")
    if isinstance(value, NDArray):
        src = value
    else:
        src = dense_from_numpy(np.broadcast_to(np.asarray(value, dtype=x._dtype), x._shape),
                               x._chunk.ctx)
    if (<NDArray>src)._shape != x._shape:
        raise ValueError(f"__setitem__: value of shape {src.shape!r} does not match "
                         f"{x._shape!r}")
    if src.stype != x.stype:
        src = src.tostype("default").tostype(x.stype)
    src = src.copyto(x._chunk.ctx).astype(x._dtype, copy=False)
    if src is x:
        return
    _assign_storage(x, src if src.ctx == x.ctx else src.copyto(x.ctx))


cdef _csr_getitem(NDArray x, key):
    """MXNet's CSRNDArray indexing: ``x[i]`` is row i as a csr array of one row,
    ``x[a:b]`` the rows a to b (step 1)."""
    cdef Py_ssize_t start, stop, step, n = x._shape[0]
    if type(key) is int or (type(key) is not bool and isinstance(key, np.integer)):
        start = key + n if key < 0 else key
        if not 0 <= start < n:
            raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
        return _nd("slice")(x, begin=(start,), end=(start + 1,))
    if not (type(key) is slice and (key.step is None or key.step == 1)):
        raise TypeError(f"csr arrays support only an int or a row slice x[a:b] (got "
                        f"{key!r}); convert with tostype('default') for other indexing")
    start, stop, step = key.indices(x._shape[0])
    return _nd("slice")(x, begin=(start,), end=(max(start, stop),))


# -- indexing through operators (see runtime._indexing) ----------------------------------

cdef object _key_array(NDArray k):
    """An NDArray index as a NumPy array; floating-point indices are cast to int64
    (truncated toward zero), as MXNet casts NDArray indices."""
    a = k.asnumpy()
    return a.astype(np.int64) if a.dtype.kind == "f" else a


cdef object _index_key(object key):
    """``key`` with its NDArrays as NumPy arrays (index arrays and masks are read on the
    host)."""
    if isinstance(key, NDArray):
        return _key_array(<NDArray>key)
    if isinstance(key, tuple):
        return tuple(_key_array(<NDArray>k) if isinstance(k, NDArray) else k for k in key)
    return key


cdef tuple _parse_key(NDArray x, object key, str method):
    """(basic, flat) of ``key`` (one of them None; see runtime._indexing); IndexError
    naming ``method``, the key and the shape."""
    try:
        basic = _indexing.basic(x._shape, key)
        return basic, (_indexing.flat(x._shape, key) if basic is None else None)
    except IndexError as e:
        raise IndexError(f"{method}: {e} (key {key!r}, shape {x._shape!r})") from None


cdef object _getitem(NDArray x, object key):
    key = _index_key(key)
    basic, flat = _parse_key(x, key, "__getitem__")
    if basic is not None:
        begin, end, step, sliced, shape = basic
        if not shape and x._shape:
            shape = (1,)        # MXNet 1.x: an element is a 1-element array, never 0-d
        out = _nd("slice")(x, begin=begin, end=end, step=step)
        return out if shape == sliced else _reshaped(out, shape)
    return _nd("take")(_reshaped(x, (x._size(),)), dense_from_numpy(flat, x._chunk.ctx),
                       mode="raise")


cdef object _reshaped(NDArray x, tuple shape):
    """``_view_as``, or the ``reshape`` operator while recording an array on the tape."""
    if x._entry is not None and _recording_now():
        return _nd("reshape")(x, shape=shape)
    return _view_as(x, shape)


cdef bint _is_number(object v):
    return (type(v) is float or type(v) is int or type(v) is bool
            or isinstance(v, (np.integer, np.floating, np.bool_)))


cdef bint _whole(object key):
    """Whether ``key`` is ``:`` (alone or as a 1-tuple)."""
    if type(key) is tuple and len(key) == 1:
        key = key[0]
    return type(key) is slice and key.start is None and key.stop is None and key.step is None


cdef object _setitem(NDArray x, object key, object value):
    cdef NDArray flat_x
    key = _index_key(key)
    if not x._shape and _whole(key):
        key = ()        # x[:] = v names all of x, a 0-d one too (MXNet 1.x)
    basic, flat = _parse_key(x, key, "__setitem__")
    if basic is not None:
        begin, end, step, sliced, shape = basic
        attrs = {"begin": begin, "end": end, "step": step}
        if shape == ():
            shape = (1,)        # as x[key] reads it (MXNet 1.x): x[1, 2] = [5] works
    else:
        shape = flat.shape
        if x._entry is not None and _recording_now():    # as the basic path (_slice_assign)
            raise RuntimeError(
                f"__setitem__: cannot write into an array on the autograd tape while "
                f"recording (shape {x._shape!r}): the gradients recorded from its old values "
                f"would be wrong; write outside autograd.record(), or into a copy")
        flat_x = _view_as(x, (x._size(),))
        idx = dense_from_numpy(flat, x._chunk.ctx)
        attrs = {"mode": "raise"}
    if _is_number(value):
        scalar = _as_scalar(x, key, value)
        if type(scalar) is float:
            if basic is not None:
                _nd("_slice_assign_scalar")(x, scalar=scalar, out=x, **attrs)
            else:
                _nd("_take_assign_scalar")(flat_x, idx, scalar=scalar, out=flat_x, **attrs)
            return
        value = scalar           # a 0-d array: the operator's float would round it
    rhs = _value_array(x, key, value, shape)
    if basic is not None:
        _nd("_slice_assign")(x, _reshaped(rhs, sliced), out=x, **attrs)
    else:
        _nd("_take_assign")(flat_x, rhs, idx, out=flat_x, **attrs)
        if flat_x._entry is not None:   # recorded (a value on the tape): x is its reshape
            _nd("reshape")(flat_x, shape=x._shape, out=x)


cdef object _as_scalar(NDArray x, object key, object value):
    """``value`` converted to x's dtype as NumPy's assignment converts it: a float when
    the operators' float attribute holds it exactly, else a 0-d NumPy array."""
    a = np.empty((), x._dtype)
    try:
        a[()] = value
    except (ValueError, TypeError) as e:
        raise type(e)(f"__setitem__: {e} (key {key!r}, shape {x._shape!r})") from None
    if x._dtype.kind in "iu" and not -2 ** 53 <= int(a) <= 2 ** 53:
        return a
    return float(a)


cdef NDArray _value_array(NDArray x, object key, object value, tuple shape):
    """``value`` (an NDArray or an array-like) as a dense array of x's dtype and context
    and of ``shape``, broadcast as NumPy's assignment broadcasts."""
    cdef NDArray v
    if not isinstance(value, NDArray):
        if type(value) is np.ndarray and value.dtype == x._dtype and value.shape == shape:
            return dense_from_numpy(value, x._chunk.ctx)
        a = np.empty(shape, x._dtype)
        try:
            a[...] = value
        except (ValueError, TypeError) as e:
            raise type(e)(f"__setitem__: {e} (key {key!r}, shape {x._shape!r})") from None
        return dense_from_numpy(a, x._chunk.ctx)
    v = value
    have = v._shape
    while len(have) > len(shape) and have[0] == 1:    # NumPy drops leading 1s here
        have = have[1:]
    try:
        if len(have) > len(shape) or np.broadcast_shapes(have, shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"__setitem__: could not broadcast input array from shape "
                         f"{v._shape!r} into shape {shape!r} (key {key!r}, shape "
                         f"{x._shape!r})") from None
    if 0 in shape:                  # nothing to write (broadcast_to reads 0 as "keep")
        return new_dense(shape, x._dtype, x._chunk.ctx, INIT_NONE)
    if v._stype != STYPE_DEFAULT:
        v = v.tostype("default")
    if v._chunk.ctx != x._chunk.ctx:
        v = v.copyto(x._chunk.ctx)
    if v._dtype != x._dtype:
        v = v.astype(x._dtype)
    have = (1,) * (len(shape) - len(have)) + have
    if v._shape != have:
        v = _reshaped(v, have)
    return v if have == shape else _nd("broadcast_to")(v, shape=shape)
