"""``runtime.nd.contrib``: MXNet 1.x's ``mx.nd.contrib``.

Control flow for imperative code, as MXNet runs it without a graph: :func:`foreach`,
:func:`while_loop` and :func:`cond` call the Python functions they are given, so that
autograd records the operators those functions run and gradients flow through the loop
(or the branch taken) as through any Python code.  The NaN/infinity tests :func:`isinf`,
:func:`isfinite` and :func:`isnan` are made of operators, as MXNet's are.  Every
registry operator named ``_contrib_<name>`` is here under ``<name>`` (``boolean_mask``,
``index_copy``, ``index_array``, ``arange_like``, ``div_sqrt_dim``, ``quadratic``,
``gradientmultiplier``, ``allclose``, ``fft``, ``ifft``, ``count_sketch``, ``CTCLoss``
and ``ctc_loss``, and the vision operators of runtime/ops/vision.py: ``ROIAlign``,
``BilinearResize2D``, ``AdaptiveAvgPooling2D``, ``box_iou``, ``box_nms`` alias
``box_non_maximum_suppression``, and those of runtime/ops/bounding_box.py:
``MultiBoxPrior``, ``MultiBoxDetection``, ``MultiBoxTarget``, ``bipartite_matching``, ``box_encode``, ``box_decode``; ``getnnz`` of
runtime/ops/sparse.py);
:func:`rand_zipfian` draws sampled-softmax candidates with NDArray operations, as MXNet's;
:func:`boolean_mask` counts the selected entries of
its index before calling the operator, whose output shape depends on them.
"""

import math
import numbers

import numpy as np

from runtime._ndarray import NDArray, empty
from runtime.context import current_context
from runtime.nd import random as _random
from runtime.nd._ops import make_function, prefixed
from runtime.ops import registry

_stack = make_function(registry.get("stack"))
_concat = make_function(registry.get("concat"))


# -- nested lists of NDArrays (MXNet's _flatten and _regroup) --------------------------------

def _flatten(args, what):
    """``args`` (an NDArray or a nested list/tuple of them) as a flat list, and the format
    that :func:`_regroup` rebuilds it from (0 for a lone NDArray, else a list of formats).
    """
    if isinstance(args, NDArray):
        return [args], 0
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"{what} must be an NDArray or a (nested) list of NDArrays (got "
                        f"{type(args).__name__})")
    flat, fmts = [], []
    for a in args:
        f, fmt = _flatten(a, what)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _regroup(flat, fmt):
    """The nested structure of ``fmt`` rebuilt from the flat list ``flat``; returns it and
    the entries left over."""
    if fmt == 0:
        return flat[0], flat[1:]
    out = []
    for f in fmt:
        item, flat = _regroup(flat, f)
        out.append(item)
    return out, flat


def _callable(op, name, f):
    if not callable(f):
        raise TypeError(f"{op}: {name} must be callable (got {type(f).__name__})")


def _as_bool(op, what, value):
    """``value`` (an NDArray of one element, or a Python/NumPy scalar) as a bool."""
    if isinstance(value, NDArray):
        if value.size != 1:
            raise ValueError(f"{op}: {what} must hold exactly one element (got shape "
                             f"{value.shape})")
        value = value.asnumpy().reshape(())
    try:
        return bool(value)
    except (TypeError, ValueError):
        raise ValueError(f"{op}: cannot convert {what} to a Python bool (got "
                         f"{value!r})") from None


def _append_step(op, what, steps, flat):
    """Add one step's flat outputs to ``steps``, checking that their number is that of
    the first step's."""
    if steps and len(flat) != len(steps[0]):
        raise ValueError(f"{op}: {len(flat)} {what} at step {len(steps)}, {len(steps[0])} "
                         "at step 0 (their number must not change)")
    steps.append(flat)


def _per_output(op, what, steps):
    """The outputs of the steps grouped per output, each checked to keep one shape."""
    for k, items in enumerate(zip(*steps)):
        shapes = {x.shape for x in items}
        if len(shapes) != 1:
            raise ValueError(f"{op}: {what} {k} changes shape between steps (got "
                             f"{sorted(shapes)})")
        yield items


# -- control flow ----------------------------------------------------------------------------

