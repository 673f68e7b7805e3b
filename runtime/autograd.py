"""Autograd (MXNet's ``mx.autograd``): recording scopes, backward, grad and Function.

The flags are per thread (C ``thread_local`` in ``runtime._imperative``; a new thread
starts with both off, as in MXNet): recording, which puts every operator whose inputs are
on the tape on it, and training, which operators such as Dropout read.  The ``set_*``
functions return the previous value.

Inside ``record()``, an operator call whose inputs include an array on the tape (a
variable marked by ``attach_grad``/``mark_variables``, or the result of a recorded call)
is recorded with only what its gradient rule reads (``runtime._tape``); ``backward`` and
``grad`` run the compiled executor (``runtime._executor``) over those records.

Variables: ``attach_grad``/``mark_variables`` on an array that is already a variable
gives it a new gradient buffer and grad_req but keeps its place on the tape, so that its
uses recorded before (in an open ``record()`` scope) send their gradient there too (MXNet
gives it a new place, which drops those uses' gradient).  While recording, an array that
is the result of a recorded operator cannot become a variable: its uses recorded so far
would send their gradient to its history instead.

Writes and the tape: writing into an array on the tape while recording (``x[:] = v``,
``out=x``, ``x += y``) raises before anything is written; writing outside ``record()``
into an array that a recorded operator saved makes the next backward raise, naming the
operator.  Writes through a NumPy view of an NDArray (``np.asarray(x)[...] = v``) bypass
the version counter and cannot be seen: do not write through views of recorded arrays.
"""

import numpy as np

from runtime import _executor, _tape
from runtime import _imperative
from runtime._imperative import is_recording, is_training, set_recording, set_training
from runtime._ndarray import NDArray, zeros
from runtime.ops.registry import get as _get_op


class _RecordingStateScope:
    """Sets the recording and/or training flags for a ``with`` block (None: unchanged)."""

    def __init__(self, is_record, train_mode):
        self._enter_is_record = is_record
        self._enter_train_mode = train_mode
        self._prev_is_record = None
        self._prev_train_mode = None

    def __enter__(self):
        if self._enter_is_record is not None:
            self._prev_is_record = set_recording(self._enter_is_record)
        if self._enter_train_mode is not None:
            self._prev_train_mode = set_training(self._enter_train_mode)
        return self

    def __exit__(self, *exc):
        if self._enter_is_record is not None:
            set_recording(self._prev_is_record)
        if self._enter_train_mode is not None:
            set_training(self._prev_train_mode)


def record(train_mode=True):
    """Scope that records operators for ``backward`` (training mode unless told)."""
    return _RecordingStateScope(True, train_mode)


def pause(train_mode=False):
    """Scope inside ``record()`` in which nothing is recorded (prediction mode unless
    told)."""
    return _RecordingStateScope(False, train_mode)


def train_mode():
    """Scope in which operators run in training mode (Dropout drops); recording unchanged."""
    return _RecordingStateScope(None, True)


def predict_mode():
    """Scope in which operators run in inference mode; recording unchanged."""
    return _RecordingStateScope(None, False)


