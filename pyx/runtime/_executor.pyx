"""The backward executor: runs the gradient rules of the recorded nodes and plans memory.

``run(heads, head_grads, variables, retain_graph, create_graph)`` follows MXNet's
``Imperative::Backward`` (src/imperative/imperative.cc), and goes further on memory:

1. Collect the nodes that the heads reach and order them by creation (reverse creation
   order is a topological order of the backward graph).
2. Prune: a node runs only if one of its inputs leads to a variable that needs a gradient;
   every input that does not gets the request ``null`` and the rule is told (``needs``),
   so that ``dot(x, W)`` with only ``W`` needing a gradient never computes ``dX``.
3. Count the contributions each gradient entry will receive, then run the nodes in reverse
   order.  The first contribution to an entry is stored as it comes (``write``); later ones
   are added into that buffer in place (``add``) when the executor owns it, instead of an
   n-ary sum at the end.  A buffer is owned when the rule made it: never a head gradient the
   user passed, a saved forward value, or a view of either.
4. An entry's buffer is dropped as soon as its node has read it, and a node's saved forward
   values as soon as it has run (unless ``retain_graph``): the pool then hands the same
   memory to the next buffer of that size, which is the reuse that a static memory plan
   would compute, done by the pool's size-keyed free lists (MXNet's match range is the
   pool's rounding).
5. Gradients of variables are computed first and written last, so that an error leaves
   every ``.grad`` as it was.

``last_stats()`` reports what the last run did.  The executor is device-agnostic: kernels
come from the operators' rules, buffers from the pool of each array's context.
"""

import allocator

from runtime._ndarray cimport NDArray, assign
from runtime._tape cimport Entry, Node

from runtime._desc import ArrayDesc
from runtime._ndarray import ones, zeros

cdef int REQ_NULL = 0, REQ_WRITE = 1, REQ_ADD = 3

cdef object _add_op = None        # registry op that accumulates (set by runtime.ops)
cdef object _invoke = None        # the invoker's entry (set by runtime.ops)
cdef dict _takes_needs = {}       # gradient function -> whether it takes ``needs``
cdef dict _stats = {}
cdef bint _donation = True


def set_donation(bint on):
    """Let rules write into out-grads nobody else reads (default); tests compare both."""
    global _donation
    _donation = on


def set_ops(add_op, invoke):
    """runtime.ops gives the accumulating operator and the invoker at import (the
    executor sits below the registry and imports neither)."""
    global _add_op, _invoke
    _add_op = add_op
    _invoke = invoke


def last_stats():
    """What the last backward did (see ``runtime.autograd.last_backward_stats``)."""
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in _stats.items()}


cdef bint _rule_takes_needs(object rule):
    # keyed by the plain function: a bound method (a Function's) is new on every access,
    # and would keep its instance alive here
    func = getattr(rule, "__func__", rule)
    cdef object known = _takes_needs.get(func)
    if known is None:
        code = getattr(func, "__code__", None)
        known = code is not None and "needs" in code.co_varnames[:code.co_argcount]
        _takes_needs[func] = known
    return known


cdef class _Run:
    """The state of one backward pass."""
    cdef dict grads          # (node seq, index) -> NDArray: gradient entries so far
    cdef set owned           # keys whose buffer the executor may write in place
    cdef set protected       # ids of chunks the executor must never write
    cdef bint create_graph
    cdef Py_ssize_t n_nodes, n_entries, n_null, n_write, n_add, n_inplace, n_alloc
    cdef Py_ssize_t live_bytes, peak_live, total_bytes

    cdef int track(self, NDArray g, int delta) except -1:
        cdef Py_ssize_t nbytes = g.nbytes if g._stype == 0 else 0
        if delta > 0:
            self.n_alloc += 1
            self.total_bytes += nbytes
            self.live_bytes += nbytes
            if self.live_bytes > self.peak_live:
                self.peak_live = self.live_bytes
        else:
            self.live_bytes -= nbytes
        return 0

    cdef bint fresh(self, NDArray g):
        return id(g._chunk) not in self.protected

    cdef int accumulate(self, tuple key, NDArray g, bint shared=False) except -1:
        """Add contribution ``g`` to entry ``key``; ``shared``: another entry received the
        same buffer (``add`` passes one out-grad to both inputs), so neither owns it."""
        cdef NDArray buf = self.grads.get(key)
        if buf is None:
            self.grads[key] = g
            self.n_entries += 1
            self.n_write += 1
            if self.fresh(g) and not shared:
                self.owned.add(key)
                self.track(g, 1)
            return 0
        self.n_add += 1
        if key in self.owned and not self.create_graph and buf._stype == g._stype == 0:
            _invoke(_add_op, [buf, g], _add_op.parse_attrs({}), buf, "inplace")
            self.n_inplace += 1
            return 0
        s = _invoke(_add_op, [buf, g], _add_op.parse_attrs({}), None, None)
        if key in self.owned:
            self.track(buf, -1)
        self.grads[key] = s
        self.owned.add(key)
        self.track(s, 1)
        return 0

    cdef NDArray take(self, tuple key, bint donate):
        """The entry's buffer for its (last) reader; ``donate``: the reader's next
        elementwise op may write into it, if the executor owns it."""
        cdef NDArray g = self.grads.pop(key, None)
        if g is not None and key in self.owned:
            self.owned.discard(key)
            self.track(g, -1)
            if donate and not self.create_graph and g._stype == 0 and _donation:
                g._donated = True
        return g


