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

import threading
from collections import OrderedDict

from runtime import nd
from runtime import initializer as _init
from runtime.gluon.parameter import Parameter, ParameterDict, _compatible

_COUNTERS = {}
_COUNTER_LOCK = threading.Lock()
_scope = threading.local()


def _global_prefix(hint):
    with _COUNTER_LOCK:
        count = _COUNTERS.get(hint, 0)
        _COUNTERS[hint] = count + 1
    return f"{hint}{count}_"


class _BlockScope:
    """The ``name_scope()`` of a block: children made inside it take its prefix.  Made
    anew by each ``name_scope()`` call (the counters live on the block), so that a block
    holds no reference cycle and dies with its last reference, gc or not."""

    def __init__(self, block):
        self._block = block
        self._counter = block._scope_counter
        self._old = None

    def __enter__(self):
        # A block made with prefix '' names nothing itself: blocks made in its scope are
        # named in the enclosing scope (Gluon: the model zoo's prefix='' containers).
        if self._block._empty_prefix:
            return self
        self._old = getattr(_scope, "current", None)
        _scope.current = self
        return self

    def __exit__(self, *exc):
        if self._block._empty_prefix:
            return
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
        self._prefix = _create_prefix(prefix, type(self).__name__.lower())
        self._empty_prefix = prefix == ""
        if params is None:
            self._params = ParameterDict(self._prefix)
        elif isinstance(params, ParameterDict):
            self._params = ParameterDict(params.prefix)
            self._params.update(params)
        else:
            raise TypeError(f"{type(self).__name__}: params must be a ParameterDict (got "
                            f"{type(params).__name__})")
        self._scope_counter = {}

    def __setattr__(self, name, value):
        if not hasattr(self, "_children"):
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
        lines = [f"{type(self).__name__}("]
        for key, child in self._children.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({key}): {body}")
        return "\n".join(lines) + "\n)" if len(lines) > 1 else f"{type(self).__name__}()"

    # -- structure -----------------------------------------------------------------------
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

    def hybridize(self, active=True, **kwargs):
        """Accepted for Gluon compatibility; ndrt runs every block imperatively."""

    # -- calls ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__}: define forward()")

    # -- files ---------------------------------------------------------------------------
    def save_parameters(self, filename):
        """Save every parameter to ``filename`` with ``nd.save``, keyed by structural
        name (``0.weight``).  Every parameter must be initialised."""
        params = self._collect_params_with_prefix()
        arrays = {}
        for key, param in params.items():
            param._check_initialized()
            arrays[key] = param.data()
        nd.save(filename, arrays)

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False):
        """Load what :meth:`save_parameters` wrote into this block's parameters.

        A parameter of the block missing from the file (unless ``allow_missing``), an
        array in the file that the block lacks (unless ``ignore_extra``), or one whose
        shape or dtype (unless ``cast_dtype``) differs raises ValueError naming it;
        then no parameter has changed.  Parameters whose shape is still unknown take
        the file's shape.
        """
        loaded = nd.load(filename, ctx=None)
        if not isinstance(loaded, dict):
            raise ValueError(f"load_parameters: {filename!r} holds a list of arrays, not "
                             f"named parameters")
        params = self._collect_params_with_prefix()
        missing = [k for k in params if k not in loaded] if not allow_missing else []
        extra = [k for k in loaded if k not in params] if not ignore_extra else []
        if missing:
            raise ValueError(f"load_parameters: parameter {missing[0]!r} is missing in file "
                             f"{filename!r}, which holds {sorted(loaded)!r} (set "
                             f"allow_missing=True to ignore missing parameters)")
        if extra:
            raise ValueError(f"load_parameters: parameter {extra[0]!r} in file {filename!r} "
                             f"is not present in this block, which has {list(params)!r} "
                             f"(set ignore_extra=True to ignore it)")
        for key, param in params.items():
            if key not in loaded:
                continue
            value = loaded[key]
            want = param._data.shape if param._data is not None else param.shape
            if want is None or not _compatible(want, value.shape):
                raise ValueError(f"load_parameters: parameter {key!r} ({param.name}) has "
                                 f"shape {want!r} but file {filename!r} holds shape "
                                 f"{value.shape!r}")
            if value.dtype != param.dtype and not cast_dtype:
                raise ValueError(f"load_parameters: parameter {key!r} ({param.name}) has "
                                 f"dtype {param.dtype} but file {filename!r} holds "
                                 f"{value.dtype} (set cast_dtype=True to cast)")
        for key, param in params.items():
            if key in loaded:
                if ctx is not None and param._data is None:
                    param._ctx = ctx
                param.set_data(loaded[key])


__all__ = ["Block"]