def foreach(body, data, init_states):
    """Run ``body`` over the slices of ``data`` along axis 0, carrying states
    (MXNet's ``nd.contrib.foreach``).

    In pseudo-code::

        def foreach(body, data, init_states):
            states = init_states
            outs = []
            for i in range(data.shape[0]):
                out, states = body(data[i], states)
                outs.append(out)
            return stack(*outs), states

    Parameters
    ----------
    body : callable
        ``body(data_slice, states) -> (outputs, new_states)``: ``data_slice`` has the
        structure of ``data`` (an NDArray, or a list of NDArrays, each sliced at the
        step), ``states`` that of ``init_states``; ``outputs`` an NDArray or a (nested)
        list of NDArrays of the same shapes at every step; ``new_states`` the structure
        of ``init_states``.
    data : NDArray or list of NDArrays
        The arrays iterated over along their first axis (a list: all of one length).
    init_states : NDArray or (nested) list of NDArrays
        The states of the first step.

    Returns
    -------
    outputs : NDArray or (nested) list of NDArrays
        Each output of ``body`` stacked over the steps (a new axis 0), in the structure
        ``body`` returned.
    states : NDArray or (nested) list of NDArrays
        The states after the last step.

    Raises
    ------
    TypeError
        ``body`` not callable; ``data`` or ``init_states`` (or what ``body`` returns) not
        NDArrays or lists of them.
    ValueError
        ``data`` of length 0 along axis 0 (MXNet fails there too: there is no output to
        stack), lists of arrays of different lengths, or outputs whose number or shapes
        change between steps.

    Examples
    --------
    >>> step = lambda data, states: (data + states[0], [states[0] * 2])
    >>> data = nd.random.uniform(shape=(2, 10))
    >>> states = [nd.random.uniform(shape=(10,))]
    >>> outs, states = nd.contrib.foreach(step, data, states)
    """
    _callable("foreach", "body", body)
    flat, _ = _flatten(data, "foreach: data")
    if not flat:
        raise ValueError("foreach: data must hold at least one NDArray (got an empty list)")
    _flatten(init_states, "foreach: init_states")
    n = flat[0].shape[0] if flat[0].ndim else None
    if n is None or any(d.ndim == 0 or d.shape[0] != n for d in flat):
        raise ValueError("foreach: data must be arrays of one length along axis 0 (got "
                         f"shapes {[d.shape for d in flat]})")
    if n == 0:
        raise ValueError("foreach: data must have at least one slice along axis 0 (got "
                         f"shapes {[d.shape for d in flat]})")
    single = isinstance(data, NDArray)
    states = init_states
    steps, out_fmt = [], None
    for i in range(n):
        eles = data[i] if single else [d[i] for d in data]
        res = body(eles, states)
        if not isinstance(res, (list, tuple)) or len(res) != 2:
            raise TypeError("foreach: body must return a pair (outputs, new_states) (got "
                            f"{type(res).__name__})")
        outs, states = res
        outs, fmt = _flatten(outs, "foreach: the outputs of body")
        _flatten(states, "foreach: the states body returns")
        _append_step("foreach", "outputs of body", steps, outs)
        out_fmt = fmt
    stacked = [_stack(*items, axis=0)
               for items in _per_output("foreach", "output of body", steps)]
    outputs, _ = _regroup(stacked, out_fmt)
    return outputs, states


