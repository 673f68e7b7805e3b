"""``Symbol`` (MXNet's ``mx.sym.Symbol``): a graph of registry operators, built by calling
the same operator functions as ``nd`` on symbols.

>>> import runtime as mx
>>> data = mx.sym.Variable('data')
>>> fc = mx.sym.FullyConnected(data, num_hidden=4, name='fc')
>>> fc.list_arguments()
['data', 'fc_weight', 'fc_bias']
>>> fc.infer_shape(data=(2, 3))[0]
[(2, 3), (4, 3), (4,)]

Each ``sym.<op>`` is made from the operator's one registry declaration, with ``nd``'s
signature (array inputs, then the attributes by position or keyword); inputs left out are
made as variables named ``<name>_<input>`` (``fc_weight``), as MXNet does.  A symbol made
without ``name=`` is named by ``mx.name`` (``fullyconnected0``); ``mx.AttrScope``'s
attributes go on every symbol made inside it.
"""

import numbers

import numpy as np

from runtime import attribute, executor, operator, util
from runtime.base import NotImplementedForSymbol
from runtime.errors import MXNetValueError
from runtime import name as _name
from runtime import initializer as _init
from runtime.nd._ops import signature
from runtime.ops import registry
from runtime.symbol import _graph, _json
from runtime.symbol._graph import HIDDEN_KEYS, Node
from runtime.symbol._source import SOURCES


