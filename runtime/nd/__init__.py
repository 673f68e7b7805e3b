"""``runtime.nd``: the NDArray API (MXNet's ``mx.nd``).

Creation: :func:`array`, :func:`zeros`, :func:`ones`, :func:`empty`, :func:`full`,
:func:`arange`, :func:`eye`, :func:`linspace`, :func:`zeros_like`, :func:`ones_like`;
the fused recurrent layers :func:`RNN` (MXNet's ``RNN`` operator, made of registry operators);
interop: :func:`from_dlpack`; files: :func:`save`, :func:`load`, :func:`load_frombuffer`; submodules
:mod:`runtime.nd.sparse`, :mod:`runtime.nd.random`, :mod:`runtime.nd.linalg`, :mod:`runtime.nd.image`
(MXNet's image operators) and :mod:`runtime.nd.contrib` (control flow and MXNet's contrib operators).
"""

import ctypes as _ctypes
import types

import numpy as np

from runtime import _device
from runtime._ndarray import (CSRNDArray, NDArray, RowSparseNDArray, as_ctx, as_dtype, borrow,
                              empty, full)
from runtime._ndarray import from_numpy as _from_numpy
from runtime._storage import is_scipy_sparse
from runtime.context import Context
from runtime.nd import linalg, ndarray, random, sparse
from runtime.nd._creation import eye, linspace, ones, zeros
from runtime.nd._io import load, load_frombuffer, save
from runtime.nd._cached_op import CachedOp
from runtime.operator import custom as Custom


def array(source_array, ctx=None, dtype=None):
    """A new array holding a copy of ``source_array``.

    Parameters
    ----------
    source_array : array_like, NDArray or scipy.sparse matrix
        Nested lists, NumPy arrays, NDArrays (dense or sparse), SciPy CSR matrices.
    ctx : Context, optional
        Where the array lives (default: the current context).
    dtype : str or numpy dtype, optional
        As MXNet: ``source_array.dtype`` when it is an NDArray, float32 otherwise (NumPy
        arrays of other dtypes are converted to float32 unless ``dtype`` is given).

    Raises
    ------
    ValueError
        Ragged nested sequences; NaN for an integer dtype.
    TypeError
        Values that are not numbers, or an unsupported dtype.
    OverflowError
        A Python number that ``dtype`` cannot hold (300 for int8, an infinity for an
        integer dtype), as NumPy 2.
    """
    if isinstance(source_array, NDArray):
        if source_array.stype != "default":
            return sparse.array(source_array, ctx=ctx, dtype=dtype)
        d = as_dtype(dtype if dtype is not None else source_array.dtype)
        return source_array.copyto(as_ctx(ctx) if ctx is not None else source_array.ctx) \
            .astype(d, copy=False)
    if is_scipy_sparse(source_array):
        return sparse.array(source_array, ctx=ctx, dtype=dtype)
    d = as_dtype(dtype)
    return _from_numpy(_to_numpy("array", "source_array", source_array, d), ctx)