def while_loop(cond, func, loop_vars, max_iterations=None):
    """Run ``func`` while ``cond`` holds, at most ``max_iterations`` times (MXNet's
    ``nd.contrib.while_loop``).

    In pseudo-code::

        def while_loop(cond, func, loop_vars, max_iterations):
            steps, outputs = 0, []
            while steps < max_iterations and cond(*loop_vars):
                step_output, loop_vars = func(*loop_vars)
                outputs.append(step_output)
                steps += 1
            return stack(*outputs) padded to max_iterations rows, loop_vars

    Parameters
    ----------
    cond : callable
        ``cond(*loop_vars)`` -> an NDArray of one element (or a Python scalar): go on
        while it is true.
    func : callable
        ``func(*loop_vars) -> (step_output, new_loop_vars)``: ``step_output`` None, an
        NDArray or a (nested) list of NDArrays (of the same number and shapes at every
        step); ``new_loop_vars`` an NDArray or a list of as many NDArrays as
        ``loop_vars`` (None for none).
    loop_vars : NDArray or list of NDArrays
        The loop variables (at least one).
    max_iterations : int or NDArray of one element
        The most steps run; required (as in MXNet: the outputs have this many rows).

    Returns
    -------
    outputs : list or NDArray, or (nested) list of NDArrays
        Each step output stacked over the steps run (a new axis 0) and padded to
        ``max_iterations`` rows, in the structure ``func`` returned; ``[]`` when no step
        ran or ``func`` has no step output.  MXNet leaves the padding rows undefined;
        here they are zeros.
    loop_vars : NDArray or list of NDArrays
        The loop variables after the last step (an NDArray when ``loop_vars`` was one).

    Raises
    ------
    TypeError
        ``cond`` or ``func`` not callable; loop variables or outputs that are not NDArrays.
    ValueError
        ``max_iterations`` missing, negative or not an integer; ``loop_vars`` empty; a
        step that changes the number of loop variables or of outputs, or an output's
        shape; ``cond`` giving more than one element.

    Examples
    --------
    >>> cond = lambda i, s: i <= 5
    >>> func = lambda i, s: ([i + s], [i + 1, s + i])
    >>> loop_vars = (nd.array([0], dtype="int64"), nd.array([1], dtype="int64"))
    >>> outputs, states = nd.contrib.while_loop(cond, func, loop_vars, max_iterations=10)
    """
    _callable("while_loop", "cond", cond)
    _callable("while_loop", "func", func)
    if max_iterations is None:
        raise ValueError("while_loop: max_iterations must be specified (got None)")
    given = max_iterations
    if isinstance(max_iterations, NDArray):
        if max_iterations.size != 1:
            raise ValueError("while_loop: max_iterations must hold one element (got shape "
                             f"{max_iterations.shape})")
        max_iterations = max_iterations.asnumpy().reshape(())[()]
    if isinstance(max_iterations, (bool, np.bool_)) or not float(max_iterations).is_integer():
        raise ValueError(f"while_loop: max_iterations must be an integer (got {given!r})")
    max_iterations = int(max_iterations)
    if max_iterations < 0:
        raise ValueError(f"while_loop: max_iterations must be >= 0 (got {given!r})")
    single = isinstance(loop_vars, NDArray)
    loop_vars = [loop_vars] if single else loop_vars
    if not isinstance(loop_vars, (list, tuple)) or not all(
            isinstance(v, NDArray) for v in loop_vars):
        raise TypeError("while_loop: loop_vars must be an NDArray or a list of NDArrays (got "
                        f"{loop_vars!r})")
    if not loop_vars:
        raise ValueError("while_loop: loop_vars must contain at least one element")
    loop_vars = list(loop_vars)
    steps, out_fmt = [], None
    while len(steps) < max_iterations and _as_bool("while_loop", "the value of cond",
                                                   cond(*loop_vars)):
        res = func(*loop_vars)
        if not isinstance(res, (list, tuple)) or len(res) != 2:
            raise TypeError("while_loop: func must return a pair (step_output, "
                            f"new_loop_vars) (got {type(res).__name__})")
        out, new_vars = res
        out = [] if out is None else out
        new_vars = [] if new_vars is None else new_vars
        new_vars = [new_vars] if isinstance(new_vars, NDArray) else list(new_vars)
        if len(new_vars) != len(loop_vars):
            raise ValueError(f"while_loop: func returned {len(new_vars)} loop variables at "
                             f"step {len(steps)}, {len(loop_vars)} were given")
        if not all(isinstance(v, NDArray) for v in new_vars):
            raise TypeError("while_loop: the loop variables func returns must be NDArrays")
        flat, fmt = _flatten(out, "while_loop: the step output of func")
        _append_step("while_loop", "step outputs of func", steps, flat)
        out_fmt, loop_vars = fmt, new_vars
    stacked = []
    for items in _per_output("while_loop", "step output of func", steps):
        rows = [x.expand_dims(axis=0) for x in items]
        if len(items) < max_iterations:
            pad = empty((max_iterations - len(items),) + items[0].shape,
                        ctx=items[0].ctx, dtype=items[0].dtype)
            pad[:] = 0
            rows.append(pad)
        stacked.append(_concat(*rows, dim=0))
    outputs = _regroup(stacked, out_fmt)[0] if out_fmt is not None else []
    return outputs, (loop_vars[0] if single else loop_vars)