class Symbol:
    """One or more outputs of a graph (MXNet's ``Symbol``).  Symbols are immutable:
    operators and ``Group`` make new ones sharing the nodes."""

    __slots__ = ("_outputs",)

    def __init__(self, outputs):
        self._outputs = tuple(outputs)

    # -- structure -------------------------------------------------------------------
    def _nodes(self):
        return _graph.topo(self._outputs)

    @property
    def name(self):
        """The name of the node of a single-output symbol (None for a group)."""
        nodes = {id(n) for n, _ in self._outputs}
        return self._outputs[0][0].name if len(nodes) == 1 else None

    def __repr__(self):
        name = self.name
        if name is not None:
            return f"<Symbol {name}>"
        return f"<Symbol group [{', '.join(n.name for n, _ in self._outputs)}]>"

    __str__ = __repr__

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([e]) for e in self._outputs)

    def __getitem__(self, index):
        """Output ``index`` (a position, or a name of ``list_outputs()``)."""
        if isinstance(index, str):
            names = self.list_outputs()
            if index not in names:
                raise ValueError(f"Symbol: no output named {index!r} (outputs: "
                                 f"{', '.join(names)})")
            index = names.index(index)
        if not isinstance(index, numbers.Integral) or isinstance(index, bool):
            raise TypeError(f"Symbol: index must be an int or an output name (got "
                            f"{index!r})")
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"Symbol: index must be in [0, {len(self._outputs)}) (got "
                             f"{index})")
        return Symbol([self._outputs[index]])

    def __copy__(self):
        return Symbol(self._outputs)

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        return {"json": self.tojson()}

    def __setstate__(self, state):
        object.__setattr__(self, "_outputs", _json.load(state["json"], "<pickle>"))

    def list_outputs(self):
        """The output names (``fc_output``; a variable's own name)."""
        return [n.output_name(i) for n, i in self._outputs]

    def list_inputs(self):
        """Every variable, arguments and auxiliary states, in graph order."""
        return [n.name for n in self._nodes() if n.op is None]

    def list_arguments(self):
        """The variables that are not auxiliary states, in graph order."""
        nodes = self._nodes()
        aux = _graph.aux_nodes(nodes)
        return [n.name for n in nodes if n.op is None and id(n) not in aux]

    def list_auxiliary_states(self):
        """The variables an op updates (BatchNorm's moving_mean, moving_var)."""
        nodes = self._nodes()
        aux = _graph.aux_nodes(nodes)
        return [n.name for n in nodes if id(n) in aux]

    def get_internals(self):
        """A group of every output of every node, in graph order."""
        return Symbol([(n, i) for n in self._nodes() for i in range(n.n_out())])

    def get_children(self):
        """A group of the inputs of this symbol's nodes, each node's once (the outputs of
        a multi-output node share its inputs); None for a variable."""
        nodes = list(dict.fromkeys(n for n, _ in self._outputs))
        entries = [e for n in nodes for e in n.inputs]
        return Symbol(entries) if entries else None

    # -- attributes ------------------------------------------------------------------
    def _single(self, what):
        """The one entry of a single-output symbol (``what`` names it in the error)."""
        if len(self._outputs) != 1:
            raise ValueError(f"input {what} must be a single-output symbol (got a group "
                             f"of {len(self._outputs)}: {', '.join(self.list_outputs())})")
        return self._outputs[0]

    def _single_node(self, what):
        if self.name is None:
            raise ValueError(f"{what}: needs a single-output symbol (got a group of "
                             f"{len(self._outputs)})")
        return self._outputs[0][0]

    def attr(self, key):
        """The attribute ``key`` of this symbol's node as a string, or None."""
        node = self._single_node("attr")
        merged = {**node.raw, **node.attrs}
        if key in merged:
            return merged[key]
        return merged.get(f"__{key}__") if key in HIDDEN_KEYS else None

    def list_attr(self, recursive=False):
        """This node's attributes (operator attributes and symbol attributes, both as
        strings; ``__lr_mult__`` also as ``lr_mult``); ``recursive`` is MXNet's
        deprecated form of :meth:`attr_dict`."""
        if recursive:
            raise ValueError("list_attr: recursive=True is deprecated in MXNet; use "
                             "attr_dict()")
        return _listed(self._single_node("list_attr"))

    def attr_dict(self):
        """{node name: its attributes} for every node that has any."""
        return {n.name: _listed(n) for n in self._nodes() if n.raw or n.attrs}

    def _set_attr(self, **kwargs):
        """Set symbol attributes of this node (strings; MXNet's private setter)."""
        node = self._single_node("_set_attr")
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError(f"_set_attr: attribute {key!r} must be a str (got "
                                 f"{value!r})")
            node.attrs[_stored_key(key)] = value

    # -- inference -------------------------------------------------------------------
    def _known(self, what, args, kwargs, convert):
        nodes = self._nodes()
        inputs = [n for n in nodes if n.op is None]
        names = self.list_arguments()
        by_name = {n.name: n for n in inputs}
        if args and kwargs:
            raise TypeError(f"{what}: give the values by position or by keyword, not both")
        known = {}
        if args:
            if len(args) > len(names):
                raise ValueError(f"{what}: {len(names)} arguments ({', '.join(names)}) "
                                 f"take at most {len(names)} values (got {len(args)})")
            kwargs = {k: v for k, v in zip(names, args) if v is not None}
        for key, value in kwargs.items():
            if key not in by_name:
                raise ValueError(f"{what}: no argument named {key!r} (arguments: "
                                 f"{', '.join(self.list_inputs())})")
            if value is not None:
                known[by_name[key]] = convert(key, value)
        return nodes, known

    def _infer_shape(self, partial, args, kwargs):
        # MXNet's marks of what is unknown: legacy shapes write an unknown dimension as
        # 0 and an unknown shape as (); NumPy shape semantics as -1 and None
        np_shape = util.is_np_shape()
        unknown_dim = -1 if np_shape else 0
        nodes, known = self._known("infer_shape", args, kwargs,
                                   lambda k, v: _as_shape(k, v, allow=unknown_dim))
        table = _graph.infer_shapes(nodes, known, unknown_dim)
        aux = _graph.aux_nodes(nodes)
        arg_nodes = [n for n in nodes if n.op is None and id(n) not in aux]
        aux_list = [n for n in nodes if id(n) in aux]
        args_ = [table.get((n, 0)) for n in arg_nodes]
        outs = [table.get(e) for e in self._outputs]
        auxs = [table.get((n, 0)) for n in aux_list]
        if partial:
            def shown(s):
                if s is None:
                    return None if np_shape else ()
                return tuple(unknown_dim if d is None else d for d in s)
            return ([shown(s) for s in args_], [shown(s) for s in outs],
                    [shown(s) for s in auxs])
        if any(s is None or None in s for s in args_ + outs + auxs):
            return None, None, None
        return args_, outs, auxs

    def _sources_shaped(self, **shapes):
        """This symbol with every creation node of partly known shape (``sym.zeros(shape=
        (0, 8))``, an RNN cell's begin state) made for the shape inferred from the
        arguments' ``shapes``, as MXNet's executor allocates it; ValueError naming the
        node when inference cannot tell it."""
        nodes = self._nodes()
        partial = [n for n in nodes if n.op is not None and not n.inputs
                   and 0 in n.params.get("shape", (1,))]
        if not partial or util.is_np_shape():
            return self
        by_name = {n.name: n for n in nodes if n.op is None}
        table = _graph.infer_shapes(
            nodes, {by_name[k]: tuple(v) for k, v in shapes.items() if k in by_name}, 0)
        new = {}
        for node in partial:
            shape = table.get((node, 0))
            if shape is None or None in shape:
                raise MXNetValueError(
                    f"bind: the shape of {node.describe()} must follow from the "
                    f"arguments' shapes (got {_graph._shown(shape or node.params['shape'])})")
            new[id(node)] = Node(node.op, node.op_name, node.name, (),
                                 {**node.params, "shape": shape}, node.raw, node.attrs)
        return Symbol(_graph.replace_nodes(self._outputs, new))

    def infer_shape(self, *args, **kwargs):
        """(argument shapes, output shapes, auxiliary state shapes) from the shapes of
        some arguments (by position in ``list_arguments()`` order, or by name); all
        three None when some shape cannot be told.  A conflict raises ValueError
        naming the node.

        A given dimension of 0 (under ``util.np_shape()``: -1) is unknown, as in MXNet;
        see :func:`_graph.infer_shapes` for how far partly known shapes go."""
        return self._infer_shape(False, args, kwargs)

    def infer_shape_partial(self, *args, **kwargs):
        """:meth:`infer_shape` with what it cannot tell marked as MXNet does: an unknown
        dimension as 0 and an unknown shape as ``()``, or under ``util.np_shape()`` as
        -1 and None."""
        return self._infer_shape(True, args, kwargs)

    def infer_type(self, *args, **kwargs):
        """(argument dtypes, output dtypes, auxiliary dtypes) as NumPy scalar types (all
        None when some cannot be told), from the dtypes of some arguments."""
        nodes, known = self._known("infer_type", args, kwargs,
                                   lambda k, v: np.dtype(v))
        table = _graph.infer_types(nodes, known)
        return self._split(nodes, table, lambda d: d.type)

    def infer_storage_type(self, *args, **kwargs):
        """(argument, output, auxiliary) storage types ('default', 'row_sparse', 'csr')
        from those of some arguments (the others dense)."""
        nodes, known = self._known("infer_storage_type", args, kwargs, _as_stype)
        table = _graph.infer_stypes(nodes, known)
        return self._split(nodes, table, lambda s: s)

    def _split(self, nodes, table, show):
        aux = _graph.aux_nodes(nodes)
        args_ = [table.get((n, 0)) for n in nodes if n.op is None and id(n) not in aux]
        outs = [table.get(e) for e in self._outputs]
        auxs = [table.get((n, 0)) for n in nodes if id(n) in aux]
        if any(v is None for v in args_ + outs + auxs):
            return None, None, None
        return [show(v) for v in args_], [show(v) for v in outs], [show(v) for v in auxs]

    # -- JSON ------------------------------------------------------------------------
    def tojson(self):
        """The graph as MXNet's (nnvm's) JSON text."""
        return _json.dumps(self._nodes(), self._outputs)

    def save(self, fname, remove_amp_cast=True):
        """Write :meth:`tojson` to ``fname`` (through a temporary file, so that a failed
        write leaves no partial file)."""
        _json.write_file(fname, self.tojson())

    # -- execution -------------------------------------------------------------------
    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """An :class:`runtime.executor.Executor` on the given arrays (see there)."""
        return executor.Executor.bind(self, ctx, args, args_grad, grad_req, aux_states)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """An executor with arrays allocated from the shapes ``kwargs`` (the others
        inferred), dtypes ``type_dict`` (float32 where none is known) and storage types
        ``stype_dict``; gradient arrays for every argument whose request is not null."""
        return executor.Executor.simple_bind(self, ctx, grad_req, type_dict, stype_dict,
                                             kwargs)

    def eval(self, ctx=None, **kwargs):
        """The outputs for the argument arrays ``kwargs`` (a list of NDArrays)."""
        return self.bind(ctx, kwargs).forward()

    # -- composition -----------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """A copy of this graph with variables replaced by symbols (MXNet's compose):
        by position in ``list_arguments()`` order, or by name; ``name=`` renames the head
        node.  Nodes that do not depend on a replaced variable are shared."""
        name = kwargs.pop("name", None)
        names = self.list_arguments()
        if len(args) > len(names):
            raise TypeError(f"compose: {len(names)} arguments ({', '.join(names)}) take at "
                            f"most {len(names)} symbols by position (got {len(args)})")
        mapping = dict(zip(names, args))
        inputs = set(self.list_inputs())
        for key, value in kwargs.items():
            if key not in inputs:
                raise ValueError(f"compose: no variable named {key!r} (variables: "
                                 f"{', '.join(self.list_inputs())})")
            if key in mapping:
                raise TypeError(f"compose: got multiple symbols for {key!r}")
            mapping[key] = value
        for key, value in mapping.items():
            if not isinstance(value, Symbol):
                raise TypeError(f"compose: {key!r} must be a Symbol (got "
                                f"{type(value).__name__})")
        heads = _graph.substitute(self._outputs,
                                  {k: v._single(k) for k, v in mapping.items()})
        if name is not None:         # the composed head node takes the name given
            node = heads[0][0]
            if len(heads) != 1 or node.op is None:
                raise ValueError(f"compose: name= needs one operator output (got "
                                 f"{len(heads)} output(s))")
            node = Node(node.op, node.op_name, name, node.inputs, node.params, node.raw,
                        node.attrs)
            heads = [(node, heads[0][1])]
        return Symbol(heads)

    # -- operators -------------------------------------------------------------------
    def __add__(self, other):
        return _arith(self, other, "elemwise_add", "_plus_scalar", "_plus", "_plusscalar")

    __radd__ = __add__

    def __sub__(self, other):
        return _arith(self, other, "elemwise_sub", "_minus_scalar", "_minus",
                      "_minusscalar")

    def __rsub__(self, other):
        return _scalar(self, other, "_rminus_scalar", "_rminusscalar")

    def __mul__(self, other):
        return _arith(self, other, "elemwise_mul", "_mul_scalar", "_mul", "_mulscalar")

    __rmul__ = __mul__

    def __truediv__(self, other):
        return _arith(self, other, "elemwise_div", "_div_scalar", "_div", "_divscalar")

    def __rtruediv__(self, other):
        return _scalar(self, other, "_rdiv_scalar", "_rdivscalar")

    def __mod__(self, other):
        return _arith(self, other, "_mod", "_mod_scalar", "_mod", "_modscalar")

    def __rmod__(self, other):
        return _scalar(self, other, "_rmod_scalar", "_rmodscalar")

    def __pow__(self, other):
        return _arith(self, other, "_power", "_power_scalar", "_power", "_powerscalar")

    def __rpow__(self, other):
        return _scalar(self, other, "_rpower_scalar", "_rpower_scalar")

    def __neg__(self):
        return _scalar(self, -1.0, "_mul_scalar", "_mulscalar")

    def __abs__(self):
        return _call("abs", [self], {})

    def astype(self, dtype):
        """This symbol cast to ``dtype`` (the ``cast`` operator), as MXNet's method."""
        return _call("cast", [self], {"dtype": dtype}, hint="cast")

    def __eq__(self, other):
        return _arith(self, other, "_equal", "_equal_scalar", "_equal", "_equal_scalar")

    def __ne__(self, other):
        return _arith(self, other, "_not_equal", "_not_equal_scalar", "_not_equal",
                      "_not_equal_scalar")

    def __gt__(self, other):
        return _arith(self, other, "_greater", "_greater_scalar", "_greater",
                      "_greater_scalar")

    def __ge__(self, other):
        return _arith(self, other, "_greater_equal", "_greater_equal_scalar",
                      "_greater_equal", "_greater_equal_scalar")

    def __lt__(self, other):
        return _arith(self, other, "_lesser", "_lesser_scalar", "_lesser",
                      "_lesser_scalar")

    def __le__(self, other):
        return _arith(self, other, "_lesser_equal", "_lesser_equal_scalar",
                      "_lesser_equal", "_lesser_equal_scalar")

    __hash__ = object.__hash__

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, "bool")

    def __getattr__(self, name):
        # symbol methods named after operators (x.reshape(...), x.sum(axis=1)), as
        # MXNet's generated Symbol methods
        if name.startswith("_") or name not in registry.OPS:
            raise AttributeError(f"'Symbol' object has no attribute {name!r}")
        fn = _function(name)
        return lambda *args, **kwargs: fn(self, *args, **kwargs)


