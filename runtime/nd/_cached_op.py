"""``CachedOp`` (MXNet's ``mx.nd.CachedOp``): a symbol's graph called on NDArrays as one
operator, and :func:`run_graph`, the forward walk it shares with ``runtime.executor``.

The walk calls each node's registry operator through the invoker in topological order
and lets each intermediate result go after its last consumer.  Called while
``autograd.record()`` is on, a CachedOp puts ONE node on the caller's tape (through
``runtime._tape.record_call``, as ``autograd.Function`` does); to differentiate it, the
call records its own graph's forward on a tape of its own, whose variables are aliases
of the inputs, and the node's gradient is ``autograd.grad`` over that inner recording.
So backward through a CachedOp runs the backward executor on the cached graph, but the
forward is still op by op (not a static plan), and ``static_alloc``/``static_shape``
keep nothing beyond what the memory pool caches (see docs/graph.md).
"""

from runtime import autograd
from runtime import _tape
from runtime._imperative import invoke_parsed, is_recording
from runtime._ndarray import NDArray, zeros


def consumers(nodes, heads):
    """{(id(node), output index): number of readers} of a graph; a head counts as one."""
    uses = {}
    for node in nodes:
        for n, i in node.inputs:
            uses[(id(n), i)] = uses.get((id(n), i), 0) + 1
    for n, i in heads:
        uses[(id(n), i)] = uses.get((id(n), i), 0) + 1
    return uses


def run_graph(nodes, heads, inputs, uses):
    """The arrays of the entries ``heads`` with the variables' arrays ``inputs`` ({id of
    variable node: NDArray}); ``uses``: :func:`consumers` of the graph."""
    values = {}
    left = dict(uses)
    for node in nodes:
        if node.op is None:
            values[(id(node), 0)] = inputs[id(node)]
            continue
        ins = []
        for n, i in node.inputs:
            key = (id(n), i)
            ins.append(values[key])
            left[key] -= 1
            if left[key] == 0:
                del values[key]
        res = invoke_parsed(node.op, ins, node.params, None, None)
        if isinstance(res, NDArray):
            res = (res,)
        for i, r in enumerate(res):
            if left.get((id(node), i)):
                values[(id(node), i)] = r
    return [values[(id(n), i)] for n, i in heads]


class _CachedCall:
    """The tape's record of one recorded CachedOp call (the op-like object
    ``_tape.record_call`` takes): its gradient is the cached graph's backward."""

    __slots__ = ("name", "heads", "variables")
    differentiable = True
    grad_reads = None

    def __init__(self, name, heads, variables):
        self.name = name
        self.heads = heads
        self.variables = variables

    def release(self):
        self.heads = self.variables = None

    def gradient(self, attrs, ins, outs, ograds):
        if is_recording():
            raise NotImplementedError(f"{self.name}: gradients of gradients through a "
                                      "hybridized block or CachedOp are not supported; "
                                      "call it without hybridize()")
        return autograd.grad(self.heads, self.variables, list(ograds), retain_graph=True,
                             train_mode=autograd.is_training())


class CachedOp:
    """A symbol's graph as one callable operator (MXNet's ``nd.CachedOp(sym, flags)``).

    ``op(*arrays)`` takes one NDArray per ``sym.list_inputs()`` entry (arguments and
    auxiliary states, in graph order) and returns the output (a list when the symbol has
    several).  ``flags`` (``static_alloc``, ``static_shape`` ...) are accepted as MXNet's
    and change nothing here (see the module docstring).
    """

    def __init__(self, sym, flags=()):
        self._sym = sym
        self.flags = dict(flags)
        self._nodes = sym._nodes()
        self._vars = [n for n in self._nodes if n.op is None]
        self._heads = sym._outputs
        self._uses = consumers(self._nodes, self._heads)
        written = set()
        for node in self._nodes:
            if node.op is not None:
                written.update(id(node.inputs[p][0]) for p in node.op.mutates
                               if p < len(node.inputs))
        self._written = written
        self._name = f"CachedOp({sym.name or 'group'})"

    def __call__(self, *args, out=None, default_ctx=None):
        if len(args) != len(self._vars):
            raise ValueError(f"{self._name}: takes {len(self._vars)} input(s) "
                             f"({', '.join(n.name for n in self._vars)}) (got {len(args)})")
        for n, a in zip(self._vars, args):
            if not isinstance(a, NDArray):
                raise TypeError(f"{self._name}: input {n.name!r} must be an NDArray (got "
                                f"{type(a).__name__})")
        on_tape = is_recording() and any(
            a._entry is not None and id(n) not in self._written
            for n, a in zip(self._vars, args))
        outs = self._recorded(args) if on_tape else run_graph(
            self._nodes, self._heads, {id(n): a for n, a in zip(self._vars, args)},
            self._uses)
        if out is not None:
            targets = [out] if isinstance(out, NDArray) else list(out)
            for t, o in zip(targets, outs):
                t[:] = o
            outs = targets
        return outs[0] if len(outs) == 1 else outs

    def _recorded(self, args):
        inputs, outer, inner = {}, [], []
        for n, a in zip(self._vars, args):
            if a._entry is None or id(n) in self._written:
                inputs[id(n)] = a
                continue
            alias = a.detach()
            # the gradient buffer is never written: autograd.grad returns new arrays
            autograd.mark_variables([alias], [zeros(a.shape, ctx=a.ctx, dtype=a.dtype)])
            inputs[id(n)] = alias
            outer.append(a)
            inner.append(alias)
        with autograd.record(train_mode=autograd.is_training()):
            heads = run_graph(self._nodes, self._heads, inputs, self._uses)
        outs = [h.detach() for h in heads]
        _tape.record_call(_CachedCall(self._name, heads, inner), {}, None, outer, outs)
        return outs

    def __repr__(self):
        return f"<{self._name} inputs={[n.name for n in self._vars]}>"


__all__ = ["CachedOp", "run_graph", "consumers"]
