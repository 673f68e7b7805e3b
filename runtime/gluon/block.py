"""``Block``, the base of every layer and model (Gluon's ``gluon.Block``, imperative).

Names follow Gluon: a block made outside any other block's ``name_scope()`` gets the
prefix ``<class name lowercased><count>_`` from a process-wide counter (``dense0_``,
``dense1_``), one made inside a parent's ``name_scope()`` the parent's prefix followed by
a counter local to that parent (``sequential0_dense0_``).  A parameter's name is its
block's prefix followed by its own (``dense0_weight``).

Files written by :meth:`Block.save_parameters` key each parameter by its structural
name, the attribute path from the block (``0.weight``, ``encoder.bias``), as Gluon's
``save_parameters``: a file fits any block of the same structure, whatever the counters
said when either was made.
"""

import os
import threading
import warnings
from collections import OrderedDict

from runtime import nd, symbol
from runtime import name as _name
from runtime import initializer as _init
from runtime.gluon import parameter as _parameter
from runtime.gluon.parameter import (DeferredInitializationError, Parameter, ParameterDict,
                                     _compatible, _load_into)
from runtime.gluon.utils import HookHandle
from runtime.symbol import Symbol

_COUNTERS = {}
_COUNTER_LOCK = threading.Lock()
_scope = threading.local()


def _global_prefix(hint):
    with _COUNTER_LOCK:
        count = _COUNTERS.get(hint, 0)
        _COUNTERS[hint] = count + 1
    return f"{hint}{count}_"


class _BlockScope:
    """The ``name_scope()`` of a block: children made inside it take its prefix, and so
    do the symbols made inside it (a ``name.Prefix`` of the block's prefix is the name
    manager there, as in Gluon).  Made anew by each ``name_scope()`` call (the counters
    live on the block), so that a block holds no reference cycle and dies with its last
    reference, gc or not."""

    def __init__(self, block):
        self._block = block
        self._counter = getattr(block, "_scope_counter", None)
        if self._counter is None:          # an object that only carries a prefix
            self._counter = {}
        self._old = None
        self._names = None

    @staticmethod
    def create(prefix, params, hint):
        """``(prefix, params)`` of a block made now with ``prefix`` (None: ``hint``
        numbered, in the current scope or globally) and ``params`` (a ParameterDict to
        share, or None: a new one named after the prefix, under the enclosing block's),
        as Gluon's ``_BlockScope.create``."""
        current = getattr(_scope, "current", None)
        full = _create_prefix(prefix, hint)
        if params is not None:
            shared = ParameterDict(params.prefix, params)
            shared.update(params)
            return full, shared
        if current is None:
            return full, ParameterDict(full)
        # Gluon: a child's parameters are named after its parent's ParameterDict and
        # share what the parent shares, so that Net(params=other.collect_params())
        # reuses other's parameters all the way down
        parent = current._block._params
        return full, ParameterDict(parent.prefix + full[len(current._block.prefix):],
                                   parent._shared)

    def __enter__(self):
        # A block made with prefix '' names nothing itself: blocks made in its scope are
        # named in the enclosing scope (Gluon: the model zoo's prefix='' containers).
        if self._block._empty_prefix:
            return self
        self._old = getattr(_scope, "current", None)
        _scope.current = self
        self._names = _name.Prefix(self._block.prefix)
        self._names.__enter__()
        return self

    def __exit__(self, *exc):
        if self._block._empty_prefix:
            return
        self._names.__exit__(*exc)
        self._names = None
        _scope.current = self._old
        self._old = None


def _create_prefix(prefix, hint):
    current = getattr(_scope, "current", None)
    if current is None:
        return prefix if prefix is not None else _global_prefix(hint)
    if prefix is None:
        count = current._counter.get(hint, 0)
        current._counter[hint] = count + 1
        prefix = f"{hint}{count}_"
    return current._block.prefix + prefix