cdef list _collect(list heads):
    """The nodes the heads reach, in creation order."""
    cdef dict seen = {}
    cdef list stack = []
    cdef Node n
    for e in heads:
        stack.append((<Entry>e).node)
    while stack:
        n = stack.pop()
        if n.seq in seen:
            continue
        seen[n.seq] = n
        for e in n.inputs:
            if e is not None and (<Entry>e).node.seq not in seen:
                stack.append((<Entry>e).node)
    return [seen[k] for k in sorted(seen)]


def run(list heads, list head_grads, list variables, bint retain_graph, bint create_graph):
    """Backward from ``heads`` (NDArrays on the tape) with ``head_grads`` (NDArray or None
    each).  ``variables`` None: gradients go to every variable's ``.grad`` by its
    ``grad_req``; else the gradients of those variables are returned, ``.grad`` untouched.
    """
    cdef _Run r = _Run.__new__(_Run)
    cdef list nodes, order, entries = []
    cdef Node n
    cdef Entry e
    cdef NDArray h, g
    cdef dict needs = {}
    cdef set targets = None
    cdef Py_ssize_t i, j
    pool_marks = {}
    r.grads = {}
    r.owned = set()
    r.protected = set()
    r.create_graph = create_graph
    for i, h in enumerate(heads):
        if h._entry is None:
            raise RuntimeError(
                f"backward: head {i} (shape {h.shape!r}) is not on the tape: compute it "
                "inside autograd.record() from arrays that attach_grad() marked; to "
                "differentiate the same graph twice, pass retain_graph=True")
        entries.append(h._entry)
    if variables is not None:
        targets = set()
        for i, v in enumerate(variables):
            ve = (<NDArray>v)._entry
            if ve is None or (<Entry>ve).node.op is not None:
                raise ValueError(f"grad: variable {i} (shape {v.shape!r}) does not require a "
                                 "gradient: call attach_grad() on it before recording")
            targets.add((<Entry>ve).node.seq)
    nodes = _collect(entries)
    for n in nodes:
        if n.op is None:
            needs[n.seq] = (n.seq in targets) if targets is not None else n.grad_req != REQ_NULL
        else:
            if n.consumed:
                raise RuntimeError(
                    f"backward: the graph of {n.name} was already consumed by a backward "
                    "pass; to differentiate the same graph twice, pass retain_graph=True "
                    "to the first backward")
            needs[n.seq] = any(x is not None and needs[(<Entry>x).node.seq] for x in n.inputs)
    if not any(needs[(<Entry>x).node.seq] for x in entries):
        raise RuntimeError("backward: no head depends, through the recorded graph, on an array "
                           "that requires a gradient "
                         "(attach_grad() with grad_req 'write' or 'add')")
    if variables is not None:
        for i, v in enumerate(variables):
            if (<Entry>(<NDArray>v)._entry).node.seq not in [m.seq for m in nodes]:
                raise ValueError(f"grad: variable {i} (shape {v.shape!r}) is not reached "
                                 "from the heads: the heads do not depend on it")
    for h in heads:
        r.protected.add(id(h._chunk))
    for i, h in enumerate(heads):
        g = head_grads[i] if head_grads is not None else None
        if g is None:
            g = ones(h.shape, ctx=h.ctx, dtype=h.dtype)
        else:
            if g.shape != h.shape:
                raise ValueError(f"backward: head_grads[{i}] must have the head's shape "
                                 f"{h.shape!r} (got {g.shape!r})")
            r.protected.add(id(g._chunk))
        e = h._entry
        r.accumulate((e.node.seq, e.index), g)
    for n in nodes:     # saved forward values are never written in place
        if n.op is not None and not n.consumed:
            for lst in (n.saved_in, n.saved_out):
                for a in lst:
                    if a is not None:
                        r.protected.add(id((<NDArray>a)._chunk))
        elif n.op is None and n.grad is not None:
            r.protected.add(id(n.grad._chunk))
    for p in allocator.pools().values():
        pool_marks[p] = (p.mark_peak(), p.memory_stats()["num_cache_hits"])
    results = {}
    try:
        for n in reversed(nodes):
            if not needs[n.seq]:
                continue
            if n.op is None:
                results[n.seq] = r.take((n.seq, 0), False)
                continue
            _run_node(r, n, needs)
            if not retain_graph:
                n.release()
    finally:
        r.grads.clear()
    _stats.clear()
    _stats.update(nodes=r.n_nodes, entries=r.n_entries,
                  requests={"null": r.n_null, "write": r.n_write, "inplace": r.n_inplace,
                            "add": r.n_add},
                  buffers_allocated=r.n_alloc,
                  buffers_reused=sum(p.memory_stats()["num_cache_hits"] - m[1]
                                     for p, m in pool_marks.items()),
                  planned_bytes=r.peak_live, unplanned_bytes=r.total_bytes,
                  peak_bytes=sum(p.peak_since_mark() for p in pool_marks))
    return {n.seq: (n, results.get(n.seq)) for n in nodes if n.op is None and needs[n.seq]}