def _to_numpy(op, arg, src, dtype):
    """``src`` as a NumPy array of ``dtype``, with ndrt's messages for ragged and
    non-numeric input.

    Python numbers (and numeric strings) are converted by NumPy one by one, as
    ``np.array(src, dtype)`` does (and MXNet's ``nd.array``): a number an integer dtype
    cannot hold raises
    OverflowError (NaN ValueError), and integers beyond int64 are accepted for a
    floating dtype.  NumPy arrays are cast as ``astype`` casts (C casting, no checks).
    """
    try:
        a = np.asarray(src)
    except ValueError as e:
        raise ValueError(f"{op}: {arg} must be a rectangular array-like, not a ragged "
                         f"sequence ({e})") from None
    if a.dtype.kind in "US":        # numeric strings, parsed as NumPy parses them
        try:
            return a.astype(dtype)
        except ValueError as e:
            raise ValueError(f"{op}: {arg} must hold numbers or numeric strings ({e})") \
                from None
    # object: Python ints beyond (u)int64, possibly mixed with other numbers
    numbers = a.dtype.kind in "biuf" or (a.dtype.kind == "O" and all(
        isinstance(v, (int, float, np.integer, np.floating)) for v in a.flat))
    if not numbers:
        raise TypeError(f"{op}: {arg} must hold numbers (got values of dtype {a.dtype})")
    if a is src:
        return a.astype(dtype, copy=False)
    try:
        return np.asarray(src, dtype=dtype)
    except (OverflowError, ValueError) as e:
        raise type(e)(f"{op}: {arg} does not fit dtype {dtype}: {e}") from None


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, ctx=None, dtype=None):
    """Evenly spaced values in [start, stop) (MXNet's ``nd.arange``), each ``repeat`` times."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be 0")
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"arange: repeat must be an integer >= 1 (got {repeat!r})")
    d = as_dtype(dtype)
    a = np.arange(start, stop, step, dtype=np.float64).astype(d)
    if repeat > 1:
        a = np.repeat(a, repeat)
    return _from_numpy(a, ctx)


def zeros_like(data):
    """Zeros with the shape, dtype, context and storage type of ``data``."""
    return zeros(data.shape, ctx=data.ctx, dtype=data.dtype, stype=data.stype)


def ones_like(data):
    """Ones with the shape, dtype and context of ``data`` (dense)."""
    return ones(data.shape, ctx=data.ctx, dtype=data.dtype)


# NumPy 2.0 imports only unversioned DLPack capsules, which cannot say "read-only", and
# marks every import read-only; unversioned producers (NumPy 2.0 itself, PyTorch) export
# only writable memory, so there the flag carries no information.  From NumPy 2.1 on, the
# versioned protocol carries the producer's flag and it is honoured.
_DLPACK_KNOWS_READONLY = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


def from_numpy(ndarray, zero_copy=True, ctx=None):
    """An NDArray of the NumPy array ``ndarray`` (MXNet's ``nd.from_numpy``).

    With ``zero_copy`` (the default, as MXNet) the NDArray shares ``ndarray``'s memory
    (and keeps it alive, as :func:`from_dlpack` does), and ``ndarray`` becomes read-only,
    as MXNet makes it: writes go through the NDArray, whose version counter sees them, and
    show in both.  ``ndarray`` must then be C-contiguous (``ValueError`` otherwise, as in
    MXNet).  A read-only ``ndarray`` is shared too (a second ``from_numpy`` of the same
    array shares it again) unless its memory itself cannot be written (NumPy refuses to
    make it writable, as for an array over ``bytes``); that one, a byte-swapped one, and
    one headed for another ``ctx`` than the CPU are copied.  ``zero_copy=False`` always
    copies.
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: ndarray must be a numpy.ndarray (got "
                        f"{type(ndarray).__name__})")
    if zero_copy and not ndarray.flags.c_contiguous:
        raise ValueError("from_numpy: ndarray must be C-contiguous for zero_copy=True (got "
                         f"strides {ndarray.strides!r} for shape {ndarray.shape!r}); pass "
                         "zero_copy=False to copy it")
    cpu = Context("cpu", 0)
    if zero_copy and (ctx is None or as_ctx(ctx) == cpu) and _memory_writable(ndarray) \
            and ndarray.dtype.isnative:
        d = as_dtype(ndarray.dtype, "from_numpy: ndarray's dtype")
        shared = borrow(ndarray, ndarray.ctypes.data, ndarray.shape, d, cpu)
        ndarray.flags.writeable = False
        return shared
    return _from_numpy(ndarray, ctx)


def _memory_writable(ndarray):
    """Whether ``ndarray``'s memory may be written: NumPy lets a read-only array become
    writable again exactly when the memory under it is."""
    if ndarray.flags.writeable:
        return True
    try:
        ndarray.flags.writeable = True
    except ValueError:
        return False
    ndarray.flags.writeable = False
    return True


def to_dlpack_for_read(data):
    """A DLPack capsule of ``data`` for reading (MXNet's ``nd.to_dlpack_for_read``):
    ``data.__dlpack__()``; NumPy/PyTorch import it without a copy."""
    if not isinstance(data, NDArray):
        raise TypeError(f"to_dlpack_for_read: data must be an NDArray (got "
                        f"{type(data).__name__})")
    return data.__dlpack__()


def to_dlpack_for_write(data):
    """A DLPack capsule of ``data`` for writing (MXNet's ``nd.to_dlpack_for_write``):
    the consumer's writes land in ``data``."""
    if not isinstance(data, NDArray):
        raise TypeError(f"to_dlpack_for_write: data must be an NDArray (got "
                        f"{type(data).__name__})")
    return data.__dlpack__()


class _Capsule:
    """A DLPack producer around a bare capsule (what MXNet's ``to_dlpack_for_read``
    returns), for NumPy's and CuPy's ``from_dlpack``, which take producers only."""

    def __init__(self, capsule):
        get = _ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = _ctypes.c_void_p, [_ctypes.py_object, _ctypes.c_char_p]
        try:
            managed = get(capsule, b"dltensor")
        except ValueError:
            raise ValueError("from_dlpack: the capsule must be an unused 'dltensor' "
                             "capsule (a DLPack capsule imports once)") from None
        # DLManagedTensor starts with its DLTensor: data pointer, then DLDevice
        self._device = tuple((_ctypes.c_int32 * 2).from_address(managed + _ctypes.sizeof(
            _ctypes.c_void_p)))
        self._capsule = capsule

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def from_dlpack(obj):
    """An NDArray sharing the memory of a DLPack producer (NumPy, PyTorch, CuPy...) or
    of a DLPack capsule (MXNet's ``nd.from_dlpack``, which takes capsules such as
    :func:`to_dlpack_for_read` returns; a capsule imports once).

    Zero-copy for C-contiguous, writable host memory of a supported dtype; other host
    memory is copied.  GPU producers need CuPy (the ``gpu`` extra).
    """
    # a bare capsule is unversioned: it cannot say "read-only", and NumPy marks its
    # import read-only for that reason alone; MXNet shares its memory
    bare = type(obj).__name__ == "PyCapsule"
    if bare:
        obj = _Capsule(obj)
    dev_type, dev_id = obj.__dlpack_device__()
    if dev_type in (1, 3):                                   # kDLCPU, kDLCUDAHost
        a = np.from_dlpack(obj)
        d = as_dtype(a.dtype, "the DLPack dtype")
        writable = a.flags.writeable or bare or not _DLPACK_KNOWS_READONLY
        if a.flags.c_contiguous and writable and a.dtype.isnative:
            return borrow(a, a.ctypes.data, a.shape, d, Context("cpu", 0))
        return _from_numpy(np.ascontiguousarray(a), Context("cpu", 0))
    if dev_type == 2:                                        # kDLCUDA
        cupy = _device.cupy("from_dlpack of GPU memory")
        a = cupy.ascontiguousarray(cupy.from_dlpack(obj))
        d = as_dtype(a.dtype, "the DLPack dtype")
        return borrow(a, a.data.ptr, a.shape, d, Context("gpu", int(dev_id)))
    raise ValueError(f"from_dlpack: device type {dev_type} is not supported (CPU, CUDA "
                     "and CUDA host memory are)")


def reset_arrays(*data, num_arrays=None):
    """Set every array of ``data`` to zero in place (MXNet's ``nd.reset_arrays``;
    ``num_arrays``, if given, must equal their number).  All are checked first: a bad
    argument changes nothing."""
    if num_arrays is not None and num_arrays != len(data):
        raise ValueError(f"reset_arrays: num_arrays must equal the number of arrays "
                         f"{len(data)} (got {num_arrays!r})")
    for i, a in enumerate(data):
        if not isinstance(a, NDArray):
            raise TypeError(f"reset_arrays: data[{i}] must be an NDArray (got "
                            f"{type(a).__name__})")
    for a in data:
        a[:] = 0


def waitall():
    """No-op: ndrt executes eagerly (kept for MXNet code)."""


import runtime.ops  # noqa: E402  (registers the operators)
from runtime.nd import _ops, contrib, image, linalg  # noqa: E402
from runtime.nd._rnn import RNN  # noqa: E402

_ops.install(globals())

for _name in random.LEGACY:         # mx.nd.random_uniform, mx.nd.sample_normal, ...
    globals()[_name] = getattr(random, _name)
# MXNet's un-prefixed names of the legacy samplers (the operators' aliases)
uniform, normal, shuffle = random.random_uniform, random.random_normal, random.shuffle

# MXNet's mx.nd._internal and mx.nd.op: namespaces holding every operator, hidden ones
# (_square_sum, _plus_scalar, _ravel_multi_index) included
_internal = types.ModuleType("runtime.nd._internal", "Every registry operator by name, "
                             "hidden ones included (MXNet's mx.nd._internal).")
op = types.ModuleType("runtime.nd.op", "Every registry operator by name (MXNet's "
                      "mx.nd.op).")
_ops.install(vars(_internal))
_ops.install(vars(op))


def concatenate(arrays, axis=0, always_copy=True):
    """MXNet's ``nd.concatenate``: the arrays of the list ``arrays`` joined along
    ``axis`` (the ``concat`` operator); one array with ``always_copy=False`` is returned
    as it is."""
    if not isinstance(arrays, (list, tuple)) or not arrays or not all(
            isinstance(a, NDArray) for a in arrays):
        raise TypeError(f"concatenate: arrays must be a non-empty list of NDArrays (got "
                        f"{arrays!r})")
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    return concat(*arrays, dim=axis)  # noqa: F821  (installed above)


def histogram(a, bins=10, range=None):
    """MXNet's ``nd.histogram``: ``(counts, bin_edges)`` of the values of ``a``, as
    ``np.histogram``: ``bins`` an int (that many equal bins over ``range``, by default
    a's minimum to maximum) or an NDArray of increasing edges.  Counts are int64, the
    edges float32 (an NDArray ``bins`` keeps its dtype).  Not differentiable."""
    if not isinstance(a, NDArray):
        raise TypeError(f"histogram: a must be an NDArray (got {type(a).__name__})")
    edges = bins.asnumpy() if isinstance(bins, NDArray) else bins
    if not isinstance(bins, NDArray) and (isinstance(bins, bool) or not isinstance(
            bins, (int, np.integer)) or bins < 1):
        raise ValueError(f"histogram: bins must be an int >= 1 or an NDArray of edges (got "
                         f"{bins!r})")
    try:
        counts, edges = np.histogram(a.asnumpy(), bins=edges, range=range)
    except ValueError as e:
        raise ValueError(f"histogram: {e} (bins={bins!r}, range={range!r})") from None
    dtype = bins.dtype if isinstance(bins, NDArray) else np.float32
    return (_from_numpy(counts.astype(np.int64), a.ctx),
            _from_numpy(edges.astype(dtype), a.ctx))


def onehot_encode(indices, out):
    """MXNet's legacy ``nd.onehot_encode``: one-hot rows of ``indices`` written into the
    2-D ``out`` (width ``out.shape[1]``, out's dtype), which is returned."""
    if not isinstance(out, NDArray) or out.ndim != 2:
        raise ValueError(f"onehot_encode: out must be a 2-D NDArray (got "
                         f"{getattr(out, 'shape', out)!r})")
    return one_hot(indices, depth=out.shape[1], dtype=out.dtype, out=out)  # noqa: F821


def _view_or_op(name, view_shape):
    """The method ``name`` with MXNet's ``inplace=``: True returns a view (a reshape
    sharing the memory) of ``view_shape(x, *args, **kwargs)``, False the operator's copy."""
    op = _ops.method(name)

    def method(x, *args, inplace=False, **kwargs):
        if not inplace:
            return op(x, *args, **kwargs)
        return x.reshape(view_shape(x, *args, **kwargs))
    method.__name__ = name
    method.__doc__ = (f"NDArray.{name}: the ``{name}`` operator, or with ``inplace=True`` "
                      f"a view of the same memory (MXNet).")
    return method


def _expanded(x, axis):
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ValueError(f"expand_dims: axis must be in [{-x.ndim - 1}, {x.ndim}] (got "
                         f"{axis})")
    shape = list(x.shape)
    shape.insert(axis % (x.ndim + 1), 1)
    return tuple(shape)


def _squeezed(x, axis=None):
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = [axis] if isinstance(axis, int) else list(axis)
        if len(set(a % x.ndim for a in axes)) != len(axes) or \
                not all(-x.ndim <= a < x.ndim for a in axes):
            raise ValueError(f"squeeze: axis must hold distinct axes of a {x.ndim}-d array "
                             f"(got {axis!r})")
        axes = [a % x.ndim for a in axes]
        if any(x.shape[a] != 1 for a in axes):
            raise ValueError(f"squeeze: the axes squeezed must have size 1 (got axis "
                             f"{axis!r} of shape {x.shape!r})")
    return tuple(d for i, d in enumerate(x.shape) if i not in axes) or (1,)


_INPLACE_METHODS = {
    "flatten": _view_or_op("flatten", lambda x: (x.shape[0] if x.ndim else 1, -1)),
    "expand_dims": _view_or_op("expand_dims", _expanded),
    "squeeze": _view_or_op("squeeze", _squeezed),
}


def _method(name):
    """The nd function behind ``NDArray.<name>``: ``x.retain(indices)`` is
    :func:`sparse.retain` (it takes array-like indices); ``flatten``, ``expand_dims`` and
    ``squeeze`` take MXNet's ``inplace=``; the rest are operators."""
    if name == "retain":
        return sparse.retain
    return _INPLACE_METHODS.get(name) or _ops.method(name)



__all__ = ["NDArray", "CSRNDArray", "RowSparseNDArray", "array", "zeros", "ones", "empty",
           "full", "arange", "eye", "linspace", "zeros_like", "ones_like", "from_dlpack",
           "save", "load", "load_frombuffer", "waitall", "concatenate", "onehot_encode", "random", "sparse", "linalg",
           "image", "contrib", "CachedOp", "Custom"]