class Block:
    """The base of every layer and model.

    Subclasses define ``forward(*args)``; calling the block calls it.  Assigning a
    :class:`Block` or a :class:`Parameter` to an attribute registers it as a child or
    as a parameter of this block.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the names of this block's parameters (default: from the class name,
        as Gluon).
    params : ParameterDict, optional
        Share these parameters instead of making new ones (their prefix is kept).
    """

    def __init__(self, prefix=None, params=None):
        if prefix is not None and not isinstance(prefix, str):
            raise TypeError(f"{type(self).__name__}: prefix must be a str (got {prefix!r})")
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        if params is not None and not isinstance(params, ParameterDict):
            raise TypeError(f"{type(self).__name__}: params must be a ParameterDict (got "
                            f"{type(params).__name__})")
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._empty_prefix = prefix == ""
        self._scope_counter = {}

    def __setattr__(self, name, value):
        if not hasattr(self, "_children"):
            if not isinstance(value, (Block, Parameter)):
                object.__setattr__(self, name, value)     # Gluon allows plain values
                return
            raise RuntimeError(f"{type(self).__name__}: call Block.__init__ before "
                               f"assigning attribute {name!r}")
        old = self.__dict__.get(name)
        if isinstance(old, (Block, Parameter)) and not isinstance(value, type(old)):
            raise TypeError(f"{type(self).__name__}: attribute {name!r} holds a "
                            f"{type(old).__name__} and cannot be replaced by a "
                            f"{type(value).__name__}")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def __repr__(self):
        # Gluon's text: the children one per line between the brackets, none for a leaf
        # (``ELU(\n\n)``)
        body = "\n".join(f"  ({key}): " + repr(child).replace("\n", "\n  ")
                         for key, child in self._children.items())
        return f"{type(self).__name__}(\n{body}\n)"

    # -- structure -----------------------------------------------------------------------
    def _alias(self):
        """The hint of this block's default prefix (Gluon: the class name lowercased;
        convolutions say ``conv``, pooling layers ``pool``)."""
        return type(self).__name__.lower()

    @property
    def prefix(self):
        """The prefix of this block's parameter names (``dense0_``)."""
        return self._prefix

    @property
    def name(self):
        """The prefix without its trailing underscore (``dense0``)."""
        return self._prefix[:-1] if self._prefix.endswith("_") else self._prefix

    @property
    def params(self):
        """This block's own parameters (not its children's)."""
        return self._params

    def name_scope(self):
        """A context in which new blocks take this block's prefix (Gluon)."""
        return _BlockScope(self)

    def register_child(self, block, name=None):
        """Register ``block`` as a child under ``name`` (default: its position)."""
        if not isinstance(block, Block):
            raise TypeError(f"{type(self).__name__}: a child must be a Block (got "
                            f"{type(block).__name__})")
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def collect_params(self, select=None):
        """Every parameter of this block and its children, ``{full name: Parameter}``
        in registration order; ``select``: a regular expression the names must match
        from their start (``'.*weight'``, ``'dense0_weight|dense0_bias'``), as Gluon."""
        ret = ParameterDict(self._params.prefix)
        ret.update(self._params)
        for param in self._reg_params.values():
            ret.update({param.name: param})
        for child in self._children.values():
            ret.update(child.collect_params())
        return ret if select is None else ret.select(select)

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        ret = OrderedDict((prefix + key, p) for key, p in self._reg_params.items())
        for key, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + key))
        return ret

    def apply(self, fn):
        """Call ``fn(block)`` on every child (depth first) and then on this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialise every parameter (``collect_params().initialize``); ``init``
        defaults to ``Uniform()``."""
        self.collect_params().initialize(init if init is not None else _init.Uniform(), ctx,
                                         verbose, force_reinit)

    def zero_grad(self):
        """Set every parameter's gradient to 0."""
        self.collect_params().zero_grad()

    def cast(self, dtype):
        """Cast every parameter of this block and its children to ``dtype`` (data and
        gradient), as Gluon's ``Block.cast``."""
        for child in self._children.values():
            child.cast(dtype)
        for param in self._own_params():
            param.cast(dtype)

    def _own_params(self):
        seen = OrderedDict((id(p), p) for p in self._params.values())
        seen.update((id(p), p) for p in self._reg_params.values())
        return list(seen.values())

    def share_parameters(self, shared):
        """Use the parameters of ``shared`` instead of this block's own: ``shared`` maps
        structural names (``'0.weight'``, as ``_collect_params_with_prefix`` and the
        files of :meth:`save_parameters` name them) to :class:`Parameter`; each one
        replaces the parameter of that name here.  Names this block lacks give a warning
        (Gluon 2's ``share_parameters``).  Returns this block."""
        if shared is None:
            return self
        if not isinstance(shared, dict):
            raise TypeError(f"{type(self).__name__}.share_parameters: shared must be a dict "
                            f"of structural name -> Parameter (got {type(shared).__name__})")
        for key, param in shared.items():
            if not isinstance(param, Parameter):
                raise TypeError(f"{type(self).__name__}.share_parameters: shared[{key!r}] "
                                f"must be a Parameter (got {type(param).__name__})")
        unused = set(shared)
        self._share(shared, unused, "")
        for key in sorted(unused):
            warnings.warn(f"share_parameters: parameter {key!r} is not in this block",
                          UserWarning, stacklevel=2)
        return self

    def _share(self, shared, unused, prefix):
        for name, old in list(self._reg_params.items()):
            new = shared.get(prefix + name)
            if new is None:
                continue
            unused.discard(prefix + name)
            if dict.get(self._params, old.name) is old:     # not get(): it creates
                del self._params[old.name]
                self._params[new.name] = new
            object.__setattr__(self, name, new)
            self._reg_params[name] = new
        for key, child in self._children.items():
            child._share(shared, unused, f"{prefix}{key}.")

    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, args)`` before each forward; returns a
        :class:`~runtime.gluon.utils.HookHandle` whose ``detach()`` removes it."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Call ``hook(block, args, output)`` after each forward; returns a
        :class:`~runtime.gluon.utils.HookHandle` whose ``detach()`` removes it."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def summary(self, *inputs):
        """Print each layer's output shape and parameter count for one forward of
        ``inputs`` (Gluon's table: totals with and without shared parameters, and
        trainable ones, those whose ``grad_req`` is not 'null').  Every parameter must
        be initialised (or deferred, completed by this forward), and no block of the
        tree hybridized (SummaryOfHybridizedError, an AssertionError as Gluon's)."""
        def refuse_active(block):
            if isinstance(block, HybridBlock) and block._active:
                raise SummaryOfHybridizedError(
                    f'"{block.name}" must not be hybridized to print summary: a cached '
                    "graph runs its layers without their forward hooks; call "
                    "hybridize(False) first")

        self.apply(refuse_active)
        rows = OrderedDict()
        rows["Input"] = (_shape_str(inputs), 0, 0, 0)
        seen = set()
        handles = []

        def record(block, _, outputs):
            n = trainable = shared = 0
            for param in block._own_params():
                size = param._array().size
                n += size
                trainable += 0 if param.grad_req == "null" else size
                if id(param) in seen:
                    shared += size
                seen.add(id(param))
            rows[f"{type(block).__name__}-{len(rows)}"] = (_shape_str(outputs), n,
                                                           trainable, shared)

        def attach(block):
            if not getattr(block, "_is_container", False):
                handles.append(block.register_forward_hook(record))

        try:
            self.apply(attach)
            self(*inputs)
        finally:
            for handle in handles:
                handle.detach()
        line = "{:>20}  {:>42} {:>15}"
        out = ["-" * 80, line.format("Layer (type)", "Output Shape", "Param #"), "=" * 80]
        out += [line.format(key, shape, n) for key, (shape, n, _, _) in rows.items()]
        total = sum(r[1] for r in rows.values())
        trainable = sum(r[2] for r in rows.values())
        shared = sum(r[3] for r in rows.values())
        out += ["=" * 80, "Parameters in forward computation graph, duplicate included",
                f"   Total params: {total}", f"   Trainable params: {trainable}",
                f"   Non-trainable params: {total - trainable}",
                f"Shared params in forward computation graph: {shared}",
                f"Unique parameters in model: {total - shared}", "-" * 80]
        print("\n".join(out))

    def hybridize(self, active=True, **kwargs):
        """Hybridize (or not, ``active=False``) every :class:`HybridBlock` below this
        block; a plain Block itself always runs imperatively (Gluon)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    # -- calls ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                hook(self, args)
        out = self.forward(*args, **kwargs)
        if self._forward_hooks:
            for hook in list(self._forward_hooks.values()):
                hook(self, args, out)
        return out

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__}: define forward()")

    # -- files ---------------------------------------------------------------------------
    def save_parameters(self, filename, deduplicate=False):
        """Save every parameter to ``filename`` with ``nd.save``, keyed by structural
        name (``0.weight``).  Every parameter must be initialised.  A parameter shared
        by several children is saved under each of its names, or once (under its last
        name, as Gluon) with ``deduplicate=True``; :meth:`load_parameters` reads both."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            last = {id(p): key for key, p in params.items()}
            params = OrderedDict((k, p) for k, p in params.items() if last[id(p)] == k)
        arrays = {}
        for key, param in params.items():
            param._check_initialized()
            arrays[key] = param._array()
        nd.save(filename, arrays)

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load what :meth:`save_parameters` wrote into this block's parameters (or
        what Gluon 1.x's ``collect_params().save(f, strip_prefix=block.prefix)`` wrote:
        a file of names without dots that are not this block's structural names).

        A parameter of the block missing from the file (unless ``allow_missing``; a
        shared parameter is present when any of its names is), an array in the file
        that the block lacks (unless ``ignore_extra``), or one whose shape or dtype
        (unless ``cast_dtype``) differs raises ValueError naming it; then no parameter
        has changed.  With ``cast_dtype``, ``dtype_source='current'`` casts the file's
        values to the parameter's dtype, ``'saved'`` casts the parameter to the file's.
        Parameters whose shape is still unknown take the file's shape.
        """
        loaded = nd.load(filename, ctx=None)
        if not isinstance(loaded, dict):
            raise ValueError(f"load_parameters: {filename!r} holds a list of arrays, not "
                             f"named parameters")
        params = self._collect_params_with_prefix()
        if loaded and not any("." in k for k in loaded) and not set(loaded) & set(params):
            # Gluon's older files (save_params, collect_params().save): full names
            # without this block's prefix
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra,
                                       self.prefix, cast_dtype, dtype_source)
            return
        _load_into("load_parameters", params, loaded,
                   f"file {filename!r}", "this block", ctx, allow_missing, ignore_extra,
                   cast_dtype, dtype_source)

    def save_params(self, filename):
        """Gluon 1.x's deprecated form: the parameters by full name without this block's
        prefix (``collect_params().save(filename, strip_prefix=prefix)``).  Prefer
        :meth:`save_parameters`."""
        warnings.warn("save_params is deprecated; use save_parameters", DeprecationWarning,
                      stacklevel=2)
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """Gluon 1.x's deprecated form of :meth:`load_parameters`, which reads both
        kinds of file."""
        warnings.warn("load_params is deprecated; use load_parameters", DeprecationWarning,
                      stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)


def _shape_str(values):
    """Gluon's summary text of the shapes in (nested) ``values``."""
    def shapes(v):
        if isinstance(v, (list, tuple)):
            return [shapes(x) for x in v]
        return v.shape if isinstance(v, nd.NDArray) else v
    out = shapes(values)
    return str(out)[1:-1] if isinstance(out, list) else str(out)


