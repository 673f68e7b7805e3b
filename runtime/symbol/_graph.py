"""The graph behind a symbol: nodes, their order, and shape/type/storage inference.

A node is a variable (``op`` None) or one call of a registry operator with its parsed
attributes; an entry ``(node, index)`` is one output of a node.  Nodes never change once
made, so symbols share them freely and a graph is always acyclic.  Inference walks the
nodes in topological order, forward through each op's ``infer_shape``/``infer_type``/
``infer_storage`` and backward through its ``infer_inputs`` (a FullyConnected's weight
shape from its data), until nothing changes, as nnvm's InferShape pass does.
"""

import ast
import json

import numpy as np

from runtime.errors import MXNetTypeError, MXNetValueError
from runtime.ops.registry import fill_equal_shapes
from runtime.nd._mxnet_format import _DTYPE_CODES, _DTYPES, STYPE_CODES, STYPES

# attribute keys MXNet stores as ``__key__`` (and lists under both names)
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
               "profiler_scope")

DTYPE_CODES = _DTYPE_CODES
DTYPES = _DTYPES


class Node:
    """A variable or an operator call.

    ``op``: the registry Op (None for a variable); ``op_name``: the name it was called by
    (written to JSON: ``Flatten``, ``SliceChannel``); ``inputs``: entries; ``params``: the
    parsed attributes; ``raw``: the attributes as given, as strings (what MXNet writes);
    ``attrs``: the symbol attributes (``__shape__``, ``__lr_mult__``, AttrScope's).
    """

    __slots__ = ("op", "op_name", "name", "inputs", "params", "raw", "attrs")

    def __init__(self, op, op_name, name, inputs=(), params=None, raw=None, attrs=None):
        self.op = op
        self.op_name = op_name
        self.name = name
        self.inputs = tuple(inputs)
        self.params = params or {}
        self.raw = raw or {}
        self.attrs = attrs or {}

    @property
    def is_var(self):
        return self.op is None

    def n_out(self):
        return 1 if self.op is None else self.op.n_out(self.params)

    def output_name(self, i):
        if self.op is None:
            return self.name
        names = getattr(self.op, "output_names", None)     # a custom op's own names
        if names is not None:
            return f"{self.name}_{names[i]}"
        return f"{self.name}_output" if self.n_out() == 1 else f"{self.name}_output{i}"

    def describe(self):
        return f"node {self.name!r} ({self.op_name})" if self.op is not None \
            else f"variable {self.name!r}"

    def __repr__(self):
        return f"<Node {self.name} {self.op_name or 'null'}>"


def topo(heads):
    """Every node reachable from the entries ``heads``, inputs before their users, in
    depth-first post-order with inputs visited in order (nnvm's DFSVisit, which fixes
    the order of list_arguments and of the JSON's nodes)."""
    order, seen = [], set()
    for head, _ in heads:
        if id(head) in seen:
            continue
        stack = [(head, 0)]
        seen.add(id(head))
        while stack:
            node, i = stack.pop()
            if i < len(node.inputs):
                stack.append((node, i + 1))
                child = node.inputs[i][0]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                order.append(node)
    return order


def substitute(heads, mapping):
    """``heads`` with the variables named in ``mapping`` replaced by its entries: the
    nodes above them copied, the others shared."""
    return _rebuilt(heads, {(id(n), 0): mapping[n.name] for n in topo(heads)
                            if n.op is None and n.name in mapping})


def replace_nodes(heads, new):
    """``heads`` with the nodes ``new`` maps (``{id(old node): new node}``, the same
    number of outputs) replaced: the nodes above them copied, the others shared."""
    return _rebuilt(heads, {(key, i): (node, i) for key, node in new.items()
                            for i in range(node.n_out())})


