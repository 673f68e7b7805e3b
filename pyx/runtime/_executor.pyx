"""The backward executor: compiles the recorded graph into a plan, then runs the plan.

``run(heads, head_grads, variables, retain_graph, create_graph)`` follows MXNet's
``Imperative::Backward`` (src/imperative/imperative.cc) and nnvm's ``PlanMemory``:

1. Collect the nodes that the heads reach, in creation order (reverse creation order is a
   topological order of the backward graph), and the graph's signature: each node's op,
   where its inputs come from, the descriptions of its outputs and of its inputs off the
   tape, each variable's request and gradient storage, the heads.
2. Find the :class:`Plan` of that signature in the cache, or build it: prune every input
   that leads to no variable needing a gradient; one *entry* per gradient that a rule (or
   a head) produces, with its reference count (the rules that read the gradient it
   contributes to: 1 for an operator's output, 0 for a variable's gradient or a gradient
   nobody needs), and a request fixed before anything runs: ``null`` where the count is
   zero (the rule is told, ``needs``, and skips it), ``write`` for the first contribution
   to a gradient, ``add`` for every later one (accumulated in place into the same
   buffer), ``inplace`` where the entry is computed into the out-grad buffer that its rule
   alone reads (a planned buffer, never the user's), and a variable's ``grad_req`` for the
   first contribution to its gradient.  Each dense gradient gets a storage slot: slots are
   assigned by size and lifetime, best fit among the slots whose last reader has run, so
   the pass holds exactly the plan's peak.
3. Run the plan: heads, then each node's rule, from the plan's flat arrays.  The common
   rules run at C level (``runtime._grad_kernels``: elementwise ``+ - * /`` with their
   scalar forms and leading-axis broadcasting, ``negative exp log tanh sigmoid relu sqrt
   square abs``, the reshapes, full ``sum``/``mean``, ``log_softmax`` and ``pick`` along
   the last axis, the softmax cross-entropy; ``_blas.matmul_into`` (MKL or NumPy's
   matmul) for ``dot``/``FullyConnected`` and NumPy's broadcasting for ``sum``/``mean`` over some axes), reading the saved values
   and writing each input's gradient into its slot under its request, with no Python
   frame and no pool allocation; any other rule is called in Python (the fallback, and
   the reference in tests).  A Python rule's result is a fresh array: a gradient whose
   first contribution it is owns no slot and holds that array (later contributions add
   into it; no rule computes in place into it), unless the rule computed it in place
   into its donated out-grad; a later Python result is added into the gradient.
4. Variables' gradients are formed in slots (or held as above) and written last, so that
   an error leaves every ``.grad`` as it was: ``.grad`` takes the memory of the slot (the
   slot gets ``.grad``'s old memory) or of the held array where nobody can tell (no view
   or export of either, nobody else holding the array), else it is copied;
   ``grad_req='add'`` adds.

A plan keeps its slot buffers and is cached by signature (MXNet's ``static_alloc``): a
steady-state training step's backward makes no pool call.  At most ``PLAN_CACHE_SIZE``
plans are kept; ``clear_plan_cache()`` (``autograd.clear_plan_cache``, and the allocator's
``empty_cache``) releases them.  Under ``create_graph`` nothing is planned: the rules run
in Python and are recorded, each gradient is an array of its own.  Sparse gradients are
not planned either (their size is known only when they are made): they are allocated as
they come and accumulated with ``add``.

The executor's scratch lives on the plan (a run in progress marks its plan busy; a
backward inside a rule gets a plan of its own), never on the tape's nodes.

Graph mode (the last section, ``GraphPlan``): a static graph's forward and backward as
one plan, for bound executors and static CachedOps; its backward is a :class:`Plan`
built from a probe recording, whose slots it shares with the forward's values.
"""

from time import perf_counter_ns

import weakref

import allocator
import numpy as np

cimport numpy as cnp
from allocator._pool cimport Pool
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport Py_REFCNT
from libc.string cimport memcpy, memmove, memset

from cython.parallel cimport prange

from runtime._blas cimport loop_threads, matmul_into
from runtime._desc cimport ArrayDesc
from runtime._grad_kernels cimport (EW_ABS, EW_COPY, EW_DIV, EW_DIV_RHS, EW_DIV_SCALAR, EW_MUL,
                                    EW_NEG, EW_RDIV_SCALAR, EW_RELU, EW_SCALE, EW_SIGMOID,
                                    EW_SQRT, EW_SQUARE, EW_TANH, LABEL_F32, LABEL_F64,
                                    LABEL_I32, LABEL_I64, ew_f32, ew_f64, fill_f32, fill_f64,
                                    log_softmax_f32, log_softmax_f64,
                                    pick_f32, pick_f64, relu_rowsum_f32, relu_rowsum_f64,
                                    rowsum_f32, rowsum_f64, softmax_ce_f32, softmax_ce_f64)
from runtime._imperative cimport add_into, invoke_parsed, profile_hook
from runtime._ndarray cimport STYPE_DEFAULT, Chunk, NDArray, assign, new_dense, np_view
from runtime._tape cimport Entry, Node
from runtime._types cimport REQ_ADD, REQ_INPLACE, REQ_NULL, REQ_WRITE, floating

from runtime._imperative import (invoke_stateful, is_recording, is_training, set_recording,
                                 set_training)
from runtime._ndarray import ones, zeros
from runtime._tape import mark_variable
from runtime.errors import NOT_IN_GRAPH

cnp.import_array()

REQUEST_NAMES = {REQ_NULL: "null", REQ_WRITE: "write", REQ_INPLACE: "inplace", REQ_ADD: "add"}

PLAN_CACHE_SIZE = 8

# The rule a step runs (C-level kinds; R_PY: the op's rule called in Python).
cdef enum:
    R_PY = 0
    R_UNARY = 1        # one input, elementwise kernel ``ew``
    R_BINARY = 2       # add, subtract, multiply, divide
    R_REDUCE = 3       # sum, mean
    R_DOT = 4
    R_FC = 5
    R_SOFTMAX_CE = 6
    R_LOG_SOFTMAX = 7  # over the last axis
    R_PICK = 8         # along the last axis

cdef enum:             # binary ops
    B_ADD = 0
    B_SUB = 1
    B_MUL = 2
    B_DIV = 3

cdef enum:             # what a unary kernel reads as ``a``
    READ_NONE = 0
    READ_IN = 1
    READ_OUT = 2

# op name -> (rule, kernel or binary op, what it reads)
_C_RULES = {
    "negative": (R_UNARY, EW_NEG, READ_NONE), "_rminus_scalar": (R_UNARY, EW_NEG, READ_NONE),
    "copy": (R_UNARY, EW_COPY, READ_NONE), "_plus_scalar": (R_UNARY, EW_COPY, READ_NONE),
    "_minus_scalar": (R_UNARY, EW_COPY, READ_NONE),
    "_mul_scalar": (R_UNARY, EW_SCALE, READ_NONE),
    "_div_scalar": (R_UNARY, EW_DIV_SCALAR, READ_NONE),
    "_rdiv_scalar": (R_UNARY, EW_RDIV_SCALAR, READ_OUT),
    "exp": (R_UNARY, EW_MUL, READ_OUT), "log": (R_UNARY, EW_DIV, READ_IN),
    "tanh": (R_UNARY, EW_TANH, READ_OUT), "sigmoid": (R_UNARY, EW_SIGMOID, READ_OUT),
    "relu": (R_UNARY, EW_RELU, READ_OUT), "sqrt": (R_UNARY, EW_SQRT, READ_OUT),
    "square": (R_UNARY, EW_SQUARE, READ_IN), "abs": (R_UNARY, EW_ABS, READ_IN),
    "add": (R_BINARY, B_ADD, READ_NONE), "elemwise_add": (R_BINARY, B_ADD, READ_NONE),
    "subtract": (R_BINARY, B_SUB, READ_NONE), "elemwise_sub": (R_BINARY, B_SUB, READ_NONE),
    "multiply": (R_BINARY, B_MUL, READ_NONE), "elemwise_mul": (R_BINARY, B_MUL, READ_NONE),
    "divide": (R_BINARY, B_DIV, READ_NONE), "elemwise_div": (R_BINARY, B_DIV, READ_NONE),
    "sum": (R_REDUCE, 0, READ_NONE), "mean": (R_REDUCE, 1, READ_NONE),
    "dot": (R_DOT, 0, READ_NONE), "FullyConnected": (R_FC, 0, READ_NONE),
    "_softmax_ce_loss": (R_SOFTMAX_CE, 0, READ_NONE),
    "softmax_cross_entropy": (R_SOFTMAX_CE, 1, READ_NONE),
    "log_softmax": (R_LOG_SOFTMAX, 0, READ_OUT), "pick": (R_PICK, 0, READ_NONE),
    "reshape": (R_UNARY, EW_COPY, READ_NONE), "expand_dims": (R_UNARY, EW_COPY, READ_NONE),
    "squeeze": (R_UNARY, EW_COPY, READ_NONE), "flatten": (R_UNARY, EW_COPY, READ_NONE),
}
# Activation's rule by act_type (the ones whose gradient reads the output)
_C_ACTIVATION = {"relu": _C_RULES["relu"], "sigmoid": _C_RULES["sigmoid"],
                 "tanh": _C_RULES["tanh"]}
# ops whose output is the input with another shape: their gradient is the out-grad with
# the input's shape, the same bytes (computed in place, it is no work at all)
_SAME_BYTES = frozenset(["reshape", "expand_dims", "squeeze", "flatten"])
# ops whose plan reads attributes (the axes of a reduction): part of the signature.  The
# other rules read their attributes when they run, so a new scalar needs no new plan.
_KEYED_BY_ATTRS = frozenset(["sum", "mean", "log_softmax", "pick", "Activation"])
_INDEX_TYPES = {np.dtype(np.float32): LABEL_F32, np.dtype(np.float64): LABEL_F64,
                np.dtype(np.int32): LABEL_I32, np.dtype(np.int64): LABEL_I64}

cdef object _add_op = None        # registry op that accumulates (set by runtime.ops)
cdef dict _add_attrs = {}
cdef object _reduced_axes = None  # runtime.ops.reduce.reduced_axes (set by runtime.ops)
cdef dict _takes_needs = {}       # gradient function -> whether it takes ``needs``
cdef bint _inplace_on = True
cdef bint _c_rules_on = True
cdef bint _fusion_on = True
cdef bint _backward_fusion_on = True
cdef dict _stats = {}
cdef object _last_plan = None
cdef dict _cache = {}             # signature -> Plan, oldest first


def set_ops(add_op, reduced_axes):
    """runtime.ops gives the accumulating operator and the reduction's axis rule at import
    (the executor sits below the registry and imports neither)."""
    global _add_op, _add_attrs, _reduced_axes
    _add_op = add_op
    _add_attrs = add_op.parse_attrs({})
    _reduced_axes = reduced_axes
    clear_plan_cache()


def set_inplace(bint on):
    """Allow the request ``inplace`` (default); tests compare plans without it."""
    global _inplace_on
    _inplace_on = on
    clear_plan_cache()


def set_c_rules(bint on):
    """Run the C-level rules (default); off, every rule runs in Python (tests compare)."""
    global _c_rules_on
    _c_rules_on = on
    clear_plan_cache()


def set_graph_fusion(bint on):
    """Fuse FullyConnected + relu in graph plans made from now on (default); tests and
    benchmarks compare with it off."""
    global _fusion_on
    _fusion_on = on


def set_backward_fusion(bint on):
    """Apply a relu's gradient in the pass of the FullyConnected below it that sums its
    bias's gradient (default); tests and benchmarks compare with it off."""
    global _backward_fusion_on
    _backward_fusion_on = on
    clear_plan_cache()


def clear_plan_cache():
    """Drop every cached plan and the slot buffers it keeps (back to the pool), and the
    buffers that graph plans keep for their next calls."""
    for plan in _cache.values():
        (<Plan>plan).release()
    _cache.clear()
    release_graph_states()


allocator.on_empty_cache(clear_plan_cache)


def plan_cache_info():
    """{'plans', 'max_plans', 'bytes'}: the cached plans and the bytes their slots hold."""
    return {"plans": len(_cache), "max_plans": PLAN_CACHE_SIZE,
            "bytes": sum((<Plan>p).held_bytes() for p in _cache.values())}


def last_stats():
    """What the last backward did (see ``runtime.autograd.last_backward_stats``)."""
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in _stats.items()}


def last_plan():
    """The plan of the last backward (None before the first, or after one that raised)."""
    return _last_plan


cdef bint _rule_takes_needs(object rule):
    # keyed by the plain function: a bound method (a Function's) is new on every access
    func = getattr(rule, "__func__", rule)
    cdef object known = _takes_needs.get(func)
    if known is None:
        code = getattr(func, "__code__", None)
        known = code is not None and "needs" in code.co_varnames[:code.co_argcount]
        _takes_needs[func] = known
    return known


# -- the plan ---------------------------------------------------------------------------

