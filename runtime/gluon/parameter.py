"""``Parameter`` and ``ParameterDict`` (Gluon's, imperative only).

A parameter lives on one context or on several (``initialize(ctx=[cpu(0), cpu(1)])``):
one copy of the array per context, each its own autograd variable, as Gluon's; the
Trainer sums their gradients through a ``local``/``device`` kvstore and writes the
updated weight into every copy.

A parameter's shape may hold 0 for a dimension not known until the block's first call
(Dense's ``in_units``): ``initialize`` then only remembers the initialiser, and the block
completes the shape and fills the array when it first sees its input (deferred
initialisation, as Gluon).  The array is an autograd variable (``attach_grad`` with the
parameter's ``grad_req`` and ``grad_stype``) unless ``grad_req='null'``.
"""

import re

import numpy as np

from runtime import autograd, nd, symbol
from runtime._tape import GRAD_REQS
from runtime.base import MXNetError
from runtime.context import Context, current_context
from runtime.util import is_np_shape
from runtime import initializer as _init

STYPES = ("default", "row_sparse", "csr")

# Bumped whenever a parameter's arrays or contexts are replaced (initialize, set_data
# before initialisation or on a sparse one, reset_ctx, cast, a grad_req of 'null', a load):
# a hybridized block keeps its parameters' arrays between calls and looks them up again
# only when this changed.
_generation = 0
_ARRAY_STATE = frozenset(("_data", "_copies", "_ctx", "_ctx_list"))


class DeferredInitializationError(MXNetError):
    """The parameter's shape is not known yet: call the block on data first."""


class ParameterCheckError(ValueError, AssertionError):
    """An argument of a Parameter or ParameterDict that its rules refuse (a storage type,
    a grad_req, a shape or dtype that does not match, a load that does not fit).  Gluon
    asserts these (AssertionError); this is also a ValueError, what it is."""


def _ctx(ctx, who):
    if ctx is None:
        return current_context()
    if isinstance(ctx, (list, tuple)):
        if len(ctx) != 1:
            raise ValueError(f"{who}: ctx must be one Context here (got ctx={ctx!r})")
        ctx = ctx[0]
    if not isinstance(ctx, Context):
        raise TypeError(f"{who}: ctx must be a Context (got {ctx!r})")
    return ctx


def _contexts(ctx, who):
    """``ctx`` (None: the current context; a Context; a list of them) as a non-empty list
    of distinct Contexts."""
    if ctx is None:
        return [current_context()]
    items = list(ctx) if isinstance(ctx, (list, tuple)) else [ctx]
    if not items:
        raise ValueError(f"{who}: ctx must hold at least one Context (got {ctx!r})")
    for c in items:
        if not isinstance(c, Context):
            raise TypeError(f"{who}: ctx must be a Context or a list of Contexts (got {c!r})")
    if len(set(items)) != len(items):
        raise ValueError(f"{who}: ctx must not repeat a Context (got {ctx!r})")
    return items


def _shape(shape, who):
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"{who}: shape must be an int or a tuple of ints (got "
                        f"{shape!r})") from None
    if not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
               for s in shape):
        raise ValueError(f"{who}: shape must hold integers >= 0, 0 meaning unknown (got "
                         f"{shape!r})")
    return tuple(int(s) for s in shape)


def _stored(data, stype):
    """``data`` in storage type ``stype``.  A row_sparse parameter stores every row, zero
    ones too (``tostype`` would drop them): the optimizers' update operators take a
    row_sparse weight only in that layout, as MXNet's do."""
    if stype != "row_sparse":
        return data.tostype(stype)
    if data.stype == "row_sparse" and data.indices.shape[0] == data.shape[0]:
        return data
    dense = data if data.stype == "default" else data.tostype("default")
    rows = nd.arange(data.shape[0], ctx=data.context, dtype="int64")
    return nd.sparse.row_sparse_array((dense, rows), shape=data.shape, ctx=data.context,
                                      dtype=data.dtype)