def _rebuilt(heads, memo):
    """``heads`` with the entries ``memo`` maps replaced, the nodes that read a replaced
    entry copied (their copies' entries added to ``memo``)."""
    for node in topo(heads):
        if node.op is None:
            continue
        inputs = [memo.get((id(n), i), (n, i)) for n, i in node.inputs]
        if any(new is not old for new, old in zip(inputs, node.inputs)) and \
                (id(node), 0) not in memo:
            copy = Node(node.op, node.op_name, node.name, inputs, node.params, node.raw,
                        node.attrs)
            for i in range(node.n_out()):
                memo[(id(node), i)] = (copy, i)
    return [memo.get((id(n), i), (n, i)) for n, i in heads]


def aux_nodes(nodes):
    """The variables that some op of ``nodes`` writes (BatchNorm's moving statistics):
    MXNet's auxiliary states."""
    aux = set()
    for node in nodes:
        if node.op is not None:
            for pos in node.op.mutates:
                if pos < len(node.inputs) and node.inputs[pos][0].op is None:
                    aux.add(id(node.inputs[pos][0]))
    return aux


def _fail(node, what, err):
    cls = MXNetTypeError if isinstance(err, TypeError) else MXNetValueError
    raise cls(f"{what}: {node.describe()}: {err}") from err


def _parse_shape(text, partial=False):
    try:
        shape = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if partial:
        return shape or None
    # MXNet 1.x writes 0 for a dimension not known yet (a Gluon parameter's in_units),
    # -1 under NumPy shape semantics
    return None if 0 in shape or -1 in shape or not shape else shape


def var_shape(node, partial=False):
    """A variable's ``__shape__``: None when it has none or (unless ``partial``, which
    keeps them for the caller to read) it holds unknown dimensions."""
    text = node.attrs.get("__shape__")
    return None if text is None else _parse_shape(text, partial)


def var_dtype(node):
    text = node.attrs.get("__dtype__")
    if text is None:
        return None
    if text.lstrip("-").isdigit():      # MXNet's type flag; -1: unknown
        name = DTYPES.get(int(text))
        return None if name is None else np.dtype(name)
    return np.dtype(text)


def var_stype(node):
    text = node.attrs.get("__storage_type__")
    if text is None:
        return "default"
    return STYPES.get(int(text), "default") if text.lstrip("-").isdigit() else text


def _merge_partial(old, new):
    """The more known of two shapes that agree where both are known (None dims are
    unknown), or None when they disagree."""
    if len(old) != len(new) or any(a is not None and b is not None and a != b
                                   for a, b in zip(old, new)):
        return None
    return tuple(a if a is not None else b for a, b in zip(old, new))


def _set(table, entry, value, node, what):
    old = table.get(entry)
    if old is None:
        table[entry] = value
        return True
    if old != value and isinstance(old, tuple) and isinstance(value, tuple) and \
            (None in old or None in value):
        merged = _merge_partial(old, value)
        if merged is not None:
            table[entry] = merged
            return merged != old
    if old != value:
        a, b = (_shown(v) if isinstance(v, tuple) else repr(v) for v in (old, value))
        raise MXNetValueError(f"{what}: {node.describe()}: inconsistent {what[6:]} for input "
                              f"{entry[0].name!r}: {a} and {b}")
    return False


def _incomplete(value):
    """Whether an entry's value is unknown or a shape with unknown (None) dimensions."""
    return value is None or (isinstance(value, tuple) and None in value)


