"""Normalisation operators: BatchNorm, LayerNorm, InstanceNorm, GroupNorm,
L2Normalization, LRN (and its hidden window sum ``_lrn_window_sum``) (MXNet 1.x names,
input and attribute order, defaults and semantics).

Statistics are computed in float32 for float16 data (MXNet's accumulation type) and in the
data's dtype otherwise; variances are the biased (population) ones, as MXNet's.  The
``output_mean_var`` outputs carry no gradient (MXNet: "gradient of these two outputs are
blocked"): the rules read only the first output's head gradient.

BatchNorm keeps its per-call state (``prepare``): whether the call used the batch
statistics (training, see ``autograd.is_training``, and not ``use_global_stats``), and
the mean and inverse standard deviation it normalised with, which the gradient reuses.
Its batch-statistics gradient is one fused hidden operator, ``_backward_BatchNorm``; the
others are made of registry ops.
"""

import numpy as np

from runtime import _norm_kernels as _k
from runtime._device import array_module, to_host
from runtime._imperative import is_training
from runtime._ndarray import from_numpy, shape_size
from runtime.ops._call import F, zeros
from runtime.ops.registry import Attr, float_input, normalize_axis, register


def _acc(dtype):
    """The dtype statistics and parameters are kept in (MXNet's AccReal)."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def _float_data(op, dtype):
    if np.dtype(dtype).kind != "f":
        raise TypeError(f"{op}: needs floating-point data (got {dtype}); cast with "
                        "astype('float32')")


def _param_type(op, names, acc_of_data):
    """An ``infer_type`` for (data, params...): floating data; each parameter in the
    accumulation dtype (float32 for float16 data) when ``acc_of_data``, else data's."""
    def infer(attrs, dtypes):
        d = np.dtype(dtypes[0])
        _float_data(op, d)
        want = _acc(d) if acc_of_data else d
        for name, t in zip(names, dtypes[1:]):
            if np.dtype(t) != want:
                raise TypeError(f"{op}: {name} must have dtype {want} for {d} data (got "
                                f"{np.dtype(t)})")
        return None, want
    return infer


def _eps(op, attrs):
    eps = attrs["eps"]
    if not (eps >= 0 and np.isfinite(eps)):
        raise ValueError(f"{op}: eps must be finite and >= 0 (got {eps!r})")
    return eps


def _inv_std(var, eps):
    """1 / sqrt(var + eps); 0 where that is 1/0 (MXNet's rule for eps == 0)."""
    if eps > 0:                          # nothing to divide by zero (errstate costs more)
        return 1.0 / np.sqrt(var + var.dtype.type(eps))
    with np.errstate(divide="ignore"):
        r = 1.0 / np.sqrt(var)
    r[~np.isfinite(r)] = 0
    return r


def _param_shape(op, names, shapes, want, what):
    for name, s in zip(names, shapes):
        if tuple(s) != want:
            raise ValueError(f"{op}: {name} must have shape {want!r} ({what}) (got "
                             f"{tuple(s)!r})")


# -- BatchNorm ---------------------------------------------------------------------------

BN_PARAMS = ("gamma", "beta", "moving_mean", "moving_var")


class _BNState:
    """Per-call state: ``training`` (batch statistics, moving ones updated) and the
    ``mean``/``invstd`` (host arrays) the kernel normalised with."""

    __slots__ = ("training", "mean", "invstd")

    def __init__(self, training):
        self.training = training
        self.mean = self.invstd = None


def _bn_prepare(attrs):
    return _BNState(is_training() and not attrs["use_global_stats"])


def _bn_split(shape, axis):
    return shape_size(shape[:axis]), shape[axis], shape_size(shape[axis + 1:])


def _bn_shape(attrs, shapes):
    ds = tuple(shapes[0])
    if not ds:
        raise ValueError("BatchNorm: data must have at least 1 dimension (got shape ())")
    axis = normalize_axis("BatchNorm", attrs["axis"], len(ds))
    _eps("BatchNorm", attrs)
    mom = attrs["momentum"]
    if not 0.0 <= mom <= 1.0:
        raise ValueError(f"BatchNorm: momentum must be in [0, 1] (got {mom!r})")
    c = ds[axis]
    _param_shape("BatchNorm", BN_PARAMS, shapes[1:], (c,),
                 f"data's size {c} on axis {attrs['axis']}")
    if attrs["output_mean_var"]:
        return [ds, (c,), (c,)]
    return [ds]


