"""The graph that autograd recorded behind an array, as a Symbol (MXNet's
``autograd.get_symbol``).

The tape's nodes become symbol nodes of the same operators and attributes.  As in
MXNet's recording, a marked variable (``attach_grad``) becomes a variable ``var<k>`` and an
input that was not on the tape (a constant) a variable ``null<k>``.  A variable's ``k`` is
its tape node's creation number, so that it keeps its name in every graph that reaches it
(MXNet numbers variables once, when they are marked, and code matches graphs' arguments
with variables by these names); the constants are numbered per graph in recording order.
"""

from runtime.symbol import symbol as _symbol


def from_tape(entry):
    """The Symbol of tape entry ``entry`` (an output of a recorded node or a variable)."""
    nodes, stack, seen = [], [entry.node], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(e.node for e in node.inputs if e is not None)
    nodes.sort(key=lambda n: n.seq)
    made, count = {}, 0
    for node in nodes:
        if node.op is None:
            made[id(node)] = _symbol.Variable(f"var{node.seq}")
            continue
        name = getattr(node.op, "name", None)
        if not hasattr(node.op, "parse_attrs"):
            raise NotImplementedError(f"get_symbol: the graph holds a call of "
                                      f"{name or type(node.op).__name__}, which is not a "
                                      "registry operator (an autograd.Function) and has no "
                                      "symbol form")
        inputs = []
        for e in node.inputs:
            if e is None:
                inputs.append(_symbol.Variable(f"null{count}"))
                count += 1
            else:
                out = made[id(e.node)]
                inputs.append(out if e.node.op is None else out[e.index])
        made[id(node)] = _symbol._call(name, inputs, dict(node.attrs))
    out = made[id(entry.node)]
    return out if entry.node.op is None else out[entry.index]
