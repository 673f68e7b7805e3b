"""The autograd tape: what a recorded operator call keeps for its gradient.

An array on the tape carries an :class:`Entry` (``NDArray._entry``): the :class:`Node`
that produced it and its output position.  A variable (``attach_grad``) is a node
without an operator that holds the gradient buffer and its request.  An operator node
keeps, as MXNet's ``Imperative::RecordOp`` does, the description (``ArrayDesc``) of every
input and output and the values of only those that its gradient rule reads
(``Op.grad_reads``, MXNet's ``GetBackwardDependency``): detached aliases of their
memory, with the chunk's write version at that moment, so that a later write makes
backward refuse instead of computing a wrong gradient.  Aliases carry no entry, so a node
never holds a cycle back to itself; everything else (inputs' values, attributes' copies)
is dropped at once.

Nodes are numbered as they are made: an input's node always has a smaller number, so the
reverse creation order is a topological order of the backward graph.
"""

from runtime._desc cimport ArrayDesc
from runtime._ndarray cimport NDArray
from runtime._types cimport REQ_ADD, REQ_NULL, REQ_WRITE

from runtime.errors import NOT_IN_GRAPH

cdef tuple _STYPES = ("default", "row_sparse", "csr")   # by NDArray._stype

cdef Py_ssize_t _next_seq = 0

# The requests a variable's gradient may take (no 'inplace': a gradient buffer is no input)
GRAD_REQS = {"null": REQ_NULL, "write": REQ_WRITE, "add": REQ_ADD}


cdef class Entry:
    """Where an array on the tape comes from: ``node`` and its output ``index``."""

    def __init__(self, Node node, Py_ssize_t index):
        self.node = node
        self.index = index

    def __repr__(self):
        return f"<Entry {self.index} of {self.node!r}>"


cdef class Node:
    """One recorded operator call, or one variable (``op`` None)."""

    def __cinit__(self):
        global _next_seq
        self.seq = _next_seq
        _next_seq += 1

    def __lt__(self, Node other):
        return self.seq < other.seq       # creation order (the executor sorts by it)

    @property
    def name(self):
        if self.op is None:
            return "variable"
        return getattr(self.op, "name", type(self.op).__name__)

    cdef int release(self) except -1:
        """Drop the saved values (backward without retain_graph), a Function's too."""
        self.saved_in = self.saved_out = None
        self.consumed = True
        if _info(self.op)[2]:
            return 0                      # a registry op: nothing of its own to drop
        release = getattr(self.op, "release", None)
        if release is not None:
            release()
        return 0

    def saved(self, bint outputs, Py_ssize_t i, bint with_entry):
        """See :meth:`value`."""
        return self.value(outputs, i, with_entry)

    cdef object value(self, bint outputs, Py_ssize_t i, bint with_entry):
        """The saved value of input/output ``i`` (an NDArray sharing the saved memory), or
        its ArrayDesc when the rule does not read it.  Raises RuntimeError when the array
        was written after it was saved.  ``with_entry``: the alias is on the tape (the
        input's entry, or this node's output), for gradients of gradients."""
        cdef list vals = self.saved_out if outputs else self.saved_in
        cdef NDArray a
        if vals is None:
            raise RuntimeError(_freed_message(self))
        if vals[i] is None:
            return (self.out_descs if outputs else self.in_descs)[i]
        a = vals[i]
        ver = (self.versions_out if outputs else self.versions_in)[i]
        if a._chunk.version != ver:
            what = "output" if outputs else "input"
            raise RuntimeError(
                f"backward: {self.name}'s {what} {i} (shape {a.shape!r}) was written after "
                f"{self.name} saved it for its gradient (version {a._chunk.version}, saved "
                f"at {ver}); do not write into arrays that a recorded operator read, or "
                "record again after writing")
        if with_entry:
            a = a.detach()
            a._entry = Entry(self, i) if outputs else self.inputs[i]
        return a

    def __repr__(self):
        return f"<Node {self.seq} {self.name}>"


def _freed_message(Node node):
    return (NOT_IN_GRAPH + f" (backward: the graph of {node.name} was consumed by an "
            "earlier backward pass)")


cdef bint on_tape(list inputs) noexcept:
    """Whether an input is on the tape.  An input whose producer's graph an earlier
    backward consumed (without retain_graph) is taken off it here: from now on it is a
    constant, as MXNet makes such arrays when it frees their graph."""
    cdef object x
    cdef Entry e
    cdef bint found = False
    for x in inputs:
        if (<NDArray>x)._entry is not None:
            e = <Entry>(<NDArray>x)._entry
            if e.node.consumed:
                (<NDArray>x)._entry = None
            else:
                found = True
    return found


cdef ArrayDesc _desc(NDArray x):
    cdef ArrayDesc d = ArrayDesc.__new__(ArrayDesc)
    d.shape = x._shape
    d.dtype = x.dtype
    d.stype = _STYPES[x._stype]
    d.ctx = x._chunk.ctx
    return d


cdef Entry _entry(Node node, Py_ssize_t index):
    cdef Entry e = Entry.__new__(Entry)       # no __init__: fields set here
    e.node = node
    e.index = index
    return e