_bn_dtypes = _param_type("BatchNorm", BN_PARAMS, True)


def _bn_type(attrs, dtypes):
    _, acc = _bn_dtypes(attrs, dtypes)
    d = np.dtype(dtypes[0])
    return [d, acc, acc] if attrs["output_mean_var"] else [d]


def _bn_view(a, acc, pre, c, post):
    v = a.reshape(pre, c, post)
    return v if v.dtype == acc else v.astype(acc)


def _fused(*arrays):
    """True when the compiled kernels take these kernel arrays: host float32/float64."""
    for a in arrays:
        if type(a) is not np.ndarray or a.dtype not in _KERNEL_DTYPES \
                or not a.flags.c_contiguous:
            return False
    return True


_KERNEL_DTYPES = (np.float32, np.float64)


def _batchnorm(attrs, ins, outs, state):
    x, gamma, beta, mm, mv = ins
    axis = normalize_axis("BatchNorm", attrs["axis"], x.ndim)
    pre, c, post = _bn_split(x.shape, axis)
    m = pre * post
    acc = mm.dtype
    eps = attrs["eps"]
    if state.training and m == 0 and c > 0:
        raise ValueError(f"BatchNorm: training needs at least one value per channel (got "
                         f"data of shape {x.shape!r})")
    out = outs[0]
    w = np.ones_like(gamma) if attrs["fix_gamma"] else gamma
    if _fused(x, out) and x.dtype == acc:
        xv, yv = x.reshape(pre, c, post), out.reshape(pre, c, post)
        if state.training:
            mean64, var64 = np.empty(c), np.empty(c)
            _k.channel_moments(xv, mean64, var64)
            mean, var = mean64.astype(acc), var64.astype(acc)
            invstd = _inv_std(var64, eps).astype(acc)
        else:
            mean, var = mm.copy(), mv
            invstd = _inv_std(mv, eps)
        a = invstd * w
        _k.channel_affine(xv, a, beta - mean * a, yv)
    else:
        xv = _bn_view(x, acc, pre, c, post)
        yv = out.reshape(pre, c, post) if out.dtype == acc else np.empty(xv.shape, acc)
        if state.training:
            mean = xv.sum(axis=2).sum(axis=0) / acc.type(m)
            np.subtract(xv, mean[:, None], out=yv)
            var = np.einsum("pcq,pcq->c", yv, yv) / acc.type(m)
            invstd = _inv_std(var, eps)
            np.multiply(yv, (invstd * w)[:, None], out=yv)
            np.add(yv, beta[:, None], out=yv)
        else:
            mean, var = mm.copy(), mv
            invstd = _inv_std(mv, eps)
            a = invstd * w
            np.multiply(xv, a[:, None], out=yv)
            np.add(yv, (beta - mean * a)[:, None], out=yv)
        if out.dtype != acc:
            out[...] = yv.reshape(out.shape)
    if attrs["output_mean_var"]:
        outs[1][...] = mean
        outs[2][...] = invstd
    state.mean, state.invstd = to_host(mean, copy=True), to_host(invstd, copy=True)
    if state.training:                   # the aux states, last: nothing fails after this
        mom = acc.type(attrs["momentum"])
        one = acc.type(1)
        mm[...] = mm * mom + mean * (one - mom)
        mv[...] = mv * mom + var * (one - mom)


def _chan(v, ndim, axis, dtype):
    """Per-channel vector ``v`` reshaped to broadcast along ``axis`` of an ``ndim``-d
    array, in ``dtype``."""
    shape = tuple(v.shape[0] if i == axis else 1 for i in range(ndim))
    v = v.reshape(shape)
    return v if np.dtype(v.dtype) == np.dtype(dtype) else F.cast(v, dtype=dtype)


def _bn_stats(attrs, training, x, mm, mv):
    """(mean, invstd) NDArrays, made of registry ops (a rule called without its
    forward's state)."""
    axis = normalize_axis("BatchNorm", attrs["axis"], x.ndim)
    if training:
        acc = _acc(x.dtype)
        x = x if np.dtype(x.dtype) == acc else F.cast(x, dtype=acc)
        mean = F.mean(x, axis=axis, exclude=True)
        xc = x - _chan(mean, x.ndim, axis, acc)
        var = F.mean(F.square(xc), axis=axis, exclude=True)
        return mean, F.rsqrt(var + attrs["eps"])
    return mm, F.rsqrt(mv + attrs["eps"])