def _as_list(value, name):
    if isinstance(value, NDArray):
        return [value], True
    if isinstance(value, (list, tuple)) and all(isinstance(v, NDArray) for v in value):
        return list(value), False
    raise TypeError(f"{name} must be an NDArray or a list of NDArrays (got "
                    f"{type(value).__name__})")


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark arrays as variables: their gradients go to ``gradients`` by ``grad_reqs``
    ('write', 'add' or 'null'; one for all or one each), as MXNet's ``mark_variables``.

    Every pair is checked before any is marked: a gradient buffer must have its
    variable's shape and a dtype that holds its gradient without losing its kind
    (``numpy.can_cast(variable, gradient, 'same_kind')``: no int32 buffer for a float
    variable).  A variable already marked keeps its place on the tape (see
    ``NDArray.attach_grad``)."""
    variables, _ = _as_list(variables, "variables")
    gradients, _ = _as_list(gradients, "gradients")
    if len(variables) != len(gradients):
        raise ValueError(f"mark_variables: gradients must hold one array per variable "
                         f"(got {len(gradients)} for {len(variables)})")
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if len(reqs) != len(variables):
        raise ValueError(f"mark_variables: grad_reqs must hold one request per variable "
                         f"(got {len(reqs)} for {len(variables)})")
    for i, (x, g, r) in enumerate(zip(variables, gradients, reqs)):
        if g.shape != x.shape:
            raise ValueError(f"mark_variables: gradient {i} must have the variable's shape "
                             f"{x.shape!r} (got {g.shape!r})")
        if not np.can_cast(x.dtype, g.dtype, "same_kind"):
            raise TypeError(f"mark_variables: gradient {i} must have a dtype that holds the "
                            f"gradient of a {np.dtype(x.dtype)} variable (got "
                            f"{np.dtype(g.dtype)})")
        _check_mark(x, r, "mark_variables", f"grad_reqs[{i}]")
    for x, g, r in zip(variables, gradients, reqs):
        _mark(x, g, r)


def _check_mark(x, grad_req, who, what):
    """Raise unless ``x`` may become a variable with ``grad_req`` (``what``, in ``who``)."""
    if not isinstance(grad_req, str) or grad_req not in _tape.GRAD_REQS:
        raise ValueError(f"{who}: {what} must be one of {', '.join(_tape.GRAD_REQS)} (got "
                         f"{grad_req!r})")
    if is_recording() and x._entry is not None and _tape.variable_node(x) is None:
        raise ValueError(
            f"{who}: a variable must not be the result of an operator recorded while "
            f"recording (got one of shape {x.shape!r}): its uses recorded so far "
            "would send their gradient to the operator rather than to .grad; attach the "
            "gradient before recording, or record on a detach()ed copy")


def _mark(x, grad, grad_req):
    """Make ``x`` a variable whose gradient goes to ``grad`` by ``grad_req``.  A variable
    keeps its node, so that its uses recorded before (in an open record() scope) send
    their gradient to the new buffer too."""
    node = _tape.variable_node(x)
    if node is None:
        _tape.mark_variable(x, grad, grad_req)
    else:
        node.grad = grad
        node.grad_req = _tape.GRAD_REQS[grad_req]


def _heads(heads, head_grads):
    heads, _ = _as_list(heads, "heads")
    if head_grads is None:
        return heads, None
    if isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    head_grads = list(head_grads)
    if len(head_grads) != len(heads):
        raise ValueError(f"backward: head_grads must hold one entry per head (got "
                         f"{len(head_grads)} for {len(heads)})")
    for i, g in enumerate(head_grads):
        if g is not None and not isinstance(g, NDArray):
            raise TypeError(f"backward: head_grads[{i}] must be an NDArray or None (got "
                            f"{type(g).__name__})")
    return heads, head_grads


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Compute the gradients of ``heads`` with respect to every variable and write them
    into the variables' ``.grad`` by their ``grad_req``.

    Parameters
    ----------
    heads : NDArray or list of NDArray
        Outputs recorded inside ``record()``.
    head_grads : NDArray or list of (NDArray or None), optional
        Gradients of the heads (ones where None).
    retain_graph : bool
        Keep the saved values so that the same graph can be differentiated again;
        without it the tape is consumed and a second backward raises.
    train_mode : bool
        Whether the gradient rules run in training mode.
    """
    heads, head_grads = _heads(heads, head_grads)
    prev_rec, prev_train = set_recording(False), set_training(train_mode)
    try:
        _executor.run(heads, head_grads, None, bool(retain_graph), False)
    finally:
        set_recording(prev_rec)
        set_training(prev_train)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """The gradients of ``heads`` with respect to ``variables``, as new arrays (``.grad``
    is left alone): always a list, one array per variable, also for a single NDArray
    variable (MXNet 1.x's ``autograd.grad``: ``grad(y, x)[0]`` is x's gradient).

    ``create_graph=True`` records the gradient computation, so that the results can be
    differentiated again (higher-order gradients); ``retain_graph`` defaults to it.
    """
    heads, head_grads = _heads(heads, head_grads)
    variables, _ = _as_list(variables, "variables")
    if retain_graph is None:
        retain_graph = create_graph
    prev_rec, prev_train = set_recording(bool(create_graph)), set_training(train_mode)
    try:
        grads = _executor.run(heads, head_grads, variables, bool(retain_graph),
                              bool(create_graph))
    finally:
        set_recording(prev_rec)
        set_training(prev_train)
    given = {id(g) for g in head_grads or () if g is not None}
    out = []
    for v, g in zip(variables, grads):
        if g is None:
            g = zeros(v.shape, ctx=v.ctx, dtype=v.dtype)
        elif id(g) in given:       # a head was the variable: never hand back the user's array
            g = g.copy()
        out.append(g)
    if create_graph:
        out = [_tied_to(g, v) for v, g in zip(variables, out)]
    return out