def _infer(nodes, known, what, forward, backward=None, fill=None):
    """The shared fixed-point walk: ``table`` maps each entry to its value (None while
    unknown).  ``forward(node, ins) -> outs`` when every input is known; ``backward(node,
    ins, outs) -> ins`` fills unknown inputs from the known inputs and outputs;
    ``fill(node, ins, outs)`` the same for the types' default rule."""
    table = {}
    for node in nodes:
        if node.op is None:
            value = known.get(node)
            if value is not None:
                table[(node, 0)] = value
    done = set()        # nodes whose forward rule has run (once each)
    # Partly known inputs (shapes with unknown dimensions) wait until nothing else can
    # be learned, so that the rules fill what they can before a forward runs on them.
    partial_ok = False
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if node.op is None or id(node) in done:
                continue
            ins = [table.get((n, i)) for n, i in node.inputs]
            if any(_incomplete(v) for v in ins):
                for rule in (backward, fill):
                    if rule is None:
                        continue
                    outs = [table.get((node, i)) for i in range(node.n_out())]
                    try:
                        new = rule(node, list(ins), outs)
                    except (TypeError, ValueError) as e:
                        _fail(node, what, e)
                    if new is None:
                        continue
                    for entry, old, value in zip(node.inputs, ins, new):
                        if _incomplete(old) and value is not None:
                            changed |= _set(table, entry, value, node, what)
                    ins = [table.get((n, i)) for n, i in node.inputs]
                if any(v is None for v in ins) or \
                        (not partial_ok and any(_incomplete(v) for v in ins)):
                    continue
            done.add(id(node))
            try:
                outs = forward(node, ins)
            except (TypeError, ValueError) as e:
                _fail(node, what, e)
            # an output a consumer's rule filled in must agree (_set raises otherwise)
            for i, value in enumerate(outs[:node.n_out()]):
                if value is not None:
                    changed |= _set(table, (node, i), value, node, what)
        if not changed and not partial_ok:
            partial_ok = changed = True
    return table


# The sizes that stand in for unknown dimensions when an operator's shape rule runs on
# partly known shapes (see infer_shapes): two runs, each with one size for every
# unknown dimension.
_PROBES = (7919, 7927)


def _is_partial(shape):
    return shape is not None and None in shape


def _probe_forward(node, ins):
    """An operator's output shapes from inputs with unknown (None) dimensions: its rule
    runs twice with every unknown dimension set to one probe size, then another; an
    output dimension that is the same both times is known, one that follows the probe
    is not, and a rule that refuses either run leaves every output unknown (None)."""
    runs = []
    for probe in _PROBES:
        filled = [tuple(probe if d is None else d for d in s) for s in ins]
        try:
            runs.append([tuple(s) for s in node.op.infer_shape(node.params, filled)])
        except (TypeError, ValueError):
            return [None] * node.n_out()
    return [tuple(a if a == b else None for a, b in zip(x, y)) if len(x) == len(y) else None
            for x, y in zip(*runs)]


