"""MXNet 1.x's ``mx.visualization`` (also ``mx.viz``): ``print_summary``, a table of a
symbol's layers in MXNet's layout.

The table has a row per operator and per graph input (a variable that is some
operator's first input), each with the layer's output shape without the batch axis,
its parameter count and the layers feeding it.  Parameters are counted exactly from the
inferred argument shapes: every variable input after an operator's first, except
auxiliary states (BatchNorm's moving statistics) and labels.  Without ``shape`` the
shapes come from partial inference, so only what the attributes fix is counted (a
``FullyConnected``'s bias, not its weight), as MXNet's table does.  ``plot_network``
(graphviz) is not provided.
"""

import json
import math

from runtime.ops import registry
from runtime.symbol import Symbol

__all__ = ["print_summary"]


def print_summary(symbol, shape=None, line_length=120, positions=(.44, .64, .74, 1.)):
    """Print a table of ``symbol``'s layers: name (op type), output shape, parameter
    count, previous layers; then the total.

    Parameters
    ----------
    symbol : Symbol
    shape : dict of str to tuple, optional
        The input shapes (``{'data': (batch, 3, 32, 32)}``); without it, shapes the
        attributes do not fix stay blank.
    line_length : int, optional
        The width of the table.
    positions : sequence of float or int, optional
        Where each of the four columns ends: fractions of ``line_length`` when the last
        is at most 1, else character positions.
    """
    if not isinstance(symbol, Symbol):
        raise TypeError(f"print_summary: symbol must be a Symbol (got "
                        f"{type(symbol).__name__})")
    if len(positions) != 4:
        raise ValueError(f"print_summary: positions must give the end of each of the 4 "
                         f"columns (got {len(positions)} values)")
    internals = symbol.get_internals()
    if shape is not None:
        arg_shapes, out_shapes, _ = internals.infer_shape(**shape)
        if out_shapes is None:
            raise ValueError(f"print_summary: the shapes {shape!r} do not determine every "
                             "layer's shape; give every input's shape")
    else:
        arg_shapes, out_shapes, _ = internals.infer_shape_partial()
    outputs = dict(zip(internals.list_outputs(), out_shapes))
    args = dict(zip(internals.list_arguments(), arg_shapes))
    aux = set(symbol.list_auxiliary_states())
    nodes = json.loads(symbol.tojson())["nodes"]
    inputs = {nodes[n["inputs"][0][0]]["name"] for n in nodes
              if n["op"] != "null" and n["inputs"] and nodes[n["inputs"][0][0]]["op"] == "null"}
    ends = ([int(line_length * p) for p in positions] if positions[-1] <= 1
            else [int(p) for p in positions])

    def row(fields):
        line = ""
        for field, end in zip(fields, ends):
            line = (line + str(field))[:end]
            line += " " * (end - len(line))
        print(line)

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    rows = [n for n in nodes if n["op"] != "null" or n["name"] in inputs]
    total = 0
    for k, node in enumerate(rows):
        name, op = node["name"], node["op"]
        if op == "null":
            out, params, previous = args.get(name, ()), 0, []
        else:
            out = outputs.get(f"{name}_output", outputs.get(f"{name}_output0", ()))
            params, previous = _params(node, nodes, args, aux, inputs)
        total += params
        row([f"{name}({op})", "x".join(str(d) for d in tuple(out)[1:]), params,
             previous[0] if previous else ""])
        for other in previous[1:]:
            row(["", "", "", other])
        print(("=" if k == len(rows) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)


def _params(node, nodes, args, aux, inputs):
    """(parameter count, names of the layers feeding ``node``) of an operator node."""
    names = registry.get(node["op"]).inputs
    count, previous = 0, []
    for pos, (src, _, _) in enumerate(node["inputs"]):
        source = nodes[src]
        if source["op"] != "null" or source["name"] in inputs:
            previous.append(source["name"])
            continue
        role = names[pos] if pos < len(names) else None
        if pos == 0 or source["name"] in aux or role == "label":
            continue
        dims = tuple(args.get(source["name"], ()))
        if dims and all(dims):
            count += math.prod(dims)
    return count, previous
