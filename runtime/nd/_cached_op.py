"""``CachedOp`` (MXNet's ``mx.nd.CachedOp``): a symbol's graph called on NDArrays as one
operator, and :class:`Program`, the compiled forward walk it shares with
``runtime.executor``.

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
from runtime.nd._ops import make_function


class Program:
    """A graph compiled for repeated forward runs.

    The steps are generated as the source of one Python function (as ``torch.fx`` does),
    one line per op node in topological order, each intermediate a local variable
    deleted after its last reader: ``v3 = f3(v0)``, ``v5 = invoke(f5, [v3, v1], p5, None,
    None)``, ``del v3``.  A node called without attributes runs through its ``nd``
    function (the invoker's direct road for elementwise ops); the others through
    ``invoke_parsed`` with the attributes parsed once.  ``source`` keeps the text."""

    def __init__(self, nodes, heads):
        names = {}
        for node in nodes:
            for i in range(node.n_out()):
                names[(id(node), i)] = f"v{len(names)}"
        self.variables = [n for n in nodes if n.op is None]
        head_names = [names[(id(n), i)] for n, i in heads]
        op_nodes = [n for n in nodes if n.op is not None]
        last = {}
        for k, node in enumerate(op_nodes):
            for n, i in node.inputs:
                last[names[(id(n), i)]] = k
        scope = {"invoke": invoke_parsed}
        lines = [f"def run({', '.join(names[(id(n), 0)] for n in self.variables)}):"]
        for k, node in enumerate(op_nodes):
            args = [names[(id(n), i)] for n, i in node.inputs]
            outs = [names[(id(node), i)] for i in range(node.n_out())]
            make = getattr(node.op, "function", None)   # a custom or source operator
            if make is not None:
                scope[f"f{k}"] = make(node.params)
                call = f"f{k}({', '.join(args)})"
            elif node.raw:
                scope[f"f{k}"], scope[f"p{k}"] = node.op, node.params
                call = f"invoke(f{k}, [{', '.join(args)}], p{k}, None, None)"
            else:
                scope[f"f{k}"] = make_function(node.op)
                call = f"f{k}({', '.join(args)})"
            lines.append(f"    {outs[0]} = {call}" if len(outs) == 1
                         else f"    {', '.join(outs)}, = {call}")
            dead = sorted({a for a in args if last[a] == k and a not in head_names})
            if dead:
                lines.append(f"    del {', '.join(dead)}")
        lines.append(f"    return [{', '.join(head_names)}]")
        self.source = "\n".join(lines) + "\n"
        exec(compile(self.source, "<graph program>", "exec"), scope)
        self._run = scope["run"]

    def run(self, arrays):
        """The head arrays for the variables' ``arrays`` (in ``variables`` order)."""
        return self._run(*arrays)


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
        nodes = sym._nodes()
        self._program = Program(nodes, sym._outputs)
        self._vars = self._program.variables
        written = set()
        for node in nodes:
            if node.op is not None:
                written.update(id(node.inputs[p][0]) for p in node.op.mutates
                               if p < len(node.inputs))
        # per input: recorded (an alias is a variable of the inner recording) unless
        # an op writes it (an aux state); the aliases' gradient buffers, never written
        # (autograd.grad returns new arrays), are made once per shape
        self._differentiable = [id(n) not in written for n in self._vars]
        self._dummies = {}
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
            a._entry is not None and d for a, d in zip(args, self._differentiable))
        outs = self._recorded(args) if on_tape else self._program.run(args)
        if out is not None:
            targets = [out] if isinstance(out, NDArray) else list(out)
            for t, o in zip(targets, outs):
                t[:] = o
            outs = targets
        return outs[0] if len(outs) == 1 else outs

    def _recorded(self, args):
        inputs, outer, inner = [], [], []
        for a, differentiable in zip(args, self._differentiable):
            if a._entry is None or not differentiable:
                inputs.append(a)
                continue
            alias = a.detach()
            key = (a.shape, a.dtype, a.ctx)
            dummy = self._dummies.get(key)
            if dummy is None:
                dummy = self._dummies[key] = zeros(a.shape, ctx=a.ctx, dtype=a.dtype)
            _tape.mark_variable(alias, dummy, "write")
            inputs.append(alias)
            outer.append(a)
            inner.append(alias)
        with autograd.record(train_mode=autograd.is_training()):
            heads = self._program.run(inputs)
        outs = [h.detach() for h in heads]
        _tape.record_call(_CachedCall(self._name, heads, inner), {}, None, outer, outs)
        return outs

    def __repr__(self):
        return f"<{self._name} inputs={[n.name for n in self._vars]}>"


__all__ = ["CachedOp", "Program"]