def _bn_grad(attrs, inputs, outputs, out_grads, state=None):
    x, gamma, beta, mm, mv = inputs
    g = out_grads[0]
    fix = attrs["fix_gamma"]
    if state is None:                    # without the forward: decide as a call now would
        state = _bn_prepare(attrs)
    if g.size == 0:
        return [zeros(x), zeros(gamma), zeros(beta), None, None]
    axis = normalize_axis("BatchNorm", attrs["axis"], g.ndim)
    if state.mean is not None:
        mean, invstd = from_numpy(state.mean, g.ctx), from_numpy(state.invstd, g.ctx)
    else:
        mean, invstd = _bn_stats(attrs, state.training, x, mm, mv)
    if state.training:
        args = [g, x, mean, invstd] + ([] if fix else [gamma])
        dx, dgamma, dbeta = F._backward_BatchNorm(*args, axis=attrs["axis"])
        return [dx, zeros(gamma) if fix else dgamma, dbeta, None, None]
    # the moving statistics: an affine map per channel
    scale = invstd if fix else invstd * gamma
    dx = g * _chan(scale, g.ndim, axis, g.dtype)
    gs = g if np.dtype(g.dtype) == np.dtype(beta.dtype) else F.cast(g, dtype=beta.dtype)
    dbeta = F.sum(gs, axis=axis, exclude=True)
    if fix:
        dgamma = zeros(gamma)
    else:
        xs = x if np.dtype(x.dtype) == np.dtype(beta.dtype) else F.cast(x, dtype=beta.dtype)
        xc = xs - _chan(mean, g.ndim, axis, beta.dtype)
        dgamma = F.sum(gs * xc, axis=axis, exclude=True) * invstd
    return [dx, dgamma, dbeta, None, None]


def _bn_reads(attrs, n):
    state = attrs.get("_state")
    if state is None:
        state = _bn_prepare(attrs)
    fix = attrs["fix_gamma"]
    if state.training:
        return (0,) if fix else (0, 1)
    if state.mean is not None:
        return () if fix else (0, 1)
    return (4,) if fix else (0, 1, 3, 4)


def _axis_inputs(attrs, shapes):
    # the per-channel inputs (BatchNorm's gamma, beta and moving statistics, LayerNorm's
    # gamma and beta): (size of data's axis,)
    data = shapes[0]
    if data is not None and -len(data) <= attrs["axis"] < len(data):
        c = (data[attrs["axis"]],)
        shapes[1:] = [s or c for s in shapes[1:]]
    return shapes


register(
    "BatchNorm", inputs=("data",) + BN_PARAMS,
    attrs={"eps": Attr("float", 1e-3), "momentum": Attr("float", 0.9),
           "fix_gamma": Attr("bool", True), "use_global_stats": Attr("bool", False),
           "output_mean_var": Attr("bool", False), "axis": Attr("int", 1),
           "cudnn_off": Attr("bool", False)},
    num_outputs=lambda attrs: 3 if attrs["output_mean_var"] else 1,
    infer_shape=_bn_shape, infer_type=_bn_type, compute=_batchnorm, prepare=_bn_prepare,
    gradient=_bn_grad, grad_inputs=_bn_reads, mutates=(3, 4), infer_inputs=_axis_inputs,
    doc="""Batch normalisation (MXNet's ``BatchNorm``): per channel (``axis``, default 1;
negative counts from the end) ``out = (data - mean) / sqrt(var + eps) * gamma + beta``.

In training (``autograd.train_mode()``/``record()``, ``is_training()``) without
``use_global_stats``, ``mean`` and ``var`` are the batch's (biased variance) and the aux
states are updated in place: ``moving_mean = moving_mean * momentum + mean * (1 -
momentum)``, the same for ``moving_var`` with the batch variance.  Otherwise the moving
statistics normalise and nothing is written.  ``fix_gamma=True`` (the default) uses 1 for
gamma and gives gamma a zero gradient (MXNet also writes 1 into gamma; here gamma is left
alone).  ``output_mean_var=True`` adds two outputs, the mean and the inverse standard
deviation ``1 / sqrt(var + eps)`` that normalised (their gradients are blocked, as in
MXNet).  float16 data takes float32 gamma, beta and moving statistics (MXNet).
``cudnn_off`` is accepted and ignored.  moving_mean and moving_var get no gradient.

Difference from MXNet: MXNet's CPU kernel updates the moving statistics in the backward
pass (its GPU kernel in the forward); here the forward updates them, so that a forward
in training mode without backward updates them too (PyTorch, cuDNN).""")