def _flatten(value):
    """``(leaves, spec)``: the arrays/symbols of ``value`` (one, or nested lists and
    tuples of them, as a cell's ``(output, [states])``) in order, and the structure to
    rebuild it with :func:`_regroup` (None for a leaf, else ``(type, child specs)``)."""
    if isinstance(value, (list, tuple)):
        leaves, specs = [], []
        for v in value:
            sub, spec = _flatten(v)
            leaves += sub
            specs.append(spec)
        return leaves, (type(value), tuple(specs))
    if isinstance(value, Symbol) and len(value.list_outputs()) > 1:
        n = len(value.list_outputs())
        return [value[i] for i in range(n)], (list, (None,) * n)
    return [value], None


_ONE_ARRAY = (tuple, (None,))     # the structure of the arguments (x,)


class SummaryOfHybridizedError(RuntimeError, AssertionError):
    """``summary()`` of a tree with a hybridized block: its layers run inside a cached
    graph, without the forward hooks the table is made from.  Gluon asserts it
    (AssertionError)."""


class _Signatures(dict):
    """A HybridBlock's cached graphs by input signature, and ``last``: the dtype, storage
    type, shape and entry of the last call on one array, so that a repeated call finds
    its entry without building and hashing the signature.  Emptied, it forgets ``last``
    too (the only way entries leave it)."""

    __slots__ = ("last",)

    def __init__(self):
        super().__init__()
        self.last = None

    def clear(self):
        super().clear()
        self.last = None