_TIE = _get_op("_identity_with_attr_like_rhs")


def _tied_to(g, v):
    """``g`` on the tape as a function of ``v`` with zero derivative, where the gradient
    rules made it from constants alone (a linear op's gradient, ``clip``'s mask): in
    MXNet a recorded gradient always hangs from the forward graph (its backward nodes
    take the forward's inputs), so differentiating it again gives zeros rather than
    "not in a computational graph".  Dense arrays only (the tie has no sparse kernel)."""
    if g._entry is not None or v._entry is None or g.stype != "default" \
            or v.stype != "default":
        return g
    prev = set_recording(True)
    try:
        return _imperative.invoke(_TIE, [g, v])
    finally:
        set_recording(prev)


def last_backward_stats():
    """What the last ``backward``/``grad`` did, exactly (an empty dict after one that
    raised, or before the first):

    - ``nodes``: gradient rules run;
    - ``entries``: entries of the plan (``last_backward_plan()``): one per head gradient
      and one per gradient a rule produces, needed or not;
    - ``requests``: the plan's requests by kind, ``{'null', 'write', 'inplace', 'add'}``
      (entries skipped, first contributions, first contributions computed into the
      out-grad buffer, contributions accumulated into a buffer already written);
    - ``pool_calls``: allocations asked of the memory pools during the pass (0 in a
      steady-state step: the plan's buffers are kept);
    - ``slots``: the plan's storage slots;
    - ``plan_peak_bytes``: the bytes of those slots, which is what the pass holds for
      gradients beyond the arrays of the forward;
    - ``naive_peak_bytes``: the bytes of every planned gradient, what a pass without
      reuse (a buffer per gradient, none computed in place) would hold;
    - ``plan_cached``: whether the plan came from the cache (a graph seen before).
    """
    return _executor.last_stats()


def last_backward_plan():
    """The plan of the last ``backward``/``grad`` (None after one that raised, or before
    the first): a sequence of entries in run order, head gradients first, each with the
    fields ``op`` (the op whose gradient rule produces it, or None for a head gradient),
    ``ref_count`` (the rules that read the gradient it contributes to: 1 for an
    operator's output, 0 for a variable's gradient or one nobody needs), ``request``
    (``'null'``, ``'write'``, ``'inplace'`` or ``'add'``), ``slot`` (its storage slot, or
    None for a gradient that owns no planned buffer: sparse, under ``create_graph``, or
    returned by ``grad``) and ``nbytes``; ``peak_bytes``, ``naive_peak_bytes`` and
    ``slots`` as in :func:`last_backward_stats`.  ``repr`` prints it as a table.

    An entry whose ``ref_count`` is 0 has request ``'null'`` unless it contributes to a
    variable's gradient: then the first contribution has the variable's ``grad_req``
    (``'write'``, ``'inplace'`` where it is computed into its out-grad's buffer, or
    ``'add'``) and later ones ``'add'``.  A variable's gradient is formed in its slot and
    written into ``.grad`` once every rule has run (memory swapped where nobody can tell,
    else copied; added for ``'add'``), so that an error leaves every ``.grad`` as it was.
    """
    return _executor.last_plan()


def clear_plan_cache():
    """Release every cached backward plan and the gradient buffers it keeps between steps
    (``allocator.empty_cache()`` does it too)."""
    _executor.clear_plan_cache()


class _FunctionOp:
    """What the tape keeps of one call of a ``Function``: the instance, the values that
    call saved and the versions they had when it returned."""

    __slots__ = ("fn", "name", "saved", "versions")
    differentiable = True
    grad_reads = None

    def __init__(self, fn, saved):
        self.fn = fn
        self.name = type(fn).__name__
        self.saved = saved
        self.versions = tuple(a.version if isinstance(a, NDArray) else None for a in saved)

    def release(self):
        self.saved = ()

    def gradient(self, attrs, ins, outs, ograds):
        for i, (a, v) in enumerate(zip(self.saved, self.versions)):
            if v is not None and a.version != v:
                raise RuntimeError(
                    f"backward: {self.name}'s saved tensor {i} (shape {a.shape!r}) was "
                    f"written after {self.name} saved it for its gradient (version "
                    f"{a.version}, saved at {v}); do not write into arrays that a recorded "
                    "operator read, or record again after writing")
        fn = self.fn
        latest, fn._saved = fn._saved, self.saved
        try:
            res = fn.backward(*ograds)
        finally:
            fn._saved = latest
        res, _ = _as_list(res, f"{self.name}.backward's result")
        if len(res) != len(ins):
            raise ValueError(f"{self.name}.backward must return one gradient per input "
                             f"(got {len(res)} for {len(ins)})")
        return res