def _bn_backward_shape(attrs, shapes):
    gs, xs = tuple(shapes[0]), tuple(shapes[1])
    if gs != xs:
        raise ValueError(f"_backward_BatchNorm: grad must have data's shape {xs!r} (got "
                         f"{gs!r})")
    if not xs:
        raise ValueError("_backward_BatchNorm: data must have at least 1 dimension (got "
                         "shape ())")
    axis = normalize_axis("_backward_BatchNorm", attrs["axis"], len(xs))
    c = xs[axis]
    _param_shape("_backward_BatchNorm", ("mean", "invstd", "gamma"), shapes[2:], (c,),
                 f"data's size {c} on axis {attrs['axis']}")
    if len(shapes) not in (4, 5):
        raise TypeError("_backward_BatchNorm: takes 4 or 5 array inputs (grad, data, mean, "
                        f"invstd[, gamma]) (got {len(shapes)})")
    return [xs, (c,), (c,)]


_bn_backward_dtypes = _param_type("_backward_BatchNorm", ("data", "mean", "invstd", "gamma"),
                                  False)


def _bn_backward_type(attrs, dtypes):
    d = np.dtype(dtypes[0])
    _float_data("_backward_BatchNorm", d)
    if np.dtype(dtypes[1]) != d:
        raise TypeError(f"_backward_BatchNorm: data must have grad's dtype {d} (got "
                        f"{np.dtype(dtypes[1])})")
    acc = _acc(d)
    for name, t in zip(("mean", "invstd", "gamma"), dtypes[2:]):
        if np.dtype(t) != acc:
            raise TypeError(f"_backward_BatchNorm: {name} must have dtype {acc} (got "
                            f"{np.dtype(t)})")
    return [d, acc, acc]


def _bn_backward(attrs, ins, outs):
    g, x, mean, invstd = ins[:4]
    axis = normalize_axis("_backward_BatchNorm", attrs["axis"], x.ndim)
    pre, c, post = _bn_split(x.shape, axis)
    m = pre * post
    acc = mean.dtype
    w = ins[4] if len(ins) == 5 else np.ones_like(mean)
    out = outs[0]
    fused = _fused(g, x, out) and x.dtype == acc
    if fused:
        gv, xv = g.reshape(pre, c, post), x.reshape(pre, c, post)
        sum_g, dot = np.empty(c), np.empty(c)              # dot: sum(g * (x - mean))
        _k.channel_dot(gv, xv, mean.astype(np.float64), sum_g, dot)
    else:
        gv, xv = _bn_view(g, acc, pre, c, post), _bn_view(x, acc, pre, c, post)
        sum_g = gv.sum(axis=2).sum(axis=0)
        dot = np.einsum("pcq,pcq->c", gv, xv) - mean * sum_g
    outs[1][...] = dot * invstd
    outs[2][...] = sum_g
    if m == 0:
        return
    # dx = (g - sum_g / m - (x - mean) * k) * invstd * w, k = dot * invstd^2 / m,
    # as dx = g * a + x * b + d per channel
    a = invstd * w
    b = -dot * invstd * invstd / m * a
    d = -(sum_g / m) * a - mean * b
    if fused:
        _k.channel_affine2(xv, b.astype(acc), gv, a.astype(acc), d.astype(acc),
                           out.reshape(pre, c, post))
        return
    a, b, d = a.astype(acc), b.astype(acc), d.astype(acc)
    dv = out.reshape(pre, c, post) if out.dtype == acc else np.empty(xv.shape, acc)
    np.multiply(xv, b[:, None], out=dv)
    np.add(dv, d[:, None], out=dv)
    tmp = np.multiply(gv, a[:, None])
    np.add(dv, tmp, out=dv)
    if out.dtype != acc:
        out[...] = dv.reshape(out.shape)


