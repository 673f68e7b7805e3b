"""MXNet's (nnvm's) graph JSON, read and written.

The layout, as MXNet 1.x's ``Symbol.tojson()`` writes it::

    {"nodes": [{"op": "null" | <op name>, "name": ..., "attrs": {str: str}, "inputs":
                [[node id, output index, version], ...]}, ...],   # inputs before users
     "arg_nodes": [ids of the variable nodes],
     "node_row_ptr": [0, n_out(0), n_out(0) + n_out(1), ...],
     "heads": [[node id, output index, version], ...],
     "attrs": {"mxnet_version": ["int", 10901]}}

Files of MXNet before 1.0 keep a node's operator attributes under ``param`` and its
symbol attributes under ``attr``; both are read.  Loading checks everything before it
builds anything: a malformed file, an input referring to a node that is not before it
(a cycle or a dangling reference), an unknown operator or attribute, or an attribute
value its operator refuses raises ValueError naming the node and the file.
"""

import json
import os
import re
import tempfile

from runtime import operator
from runtime.ops import registry
from runtime.symbol import _graph
from runtime.symbol._source import SOURCES
from runtime.symbol._graph import Node

MXNET_VERSION = 10901
_INT_LIST = re.compile(r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]")


def dumps(nodes, heads):
    """The JSON text of the graph ``nodes`` (topological order) with outputs ``heads``."""
    index = {id(n): i for i, n in enumerate(nodes)}
    out_nodes, row_ptr = [], [0]
    for node in nodes:
        entry = {"op": node.op_name if node.op is not None else "null", "name": node.name}
        attrs = {**node.raw, **node.attrs}
        if attrs:
            entry["attrs"] = dict(sorted(attrs.items()))
        # nnvm's version field: 1 for the inputs an op writes (the aux states)
        mutates = node.op.mutates if node.op is not None else ()
        entry["inputs"] = [[index[id(n)], i, int(pos in mutates)]
                           for pos, (n, i) in enumerate(node.inputs)]
        out_nodes.append(entry)
        row_ptr.append(row_ptr[-1] + node.n_out())
    graph = {"nodes": out_nodes,
             "arg_nodes": [i for i, n in enumerate(nodes) if n.op is None],
             "node_row_ptr": row_ptr,
             "heads": [[index[id(n)], i, 0] for n, i in heads],
             "attrs": {"mxnet_version": ["int", MXNET_VERSION]}}
    # one line per list of integers (an input entry, the row pointers), as MXNet writes
    return _INT_LIST.sub(lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(","))
                         + "]", json.dumps(graph, indent=2))


def write_file(fname, text):
    """Write ``text`` to ``fname`` through a temporary file in the same folder."""
    folder = os.path.dirname(os.path.abspath(fname))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, fname)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_file(fname):
    """The head entries of the graph in JSON file ``fname``."""
    try:
        with open(fname) as f:
            text = f.read()
    except UnicodeDecodeError:
        raise ValueError(f"load: {fname!r} is not a JSON text file") from None
    return load(text, repr(str(fname)))


def _bad(source, where, rule):
    raise ValueError(f"load: {source}: {where}: {rule}")


def _entry(source, where, value, n_nodes, counts):
    if (not isinstance(value, list) or len(value) not in (2, 3)
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        _bad(source, where, f"an entry must be [node id, output index(, version)] (got "
                            f"{value!r})")
    nid, idx = value[0], value[1]
    if not 0 <= nid < n_nodes:
        _bad(source, where, f"refers to node {nid}, which is not before it (a cycle or a "
                            f"dangling reference)")
    if not 0 <= idx < counts[nid]:
        _bad(source, where, f"refers to output {idx} of node {nid}, which has "
                            f"{counts[nid]} output(s)")
    return nid, idx


# the symbol attributes MXNet's upgrade of files before 1.0 recognises by name
_HIDDEN = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
           "profiler_scope")


def _legacy_input_attr(key):
    """(argument, hidden key) for a legacy ``<argument>_<hidden key>`` (weight_lr_mult),
    else None."""
    for hidden in _HIDDEN:
        if key.endswith("_" + hidden) and len(key) > len(hidden) + 1:
            return key[:-len(hidden) - 1], hidden
    return None


def _node_attrs(source, where, node):
    """The node's attributes, and the legacy ``<argument>_<hidden key>`` attributes of an
    operator node, which belong to the variable feeding that argument."""
    attrs, for_inputs = {}, []
    for key in ("param", "attr", "attrs"):     # legacy keys first, "attrs" wins
        value = node.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            _bad(source, where, f"{key!r} must map strings to strings (got {value!r})")
        if key == "attr":
            # files before 1.0 keep the symbol attributes without underscores
            # (ctx_group, lr_mult); MXNet's upgrade stores them as __ctx_group__, and
            # moves an operator's weight_lr_mult to its weight variable as __lr_mult__
            upgraded = {}
            for k, v in value.items():
                legacy = None if k.startswith("__") else _legacy_input_attr(k)
                if legacy is None:
                    upgraded[k if k.startswith("__") else f"__{k}__"] = v
                elif node.get("op") == "null":
                    upgraded[k] = v
                else:
                    for_inputs.append((k, legacy, v))
            value = upgraded
        attrs.update(value)
    return attrs, for_inputs


