"""Activation layers: Activation, LeakyReLU and hard_sigmoid (MXNet 1.x names, input and
attribute order, defaults and semantics).  Floating-point data only; gradient rules are made of
registry ops.
"""

import math

import numpy as np
import scipy.special as sps

from runtime import _rng as _random
from runtime._device import like
from runtime._imperative import is_training
from runtime._ndarray import from_numpy
from runtime.ops._call import F
from runtime.ops.registry import Attr, float_input, register

# -- Activation --------------------------------------------------------------------------

ACT_TYPES = ("relu", "sigmoid", "tanh", "softrelu", "softsign")


def _act(attrs, ins, outs):
    x, out = ins[0], outs[0]
    t = attrs["act_type"]
    if t == "relu":
        np.maximum(x, x.dtype.type(0), out=out)
    elif t == "sigmoid":
        sps.expit(x, out=out)
    elif t == "tanh":
        np.tanh(x, out=out)
    elif t == "softrelu":
        np.logaddexp(x.dtype.type(0), x, out=out)      # log(1 + exp(x)), stably
    else:
        np.divide(x, 1 + np.abs(x), out=out)


def _act_grad(attrs, inputs, outputs, out_grads):
    g = out_grads[0]
    t = attrs["act_type"]
    if t == "relu":       # relu's fused rule: NaN passes through, as MXNet's relu_grad
        return [F._backward_relu(g, outputs[0])]
    if t == "sigmoid":
        y = outputs[0]
        return [g * y * (1 - y)]
    if t == "tanh":
        y = outputs[0]
        return [g * (1 - F.square(y))]
    x = inputs[0]
    if t == "softrelu":
        return [g * F.sigmoid(x)]
    return [g / F.square(F.abs(x) + 1)]


def _act_in(attrs, n):
    return (0,) if attrs["act_type"] in ("softrelu", "softsign") else ()


def _act_out(attrs, n):
    return () if attrs["act_type"] in ("softrelu", "softsign") else (0,)


register(
    "Activation", attrs={"act_type": Attr("str", required=True, choices=ACT_TYPES)},
    infer_type=float_input("Activation", "data"), compute=_act, gradient=_act_grad,
    grad_inputs=_act_in, grad_outputs=_act_out, inplace=[(0, 0)],
    doc="""Elementwise activation (MXNet's ``Activation``), ``act_type`` one of
``relu`` max(x, 0), ``sigmoid`` 1 / (1 + exp(-x)), ``tanh``, ``softrelu`` log(1 +
exp(x)) (computed stably), ``softsign`` x / (1 + |x|).""")


# -- LeakyReLU ---------------------------------------------------------------------------

LEAKY_TYPES = ("leaky", "prelu", "elu", "selu", "gelu", "rrelu")
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_LAMBDA = 1.0507009873554804934193349852946


class _RReLUState:
    """rrelu's per-call state: whether it drew random slopes (training), and those."""

    __slots__ = ("training", "slopes")

    def __init__(self, training):
        self.training = training
        self.slopes = None


def _leaky_prepare(attrs):
    return _RReLUState(attrs["act_type"] == "rrelu" and is_training())


def _gamma_shape(shape):
    """The shape prelu's gamma broadcasts to: channels on axis 1, or one value."""
    return tuple(-1 if i == 1 else 1 for i in range(len(shape)))


def _leaky_shape(attrs, shapes):
    t = attrs["act_type"]
    want = 2 if t == "prelu" else 1
    if len(shapes) != want:
        names = "data, gamma" if want == 2 else "data"
        raise TypeError(f"LeakyReLU: takes {want} array input(s) ({names}) with "
                        f"act_type={t!r} (got {len(shapes)})")
    ds = tuple(shapes[0])
    if t == "prelu":
        gs = tuple(shapes[1])
        c = ds[1] if len(ds) >= 2 else None
        if gs != (1,) and (c is None or gs != (c,)):
            want_s = "(1,)" if c is None else f"(1,) or {(c,)!r} (data's channels, axis 1)"
            raise ValueError(f"LeakyReLU: gamma must have shape {want_s} (got {gs!r})")
    if t == "rrelu" and not attrs["lower_bound"] <= attrs["upper_bound"]:
        raise ValueError("LeakyReLU: lower_bound must be <= upper_bound (got "
                         f"{attrs['lower_bound']!r} > {attrs['upper_bound']!r})")
    return [ds]


def _leaky_inputs(attrs, shapes):
    """prelu's gamma, when not given, has one slope per channel (axis 1) of data."""
    ds, gs = shapes[0], shapes[1] if len(shapes) > 1 else None
    if attrs["act_type"] == "prelu" and len(shapes) == 2 and gs is None and ds is not None:
        return [ds, (ds[1],) if len(ds) >= 2 else (1,)]
    return list(shapes)


def _leaky_type(attrs, dtypes):
    d = np.dtype(dtypes[0])
    if d.kind != "f":
        raise TypeError(f"LeakyReLU: needs floating-point data (got {d}); cast with "
                        "astype('float32')")
    if len(dtypes) == 2 and np.dtype(dtypes[1]) != d:
        raise TypeError(f"LeakyReLU: gamma must have data's dtype {d} (got "
                        f"{np.dtype(dtypes[1])})")
    return [d]