cdef struct EntryRec:
    int step           # the step whose rule produces it (-1: a head)
    int input          # the input of that step's node it is the gradient of (head: its number)
    int ref_count      # rules that read the gradient it contributes to
    int request        # REQ_*
    int last_use       # time of the last reader of its gradient (-1: none)
    int slot           # storage slot of its gradient (-1: none planned)
    int target         # the gradient it contributes to (-1: null)
    Py_ssize_t nbytes

cdef struct TargetRec:
    int node           # position of the node whose output it is the gradient of
    int out            # that output
    int var            # variables only: position in the plan's variable list, else -1
    int slot           # -1: not planned (allocated as it comes)
    int first          # time of its first contribution
    int last           # time of its reader (the end for a variable's gradient)
    int alias          # inplace: the target whose storage it continues (-1: none)
    Py_ssize_t nbytes

cdef struct StepRec:
    int node           # position in the collected node list
    int rule           # R_*
    int kind           # the kernel (EW_*), binary op (B_*), or mean (1) / sum (0)
    int reads          # READ_*
    int entry          # its first entry (one per input, in order)
    int n_in
    int outs           # first index into Plan.step_outs (one per output)
    int n_out
    int masks          # FullyConnected: the relu step whose gradient it applies (-1: none)
    bint deferred      # relu: its gradient is applied by the FullyConnected step below it


cdef void* _alloc(Py_ssize_t n, size_t size) except NULL:
    cdef void* p = PyMem_Malloc(max(n, 1) * size)
    if p == NULL:
        raise MemoryError("backward plan: out of memory for its tables")
    memset(p, 0, max(n, 1) * size)
    return p


cdef class Plan:
    """The compiled backward of one graph signature (see the module's docstring).

    Sequence of :class:`PlanEntry` (``len``, indexing, iteration), ``peak_bytes`` (the
    bytes its slots hold: what the pass holds beyond the forward's arrays),
    ``naive_peak_bytes`` (every planned gradient in a buffer of its own),
    ``fused_steps``; ``repr`` is a table.
    """
    cdef EntryRec* entries
    cdef TargetRec* targets
    cdef StepRec* steps
    cdef int* step_outs                    # per step output: its gradient's target or -1
    cdef int* heads                        # per head: its entry
    cdef Py_ssize_t n_entries, n_targets, n_steps, n_heads, n_slots
    cdef Py_ssize_t* slot_nbytes
    cdef list slot_ctx                     # context of each slot
    cdef list slot_chunks                  # Chunk of each slot (None until the first run)
    cdef list t_desc                       # ArrayDesc of each target's gradient
    cdef list views                        # per target: NDArray over its slot (or None)
    cdef list cur                          # per target: its gradient during a run
    cdef char* filled                      # per target during a run: written
    cdef char* owned                       # per target during a run: ours to write into
    cdef list step_extra                   # per step: what a rule reads once (see _build)
    cdef list e_ops                        # op name of each entry (None: a head)
    cdef list variables                    # node positions of the variables with a target
    cdef dict requests                     # entries by request name
    cdef readonly Py_ssize_t peak_bytes, naive_peak_bytes
    cdef bint create_graph, busy, grad_mode
    cdef object key                        # its signature (None: not cached)
    cdef list sk                           # per node: what _matches compares (see there)
    cdef list sk_heads

    def __dealloc__(self):
        PyMem_Free(self.entries)
        PyMem_Free(self.targets)
        PyMem_Free(self.steps)
        PyMem_Free(self.step_outs)
        PyMem_Free(self.heads)
        PyMem_Free(self.slot_nbytes)
        PyMem_Free(self.filled)
        PyMem_Free(self.owned)

    cdef int release(self) except -1:
        """Give the slot buffers back (the plan makes them again if it runs)."""
        cdef Py_ssize_t s
        for s in range(self.n_slots):
            self.slot_chunks[s] = None
        for s in range(self.n_targets):
            self.views[s] = None
        return 0

    cdef Py_ssize_t held_bytes(self):
        cdef Py_ssize_t s, n = 0
        for s in range(self.n_slots):
            if self.slot_chunks[s] is not None:
                n += self.slot_nbytes[s]
        return n

    @property
    def slots(self):
        return self.n_slots

    @property
    def fused_steps(self):
        """FullyConnected steps that apply the relu above them (see ``_build``)."""
        cdef Py_ssize_t k, n = 0
        for k in range(self.n_steps):
            n += self.steps[k].masks >= 0
        return n

    def __len__(self):
        return self.n_entries

    def __getitem__(self, Py_ssize_t i):
        cdef EntryRec* e
        if i < 0:
            i += self.n_entries
        if not 0 <= i < self.n_entries:
            raise IndexError(f"plan entry index must be in [0, {self.n_entries}) (got {i})")
        e = &self.entries[i]
        return PlanEntry(self.e_ops[i], e.ref_count, REQUEST_NAMES[e.request],
                         None if e.slot < 0 else e.slot, e.nbytes)

    def __iter__(self):
        for i in range(self.n_entries):
            yield self[i]

    def __repr__(self):
        rows = [f"{'#':>3}  {'op':<20} {'ref_count':>9}  {'request':<8} {'slot':>4}  "
                f"{'nbytes':>10}"]
        for i, e in enumerate(self):
            rows.append(f"{i:>3}  {str(e.op):<20} {e.ref_count:>9}  {e.request:<8} "
                        f"{'-' if e.slot is None else e.slot:>4}  {e.nbytes:>10}")
        rows.append(f"slots {self.n_slots}, peak_bytes {self.peak_bytes}, naive_peak_bytes "
                    f"{self.naive_peak_bytes}")
        return "\n".join(rows)


class PlanEntry(tuple):
    """One entry of a backward plan: ``op`` (the producing rule's op name, or None for a
    head gradient), ``ref_count``, ``request``, ``slot`` (None: no planned buffer) and
    ``nbytes``."""
    __slots__ = ()
    _fields = ("op", "ref_count", "request", "slot", "nbytes")

    def __new__(cls, op, ref_count, request, slot, nbytes):
        return tuple.__new__(cls, (op, ref_count, request, slot, nbytes))

    op = property(lambda self: self[0])
    ref_count = property(lambda self: self[1])
    request = property(lambda self: self[2])
    slot = property(lambda self: self[3])
    nbytes = property(lambda self: self[4])

    def __repr__(self):
        return ("PlanEntry(" + ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
                + ")")


# -- collection and signature -------------------------------------------------------------

cdef list _collect(list heads, dict pos):
    """The nodes the heads reach, every node after its inputs' (a depth-first post-order:
    the same graph gives the same order); ``pos`` receives each one's position."""
    cdef list found = []
    cdef list stack = []
    cdef Node n, m
    cdef object e
    cdef Py_ssize_t i
    for i in range(len(heads) - 1, -1, -1):
        stack.append((<Entry>heads[i]).node)
    while stack:
        n = stack.pop()
        if n is None:                      # a node's inputs are done: the node follows
            n = stack.pop()
            pos[id(n)] = len(found)
            found.append(n)
            continue
        if id(n) in pos:
            continue
        pos[id(n)] = -1
        stack.append(n)
        stack.append(None)
        for i in range(len(n.inputs) - 1, -1, -1):
            e = n.inputs[i]
            if e is not None:
                m = (<Entry>e).node
                if id(m) not in pos:
                    stack.append(m)
    return found


cdef dict _op_infos = {}          # registry op -> (a registry op, plan keyed by attributes)


cdef tuple _op_info(object op):
    cdef tuple info = _op_infos.get(op)
    if info is None:
        info = (getattr(op, "grad_reads", None) is not None,
                getattr(op, "name", None) in _KEYED_BY_ATTRS)
        if info[0]:
            _op_infos[op] = info
    return info


cdef inline tuple _dkey(ArrayDesc d):
    # the context by its fields: Context hashes and compares in Python
    ctx = d.ctx
    return (d.shape, d.dtype, d.stype, getattr(ctx, "device_type", None),
            getattr(ctx, "device_id", None))


cdef object _signature(list nodes, dict pos, list heads, list head_grads, set targets,
                       bint create_graph):
    """The graph's signature (None: not cacheable, a Function's node); raises for a node
    whose graph an earlier backward consumed."""
    cdef list key = [create_graph, targets is not None]
    cdef Node n
    cdef object x, d, last_desc = None, last_key = None
    cdef Py_ssize_t i
    cdef tuple info
    cacheable = True
    for n in nodes:
        if n.op is None:
            g = n.grad
            key.append((n.grad_req, n.seq in targets if targets is not None else None,
                        _dkey(n.out_descs[0]),
                        None if g is None else ((<NDArray>g)._stype, (<NDArray>g)._dtype)))
            continue
        if n.consumed:
            raise RuntimeError(NOT_IN_GRAPH + f" (backward: the graph of {n.name} was "
                               "consumed by an earlier backward pass)")
        info = _op_info(n.op)
        if not info[0]:
            cacheable = False          # a Function: a new op object per call
        links = []
        for i in range(len(n.inputs)):
            x = n.inputs[i]
            if x is not None:
                links.append((pos[id((<Entry>x).node)], (<Entry>x).index))
                continue
            d = n.in_descs[i]
            if d is not last_desc:     # ops of one shape share their description
                last_desc, last_key = d, (_dkey(d),)
            links.append(last_key)
        if len(n.out_descs) == 1:
            d = n.out_descs[0]
            if d is not last_desc:
                last_desc, last_key = d, (_dkey(d),)
            outs = last_key
        else:
            outs = tuple([_dkey(d) for d in n.out_descs])
        if info[1]:
            try:
                attrs = tuple(sorted(n.attrs.items()))
                hash(attrs)
            except TypeError:
                cacheable = False
                attrs = None
        else:
            attrs = None
        key.append((n.op, tuple(links), outs, attrs))
    for i in range(len(heads)):
        x = (<NDArray>heads[i])._entry
        g = head_grads[i] if head_grads is not None else None
        key.append((pos[id((<Entry>x).node)], (<Entry>x).index,
                    None if g is None else ((<NDArray>g)._stype, (<NDArray>g)._shape)))
    return tuple(key) if cacheable else None


# -- building a plan ----------------------------------------------------------------------

cdef bint _is_host(object ctx):
    return getattr(ctx, "device_type", "cpu") == "cpu"


cdef Py_ssize_t _nbytes(ArrayDesc d):
    cdef Py_ssize_t n = np.dtype(d.dtype).itemsize
    for s in d.shape:
        n *= s
    return n


cdef bint _plannable(ArrayDesc d):
    return d.stype == "default" and _is_host(d.ctx) and np.dtype(d.dtype).kind in "biuf"


