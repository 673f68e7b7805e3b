"""The operator registry: each operator is one declaration (data), read by the invoker.

An :class:`Op` says what the invocation layer (``runtime._imperative``) needs:

- ``inputs``: names of the array inputs (``None`` entries of ``variadic`` ops take any
  number); ``num_outputs`` (an int or a function of the attributes);
- ``attrs``: {name: :class:`Attr`} with defaults and validation;
- ``infer_shape(attrs, in_shapes) -> out_shapes``, ``infer_type(attrs, in_dtypes) ->
  out_dtypes`` (defaults: same as the first input);
- ``infer_storage(attrs, in_stypes) -> (out_stypes, mode)``, mode one of ``'dense'``,
  ``'sparse'``, ``'fallback'`` (default: dense for dense inputs, else the sparse kernel's
  ``sparse_stypes`` rule if it accepts the inputs, else fallback);
- ``compute(attrs, ins, outs)``: the dense kernel, writing into the host (NumPy) or device
  (CuPy) arrays ``outs``; the invoker turns the four requests (null, write, inplace,
  add) into calls of it, so a kernel only ever writes;
- ``compute_sparse(attrs, inputs) -> outputs``: the sparse kernel on NDArrays;
- ``gradient(attrs, inputs, outputs, out_grads) -> in_grads``: the gradient rule, made of
  registry ops (so gradients of gradients work); ``None`` entries mean no gradient;
  ``grad_inputs``/``grad_outputs``: the inputs/outputs whose values the rule reads, by
  position (default: none).  The tape keeps those arrays and a ``runtime._desc.ArrayDesc``
  (shape, dtype, storage type, context) of every other one, which the rule receives in
  the array's place: a rule that needs only shapes or dtypes declares nothing.  A
  declaration is a tuple of positions, or ``f(attrs, n) -> positions`` where it depends
  on the attributes or on the number ``n`` of inputs (variadic ops) or outputs;
  :meth:`Op.grad_reads` resolves either;
- ``inplace``: pairs (input, output) whose buffers may be shared, with ``identity`` pairs
  (output equals input) listed separately; ``mutates``: inputs the op writes;
  ``ignores``: inputs whose values the op never reads (only their shape/dtype).
"""

import math

import numpy as np

from runtime._ndarray import as_dtype

OPS = {}


class Attr:
    """One operator attribute: its default and how to check and convert a value.

    kind: 'int', 'float', 'bool', 'axis' (int or None), 'axes' (int, tuple of ints or
    None), 'shape' (tuple of ints), 'str' (with ``choices``), 'dtype', 'any'.
    """

    __slots__ = ("kind", "default", "choices", "required")

    def __init__(self, kind, default=None, choices=None, required=False):
        self.kind, self.default, self.choices, self.required = kind, default, choices, required

    def parse(self, op, name, v):
        k = self.kind
        if k == "any":
            return v
        if k == "float":
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TypeError(f"{op}: {name} must be a number (got {v!r})")
            return float(v)
        if k == "int":
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{op}: {name} must be an integer (got {v!r})")
            return int(v)
        if k == "bool":
            if not isinstance(v, (bool, np.bool_, int)) or v not in (0, 1):
                raise TypeError(f"{op}: {name} must be a bool (got {v!r})")
            return bool(v)
        if k == "axis":
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{op}: {name} must be an integer or None (got {v!r})")
            return int(v)
        if k in ("axes", "shape"):
            if v is None and k == "axes":
                return None
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                return (int(v),)
            if isinstance(v, (tuple, list)) and all(
                    isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in v):
                return tuple(int(a) for a in v)
            raise TypeError(f"{op}: {name} must be an int or a tuple of ints (got {v!r})")
        if k == "str":
            if v not in self.choices:
                raise ValueError(f"{op}: {name} must be one of {', '.join(map(repr, self.choices))} "
                                 f"(got {v!r})")
            return v
        if k == "dtype":
            return as_dtype(v, f"{op}: {name}")
        raise AssertionError(k)


def _reads(op, what, positions, n):
    """A grad_inputs/grad_outputs declaration: () for None, a callable as it is, else a
    tuple of distinct positions (below ``n`` when the count is fixed)."""
    if positions is None:
        return ()
    if callable(positions):
        return positions
    positions = tuple(positions)
    bad = [p for p in positions
           if not isinstance(p, int) or p < 0 or (n is not None and p >= n)]
    if bad or len(set(positions)) != len(positions):
        below = "" if n is None else f" below {n}"
        raise ValueError(f"{op}: {what} must be distinct positions >= 0{below} (got "
                         f"{positions!r})")
    return positions