def _known(shape):
    return shape is not None and all(s > 0 for s in shape)


def _compatible(shape, other):
    """Whether the (possibly partly unknown) ``shape`` admits the known ``other``."""
    return shape is None or (len(shape) == len(other)
                             and all(s in (0, o) for s, o in zip(shape, other)))


class Parameter:
    """A weight of a block (Gluon's ``Parameter``).

    Parameters
    ----------
    name : str
        Full name (Gluon's, with the block's prefix: ``dense0_weight``).
    grad_req : {'write', 'add', 'null'}
        How backward writes the gradient ('null': no gradient).
    shape : int or tuple of int, optional
        0 in a dimension means unknown until the block's first call.
    dtype : str or numpy dtype
        float32 by default.
    lr_mult, wd_mult : float
        Multipliers of the learning rate and weight decay, read by optimizers.
    init : Initializer or str, optional
        This parameter's own initialiser; it wins over the one passed to
        :meth:`initialize` as ``default_init`` (and over a block's global one).
    allow_deferred_init : bool
        Let :meth:`initialize` wait for an unknown shape (blocks set it).
    differentiable : bool
        False makes ``grad_req`` 'null' whatever is asked.
    stype, grad_stype : {'default', 'row_sparse', 'csr'}
        Storage types of the data and of the gradient (Embedding with
        ``sparse_grad=True`` has a row_sparse gradient).  A row_sparse parameter
        stores every row, zero ones too, the layout that the optimizers take.  As in
        Gluon 1.x, its array is read through :meth:`row_sparse_data` once a
        :class:`Trainer` holds it; :meth:`data` refuses it.
    """

    def __init__(self, name, grad_req="write", shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype="default", grad_stype="default"):
        if not isinstance(name, str):
            raise TypeError(f"Parameter: name must be a str (got {name!r})")
        self.name = name
        who = f"Parameter {name!r}"
        self._shape = _shape(shape, who)
        self.dtype = nd.as_dtype(dtype)
        self.lr_mult = float(lr_mult)
        self.wd_mult = float(wd_mult)
        self.init = None if init is None else _init.create(init, f"{who}: init")
        self.allow_deferred_init = bool(allow_deferred_init)
        self._differentiable = bool(differentiable)
        for what, value in (("stype", stype), ("grad_stype", grad_stype)):
            if value not in STYPES:
                raise ParameterCheckError(f"{who}: {what} must be one of {STYPES} (got {value!r})")
        self._stype = stype
        self._grad_stype = grad_stype
        self._grad_req = None
        self.grad_req = grad_req
        self._data = None
        self._ctx = None
        self._copies = None        # [array per context of _ctx_list] on several contexts
        self._ctx_list = None
        self._deferred = None      # (initializer, own) waiting for the shape
        self._var = None
        self._trainer = None       # the Trainer that updates it (Gluon's _set_trainer)

    def __setattr__(self, name, value):
        if name in _ARRAY_STATE:
            global _generation
            _generation += 1
        object.__setattr__(self, name, value)

    def __repr__(self):
        return (f"Parameter {self.name} (shape={self._shape}, dtype={np.dtype(self.dtype)}"
                f"{'' if self._stype == 'default' else ', stype=' + self._stype})")

    # -- attributes ----------------------------------------------------------------------
    @property
    def shape(self):
        """The shape (0 where still unknown), or None when never given."""
        return self._shape

    @shape.setter
    def shape(self, new):
        new = _shape(new, f"Parameter {self.name!r}")
        if self._shape is not None and not _compatible(self._shape, new):
            raise ParameterCheckError(f"Parameter {self.name!r}: shape {new!r} does not match its "
                                      f"shape {self._shape!r} (0 means unknown)")
        if self._data is not None and new != self._data.shape:
            raise ParameterCheckError(
                f"Parameter {self.name!r}: cannot change the shape of an initialised parameter "
                f"from {self._data.shape!r} to {new!r}")
        self._shape = new
        self._var = None

    @property
    def stype(self):
        return self._stype

    @property
    def grad_stype(self):
        return self._grad_stype

    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in GRAD_REQS:
            raise ParameterCheckError(f"Parameter {self.name!r}: grad_req must be one of "
                                      f"{tuple(GRAD_REQS)} (got {req!r})")
        if not self._differentiable:
            req = "null"
        if req == self._grad_req:
            return
        self._grad_req = req
        if getattr(self, "_data", None) is not None:
            self._attach()

    # -- initialisation ------------------------------------------------------------------
    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False):
        """Create and fill the array on ``ctx`` (default: the current context).

        The initialiser is ``init`` if given, else this parameter's own ``init``, else
        ``default_init`` (``Uniform()``), as Gluon.  An initialised parameter is left
        alone unless ``force_reinit``.  With a shape still unknown and
        ``allow_deferred_init``, the fill waits for the block's first call; without it,
        that is an error naming the parameter.
        """
        if self._data is not None and not force_reinit:
            return
        ctxs = _contexts(ctx, f"Parameter {self.name!r}")
        if init is not None:
            chosen, own = _init.create(init, f"Parameter {self.name!r}: init"), True
        elif self.init is not None:
            chosen, own = self.init, True
        else:
            chosen = _init.create(default_init if default_init is not None
                                  else _init.Uniform(), f"Parameter {self.name!r}: init")
            own = False
        self._ctx, self._ctx_list = ctxs[0], ctxs
        if not _known(self._shape):
            if not self.allow_deferred_init:
                raise ValueError(f"Parameter {self.name!r}: cannot initialise with unknown "
                                 f"shape {self._shape!r} (give every dimension)")
            self._data = None
            self._deferred = (chosen, own)
            return
        self._fill(chosen, own)

    def _fill(self, chosen, own):
        with autograd.pause():
            data = nd.zeros(self._shape, ctx=self._ctx, dtype=self.dtype)
            chosen(self.name, data, own=own)
            if self._stype != "default":
                data = _stored(data, self._stype)
        self._data = data
        self._deferred = None
        self._spread()
        self._attach()

    def _spread(self):
        """One copy of the array per context of ``_ctx_list`` (a single context: none)."""
        ctxs = self._ctx_list or [self._ctx]
        if len(ctxs) == 1:
            self._copies = None
            return
        with autograd.pause():
            self._copies = [self._data if c == self._ctx else self._data.copyto(c)
                            for c in ctxs]

    def _finish_deferred_init(self):
        """Fill the array now that the block has set the whole shape."""
        if self._data is None and self._deferred is not None and _known(self._shape):
            self._fill(*self._deferred)

    def _attach(self):
        arrays = self._copies or [self._data]
        if self._grad_req != "null":
            for a in arrays:
                a.attach_grad(self._grad_req, stype=self._grad_stype)
        else:        # fresh handles on the same memory, no longer variables
            arrays = [a.detach() for a in arrays]
            self._data = arrays[0]
            if self._copies is not None:
                self._copies = arrays

    def _check_initialized(self):
        if self._data is not None:
            return
        if self._deferred is not None:
            raise DeferredInitializationError(
                f"Parameter {self.name!r} has not been initialised yet because its shape "
                f"{self._shape!r} is unknown: call the block on data first")
        raise RuntimeError(f"Parameter {self.name!r} has not been initialised: call "
                           f".initialize() (or the block's initialize()) first")

    # -- data and gradient ---------------------------------------------------------------
    def data(self, ctx=None):
        """The array on ``ctx`` (an autograd variable unless grad_req is 'null').  On one
        context ``ctx=None`` gives it; on several, the copy on the current context.  A
        parameter whose stype is not 'default' raises RuntimeError (Gluon's rule: read
        it with :meth:`row_sparse_data`)."""
        data = self._data
        if data is not None and self._copies is None and self._stype == "default" and (
                ctx is None or ctx is self._ctx or ctx == self._ctx):
            return data                            # the per-step path
        self._check_dense("data")
        return self._array(ctx)

    def _check_dense(self, what):
        if self._stype != "default":
            raise RuntimeError(f"Parameter {self.name!r}: {what}() cannot give the array of "
                               f"a {self._stype} parameter; use row_sparse_data(row_id) "
                               "(Gluon's rule)")

    def _array(self, ctx=None):
        """:meth:`data` whatever the storage type (what a Trainer, a block and saving
        read, as Gluon's internal ``_check_and_get``)."""
        self._check_initialized()
        if ctx is None:
            ctx = current_context() if self._copies is not None else self._ctx
        ctx = _ctx(ctx, f"Parameter {self.name!r}")
        for c, a in zip(self._ctx_list or [self._ctx], self._copies or [self._data]):
            if c is ctx or c == ctx:
                return a
        raise ValueError(f"Parameter {self.name!r} lives on {self.list_ctx()}, not on {ctx}")

    def list_data(self):
        """The copies of the array, one per context of :meth:`list_ctx` (RuntimeError for
        a parameter whose stype is not 'default', as :meth:`data`)."""
        self._check_dense("list_data")
        return self._arrays()

    def _arrays(self):
        """:meth:`list_data` whatever the storage type."""
        self._check_initialized()
        return list(self._copies or [self._data])

    def grad(self, ctx=None):
        """The gradient buffer (``grad_stype`` storage)."""
        data = self._array(ctx)
        if self._grad_req == "null":
            raise RuntimeError(f"Parameter {self.name!r} has no gradient because its "
                               f"grad_req is 'null'")
        return data.grad

    def list_grad(self):
        """The gradients of the copies, one per context of :meth:`list_ctx`."""
        if self._grad_req == "null":
            raise RuntimeError(f"Parameter {self.name!r} has no gradient because its "
                               f"grad_req is 'null'")
        return [a.grad for a in self._arrays()]

    @property
    def _grad(self):
        """Gluon's private view of the gradients: one array per context, None while the
        parameter has none (grad_req 'null', or not initialised)."""
        if self._grad_req == "null" or self._data is None:
            return None
        return [a.grad for a in self._arrays()]

    def list_ctx(self):
        """The contexts the parameter lives on (those it will, while deferred)."""
        if self._data is None and self._deferred is not None:
            return list(self._ctx_list or [self._ctx])
        self._check_initialized()
        return list(self._ctx_list or [self._ctx])

    def reset_ctx(self, ctx):
        """Move the parameter to ``ctx`` (a Context or a list of them), keeping its
        values (those of the first copy); a deferred one will be made there."""
        ctxs = _contexts(ctx, f"Parameter {self.name!r}")
        if self._data is None:
            if self._deferred is None:
                raise RuntimeError(f"Parameter {self.name!r} has not been initialised: call "
                                   f".initialize() first")
            self._ctx, self._ctx_list = ctxs[0], ctxs
            return
        with autograd.pause():
            self._data = self._data.copyto(ctxs[0]).detach()
        self._ctx, self._ctx_list = ctxs[0], ctxs
        self._spread()
        self._attach()

    def row_sparse_data(self, row_id):
        """A copy of the rows ``row_id`` (an int64 NDArray) of a row_sparse parameter, on
        row_id's context (Gluon's).  As in Gluon, the parameter must be held by a
        :class:`Trainer` (which keeps its rows up to date).  The copy is on the tape
        (``retain`` recorded, whether or not ``autograd.record()`` is active), so a
        backward through any recorded use of it writes the gradient of those rows into
        the parameter's gradient, as through the parameter's own array that Gluon
        returns."""
        self._check_sparse("row_sparse_data")
        if not isinstance(row_id, nd.NDArray):
            raise TypeError(f"Parameter {self.name!r}: row_id must be an NDArray (got "
                            f"{type(row_id).__name__})")
        return self._rows(self._array(row_id.context), row_id)

    def list_row_sparse_data(self, row_id):
        """:meth:`row_sparse_data` of every copy."""
        self._check_sparse("list_row_sparse_data")
        if not isinstance(row_id, nd.NDArray):
            raise TypeError(f"Parameter {self.name!r}: row_id must be an NDArray (got "
                            f"{type(row_id).__name__})")
        return [self._rows(a, row_id.as_in_context(a.context)) for a in self._arrays()]

    @staticmethod
    def _rows(array, row_id):
        # Recording turned on, training mode left as it is.
        with autograd._RecordingStateScope(True, None):
            return nd.sparse.retain(array, row_id)

    def _check_sparse(self, what):
        if self._stype != "row_sparse":
            raise RuntimeError(f"Parameter {self.name!r}: {what} needs stype 'row_sparse' "
                               f"(got {self._stype!r}); use {what.replace('row_sparse_', '')}"
                               "()")
        if self._trainer is None:
            raise RuntimeError(f"Parameter {self.name!r}: {what} needs a Trainer holding "
                               "the parameter (Gluon's rule); create one with it first")

    def _set_trainer(self, trainer):
        """Record the Trainer that updates this parameter (None: none).  A sparse
        parameter takes one Trainer only, as in Gluon: its rows are kept by it."""
        if (self._stype != "default" and trainer is not None and self._trainer is not None
                and self._trainer is not trainer):
            raise RuntimeError(f"Parameter {self.name!r}: a {self._stype} parameter takes "
                               "one Trainer only, and one already holds it")
        self._trainer = trainer

    def set_data(self, data):
        """Give the parameter the values of ``data`` (an NDArray or array-like of its
        shape); before initialisation, make it the parameter's value (Gluon).

        A dense parameter's array takes new memory holding the values (the same NDArray
        object, its gradient buffer kept), so operators recorded before the call that
        read the old values differentiate with them; MXNet writes in place, and its
        backward then reads the new values.  A view taken of the array before the call
        keeps the old values, except a NumPy view (``np.asarray``), whose memory is
        written in place."""
        if not isinstance(data, nd.NDArray):
            data = nd.array(data, dtype=self.dtype)
        if self._data is None:
            self.shape = data.shape
            self._ctx = self._ctx or data.ctx
            with autograd.pause():
                value = data.copyto(self._ctx).astype(self.dtype, copy=False)
                if value is data:
                    value = data.copy()
                if self._stype != "default":
                    value = _stored(value, self._stype)
            self._data = value
            self._deferred = None
            self._spread()
            self._attach()
            return
        if data.shape != self._data.shape:
            raise ValueError(f"Parameter {self.name!r}: set_data needs shape "
                             f"{self._data.shape!r} (got {data.shape!r})")
        if self._trainer is not None:       # its store would overwrite the new values
            self._trainer._reset_kvstore()
        with autograd.pause():
            if self._stype == "default":
                value = data.tostype("default") if data.stype != "default" else data
                # new memory rather than a write in place: a recorded operator that read
                # the old values (spectral normalisation's power iteration sets its
                # vector between forward and backward) still differentiates with them
                for a in self._copies or [self._data]:
                    fresh = nd.empty(a.shape, ctx=a.context, dtype=a.dtype)
                    fresh[:] = value
                    a._renew(fresh)
            else:
                value = _stored(data.astype(self.dtype, copy=False), self._stype)
                self._data = value.copyto(self._ctx) if value.ctx != self._ctx else value
                self._spread()
                self._attach()

    def zero_grad(self):
        """Set the gradient to 0 (a row_sparse gradient becomes empty)."""
        if self._data is None or self._grad_req == "null":
            return
        for a in self._copies or [self._data]:
            g = a.grad
            g[:] = 0

    def cast(self, dtype):
        """Cast the data (and with it the gradient) to ``dtype`` (Gluon's
        ``Parameter.cast``); before initialisation only the dtype changes."""
        self.dtype = nd.as_dtype(dtype)
        if self._data is None:
            return
        with autograd.pause():
            self._data = self._data.astype(self.dtype)
        self._attach()

    def var(self):
        """This parameter as a symbol variable (its name, shape with 0 for the unknown
        dimensions (-1 under NumPy shape semantics, ``mx.np_shape``), dtype, multipliers, storage type and own initialiser as the
        variable's attributes, as Gluon writes them)."""
        np_shape = is_np_shape()
        if self._var is None or self._var[0] != np_shape:
            shape = self._shape
            if np_shape and shape is not None:
                # under NumPy shape semantics 0 is a real size and -1 the unknown one
                shape = tuple(-1 if d == 0 else d for d in shape)
            self._var = (np_shape, symbol.Variable(
                self.name, shape=shape, dtype=self.dtype, lr_mult=self.lr_mult,
                wd_mult=self.wd_mult, init=self.init, stype=self._stype))
        return self._var[1]


