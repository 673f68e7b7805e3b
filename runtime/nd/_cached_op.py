"""``CachedOp`` (MXNet's ``mx.nd.CachedOp``): a symbol's graph called on NDArrays as one
operator; :class:`Program`, the op-by-op forward walk, and :func:`graph_steps`, the
graph as the steps of a ``runtime._executor.GraphPlan``, both shared with
``runtime.executor``.

Under ``static_alloc`` and ``static_shape`` (MXNet's flags), a CachedOp runs its graph
as a ``GraphPlan`` per input signature and recording mode: forward and backward one plan,
their memory assigned once by lifetime and kept between calls (see docs/graph.md).
Called while ``autograd.record()`` is on, it puts ONE node on the caller's tape (through
``runtime._tape.record_call``) whose gradient is the plan's backward for that call's
state.  Without those flags, or for a graph the plan cannot take (sparse or device
values, custom operators), the walk calls each node's registry operator through the
invoker in topological order and lets each intermediate go after its last consumer;
recording, the call records that walk on a tape of its own, whose variables are aliases
of the inputs, and the node's gradient is ``autograd.grad`` over that inner recording.
"""

from runtime import autograd
from runtime import _tape
from runtime._executor import GraphPlan
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


def graph_steps(nodes, heads):
    """``(steps, variables, head values)`` of the graph for ``GraphPlan``: the variable
    nodes in graph order, one ``(op, attrs, input values, n_out)`` per operator node, the
    value ids of the entries ``heads``; None when a node is not a plain registry operator
    (a custom or source operator runs as Python code)."""
    variables = [n for n in nodes if n.op is None]
    ids = {(id(n), 0): v for v, n in enumerate(variables)}
    steps = []
    for node in nodes:
        if node.op is None:
            continue
        if getattr(node.op, "function", None) is not None:
            return None
        n_out = node.n_out()
        steps.append((node.op, node.params, tuple(ids[(id(n), i)] for n, i in node.inputs),
                      n_out))
        for i in range(n_out):
            ids[(id(node), i)] = len(ids)
    return steps, variables, [ids[(id(n), i)] for n, i in heads]


class _StaticGraphCall:
    """The op of every tape node that a planned CachedOp call records: the node's state
    is ``(GraphState, needs)`` and its gradient the state's plan's backward.  One object
    for all calls, so the caller's backward plan is cached across steps."""

    name = "_CachedOp"
    differentiable = True
    # the backward executor may pass its planned buffers (``into``) to the rule
    grad_into = True
    grad_inputs = ()
    grad_outputs = ()
    stops_gradient = False

    @staticmethod
    def grad_reads(attrs, n_in, n_out):
        return (), ()

    @staticmethod
    def gradient(attrs, ins, outs, ograds, state, into=None):
        """The plan's backward of the call's state; ``into`` (one entry per node input,
        None where not given): the buffers the gradients are computed into."""
        if is_recording():
            raise NotImplementedError("_CachedOp: gradients of gradients through a "
                                      "hybridized block or CachedOp are not supported; "
                                      "call it without hybridize()")
        st, needs = state
        if into is not None:          # the node's inputs are the plan's inputs in needs
            given = iter(into)
            into = [next(given) if n else None for n in needs]
        grads = st.plan.backward(st, list(ograds), into)
        return [g for g, n in zip(grads, needs) if n]


_STATIC_CALL = _StaticGraphCall()
MAX_PLANS = 8        # graph plans kept per CachedOp (input signatures x recording modes)


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
        # an output that is an input off the tape (returned as it came) or a constant
        # carries no gradient to the variables: leave it out with its head gradient
        kept = [(h, g) for h, g in zip(self.heads, ograds) if h._entry is not None]
        if not kept:
            return [zeros(v.shape, ctx=v.ctx, dtype=v.dtype) for v in self.variables]
        heads, head_grads = zip(*kept)
        return autograd.grad(list(heads), self.variables, list(head_grads),
                             retain_graph=True, train_mode=autograd.is_training())


class CachedOp:
    """A symbol's graph as one callable operator (MXNet's ``nd.CachedOp(sym, flags)``).

    ``op(*arrays)`` takes one NDArray per ``sym.list_inputs()`` entry (arguments and
    auxiliary states, in graph order) and returns the output (a list when the symbol has
    several).  ``flags`` as MXNet's: with ``static_alloc`` and ``static_shape`` both
    true the graph runs as a static plan (see the module docstring); the others are
    accepted and change nothing.
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
        self._steps = None
        if self.flags.get("static_alloc") and self.flags.get("static_shape"):
            self._steps = graph_steps(nodes, sym._outputs)
        self._plans = {}

    def __call__(self, *args, out=None, default_ctx=None):
        if len(args) != len(self._vars):
            raise ValueError(f"{self._name}: takes {len(self._vars)} input(s) "
                             f"({', '.join(n.name for n in self._vars)}) (got {len(args)})")
        for n, a in zip(self._vars, args):
            if not isinstance(a, NDArray):
                raise TypeError(f"{self._name}: input {n.name!r} must be an NDArray (got "
                                f"{type(a).__name__})")
        outs = self._forward(args)
        if out is not None:
            targets = [out] if isinstance(out, NDArray) else list(out)
            for t, o in zip(targets, outs):
                t[:] = o
            outs = targets
        return outs[0] if len(outs) == 1 else outs

    def _forward(self, args):
        """The list of outputs for ``args``, one NDArray per input, as the caller has
        checked (a HybridBlock checks its inputs once per signature)."""
        on_tape = is_recording() and any(
            a._entry is not None and d for a, d in zip(args, self._differentiable))
        outs = self._planned(args, on_tape) if self._steps is not None else None
        if outs is None:
            outs = self._recorded(args) if on_tape else self._program.run(args)
        return outs

    def _planned(self, args, on_tape):
        """The outputs of the call run by its static plan (None: the graph cannot be
        planned); recording, one tape node whose gradient is the plan's backward."""
        needs = tuple(a._entry is not None and d
                      for a, d in zip(args, self._differentiable)) if on_tape else None
        train = autograd.is_training()
        # the invoker puts a graph's inputs on one context: the first one's stands for all
        ctx = args[0].context if args else None
        key = (needs, train, ctx) + tuple([(a.shape, a.dtype, a.stype) for a in args])
        plan = self._plans.get(key)
        if plan is None:
            steps, variables, heads = self._steps
            plan = GraphPlan(steps, len(variables), heads, needs, train)
            if not plan.prepare(list(args)):
                plan = False
            if len(self._plans) >= MAX_PLANS:
                self._plans.pop(next(iter(self._plans)))
            self._plans[key] = plan
        if plan is False:
            return None
        state, outs = plan.forward(list(args))
        if on_tape:
            _tape.record_call(_STATIC_CALL, {}, (state, needs),
                              [a for a, n in zip(args, needs) if n], outs)
        return outs

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


__all__ = ["CachedOp", "Program", "graph_steps"]