def _leaky(attrs, ins, outs, state):
    x, out = ins[0], outs[0]
    t = attrs["act_type"]
    one = x.dtype.type(1)
    pos = x > 0
    if t == "leaky":
        np.multiply(x, np.where(pos, one, x.dtype.type(attrs["slope"])), out=out)
    elif t == "prelu":
        gamma = ins[1]
        g = gamma.reshape(()) if gamma.size == 1 else gamma.reshape(_gamma_shape(x.shape))
        np.multiply(x, np.where(pos, one, g), out=out)
    elif t == "elu":
        out[...] = np.where(pos, x, x.dtype.type(attrs["slope"]) * np.expm1(x))
    elif t == "selu":
        out[...] = SELU_LAMBDA * np.where(pos, x, SELU_ALPHA * np.expm1(x))
    elif t == "gelu":
        out[...] = 0.5 * x * (1 + sps.erf(x / math.sqrt(2)))
    else:
        lo, hi = attrs["lower_bound"], attrs["upper_bound"]
        if state.training:
            u = _random.generator().random(x.shape)
            slopes = (lo + (hi - lo) * u).astype(x.dtype)
            state.slopes = slopes
            slopes = like(x, slopes)
        else:
            slopes = x.dtype.type((lo + hi) / 2)
        np.multiply(x, np.where(pos, one, slopes), out=out)


def _leaky_grad(attrs, inputs, outputs, out_grads, state=None):
    g, x = out_grads[0], inputs[0]
    t = attrs["act_type"]
    pos = x > 0
    neg = 1 - pos
    if t == "leaky":
        return [g * (pos + neg * attrs["slope"])]
    if t == "prelu":
        gamma = inputs[1]
        shared = gamma.shape[0] == 1
        gb = gamma.reshape((1,) * x.ndim if shared else _gamma_shape(x.shape))
        dx = g * (pos + neg * gb)
        gx = g * x * neg
        dgamma = F.sum(gx) if shared else F.sum(gx, axis=1, exclude=True)
        return [dx, dgamma]
    if t == "elu":
        return [g * (pos + neg * F.exp(x) * attrs["slope"])]
    if t == "selu":
        return [g * (pos + neg * F.exp(x) * SELU_ALPHA) * SELU_LAMBDA]
    if t == "gelu":
        cdf = (F.erf(x * (1 / math.sqrt(2))) + 1) * 0.5
        pdf = F.exp(F.square(x) * -0.5) * (1 / math.sqrt(2 * math.pi))
        return [g * (cdf + x * pdf)]
    if state is not None and state.slopes is not None:
        slopes = from_numpy(state.slopes, g.ctx)
        return [g * (pos + neg * slopes)]
    return [g * (pos + neg * ((attrs["lower_bound"] + attrs["upper_bound"]) / 2))]


def _leaky_reads(attrs, n):
    return (0, 1) if attrs["act_type"] == "prelu" else (0,)


register(
    "LeakyReLU", inputs=("data", "gamma"), variadic=True,
    attrs={"act_type": Attr("str", "leaky", choices=LEAKY_TYPES),
           "slope": Attr("float", 0.25), "lower_bound": Attr("float", 0.125),
           "upper_bound": Attr("float", 0.334)},
    infer_shape=_leaky_shape, infer_type=_leaky_type, compute=_leaky,
    prepare=_leaky_prepare, gradient=_leaky_grad, grad_inputs=_leaky_reads,
    needs_rng=True, infer_inputs=_leaky_inputs,
    input_inits={"gamma": '["Constant", {"value": 0.25}]'},
    doc="""Leaky rectifiers (MXNet's ``LeakyReLU``), ``x`` where ``x > 0``, else by
``act_type``: ``leaky`` ``slope * x``; ``prelu`` ``gamma * x`` with the learned
``gamma`` input (shape (channels,) along axis 1, or (1,) shared; the only act_type that
takes it); ``elu`` ``slope * (exp(x) - 1)``; ``selu`` ``lambda * alpha * (exp(x) - 1)``
(and ``lambda * x`` for ``x > 0``; alpha 1.6733, lambda 1.0507); ``gelu`` ``x * Phi(x)``
for every x (the erf form, as MXNet); ``rrelu`` ``s * x`` with ``s`` drawn uniformly from
[lower_bound, upper_bound] per element in training (``runtime.random``'s generator; the
gradient uses the forward's draw) and ``(lower_bound + upper_bound) / 2`` otherwise.""")


# -- hard_sigmoid ---------------------------------------------------------------------------


def _hard_sigmoid(attrs, ins, outs):
    x, out = ins[0], outs[0]
    np.multiply(x, x.dtype.type(attrs["alpha"]), out=out)
    np.add(out, out.dtype.type(attrs["beta"]), out=out)
    np.clip(out, 0, 1, out=out)


def _hard_sigmoid_grad(attrs, inputs, outputs, out_grads):
    y = outputs[0]
    inside = (y > 0.0) * (y < 1.0)
    return [out_grads[0] * inside * attrs["alpha"]]


register("hard_sigmoid", attrs={"alpha": Attr("float", 0.2), "beta": Attr("float", 0.5)},
         infer_type=float_input("hard_sigmoid"), compute=_hard_sigmoid,
         gradient=_hard_sigmoid_grad, grad_outputs=(0,), inplace=[(0, 0)],
         doc="""``max(0, min(1, alpha * x + beta))`` (MXNet's hard_sigmoid; alpha 0.2,
beta 0.5 by default).  The gradient is ``alpha`` where the output is strictly between 0
and 1, zero elsewhere.""")
