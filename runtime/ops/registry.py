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
- ``compute_sparse(attrs, inputs) -> outputs``: the sparse kernel on NDArrays; with
  ``sparse_out=True`` it is called ``compute_sparse(attrs, inputs, outs)``, ``outs``
  holding the out= arrays of requests write/inplace (None elsewhere), and may write into
  them and return them (the invoker then only bumps their version): an optimizer's lazy
  update of a row_sparse gradient writes the rows it touches into ``out=weight``;
  ``sparse_check(attrs, in_shapes, in_dtypes) -> None or why``: shapes or dtypes that
  the sparse kernel does not take although their storage types are its own (the invoker
  then falls back, saying ``why``: "dtype int32");
- ``prepare(attrs) -> state``: per-call state (MXNet's ``OpStatePtr``), made once per
  call by the invoker (``invoke_stateful`` returns it, the tape keeps it per node) and
  passed to ``compute``/``compute_sparse`` and ``gradient`` as one more argument
  (``state``); Dropout keeps there whether the call dropped.  Inference is pure: the
  same attributes, shapes, dtypes and storage types always give the same result (the
  invoker caches it), and no kernel or rule writes into ``attrs``;
- ``ufunc``: the NumPy ufunc an elementwise op applies, or the binary ufunc a reduction
  folds with (``sum``: ``np.add``); calls of one dtype then take the invoker's direct
  inner-loop road.  ``scalar_forms``: the names of the ops for ``array <op> number`` and
  ``number <op> array`` (``add``: ``_plus_scalar`` twice);
- ``gradient(attrs, inputs, outputs, out_grads) -> in_grads``: the gradient rule, made of
  registry ops (so gradients of gradients work); ``None`` entries mean no gradient;
  ``grad_inputs``/``grad_outputs``: the inputs/outputs whose values the rule reads, by
  position (default: none).  The tape keeps those arrays and a ``runtime._desc.ArrayDesc``
  (shape, dtype, storage type, context) of every other one, which the rule receives in
  the array's place: a rule that needs only shapes or dtypes declares nothing.  A
  declaration is a tuple of positions, or ``f(attrs, n) -> positions`` where it depends
  on the attributes or on the number ``n`` of inputs (variadic ops) or outputs;
  :meth:`Op.grad_reads` resolves either;
- ``inplace``: pairs (input, output) whose buffers may be shared; ``mutates``: inputs the
  op writes;
  ``ignores``: inputs whose values the op never reads (only their shape/dtype);
- ``null_outputs``: the dense kernel receives ``None`` in place of an output whose
  request is ``null`` and skips that work (a fused backward op computing only the
  gradients asked for); otherwise such an output gets a scratch array.
- ``flagged_inputs`` (variadic ops): the optional inputs are present by attributes
  (CTCLoss's lengths with ``use_data_lengths`` / ``use_label_lengths``); the nd function
  skips any None or missing one, as MXNet's generated functions do, rather than requiring
  them in order.
- ``infer_inputs(attrs, in_shapes) -> in_shapes``: graph mode's backward shape inference
  (MXNet's FInferShape filling its inputs): ``in_shapes`` has None for each input whose
  shape is not known yet; the rule returns the list with those it can tell filled in from
  the known ones (a FullyConnected's weight and bias from its data), leaving the others
  None.  Ops without it only infer forward.
- ``input_inits``: {input name: MXNet ``__init__`` string}: graph mode gives a variable
  standing for that input this initializer unless it carries its own (MXNet's
  FSetInputVarAttrOnCompose: prelu's gamma starts at 0.25, not at gamma's usual ones).
"""

import math

import numpy as np

# Attributes are declared here with Attr; the inference helpers are compiled in the
# invoker layer and re-exported for the operator modules.
from runtime._infer import Attr, broadcast_shapes, normalize_axis, parse_attrs  # noqa: F401

OPS = {}


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
                 "mutates", "ignores", "differentiable", "stops_gradient", "grad_donates",
                 "doc", "needs_rng",
                 "sparse_check", "prepare", "ufunc", "scalar_forms", "sparse_out",
                 "null_outputs", "flagged_inputs", "infer_inputs", "input_inits")

    def __init__(self, name, inputs=("data",), num_outputs=1, attrs=None, infer_shape=None,
                 infer_type=None, infer_storage=None, compute=None, compute_sparse=None,
                 sparse_stypes=None, gradient=None, grad_inputs=None, grad_outputs=None,
                 inplace=(), mutates=(), ignores=(), aliases=(),
                 variadic=False, differentiable=True, doc="", needs_rng=False,
                 sparse_check=None, prepare=None, ufunc=None, scalar_forms=None,
                 grad_donates=False, sparse_out=False, null_outputs=False,
                 flagged_inputs=False, infer_inputs=None, input_inits=None):
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
        self.sparse_out = sparse_out
        self.sparse_stypes = sparse_stypes
        self.gradient = gradient
        self.grad_inputs = _reads(name, "grad_inputs", grad_inputs,
                                  None if variadic else len(self.inputs))
        self.grad_outputs = _reads(name, "grad_outputs", grad_outputs,
                                   num_outputs if isinstance(num_outputs, int) else None)
        self.inplace = tuple(inplace)
        self.mutates = tuple(mutates)
        self.ignores = tuple(ignores)
        self.differentiable = differentiable and gradient is not None
        # declared differentiable=False: piecewise constant in its inputs (comparisons,
        # argmax, one_hot, stop_gradient): its gradient is zero, so the tape does not record
        # it.  An op that merely lacks a rule (digamma) is recorded and backward through it
        # raises.
        self.stops_gradient = not differentiable
        # the rule reads its out-grad once, in an elementwise op: backward may let that op
        # write into the out-grad's buffer when nothing else reads it (request inplace)
        self.grad_donates = grad_donates
        self.doc = doc
        self.needs_rng = needs_rng
        self.sparse_check = sparse_check
        self.prepare = prepare
        self.ufunc = ufunc
        self.scalar_forms = None if scalar_forms is None else tuple(scalar_forms)
        self.null_outputs = null_outputs
        self.flagged_inputs = flagged_inputs
        self.infer_inputs = infer_inputs
        self.input_inits = dict(input_inits or {})

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
        """Validate and convert keyword attributes (defaults filled in, in declaration
        order); unknown names raise TypeError."""
        return parse_attrs(self.name, self.attrs, kwargs)

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

def equal_shapes(op, what="inputs", hint=""):
    """An ``infer_shape`` for two inputs of one shape (no broadcasting), giving that shape;
    ``hint`` ends the message (where to go for broadcasting)."""
    def infer(attrs, shapes):
        if shapes[0] != shapes[1]:
            raise ValueError(f"{op}: {what} must have one shape (got {shapes[0]!r} and "
                             f"{shapes[1]!r}){hint}")
        return [shapes[0]]
    return infer


def fill_equal_shapes(attrs, shapes):
    """An ``infer_inputs`` for ops whose inputs share one shape: the unknown ones take
    the known one's (MXNet's ElemwiseShape, backward)."""
    known = next((s for s in shapes if s is not None), None)
    return [known if s is None else s for s in shapes]


def same_dtype(op, dtypes):
    """All inputs must share one dtype (MXNet's rule for binary ops)."""
    first = dtypes[0]
    for d in dtypes[1:]:
        if d != first:
            raise TypeError(f"{op}: inputs must have one dtype (got "
                            f"{', '.join(str(x) for x in dtypes)}); cast with astype()")
    return first


def float_input(op, what="input", fix="cast with astype('float32')"):
    """An ``infer_type`` that refuses a non-floating first input and keeps its dtype;
    ``fix`` says in the error what to do instead."""
    def infer(attrs, dtypes):
        if dtypes[0].kind != "f":
            raise TypeError(f"{op}: needs a floating-point {what} (got {dtypes[0]}); {fix}")
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