register(
    "_backward_BatchNorm", inputs=("grad", "data", "mean", "invstd", "gamma"),
    variadic=True, attrs={"axis": Attr("int", 1)}, num_outputs=3,
    infer_shape=_bn_backward_shape, infer_type=_bn_backward_type, compute=_bn_backward,
    doc="""Hidden: BatchNorm's gradient with batch statistics, fused: (d data, d gamma,
d beta) from the head gradient, the data, the batch ``mean`` and ``invstd`` the forward
used and ``gamma`` (absent: 1, fix_gamma).  Its own gradient is not implemented.""")


# -- LayerNorm, InstanceNorm, GroupNorm ----------------------------------------------------

def _moments(x, red, eps):
    """(xhat, mean, std) of kernel array ``x`` over axes ``red`` (kept), in the
    accumulation dtype."""
    acc = _acc(x.dtype)
    xa = x if x.dtype == acc else x.astype(acc)
    mean = xa.mean(axis=red, keepdims=True)
    xc = xa - mean
    std = np.sqrt(np.square(xc).mean(axis=red, keepdims=True) + acc.type(eps))
    with np.errstate(divide="ignore", invalid="ignore"):
        xhat = np.divide(xc, std, out=xc)
    return xhat, mean, std


def _normalized_grad(gx, x, red, eps):
    """d x of ``xhat * (...)`` where ``gx`` is the gradient reaching ``xhat = (x -
    mean) / sqrt(var + eps)`` over axes ``red`` (registry ops); returns (dx, xhat)."""
    mean = F.mean(x, axis=red, keepdims=True)
    xc = x - mean
    r = F.rsqrt(F.mean(F.square(xc), axis=red, keepdims=True) + eps)
    xhat = xc * r
    dx = (gx - F.mean(gx, axis=red, keepdims=True)
          - xhat * F.mean(gx * xhat, axis=red, keepdims=True)) * r
    return dx, xhat


def _same_float_type(op, names):
    check = _param_type(op, names, False)

    def infer(attrs, dtypes):
        check(attrs, dtypes)
        n = 3 if attrs.get("output_mean_var") else 1
        return [np.dtype(dtypes[0])] * n
    return infer


def _ln_shape(attrs, shapes):
    ds = tuple(shapes[0])
    if not ds:
        raise ValueError("LayerNorm: data must have at least 1 dimension (got shape ())")
    axis = normalize_axis("LayerNorm", attrs["axis"], len(ds))
    _eps("LayerNorm", attrs)
    _param_shape("LayerNorm", ("gamma", "beta"), shapes[1:], (ds[axis],),
                 f"data's size {ds[axis]} on axis {attrs['axis']}")
    if attrs["output_mean_var"]:
        moments = tuple(1 if i == axis else s for i, s in enumerate(ds))
        return [ds, moments, moments]
    return [ds]


def _layernorm(attrs, ins, outs):
    x, gamma, beta = ins
    axis = normalize_axis("LayerNorm", attrs["axis"], x.ndim)
    xhat, mean, std = _moments(x, axis, attrs["eps"])
    shape = tuple(-1 if i == axis else 1 for i in range(x.ndim))
    outs[0][...] = xhat * gamma.reshape(shape) + beta.reshape(shape)
    if attrs["output_mean_var"]:
        outs[1][...] = mean
        outs[2][...] = std


def _ln_grad(attrs, inputs, outputs, out_grads):
    x, gamma, beta = inputs
    g = out_grads[0]
    if g.size == 0:
        return [zeros(x), zeros(gamma), zeros(beta)]
    axis = normalize_axis("LayerNorm", attrs["axis"], g.ndim)
    gb = _chan(gamma, g.ndim, axis, g.dtype)
    dx, xhat = _normalized_grad(g * gb, x, axis, attrs["eps"])
    return [dx, F.sum(g * xhat, axis=axis, exclude=True), F.sum(g, axis=axis, exclude=True)]