def _count(spec):
    """The number of leaves of the structure ``spec``."""
    return 1 if spec is None else sum(_count(s) for s in spec[1])


def _regroup(leaves, spec):
    """The structure ``spec`` (from :func:`_flatten`) filled with ``leaves`` (an
    iterator), in order."""
    if spec is None:
        return next(leaves)
    kind, specs = spec
    return kind(_regroup(leaves, s) for s in specs)


class HybridBlock(Block):
    """A block that runs imperatively or as a cached graph (Gluon's ``HybridBlock``).

    Subclasses define ``hybrid_forward(self, F, x, *args, **params)``: ``F`` is
    ``runtime.nd`` when called on NDArrays and ``runtime.symbol`` when traced with
    symbols; ``params`` holds this block's own parameters by attribute name (arrays or
    variables).  The inputs may be arrays or nested lists/tuples of them (a recurrent
    cell's ``(inputs, [states])``), the result too.  After :meth:`hybridize`, the first
    call with a new input signature (structure, dtypes and storage types of the inputs;
    their shapes too with ``static_shape=True``) traces ``hybrid_forward`` with symbols and keeps the graph as
    an ``nd.CachedOp``; later calls run that graph (on the parameters' arrays looked up
    once per context and kept until some parameter's arrays or contexts are replaced:
    initialize, reset_ctx, cast, load, set_data before initialisation), and under
    ``record()`` each call is one node of the tape whose gradient runs the graph's
    backward.  As in MXNet, Python control flow that depends on values cannot be traced
    (a symbol has no value); the trace takes the branch its Python code takes for
    symbols.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix, params)
        self._active = False
        self._flags = {}
        # input signature -> (input variables, output symbol, CachedOp, the output's
        # structure, the source of each graph input: a position in the call or a
        # Parameter, the (graph input, call position) pairs of the call's arrays, the
        # bound parameters: [context, parameter generation, the graph's inputs with the
        # parameters' arrays on that context filled in])
        self._cache = _Signatures()

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, (Block, Parameter)) and "_cache" in self.__dict__:
            self._cache.clear()

    def register_child(self, block, name=None):
        if isinstance(block, Block) and not isinstance(block, HybridBlock):
            raise ValueError(f"{type(self).__name__}: children of a HybridBlock must be "
                             f"HybridBlocks too (got {type(block).__name__}); use "
                             "HybridSequential instead of Sequential")
        super().register_child(block, name)
        if "_cache" in self.__dict__:
            self._cache.clear()

    def hybridize(self, active=True, static_alloc=False, static_shape=False, **kwargs):
        """Run this block (and its HybridBlock children) as cached graphs.  With
        ``static_alloc`` and ``static_shape`` both true each graph runs as a static plan,
        forward and backward with their memory planned once and kept (see
        ``runtime.nd.CachedOp`` and docs/graph.md)."""
        self._active = bool(active)
        self._flags = {"static_alloc": bool(static_alloc),
                       "static_shape": bool(static_shape)}
        self._cache.clear()
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          **kwargs)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}: define hybrid_forward()")

    def forward(self, x, *args):
        if isinstance(x, Symbol):
            params = {k: p.var() for k, p in self._reg_params.items()}
            # the graph's nodes are named under the block's prefix (dense0_fwd), as Gluon
            with _name.Prefix(self.prefix):
                return self.hybrid_forward(symbol, x, *args, **params)
        if not isinstance(x, nd.NDArray):
            raise TypeError(f"{type(self).__name__}: input must be an NDArray or a Symbol "
                            f"(got {type(x).__name__})")
        if self._active:
            return self._call_cached(x, *args)
        ctx = x.context         # the copies of the parameters on the input's context
        try:
            params = {k: p._array(ctx) for k, p in self._reg_params.items()}
        except DeferredInitializationError:
            self._infer_params(x, *args)
            params = {k: p._array(ctx) for k, p in self._reg_params.items()}
        return self.hybrid_forward(nd, x, *args, **params)

    # -- the graph -----------------------------------------------------------------------
    def _trace(self, spec):
        """(input variables, output symbol, the output's structure) of
        ``hybrid_forward`` traced with symbols in the structure ``spec`` of the call's
        arguments (see :func:`_flatten`; one symbol per array, named ``data`` or
        ``data0``, ``data1`` ..., as Gluon)."""
        n_inputs = _count(spec)
        names = ["data"] if n_inputs == 1 else [f"data{i}" for i in range(n_inputs)]
        inputs = [symbol.var(n) for n in names]
        outs, out_spec = _flatten(self.forward(*_regroup(iter(inputs), spec)))
        for o in outs:
            if not isinstance(o, Symbol):
                raise TypeError(f"{type(self).__name__}: hybrid_forward must return "
                                f"symbols when traced (got {type(o).__name__})")
        return inputs, symbol.Group(outs) if len(outs) > 1 else outs[0], out_spec

    def infer_shape(self, *args):
        """Complete the unknown parameter shapes from the inputs ``args`` (Gluon's
        ``infer_shape``)."""
        self._infer_params(*args)

    def _infer_params(self, *args):
        """Complete the unknown parameter shapes from the input shapes by shape inference
        on the traced graph (Gluon's deferred initialisation), then fill them."""
        leaves, spec = _flatten(args)
        inputs, out, _ = self._trace(spec)
        shapes = {i.name: a.shape for i, a in zip(inputs, leaves)}
        arg_shapes, _, aux_shapes = out.infer_shape_partial(**shapes)
        by_name = dict(zip(out.list_arguments() + out.list_auxiliary_states(),
                           arg_shapes + aux_shapes))
        for param in self.collect_params().values():
            shape = by_name.get(param.name)
            if param._data is None and shape:
                # NumPy shape semantics mark a still unknown dimension -1, Gluon 0
                param.shape = tuple(0 if d == -1 else d for d in shape)
                param._finish_deferred_init()
            if param._data is None and param._deferred is not None:
                raise ValueError(f"{type(self).__name__}: the shape {param.shape!r} of "
                                 f"parameter {param.name!r} does not follow from the input "
                                 f"shapes {[a.shape for a in leaves]!r} through the graph; "
                                 f"give its layer's input size (in_units, in_channels)")

    def _call_cached(self, *args):
        cache = self._cache
        static = self._flags.get("static_shape")
        entry = None
        if len(args) == 1 and isinstance(args[0], nd.NDArray):     # the common call
            leaves, spec = args, _ONE_ARRAY
            a, last = args[0], cache.last
            if last is not None and a.dtype is last[0] and a.stype == last[1] \
                    and (not static or a.shape == last[2]):
                entry = last[3]
        else:
            leaves, spec = _flatten(args)
            for a in leaves:
                if not isinstance(a, nd.NDArray):
                    raise TypeError(f"{type(self).__name__}: a hybridized block takes "
                                    f"NDArrays or lists of them (got {type(a).__name__})")
        if entry is None:
            entry = self._cached_entry(args, leaves, spec, static)
            if spec is _ONE_ARRAY:
                a = leaves[0]
                cache.last = (a.dtype, a.stype, a.shape, entry)
        _, _, op, out_spec, sources, slots, bound = entry
        # the parameters' arrays are looked up once per context and kept until a
        # parameter's arrays are replaced (_parameter._generation moves)
        ctx = leaves[0].context
        generation = _parameter._generation
        if bound[0] is not ctx or bound[1] != generation:
            bound[:] = [ctx, generation,
                        [None if isinstance(s, int) else s._array(ctx) for s in sources]]
        arrays = bound[2].copy()
        for k, s in slots:
            arrays[k] = leaves[s]
        outs = op._forward(arrays)
        return outs[0] if out_spec is None else _regroup(iter(outs), out_spec)

    def _cached_entry(self, args, leaves, spec, static):
        """The cache's entry for the call's signature, traced and made on its first call."""
        # the graph does not depend on shapes: one per structure, dtypes and storage
        # types, one per shape too under static_shape (MXNet's flag for inputs of fixed
        # shapes)
        key = (spec,) + tuple([(a.shape if static else None, a.dtype, a.stype)
                               for a in leaves])
        entry = self._cache.get(key)
        if entry is None:
            params = self.collect_params()
            if any(p._data is None for p in params.values()):
                self._infer_params(*args)
            inputs, out, out_spec = self._trace(spec)
            by_name = {p.name: p for p in params.values()}
            positions = {i.name: k for k, i in enumerate(inputs)}
            sources = []
            for name in out.list_inputs():
                if name in positions:
                    sources.append(positions[name])
                elif name in by_name:
                    sources.append(by_name[name])
                else:
                    raise ValueError(f"{type(self).__name__}: the traced graph reads "
                                     f"{name!r}, which is neither an input nor a parameter")
            slots = tuple((k, s) for k, s in enumerate(sources) if isinstance(s, int))
            entry = (inputs, out, nd.CachedOp(out, self._flags), out_spec, sources, slots,
                     [None, None, None])
            self._cache[key] = entry
        return entry

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write the traced graph to ``path-symbol.json`` and the parameters to
        ``path-%04d.params`` (MXNet's binary format, names prefixed ``arg:`` and
        ``aux:``), as Gluon's ``export``; the block must have been hybridized and called.
        Returns the two file names."""
        if not self._cache:
            raise RuntimeError(f"{type(self).__name__}: call hybridize() and run the block "
                               "forward once before export()")
        _, out, _, _, _, _, _ = next(iter(self._cache.values()))
        by_name = {p.name: p for p in self.collect_params().values()}
        arrays = {}
        for prefix, names in (("arg:", out.list_arguments()),
                              ("aux:", out.list_auxiliary_states())):
            for name in names:
                if name in by_name:
                    arrays[prefix + name] = by_name[name]._array()
        sym_file, params_file = f"{path}-symbol.json", f"{path}-{epoch:04d}.params"
        tmp = f"{params_file}.tmp-{os.getpid()}"
        try:
            nd.save(tmp, arrays, format="mxnet")
            out.save(sym_file)
            os.replace(tmp, params_file)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return sym_file, params_file


class SymbolBlock(HybridBlock):
    """A block made of a symbol (Gluon's ``SymbolBlock``): ``outputs`` (a Symbol or a
    list) computed from the variables ``inputs``; every other argument and auxiliary
    state of the graph becomes a parameter of that name (auxiliary states with
    ``grad_req='null'``).  It always runs as a cached graph."""

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix="", params=ParameterDict(""))
        outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        ins = inputs if isinstance(inputs, (list, tuple)) else [inputs]
        for s in list(outs) + list(ins):
            if not isinstance(s, Symbol):
                raise TypeError(f"SymbolBlock: outputs and inputs must be Symbols (got "
                                f"{type(s).__name__})")
        out = symbol.Group(outs) if len(outs) > 1 else outs[0]
        self._in_names = [s.name for s in ins]
        missing = [n for n in self._in_names if n not in out.list_inputs()]
        if missing:
            raise ValueError(f"SymbolBlock: input {missing[0]!r} is not a variable of the "
                             f"outputs (they read {', '.join(out.list_inputs())})")
        self._out = out
        self._out_spec = None if len(outs) == 1 and len(out) == 1 else \
            (tuple, (None,) * len(out))
        shapes = dict(zip(out.list_arguments() + out.list_auxiliary_states(),
                          out.infer_shape_partial()[0] + out.infer_shape_partial()[2]))
        given = params if params is not None else {}
        aux = set(out.list_auxiliary_states())
        for name in out.list_inputs():
            if name in self._in_names:
                continue
            if name in given:
                self._params[name] = given[name]
                continue
            self._params.get(name, shape=shapes.get(name) or None,
                             allow_deferred_init=True,
                             grad_req="null" if name in aux else "write")
        self._active = True

    def hybridize(self, active=True, **kwargs):
        # a SymbolBlock is a graph already
        self._flags = {k: kwargs.get(k, False) for k in ("static_alloc", "static_shape")}
        self._cache.clear()

    def forward(self, x, *args):
        if isinstance(x, Symbol):
            return self._out(**dict(zip(self._in_names, (x,) + args)))
        return self._call_cached(x, *args)

    def _trace(self, spec):
        n_inputs = len(spec[1])
        if n_inputs != len(self._in_names) or any(s is not None for s in spec[1]):
            raise ValueError(f"SymbolBlock: takes {len(self._in_names)} input(s) "
                             f"({', '.join(self._in_names)}) (got {n_inputs})")
        return [symbol.var(n) for n in self._in_names], self._out, self._out_spec

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None):
        """A SymbolBlock of the graph in ``symbol_file`` with inputs ``input_names`` (a
        name or a list) and, when given, the parameters of ``param_file`` (what
        ``export`` writes: names prefixed ``arg:``/``aux:``)."""
        sym = symbol.load(symbol_file)
        names = [input_names] if isinstance(input_names, str) else list(input_names)
        block = SymbolBlock(sym, [symbol.var(n) for n in names])
        if param_file is not None:
            block.load_parameters(param_file, ctx=ctx)
        return block

    def _collect_params_with_prefix(self, prefix=""):
        # a SymbolBlock's parameters are the graph's variables: files key them as MXNet's
        # export does (arg:<name>, aux:<name>), so save/load_parameters speak that format
        aux = set(self._out.list_auxiliary_states())
        return OrderedDict((("aux:" if name in aux else "arg:") + name, param)
                           for name, param in self._params.items())


__all__ = ["Block", "HybridBlock", "SymbolBlock"]