def _same_shape(attrs, shapes):
    return [shapes[0]]


def _same_type(attrs, dtypes):
    return [dtypes[0]]


class Op:
    """A registered operator (see the module docstring for the fields)."""

    __slots__ = ("name", "aliases", "inputs", "variadic", "num_outputs", "attrs",
                 "infer_shape", "infer_type", "infer_storage", "compute", "compute_sparse",
                 "sparse_stypes", "gradient", "grad_inputs", "grad_outputs", "inplace",
                 "custom_storage",
                 "identity", "mutates", "ignores", "differentiable", "doc", "needs_rng",
                 "fast")

    def __init__(self, name, inputs=("data",), num_outputs=1, attrs=None, infer_shape=None,
                 infer_type=None, infer_storage=None, compute=None, compute_sparse=None,
                 sparse_stypes=None, gradient=None, grad_inputs=None, grad_outputs=None,
                 inplace=(), identity=(), mutates=(), ignores=(), aliases=(),
                 variadic=False, differentiable=True, doc="", needs_rng=False, fast=None):
        self.name = name
        self.aliases = tuple(aliases)
        self.inputs = tuple(inputs)
        self.variadic = variadic
        self.num_outputs = num_outputs
        self.attrs = dict(attrs or {})
        for k, a in self.attrs.items():   # defaults in their parsed form (e.g. a dtype)
            if a.default is not None:
                a.default = a.parse(name, k, a.default)
        self.infer_shape = infer_shape or _same_shape
        self.infer_type = infer_type or _same_type
        self.infer_storage = infer_storage or self._default_storage
        # False: dense inputs give dense outputs and the dense kernel (the invoker then
        # skips the call)
        self.custom_storage = infer_storage is not None
        self.compute = compute
        self.compute_sparse = compute_sparse
        self.sparse_stypes = sparse_stypes
        self.gradient = gradient
        self.grad_inputs = _reads(name, "grad_inputs", grad_inputs,
                                  None if variadic else len(self.inputs))
        self.grad_outputs = _reads(name, "grad_outputs", grad_outputs,
                                   num_outputs if isinstance(num_outputs, int) else None)
        self.inplace = tuple(inplace)
        self.identity = tuple(identity)
        self.mutates = tuple(mutates)
        self.ignores = tuple(ignores)
        self.differentiable = differentiable and gradient is not None
        self.doc = doc
        self.needs_rng = needs_rng
        self.fast = fast

    def n_out(self, attrs):
        n = self.num_outputs
        return n(attrs) if callable(n) else n

    def grad_reads(self, attrs, n_in, n_out):
        """(input positions, output positions) whose values the gradient rule reads for
        parsed ``attrs`` and ``n_in`` inputs, ``n_out`` outputs: what the tape saves."""
        ins, outs = self.grad_inputs, self.grad_outputs
        return (tuple(ins(attrs, n_in)) if callable(ins) else ins,
                tuple(outs(attrs, n_out)) if callable(outs) else outs)

    def parse_attrs(self, kwargs):
        """Validate and convert keyword attributes; unknown names raise TypeError."""
        attrs = {}
        spec = self.attrs
        for k, v in kwargs.items():
            a = spec.get(k)
            if a is None:
                known = ", ".join(spec) or "none"
                raise TypeError(f"{self.name}: unknown attribute {k!r} (attributes: {known})")
            attrs[k] = a.parse(self.name, k, v)
        for k, a in spec.items():
            if k not in attrs:
                if a.required:
                    raise TypeError(f"{self.name}: attribute {k!r} is required")
                attrs[k] = a.default
        return attrs

    def _default_storage(self, attrs, stypes):
        n = self.n_out(attrs)
        if all(s == "default" for s in stypes):
            return ["default"] * n, "dense"
        if self.sparse_stypes is not None:
            outs = self.sparse_stypes(attrs, stypes)
            if outs is not None:
                return list(outs), "sparse"
        return ["default"] * n, "fallback"

    def __repr__(self):
        return f"<Op {self.name}>"


def register(name, **kw):
    """Declare an operator and its aliases; returns the :class:`Op`."""
    if name in OPS:
        raise ValueError(f"operator {name!r} is registered twice")
    op = Op(name, **kw)
    OPS[name] = op
    for a in op.aliases:
        if a in OPS:
            raise ValueError(f"alias {a!r} of {name!r} is taken by {OPS[a].name!r}")
        OPS[a] = op
    return op