class _Value(_init.Initializer):
    """Writes one fixed array (a :class:`Constant`'s value), whatever the name."""

    def __init__(self, values):
        self.values = values

    def _init_weight(self, name, arr):
        arr[:] = self.values

    def _kwargs(self):
        return {"shape": self.values.shape, "dtype": str(self.values.dtype)}


class Constant(Parameter):
    """A parameter that never trains (Gluon's ``gluon.Constant``): ``grad_req`` is
    'null' and :meth:`initialize` writes ``value`` (an NDArray, a NumPy array or a
    nested list; ``nd.array``'s dtype rule) whatever initialiser is given."""

    def __init__(self, name, value):
        value = value if isinstance(value, nd.NDArray) else nd.array(value)
        self.value = value.asnumpy()
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=_Value(self.value), differentiable=False)


def _load_into(who, params, loaded, source, target, ctx, allow_missing, ignore_extra,
               cast_dtype, dtype_source):
    """Write the arrays of ``loaded`` ({key: NDArray}) into ``params`` ({key:
    Parameter}) after checking them all, so that a failure changes nothing.

    A parameter missing from ``loaded`` (unless ``allow_missing``; a parameter under
    several keys, shared, is present when any of them is), an array whose key ``params``
    lacks (unless ``ignore_extra``), or one whose shape, or dtype (unless ``cast_dtype``),
    differs raises ValueError naming it, ``source`` and ``target`` (the receiver).  With ``cast_dtype``,
    ``dtype_source='current'`` casts the loaded values to the parameter's dtype,
    ``'saved'`` the parameter to theirs.  Parameters whose shape is still unknown take
    the loaded shape.
    """
    if dtype_source not in ("current", "saved"):
        raise ParameterCheckError(f"{who}: dtype_source must be 'current' or 'saved' (got "
                                  f"{dtype_source!r})")
    keys = {}
    for key, param in params.items():
        keys.setdefault(id(param), []).append(key)
    if not allow_missing:
        for key, param in params.items():
            if not any(k in loaded for k in keys[id(param)]):
                raise ParameterCheckError(
                    f"{who}: parameter {key!r} is missing in {source}, which holds "
                    f"{sorted(loaded)!r} (set allow_missing=True to ignore missing parameters)")
    if not ignore_extra:
        for key in loaded:
            if key not in params:
                raise ParameterCheckError(f"{who}: parameter {key!r} in {source} is not present "
                                          f"in {target}, which has {list(params)!r} (set "
                                          f"ignore_extra=True to ignore it)")
    for key, param in params.items():
        if key not in loaded:
            continue
        value = loaded[key]
        want = param._data.shape if param._data is not None else param.shape
        if want is None or not _compatible(want, value.shape):
            raise ParameterCheckError(
                f"{who}: parameter {key!r} ({param.name}) has shape {want!r} but {source} holds "
                f"shape {value.shape!r}")
        if value.dtype != param.dtype and not cast_dtype:
            raise ParameterCheckError(f"{who}: parameter {key!r} ({param.name}) has dtype "
                                      f"{np.dtype(param.dtype)} but {source} holds "
                                      f"{np.dtype(value.dtype)} (set cast_dtype=True to cast)")
    for key, param in params.items():
        if key in loaded:
            if ctx is not None and param._data is None:
                param._ctx = _ctx(ctx, f"Parameter {param.name!r}")
            if cast_dtype and dtype_source == "saved" and loaded[key].dtype != param.dtype:
                param.cast(loaded[key].dtype)
            param.set_data(loaded[key])


