"""Fused backward kernels (MXNet's hidden ``_backward_<op>`` operators).

The gradient rules of ``tanh`` and ``relu`` on dense arrays call one of these instead of
composing three or two elementwise ops: ``_backward_tanh(ograd, y) = ograd * (1 - y*y)``
and ``_backward_relu(ograd, y) = ograd * (y > 0)``, ``y`` the forward's output.  The
kernel runs in blocks through a small scratch buffer, so it makes no temporary the size
of its operands, and it may write into ``ograd`` itself (``inplace`` (0, 0)): the
backward executor donates an out-grad that no one else reads, and the invoker then
writes the result into it.  A 50-deep tanh chain so keeps one gradient buffer beside
the 50 saved outputs, the least possible.  The arithmetic is that of the composed rule,
in the same order, so the results are the same bit for bit.

Each op has a gradient rule of its own, so that ``create_graph`` works through it.
"""

import numpy as np

from runtime.ops._call import F, zeros
from runtime.ops.registry import equal_shapes, float_input, register, same_dtype

BLOCK = 1 << 16      # elements per block: the scratch stays in the L2 cache


def _types(name, floating):
    def infer(attrs, dtypes):
        same_dtype(name, dtypes)
        return float_input(name, "lhs")(attrs, dtypes) if floating else [dtypes[0]]
    return infer


def _blocked(first, last, scratch_dtype):
    """A kernel ``out = last(g, first(y))`` run block by block through one scratch
    buffer (NumPy); on CuPy arrays, one expression."""
    def compute(attrs, ins, outs):
        g, y = ins
        out = outs[0]
        if type(out) is not np.ndarray:
            out[...] = last(g, first(y, None), None)
            return
        n = out.size
        if n <= BLOCK:                    # one block: no flat views, no slicing
            t = np.empty(out.shape, scratch_dtype or out.dtype)
            first(y, t)
            last(g, t, out)
            return
        g, y, out = g.reshape(-1), y.reshape(-1), out.reshape(-1)
        t = np.empty(min(n, BLOCK), scratch_dtype or out.dtype)
        for s in range(0, n, BLOCK):
            e = min(s + BLOCK, n)
            tt = t[:e - s]
            first(y[s:e], tt)
            last(g[s:e], tt, out[s:e])     # reads g's block before writing it
    return compute


def _one_minus_square(y, t):
    if t is None:
        return 1 - y * y
    np.multiply(y, y, out=t)
    return np.subtract(1, t, out=t)


def _positive(y, t):
    return y > 0 if t is None else np.greater(y, 0, out=t)


def _times(g, t, out):
    return g * t if out is None else np.multiply(g, t, out=out)


def _backward_tanh_grad(attrs, inputs, outputs, out_grads):
    # d/d ograd: (1 - y^2) * g; d/dy: -2 * ograd * y * g
    dy, y = inputs
    g = out_grads[0]
    return [F._backward_tanh(g, y), g * dy * y * -2.0]


def _backward_relu_grad(attrs, inputs, outputs, out_grads):
    # d/d ograd: (y > 0) * g; the step in y has derivative 0 wherever it is defined
    return [F._backward_relu(out_grads[0], inputs[1]), zeros(inputs[1])]


register(
    "_backward_tanh", inputs=("lhs", "rhs"), infer_shape=equal_shapes("_backward_tanh", "lhs and rhs"),
    infer_type=_types("_backward_tanh", True),
    compute=_blocked(_one_minus_square, _times, None),
    gradient=_backward_tanh_grad, grad_inputs=(0, 1), inplace=[(0, 0)],
    doc="""Hidden: the gradient of tanh, ``lhs * (1 - rhs * rhs)`` with ``lhs`` the
out-grad and ``rhs`` tanh's output (same shape and floating dtype); no temporary the
size of the operands.""")

register(
    "_backward_relu", inputs=("lhs", "rhs"), infer_shape=equal_shapes("_backward_relu", "lhs and rhs"),
    infer_type=_types("_backward_relu", False),
    compute=_blocked(_positive, _times, np.bool_),
    gradient=_backward_relu_grad, grad_inputs=(1,), inplace=[(0, 0)],
    doc="""Hidden: the gradient of relu, ``lhs * (rhs > 0)`` with ``lhs`` the out-grad and
``rhs`` relu's output (same shape and dtype); no temporary the size of the
operands.""")