def get(name):
    """The operator registered under ``name`` (or an alias)."""
    try:
        return OPS[name]
    except KeyError:
        raise ValueError(f"no operator named {name!r}") from None


# -- shared inference helpers ----------------------------------------------------------

def broadcast_shapes(op, *shapes):
    """NumPy broadcasting of ``shapes``; ValueError naming the op and the shapes."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{op}: shapes {', '.join(map(repr, shapes))} are not "
                         "broadcastable") from None


def same_dtype(op, dtypes):
    """All inputs must share one dtype (MXNet's rule for binary ops)."""
    first = dtypes[0]
    for d in dtypes[1:]:
        if d != first:
            raise TypeError(f"{op}: inputs must have one dtype (got "
                            f"{', '.join(str(x) for x in dtypes)}); cast with astype()")
    return first


def float_input(op, what="input"):
    """An ``infer_type`` that refuses a non-floating first input and keeps its dtype."""
    def infer(attrs, dtypes):
        if dtypes[0].kind != "f":
            raise TypeError(f"{op}: needs a floating-point {what} (got {dtypes[0]}); cast "
                            "with astype('float32')")
        return [dtypes[0]]
    return infer


def no_bool(op):
    """An ``infer_type`` that refuses a bool first input and keeps its dtype."""
    def infer(attrs, dtypes):
        if dtypes[0].kind == "b":
            raise TypeError(f"{op}: bool input is not supported (got bool); cast with "
                            "astype()")
        return [dtypes[0]]
    return infer


def dtype_scalar(op, name, value, dtype, wrap=False):
    """Float attribute ``value`` as a scalar of ``dtype`` (MXNet casts scalars to the
    array's dtype); an integer dtype truncates it toward zero (2.7 -> 2).

    A value an integer dtype cannot hold raises ValueError rather than going through
    NumPy's unspecified float-to-integer cast (INT_MIN on x86-64, after a RuntimeWarning):
    NaN, an infinity, or one out of the dtype's range.  With ``wrap`` (the arithmetic
    scalar ops) an in-range int64 wraps around into the dtype instead, as MXNet's C++ cast
    does in practice (int8: 300 -> 44, uint8: -2 -> 254), which is what wrapping integer
    arithmetic gives for ``+``, ``-`` and ``*``; only a value beyond int64 is refused.
    """
    if dtype.kind not in "iu":
        return dtype.type(value)
    info = np.iinfo(np.int64 if wrap else dtype)
    if not (math.isfinite(value) and info.min <= math.trunc(value) <= info.max):
        rule = (f"within int64 to wrap into {dtype}" if wrap
                else f"in [{info.min}, {info.max}] for dtype {dtype}")
        raise ValueError(f"{op}: {name} must be finite and {rule} (got {value!r})")
    return np.int64(math.trunc(value)).astype(dtype)


def scalar_type(op, *names, wrap=False):
    """An ``infer_type`` that keeps the first input's dtype and refuses scalar attributes
    ``names`` that it cannot hold (see :func:`dtype_scalar`), so that the op fails before
    out= is written."""
    def infer(attrs, dtypes):
        for name in names:
            dtype_scalar(op, name, attrs[name], dtypes[0], wrap)
        return [dtypes[0]]
    return infer


def normalize_axis(op, axis, ndim, name="axis"):
    """An axis in [-ndim, ndim) as a non-negative int; ValueError otherwise.

    The one axis rule of the operators: a 0-d array has no axis (NumPy's
    ``normalize_axis_index``).  Reductions also take axis 0 or -1 of a 0-d array, as NumPy's
    and MXNet's do: ``ops.reduce.reduction_axis`` says so.
    """
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: {name} {axis} is out of range for an array of {ndim} "
                         f"dimension(s)")
    return axis % ndim


def attach_sparse(name, compute, stypes):
    """Declare the sparse kernel of operator ``name`` (registered by its dense module).

    ``stypes(attrs, in_stypes)`` returns the output storage types when the kernel takes
    these inputs, else None (then the invoker falls back to dense).  Sparse kernels live
    beside each other in ``runtime.ops.sparse``, the dense declarations in their area.
    """
    op = get(name)
    if op.compute_sparse is not None:
        raise ValueError(f"operator {name!r} already has a sparse kernel")
    op.compute_sparse = compute
    op.sparse_stypes = stypes