class ParameterDict(dict):
    """An ordered ``{name: Parameter}`` with Gluon's helpers.  ``prefix`` is prepended
    by :meth:`get` to the names it creates; ``shared``, a ParameterDict whose parameters
    :meth:`get` takes by name before it creates one (Gluon's ``ParameterDict(prefix,
    shared)``)."""

    def __init__(self, prefix="", shared=None):
        super().__init__()
        if shared is not None and not isinstance(shared, ParameterDict):
            raise TypeError(f"ParameterDict: shared must be a ParameterDict or None (got "
                            f"{type(shared).__name__})")
        self.prefix = prefix
        self._shared = shared

    def __repr__(self):
        # Gluon's text: the prefix (if any), then one parameter a line
        body = "\n".join(f"  {p!r}" for p in self.values())
        name = f"{self.prefix} " if self.prefix else ""
        return f"{name}(\n{body}\n)"

    def _lookup(self, full):
        """The parameter named ``full`` here, else in the shared dict (then kept here
        too, as Gluon does), else None."""
        param = super().get(full)
        if param is None and self._shared is not None:
            param = dict.get(self._shared, full)
            if param is not None:
                self[full] = param
        return param

    def get(self, name, **kwargs):
        """The parameter ``prefix + name``, created with ``kwargs`` when absent; an
        existing one must agree with the ``kwargs`` given (shape by known dimensions)."""
        full = self.prefix + name
        param = self._lookup(full)
        if param is None:
            param = Parameter(full, **kwargs)
            self[full] = param
            return param
        for key, value in kwargs.items():
            if key == "shape":
                value = _shape(value, f"Parameter {full!r}")
                if param.shape is not None and value is not None and \
                        len(param.shape) == len(value):
                    merged = tuple(max(a, b) for a, b in zip(param.shape, value))
                    if _compatible(param.shape, merged) and _compatible(value, merged):
                        param.shape = merged
                        continue
                if value != param.shape:
                    raise ParameterCheckError(
                        f"Parameter {full!r} exists with shape {param.shape!r}, which does not "
                        f"match shape {value!r}")
            elif key == "dtype":
                if nd.as_dtype(value) != param.dtype:
                    raise ParameterCheckError(f"Parameter {full!r} exists with dtype "
                                              f"{np.dtype(param.dtype)}, not {np.dtype(value)}")
            elif key == "init":
                if value is None:
                    continue
                wanted = _init.create(value, f"Parameter {full!r}: init")
                if param.init is None:        # Gluon fills an attribute left unset
                    param.init = wanted
                elif param.init != wanted:
                    raise ParameterCheckError(
                        f"Parameter {full!r} exists with init={param.init!r}, not {value!r}")
            elif key == "allow_deferred_init":
                # Gluon checks only attributes a Parameter shows under that name, and
                # this one it keeps privately: a layer asking for deferred
                # initialisation of a parameter made without it gets the parameter
                continue
            elif value is not None and getattr(param, key, value) != value:
                raise ParameterCheckError(f"Parameter {full!r} exists with {key}="
                                          f"{getattr(param, key)!r}, not {value!r}")
        return param

    def get_constant(self, name, value=None):
        """The :class:`Constant` ``prefix + name``, created with ``value`` when absent
        (Gluon's); an existing one must be a Constant holding ``value`` when given."""
        full = self.prefix + name
        param = self._lookup(full)
        if param is None:
            if value is None:
                raise KeyError(f"ParameterDict.get_constant: no constant named {full!r}; "
                               f"give value to create it")
            param = Constant(full, value)
            self[full] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise ParameterCheckError(f"ParameterDict.get_constant: parameter {full!r} exists "
                                          f"and is not a Constant")
            given = value.asnumpy() if isinstance(value, nd.NDArray) else np.asarray(value)
            if given.shape != param.value.shape or not (given == param.value).all():
                raise ParameterCheckError(f"ParameterDict.get_constant: constant {full!r} exists "
                                          f"with another value")
        return param

    def update(self, other):
        for name, param in other.items():
            if name in self and self[name] is not param:
                raise ParameterCheckError(f"ParameterDict: two different parameters are named "
                                          f"{name!r}")
            self[name] = param

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialise every parameter: ``init`` (default ``Uniform()``) is the default
        initialiser, which a parameter's own ``init`` overrides (Gluon)."""
        default = _init.create(init if init is not None else _init.Uniform())
        for param in self.values():
            param.initialize(None, ctx, default, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient to 0."""
        for param in self.values():
            param.zero_grad()

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx`` (a Context or a list of them), keeping its
        values (:meth:`Parameter.reset_ctx`).  Every parameter is checked first, so a
        refusal moves none."""
        _contexts(ctx, "ParameterDict.reset_ctx")
        for name, param in self.items():
            if param._data is None and param._deferred is None:
                raise RuntimeError(f"ParameterDict.reset_ctx: parameter {name!r} has not "
                                   "been initialised: call .initialize() first")
        for param in self.values():
            param.reset_ctx(ctx)

    def setattr(self, name, value):
        """Set attribute ``name`` (``grad_req``, ``lr_mult``, ...) of every parameter."""
        for param in self.values():
            setattr(param, name, value)

    def save(self, filename, strip_prefix=""):
        """Save every parameter with ``nd.save``, keyed by its name without
        ``strip_prefix`` (which every name must start with)."""
        arrays = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise ValueError(f"ParameterDict.save: strip_prefix {strip_prefix!r} must "
                                 f"begin every parameter name (got {param.name!r})")
            param._check_initialized()
            arrays[param.name[len(strip_prefix):]] = param._array()
        nd.save(filename, arrays)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load what :meth:`save` wrote: each array goes to the parameter named
        ``restore_prefix`` + its key (Gluon 1.x's rules and errors, as
        :meth:`Block.load_parameters`)."""
        loaded = nd.load(filename)
        if not isinstance(loaded, dict):
            raise ValueError(f"ParameterDict.load: {filename!r} holds a list of arrays, "
                             f"not named parameters")
        self.load_dict(loaded, ctx, allow_missing, ignore_extra, restore_prefix,
                       f"file {filename!r}", cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current"):
        """Load ``{name: NDArray}`` (keys may carry MXNet's ``arg:``/``aux:`` marks) into
        the parameters named ``restore_prefix`` + name."""
        for name in self:
            if not name.startswith(restore_prefix):
                raise ParameterCheckError(f"ParameterDict.load: restore_prefix {restore_prefix!r} "
                                          f"must begin every parameter name (got {name!r})")
        loaded = {restore_prefix + (k[4:] if k[:4] in ("arg:", "aux:") else k): v
                  for k, v in param_dict.items()}
        _load_into("ParameterDict.load", dict(self), loaded, filename or "param_dict",
                   "this ParameterDict", ctx, allow_missing, ignore_extra, cast_dtype,
                   dtype_source)

    def select(self, pattern):
        """The parameters whose names match the regular expression ``pattern`` (from
        the start, as ``re.match``), in order."""
        if not isinstance(pattern, str):
            raise TypeError(f"select must be a str (a regular expression) (got {pattern!r})")
        try:
            regex = re.compile(pattern)
        except re.error as e:
            raise ValueError(f"select must be a regular expression (got {pattern!r}: "
                             f"{e})") from None
        out = ParameterDict(self.prefix)
        for name, param in self.items():
            if regex.match(name):
                out[name] = param
        return out


__all__ = ["Parameter", "Constant", "ParameterDict", "DeferredInitializationError"]
