"""Inference helpers of the invocation layer, compiled: operator attributes, NumPy
broadcasting of shapes, axis normalisation.

The registry (``runtime.ops.registry``) declares each operator's attributes with
:class:`Attr` and its inference functions call :func:`broadcast_shapes`,
:func:`normalize_axis` and :func:`reduced_axes`; the invoker (``runtime._imperative``)
caches what inference returns per signature.  Nothing here imports above the storage
layer.
"""
import numpy as np

from runtime._ndarray import as_dtype

# Attribute kinds (Attr.kind names them).
cdef enum:
    K_ANY = 0
    K_FLOAT = 1
    K_INT = 2
    K_BOOL = 3
    K_AXIS = 4
    K_AXES = 5
    K_SHAPE = 6
    K_STR = 7
    K_DTYPE = 8
    K_OPT_DTYPE = 9
    K_FLOATS = 10

cdef dict _KINDS = {"any": K_ANY, "float": K_FLOAT, "int": K_INT, "bool": K_BOOL,
                    "axis": K_AXIS, "axes": K_AXES, "shape": K_SHAPE, "str": K_STR,
                    "dtype": K_DTYPE, "dtype_or_none": K_OPT_DTYPE, "floats": K_FLOATS}


cdef inline bint _is_int(object v):
    """A Python or NumPy integer, not a bool."""
    return type(v) is int or (isinstance(v, (int, np.integer)) and not isinstance(v, bool))


cdef class Attr:
    """One operator attribute: its default and how to check and convert a value.

    kind: 'int', 'float', 'bool', 'axis' (int or None), 'axes' (int, tuple of ints or
    None), 'shape' (tuple of ints), 'floats' (tuple of floats: a number or a sequence of
    numbers, MXNet's ``tuple of <float>``), 'str' (with ``choices``), 'dtype', 'dtype_or_none'
    (None or a dtype, limited to the dtype names in ``choices`` when given), 'any' (passed
    through unchecked; an operator with such an attribute is not cached by the invoker,
    whose signatures need hashable values of one canonical type per kind).  An 'int',
    'float', 'bool' or 'shape' attribute whose default is None (and is not required)
    takes an explicit None as that default.  ``infer=False`` declares that the attribute does not
    affect inference (output shapes, dtypes, storage types, mode): the invoker leaves it
    out of its inference signature, so a value that changes at every call (an optimizer's
    learning rate) still hits the cache; inference then checks its value only on a cache
    miss, and the op's kernels must check it at every call.
    """
    cdef readonly str kind
    cdef public object default
    cdef readonly object choices
    cdef readonly bint required
    cdef readonly bint infer
    cdef int _kind

    def __init__(self, str kind, default=None, choices=None, required=False, infer=True):
        if kind not in _KINDS:
            raise ValueError(f"attribute kind must be one of {', '.join(_KINDS)} (got "
                             f"{kind!r})")
        self.kind, self.default, self.choices, self.required = kind, default, choices, required
        self.infer = infer
        self._kind = _KINDS[kind]

    @property
    def typed(self):
        """False for kind 'any': its values come unconverted."""
        return self._kind != K_ANY

    cpdef object parse(self, str op, str name, object v):
        """``v`` checked and converted to the canonical type of the kind."""
        cdef int k = self._kind
        if k == K_ANY:
            return v
        if v is None and (k == K_INT or k == K_FLOAT or k == K_BOOL or k == K_SHAPE) \
                and self.default is None and not self.required:
            return None     # an optional number given as its default (MXNet's optional<>)
        if k == K_FLOAT:
            if type(v) is float:
                return v
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TypeError(f"{op}: {name} must be a number (got {v!r})")
            return float(v)
        if k == K_INT:
            if not _is_int(v):
                raise TypeError(f"{op}: {name} must be an integer (got {v!r})")
            return int(v)
        if k == K_BOOL:
            if type(v) is bool:
                return v
            if not isinstance(v, (bool, np.bool_, int)) or v not in (0, 1):
                raise TypeError(f"{op}: {name} must be a bool (got {v!r})")
            return bool(v)
        if k == K_AXIS:
            if v is None:
                return None
            if not _is_int(v):
                raise TypeError(f"{op}: {name} must be an integer or None (got {v!r})")
            return int(v)
        if k == K_AXES or k == K_SHAPE:
            if v is None and k == K_AXES:
                return None
            if _is_int(v):
                return (int(v),)
            # MXNet's attribute strings take any sequence of ints: ranges and 1-D NumPy
            # integer arrays too (``broadcast_to(shape=np.array([2, 3]))``)
            if isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "iu":
                v = v.tolist()
            if isinstance(v, (tuple, list, range)):
                for a in v:
                    if not _is_int(a):
                        break
                else:
                    return tuple([int(a) for a in v])
            raise TypeError(f"{op}: {name} must be an int or a tuple of ints (got {v!r})")
        if k == K_FLOATS:
            return _floats(op, name, v)
        if k == K_STR:
            if v not in self.choices:
                raise ValueError(f"{op}: {name} must be one of "
                                 f"{', '.join(map(repr, self.choices))} (got {v!r})")
            return v
        if k == K_OPT_DTYPE and v is None:
            return None
        d = as_dtype(v, f"{op}: {name}")
        if k == K_OPT_DTYPE and self.choices is not None and d.name not in self.choices:
            raise ValueError(f"{op}: {name} must be None or one of "
                             f"{', '.join(map(repr, self.choices))} (got {v!r})")
        return d

    def __repr__(self):
        return f"Attr({self.kind!r}, default={self.default!r})"