register(
    "LayerNorm", inputs=("data", "gamma", "beta"),
    attrs={"axis": Attr("int", -1), "eps": Attr("float", 1e-5),
           "output_mean_var": Attr("bool", False)},
    num_outputs=lambda attrs: 3 if attrs["output_mean_var"] else 1,
    infer_shape=_ln_shape, infer_type=_same_float_type("LayerNorm", ("gamma", "beta")),
    infer_inputs=_axis_inputs,
    compute=_layernorm, gradient=_ln_grad, grad_inputs=(0, 1),
    doc="""Layer normalisation (MXNet's ``LayerNorm``): along ``axis`` (default -1),
``out = (data - mean) / sqrt(var + eps) * gamma + beta`` with gamma and beta of shape
``(data.shape[axis],)``.  ``output_mean_var=True`` adds the mean and the standard
deviation ``sqrt(var + eps)`` (``axis`` kept as 1; their gradients are blocked, as in
MXNet).""")


def _in_shape(attrs, shapes):
    ds = tuple(shapes[0])
    if len(ds) < 3:
        raise ValueError("InstanceNorm: data must have at least 3 dimensions (batch, "
                         f"channel, spatial...) (got shape {ds!r})")
    _eps("InstanceNorm", attrs)
    _param_shape("InstanceNorm", ("gamma", "beta"), shapes[1:], (ds[1],),
                 f"data's {ds[1]} channels")
    return [ds]


def _instancenorm(attrs, ins, outs):
    x, gamma, beta = ins
    red = tuple(range(2, x.ndim))
    xhat, _, _ = _moments(x, red, attrs["eps"])
    shape = (1, -1) + (1,) * (x.ndim - 2)
    outs[0][...] = xhat * gamma.reshape(shape) + beta.reshape(shape)


def _in_grad(attrs, inputs, outputs, out_grads):
    x, gamma, beta = inputs
    g = out_grads[0]
    if g.size == 0:
        return [zeros(x), zeros(gamma), zeros(beta)]
    red = tuple(range(2, g.ndim))
    dx, xhat = _normalized_grad(g * _chan(gamma, g.ndim, 1, g.dtype), x, red, attrs["eps"])
    return [dx, F.sum(g * xhat, axis=1, exclude=True), F.sum(g, axis=1, exclude=True)]


def _in_inputs(attrs, shapes):
    # gamma and beta: (channels,) of data's axis 1
    data = shapes[0]
    if data is not None and len(data) >= 2:
        shapes[1:] = [s or (data[1],) for s in shapes[1:]]
    return shapes


register(
    "InstanceNorm", inputs=("data", "gamma", "beta"), attrs={"eps": Attr("float", 1e-3)},
    infer_shape=_in_shape, infer_type=_same_float_type("InstanceNorm", ("gamma", "beta")),
    infer_inputs=_in_inputs,
    compute=_instancenorm, gradient=_in_grad, grad_inputs=(0, 1),
    doc="""Instance normalisation (MXNet's ``InstanceNorm``): data (batch, channel,
spatial...) normalised over the spatial axes of each (example, channel), ``out = (data -
mean) / sqrt(var + eps) * gamma + beta`` with gamma and beta of shape (channel,).""")


