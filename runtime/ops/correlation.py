"""``Correlation`` (MXNet 1.x's FlowNet correlation layer: name, signature, defaults,
semantics) and its hidden gradient ``_backward_Correlation``.

Both data (N, C, H, W) are zero-padded by ``pad_size``; output position (i, j) compares
the ``kernel_size`` x ``kernel_size`` patch of data1 whose corner is ``(i * stride1 +
max_displacement, j * stride1 + max_displacement)`` in the padded map with the patches of
data2 displaced by ``(p - r) * stride2`` rows and ``(o - r) * stride2`` columns, ``r =
max_displacement // stride2``, for output channel ``p * (2r + 1) + o``: the mean over the
patch and the channels of the products (``is_multiply``) or of the absolute differences.
Output (N, (2r + 1)^2, ceil((H + 2 pad - 2 b) / stride1), ceil((W + 2 pad - 2 b) /
stride1)), ``b = max_displacement + (kernel_size - 1) // 2``, as MXNet's.

Kernels: NumPy on the host, one strided slice product per (patch offset, displacement)
pair over every batch, channel and output position at once.
"""

import math

import numpy as np

from runtime._device import store, to_host
from runtime.ops._call import F
from runtime.ops.registry import Attr, float_input, register

_ATTRS = {"kernel_size": Attr("int", 1), "max_displacement": Attr("int", 1),
          "stride1": Attr("int", 1), "stride2": Attr("int", 1), "pad_size": Attr("int", 0),
          "is_multiply": Attr("bool", True)}


class _Plan:
    """The geometry of one call (validated)."""

    def __init__(self, op, attrs, shape):
        if len(shape) != 4:
            raise ValueError(f"{op}: data must be 4-D (N, C, H, W) (got shape {shape!r})")
        k, md = attrs["kernel_size"], attrs["max_displacement"]
        s1, s2, pad = attrs["stride1"], attrs["stride2"], attrs["pad_size"]
        if k < 1 or k % 2 == 0:
            raise ValueError(f"{op}: kernel_size must be an odd number >= 1 (got {k})")
        for name, v, lo in (("max_displacement", md, 0), ("stride1", s1, 1),
                            ("stride2", s2, 1), ("pad_size", pad, 0)):
            if v < lo:
                raise ValueError(f"{op}: {name} must be >= {lo} (got {v})")
        n, c, h, w = shape
        border = md + (k - 1) // 2
        self.k, self.md, self.s1, self.s2, self.pad = k, md, s1, s2, pad
        self.radius = md // s2
        self.grid = 2 * self.radius + 1
        self.top_h = math.ceil((h + 2 * pad - 2 * border) / s1)
        self.top_w = math.ceil((w + 2 * pad - 2 * border) / s1)
        if self.top_h < 1 or self.top_w < 1:
            raise ValueError(f"{op}: data of shape {shape!r} is too small for "
                             f"max_displacement={md}, kernel_size={k} and pad_size={pad} "
                             f"(no output position)")
        self.out_shape = (n, self.grid * self.grid, self.top_h, self.top_w)
        self.norm = k * k * c

    def padded(self, x):
        """x zero-padded by pad_size, and by enough more that every window MXNet's
        loops index lies inside (those extra zeros are never read by valid shapes)."""
        extra = self.radius * self.s2 + self.k + self.s1
        p = self.pad
        return np.pad(x, ((0, 0), (0, 0), (p, p + extra), (p, p + extra)))

    def windows(self):
        """(top channel, rows of data1, cols of data1, rows of data2, cols of data2) of
        every (displacement, patch offset): slices of the padded maps."""
        th, tw, s1 = self.top_h, self.top_w, self.s1
        for p in range(self.grid):
            dy = (p - self.radius) * self.s2
            for o in range(self.grid):
                dx = (o - self.radius) * self.s2
                for h in range(self.k):
                    for w in range(self.k):
                        y1, x1 = self.md + h, self.md + w
                        yield (p * self.grid + o, slice(y1, y1 + s1 * th, s1),
                               slice(x1, x1 + s1 * tw, s1),
                               slice(y1 + dy, y1 + dy + s1 * th, s1),
                               slice(x1 + dx, x1 + dx + s1 * tw, s1))