cdef tuple _floats(str op, str name, object v):
    """``v`` (a real number, or a sequence or 1-D array of them) as a tuple of floats."""
    if isinstance(v, np.ndarray) and v.ndim == 1:
        v = v.tolist()
    if not isinstance(v, (tuple, list)):
        v = (v,)
    for a in v:
        if isinstance(a, (bool, np.bool_)) or not isinstance(
                a, (int, float, np.integer, np.floating)):
            raise TypeError(f"{op}: {name} must be a number or a tuple of numbers (got "
                            f"{v!r})")
    return tuple([float(a) for a in v])


cpdef dict parse_attrs(str op, dict spec, dict kwargs):
    """Keyword attributes of operator ``op`` validated and converted, defaults filled in,
    in the order of ``spec`` ({name: Attr}); unknown names raise TypeError."""
    cdef dict given = None, attrs = {}
    cdef Attr a
    if kwargs:
        given = {}
        for k, v in kwargs.items():
            a = spec.get(k)
            if a is None:
                known = ", ".join(spec) or "none"
                raise TypeError(f"{op}: unknown attribute {k!r} (attributes: {known})")
            given[k] = a.parse(op, k, v)
    for k, a in spec.items():
        if given is not None and k in given:
            attrs[k] = given[k]
        elif a.required:
            raise TypeError(f"{op}: attribute {k!r} is required")
        else:
            attrs[k] = a.default
    return attrs


# -- shapes and axes --------------------------------------------------------------------

def broadcast_shapes(str op, *shapes):
    """NumPy broadcasting of ``shapes`` (tuples of ints); ValueError naming the op and
    the shapes.  Equal shapes return the first one as it is."""
    cdef Py_ssize_t n = len(shapes), i
    if n == 0:
        return ()
    first = shapes[0]
    for i in range(1, n):
        if shapes[i] is not first and shapes[i] != first:
            break
    else:
        return tuple(first)
    return _broadcast(op, shapes)


cdef tuple _broadcast(str op, tuple shapes):
    cdef Py_ssize_t ndim = 0, i, j, k, d, s
    cdef list out
    for shape in shapes:
        ndim = max(ndim, len(shape))
    out = [1] * ndim
    for shape in shapes:
        k = ndim - len(shape)
        for j in range(len(shape)):
            s = shape[j]
            d = out[k + j]
            if s == d or s == 1:
                continue
            if d == 1:
                out[k + j] = s
            else:
                raise ValueError(f"{op}: shapes {', '.join(map(repr, shapes))} are not "
                                 "broadcastable")
    return tuple(out)


cpdef Py_ssize_t normalize_axis(str op, object axis, Py_ssize_t ndim,
                                str name="axis") except -1:
    """An axis in [-ndim, ndim) as a non-negative int; ValueError otherwise.

    The one axis rule of the operators: a 0-d array has no axis (NumPy's
    ``normalize_axis_index``).  Reductions also take axis 0 or -1 of a 0-d array, as NumPy's
    and MXNet's do: :func:`reduced_axes` and ``ops.reduce.reduction_axis`` say so.
    """
    cdef Py_ssize_t a
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: {name} {axis} is out of range for an array of {ndim} "
                         f"dimension(s)")
    a = axis
    return a + ndim if a < 0 else a


cdef list _ALL_AXES = [tuple(range(n)) for n in range(65)]


cpdef tuple reduced_axes(str op, object axis, bint exclude, Py_ssize_t ndim):
    """The sorted tuple of axes that a reduction over ``axis`` (None or (): all, as MXNet;
    an int or a tuple of ints) reduces, after ``exclude`` (reduce the others) and negative axes.  A
    0-d array has no axes: any valid ``axis`` (0 or -1) reduces its single value.  An
    ``axis`` tuple that is already sorted and non-negative comes back as it is."""
    cdef Py_ssize_t i, a, n, prev = -1
    cdef unsigned long long seen = 0
    cdef bint as_given
    if axis is None or (type(axis) is tuple and len(<tuple>axis) == 0):
        # MXNet: an empty axis tuple reduces every axis, as None does
        if exclude:
            return ()
        return _ALL_AXES[ndim] if ndim <= 64 else tuple(range(ndim))
    if _is_int(axis):
        axis = (axis,)
    as_given = type(axis) is tuple
    n = len(axis)
    for i in range(n):
        v = axis[i]
        if ndim == 0:           # the reductions' exception: axis 0 or -1 of a 0-d array
            if v != 0 and v != -1:
                normalize_axis(op, v, ndim)
            if n > 1:
                raise ValueError(f"{op}: axis {axis!r} repeats an axis")
            continue
        a = normalize_axis(op, v, ndim)
        if seen >> a & 1:
            raise ValueError(f"{op}: axis {axis!r} repeats an axis")
        seen |= 1ULL << a
        if a <= prev or type(v) is not int or v != a:
            as_given = False
        prev = a
    if ndim == 0:
        return ()
    if exclude:
        return tuple([i for i in range(ndim) if not seen >> i & 1])
    if as_given:
        return axis
    return tuple([i for i in range(ndim) if seen >> i & 1])