class Function:
    """A custom operator with its own gradient (MXNet's ``autograd.Function``).

    Subclass it, define ``forward(self, *inputs)`` and ``backward(self, *output_grads)``
    (one gradient per input), keep what backward needs with ``save_for_backward`` and read
    it back from ``saved_tensors``; then call an instance on NDArrays.  Unlike MXNet's, a
    Function honours its variables' ``grad_req='add'``.

    An instance may be called more than once while recording (newer MXNet refuses a
    second call): as PyTorch's ``ctx`` is per call, each recorded call keeps the values
    it saved, and its ``backward`` reads those from ``saved_tensors`` (outside backward,
    ``saved_tensors`` shows the last call's).  Writing into a saved array before
    backward makes backward raise, as it does for built-in operators.

    >>> class Sigmoid(Function):
    ...     def forward(self, x):
    ...         y = 1 / (1 + nd.exp(-x))
    ...         self.save_for_backward(y)
    ...         return y
    ...     def backward(self, dy):
    ...         y, = self.saved_tensors
    ...         return dy * y * (1 - y)
    """

    def __init__(self):
        self._saved = ()

    def save_for_backward(self, *args):
        self._saved = args

    @property
    def saved_tensors(self):
        return self._saved

    def forward(self, *inputs):
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def backward(self, *output_grads):
        raise NotImplementedError(f"{type(self).__name__} must define backward")

    def __call__(self, *inputs):
        ins, _ = _as_list(list(inputs), f"{type(self).__name__}'s inputs")
        with _RecordingStateScope(False, None):
            outputs = self.forward(*ins)
        outs, single = _as_list(outputs, f"{type(self).__name__}.forward's result")
        # an output that is an input would take over the input's place on the tape
        outs = [o.detach() if any(o is x for x in ins) else o for o in outs]
        if is_recording():
            # an output kept for backward must not hold its own entry (a cycle through
            # this Function): keep a detached alias of it
            self._saved = tuple(a.detach() if any(a is o for o in outs) else a
                                for a in self._saved)
            _tape.record_call(_FunctionOp(self, self._saved), {}, None, ins, outs)
        return outs[0] if single else outs


_symbol_of_entry = None       # runtime.symbol's maker, set by runtime._wiring


def set_symbol_hook(maker):
    """Hand autograd the maker of ``get_symbol``'s Symbol from a tape entry (the symbol
    package sits above autograd)."""
    global _symbol_of_entry
    _symbol_of_entry = maker


def get_symbol(x):
    """The recorded computation behind ``x`` as a Symbol (MXNet's
    ``autograd.get_symbol``): its operators with their attributes; marked variables
    become variables ``var<k>``, inputs that were not recorded ``null<k>``.

    Raises
    ------
    RuntimeError
        ``x`` is not the result of a recorded computation nor a marked variable.
    """
    if not isinstance(x, NDArray):
        raise TypeError(f"get_symbol: x must be an NDArray (got {type(x).__name__})")
    if x._entry is None:
        raise RuntimeError("get_symbol: x was not computed inside autograd.record() from "
                           "an array on the tape, nor marked with attach_grad")
    return _symbol_of_entry(x._entry)


def _attach_grad(x, grad_req="write", stype=None):
    _check_mark(x, grad_req, "attach_grad", "grad_req")
    grad = zeros(x.shape, ctx=x.ctx, dtype=x.dtype, stype=stype or x.stype)
    _mark(x, grad, grad_req)



# NDArray too: MXNet's autograd module has no __all__, so 1.x code gets the NDArray class
# from ``from mxnet.autograd import *``.
__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad",
           "get_symbol", "last_backward_stats", "last_backward_plan", "clear_plan_cache",
           "Function", "NDArray"]
