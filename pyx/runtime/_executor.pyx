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
   every ``.grad`` as it was.  A gradient buffer the run made and alone holds becomes the
   variable's ``.grad`` memory instead of being copied into it (``_take_over``).

Per node the bookkeeping is C-level: the gradient entries of a run live on the nodes
(``Node.grads``, ``Node.needs``), protected chunks carry the run's number
(``Chunk.guard``), and the rules of pass-through ops (``add`` of equal shapes, ``x + c``,
``copy``, ``add_n``: each input's gradient is the out-grad) are applied without calling
them.  An out-grad that only one elementwise rule reads is donated to it
(``NDArray._donated``): the rule's op writes its result into that buffer.

``last_stats()`` reports what the last run did.  The executor is device-agnostic: kernels
come from the operators' rules, buffers from the pool of each array's context.
"""

import allocator

cimport numpy as cnp
from allocator._pool cimport Pool

from cpython.ref cimport Py_REFCNT

from runtime._ndarray cimport Chunk, NDArray, assign
from runtime._desc cimport ArrayDesc
from runtime._tape cimport Entry, Node

from runtime._desc import ArrayDesc
from runtime._ndarray import ones, zeros


from runtime._types cimport REQ_ADD, REQ_NULL, REQ_WRITE
from runtime.errors import NOT_IN_GRAPH

cdef object _add_op = None        # registry op that accumulates (set by runtime.ops)
cdef object _invoke = None        # the invoker's entry (set by runtime.ops)
cdef dict _add_attrs = {}         # add's parsed (default) attributes
cdef dict _takes_needs = {}       # gradient function -> whether it takes ``needs``
cdef dict _stats = {}
cdef bint _donation = True
cdef dict _op_rules = {}         # registry op -> _RuleInfo
cdef set _passthrough = set()    # ops whose rule hands the out-grad to every input


def set_donation(bint on):
    """Let rules write into out-grads nobody else reads (default); tests compare both."""
    global _donation
    _donation = on


def set_ops(add_op, invoke, passthrough=()):
    """runtime.ops gives the accumulating operator and the invoker at import (the
    executor sits below the registry and imports neither), and the ``passthrough`` ops:
    those whose gradient rule gives every input the out-grad itself where the shapes
    agree (``add``, ``x + 1``, ``copy``), which the executor then applies without calling
    the rule."""
    global _add_op, _invoke, _add_attrs
    _add_op = add_op
    _add_attrs = add_op.parse_attrs({})
    _invoke = invoke
    _passthrough.clear()
    _passthrough.update(passthrough)
    _op_rules.clear()


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
    """The state of one backward pass.  Gradient entries live on the nodes while it runs
    (``Node.grads``: the buffer of each output, then whether the executor owns it), so
    that a node's bookkeeping is field access, not dictionary work."""
    cdef Py_ssize_t number   # of this run: chunks whose guard is as high are protected
    cdef bint create_graph
    cdef Py_ssize_t n_nodes, n_entries, n_null, n_write, n_add, n_inplace, n_alloc
    cdef Py_ssize_t live_bytes, peak_live, total_bytes

    cdef int track(self, NDArray g, int delta) except -1:
        cdef Py_ssize_t nbytes = 0
        if g._stype == 0:
            nbytes = g._size() * (<cnp.dtype>g._dtype).itemsize
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
        # a chunk that this run (or one inside it, numbered higher) must not write; a
        # chunk made since has guard 0
        return g._chunk.guard < self.number

    cdef void protect(self, NDArray a):
        if a._chunk.guard < self.number:
            a._chunk.guard = self.number

    cdef int accumulate(self, Node node, Py_ssize_t i, NDArray g, bint shared=False) \
            except -1:
        """Add contribution ``g`` to output ``i`` of ``node``; ``shared``: another entry
        received the same buffer (``add`` passes one out-grad to both inputs), so neither
        owns it."""
        cdef list slots = node.grads
        cdef Py_ssize_t n_out
        cdef NDArray buf
        if slots is None:
            n_out = len(node.out_descs)
            slots = node.grads = [None] * n_out + [False] * n_out
        else:
            n_out = len(slots) >> 1
        buf = slots[i]
        if buf is None:
            slots[i] = g
            self.n_entries += 1
            self.n_write += 1
            if not shared and self.fresh(g):
                slots[n_out + i] = True
                self.track(g, 1)
            return 0
        self.n_add += 1
        owned = slots[n_out + i] is True
        if owned and not self.create_graph and buf._stype == g._stype == 0:
            _invoke(_add_op, [buf, g], _add_attrs, buf, "inplace")
            self.n_inplace += 1
            return 0
        s = _invoke(_add_op, [buf, g], _add_attrs, None, None)
        if owned:
            self.track(buf, -1)
        slots[i] = s
        slots[n_out + i] = True
        self.track(s, 1)
        return 0

    cdef NDArray take(self, Node node, Py_ssize_t i, bint donate):
        """The entry's buffer for its (last) reader; ``donate``: the reader's next
        elementwise op may write into it, if the executor owns it."""
        cdef list slots = node.grads
        cdef Py_ssize_t n_out
        cdef NDArray g
        if slots is None:
            return None
        n_out = len(slots) >> 1
        g = slots[i]
        if g is None:
            return None
        slots[i] = None
        if slots[n_out + i] is True:
            slots[n_out + i] = False
            self.track(g, -1)
            if donate and not self.create_graph and g._stype == 0 and _donation:
                g._donated = True
        return g


cdef Py_ssize_t _pass = 0        # numbers the runs: Node.mark says which run reached it
cdef Py_ssize_t _depth = 0       # runs in progress (a rule may run a backward of its own)


cdef list _collect(list heads, Py_ssize_t mark):
    """The nodes the heads reach, in creation order; each gets ``mark``."""
    cdef list found = []
    cdef list stack = []
    cdef Node n, m
    cdef object e
    for e in heads:
        stack.append((<Entry>e).node)
    while stack:
        n = stack.pop()
        if n.mark == mark:
            continue
        n.mark = mark
        found.append(n)
        for e in n.inputs:
            if e is not None:
                m = (<Entry>e).node
                if m.mark != mark:
                    stack.append(m)
    found.sort()                 # by creation (Node orders by seq)
    return found


def run(list heads, list head_grads, list variables, bint retain_graph, bint create_graph):
    """Backward from ``heads`` (NDArrays on the tape) with ``head_grads`` (NDArray or None
    each).  ``variables`` None: gradients go to every variable's ``.grad`` by its
    ``grad_req``; else the gradients of those variables are returned, ``.grad`` untouched.
    """
    global _pass, _depth
    cdef _Run r = _Run.__new__(_Run)
    cdef list nodes, entries = [], outer = None
    cdef Node n
    cdef Entry e
    cdef NDArray h, g, a
    cdef set targets = None
    cdef Py_ssize_t i
    cdef object x
    cdef bint needed
    pool_marks = {}
    r.create_graph = create_graph
    for i, h in enumerate(heads):
        if h._entry is None:
            raise RuntimeError(NOT_IN_GRAPH + f" (backward: head {i} of shape {h.shape!r} "
                               "is not on the tape: compute it inside autograd.record() "
                               "from arrays that attach_grad() marked)")
        entries.append(h._entry)
    if variables is not None:
        targets = set()
        for i, v in enumerate(variables):
            ve = (<NDArray>v)._entry
            if ve is None or (<Entry>ve).node.op is not None:
                raise ValueError(f"Cannot differentiate with respect to the {i + 1}-th "
                                 "variable because it does not require gradient. (grad: "
                                 f"variable {i} of shape {v.shape!r}: call attach_grad() on "
                                 "it before recording)")
            targets.add((<Entry>ve).node.seq)
    _pass += 1
    r.number = _pass
    nodes = _collect(entries, _pass)
    if _depth:
        # a backward inside a gradient rule: keep the outer run's entries on shared nodes
        outer = [(n, n.needs, n.grads) for n in nodes]
        for n in nodes:
            n.grads = None
    _depth += 1
    try:
        results = _run_nodes(r, nodes, entries, heads, head_grads, variables, targets,
                             retain_graph, pool_marks)
    finally:
        _depth -= 1
        for n in nodes:
            n.grads = None
        if outer is not None:
            for n, needed, slots in outer:
                n.needs = needed
                n.grads = slots
    return results


cdef object _cache_hits(object pool):
    """The pool's cache hits so far (its counter; memory_stats() builds a whole dict)."""
    if isinstance(pool, Pool):
        return (<Pool>pool).n_hits
    return pool.memory_stats()["num_cache_hits"]


cdef dict _run_nodes(_Run r, list nodes, list entries, list heads, list head_grads,
                     list variables, set targets, bint retain_graph, dict pool_marks):
    cdef Node n
    cdef Entry e
    cdef NDArray h, g, a
    cdef Py_ssize_t i
    cdef object x, lst
    cdef bint needed
    for n in nodes:
        if n.op is None:
            n.needs = (n.seq in targets) if targets is not None else n.grad_req != REQ_NULL
        else:
            if n.consumed:
                raise RuntimeError(NOT_IN_GRAPH + f" (backward: the graph of {n.name} was "
                                   "consumed by an earlier backward pass)")
            needed = False
            for x in n.inputs:
                if x is not None and (<Entry>x).node.needs:
                    needed = True
                    break
            n.needs = needed
    needed = False
    for x in entries:
        if (<Entry>x).node.needs:
            needed = True
    if not needed:
        raise RuntimeError("There are no inputs in computation graph that require gradients. "
                           "(backward: no head depends, through the recorded graph, on an "
                           "array attached with grad_req 'write' or 'add')")
    if variables is not None:
        reached = {n.seq for n in nodes}
        for i, v in enumerate(variables):
            if (<Entry>(<NDArray>v)._entry).node.seq not in reached:
                raise ValueError(f"grad: variable {i} (shape {v.shape!r}) is not reached "
                                 "from the heads: the heads do not depend on it")
    for h in heads:
        r.protect(h)
    for i, h in enumerate(heads):
        g = head_grads[i] if head_grads is not None else None
        if g is None:
            g = ones(h.shape, ctx=h.ctx, dtype=h.dtype)
        else:
            if g.shape != h.shape:
                raise ValueError(f"backward: head_grads[{i}] must have the head's shape "
                                 f"{h.shape!r} (got {g.shape!r})")
            r.protect(g)
        e = h._entry
        r.accumulate(e.node, e.index, g)
    for n in nodes:     # saved forward values are never written in place
        if n.op is not None and not n.consumed:
            for lst in n.saved_in:
                if lst is not None:
                    r.protect(<NDArray>lst)
            for lst in n.saved_out:
                if lst is not None:
                    r.protect(<NDArray>lst)
        elif n.op is None and n.grad is not None:
            r.protect(n.grad)
    for p in allocator.pools().values():
        pool_marks[p] = (p.mark_peak(), _cache_hits(p))
    results = {}
    for i in range(len(nodes) - 1, -1, -1):
        n = nodes[i]
        if not n.needs:
            continue
        if n.op is None:
            owned = n.grads is not None and n.grads[1] is True
            results[n.seq] = (n, r.take(n, 0, False), owned)
            continue
        _run_node(r, n)
        if not retain_graph:
            n.release()
    _stats.clear()
    _stats.update(nodes=r.n_nodes, entries=r.n_entries,
                  requests={"null": r.n_null, "write": r.n_write, "inplace": r.n_inplace,
                            "add": r.n_add},
                  buffers_allocated=r.n_alloc,
                  buffers_reused=sum(_cache_hits(p) - m[1] for p, m in pool_marks.items()),
                  planned_bytes=r.peak_live, unplanned_bytes=r.total_bytes,
                  peak_bytes=sum(p.peak_since_mark() for p in pool_marks))
    return results


cdef class _RuleInfo:
    """What the executor reads of one op, once per op."""
    cdef bint donates            # its rule may write into a donated out-grad
    cdef bint differentiable
    cdef object rule
    cdef bint takes_needs
    cdef bint passthrough        # every input's gradient is the out-grad (see set_ops)


cdef _RuleInfo _rule_of(object op):
    cdef _RuleInfo info = _op_rules.get(op)
    if info is None:
        info = _RuleInfo.__new__(_RuleInfo)
        rule = getattr(op, "gradient", None)
        info.donates = bool(getattr(op, "grad_donates", False))
        info.differentiable = bool(getattr(op, "differentiable", True)) and rule is not None
        info.rule = rule
        info.takes_needs = rule is not None and _rule_takes_needs(rule)
        info.passthrough = op in _passthrough
        if getattr(op, "grad_reads", None) is not None:   # registry ops, not Functions
            _op_rules[op] = info
    return info


cdef bint _pass_through(_Run r, Node n) except -1:
    """The rule of a pass-through op (``add`` of equal shapes, ``x + 1``, ``copy``) run
    without calling it: every input that needs a gradient receives the out-grad itself,
    as the rule would hand it.  False when the rule must run (an input of another shape:
    the rule sums the broadcast axes)."""
    cdef NDArray g = None if n.grads is None else n.grads[0]
    cdef Py_ssize_t j, n_in = len(n.inputs), n_needing = 0
    cdef object x
    if g is None:
        return True              # no gradient reaches this node: nothing to do
    for j in range(n_in):
        x = n.inputs[j]
        if x is not None and (<Entry>x).node.needs:
            if (<ArrayDesc>n.in_descs[j]).shape != g._shape:
                return False
            n_needing += 1
    r.take(n, 0, False)
    r.n_nodes += 1
    for j in range(n_in):
        x = n.inputs[j]
        if x is None or not (<Entry>x).node.needs:
            r.n_null += 1
            continue
        r.accumulate((<Entry>x).node, (<Entry>x).index, g, n_needing > 1)
    return True


cdef int _run_node(_Run r, Node n) except -1:
    cdef Py_ssize_t j, k, n_out = len(n.out_descs), n_in = len(n.inputs)
    cdef _RuleInfo info = _rule_of(n.op)
    cdef bint donates = info.donates
    cdef list ograds, mask, ins, outs
    cdef NDArray g
    cdef ArrayDesc d
    cdef object x, in_grads
    cdef bint any_grad = False
    if info.passthrough and n_out == 1 and not r.create_graph and _pass_through(r, n):
        return 0
    ograds = [None] * n_out
    for j in range(n_out):
        g = r.take(n, j, donates)
        if g is not None:
            any_grad = True
            ograds[j] = g
    if not any_grad:
        return 0
    for j in range(n_out):
        if ograds[j] is None:
            d = n.out_descs[j]
            ograds[j] = zeros(d.shape, ctx=d.ctx, dtype=d.dtype, stype=d.stype)
    if not info.differentiable:
        raise RuntimeError(f"Operator {n.name} is non-differentiable because it didn't "
                           "register FGradient attribute. (backward: it has no gradient rule, "
                           "and a gradient must flow through it here)")
    mask = [False] * n_in
    for j in range(n_in):
        x = n.inputs[j]
        mask[j] = x is not None and (<Entry>x).node.needs
    ins = [n.value(False, j, r.create_graph) for j in range(n_in)]
    outs = [n.value(True, j, r.create_graph) for j in range(n_out)]
    rule = info.rule
    # a stateful op's rule takes the forward's state (Op.prepare) after the out-grads
    if n.state is None:
        in_grads = (rule(n.attrs, ins, outs, ograds, needs=mask) if info.takes_needs
                    else rule(n.attrs, ins, outs, ograds))
    else:
        in_grads = (rule(n.attrs, ins, outs, ograds, n.state, needs=mask) if info.takes_needs
                    else rule(n.attrs, ins, outs, ograds, n.state))
    r.n_nodes += 1
    for j in range(n_out):
        g = ograds[j]
        if g._donated:
            g._donated = False          # the rule did not use it: it goes back to the pool
        elif donates:
            for x in in_grads:
                if x is g:
                    r.n_inplace += 1    # the rule wrote its result into the out-grad
                    break
    if len(in_grads) != n_in:
        raise RuntimeError(f"backward: the gradient rule of {n.name} returned "
                           f"{len(in_grads)} gradients for {n_in} inputs")
    shared = None
    if n_in > 1:
        seen = set()
        for j in range(n_in):
            if mask[j] and in_grads[j] is not None:
                c = id((<NDArray>in_grads[j])._chunk)
                if c in seen:
                    if shared is None:
                        shared = set()
                    shared.add(c)
                seen.add(c)
    for j in range(n_in):
        if not mask[j]:
            r.n_null += 1          # a gradient nobody reads: not formed (or dropped)
            continue
        g = in_grads[j]
        if g is None:
            continue
        d = n.in_descs[j]
        if g._shape != d.shape:
            raise RuntimeError(f"backward: the gradient rule of {n.name} gave input {j} a "
                               f"gradient of shape {g.shape!r} for shape "
                               f"{d.shape!r}")
        x = n.inputs[j]
        r.accumulate((<Entry>x).node, (<Entry>x).index, g,
                     shared is not None and id(g._chunk) in shared)
    return 0


cdef bint _take_over(NDArray dst, NDArray src) except -1:
    """Give dense ``dst`` the memory of ``src`` instead of copying ``src`` into it, when
    nobody can tell: ``src`` is a buffer the run made and only the run holds (its chunk
    whole, no view, no other reference), and ``dst``'s memory is seen by ``dst`` alone
    (no NDArray view, NumPy view or buffer export of it; host memory, since device
    memory leaves by raw pointers too).  The old memory goes back to the pool.  MXNet writes
    the last gradient op straight into the variable's gradient (request write); this is
    the same saving for rules that make their result."""
    cdef Chunk old = dst._chunk
    cdef Chunk new = src._chunk
    # references: each chunk's field and local here; src: finals' tuple and the caller's
    # variable (anything more is someone else's: a view, an export, a Function's stash)
    if (dst._stype != 0 or src._stype != 0 or dst._offset != 0 or src._offset != 0
            or dst._exports or src._exports or not old.host or not new.host
            or old.borrowed or new.borrowed or new.delay_alloc
            or old.data_nbytes != new.data_nbytes or dst._shape != src._shape
            or dst._dtype != src._dtype or old.ctx != new.ctx
            or Py_REFCNT(old) != 2 or Py_REFCNT(new) != 2 or Py_REFCNT(src) != 2):
        return False
    new.version = old.version
    dst._chunk = new
    new.bump()
    return True


def write_grads(dict finals):
    """Write each variable's gradient into its ``.grad`` by its request (after every rule
    ran, so that an error leaves them unchanged)."""
    cdef Node n
    cdef NDArray g
    cdef bint owned
    for seq, (n, g, owned) in finals.items():
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
                _invoke(_add_op, [n.grad, g], _add_attrs, n.grad, "inplace")
            else:
                assign(n.grad, _invoke(_add_op, [n.grad, g.tostype(n.grad.stype)],
                                       _add_attrs,
                                        None, None))
        elif not (owned and _take_over(n.grad, g)):
            assign(n.grad, g)