def _move_to_inputs(op, entries, specs, for_inputs, sym_attrs):
    """MXNet's upgrade of a legacy ``<argument>_<hidden key>`` operator attribute: it
    becomes ``__<hidden key>__`` of the variable feeding that argument.  When no variable
    does, it stays on the operator as a symbol attribute ``__<key>__`` (MXNet keeps the
    bare key, which an operator node here cannot hold: its other keys are parameters)."""
    for key, (arg, hidden), value in for_inputs:
        pos = op.inputs.index(arg) if arg in op.inputs else None
        src = entries[pos][0] if pos is not None and pos < len(entries) else None
        if src is not None and specs[src][0] is None:
            specs[src][6][f"__{hidden}__"] = value
        else:
            sym_attrs[f"__{key}__"] = value


def _custom(source, where, name, entries, attrs):
    """The spec of a Custom node: its op_type and keyword arguments are its non-symbol
    attributes."""
    sym_attrs = {k: v for k, v in attrs.items() if k.startswith("__") and k.endswith("__")}
    kwargs = {k: v for k, v in attrs.items() if k not in sym_attrs}
    if "op_type" not in kwargs:
        _bad(source, where, "a Custom node needs the attribute 'op_type'")
    op_type = kwargs.pop("op_type")
    try:
        cdef = operator.CustomDef(op_type, kwargs)
    except (TypeError, ValueError) as e:
        _bad(source, where, str(e))
    if len(entries) != len(cdef.inputs):
        _bad(source, where, f"Custom ({op_type}) takes {len(cdef.inputs)} input(s) "
                            f"({', '.join(cdef.inputs)}) (got {len(entries)})")
    return cdef, "Custom", name, entries, cdef.params, dict(cdef.params), sym_attrs


def load(text, source):
    """The head entries of the graph in JSON ``text`` (``source`` names it in errors)."""
    try:
        graph = json.loads(text)
    except (TypeError, ValueError) as e:
        raise ValueError(f"load: {source} is not valid JSON ({e})") from None
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list) \
            or not isinstance(graph.get("heads"), list):
        raise ValueError(f"load: {source} is not an MXNet symbol file: it needs a 'nodes' "
                         f"list and a 'heads' list")
    specs, counts = [], []
    for i, node in enumerate(graph["nodes"]):
        where = f"node {i}"
        if not isinstance(node, dict) or not isinstance(node.get("op"), str) \
                or not isinstance(node.get("name"), str):
            _bad(source, where, f"a node must be an object with string 'op' and 'name' "
                                f"(got {node!r})")
        where = f"node {i} {node['name']!r}"
        inputs = node.get("inputs", [])
        if not isinstance(inputs, list):
            _bad(source, where, f"'inputs' must be a list (got {inputs!r})")
        entries = [_entry(source, f"{where} input {j}", e, i, counts)
                   for j, e in enumerate(inputs)]
        attrs, for_inputs = _node_attrs(source, where, node)
        if node["op"] == "null":
            if entries:
                _bad(source, where, "a variable ('null') has no inputs")
            specs.append((None, "null", node["name"], entries, {}, {}, attrs))
            counts.append(1)
            continue
        op_name = node["op"]
        if op_name == "Custom":
            specs.append(_custom(source, where, node["name"], entries, attrs))
            counts.append(specs[-1][0].n_out(None))
            continue
        op = registry.OPS.get(op_name) or SOURCES.get(op_name)
        if op is None:
            _bad(source, where, f"unknown operator {op_name!r}")
        raw, sym_attrs, values = {}, {}, {}
        for key, text_value in attrs.items():
            if key in op.attrs:
                raw[key] = text_value
                try:
                    values[key] = _graph.attr_from_string(op_name, key, op.attrs[key],
                                                          text_value)
                except ValueError as e:
                    _bad(source, where, str(e))
            elif key.startswith("__") and key.endswith("__"):
                sym_attrs[key] = text_value
            else:
                _bad(source, where, f"unknown attribute {key!r} of operator {op_name!r} "
                                    f"(it takes {', '.join(op.attrs) or 'none'})")
        try:
            params = op.parse_attrs(values)
        except (TypeError, ValueError) as e:
            _bad(source, where, str(e))
        n_in = len(op.inputs)
        if not op.variadic and len(entries) < n_in and all(
                p in op.mutates for p in range(len(entries), n_in)):
            # files before 1.0 leave out the auxiliary states (BatchNorm's moving
            # statistics): made here as MXNet's upgrade makes them, with the operator's
            # attributes and their __init__
            entries += [(None, (f"{node['name']}_{op.inputs[p]}",
                                {**raw, **sym_attrs,
                                 "__init__": _graph.aux_state_init(op.inputs[p])}))
                        for p in range(len(entries), n_in)]
        if (not op.variadic and len(entries) != n_in) or (
                op.variadic and n_in > 1 and not 1 <= len(entries) <= n_in):
            _bad(source, where, f"{op_name} takes {n_in} input(s) ({', '.join(op.inputs)})"
                                f" (got {len(entries)})")
        _move_to_inputs(op, entries, specs, for_inputs, sym_attrs)
        specs.append((op, op_name, node["name"], entries, params, raw, sym_attrs))
        counts.append(op.n_out(params))
    heads = [_entry(source, f"head {j}", e, len(specs), counts)
             for j, e in enumerate(graph["heads"])]
    if not heads:
        raise ValueError(f"load: {source}: 'heads' is empty (a symbol has an output)")
    made = []
    for op, op_name, name, entries, params, raw, attrs in specs:
        made.append(Node(op, None if op is None else op_name, name,
                         [(made[n], i) if n is not None else
                          (Node(None, None, i[0], attrs=i[1]), 0)
                          for n, i in entries], params, raw, attrs))
    return [(made[n], i) for n, i in heads]