def cond(pred, then_func, else_func):
    """``then_func()`` if ``pred`` is true, else ``else_func()`` (MXNet's
    ``nd.contrib.cond``): only the branch taken runs, and autograd records only its
    operators.

    Parameters
    ----------
    pred : NDArray of one element, or a Python scalar
        The condition.
    then_func, else_func : callable
        Functions of no arguments returning an NDArray or a (nested) list of NDArrays.

    Returns
    -------
    What the branch taken returns.

    Raises
    ------
    TypeError
        ``then_func`` or ``else_func`` not callable.
    ValueError
        ``pred`` holding more (or less) than one element, or not convertible to a bool.

    Examples
    --------
    >>> a, b = nd.array([1]), nd.array([2])
    >>> nd.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))
    """
    _callable("cond", "then_func", then_func)
    _callable("cond", "else_func", else_func)
    return then_func() if _as_bool("cond", "pred", pred) else else_func()


# -- NaN and infinity tests ------------------------------------------------------------------

def _check(op, data):
    if not isinstance(data, NDArray):
        raise TypeError(f"{op}: data must be an NDArray (got {type(data).__name__})")


def _nan_test(name, what, rule, example, fn):
    def test(data):
        _check(name, data)
        return fn(data)
    test.__name__ = test.__qualname__ = name
    test.__doc__ = f"""1 where ``data`` is {what}, else 0, in data's dtype (MXNet's
    ``nd.contrib.{name}``: {rule}).

    Parameters
    ----------
    data : NDArray

    Returns
    -------
    NDArray
        Of data's shape and dtype.

    Examples
    --------
    >>> nd.contrib.{name}(nd.array([np.inf, -np.inf, np.nan, -1.0]))
    {example}
    """
    return test


isinf = _nan_test("isinf", "+inf or -inf", "``data.abs() == inf``", "[1. 1. 0. 0.]",
                  lambda data: data.abs() == np.inf)
isfinite = _nan_test("isfinite", "neither an infinity nor NaN",
                     "``data == data`` and ``data.abs() != inf``", "[0. 0. 0. 1.]",
                     lambda data: (data == data) * (data.abs() != np.inf))
isnan = _nan_test("isnan", "NaN", "``data != data``", "[0. 0. 1. 0.]",
                  lambda data: data != data)


# -- candidate sampling ----------------------------------------------------------------------