def infer_shapes(nodes, known, unknown_dim=None):
    """{entry: shape} for every entry whose shape follows from ``known`` ({variable node:
    shape}, the variables' ``__shape__`` attributes filling the rest).

    With ``unknown_dim`` (0 for MXNet's legacy shapes, -1 under NumPy shape semantics), a
    dimension of that size in a given shape is unknown: such partly known shapes flow
    through each operator by running its shape rule with probe sizes
    (:func:`_probe_forward`), and come back as tuples holding None for the dimensions
    still unknown.  An operator whose rule needs a dimension it cannot see (batch_dot's
    inner size, say) leaves its outputs unknown rather than failing.  Only elementwise
    operators (whose inputs share one shape) unify their inputs, as MXNet's do: a
    dimension one input knows fills it in the others and the output.  After the walk,
    an input dimension still unknown that an operator passes through to an output of
    known size there takes that size (:func:`_passed_through`; MXNet's FullyConnected,
    Concat ... fill their inputs' batch dimension from the output in the same way).  A
    creation node's (``sym.zeros``) unknown dimensions are unknown as a given shape's
    are."""
    known = dict(known)
    for node in nodes:
        if node.op is None and known.get(node) is None:
            known[node] = var_shape(node, partial=unknown_dim is not None)
    if unknown_dim is not None:
        known = {n: None if s is None else
                 tuple(None if d == unknown_dim else d for d in s)
                 for n, s in known.items()}

    def forward(node, ins):
        if any(_is_partial(s) for s in ins):
            if node.op.infer_inputs is fill_equal_shapes:
                return [_unified(node, ins)]
            return _probe_forward(node, ins)
        outs = [tuple(s) for s in node.op.infer_shape(node.params, [tuple(s) for s in ins])]
        if not node.inputs and unknown_dim is not None:
            # a creation node's shape attribute marks unknown dimensions as a given shape
            # does (an RNN cell's begin state: sym.zeros(shape=(0, num_hidden)))
            outs = [tuple(None if d == unknown_dim else d for d in s) for s in outs]
        return outs

    def backward(node, ins, outs):
        if node.op.infer_inputs is None:
            return None
        if node.op.infer_inputs is fill_equal_shapes:
            ins = [None if _is_partial(s) else s for s in ins]
            if outs[0] is not None and not _is_partial(outs[0]):
                # an elementwise op's inputs have the shape of its output
                ins = [outs[0] if s is None else s for s in ins]
            return [None if s is None else tuple(s)
                    for s in node.op.infer_inputs(node.params, ins)]
        # a partly known input is filled like an unknown one; then the rule sees it
        # with probe sizes in its unknown dimensions, and what it fills for the unknown
        # inputs the same way under both probes does not depend on them (a
        # FullyConnected's weight from a data shape of unknown batch size)
        result = [None if v is None else tuple(v) for v in node.op.infer_inputs(
            node.params, [None if _is_partial(v) else v for v in ins])]
        if not any(_is_partial(v) for v in ins):
            return result
        runs = []
        for probe in _PROBES:
            filled = [None if v is None else tuple(probe if d is None else d for d in v)
                      for v in ins]
            try:
                runs.append(node.op.infer_inputs(node.params, filled))
            except (TypeError, ValueError):
                return result   # the rule needs the unknown sizes
        return [r if r is not None or v is not None or a is None or b is None
                or tuple(a) != tuple(b) else tuple(a)
                for v, r, a, b in zip(ins, result, *runs)]

    table = _infer(nodes, known, "infer_shape", forward, backward)
    if unknown_dim is not None:
        # fill the inputs' unknown dimensions from the outputs, consumers before
        # producers: an elementwise op's inputs have its output's shape; another op's
        # input dimension that its output passes through unchanged (FullyConnected's
        # batch) takes the output's size there
        for node in reversed(nodes):
            if node.op is None:
                continue
            ins = [table.get(entry) for entry in node.inputs]
            if not any(_is_partial(s) for s in ins):
                continue
            if node.op.infer_inputs is fill_equal_shapes:
                out = table.get((node, 0))
                filled = [out if out is not None and _is_partial(s) else None for s in ins]
            else:
                filled = _passed_through(node, ins,
                                         [table.get((node, i)) for i in range(node.n_out())])
            for entry, shape, new in zip(node.inputs, ins, filled):
                if new is not None and _is_partial(shape):
                    table[entry] = _merge_partial(shape, new) or shape
    return table


def _passed_through(node, ins, outs):
    """Per input, its partly known shape with the unknown dimensions that reach an
    output unchanged set to that output's known size (None where nothing is learned).

    Each unknown dimension is probed alone: the rule runs with it set to one size and
    then another, every other unknown dimension at a third; an output dimension that
    follows it both times is that dimension passed through."""
    base, first, second = _PROBES[0], _PROBES[1], 7933

    def run(j, k, size):
        filled = [tuple((size if (a, b) == (j, k) else base) if d is None else d
                        for b, d in enumerate(s)) for a, s in enumerate(ins)]
        try:
            return [tuple(s) for s in node.op.infer_shape(node.params, filled)]
        except (TypeError, ValueError):
            return None

    result = [None] * len(ins)
    if any(s is None for s in ins):
        return result                   # the rule needs every input's rank
    for j, shape in enumerate(ins):
        if not _is_partial(shape):
            continue
        learned = list(shape)
        for k, d in enumerate(shape):
            if d is not None:
                continue
            a, b = run(j, k, first), run(j, k, second)
            if a is None or b is None:
                continue
            for out, sa, sb in zip(outs, a, b):
                if out is None or len(out) != len(sa) or len(sa) != len(sb):
                    continue
                for o, da, db in zip(out, sa, sb):
                    if o is not None and da == first and db == second:
                        learned[k] = o
        if learned != list(shape):
            result[j] = tuple(learned)
    return result