cdef tuple _c_rule(Node n):
    """(rule, kind, reads, extra) of node ``n``'s C-level rule, or (R_PY, 0, 0, None)."""
    cdef ArrayDesc d, o
    name = getattr(n.op, "name", None)
    spec = _C_RULES.get(name) if _c_rules_on else None
    if name == "Activation" and _c_rules_on:
        spec = _C_ACTIVATION.get(n.attrs.get("act_type"))
    if spec is None or getattr(n.op, "grad_reads", None) is None or len(n.out_descs) != 1:
        return (R_PY, 0, 0, None)
    rule, kind, reads = spec
    o = n.out_descs[0]
    dt = np.dtype(o.dtype)
    if dt != np.float32 and dt != np.float64:
        return (R_PY, 0, 0, None)
    for d in n.in_descs:
        if d.stype != "default" or not _is_host(d.ctx):
            return (R_PY, 0, 0, None)
        if rule != R_SOFTMAX_CE and rule != R_PICK and np.dtype(d.dtype) != dt:
            return (R_PY, 0, 0, None)
    if o.stype != "default" or not _is_host(o.ctx):
        return (R_PY, 0, 0, None)
    extra = None
    if rule == R_UNARY:
        d = n.in_descs[0]
        if len(n.in_descs) != 1 or (d.shape != o.shape and not (
                name in _SAME_BYTES and _prod(d.shape) == _prod(o.shape))):
            return (R_PY, 0, 0, None)
    elif rule == R_BINARY:
        # per input: None (its shape), or (rows, cols) of the out-grad summed over rows
        extra = []
        for d in n.in_descs:
            if d.shape == o.shape:
                extra.append(None)
                continue
            if kind != B_ADD and kind != B_SUB:
                return (R_PY, 0, 0, None)
            lead = _leading(d.shape, o.shape)
            if lead < 0:
                return (R_PY, 0, 0, None)
            size = _prod(o.shape)
            extra.append((_prod(o.shape[:lead]), size // max(_prod(o.shape[:lead]), 1)))
    elif rule == R_REDUCE:
        d = n.in_descs[0]
        axes = _reduced_axes(name, n.attrs, len(d.shape))
        count = _prod([d.shape[a] for a in axes])
        kd = tuple([1 if i in axes else s for i, s in enumerate(d.shape)])
        extra = (kd, float(max(count, 1)) if kind == 1 else 1.0)
    elif rule == R_DOT:
        if len((<ArrayDesc>n.in_descs[0]).shape) != 2 or \
                len((<ArrayDesc>n.in_descs[1]).shape) != 2:
            return (R_PY, 0, 0, None)
    elif rule == R_FC:
        if len((<ArrayDesc>n.in_descs[1]).shape) != 2:
            return (R_PY, 0, 0, None)
    elif rule == R_SOFTMAX_CE:
        d = n.in_descs[0]
        lt = np.dtype((<ArrayDesc>n.in_descs[1]).dtype)
        if len(d.shape) != 2 or lt not in (np.float32, np.float64, np.int32, np.int64):
            return (R_PY, 0, 0, None)
        extra = _INDEX_TYPES[lt]
    elif rule == R_LOG_SOFTMAX:
        d = n.in_descs[0]
        a = n.attrs
        if (len(d.shape) == 0 or a.get("axis") not in (-1, len(d.shape) - 1)
                or a.get("temperature") not in (None, 1.0) or a.get("use_length")
                or np.dtype(d.dtype) != dt):
            return (R_PY, 0, 0, None)
    elif rule == R_PICK:
        d = n.in_descs[0]
        it = np.dtype((<ArrayDesc>n.in_descs[1]).dtype)
        if (len(d.shape) == 0 or n.attrs.get("axis") not in (-1, len(d.shape) - 1)
                or it not in _INDEX_TYPES or np.dtype(d.dtype) != dt):
            return (R_PY, 0, 0, None)
        extra = (_INDEX_TYPES[it], n.attrs.get("mode") == "wrap", d.shape[len(d.shape) - 1])
    return (rule, kind, reads, extra)


cdef Py_ssize_t _prod(object shape):
    cdef Py_ssize_t n = 1
    for s in shape:
        n *= s
    return n


cdef Py_ssize_t _leading(tuple shape, tuple out):
    """How many leading axes of ``out`` an input of ``shape`` is broadcast over (its
    shape, leading 1s dropped, is the rest of ``out``), or -1 for another broadcast."""
    cdef tuple s = shape
    while len(s) and s[0] == 1:
        s = s[1:]
    if len(s) > len(out) or tuple(out[len(out) - len(s):]) != s:
        return -1
    return len(out) - len(s)


cdef bint _inplace_ok(Node n, tuple rule, Py_ssize_t j):
    """Whether input ``j``'s gradient may be computed into the out-grad's buffer."""
    if rule[0] == R_UNARY or rule[0] == R_BINARY or rule[0] == R_LOG_SOFTMAX:
        return rule[0] != R_BINARY or rule[3][j] is None
    return bool(getattr(n.op, "grad_donates", False)) and len(n.inputs) == 1


cdef bint _passes_through(tuple rule, Py_ssize_t j):
    """Whether input ``j``'s gradient under C-level ``rule`` is the out-grad unchanged."""
    if rule[0] == R_UNARY:
        return rule[1] == EW_COPY
    return rule[0] == R_BINARY and rule[3][j] is None and (
        rule[1] == B_ADD or (rule[1] == B_SUB and j == 0))


cdef Py_ssize_t _target_of(dict tmap, list t_list, list variables, list nodes,
                           Py_ssize_t node_pos, Py_ssize_t out, Py_ssize_t time) except -1:
    """The target (gradient) of output ``out`` of node ``node_pos``, made at ``time``
    when new: [node, out, variable or -1, first time, inplace alias, contributions]."""
    key = (node_pos, out)
    t = tmap.get(key)
    if t is None:
        t = tmap[key] = len(t_list)
        var = -1
        if (<Node>nodes[node_pos]).op is None:
            var = len(variables)
            variables.append(node_pos)
        t_list.append([node_pos, out, var, time, -1, 0])
    return t


cdef Plan _build(list nodes, dict pos, list heads, list head_grads, set targets,
                 bint create_graph):
    cdef Plan p = Plan.__new__(Plan)
    cdef Py_ssize_t i, j, k, t, e_i, n_nodes = len(nodes)
    cdef Node n, m
    cdef object x
    cdef bytearray needs = bytearray(n_nodes)
    cdef bint any_needed = False
    p.create_graph = create_graph
    p.grad_mode = targets is not None
    # which nodes lead to a variable that needs a gradient (creation order: inputs first)
    for i in range(n_nodes):
        n = nodes[i]
        if n.op is None:
            needs[i] = (n.seq in targets) if targets is not None else n.grad_req != REQ_NULL
        else:
            for x in n.inputs:
                if x is not None and needs[<Py_ssize_t>pos[id((<Entry>x).node)]]:
                    needs[i] = 1
                    break
    for x in heads:
        if needs[<Py_ssize_t>pos[id((<Entry>(<NDArray>x)._entry).node)]]:
            any_needed = True
    if not any_needed:
        raise RuntimeError("There are no inputs in computation graph that require gradients. "
                           "(backward: no head depends, through the recorded graph, on an "
                           "array attached with grad_req 'write' or 'add')")
    # entries in run order: heads (time 0), then each step k (time k + 1)
    tmap = {}                  # (node position, output) -> target
    t_list = []                # [node, out, var, first time, alias, contributions]
    e_list = []                # [step, input, target, request, op name]
    s_list = []                # (node, rule tuple, first entry, n_in, out targets)
    variables = []

    for i in range(len(heads)):
        x = (<NDArray>heads[i])._entry
        k = pos[id((<Entry>x).node)]
        t = _target_of(tmap, t_list, variables, nodes, k, (<Entry>x).index, 0) \
            if needs[k] else -1
        e_list.append([-1, i, t, None, None])
    for i in range(n_nodes - 1, -1, -1):
        n = nodes[i]
        if n.op is None or not needs[i]:
            continue
        outs = [tmap.get((i, j)) for j in range(len(n.out_descs))]
        if all(o is None for o in outs):
            continue           # no gradient reaches it
        if not (bool(getattr(n.op, "differentiable", True))
                and getattr(n.op, "gradient", None) is not None):
            raise RuntimeError(f"Operator {n.name} is non-differentiable because it didn't "
                               "register FGradient attribute. (backward: it has no gradient "
                               "rule, and a gradient must flow through it here)")
        k = len(s_list)
        rule = (R_PY, 0, 0, None) if create_graph else _c_rule(n)
        first = len(e_list)
        for j in range(len(n.inputs)):
            x = n.inputs[j]
            t = -1
            if x is not None and needs[<Py_ssize_t>pos[id((<Entry>x).node)]]:
                t = _target_of(tmap, t_list, variables, nodes, pos[id((<Entry>x).node)],
                               (<Entry>x).index, k + 1)
            e_list.append([k, j, t, None, n.name])
        s_list.append((i, rule, first, len(n.inputs), outs))
    n_steps = len(s_list)
    # requests: null where no rule reads it, else first write (or the variable's add,
    # or inplace), then add
    last_time = {}
    for k in range(n_steps):
        for o in s_list[k][4]:
            if o is not None:
                last_time[o] = k + 1
    python_first = {}         # target -> its first contribution, when a Python rule makes
                              # it (a rule writing into given buffers, ``grad_into``, aside)
    for e in e_list:
        t = e[2]
        if t < 0:
            e[3] = REQ_NULL
            continue
        tr = t_list[t]
        first_contribution = tr[5] == 0
        tr[5] += 1
        if (first_contribution and e[0] >= 0 and s_list[e[0]][1][0] == R_PY
                and not getattr((<Node>nodes[s_list[e[0]][0]]).op, "grad_into", False)):
            python_first[t] = e
        if not first_contribution:
            e[3] = REQ_ADD
        elif tr[2] >= 0 and targets is None and (<Node>nodes[tr[0]]).grad_req == 3:
            e[3] = REQ_ADD
        else:
            e[3] = REQ_WRITE
    # descriptions and whether each gradient is planned
    t_desc = []
    planned = []
    for t, tr in enumerate(t_list):
        m = nodes[tr[0]]
        d = m.out_descs[tr[1]]
        t_desc.append(d)
        ok = not create_graph and _plannable(d)
        if tr[2] >= 0:                # a variable: its .grad dense, and backward writes it
            ok = ok and targets is None and m.grad is not None and \
                (<NDArray>m.grad)._stype == STYPE_DEFAULT
        else:                         # read by a registry rule (a Function could keep it)
            ok = ok and getattr(m.op, "grad_reads", None) is not None
        planned.append(ok)
    # inplace: a first contribution computed into the out-grad its rule alone reads (a
    # single-output node; the entry of the out-grad's dtype and size): the last needing
    # input, or one before it whose gradient is the out-grad itself (add's, subtract's
    # lhs: the rule then writes nothing there, and the later inputs read it unchanged)
    if _inplace_on and not create_graph:
        for k in range(n_steps):
            i, rule, first, n_in, outs = s_list[k]
            if len(outs) != 1 or outs[0] is None or not planned[outs[0]]:
                continue
            held = python_first.get(outs[0])
            if held is not None and held[3] != REQ_INPLACE:
                continue      # the out-grad is a Python rule's result: held, not copied
            n = nodes[i]
            last = n_in - 1
            while last >= 0 and e_list[first + last][2] < 0:
                last -= 1
            for j in range(last, -1, -1):
                e = e_list[first + j]
                t = e[2]
                if t < 0 or not (j == last or _passes_through(rule, j)):
                    continue
                if (e[3] == REQ_WRITE and planned[t] and t_list[t][4] < 0
                        and np.dtype(t_desc[t].dtype) == np.dtype(t_desc[outs[0]].dtype)
                        and _nbytes(t_desc[t]) == _nbytes(t_desc[outs[0]])
                        and _inplace_ok(n, rule, j)):
                    e[3] = REQ_INPLACE
                    t_list[t][4] = outs[0]
                    break
    # a Python rule's result that is not computed in place is a fresh array: its target
    # holds it (and a variable's .grad takes its memory) rather than copying it into a
    # planned buffer, and no rule computes in place into it (above): a rule reading it
    # writes its own result beside it, which the copy would have needed too
    n_t = len(t_list)
    for t, e in python_first.items():
        if e[3] != REQ_INPLACE:
            planned[t] = False
    # a relu computed in place whose input is a FullyConnected's output that nothing else
    # reads: the FullyConnected's step applies the relu's gradient to its out-grad in the
    # pass that sums its bias's gradient (one pass over the out-grad fewer); the relu's
    # step only hands its out-grad on (the same buffer: inplace)
    masks = {}
    if _backward_fusion_on and not create_graph:
        step_of = {}
        for k in range(n_steps):
            outs = s_list[k][4]
            if len(outs) == 1 and outs[0] is not None:
                step_of[outs[0]] = k
        for k in range(n_steps):
            i, rule, first, n_in, outs = s_list[k]
            if rule[0] != R_UNARY or rule[1] != EW_RELU or n_in != 1:
                continue
            e = e_list[first]
            t = e[2]
            k2 = step_of.get(t, -1) if t >= 0 else -1
            if (k2 > k and e[3] == REQ_INPLACE and t_list[t][5] == 1
                    and s_list[k2][1][0] == R_FC and s_list[k2][3] == 3):
                masks[k2] = k
    # storage: groups of targets joined by inplace, assigned to slots by size and lifetime
    end = n_steps + 1
    group_of = list(range(n_t))
    for t in range(n_t):
        a = t_list[t][4]
        if a >= 0:
            group_of[t] = group_of[a]
    groups = {}
    for t in range(n_t):
        if not planned[t]:
            continue
        g = group_of[t]
        last = end if t_list[t][2] >= 0 else last_time.get(t, t_list[t][3])
        first_t = t_list[t][3]
        if g in groups:
            gr = groups[g]
            gr[0] = min(gr[0], first_t)
            gr[1] = max(gr[1], last)
        else:
            groups[g] = [first_t, last, _nbytes(t_desc[t]), t_desc[t].ctx]
    slot_of_group = {}
    slot_sizes, slot_last, slot_ctx = [], [], []
    naive = 0
    for t in range(n_t):
        if planned[t]:
            naive += _nbytes(t_desc[t])
    order = sorted([(gr[0], g) for g, gr in groups.items()])
    for first_t, g in order:
        _, last, nb, ctx = groups[g]
        best = -1
        for s in range(len(slot_sizes)):
            if slot_last[s] < first_t and slot_ctx[s] == ctx and slot_sizes[s] >= nb and (
                    best < 0 or slot_sizes[s] < slot_sizes[best]):
                best = s
        if best < 0:
            best = len(slot_sizes)
            slot_sizes.append(nb)
            slot_last.append(last)
            slot_ctx.append(ctx)
        else:
            slot_last[best] = last
        slot_of_group[g] = best
    # flat tables
    p.n_entries = len(e_list)
    p.n_targets = n_t
    p.n_steps = n_steps
    p.n_heads = len(heads)
    p.n_slots = len(slot_sizes)
    p.entries = <EntryRec*>_alloc(p.n_entries, sizeof(EntryRec))
    p.targets = <TargetRec*>_alloc(n_t, sizeof(TargetRec))
    p.steps = <StepRec*>_alloc(n_steps, sizeof(StepRec))
    p.heads = <int*>_alloc(p.n_heads, sizeof(int))
    p.slot_nbytes = <Py_ssize_t*>_alloc(p.n_slots, sizeof(Py_ssize_t))
    p.filled = <char*>_alloc(n_t, 1)
    p.owned = <char*>_alloc(n_t, 1)
    n_outs = sum(len(s[4]) for s in s_list)
    p.step_outs = <int*>_alloc(n_outs, sizeof(int))
    for s in range(p.n_slots):
        p.slot_nbytes[s] = slot_sizes[s]
    p.slot_ctx = slot_ctx
    p.slot_chunks = [None] * p.n_slots
    p.t_desc = t_desc
    p.views = [None] * n_t
    p.cur = [None] * n_t
    p.variables = variables
    for t in range(n_t):
        tr = t_list[t]
        p.targets[t].node = tr[0]
        p.targets[t].out = tr[1]
        p.targets[t].var = tr[2]
        p.targets[t].first = tr[3]
        p.targets[t].last = end if tr[2] >= 0 else last_time.get(t, tr[3])
        p.targets[t].alias = tr[4]
        p.targets[t].nbytes = _nbytes(t_desc[t])
        p.targets[t].slot = slot_of_group[group_of[t]] if planned[t] else -1
    p.e_ops = []
    for e_i in range(p.n_entries):
        e = e_list[e_i]
        t = e[2]
        p.entries[e_i].step = e[0]
        p.entries[e_i].input = e[1]
        p.entries[e_i].target = t
        p.entries[e_i].request = e[3]
        p.entries[e_i].slot = p.targets[t].slot if t >= 0 else -1
        p.entries[e_i].nbytes = p.targets[t].nbytes if t >= 0 else 0
        p.entries[e_i].last_use = p.targets[t].last if t >= 0 else -1
        # an operator's output gradient is read by its rule; a variable's by nobody
        p.entries[e_i].ref_count = 1 if t >= 0 and p.targets[t].var < 0 else 0
        if e[0] < 0:
            p.heads[e[1]] = e_i
        p.e_ops.append(e[4])
    p.step_extra = []
    j = 0
    for k in range(n_steps):
        i, rule, first, n_in, outs = s_list[k]
        p.steps[k].node = i
        p.steps[k].rule = rule[0]
        p.steps[k].kind = rule[1]
        p.steps[k].reads = rule[2]
        p.steps[k].entry = first
        p.steps[k].n_in = n_in
        p.steps[k].outs = j
        p.steps[k].n_out = len(outs)
        p.steps[k].masks = masks.get(k, -1)
        p.steps[k].deferred = False
        for o in outs:
            p.step_outs[j] = -1 if o is None else o
            j += 1
        p.step_extra.append(rule[3])
    for k in masks.values():
        p.steps[k].deferred = True
    p.requests = {"null": 0, "write": 0, "inplace": 0, "add": 0}
    for e_i in range(p.n_entries):
        p.requests[REQUEST_NAMES[p.entries[e_i].request]] += 1
    p.peak_bytes = sum(slot_sizes)
    p.naive_peak_bytes = naive
    return p


# -- running a plan -----------------------------------------------------------------------

cdef inline char* _ptr(NDArray a):
    return <char*>(a._chunk.ptr() + a._offset)


cdef NDArray _view(Chunk c, ArrayDesc d):
    """An NDArray over the start of chunk ``c`` with ``d``'s shape and dtype."""
    cdef NDArray v = NDArray.__new__(NDArray)
    v._chunk = c
    v._shape = d.shape
    v._dtype = np.dtype(d.dtype)
    v._offset = 0
    return v


cdef int _bind(Plan p) except -1:
    """Make the slot buffers (first run, or after a release) and each target's view."""
    cdef Py_ssize_t s, t
    cdef NDArray buf
    cdef Chunk c
    for s in range(p.n_slots):
        if p.slot_chunks[s] is None:
            buf = new_dense((p.slot_nbytes[s],), np.dtype(np.uint8), p.slot_ctx[s], 0)
            buf._chunk.plan_slot = True
            p.slot_chunks[s] = buf._chunk
    for t in range(p.n_targets):
        s = p.targets[t].slot
        p.filled[t] = 0
        if s < 0:
            p.owned[t] = 0
            p.cur[t] = None
            continue
        c = p.slot_chunks[s]
        v = p.views[t]
        if v is None or (<NDArray>v)._chunk is not c:
            v = p.views[t] = _view(c, p.t_desc[t])
        p.cur[t] = v
        p.owned[t] = 1
    return 0


cdef int _copy_into(NDArray dst, NDArray src) except -1:
    """dst[...] = src (dst a dense planned buffer)."""
    if src._stype != STYPE_DEFAULT:
        src = src.tostype("default")
    if src._chunk.host and src._dtype is dst._dtype and src._shape == dst._shape:
        memmove(_ptr(dst), _ptr(src), src._size() * (<cnp.dtype>src._dtype).itemsize)
        dst._chunk.bump()
    else:
        assign(dst, src)
    return 0


cdef int _add_to(NDArray dst, NDArray src) except -1:
    """dst += src (dst a dense buffer the run owns)."""
    if src._stype != STYPE_DEFAULT:
        src = src.tostype("default")
    if not add_into(dst, src):
        invoke_parsed(_add_op, [dst, src], _add_attrs, dst, "inplace")
    return 0


cdef int _contribute(Plan p, Py_ssize_t t, NDArray g) except -1:
    """Contribution ``g`` (a rule's result, or a head gradient) to target ``t``."""
    cdef NDArray buf
    if p.targets[t].slot >= 0:
        buf = p.cur[t]
        if g is buf or (g._chunk is buf._chunk and g._offset == 0 and g._shape == buf._shape
                        and g._dtype is buf._dtype):
            pass                              # the rule wrote into its donated out-grad
        elif p.filled[t]:
            _add_to(buf, g)
        else:
            _copy_into(buf, g)
        p.filled[t] = 1
        return 0
    buf = p.cur[t]
    if buf is None:
        if g._chunk.plan_slot:                # never hand a planned buffer on
            g = g.copy()
            p.owned[t] = 1
        p.cur[t] = g
        p.filled[t] = 1
        return 0
    if p.owned[t] and not p.create_graph and buf._stype == STYPE_DEFAULT \
            and g._stype == STYPE_DEFAULT:
        _add_to(buf, g)
        return 0
    p.cur[t] = invoke_parsed(_add_op, [buf, g], _add_attrs, None, None)
    p.owned[t] = 1
    return 0


cdef NDArray _dest(Plan p, Py_ssize_t t, bint* add):
    """Where a C rule writes target ``t``'s contribution; ``add``: accumulate there."""
    cdef NDArray buf = p.cur[t]
    cdef ArrayDesc d
    if p.targets[t].slot >= 0:
        add[0] = p.filled[t] != 0
        return buf
    if buf is None or not p.owned[t]:
        d = p.t_desc[t]
        add[0] = False
        return new_dense(d.shape, np.dtype(d.dtype), d.ctx, 0)
    add[0] = True
    return buf


cdef int _done(Plan p, Py_ssize_t t, NDArray dst) except -1:
    """After a C rule wrote target ``t``'s contribution into ``dst`` (from _dest)."""
    cdef NDArray buf = p.cur[t]
    dst._chunk.bump()
    if p.targets[t].slot >= 0 or dst is buf:
        p.filled[t] = 1
        return 0
    if buf is None:
        p.cur[t] = dst
        p.owned[t] = 1
    else:                                     # a gradient the run does not own
        p.cur[t] = invoke_parsed(_add_op, [buf, dst], _add_attrs, None, None)
        p.owned[t] = 1
    p.filled[t] = 1
    return 0


cdef NDArray _saved(Node n, bint outputs, Py_ssize_t i):
    return n.value(outputs, i, False)


cdef int _ew(bint f64, int kind, NDArray out, NDArray g, NDArray a, NDArray b, double s,
             bint add) except -1:
    cdef Py_ssize_t size = g._size()
    cdef char* pa = NULL
    cdef char* pb = NULL
    if a is not None:
        pa = _ptr(a)
    if b is not None:
        pb = _ptr(b)
    cdef char* po = _ptr(out)
    cdef char* pg = _ptr(g)
    cdef int nt = loop_threads(size), t
    cdef Py_ssize_t part
    if nt <= 1:
        _ew_block(f64, kind, po, pg, pa, pb, s, 0, size, add)
        return 0
    part = ((size + nt - 1) // nt + 63) & ~(<Py_ssize_t>63)
    with nogil:
        for t in prange(nt, num_threads=nt, schedule="static"):
            _ew_block(f64, kind, po, pg, pa, pb, s, t * part, min(size, (t + 1) * part), add)
    return 0


cdef void _ew_block(bint f64, int kind, char* po, char* pg, char* pa, char* pb, double s,
                    Py_ssize_t lo, Py_ssize_t hi, bint add) noexcept nogil:
    """Elements lo:hi of an elementwise gradient kernel (a block of the team's split)."""
    cdef Py_ssize_t isz = 8 if f64 else 4
    if hi <= lo:
        return
    po += lo * isz
    pg += lo * isz
    if pa != NULL:
        pa += lo * isz
    if pb != NULL:
        pb += lo * isz
    if f64:
        ew_f64(kind, <double*>po, <double*>pg, <double*>pa, <double*>pb, s, hi - lo, add)
    else:
        ew_f32(kind, <float*>po, <float*>pg, <float*>pa, <float*>pb, s, hi - lo, add)


cdef int _relu_rowsum(bint f64, NDArray out, NDArray g, NDArray a, bint add) except -1:
    """relu's gradient into ``g`` in place (``a`` the relu's output, of g's shape) and,
    with ``out``, g's row sums (over the last axis) into ``out``, in one pass."""
    cdef Py_ssize_t cols = a._shape[len(a._shape) - 1] if len(a._shape) else 1
    cdef Py_ssize_t rows = a._size() // cols if cols else 0
    if f64:
        relu_rowsum_f64(<double*>_ptr(out) if out is not None else NULL, <double*>_ptr(g),
                        <double*>_ptr(a), rows, cols, add)
    else:
        relu_rowsum_f32(<float*>_ptr(out) if out is not None else NULL, <float*>_ptr(g),
                        <float*>_ptr(a), rows, cols, add)
    return 0


cdef int _rowsum(bint f64, NDArray out, NDArray g, tuple rc, double s, bint add) except -1:
    cdef Py_ssize_t rows = rc[0], cols = rc[1]
    if f64:
        rowsum_f64(<double*>_ptr(out), <double*>_ptr(g), rows, cols, s, add)
    else:
        rowsum_f32(<float*>_ptr(out), <float*>_ptr(g), rows, cols, s, add)
    return 0


cdef int _gemm(bint ta, bint tb, int m, int n, int k, NDArray a, NDArray b, NDArray c,
               bint add) except -1:
    """Row-major c (m, n) (+)= op(a) @ op(b), ``ta``/``tb``: a is stored (k, m) / b (n, k).
    ``_blas.matmul_into`` on views of the operands, the transposes as BLAS flags."""
    av = np_view(a).reshape((k, m) if ta else (m, k))
    bv = np_view(b).reshape((n, k) if tb else (k, n))
    matmul_into(av.T if ta else av, bv.T if tb else bv, np_view(c).reshape((m, n)), add)
    return 0


cdef int _run_c(Plan p, Py_ssize_t step, Node n, NDArray g, Node relu) except -1:
    """Step ``st``'s C-level rule: each needing input's gradient into its target.
    ``relu``: for a FullyConnected step that applies a relu's gradient (``masks``), the
    relu's node."""
    cdef Py_ssize_t j, t, e
    cdef StepRec* st = &p.steps[step]
    cdef int kind = st.kind
    cdef bint add = False, f64 = (<cnp.dtype>g._dtype).itemsize == 8
    cdef NDArray dst, a = None, b = None, x, w
    cdef object extra = p.step_extra[step]
    cdef int m, k, nn
    cdef bint ta, tb
    cdef double s = 0
    cdef Py_ssize_t jj
    cdef NDArray r = None
    if relu is not None:
        # the relu's gradient, applied to the out-grad in place; with the bias's gradient
        # when wanted (below), else alone here
        r = _saved(relu, True, 0)
        if p.entries[st.entry + 2].target < 0:
            _relu_rowsum(f64, None, g, r, False)
    for jj in range(st.n_in):
        # FullyConnected: the bias's row sums first, while the out-grad is still in cache
        # from the rule before (the products that follow read big operands)
        j = (jj + 2) % 3 if st.rule == R_FC and st.n_in == 3 else jj
        e = st.entry + j
        t = p.entries[e].target
        if t < 0 or (st.rule == R_PICK and j != 0):    # pick's index gets no gradient
            continue
        dst = _dest(p, t, &add)
        if st.rule == R_UNARY:
            if st.reads == READ_IN:
                a = _saved(n, False, 0)
            elif st.reads == READ_OUT:
                a = _saved(n, True, 0)
            if kind == EW_RDIV_SCALAR:
                b = _saved(n, False, 0)
            if kind == EW_SCALE or kind == EW_DIV_SCALAR:
                s = n.attrs["scalar"]
            if st.deferred and not add and _ptr(dst) == _ptr(g):
                pass            # the FullyConnected step below applies it (masks)
            elif kind != EW_COPY or add or _ptr(dst) != _ptr(g):
                _ew(f64, kind, dst, g, a, b, s, add)
        elif st.rule == R_BINARY:
            if extra[j] is not None:
                _rowsum(f64, dst, g, extra[j], -1.0 if kind == B_SUB and j == 1 else 1.0, add)
            elif kind == B_ADD or (kind == B_SUB and j == 0):
                if add or _ptr(dst) != _ptr(g):        # in place: nothing to write
                    _ew(f64, EW_COPY, dst, g, None, None, 0, add)
            elif kind == B_SUB:
                _ew(f64, EW_NEG, dst, g, None, None, 0, add)
            elif kind == B_MUL:
                _ew(f64, EW_MUL, dst, g, _saved(n, False, 1 - j), None, 0, add)
            elif j == 0:                     # divide: g / rhs
                _ew(f64, EW_DIV, dst, g, _saved(n, False, 1), None, 0, add)
            else:                            # divide: -g * lhs / rhs^2
                _ew(f64, EW_DIV_RHS, dst, g, _saved(n, False, 0), _saved(n, False, 1), 0, add)
        elif st.rule == R_REDUCE:
            _reduce_grad(f64, dst, g, extra, add)
        elif st.rule == R_DOT:
            x, w = _saved(n, False, 0), _saved(n, False, 1)
            ta, tb = n.attrs["transpose_a"], n.attrs["transpose_b"]
            _dot_grad(j, ta, tb, x, w, g, dst, add)
        elif st.rule == R_FC:
            # out (rows, nh) = data (rows, k) @ weight.T (nh, k) + bias
            nn = (<ArrayDesc>n.in_descs[1]).shape[0]
            k = (<ArrayDesc>n.in_descs[1]).shape[1]
            m = g._size() // nn if nn else 0
            if j == 0:                       # d data = g @ weight
                _gemm(False, False, m, k, nn, g, _saved(n, False, 1), dst, add)
            elif j == 1:                     # d weight = g.T @ data
                _gemm(True, False, nn, k, m, g, _saved(n, False, 0), dst, add)
            elif r is not None:              # the relu's gradient, and d bias
                _relu_rowsum(f64, dst, g, r, add)
            else:                            # d bias = g summed over rows
                _rowsum(f64, dst, g, (m, nn), 1.0, add)
        elif st.rule == R_SOFTMAX_CE:
            _softmax_ce_grad(f64, n, kind, extra, g, dst, add)
        elif st.rule == R_LOG_SOFTMAX:
            a = _saved(n, True, 0)
            k = a._shape[len(a._shape) - 1]
            m = a._size() // k if k else 0
            if f64:
                log_softmax_f64(<double*>_ptr(dst), <double*>_ptr(g), <double*>_ptr(a), m, k,
                                add)
            else:
                log_softmax_f32(<float*>_ptr(dst), <float*>_ptr(g), <float*>_ptr(a), m, k,
                                add)
        elif st.rule == R_PICK:
            b = _saved(n, False, 1)
            k = extra[2]
            m = dst._size() // k if k else 0
            if f64:
                pick_f64(<double*>_ptr(dst), <double*>_ptr(g), _ptr(b), <int>extra[0],
                         <bint>extra[1], m, k, add)
            else:
                pick_f32(<float*>_ptr(dst), <float*>_ptr(g), _ptr(b), <int>extra[0],
                         <bint>extra[1], m, k, add)
        _done(p, t, dst)
    return 0


cdef int _softmax_ce_grad(bint f64, Node n, int summed, int ltype, NDArray g, NDArray dst,
                         bint add) except -1:
    """The data gradient of softmax_cross_entropy (``summed``: one out-grad for the batch;
    its forward's softmax used when it kept it) or of _softmax_ce_loss (one per row)."""
    cdef NDArray x = _saved(n, False, 0), label = _saved(n, False, 1)
    cdef Py_ssize_t rows = x._shape[0], k = x._shape[1]
    cdef cnp.ndarray prob = None
    cdef char* pp = NULL
    if summed and n.state is not None:
        kept = getattr(n.state, "prob", None)
        if isinstance(kept, np.ndarray) and kept.dtype == x._dtype and \
                kept.flags.c_contiguous and kept.shape == x._shape:
            prob = kept
            pp = <char*>cnp.PyArray_DATA(prob)
    if f64:
        softmax_ce_f64(<double*>_ptr(dst), <double*>_ptr(x), <double*>pp, _ptr(label), ltype,
                       <double*>_ptr(g), 0 if summed else 1, rows, k, add)
    else:
        softmax_ce_f32(<float*>_ptr(dst), <float*>_ptr(x), <float*>pp, _ptr(label), ltype,
                       <float*>_ptr(g), 0 if summed else 1, rows, k, add)
    return 0


cdef int _reduce_grad(bint f64, NDArray dst, NDArray g, tuple extra, bint add) except -1:
    """sum/mean: g broadcast over the reduced axes (divided by their count for mean)."""
    kd, count = extra
    if g._size() == 1:
        if f64:
            fill_f64(<double*>_ptr(dst), <double*>_ptr(g), count, dst._size(), add)
        else:
            fill_f32(<float*>_ptr(dst), <float*>_ptr(g), count, dst._size(), add)
        return 0
    out = np_view(dst)
    src = np_view(g).reshape(kd)
    if count != 1.0:
        src = np.divide(src, count)
    if add:
        np.add(out, src, out=out)
    else:
        np.copyto(out, src)
    return 0


cdef int _dot_grad(Py_ssize_t j, bint ta, bint tb, NDArray x, NDArray w, NDArray g,
                   NDArray dst, bint add) except -1:
    """dot's rule as _dot_grad in runtime.ops.linalg, 2-D operands: x (m, k) (stored
    (k, m) with ta), w (k, n) (stored (n, k) with tb), g (m, n)."""
    cdef int m = g._shape[0], n = g._shape[1]
    cdef int k = x._shape[0] if ta else x._shape[1]
    if j == 0:
        if not ta:                   # dx (m, k) = g @ op(w).T
            _gemm(False, not tb, m, k, n, g, w, dst, add)
        else:                        # dx (k, m) = op(w) @ g.T
            _gemm(tb, True, k, m, n, w, g, dst, add)
    else:
        if not tb:                   # dw (k, n) = op(x).T @ g
            _gemm(not ta, False, k, n, m, x, g, dst, add)
        else:                        # dw (n, k) = g.T @ op(x)
            _gemm(True, ta, n, k, m, g, x, dst, add)
    return 0


cdef int _run_py(Plan p, StepRec* st, Node n) except -1:
    """Step ``st``'s rule called in Python; its results contributed to their targets."""
    cdef Py_ssize_t j, t, n_in = st.n_in, n_out = st.n_out
    cdef list ograds = [None] * n_out
    cdef list mask = [False] * n_in
    cdef NDArray g, donated = None
    cdef ArrayDesc d
    for j in range(n_out):
        t = p.step_outs[st.outs + j]
        if t >= 0 and p.filled[t]:
            ograds[j] = p.cur[t]
        else:
            d = n.out_descs[j]
            ograds[j] = zeros(d.shape, ctx=d.ctx, dtype=d.dtype, stype=d.stype)
    for j in range(n_in):
        mask[j] = p.entries[st.entry + j].target >= 0
        if p.entries[st.entry + j].request == REQ_INPLACE:
            donated = ograds[0]
            donated._donated = True
    rule = n.op.gradient
    cg = p.create_graph
    ins = [n.value(False, j, cg) for j in range(n_in)]
    outs = [n.value(True, j, cg) for j in range(n_out)]
    try:
        if getattr(n.op, "grad_into", False):
            # a rule that can write its results into given buffers (a static graph's
            # backward): the planned buffers of the gradients not yet filled, so that
            # _contribute has nothing to copy
            into = [None] * n_in
            for j in range(n_in):
                t = p.entries[st.entry + j].target
                if (mask[j] and t >= 0 and p.targets[t].slot >= 0 and not p.filled[t]
                        and p.entries[st.entry + j].request != REQ_INPLACE):
                    into[j] = p.cur[t]
            in_grads = rule(n.attrs, ins, outs, ograds, n.state, into=into)
        elif n.state is None:
            in_grads = (rule(n.attrs, ins, outs, ograds, needs=mask) if _rule_takes_needs(rule)
                        else rule(n.attrs, ins, outs, ograds))
        else:
            in_grads = (rule(n.attrs, ins, outs, ograds, n.state, needs=mask)
                        if _rule_takes_needs(rule) else rule(n.attrs, ins, outs, ograds,
                                                              n.state))
    finally:
        if donated is not None:
            donated._donated = False
    if len(in_grads) != n_in:
        raise RuntimeError(f"backward: the gradient rule of {n.name} returned "
                           f"{len(in_grads)} gradients for {n_in} inputs")
    for j in range(n_in):
        if not mask[j] or in_grads[j] is None:
            continue
        g = in_grads[j]
        d = n.in_descs[j]
        if g._shape != d.shape:
            raise RuntimeError(f"backward: the gradient rule of {n.name} gave input {j} a "
                               f"gradient of shape {g.shape!r} for shape {d.shape!r}")
        _contribute(p, p.entries[st.entry + j].target, g)
    return 0


cdef int _run_steps(Plan p, list nodes, list heads, list head_grads,
                    bint retain_graph) except -1:
    cdef Py_ssize_t i, k, t, j
    cdef StepRec* st
    cdef Node n, relu
    cdef NDArray g, h, buf
    cdef bint any_grad
    cdef int n_run = 0
    cdef object hook = profile_hook()
    for i in range(p.n_heads):
        t = p.entries[p.heads[i]].target
        if t < 0:
            continue
        h = heads[i]
        g = head_grads[i] if head_grads is not None else None
        if g is not None and g._shape != h._shape:
            raise ValueError(f"backward: head_grads[{i}] must have the head's shape "
                             f"{h.shape!r} (got {g.shape!r})")
        if p.targets[t].slot >= 0:
            buf = p.cur[t]
            if g is None:
                if p.filled[t]:
                    np.add(np_view(buf), 1, out=np_view(buf))
                else:
                    buf._fill(1)
                buf._chunk.bump()
                p.filled[t] = 1
            else:
                _contribute(p, t, g)
        else:
            _contribute(p, t, g if g is not None else ones(h.shape, ctx=h.ctx, dtype=h.dtype))
    for k in range(p.n_steps):
        st = &p.steps[k]
        n = nodes[st.node]
        any_grad = False
        for j in range(st.n_out):
            t = p.step_outs[st.outs + j]
            if t >= 0 and p.filled[t]:
                any_grad = True
        if any_grad:
            if st.rule == R_PY:
                _run_py(p, st, n)
            else:
                relu = nodes[p.steps[st.masks].node] if st.masks >= 0 else None
                if hook is None:
                    _run_c(p, k, n, p.cur[p.step_outs[st.outs]], relu)
                else:       # a C-level rule shows in a profile as MXNet's backward op
                    start = perf_counter_ns()
                    _run_c(p, k, n, p.cur[p.step_outs[st.outs]], relu)
                    hook(f"_backward_{n.op.name}", (<ArrayDesc>n.out_descs[0]).ctx, start,
                         perf_counter_ns())
            n_run += 1
        for j in range(st.n_out):         # the out-grads' last reader has run
            t = p.step_outs[st.outs + j]
            if t >= 0 and p.targets[t].slot < 0:
                p.cur[t] = None
        if not retain_graph:
            # a deferred relu's output is read by the FullyConnected's step, which then
            # releases both
            if not st.deferred:
                n.release()
            if st.masks >= 0:
                (<Node>nodes[p.steps[st.masks].node]).release()
    return n_run


cdef bint _tradable(NDArray dst, NDArray src) except -1:
    """Whether nobody can tell if ``dst`` (a variable's .grad) takes the memory of ``src``:
    dense host memory of one size, ``dst`` its chunk's only array (no NDArray view, no
    export; the chunk referenced by ``dst`` and the caller's frame alone)."""
    cdef Chunk old = dst._chunk
    cdef Chunk new = src._chunk
    return not (dst._stype != STYPE_DEFAULT or dst._offset != 0 or dst._exports
                or not old.host or old.borrowed or old.delay_alloc or old.plan_slot
                or old.data_nbytes != new.data_nbytes or dst._dtype is not src._dtype
                or old.ctx != new.ctx or Py_REFCNT(old) != 3)


cdef bint _swap(NDArray dst, NDArray src, Plan p, Py_ssize_t slot) except -1:
    """Give ``dst`` (a variable's .grad) the memory of the planned buffer ``src`` and the
    plan the old memory of ``dst``, when nobody can tell (``_tradable``).  MXNet writes
    the last gradient op into the variable's gradient (request write); this gives the
    same saving while keeping every ``.grad`` untouched until the pass has succeeded."""
    cdef Chunk old = dst._chunk
    cdef Chunk new = src._chunk
    if not _tradable(dst, src):
        return False
    new.version = old.version
    new.plan_slot = False
    old.plan_slot = True
    dst._chunk = new
    new.bump()
    p.slot_chunks[slot] = old
    return True


cdef bint _take(NDArray dst, NDArray src) except -1:
    """Give ``dst`` (a variable's .grad) the memory of ``src``, a Python rule's fresh
    output, and ``src`` the old memory of ``dst`` (freed with ``src`` when the pass
    drops it), instead of copying: when nobody can tell (``_tradable``) and nobody but
    the pass holds ``src``: not recorded, its chunk referenced by ``src`` (and this
    frame) alone, ``src`` referenced by the pass's bookkeeping alone (its target's
    current value, its item of the finals list, the caller's loop variable)."""
    cdef Chunk old = dst._chunk
    cdef Chunk new = src._chunk
    if (src._stype != STYPE_DEFAULT or src._offset != 0 or src._exports or not new.host
            or new.borrowed or new.delay_alloc or src._entry is not None
            or Py_REFCNT(new) != 2 or Py_REFCNT(src) != 3 or not _tradable(dst, src)):
        return False
    new.version = old.version
    dst._chunk = new
    src._chunk = old
    new.bump()
    return True


cdef int _write_grads(Plan p, list nodes, list finals) except -1:
    """Write each variable's gradient into its ``.grad`` by its request (after every rule
    ran, so that an error leaves them unchanged)."""
    cdef Py_ssize_t t
    cdef Node n
    cdef NDArray g
    for t, g in finals:
        n = nodes[p.targets[t].node]
        if n.grad is None:
            continue
        if g is None:
            if n.grad_req == REQ_WRITE:
                if n.grad._stype == STYPE_DEFAULT:
                    n.grad._fill(0)
                    n.grad._chunk.bump()
                else:
                    assign(n.grad, zeros(n.grad.shape, ctx=n.grad.ctx, dtype=n.grad.dtype,
                                         stype=n.grad.stype))
            continue
        if g._dtype != n.grad._dtype:
            g = g.astype(n.grad.dtype)
        if n.grad_req == REQ_ADD:
            if n.grad._stype == STYPE_DEFAULT and g._stype == STYPE_DEFAULT:
                _add_to(n.grad, g)
            else:
                assign(n.grad, invoke_parsed(_add_op, [n.grad, g.tostype(n.grad.stype)],
                                             _add_attrs, None, None))
        elif g._chunk.plan_slot:
            if not (p.targets[t].slot >= 0 and g._chunk is p.slot_chunks[p.targets[t].slot]
                    and _swap(n.grad, g, p, p.targets[t].slot)):
                assign(n.grad, g)
        elif not _take(n.grad, g):
            assign(n.grad, g)
    return 0


cdef Py_ssize_t _pool_calls():
    cdef Py_ssize_t n = 0
    for pool in allocator.pools().values():
        if isinstance(pool, Pool):
            n += (<Pool>pool).n_hits + (<Pool>pool).n_misses
        else:
            s = pool.memory_stats()
            n += s["num_cache_hits"] + s["num_cache_misses"]
    return n


cdef inline bint _same_desc(ArrayDesc a, ArrayDesc b) except -1:
    if a is b:
        return True
    return (a.dtype is b.dtype and a.stype == b.stype and a.shape == b.shape
            and (a.ctx is b.ctx or _dkey(a)[3:] == _dkey(b)[3:]))


cdef int _sketch(Plan p, list nodes, dict pos, list heads, list head_grads,
                 set targets) except -1:
    """What ``_matches`` compares a graph with: the signature's contents, by node."""
    cdef Node n
    cdef list sk = []
    cdef Py_ssize_t i
    for n in nodes:
        if n.op is None:
            g = n.grad
            sk.append((None, n.grad_req, n.seq in targets if targets is not None else None,
                       n.out_descs[0],
                       -1 if g is None else (<NDArray>g)._stype,
                       None if g is None else (<NDArray>g)._dtype))
            continue
        links = []
        for i in range(len(n.inputs)):
            x = n.inputs[i]
            links.append(n.in_descs[i] if x is None else
                         (pos[id((<Entry>x).node)], (<Entry>x).index))
        sk.append((n.op, tuple(n.out_descs), tuple(links),
                   dict(n.attrs) if _op_info(n.op)[1] else None))
    p.sk = sk
    p.sk_heads = []
    for i in range(len(heads)):
        x = (<NDArray>heads[i])._entry
        g = head_grads[i] if head_grads is not None else None
        p.sk_heads.append((pos[id((<Entry>x).node)], (<Entry>x).index,
                           None if g is None else ((<NDArray>g)._stype, (<NDArray>g)._shape)))
    return 0


cdef bint _matches(Plan p, list nodes, list heads, list head_grads, set targets,
                   bint create_graph) except -1:
    """Whether the graph has the plan's signature, compared in place (no key built):
    the short road of a training loop, which differentiates one graph step after step."""
    cdef Py_ssize_t i, j, n_nodes = len(nodes)
    cdef Node n
    cdef tuple rec, r
    cdef object x, g
    if (p.sk is None or p.create_graph != create_graph or p.grad_mode != (targets is not None)
            or len(p.sk) != n_nodes or len(p.sk_heads) != len(heads)):
        return False
    for i in range(n_nodes):
        n = nodes[i]
        rec = p.sk[i]
        if n.op is None:
            g = n.grad
            if (rec[0] is not None or n.grad_req != <int>rec[1]
                    or (targets is not None and (n.seq in targets) != rec[2])
                    or not _same_desc(n.out_descs[0], rec[3])
                    or (-1 if g is None else (<NDArray>g)._stype) != <int>rec[4]
                    or (g is not None and (<NDArray>g)._dtype is not rec[5])):
                return False
            continue
        if n.op is not rec[0] or len(n.out_descs) != len(<tuple>rec[1]) or \
                len(n.inputs) != len(<tuple>rec[2]):
            return False
        if n.consumed:
            raise RuntimeError(NOT_IN_GRAPH + f" (backward: the graph of {n.name} was "
                               "consumed by an earlier backward pass)")
        for j in range(len(n.out_descs)):
            if not _same_desc(n.out_descs[j], (<tuple>rec[1])[j]):
                return False
        for j in range(len(n.inputs)):
            x = n.inputs[j]
            y = (<tuple>rec[2])[j]
            if x is None:
                if type(y) is not ArrayDesc or not _same_desc(n.in_descs[j], y):
                    return False
            elif type(y) is not tuple or (<Entry>x).node is not nodes[<Py_ssize_t>(<tuple>y)[0]] \
                    or (<Entry>x).index != <Py_ssize_t>(<tuple>y)[1]:
                return False
        if rec[3] is not None and n.attrs != rec[3]:
            return False
    for i in range(len(heads)):
        x = (<NDArray>heads[i])._entry
        r = p.sk_heads[i]
        if (<Entry>x).node is not nodes[<Py_ssize_t>r[0]] or (<Entry>x).index != <Py_ssize_t>r[1]:
            return False
        g = head_grads[i] if head_grads is not None else None
        if (g is None) != (r[2] is None) or (g is not None and (
                (<NDArray>g)._stype != <int>r[2][0] or (<NDArray>g)._shape != r[2][1])):
            return False
    return True


cdef Plan _recent(list nodes, list heads, list head_grads, set targets, bint create_graph):
    """The most recently used cached plans (two at most) that the graph matches, or None."""
    cdef Py_ssize_t tried = 0
    for p in reversed(_cache.values()):
        if tried == 2:
            break
        tried += 1
        if not (<Plan>p).busy and _matches(p, nodes, heads, head_grads, targets,
                                           create_graph):
            return p
    return None


cdef Plan _plan_for(object key, list nodes, dict pos, list heads, list head_grads,
                    set targets, bint create_graph, bint* cached):
    cdef Plan p = None
    if key is not None:
        p = _cache.get(key)
        if p is not None and not p.busy:
            cached[0] = True
            del _cache[key]               # re-inserted last: the cache is oldest first
            _cache[key] = p
            return p
    cached[0] = False
    p = _build(nodes, pos, heads, head_grads, targets, create_graph)
    if key is not None and not create_graph and key not in _cache:
        p.key = key
        _sketch(p, nodes, pos, heads, head_grads, targets)
        while len(_cache) >= PLAN_CACHE_SIZE:
            old = _cache.pop(next(iter(_cache)))
            if not (<Plan>old).busy:          # a run in progress keeps what it holds
                (<Plan>old).release()
        _cache[key] = p
    return p


def run(list heads, list head_grads, list variables, bint retain_graph, bint create_graph):
    """Backward from ``heads`` (NDArrays on the tape) with ``head_grads`` (NDArray or None
    each).  ``variables`` None: gradients go to every variable's ``.grad`` by its
    ``grad_req`` (returns None); else the gradients of those variables are returned, one
    per variable (None where no gradient reached it), ``.grad`` untouched."""
    global _last_plan
    cdef list entries = []
    cdef set targets = None
    cdef Py_ssize_t i, t, calls
    cdef NDArray h
    cdef Plan p
    cdef bint cached = False
    cdef dict pos = {}
    _stats.clear()
    _last_plan = None
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
    nodes = _collect(entries, pos)
    if variables is not None:
        for i, v in enumerate(variables):
            if id((<Entry>(<NDArray>v)._entry).node) not in pos:
                raise ValueError(f"grad: variable {i} (shape {v.shape!r}) is not reached "
                                 "from the heads: the heads do not depend on it")
    calls = _pool_calls()
    p = _recent(nodes, heads, head_grads, targets, create_graph)
    if p is not None:
        key = p.key
        cached = True
        del _cache[key]                   # re-inserted last: the cache is oldest first
        _cache[key] = p
    else:
        key = _signature(nodes, pos, heads, head_grads, targets, create_graph)
        p = _plan_for(key, nodes, pos, heads, head_grads, targets, create_graph, &cached)
    p.busy = True
    try:
        _bind(p)
        n_run = _run_steps(p, nodes, heads, head_grads, retain_graph)
        finals = []
        for t in range(p.n_targets):
            if p.targets[t].var >= 0:
                finals.append((t, p.cur[t] if p.filled[t] else None))
        if variables is None:
            _write_grads(p, nodes, finals)
            result = None
        else:
            by_seq = {(<Node>nodes[p.targets[t].node]).seq: g for t, g in finals}
            result = []
            for v in variables:
                g = by_seq.get((<Entry>(<NDArray>v)._entry).node.seq)
                if g is not None and (<NDArray>g)._chunk.plan_slot:
                    g = g.copy()
                result.append(g)
    finally:
        p.busy = False
        for t in range(p.n_targets):
            p.cur[t] = None
        if key is None or _cache.get(key) is not p:
            p.release()                   # not kept: its buffers go back now
    _stats.update(nodes=n_run, entries=p.n_entries, requests=dict(p.requests),
                  pool_calls=_pool_calls() - calls, slots=p.n_slots,
                  plan_peak_bytes=p.peak_bytes, naive_peak_bytes=p.naive_peak_bytes,
                  plan_cached=cached)
    _last_plan = p
    return result


# -- graph mode: a static graph's forward and backward as one plan ------------------------
#
# A bound executor, or a CachedOp under static_alloc and static_shape, knows its whole
# graph and its input shapes before it runs.  ``GraphPlan`` probes the graph once (a
# recorded run: the descriptions of every value, and which values each gradient rule
# reads), builds the backward ``Plan`` of that recording, then assigns ONE set of slots
# by size and lifetime to the forward's intermediate values and to the plan's gradients,
# on one timeline: forward step k at time k, backward step s at time F + s + 1 (F forward
# steps).  A forward value lives from its step to its last forward reader, or to the end
# of the backward when a gradient rule reads it (so backward may run again on one
# forward, as MXNet's executor allows); a gradient lives as the backward plan says.  The
# graph's outputs get buffers of their own (they leave the plan).
#
# The buffers of one run (slots, outputs, the tape nodes whose saved values alias them)
# form a ``GraphState``.  A state is reused by the next call once nothing outside the
# plan holds it or its outputs (no tape node of an earlier call, no output array or
# view), as MXNet keeps a CachedOp's static state per call in flight; else the call gets
# another state (at most MAX_GRAPH_STATES are kept).  So a training loop alternates
# between two states and, in its steady state, makes no pool call in forward or backward.
#
# One fusion: a FullyConnected with a bias whose output only a relu reads (an
# ``Activation(act_type='relu')`` or ``relu``; not an output of the graph, read by no
# gradient rule: FullyConnected's rule reads its inputs, relu's its output) computes its
# product straight into the relu's buffer, then adds the bias and applies the relu in ONE
# pass over it (``_bias_relu``); the relu step runs no kernel and the FullyConnected's
# output gets no buffer.  Two passes over the layer's output become one, as the
# subgraph backends of MXNet fuse them.  With a profiler hook both steps run through the
# invoker, the relu in place on the same buffer.

MAX_GRAPH_STATES = 4

_graph_plans = weakref.WeakSet()      # released by clear_plan_cache (allocator.empty_cache)


def release_graph_states():
    """Drop the buffers that graph plans keep for their next calls."""
    for g in list(_graph_plans):
        (<GraphPlan>g).states.clear()


cdef class GraphState:
    """The buffers of one run of a :class:`GraphPlan` (see above)."""
    cdef readonly GraphPlan plan
    cdef list chunks                 # per slot: Chunk
    cdef list values                 # per graph value: its buffer (None: an input)
    cdef list np_values              # the NumPy views of ``values`` the kernels write
    cdef list head_chunks            # per output: Chunk
    cdef list nodes                  # tape nodes in the backward plan's node order
    cdef list step_node              # per step: its tape node or None
    cdef list tape_heads             # per plan head: NDArray of the output, on the tape
    cdef list views                  # the backward plan's per-target views of our slots
    cdef list saved_args             # per step: [(input position, graph input)] it saves
    cdef tuple base                  # the references held when nobody else holds it
    cdef bint ran_forward

    cdef tuple holders(self):
        return (Py_REFCNT(self), tuple([Py_REFCNT(c) for c in self.head_chunks]))


cdef ArrayDesc _desc_of(NDArray x):
    cdef ArrayDesc d = ArrayDesc.__new__(ArrayDesc)
    d.shape = x._shape
    d.dtype = x._dtype
    d.stype = "default" if x._stype == STYPE_DEFAULT else x.stype
    d.ctx = x._chunk.ctx
    return d


cdef object _direct(object op, dict attrs, Py_ssize_t n_in):
    """(compute, prepare, mutates) of an op whose dense kernel the plan may call itself on
    dense inputs, or None (the step then goes through the invoker)."""
    if getattr(op, "compute", None) is None:
        return None
    if op.custom_storage:
        try:
            if op.infer_storage(attrs, ["default"] * n_in)[1] != "dense":
                return None
        except Exception:
            return None
    return (op.compute, op.prepare, tuple([m for m in op.mutates if m < n_in]))


cdef object _run_kernel(object op, tuple d, dict attrs, list ins, list outs):
    """The dense kernel of a planned step on NumPy views of its buffers (request write,
    no output aliasing an input: the plan's lifetimes make it so), as the invoker's
    ``_run_dense`` runs it, less the per-call inference that a static plan has done
    once; returns the call's state (``prepare``'s)."""
    compute, prepare = d[0], d[1]
    state = None if prepare is None else prepare(attrs)
    try:
        if prepare is None:
            compute(attrs, ins, outs)
        else:
            compute(attrs, ins, outs, state)
    except (ValueError, TypeError, ArithmeticError, IndexError) as e:
        if str(e).startswith(op.name + ":"):
            raise
        kind = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        raise kind(f"{op.name}: {e}") from e
    return state


cdef void _bias_relu(floating* out, const floating* bias, Py_ssize_t rows,
                     Py_ssize_t cols) noexcept nogil:
    """out[r, c] = relu(out[r, c] + bias[c]) in place, as np.maximum(x + b, 0) gives it
    (NaN stays NaN; -0.0 becomes 0.0 as NumPy's vector loop makes it)."""
    cdef Py_ssize_t r, c
    cdef floating v
    cdef floating* row
    for r in range(rows):
        row = out + r * cols
        for c in range(cols):
            v = row[c] + bias[c]
            row[c] = v if (v > 0 or v != v) else 0


cdef int _fc_relu(dict attrs, object x, object w, object b, object out) except -1:
    """FullyConnected with bias, then relu, into ``out`` (NumPy views): the product by
    ``_blas.matmul_into``, then ``_bias_relu``."""
    cdef Py_ssize_t nh = attrs["num_hidden"]
    cdef Py_ssize_t rows = out.size // nh
    cdef cnp.ndarray o = out.reshape(rows, nh)
    cdef cnp.ndarray bc = b
    matmul_into(x.reshape(rows, w.shape[1]), w.T, o, False)
    if not (o.flags.c_contiguous and bc.flags.c_contiguous and bc.size == nh):
        np.add(o, b, out=o)
        np.maximum(o, o.dtype.type(0), out=o)
    elif o.dtype == np.float32:
        with nogil:
            _bias_relu(<float*>cnp.PyArray_DATA(o), <const float*>cnp.PyArray_DATA(bc),
                       rows, nh)
    else:
        with nogil:
            _bias_relu(<double*>cnp.PyArray_DATA(o), <const double*>cnp.PyArray_DATA(bc),
                       rows, nh)
    return 0


cdef bint _is_relu(object op, dict attrs):
    name = getattr(op, "name", None)
    return name == "relu" or (name == "Activation" and attrs.get("act_type") == "relu")


cdef class GraphPlan:
    """Forward and backward of a static graph as one plan (see above).

    ``steps``: per operator node, in topological order, ``(op, attrs, inputs, n_out)``
    with ``attrs`` parsed and ``inputs`` value ids (the graph's ``n_vars`` inputs are
    values ``0 .. n_vars - 1``, then each step's outputs in turn); ``heads``: the output
    value ids; ``needs``: per input, whether its gradient is wanted (None: forward only);
    ``train``: the operators' training mode.  :meth:`prepare` (first call) probes and
    plans; then :meth:`forward` and :meth:`backward`.
    """
    cdef list steps
    cdef list direct                 # per step: (compute, prepare, mutates), or None
    cdef Py_ssize_t n_vars, n_values
    cdef list heads
    cdef readonly tuple needs
    cdef readonly bint train
    cdef list producer               # per value: (step, output) or (-1, input)
    cdef list first                  # per step: the value id of its first output
    cdef list descs                  # per value: ArrayDesc
    cdef Plan plan                   # the backward plan (None: forward only)
    cdef list f_slot                 # per value: its slot (-1: an input or an output)
    cdef list slot_sizes
    cdef list slot_ctx
    cdef list plan_heads             # the outputs on the tape (positions in heads)
    cdef list node_src               # per plan node: ("v", input) or ("s", step)
    cdef list probe_nodes            # the probe's tape nodes, plan node order
    cdef list saved                  # per step: (saved input positions, saved outputs)
    cdef dict var_of_target          # backward target -> graph input
    cdef list states
    cdef list fused                  # per step: the relu step it computes for, or -1
    cdef list absorbed               # per step: a relu whose FullyConnected computes it
    cdef readonly Py_ssize_t peak_bytes, naive_bytes, forward_bytes
    cdef readonly bint ready
    cdef object __weakref__

    def __init__(self, list steps, Py_ssize_t n_vars, list heads, needs, bint train):
        self.steps = steps
        self.n_vars = n_vars
        self.heads = heads
        self.needs = None if needs is None or not any(needs) else tuple(needs)
        self.train = train
        self.states = []
        self.producer = [(-1, v) for v in range(n_vars)]
        self.first = []
        for k, st in enumerate(steps):
            self.first.append(len(self.producer))
            for j in range(st[3]):
                self.producer.append((k, j))
        self.n_values = len(self.producer)
        _graph_plans.add(self)

    @property
    def slots(self):
        return len(self.slot_sizes) if self.slot_sizes is not None else 0

    @property
    def states_kept(self):
        return len(self.states)

    @property
    def fused_steps(self):
        """How many FullyConnected + relu pairs run as one step (see above)."""
        return sum(1 for k in self.fused if k >= 0) if self.fused is not None else 0

    def prepare(self, list args):
        """Probe the graph on ``args`` and plan it; False when it cannot be planned
        (a sparse or device value, an output that is an input or repeated): the caller
        then runs it op by op."""
        if len(set(self.heads)) != len(self.heads) or any(h < self.n_vars for h in self.heads):
            return False
        for a in args:
            if not _plannable(_desc_of(a)):
                return False
        for op, attrs, inputs, n_out in self.steps:
            if any(inputs[m] >= self.n_vars for m in getattr(op, "mutates", ())
                   if m < len(inputs)):
                return False         # an op that writes into a value of the graph
        self.direct = [_direct(op, attrs, len(inputs)) for op, attrs, inputs, _ in self.steps]
        values = self._probe(args)
        self.descs = [_desc_of(v) for v in values]
        if not all(_plannable(d) for d in self.descs):
            return False
        self._plan_backward(values)
        self._fuse()
        self._assign()
        self.ready = True
        return True

    cdef list _probe(self, list args):
        """One run, recorded on a tape of its own when gradients are wanted: every
        value (the inputs as aliases off the caller's tape)."""
        cdef list values = [(<NDArray>a).detach() for a in args]
        cdef Py_ssize_t v
        for op, attrs, inputs, n_out in self.steps:
            for m in getattr(op, "mutates", ()):
                if m < len(inputs):     # an auxiliary state: the probe writes a copy
                    values[inputs[m]] = (<NDArray>args[inputs[m]]).copy()
        was_rec, was_train = is_recording(), is_training()
        set_recording(self.needs is not None)
        set_training(self.train)
        try:
            if self.needs is not None:
                for v in range(self.n_vars):
                    if self.needs[v]:
                        mark_variable(values[v], zeros((1,), ctx=args[v].ctx,
                                                       dtype=args[v].dtype), "write")
            for op, attrs, inputs, n_out in self.steps:
                res, _ = invoke_stateful(op, [values[i] for i in inputs], attrs, None, None)
                values.extend(res if n_out > 1 else [res])
        finally:
            set_recording(was_rec)
            set_training(was_train)
        return values

    cdef int _plan_backward(self, list values) except -1:
        cdef list entries = []
        cdef list tape_heads = []
        cdef dict pos = {}
        cdef Node n
        cdef Py_ssize_t i, k, j
        self.saved = [None] * len(self.steps)
        self.plan = None
        self.plan_heads = []
        if self.needs is None:
            return 0
        for i, h in enumerate(self.heads):
            if (<NDArray>values[h])._entry is not None:
                self.plan_heads.append(i)
                tape_heads.append(values[h])
                entries.append((<NDArray>values[h])._entry)
        if not entries:
            return 0
        nodes = _collect(entries, pos)
        self.plan = _build(nodes, pos, tape_heads, None, None, False)
        # where each plan node comes from
        by_node = {}
        for v in range(self.n_vars):
            e = (<NDArray>values[v])._entry
            if e is not None and self.needs[v]:
                by_node[id((<Entry>e).node)] = ("v", v)
        for k, st in enumerate(self.steps):
            first = self.first[k]
            e = (<NDArray>values[first])._entry
            if e is not None:
                by_node[id((<Entry>e).node)] = ("s", k)
        self.node_src = [by_node[id(n)] for n in nodes]
        self.probe_nodes = nodes
        for n, src in zip(nodes, self.node_src):
            if src[0] == "s":
                self.saved[src[1]] = (
                    [j for j in range(len(n.saved_in)) if n.saved_in[j] is not None],
                    [j for j in range(len(n.saved_out)) if n.saved_out[j] is not None])
        self.var_of_target = {}
        for t in range(self.plan.n_targets):
            if self.plan.targets[t].var >= 0:
                self.var_of_target[t] = self.node_src[self.plan.targets[t].node][1]
        for n in nodes:              # the probe's saved values are not needed any more
            n.release()
        return 0

    cdef int _fuse(self) except -1:
        """Find the FullyConnected + relu pairs that run as one step (see above)."""
        cdef Py_ssize_t k, k2, v, n_steps = len(self.steps)
        cdef ArrayDesc d
        readers = {}                 # value -> the steps reading it, once per reading
        for k, st in enumerate(self.steps):
            for i in st[2]:
                readers.setdefault(i, []).append(k)
        heads = set(self.heads)
        self.fused = [-1] * n_steps
        self.absorbed = [False] * n_steps
        if not _fusion_on:
            return 0
        for k, (op, attrs, inputs, n_out) in enumerate(self.steps):
            if getattr(op, "name", None) != "FullyConnected" or attrs["no_bias"] or \
                    self.direct[k] is None:
                continue
            v = self.first[k]
            if v in heads or len(readers.get(v, ())) != 1:
                continue
            k2 = readers[v][0]
            op2, attrs2, inputs2, _ = self.steps[k2]
            if not _is_relu(op2, attrs2) or self.direct[k2] is None:
                continue
            if self.saved[k] is not None and 0 in self.saved[k][1]:
                continue             # a rule reads the FullyConnected's output
            if self.saved[k2] is not None and 0 in self.saved[k2][0]:
                continue             # ... or the relu's input
            d = self.descs[v]
            if not (_is_host(d.ctx) and d.stype == "default" and
                    np.dtype(d.dtype) in (np.float32, np.float64) and
                    _same_desc(d, self.descs[self.first[k2]])):
                continue
            self.fused[k] = k2
            self.absorbed[k2] = True
        return 0

    cdef int _assign(self) except -1:
        """One slot assignment for the forward's values and the backward's gradients."""
        cdef Py_ssize_t n_f = len(self.steps), k, s, t, v
        cdef Plan p = self.plan
        first_out = {}
        last = {}
        step_of = {}                 # plan node position -> backward time of its rule
        if p is not None:
            for s in range(p.n_steps):
                step_of[p.steps[s].node] = s + 1
        end = n_f + (p.n_steps + 1 if p is not None else 0)
        heads = set(self.heads)
        val = self.n_vars
        for k, (op, attrs, inputs, n_out) in enumerate(self.steps):
            for i in inputs:
                if i >= self.n_vars and i not in heads:
                    last[i] = k
            for j in range(n_out):
                first_out[val + j] = k
                last.setdefault(val + j, k)
            val += n_out
        fused_out = set()            # FullyConnected outputs computed in their relu's buffer
        for k in range(n_f):
            if self.fused[k] >= 0:
                first_out[self.first[self.fused[k]]] = k
                fused_out.add(self.first[k])
        if p is not None:            # values a gradient rule reads: to the end of backward
            for node_pos, src in enumerate(self.node_src):
                if src[0] != "s" or node_pos not in step_of:
                    continue
                k = src[1]
                ins_saved, outs_saved = self.saved[k]
                inputs = self.steps[k][2]
                first = self.first[k]
                for j in ins_saved:
                    if inputs[j] >= self.n_vars:
                        last[inputs[j]] = end
                for j in outs_saved:
                    last[first + j] = end
        groups = []                  # (first, last, nbytes, ctx, ("f", value) | ("b", root))
        self.forward_bytes = 0
        for v in range(self.n_vars, self.n_values):
            if v in heads:
                continue
            nb = _nbytes(self.descs[v])
            self.forward_bytes += nb
            if v not in fused_out:
                groups.append((first_out[v], last[v], nb, (<ArrayDesc>self.descs[v]).ctx,
                               ("f", v)))
        naive = self.forward_bytes
        if p is not None:
            root = list(range(p.n_targets))
            for t in range(p.n_targets):
                a = p.targets[t].alias
                while a >= 0:
                    root[t] = a
                    a = p.targets[a].alias
            spans = {}
            for t in range(p.n_targets):
                if p.targets[t].slot < 0:
                    continue
                naive += p.targets[t].nbytes
                r = root[t]
                f0, l0 = n_f + p.targets[t].first, n_f + p.targets[t].last
                if r in spans:
                    sp = spans[r]
                    spans[r] = [min(sp[0], f0), max(sp[1], l0), sp[2], sp[3]]
                else:
                    spans[r] = [f0, l0, p.targets[t].nbytes, p.t_desc[t].ctx]
            for r, sp in spans.items():
                groups.append((sp[0], sp[1], sp[2], sp[3], ("b", r)))
        groups.sort(key=lambda g: (g[0], g[4][0], g[4][1]))
        sizes, lasts, ctxs = [], [], []
        slot_of = {}
        for g in groups:
            best = -1
            for s in range(len(sizes)):
                if lasts[s] < g[0] and ctxs[s] == g[3] and sizes[s] >= g[2] and (
                        best < 0 or sizes[s] < sizes[best]):
                    best = s
            if best < 0:
                best = len(sizes)
                sizes.append(g[2])
                lasts.append(g[1])
                ctxs.append(g[3])
            else:
                lasts[best] = g[1]
            slot_of[g[4]] = best
        self.f_slot = [slot_of.get(("f", v), -1) for v in range(self.n_values)]
        self.slot_sizes = sizes
        self.slot_ctx = ctxs
        self.peak_bytes = sum(sizes)
        self.naive_bytes = naive
        if p is not None:           # the backward plan's gradients take the joint slots
            for t in range(p.n_targets):
                if p.targets[t].slot >= 0:
                    p.targets[t].slot = slot_of[("b", root[t])]
            for e in range(p.n_entries):
                t = p.entries[e].target
                p.entries[e].slot = p.targets[t].slot if t >= 0 else -1
            PyMem_Free(p.slot_nbytes)
            p.n_slots = len(sizes)
            p.slot_nbytes = <Py_ssize_t*>_alloc(p.n_slots, sizeof(Py_ssize_t))
            for s in range(p.n_slots):
                p.slot_nbytes[s] = sizes[s]
            p.slot_ctx = ctxs
            p.slot_chunks = [None] * p.n_slots
            p.peak_bytes = self.peak_bytes
        return 0

    cdef GraphState _new_state(self):
        cdef GraphState st = GraphState.__new__(GraphState)
        cdef NDArray buf
        cdef Node n, m, src_node
        cdef Py_ssize_t v, k, j, s
        st.plan = self
        st.chunks = []
        for s in range(len(self.slot_sizes)):
            buf = new_dense((self.slot_sizes[s],), np.dtype(np.uint8), self.slot_ctx[s], 0)
            buf._chunk.plan_slot = True
            st.chunks.append(buf._chunk)
        st.values = [None] * self.n_values
        st.head_chunks = []
        for v in range(self.n_vars, self.n_values):
            if self.f_slot[v] >= 0:
                st.values[v] = _view(st.chunks[self.f_slot[v]], self.descs[v])
        for h in self.heads:
            d = <ArrayDesc>self.descs[h]
            buf = new_dense(d.shape, np.dtype(d.dtype), d.ctx, 0)
            st.head_chunks.append(buf._chunk)
            st.values[h] = _view(buf._chunk, d)
        for k in range(len(self.steps)):
            if self.fused[k] >= 0:
                st.values[self.first[k]] = st.values[self.first[self.fused[k]]]
        st.np_values = [None if x is None else np_view(<NDArray>x) for x in st.values]
        st.step_node = [None] * len(self.steps)
        st.saved_args = [[] for _ in self.steps]
        st.nodes = None
        if self.plan is not None:
            st.views = [None] * self.plan.n_targets
            st.nodes = []
            made = {}
            for i, src in enumerate(self.node_src):
                src_node = self.probe_nodes[i]
                n = Node.__new__(Node)
                n.op = src_node.op
                n.attrs = src_node.attrs
                n.in_descs = src_node.in_descs
                n.out_descs = src_node.out_descs
                n.inputs = []
                for e in src_node.inputs:
                    n.inputs.append(None if e is None else
                                    Entry(made[id((<Entry>e).node)], (<Entry>e).index))
                if src[0] == "v":
                    n.grad = src_node.grad
                    n.grad_req = REQ_WRITE
                else:
                    k = src[1]
                    st.step_node[k] = n
                    inputs = self.steps[k][2]
                    first = self.first[k]
                    ins_saved, outs_saved = self.saved[k]
                    n.saved_in = [None] * len(inputs)
                    n.versions_in = [0] * len(inputs)
                    n.saved_out = [None] * self.steps[k][3]
                    n.versions_out = [0] * self.steps[k][3]
                    for j in ins_saved:
                        if inputs[j] < self.n_vars:
                            st.saved_args[k].append((j, inputs[j]))
                        else:
                            n.saved_in[j] = (<NDArray>st.values[inputs[j]]).detach()
                    for j in outs_saved:
                        n.saved_out[j] = (<NDArray>st.values[first + j]).detach()
                made[id(src_node)] = n
                st.nodes.append(n)
            # the outputs on the tape, each the entry of its node as in the probe
            st.tape_heads = []
            for i in self.plan_heads:
                h = (<NDArray>st.values[self.heads[i]]).detach()
                k, j = self.producer[self.heads[i]]
                h._entry = Entry(st.step_node[k], j)
                st.tape_heads.append(h)
        return st

    cdef GraphState _acquire(self):
        cdef GraphState st
        for st in self.states:
            if st.holders() == st.base:
                return st
        st = self._new_state()
        if len(self.states) < MAX_GRAPH_STATES:
            self.states.append(st)
            st.base = st.holders()
        else:                        # every kept state is held: this call's is not kept
            st.base = None
        return st

    def forward(self, list args):
        """Run the graph on ``args`` (one NDArray per input, of the probed
        descriptions) into a state's buffers: ``(state, outputs)``."""
        cdef GraphState st
        cdef Node n
        cdef NDArray a
        cdef Py_ssize_t k, v, i
        if not self.ready:
            raise RuntimeError("GraphPlan: call prepare() first")
        for v in range(self.n_vars):
            if not _same_desc(_desc_of(<NDArray>args[v]), self.descs[v]):
                raise ValueError(f"graph input {v} must be {self.descs[v]!r} as planned "
                                 f"(got {_desc_of(<NDArray>args[v])!r})")
        st = self._acquire()
        values = st.values
        npv = st.np_values
        hook = profile_hook()
        for v in range(self.n_vars):
            values[v] = args[v]
            npv[v] = np_view(<NDArray>args[v])
        was_rec, was_train = is_recording(), is_training()
        set_recording(False)
        set_training(self.train)
        try:
            val = self.n_vars
            for k in range(len(self.steps)):
                op, attrs, inputs, n_out = self.steps[k]
                d = self.direct[k]
                if hook is None and self.fused[k] >= 0:
                    _fc_relu(attrs, npv[inputs[0]], npv[inputs[1]], npv[inputs[2]],
                             npv[val])
                    (<NDArray>values[val])._chunk.bump()
                    state = None
                elif hook is None and self.absorbed[k]:
                    state = None             # its FullyConnected computed it
                elif d is not None and hook is None:
                    state = _run_kernel(op, <tuple>d, attrs, [npv[i] for i in inputs],
                                        npv[val:val + n_out])
                    for j in range(n_out):
                        (<NDArray>values[val + j])._chunk.bump()
                    for j in (<tuple>d)[2]:
                        (<NDArray>values[inputs[j]])._chunk.bump()
                else:
                    outs = values[val:val + n_out]
                    _, state = invoke_stateful(op, [values[i] for i in inputs], attrs,
                                               outs if n_out > 1 else outs[0], None)
                n = st.step_node[k]
                if n is not None:
                    n.state = state
                    for j, v in st.saved_args[k]:
                        a = args[v]
                        n.saved_in[j] = a.detach()
                    for j in range(len(n.saved_in)):
                        if n.saved_in[j] is not None:
                            n.versions_in[j] = (<NDArray>n.saved_in[j])._chunk.version
                    for j in range(len(n.saved_out)):
                        if n.saved_out[j] is not None:
                            n.versions_out[j] = (<NDArray>n.saved_out[j])._chunk.version
                val += n_out
        finally:
            set_recording(was_rec)
            set_training(was_train)
            for v in range(self.n_vars):
                values[v] = None
                npv[v] = None
        st.ran_forward = True
        return st, [_view(st.head_chunks[i], self.descs[h]) for i, h in enumerate(self.heads)]

    def backward(self, GraphState st, list head_grads, list into=None):
        """The inputs' gradients of ``st``'s forward (one per input: None where not
        wanted or not reached) for the outputs' gradients ``head_grads`` (None: ones).
        The gradients are views of the plan's slots, valid until the state's next run:
        copy them.  ``into`` (one entry per input, None where not given): dense host
        arrays of the gradients' shapes and dtypes that the plan computes the inputs'
        gradients into instead of its slots (and returns), so that a caller who wants
        them in its own buffers has nothing to copy."""
        cdef Plan p = self.plan
        cdef Py_ssize_t t
        cdef NDArray d
        cdef ArrayDesc desc
        cdef list grads = [None] * self.n_vars
        if st.plan is not self or not st.ran_forward:
            raise RuntimeError("GraphPlan.backward: the state is not a forward of this plan")
        if p is None:
            return grads
        if p.busy:
            raise RuntimeError("GraphPlan.backward: the plan is running (a backward "
                               "through this graph inside its own gradient)")
        hg = None
        if head_grads is not None:
            hg = [head_grads[i] for i in self.plan_heads]
        p.busy = True
        p.slot_chunks = st.chunks
        p.views = st.views
        try:
            _bind(p)
            if into is not None:
                # an input's gradient is a target that no rule reads (reference count 0:
                # never a donated out-grad), so writing it elsewhere changes no other value
                for t, v in self.var_of_target.items():
                    if into[v] is None or p.targets[t].slot < 0:
                        continue
                    d, desc = into[v], p.t_desc[t]
                    if (d._stype == STYPE_DEFAULT and d._chunk.host and d._shape == desc.shape
                            and d._dtype == desc.dtype):
                        p.cur[t] = d
            _run_steps(p, st.nodes, st.tape_heads, hg, True)
            for t, v in self.var_of_target.items():
                if p.filled[t]:
                    grads[v] = p.cur[t]
        finally:
            p.busy = False
            for t in range(p.n_targets):
                p.cur[t] = None
        return grads


def write_gradient(NDArray dst, src, str req):
    """A planned gradient ``src`` (None: none reached) into the user's array ``dst`` by
    the request ``req`` ('write': copied, zeros for None; 'add': added), without a pool
    call for dense host arrays of one dtype and shape."""
    if req == "add":
        if src is not None:
            _add_to(dst, src)
    elif src is None:
        if dst._stype == STYPE_DEFAULT:
            dst._fill(0)
            dst._chunk.bump()
        else:
            assign(dst, zeros(dst.shape, ctx=dst.ctx, dtype=dst.dtype, stype=dst.stype))
    elif dst._stype == STYPE_DEFAULT:
        _copy_into(dst, src)
    else:
        assign(dst, src)