def zipfian_draw(uniform, true_classes, num_sampled, range_max):
    """The body of ``rand_zipfian`` for NDArrays and Symbols alike (their methods agree):
    ``uniform(high, shape)`` draws float64 values in [0, high)."""
    for what, v in (("num_sampled", num_sampled), ("range_max", range_max)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"rand_zipfian: {what} must be an integer >= 1 (got {v!r})")
    log_range = math.log(range_max + 1)
    # exp of a uniform draw on [0, log(range_max + 1)), minus 1 and truncated, is class c
    # with probability log((c + 2) / (c + 1)) / log(range_max + 1)
    draw = uniform(log_range, (int(num_sampled),))
    sampled = (draw.exp() - 1).astype("int64") % range_max

    def expected_count(classes):
        c = classes.astype("float64")
        return ((c + 2.0) / (c + 1.0)).log() / log_range * num_sampled

    return sampled, expected_count(true_classes), expected_count(sampled)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Candidates drawn with replacement from the approximately log-uniform (Zipfian)
    distribution on [0, range_max), P(c) = log((c + 2) / (c + 1)) / log(range_max + 1),
    and their expected counts (MXNet's ``nd.contrib.rand_zipfian``, for sampled softmax).

    Parameters
    ----------
    true_classes : NDArray
        The target classes (any integer or float dtype).
    num_sampled : int
        How many candidates to draw (>= 1).
    range_max : int
        The number of classes (>= 1).
    ctx : Context, optional
        Where the results live (default: the current context).

    Returns
    -------
    samples : NDArray
        ``(num_sampled,)`` int64 classes.
    expected_count_true : NDArray
        float64, ``P(c) * num_sampled`` for each class of ``true_classes``.
    expected_count_sampled : NDArray
        float64, the same for each sample.

    Examples
    --------
    >>> s, e_true, e_s = nd.contrib.rand_zipfian(nd.array([3]), 4, 5)
    >>> e_true                     # log(5 / 4) / log(6) * 4
    [0.49815515]
    """
    if not isinstance(true_classes, NDArray):
        raise TypeError(f"rand_zipfian: true_classes must be an NDArray (got "
                        f"{type(true_classes).__name__})")
    ctx = current_context() if ctx is None else ctx
    return zipfian_draw(
        lambda high, shape: _random.uniform(0, high, shape=shape, dtype="float64", ctx=ctx),
        true_classes.as_in_context(ctx), num_sampled, range_max)


# -- operators -------------------------------------------------------------------------------

_boolean_mask_op = make_function(registry.get("_contrib_boolean_mask"))  # needs size=


def boolean_mask(data, index, axis=0, out=None, name=None):
    """The slices of ``data`` along ``axis`` where ``index`` is nonzero (MXNet's
    ``nd.contrib.boolean_mask``).

    Parameters
    ----------
    data : NDArray
    index : NDArray
        1-D, one entry per slice of ``data`` along ``axis``; nonzero entries select.
    axis : int, default 0
        The axis selected along (MXNet 1.x takes only 0; any axis is taken here).
    out : NDArray, optional
        Where to write the result (its shape must be the result's).
    name : str, optional
        Accepted and ignored, as MXNet in imperative mode.

    Returns
    -------
    NDArray
        data's shape with ``axis`` shortened to the number of nonzero entries of index.
        Differentiable in ``data`` (the gradient is the output gradient at the selected
        slices, zero elsewhere).

    Raises
    ------
    ValueError
        ``index`` not 1-D or of another length than data's axis; ``axis`` out of range.

    Examples
    --------
    >>> data = nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    >>> nd.contrib.boolean_mask(data, nd.array([0, 1, 0]))
    [[4. 5. 6.]]
    """
    if not isinstance(index, NDArray):
        raise TypeError(f"boolean_mask: index must be an NDArray (got {type(index).__name__})")
    size = int(np.count_nonzero(index.asnumpy())) if index.ndim == 1 else None
    return _boolean_mask_op(data, index, axis=axis, size=size, out=out)


_op = prefixed("_contrib_")


index_copy = _op("index_copy")
index_array = _op("index_array")
arange_like = _op("arange_like")
div_sqrt_dim = _op("div_sqrt_dim")
quadratic = _op("quadratic")
gradientmultiplier = _op("gradientmultiplier")
allclose = _op("allclose")
fft = _op("fft")
ifft = _op("ifft")
count_sketch = _op("count_sketch")
ROIAlign = _op("ROIAlign")
BilinearResize2D = _op("BilinearResize2D")
AdaptiveAvgPooling2D = _op("AdaptiveAvgPooling2D")
box_iou = _op("box_iou")
box_nms = _op("box_nms")
box_non_maximum_suppression = _op("box_non_maximum_suppression")
MultiBoxPrior = _op("MultiBoxPrior")
MultiBoxDetection = _op("MultiBoxDetection")
MultiBoxTarget = _op("MultiBoxTarget")
bipartite_matching = _op("bipartite_matching")
box_encode = _op("box_encode")
box_decode = _op("box_decode")
getnnz = _op("getnnz")
CTCLoss = ctc_loss = _op("ctc_loss")
SparseEmbedding = _op("SparseEmbedding")

__all__ = ["foreach", "while_loop", "cond", "isinf", "isfinite", "isnan", "boolean_mask",
           "rand_zipfian",
           "index_copy", "index_array", "arange_like", "div_sqrt_dim", "quadratic",
           "gradientmultiplier", "allclose", "fft", "ifft", "count_sketch", "ROIAlign",
           "BilinearResize2D", "AdaptiveAvgPooling2D", "box_iou", "box_nms",
           "box_non_maximum_suppression", "MultiBoxPrior", "MultiBoxDetection", "MultiBoxTarget",
           "bipartite_matching",
           "box_encode", "box_decode", "getnnz", "CTCLoss", "ctc_loss", "SparseEmbedding"]