def _gn_plan(attrs, ds):
    """(grouped shape, per-channel params) after validating GroupNorm's data."""
    if len(ds) < 2:
        raise ValueError("GroupNorm: data must have at least 2 dimensions (batch, channel, "
                         f"...) (got shape {ds!r})")
    g, c = attrs["num_groups"], ds[1]
    if g < 1:
        raise ValueError(f"GroupNorm: num_groups must be >= 1 (got {g})")
    if c % g:
        raise ValueError(f"GroupNorm: num_groups must divide the {c} channels (got "
                         f"num_groups={g})")
    return (ds[0], g, c // g) + tuple(ds[2:])


def _gn_shape(attrs, shapes):
    ds = tuple(shapes[0])
    gs = _gn_plan(attrs, ds)
    _eps("GroupNorm", attrs)
    c, g = ds[1], attrs["num_groups"]
    for name, s in zip(("gamma", "beta"), shapes[1:]):
        if tuple(s) not in ((c,), (g,)):
            raise ValueError(f"GroupNorm: {name} must have shape {(c,)!r} (channels) or "
                             f"{(g,)!r} (num_groups, MXNet 1.x) (got {tuple(s)!r})")
    if tuple(shapes[1]) != tuple(shapes[2]):
        raise ValueError(f"GroupNorm: gamma and beta must have one shape (got "
                         f"{tuple(shapes[1])!r}, {tuple(shapes[2])!r})")
    if attrs["output_mean_var"]:
        return [ds, gs[:2], gs[:2]]
    return [ds]


def _gn_param_shape(p, gs):
    """Grouped-space shape of a GroupNorm parameter of shape (C,) or (G,)."""
    rest = (1,) * (len(gs) - 3)
    return ((1, gs[1], gs[2]) if p.shape[0] == gs[1] * gs[2] and gs[2] != 1
            else (1, gs[1], 1)) + rest


def _groupnorm(attrs, ins, outs):
    x, gamma, beta = ins
    gs = _gn_plan(attrs, x.shape)
    red = tuple(range(2, len(gs)))
    xhat, mean, std = _moments(x.reshape(gs), red, attrs["eps"])
    ps = _gn_param_shape(gamma, gs)
    outs[0][...] = (xhat * gamma.reshape(ps) + beta.reshape(ps)).reshape(x.shape)
    if attrs["output_mean_var"]:
        outs[1][...] = mean.reshape(gs[:2])
        outs[2][...] = std.reshape(gs[:2])


def _gn_grad(attrs, inputs, outputs, out_grads):
    x, gamma, beta = inputs
    g = out_grads[0]
    if g.size == 0:
        return [zeros(x), zeros(gamma), zeros(beta)]
    gs = _gn_plan(attrs, g.shape)
    red = tuple(range(2, len(gs)))
    ps = _gn_param_shape(gamma, gs)
    keep = (1, 2) if ps[2] != 1 else 1
    gg = g.reshape(gs)
    dx, xhat = _normalized_grad(gg * gamma.reshape(ps), x.reshape(gs), red, attrs["eps"])
    dgamma = F.sum(gg * xhat, axis=keep, exclude=True).reshape(gamma.shape)
    dbeta = F.sum(gg, axis=keep, exclude=True).reshape(beta.shape)
    return [dx.reshape(g.shape), dgamma, dbeta]


register(
    "GroupNorm", inputs=("data", "gamma", "beta"),
    attrs={"num_groups": Attr("int", 1), "eps": Attr("float", 1e-5),
           "output_mean_var": Attr("bool", False)},
    num_outputs=lambda attrs: 3 if attrs["output_mean_var"] else 1,
    infer_shape=_gn_shape, infer_type=_same_float_type("GroupNorm", ("gamma", "beta")),
    compute=_groupnorm, gradient=_gn_grad, grad_inputs=(0, 1),
    doc="""Group normalisation (MXNet's ``GroupNorm``): the channels of data (batch,
channel, ...) split into ``num_groups`` groups, each (example, group) normalised over its
channels and the remaining axes, ``out = (data - mean) / sqrt(var + eps) * gamma +
beta``.  gamma and beta have shape (channel,) (per channel, as the paper and MXNet 2) or
(num_groups,) (per group, as MXNet 1.x).  ``output_mean_var=True`` adds the mean and the
standard deviation ``sqrt(var + eps)``, of shape (batch, num_groups) (their gradients are
blocked, as in MXNet).  Data of 2 dimensions are taken too (MXNet asks for 3 or more).""")


# -- L2Normalization ---------------------------------------------------------------------

def _l2_axes(op, mode, ndim):
    if mode == "instance":
        if ndim < 1:
            raise ValueError(f"{op}: data must have at least 1 dimension for "
                             "mode='instance' (got shape ())")
        return tuple(range(1, ndim))
    if ndim < 3:
        raise ValueError(f"{op}: data must have at least 3 dimensions for mode={mode!r} "
                         f"(got {ndim})")
    return (1,) if mode == "channel" else tuple(range(2, ndim))


def _l2_shape(attrs, shapes):
    _l2_axes("L2Normalization", attrs["mode"], len(shapes[0]))
    _eps("L2Normalization", attrs)
    return [tuple(shapes[0])]


def _l2norm(attrs, ins, outs):
    x = ins[0]
    red = _l2_axes("", attrs["mode"], x.ndim)
    acc = _acc(x.dtype)
    xa = x if x.dtype == acc else x.astype(acc)
    s = np.sqrt(np.square(xa).sum(axis=red, keepdims=True) + acc.type(attrs["eps"]))
    with np.errstate(divide="ignore", invalid="ignore"):
        outs[0][...] = xa / s


def _l2_grad(attrs, inputs, outputs, out_grads):
    x, g = inputs[0], out_grads[0]
    if g.size == 0:
        return [zeros(x)]
    red = _l2_axes("L2Normalization", attrs["mode"], g.ndim)
    r = F.rsqrt(F.sum(F.square(x), axis=red, keepdims=True) + attrs["eps"])
    y = x * r
    return [(g - y * F.sum(g * y, axis=red, keepdims=True)) * r]


register(
    "L2Normalization",
    attrs={"eps": Attr("float", 1e-10),
           "mode": Attr("str", "instance", choices=("instance", "channel", "spatial"))},
    infer_shape=_l2_shape, infer_type=_same_float_type("L2Normalization", ()),
    compute=_l2norm, gradient=_l2_grad, grad_inputs=(0,),
    doc="""L2 normalisation (MXNet's ``L2Normalization``): ``out = data / sqrt(sum(data
** 2) + eps)``, the sum over every axis but the first (``mode='instance'``, default), over
axis 1 (``'channel'``) or over axes 2 and up (``'spatial'``).""")


# -- LRN ------------------------------------------------------------------------------------

def _lrn_check(op, attrs, shape):
    n = attrs["nsize"]
    if n < 1 or n % 2 == 0:
        raise ValueError(f"{op}: nsize must be a positive odd number (got nsize={n})")
    if len(shape) < 2:
        raise ValueError(f"{op}: data must have a channel axis 1 (got shape {shape!r})")


def _window_sum(x, n):
    """Sum over the channel window [c - n // 2, c + n // 2] (clipped) along axis 1."""
    c = x.shape[1]
    cum = array_module(x).zeros((x.shape[0], c + 1) + x.shape[2:], dtype=x.dtype)
    cum[:, 1:] = x.cumsum(axis=1)
    lo = np.clip(np.arange(c) - n // 2, 0, c)
    hi = np.clip(np.arange(c) + n // 2 + 1, 0, c)
    return cum[:, hi] - cum[:, lo]


def _window_shape(attrs, shapes):
    _lrn_check("_lrn_window_sum", attrs, shapes[0])
    return [shapes[0]]


def _window(attrs, ins, outs):
    outs[0][...] = _window_sum(ins[0], attrs["nsize"])


register("_lrn_window_sum", attrs={"nsize": Attr("int", required=True)},
         infer_shape=_window_shape, infer_type=float_input("_lrn_window_sum"),
         compute=_window,
         gradient=lambda a, i, o, g: [F._lrn_window_sum(g[0], nsize=a["nsize"])],
         doc="""Sum of each channel's window of ``nsize`` channels centred on it (clipped at
the ends), along axis 1: LRN's denominator.  A symmetric linear map, its own gradient.""")


def _lrn_shape(attrs, shapes):
    _lrn_check("LRN", attrs, shapes[0])
    return [shapes[0]]


def _lrn(attrs, ins, outs):
    x = ins[0]
    n = attrs["nsize"]
    work = x if x.dtype != np.float16 else x.astype(np.float32)
    d = _window_sum(work * work, n) * (attrs["alpha"] / n) + attrs["knorm"]
    outs[0][...] = work * d ** (-attrs["beta"])


def _lrn_grad(attrs, inputs, outputs, out_grads):
    x, g = inputs[0], out_grads[0]
    n, alpha, beta = attrs["nsize"], attrs["alpha"], attrs["beta"]
    d = F._lrn_window_sum(x * x, nsize=n) * (alpha / n) + attrs["knorm"]
    inner = F._lrn_window_sum(g * x * d ** (-beta - 1.0), nsize=n)
    return [g * d ** (-beta) + x * inner * (-2.0 * beta * alpha / n)]


register("LRN", attrs={"alpha": Attr("float", 0.0001), "beta": Attr("float", 0.75),
                       "knorm": Attr("float", 2.0), "nsize": Attr("int", required=True)},
         infer_shape=_lrn_shape, infer_type=float_input("LRN"), compute=_lrn,
         gradient=_lrn_grad, grad_inputs=(0,),
         doc="""Local response normalisation across channels (MXNet's LRN, AlexNet's):
``x / (knorm + alpha / nsize * sum(x**2 over the nsize channels around c)) ** beta``
along axis 1, the window clipped at the ends.  ``nsize`` must be odd.""")