cdef list _in_descs(list inputs):
    """The descriptions of the inputs: an input on the tape has its producer's (it is
    that output, unchanged in shape, dtype, storage type and context); another input
    shares an earlier input's when they agree (``x + c`` with c of x's shape)."""
    cdef Py_ssize_t i, n = len(inputs)
    cdef list descs = [None] * n
    cdef NDArray x
    cdef Entry e
    for i in range(n):
        x = inputs[i]
        e = x._entry
        descs[i] = e.node.out_descs[e.index] if e is not None else _desc_like(x, descs, i)
    return descs


cdef ArrayDesc _desc_like(NDArray x, list descs, Py_ssize_t n):
    """The description of ``x``: one of the first ``n`` of ``descs`` when it agrees, so
    that a node of an elementwise op makes none of its own; else a new one."""
    cdef Py_ssize_t i
    cdef ArrayDesc d
    for i in range(n):
        d = descs[i]
        if ((d.shape is x._shape or d.shape == x._shape) and d.dtype is x._dtype
                and d.ctx is x._chunk.ctx and d.stype is _STYPES[x._stype]):
            return d
    return _desc(x)


cdef list _NONES = [[None] * n for n in range(8)]     # saved values of a node reading none
cdef list _ZEROS = [[0] * n for n in range(8)]        # ... and their versions (never written)


# registry op -> (stops_gradient, grad_reads: (inputs, outputs), or None when they depend
# on the attributes, whether it is a registry op): read once per op, not per call
cdef dict _op_info = {}


cdef tuple _info(object op):
    cdef tuple info = _op_info.get(op)
    if info is None:
        ins = getattr(op, "grad_inputs", ())
        outs = getattr(op, "grad_outputs", ())
        static = None if callable(ins) or callable(outs) or not hasattr(op, "grad_reads") \
            else (tuple(ins), tuple(outs))
        registered = getattr(op, "grad_reads", None) is not None
        info = (bool(getattr(op, "stops_gradient", False)), static, registered)
        if registered:
            _op_info[op] = info     # registry ops only: a Function's op is one per call
    return info


cdef int _save(Node node, list arrays, tuple which, bint outputs) except -1:
    """Keep detached aliases of the arrays ``which`` (positions) and their versions."""
    cdef Py_ssize_t n = len(arrays)
    cdef list saved, versions
    cdef NDArray a
    if not which and n < 8:
        saved = _NONES[n]                 # shared: nobody writes into these lists
        versions = _ZEROS[n]
    else:
        saved = [None] * n
        versions = [0] * n
        for i in which:
            a = arrays[i]
            saved[i] = a.detach()
            versions[i] = a._chunk.version
    if outputs:
        node.saved_out, node.versions_out = saved, versions
    else:
        node.saved_in, node.versions_in = saved, versions
    return 0


cdef int record(object op, dict attrs, object state, list inputs, list outputs) except -1:
    """Put one operator call on the tape when an input is on it (else nothing)."""
    cdef Node node
    cdef Py_ssize_t i, n_in = len(inputs), n_out = len(outputs)
    if not on_tape(inputs):
        return 0
    info = _info(op)
    if info[0]:
        return 0
    node = Node.__new__(Node)
    node.op = op
    node.attrs = attrs
    node.state = state
    node.inputs = [(<NDArray>x)._entry for x in inputs]
    node.in_descs = _in_descs(inputs)
    node.out_descs = [_desc_like(<NDArray>x, node.in_descs, n_in) for x in outputs]
    if info[1] is not None:
        reads_in, reads_out = info[1]
    else:
        reads_in, reads_out = _reads(op, attrs, state, n_in, n_out)
    _save(node, inputs, reads_in, False)
    _save(node, outputs, reads_out, True)
    for i in range(n_out):
        (<NDArray>outputs[i])._entry = _entry(node, i)
    return 0


cdef _reads(object op, dict attrs, object state, Py_ssize_t n_in, Py_ssize_t n_out):
    reads = getattr(op, "grad_reads", None)
    if reads is None:
        return (), ()
    return reads(attrs if state is None else dict(attrs, _state=state), n_in, n_out)


def record_call(op, dict attrs, state, list inputs, list outputs):
    """Python entry of :func:`record` (autograd.Function and the invoker's callers)."""
    record(op, attrs, state, inputs, outputs)


def mark_variable(NDArray x, NDArray grad, str grad_req):
    """Make ``x`` a variable whose gradient goes to ``grad`` with ``grad_req``."""
    cdef Node node
    if grad_req not in GRAD_REQS:
        raise ValueError(f"grad_req must be one of {', '.join(GRAD_REQS)} (got {grad_req!r})")
    node = Node.__new__(Node)
    node.op = None
    node.attrs = {}
    node.inputs = []
    node.in_descs = []
    node.out_descs = [_desc(x)]
    node.grad = grad
    node.grad_req = GRAD_REQS[grad_req]
    x._entry = Entry(node, 0)


def variable_node(NDArray x):
    """The variable node of ``x``, or None when ``x`` is not a variable."""
    e = x._entry
    if e is None or (<Entry>e).node.op is not None:
        return None
    return (<Entry>e).node