def _unified(node, shapes):
    """The one shape of an elementwise op's partly known inputs, each dimension taken
    from whichever input knows it (MXNet's ElemwiseShape); ValueError when two known
    dimensions differ."""
    merged = shapes[0]
    for s in shapes[1:]:
        merged = _merge_partial(merged, s) if merged is not None else None
    if merged is None:
        raise ValueError(f"{node.op.name}: inputs must have one shape (got "
                         f"{', '.join(_shown(s) for s in shapes)})")
    return merged


def _shown(shape):
    """A partly known shape as text, ``?`` for an unknown dimension: ``(?, 10)``."""
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + \
        ("," if len(shape) == 1 else "") + ")"


def infer_types(nodes, known):
    """{entry: numpy dtype}: ``known`` ({variable node: dtype}) and the variables'
    ``__dtype__`` attributes, an op's unknown inputs taking its first known floating
    input's dtype (MXNet's default rule for weights and biases)."""
    known = dict(known)
    for node in nodes:
        if node.op is None and known.get(node) is None:
            known[node] = var_dtype(node)

    def forward(node, ins):
        return [np.dtype(d) for d in node.op.infer_type(node.params, ins)]

    def fill(node, ins, outs):
        # from a floating input only: an integer one is an index (Embedding's data,
        # take's indices), which says nothing of the weights' dtype
        first = next((d for d in ins if d is not None and d.kind == "f"), None)
        return None if first is None else [first if d is None else d for d in ins]

    return _infer(nodes, known, "infer_type", forward, fill=fill)


def infer_stypes(nodes, known):
    """{entry: storage type}: ``known`` and the variables' ``__storage_type__`` (default
    storage where none is given)."""
    known = dict(known)
    for node in nodes:
        if node.op is None and known.get(node) is None:
            known[node] = var_stype(node)

    def forward(node, ins):
        return list(node.op.infer_storage(node.params, list(ins))[0])

    return _infer(nodes, known, "infer_storage_type", forward)


# -- attributes as strings (MXNet's JSON and attr()) -----------------------------------

def attr_to_string(attr, value):
    """An attribute value as MXNet's Python writes it (``str(value)``; dtypes by name)."""
    if attr is not None and attr.kind in ("dtype", "dtype_or_none") and value is not None:
        return np.dtype(value).name
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    return str(value)


_TRUE = ("true", "1")
_FALSE = ("false", "0")


def attr_from_string(op_name, key, attr, text):
    """The value of attribute ``key`` written as ``text`` in a JSON file, for
    ``attr.parse``; raises ValueError naming the attribute and the text."""
    kind = attr.kind
    if text == "None" and kind not in ("str", "dtype"):
        return None
    if kind in ("str", "dtype", "dtype_or_none"):
        return None if text == "None" else text
    if kind == "bool":
        low = text.strip().lower()
        if low in _TRUE or low in _FALSE:
            return low in _TRUE
    elif kind == "float":
        try:
            return float(text)          # also "inf", "nan", "1e-05"
        except ValueError:
            pass                        # not a number: the error below names it
    else:
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            value = text if kind == "any" else None
        if value is not None or kind == "any":
            return tuple(value) if isinstance(value, list) else value
    raise ValueError(f"{op_name}: attribute {key} must be a {kind} (got {text!r})")


def wanted_input(op, params, name):
    """Whether the optional input ``name`` of a variadic op is present with ``params``
    (MXNet's FListInputNames): no bias with ``no_bias``; ``length`` with ``use_length``
    and the like; PReLU's ``gamma``; a resize's ``like`` in mode 'like'; RNN's
    ``state_cell`` in mode 'lstm'."""
    if name == "bias" and params.get("no_bias"):
        return False
    flag = params.get(f"use_{name}")
    if flag is not None:
        return bool(flag)
    if name == "gamma" and "act_type" in params:
        return params["act_type"] == "prelu"
    if name == "like" and "mode" in params:
        return params["mode"] == "like"
    if name == "state_cell" and "mode" in params:
        return params["mode"] == "lstm"
    return True


def aux_state_init(input_name):
    """MXNet's ``__init__`` of an auxiliary state variable made for an operator: ones
    for a variance (``moving_var``), zeros otherwise."""
    return json.dumps(["one" if input_name.endswith("var") else "zero", {}])