# op -> (donates, differentiable, gradient rule, rule takes ``needs``), read once per op
cdef dict _op_rules = {}


cdef tuple _rule_of(object op):
    cdef tuple info = _op_rules.get(op)
    if info is None:
        rule = getattr(op, "gradient", None)
        info = (bool(getattr(op, "grad_donates", False)),
                bool(getattr(op, "differentiable", True)) and rule is not None,
                rule, rule is not None and _rule_takes_needs(rule))
        if getattr(op, "grad_reads", None) is not None:   # registry ops, not Functions
            _op_rules[op] = info
    return info


cdef int _run_node(_Run r, Node n, dict needs) except -1:
    cdef Py_ssize_t j, n_out = len(n.out_descs), n_in = len(n.inputs)
    cdef tuple info = _rule_of(n.op)
    cdef bint donates = info[0]
    cdef list ograds = [r.take((n.seq, j), donates) for j in range(n_out)]
    cdef list mask
    cdef NDArray g
    cdef bint any_grad = False
    for j in range(n_out):
        if ograds[j] is not None:
            any_grad = True
        else:
            ograds[j] = zeros(n.out_descs[j].shape, ctx=n.out_descs[j].ctx,
                              dtype=n.out_descs[j].dtype, stype=n.out_descs[j].stype)
    if not any_grad:
        return 0
    if not info[1]:
        raise RuntimeError(f"backward: {n.name} is not differentiable (it has no gradient "
                           "rule), and a gradient must flow through it here")
    mask = [x is not None and needs[(<Entry>x).node.seq] for x in n.inputs]
    ins = [n.value(False, j, r.create_graph) for j in range(n_in)]
    outs = [n.value(True, j, r.create_graph) for j in range(n_out)]
    rule = info[2]
    # a stateful op's rule takes the forward's state (Op.prepare) after the out-grads
    args = (n.attrs, ins, outs, ograds) if n.state is None else \
        (n.attrs, ins, outs, ograds, n.state)
    if info[3]:
        in_grads = rule(*args, needs=mask)
    else:
        in_grads = rule(*args)
    r.n_nodes += 1
    for j in range(n_out):
        g = ograds[j]
        if g._donated:
            g._donated = False          # the rule did not use it: it goes back to the pool
        elif donates and any(x is g for x in in_grads):
            r.n_inplace += 1            # the rule wrote its result into the out-grad
    if len(in_grads) != n_in:
        raise RuntimeError(f"backward: the gradient rule of {n.name} returned "
                           f"{len(in_grads)} gradients for {n_in} inputs")
    shared = set()
    if n_in > 1:
        seen = set()
        for j in range(n_in):
            if mask[j] and in_grads[j] is not None:
                c = id((<NDArray>in_grads[j])._chunk)
                if c in seen:
                    shared.add(c)
                seen.add(c)
    for j in range(n_in):
        if not mask[j]:
            r.n_null += 1          # a gradient nobody reads: not formed (or dropped)
            continue
        g = in_grads[j]
        if g is None:
            continue
        if g.shape != n.in_descs[j].shape:
            raise RuntimeError(f"backward: the gradient rule of {n.name} gave input {j} a "
                               f"gradient of shape {g.shape!r} for shape "
                               f"{n.in_descs[j].shape!r}")
        e = n.inputs[j]
        r.accumulate(((<Entry>e).node.seq, (<Entry>e).index), g, id(g._chunk) in shared)
    return 0


def write_grads(dict finals):
    """Write each variable's gradient into its ``.grad`` by its request (after every rule
    ran, so that an error leaves them unchanged)."""
    cdef Node n
    for seq, (n, g) in finals.items():
        if n.grad is None:
            continue
        if g is None:
            if n.grad_req == REQ_WRITE:
                assign(n.grad, zeros(n.grad.shape, ctx=n.grad.ctx, dtype=n.grad.dtype,
                                      stype=n.grad.stype))
            continue
        if g.dtype != n.grad.dtype:
            g = g.astype(n.grad.dtype)
        _stats["requests"]["add" if n.grad_req == REQ_ADD else "write"] += 1
        if n.grad_req == REQ_ADD:
            if n.grad.stype == "default" and g.stype == "default":
                _invoke(_add_op, [n.grad, g], _add_op.parse_attrs({}), n.grad, "inplace")
            else:
                assign(n.grad, _invoke(_add_op, [n.grad, g.tostype(n.grad.stype)],
                                       _add_op.parse_attrs({}),
                                        None, None))
        else:
            assign(n.grad, g)