def _shape(attrs, shapes):
    a, b = tuple(shapes[0]), tuple(shapes[1])
    if a != b:
        raise ValueError(f"Correlation: data1 and data2 must have one shape (got {a!r} and "
                         f"{b!r})")
    return [_Plan("Correlation", attrs, a).out_shape]


def _type(attrs, dtypes):
    if dtypes[0] != dtypes[1]:
        raise TypeError(f"Correlation: data1 and data2 must have one dtype (got "
                        f"{dtypes[0]} and {dtypes[1]})")
    return float_input("Correlation")(attrs, dtypes[:1])


def _forward(attrs, ins, outs):
    a, b = to_host(ins[0]), to_host(ins[1])
    plan = _Plan("Correlation", attrs, a.shape)
    acc = np.float64 if a.dtype == np.float64 else np.float32
    t1, t2 = plan.padded(a.astype(acc)), plan.padded(b.astype(acc))
    out = np.zeros(plan.out_shape, acc)
    for tc, r1, c1, r2, c2 in plan.windows():
        u, v = t1[:, :, r1, c1], t2[:, :, r2, c2]
        out[:, tc] += (u * v if attrs["is_multiply"] else np.abs(u - v)).sum(axis=1)
    store(outs[0], out / acc(plan.norm))


register(
    "Correlation", inputs=("data1", "data2"), attrs=_ATTRS, infer_shape=_shape,
    infer_type=_type, compute=_forward,
    gradient=lambda attrs, inputs, outputs, g: list(
        F._backward_Correlation(g[0], inputs[0], inputs[1], **attrs)),
    grad_inputs=(0, 1),
    doc=__doc__.split("\n\n", 1)[1].split("\n\nKernels")[0] + """

Gradients (MXNet's): of the products, the other map's patch values; of the absolute
differences, +-1 by which map holds the larger value (ties count for data1), each over
the padded maps and kept only inside the unpadded data.""")


def _backward_shape(attrs, shapes):
    g, a, b = (tuple(s) for s in shapes)
    if a != b:
        raise ValueError(f"_backward_Correlation: data1 and data2 must have one shape (got "
                         f"{a!r} and {b!r})")
    want = _Plan("_backward_Correlation", attrs, a).out_shape
    if g != want:
        raise ValueError(f"_backward_Correlation: grad must have shape {want!r} (got "
                         f"{g!r})")
    return [a, a]


def _backward(attrs, ins, outs):
    g, a, b = (to_host(x) for x in ins)
    plan = _Plan("_backward_Correlation", attrs, a.shape)
    acc = np.float64 if a.dtype == np.float64 else np.float32
    t1, t2 = plan.padded(a.astype(acc)), plan.padded(b.astype(acc))
    g1, g2 = np.zeros_like(t1), np.zeros_like(t2)
    gs = g.astype(acc) / acc(plan.norm)
    for tc, r1, c1, r2, c2 in plan.windows():
        head = gs[:, tc][:, None]
        u, v = t1[:, :, r1, c1], t2[:, :, r2, c2]
        if attrs["is_multiply"]:
            g1[:, :, r1, c1] += head * v
            g2[:, :, r2, c2] += head * u
        else:
            sign = np.where(u >= v, acc(1), acc(-1))
            g1[:, :, r1, c1] += head * sign
            g2[:, :, r2, c2] -= head * sign
    h, w = a.shape[2:]
    p = plan.pad
    store(outs[0], g1[:, :, p:p + h, p:p + w])
    store(outs[1], g2[:, :, p:p + h, p:p + w])


register(
    "_backward_Correlation", inputs=("grad", "data1", "data2"), attrs=_ATTRS,
    num_outputs=2, infer_shape=_backward_shape,
    infer_type=lambda attrs, dtypes: [_type(attrs, dtypes[1:])[0]] * 2,
    compute=_backward, differentiable=False,
    doc="""Hidden: Correlation's gradients (data1's, data2's) for the head gradient
``grad``.  Not differentiable itself (no gradient of gradient).""")