def _stored_key(key):
    return f"__{key}__" if key in HIDDEN_KEYS else key


def _listed(node):
    out = dict(node.raw)
    for key, value in node.attrs.items():
        out[key] = value
        if key.startswith("__") and key.endswith("__") and key[2:-2] in HIDDEN_KEYS:
            out[key[2:-2]] = value
    return out


def _as_shape(key, value, who="infer_shape", allow=0):
    """``value`` as a shape tuple; sizes must be >= 0, or ``allow`` (-1: NumPy shape
    semantics' mark of an unknown dimension)."""
    if isinstance(value, numbers.Integral):
        value = (value,)
    try:
        shape = tuple(int(s) for s in value)
    except (TypeError, ValueError):
        raise TypeError(f"{who}: shape of {key!r} must be a tuple of ints (got "
                        f"{value!r})") from None
    if any(s < 0 and s != allow for s in shape):
        raise ValueError(f"{who}: shape of {key!r} must hold sizes >= 0 (got "
                         f"{value!r})")
    return shape


def _as_stype(key, value, who="infer_storage_type"):
    if value not in _graph.STYPE_CODES:
        raise ValueError(f"{who}: storage type of {key!r} must be one of "
                         f"{', '.join(_graph.STYPE_CODES)} (got {value!r})")
    return value


def _is_number(x):
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, bool)


def _scalar(sym, scalar, op_name, hint):
    if not _is_number(scalar):
        raise TypeError(f"{op_name}: the other operand must be a Symbol or a number (got "
                        f"{type(scalar).__name__})")
    return _call(op_name, [sym], {"scalar": scalar}, hint=hint)


def _arith(lhs, rhs, op_name, scalar_name, hint, scalar_hint):
    if isinstance(rhs, Symbol):
        return _call(op_name, [lhs, rhs], {}, hint=hint)
    return _scalar(lhs, rhs, scalar_name, scalar_hint)


# -- variables and groups ----------------------------------------------------------------

def _init_string(init):
    if isinstance(init, str):
        return init
    if isinstance(init, _init.Initializer):
        return init.dumps()
    raise TypeError(f"Variable: init must be an Initializer or a str (got {init!r})")


def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None,
             init=None, stype=None, **kwargs):
    """A placeholder input (MXNet's ``mx.sym.Variable``/``var``).

    ``shape`` (0 for an unknown dimension; -1 under NumPy shape semantics, where 0 is a
    real size), ``dtype``, ``stype``, ``init``, ``lr_mult``, ``wd_mult`` are kept as the
    attributes MXNet writes (``__shape__``, ``__dtype__`` as its type flag ...); ``attr``
    and ``**kwargs`` (keys ``__like_this__``) add string attributes.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"Variable: name must be a non-empty str (got {name!r})")
    attrs = attribute.current().get(attr)
    attrs = {_stored_key(k): v for k, v in attrs.items()}
    for key, value in attrs.items():
        if not isinstance(value, str):
            raise ValueError(f"Variable: attribute {key!r} must be a str (got {value!r})")
    if shape is not None:       # an unknown dimension: 0, or -1 under NumPy shape semantics
        attrs["__shape__"] = str(_as_shape(name, shape, "Variable",
                                           allow=-1 if util.is_np_shape() else 0))
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        code = _graph.DTYPE_CODES.get(np.dtype(dtype).name)
        if code is None:
            raise TypeError(f"Variable: dtype of {name!r} must be one of "
                            f"{', '.join(_graph.DTYPE_CODES)} (got {dtype!r})")
        attrs["__dtype__"] = str(code)
    if init is not None:
        attrs["__init__"] = _init_string(init)
    if stype is not None:
        attrs["__storage_type__"] = str(_graph.STYPE_CODES[_as_stype(name, stype, "Variable")])
    for key, value in kwargs.items():
        if not (key.startswith("__") and key.endswith("__")):
            raise ValueError(f"Variable: attribute {key!r} must start and end with double "
                             f"underscores")
        attrs[key] = str(value)
    return Symbol([(Node(None, None, name, attrs=attrs), 0)])


var = Variable


def Group(symbols):
    """One symbol with the outputs of ``symbols`` in order."""
    symbols = list(symbols)
    if not symbols or not all(isinstance(s, Symbol) for s in symbols):
        raise TypeError(f"Group: symbols must be a non-empty list of Symbols (got "
                        f"{symbols!r})")
    return Symbol([e for s in symbols for e in s._outputs])


def load(fname):
    """The symbol saved in the JSON file ``fname`` (by ``save`` here or MXNet's)."""
    return Symbol(_json.load_file(fname))


def load_json(json_str):
    """The symbol of MXNet JSON text ``json_str``."""
    return Symbol(_json.load(json_str, "<string>"))


fromjson = load_json


# -- operator functions ------------------------------------------------------------------

def _hidden_attrs(op_name, kwargs):
    """(kwargs without MXNet's hidden keys, {key: str(value)} of those): every operator
    takes ``lr_mult``, ``wd_mult``, ``ctx_group`` ... as node attributes (stored as
    ``__key__``), which the variables the node makes for its missing inputs carry, and
    any ``__key__`` (``__layout__``) as an attribute kept as it is (MXNet's parameter
    parser lets such keys through)."""
    hidden = {k: kwargs[k] for k in kwargs
              if k in HIDDEN_KEYS or (len(k) > 4 and k.startswith("__") and k.endswith("__"))}
    if not hidden:
        return kwargs, {}
    for k, v in hidden.items():
        if v is None or not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise TypeError(f"{op_name}: {k} must be a number or a str (got {v!r})")
    rest = {k: v for k, v in kwargs.items() if k not in hidden}
    return rest, {k: str(v) for k, v in hidden.items()}


def _call(op_name, inputs, kwargs, name=None, attr=None, hint=None):
    """A node calling registry op ``op_name`` on symbols ``inputs`` (None: absent) with
    attributes ``kwargs``."""
    op = registry.get(op_name)
    kwargs, hidden = _hidden_attrs(op_name, kwargs)
    if hidden:
        attr = {**(attr or {}), **hidden}
    if op.variadic and len(op.inputs) <= 1 and "num_args" in op.attrs \
            and "num_args" not in kwargs:
        kwargs = {**kwargs, "num_args": len(inputs)}
    params = op.parse_attrs(kwargs)
    raw = {k: _graph.attr_to_string(op.attrs.get(k), v) for k, v in kwargs.items()}
    return _node(op, op_name, inputs, params, raw, name, attr, hint or op_name.lower())


def _node(op, op_name, inputs, params, raw, name, attr, hint):
    """The symbol of a new node of ``op``; missing inputs become variables
    ``<name>_<input>`` carrying the node's attributes (as MXNet's do), an op's written
    inputs (auxiliary states) with MXNet's ``__init__`` for them."""
    name = _name.current().get(name, hint)
    attrs = {_stored_key(k): v for k, v in attribute.current().get(attr).items()}
    entries = []
    if op.variadic and len(op.inputs) <= 1:
        entries = [s._single("input") for s in inputs]
    else:
        for i, input_name in enumerate(op.inputs):
            given = inputs[i] if i < len(inputs) else None
            op_init = op.input_inits.get(input_name)
            if given is not None:
                entry = given._single(input_name)
                var = entry[0]
                if op_init is not None and var.op is None and "__init__" not in var.attrs:
                    var.attrs["__init__"] = op_init
                entries.append(entry)
            elif not op.variadic or _graph.wanted_input(op, params, input_name):
                init = {}
                if i in op.mutates:
                    init = {"__init__": _graph.aux_state_init(input_name)}
                elif op_init is not None:
                    init = {"__init__": op_init}
                v = Node(None, None, f"{name}_{input_name}",
                         attrs={**raw, **attrs, **init})
                entries.append((v, 0))
    node = Node(op, op_name, name, entries, params, raw, attrs)
    return Symbol([(node, i) for i in range(node.n_out())])


def _source(op_name, kwargs, name, attr, inputs=(), hint=None):
    """A node of the ``nd``-function operator ``op_name`` (runtime.symbol._source) with
    the attributes ``kwargs`` (None: the default) on the symbols ``inputs``, named after
    ``hint`` (the operator's name unless given) when ``name`` is None."""
    src = SOURCES[op_name]
    kwargs, hidden = _hidden_attrs(op_name, kwargs)
    if hidden:
        attr = {**(attr or {}), **hidden}
    params = src.parse_attrs({k: v for k, v in kwargs.items() if v is not None})
    raw = {k: _graph.attr_to_string(src.attrs[k], v) for k, v in params.items()
           if v is not None}
    return _node(src, op_name, list(inputs), params, raw, name, attr, hint or op_name)


def zeros(shape, dtype=None, name=None, attr=None, **kwargs):
    """A node of zeros of ``shape`` (MXNet's ``_zeros``; float32 unless ``dtype``)."""
    return _source("_zeros", {"shape": shape, "dtype": dtype, **kwargs}, name, attr)


def ones(shape, dtype=None, name=None, attr=None, **kwargs):
    """A node of ones of ``shape`` (MXNet's ``_ones``)."""
    return _source("_ones", {"shape": shape, "dtype": dtype, **kwargs}, name, attr)


def full(shape, val, dtype=None, name=None, attr=None, **kwargs):
    """A node of ``shape`` filled with ``val`` (MXNet's ``_full``)."""
    return _source("_full", {"shape": shape, "value": val, "dtype": dtype, **kwargs}, name,
                   attr)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, attr=None,
           dtype=None):
    """A node of evenly spaced values in [start, stop), each ``repeat`` times (MXNet's
    ``_arange``)."""
    return _source("_arange", {"start": start, "stop": stop, "step": step,
                               "repeat": repeat, "infer_range": infer_range,
                               "dtype": dtype}, name, attr)


def Custom(*inputs, op_type=None, name=None, attr=None, **kwargs):
    """A node of the custom operator ``op_type`` (``runtime.operator.register``): inputs
    by position or by the names of the prop's ``list_arguments()``; the other keyword
    arguments go to the prop as strings."""
    if op_type is None:
        raise TypeError("Custom: op_type is required (the name given to "
                        "mx.operator.register)")
    by_name = {k: kwargs.pop(k) for k in list(kwargs) if isinstance(kwargs[k], Symbol)}
    cdef = operator.CustomDef(op_type, kwargs)
    given = list(inputs) + [None] * (len(cdef.inputs) - len(inputs))
    for key, value in by_name.items():
        if key not in cdef.inputs:
            raise TypeError(f"Custom ({op_type}): no input named {key!r} (inputs: "
                            f"{', '.join(cdef.inputs)})")
        given[cdef.inputs.index(key)] = value
    return _node(cdef, "Custom", given, cdef.params, dict(cdef.params), name, attr,
                 "custom")


class SymbolFunction:
    """``sym.<op>(*symbols, *attrs, name=None, attr=None, **attrs)``: the symbol form of
    a registry operator, with ``nd.<op>``'s signature (``runtime.nd._ops.signature``)."""

    def __init__(self, op_name):
        self.op = registry.get(op_name)
        self.op_name = op_name
        self.__name__ = op_name
        self.__doc__ = (f"{signature(self.op)}\n\n{self.op.doc or ''}\n\nThe symbol form: "
                        "inputs are Symbols; inputs left out become variables.")

    def __call__(self, *args, name=None, attr=None, out=None, **kwargs):
        op = self.op
        names = op.inputs
        star = op.variadic and len(names) <= 1
        if star:
            inputs = list(args)
        else:
            inputs = list(args[:len(names)])
            for i, value in enumerate(args[len(names):]):
                attrs = list(op.attrs)
                if i >= len(attrs):
                    raise TypeError(f"{self.op_name}: takes {len(names)} input(s) "
                                    f"({', '.join(names)}) and {len(attrs)} attribute(s) "
                                    f"by position (got {len(args)})")
                if attrs[i] in kwargs:
                    raise TypeError(f"{self.op_name}: got multiple values for argument "
                                    f"{attrs[i]!r}")
                kwargs[attrs[i]] = value
            inputs += [None] * (len(names) - len(inputs))
            for i, input_name in enumerate(names):
                if input_name in kwargs:
                    if inputs[i] is not None:
                        raise TypeError(f"{self.op_name}: got multiple values for input "
                                        f"{input_name}")
                    inputs[i] = kwargs.pop(input_name)
        if (op.scalar_forms is not None and len(inputs) == 2
                and sum(_is_number(v) for v in inputs) == 1):
            if _is_number(inputs[1]):
                return _call(op.scalar_forms[0], [inputs[0]], {"scalar": inputs[1]},
                             name, attr)
            return _call(op.scalar_forms[1], [inputs[1]], {"scalar": inputs[0]}, name,
                         attr)
        for i, v in enumerate(inputs):
            if v is not None and not isinstance(v, Symbol):
                what = names[i] if not star and i < len(names) else f"#{i}"
                raise TypeError(f"{self.op_name}: input {what} must be a Symbol (got "
                                f"{type(v).__name__})")
        if star and not inputs:
            raise TypeError(f"{self.op_name}: needs at least one input Symbol")
        return _call(self.op_name, inputs, kwargs, name, attr)

    def __repr__(self):
        return f"<sym function {self.op_name}>"


_FUNCTIONS = {}


def _function(name):
    fn = _FUNCTIONS.get(name)
    if fn is None:
        fn = _FUNCTIONS[name] = SymbolFunction(name)
    return fn


def install(namespace):
    """Add a symbol function for every registered operator name (and alias) not already
    in ``namespace`` (``runtime.nd._ops.install``'s counterpart)."""
    for op_name in registry.OPS:
        if op_name not in namespace:
            namespace[op_name] = _function(op_name)


def prefixed(prefix):
    """``f(name)`` -> the symbol function of operator ``prefix + name``."""
    return lambda short: _function(prefix + short)
