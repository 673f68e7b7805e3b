"""CNN operators against independent references: Convolution and Deconvolution against
direct nested-loop sums on tiny inputs (and scipy.signal.correlate), Pooling against a
nested-loop transcription of MXNet's window rules (padding, 'full' convention,
count_include_pad, first-maximum gradient), UpSampling against np.repeat; that the
convolution's gradient requests skip what is not needed; bad input."""

import itertools

import numpy as np
import pytest
import scipy.signal

from runtime import autograd, nd
from runtime.ops import registry
from tests.runtime.conftest import free_failing_tests
from runtime.gluon import loss as gloss

TOL = {"float32": 2e-5, "float64": 1e-12}


def sample(shape, dtype="float64", seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(dtype)


def arr(a):
    return nd.array(a, dtype=a.dtype)


def close(got, want, dtype="float64"):
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.dtype(got.dtype) == np.dtype(dtype)
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want, rtol=TOL[dtype] * 10,
                               atol=TOL[dtype] * 10)


# -- references ---------------------------------------------------------------------------

def ref_conv(x, w, b, stride, pad, dilate, group):
    n, c = x.shape[:2]
    f, nd_ = w.shape[0], x.ndim - 2
    k = w.shape[2:]
    out_sp = [(x.shape[2 + i] + 2 * pad[i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1
              for i in range(nd_)]
    out = np.zeros((n, f) + tuple(out_sp))
    cg, fg = c // group, f // group
    for i, o, ko in itertools.product(range(n), itertools.product(*map(range, out_sp)),
                                      itertools.product(*map(range, k))):
        pos = [o[d] * stride[d] + ko[d] * dilate[d] - pad[d] for d in range(nd_)]
        if not all(0 <= p < x.shape[2 + d] for d, p in enumerate(pos)):
            continue
        for ff in range(f):
            j = ff // fg
            for cc in range(cg):
                out[(i, ff) + o] += x[(i, j * cg + cc) + tuple(pos)] * w[(ff, cc) + ko]
    if b is not None:
        out += b.reshape((-1,) + (1,) * nd_)
    return out


def ref_deconv(x, w, b, stride, pad, dilate, group, out_sp):
    """Direct scatter: every input value times the kernel, placed at o * stride +
    k * dilate - pad (positions outside the output dropped)."""
    n, c = x.shape[:2]
    fg, nd_ = w.shape[1], x.ndim - 2
    k = w.shape[2:]
    out = np.zeros((n, fg * group) + tuple(out_sp))
    cg = c // group
    for i, cc, o, ko in itertools.product(range(n), range(c),
                                          itertools.product(*map(range, x.shape[2:])),
                                          itertools.product(*map(range, k))):
        pos = tuple(o[d] * stride[d] + ko[d] * dilate[d] - pad[d] for d in range(nd_))
        if not all(0 <= p < out_sp[d] for d, p in enumerate(pos)):
            continue
        j = cc // cg
        for ff in range(fg):
            out[(i, j * fg + ff) + pos] += x[(i, cc) + o] * w[(cc, ff) + ko]
    if b is not None:
        out += b.reshape((-1,) + (1,) * nd_)
    return out


def ref_pool(x, kernel, stride, pad, kind, full=False, include_pad=True, p=2,
             dtype="float64"):
    """MXNet's pooling loops (pool.h), position by position (``dtype``: the data's, whose
    lowest value max pooling starts from)."""
    nd_ = x.ndim - 2
    sp = x.shape[2:]
    out_sp = []
    for s, k, t, q in zip(sp, kernel, stride, pad):
        r = s + 2 * q - k
        out_sp.append(1 + (-(-r // t) if full else r // t))
    out = np.zeros(x.shape[:2] + tuple(out_sp))
    for o in itertools.product(*map(range, out_sp)):
        start = [o[d] * stride[d] - pad[d] for d in range(nd_)]
        end = [min(start[d] + kernel[d], sp[d] + pad[d]) for d in range(nd_)]
        size = np.prod([e - s for s, e in zip(start, end)])
        lo = [max(s, 0) for s in start]
        hi = [max(min(e, sp[d]), lo[d]) for d, e in enumerate(end)]   # padding only: empty
        if not include_pad:   # 0 for a window of padding only ('full'): NaN, as MXNet
            size = np.prod([h - l for l, h in zip(lo, hi)]) or np.nan
        window = x[(Ellipsis,) + tuple(slice(l, h) for l, h in zip(lo, hi))]
        window = window.reshape(x.shape[:2] + (-1,))
        if kind == "max":     # MXNet starts from the lowest finite value
            v = window.max(axis=-1, initial=np.finfo(dtype).min)
        elif kind == "avg":
            v = window.sum(axis=-1) / size
        elif kind == "sum":
            v = window.sum(axis=-1)
        else:
            v = np.sum(window ** p, axis=-1) ** (1.0 / p)
        out[(Ellipsis,) + o] = v
    return out


def ref_max_pool_grad(x, g, kernel, stride, pad):
    """Each head gradient to the first maximum of its window (row-major order); a window
    of padding only sends nothing (MXNet's max index stays -1)."""
    nd_ = x.ndim - 2
    dx = np.zeros_like(x)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*map(range, g.shape[2:])):
            best, where = -np.inf, None
            lo = [o[d] * stride[d] - pad[d] for d in range(nd_)]
            for ko in itertools.product(*map(range, kernel)):
                pos = tuple(lo[d] + ko[d] for d in range(nd_))
                if all(0 <= p < x.shape[2 + d] for d, p in enumerate(pos)):
                    if x[(n, c) + pos] > best:
                        best, where = x[(n, c) + pos], pos
            if where is not None:
                dx[(n, c) + where] += g[(n, c) + o]
    return dx


# -- Convolution --------------------------------------------------------------------------

CONV_CASES = [
    # data shape, num_filter, kernel, stride, pad, dilate, group
    ((2, 3, 7), 4, (3,), (1,), (0,), (1,), 1),
    ((2, 4, 9), 6, (3,), (2,), (2,), (2,), 2),
    ((2, 3, 6, 5), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 7, 8), 4, (3, 2), (2, 3), (1, 0), (2, 1), 4),      # depthwise
    ((2, 2, 5, 5), 3, (1, 1), (2, 2), (0, 0), (1, 1), 1),
    ((1, 2, 4, 5, 4), 2, (2, 3, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2), 2),
    # 16 channels per group and more (the channel-last forward of the NumPy-written path)
    ((2, 16, 6), 3, (3,), (1,), (1,), (1,), 1),
    ((1, 32, 5, 4), 4, (3, 2), (2, 1), (1, 1), (1, 2), 2),
    ((1, 16, 3, 4, 3), 2, (2, 2, 2), (1, 2, 1), (0, 1, 1), (1, 1, 2), 1),
    # stride 1
    ((2, 4, 5, 6), 4, (2, 3), (1, 1), (2, 3), (2, 1), 2),
    ((1, 2, 4, 5, 4), 4, (2, 2, 2), (1, 1, 1), (1, 0, 1), (1, 2, 1), 2),
    ((2, 32, 5, 4), 6, (3, 3), (1, 1), (1, 1), (1, 1), 2),
]


@pytest.mark.parametrize("shape, nf, kernel, stride, pad, dilate, group", CONV_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("no_bias", [False, True])
def test_convolution_matches_nested_loops(shape, nf, kernel, stride, pad, dilate, group,
                                          dtype, no_bias):
    x = sample(shape, dtype)
    w = sample((nf, shape[1] // group) + kernel, dtype, seed=1)
    b = None if no_bias else sample((nf,), dtype, seed=2)
    args = [arr(x), arr(w)] + ([] if no_bias else [arr(b)])
    y = nd.Convolution(*args, kernel=kernel, stride=stride, pad=pad, dilate=dilate,
                       num_filter=nf, num_group=group, no_bias=no_bias)
    close(y, ref_conv(x.astype(np.float64), w.astype(np.float64),
                      None if no_bias else b.astype(np.float64), stride, pad, dilate, group),
          dtype)


@pytest.mark.parametrize("op", ["Convolution", "Deconvolution", "Pooling"])
def test_float16_accumulates_in_float32(op):
    x, w = sample((2, 16, 6, 5)), sample((16, 16, 3, 3), seed=1) * 0.1
    if op == "Pooling":
        kw = dict(kernel=(3, 3), pool_type="avg", pad=(1, 1))
        want = ref_pool(x.astype(np.float16).astype(np.float64), (3, 3), (1, 1), (1, 1), "avg")
        args = [x]
    else:
        kw = dict(kernel=(3, 3), num_filter=16, no_bias=True)
        xs, ws = (a.astype(np.float16).astype(np.float64) for a in (x, w))
        want = (ref_conv(xs, ws, None, (1, 1), (0, 0), (1, 1), 1) if op == "Convolution"
                else ref_deconv(xs, ws, None, (1, 1), (0, 0), (1, 1), 1, (8, 7)))
        args = [x, w]
    y = getattr(nd, op)(*(nd.array(a, dtype="float16") for a in args), **kw)
    assert y.dtype == np.float16
    # one rounding of the float32 result: within float16's half-ulp of the exact value
    np.testing.assert_allclose(y.asnumpy().astype(np.float64), want, rtol=2 ** -11,
                               atol=2 ** -14)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_channel_last_forward_numpy_and_compiled_paths_agree(dtype):
    """The compiled gather (contiguous output) against the NumPy channel-last path (taken
    for a non-contiguous output, and on CuPy)."""
    from runtime.ops import conv
    x = sample((3, 32, 6, 5), dtype)
    w = sample((8, 16, 3, 2), dtype, seed=1)
    plan = conv._ConvPlan("Convolution", dict(kernel=(3, 2), stride=(2, 1), dilate=(1, 2),
                                              pad=(1, 1), num_group=2, layout=None))
    want = ref_conv(x, w, None, (2, 1), (1, 1), (1, 2), 2)
    fast = np.empty(want.shape, dtype)
    conv._conv_forward(plan, x, w, fast)
    slow = np.empty(want.shape[:3] + (want.shape[3] + 1,), dtype)[..., :-1]
    conv._conv_forward(plan, x, w, slow)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(fast, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(slow, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape, nf, kernel, stride, pad, dilate, group", CONV_CASES)
def test_numpy_and_compiled_column_paths_agree(shape, nf, kernel, stride, pad, dilate, group,
                                                monkeypatch):
    """Forward, data gradient and weight gradient by the compiled im2col / col2im kernels
    (in one chunk of samples and in one a sample) and by the NumPy-written paths (those
    CuPy arrays take), against float64 references (a central difference of the forward
    for the gradients)."""
    from runtime.ops import conv
    x, w = sample(shape), sample((nf, shape[1] // group) + kernel, seed=1)
    attrs = dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate, num_group=group,
                 layout=None)
    plan = conv._ConvPlan("Convolution", attrs)
    y = ref_conv(x, w, None, stride, pad, dilate, group)
    g = sample(y.shape, seed=2)
    dx, dw, eps = sample(x.shape, seed=3), sample(w.shape, seed=4), 1e-6
    # <g, conv(x + e dx, w)> - <g, conv(x - e dx, w)> = 2e <dx, data grad>, likewise w
    want_dx = np.sum(g * (ref_conv(x + eps * dx, w, None, stride, pad, dilate, group)
                          - ref_conv(x - eps * dx, w, None, stride, pad, dilate, group)))
    want_dw = np.sum(g * (ref_conv(x, w + eps * dw, None, stride, pad, dilate, group)
                          - ref_conv(x, w - eps * dw, None, stride, pad, dilate, group)))
    for path in ("compiled", "compiled, a chunk a sample", "NumPy-written"):
        if path == "compiled, a chunk a sample":
            monkeypatch.setattr(conv, "COL_BYTES", 1)
        if path == "NumPy-written":
            monkeypatch.setattr(conv, "_compiled", lambda *a: False)
        out, gx, gw = np.empty(y.shape), np.empty(x.shape), np.empty(w.shape)
        conv._conv_forward(plan, x, w, out)
        conv._conv_data_grad(plan, g, w, gx)
        conv._conv_weight_grad_kernel(plan, x, g, gw)
        np.testing.assert_allclose(out, y, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(2 * eps * np.sum(gx * dx), want_dx, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(2 * eps * np.sum(gw * dw), want_dw, rtol=1e-6, atol=1e-9)


def winograd_refs(x, w, g, pad, group):
    """Float64 references for a 3x3 stride-1 convolution: the output (sliding windows),
    the data gradient (each kernel offset's contribution added at its shift) and the
    weight gradient (windows against the head gradient)."""
    x, w, g = (a.astype(np.float64) for a in (x, w, g))
    c, f = x.shape[1], w.shape[0]
    cg, fg = c // group, f // group
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
    y = np.concatenate([np.einsum("nchwij,fcij->nfhw", win[:, j * cg:(j + 1) * cg],
                                  w[j * fg:(j + 1) * fg]) for j in range(group)], 1)
    dw = np.concatenate([np.einsum("nchwij,nfhw->fcij", win[:, j * cg:(j + 1) * cg],
                                   g[:, j * fg:(j + 1) * fg]) for j in range(group)], 0)
    dxp = np.zeros_like(xp)
    oh, ow = y.shape[2:]
    for j, a, b in itertools.product(range(group), range(3), range(3)):
        dxp[:, j * cg:(j + 1) * cg, a:a + oh, b:b + ow] += np.einsum(
            "nfhw,fc->nchw", g[:, j * fg:(j + 1) * fg], w[j * fg:(j + 1) * fg, :, a, b])
    dx = dxp[:, :, pad[0]:pad[0] + x.shape[2], pad[1]:pad[1] + x.shape[3]]
    return y, dx, dw


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, filters, pad, group", [
    ((2, 16, 7, 9), 16, (1, 1), 1),      # odd output sizes: partial tiles
    ((3, 32, 8, 5), 48, (0, 2), 1),
    ((2, 32, 6, 6), 32, (2, 0), 2),      # groups of 16
    ((1, 16, 1, 1), 16, (1, 1), 1),      # one output
    ((2, 16, 3, 4), 32, (3, 1), 1),      # pad 3: the data gradient takes col2im
    ((2, 8, 5, 5), 1, (1, 1), 1),        # one filter
    ((40, 16, 4, 4), 16, (1, 1), 1),     # several chunks of samples
])
def test_winograd_convolution_matches_direct_sums(dtype, shape, filters, pad, group,
                                                  monkeypatch):
    """Forward, data and weight gradients of the Winograd path against float64 sums."""
    from runtime.ops import conv
    taken = []
    real = conv._conv_forward_winograd
    monkeypatch.setattr(conv, "_conv_forward_winograd",
                        lambda *a: taken.append(1) or real(*a))
    monkeypatch.setattr(conv, "WINOGRAD_WIDE", 1)         # small images take it too
    if shape[0] == 40:     # 8 KiB (float32) a sample: 5 or 10 chunks
        monkeypatch.setattr(conv, "WINOGRAD_BYTES", 64 << 10)
    x = sample(shape, dtype)
    w = sample((filters, shape[1] // group, 3, 3), dtype, seed=1)
    g = sample((shape[0], filters, shape[2] + 2 * pad[0] - 2, shape[3] + 2 * pad[1] - 2),
               dtype, seed=2)
    xa, wa = arr(x), arr(w)
    xa.attach_grad()
    wa.attach_grad()
    with autograd.record():
        y = nd.Convolution(xa, wa, kernel=(3, 3), pad=pad, num_filter=filters,
                           num_group=group, no_bias=True)
    y.backward(arr(g))
    want = winograd_refs(x, w, g, pad, group)
    for got, ref in zip((y, xa.grad, wa.grad), want):
        scale = np.abs(ref).max()
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=0, atol=TOL[dtype] * scale)
    assert taken, "the Winograd forward was not taken"


@pytest.mark.parametrize("attrs, channels, width_rule", [
    ({"stride": (2, 2)}, 16, False), ({"dilate": (2, 2)}, 16, False), ({}, 4, False),
    ({"kernel": (3, 2)}, 16, False),
    ({}, 64, True)])        # 3 tile columns of 64 channels: too little work per row of tiles
def test_winograd_is_only_taken_where_it_applies(attrs, channels, width_rule, monkeypatch):
    from runtime.ops import conv
    if not width_rule:      # small images would take it but for the rule under test
        monkeypatch.setattr(conv, "WINOGRAD_WIDE", 1)
    monkeypatch.setattr(conv, "_conv_forward_winograd",
                        lambda *a: pytest.fail("the Winograd forward was taken"))
    monkeypatch.setattr(conv, "_conv_weight_grad_winograd",
                        lambda *a: pytest.fail("the Winograd weight gradient was taken"))
    kw = {"kernel": (3, 3), "num_filter": 16, "no_bias": True, **attrs}
    x = sample((2, channels, 7, 7))
    w = sample((16, channels) + kw["kernel"], seed=1)
    xa, wa = arr(x), arr(w)
    wa.attach_grad()
    with autograd.record():
        y = nd.Convolution(xa, wa, **kw)
    y.backward()
    want = ref_conv(x, w, None, kw.get("stride", (1, 1)), (0, 0), kw.get("dilate", (1, 1)), 1)
    close(y, want)


def test_winograd_kernels_refuse_arrays_that_do_not_fit():
    from runtime import _conv_kernels
    x = np.zeros((2, 16, 6, 6), np.float32)
    with pytest.raises(ValueError, match=r"v must be \(16, channels, samples x 3 x 3 tiles\) "
                       r"\(got \(16, 16, 17\)\)"):
        _conv_kernels.winograd_input(x, np.zeros((16, 16, 17), np.float32), 0, 0, 1, 1, 3, 3)
    with pytest.raises(ValueError, match=r"v must be .*\(got \(9, 16, 18\)\)"):
        _conv_kernels.winograd_input(x, np.zeros((9, 16, 18), np.float32), 0, 0, 1, 1, 3, 3)
    with pytest.raises(ValueError, match="samples 1:3 and channels 0:16 are not within"):
        _conv_kernels.winograd_input(x, np.zeros((16, 16, 18), np.float32), 1, 0, 1, 1, 3, 3)
    with pytest.raises(ValueError, match="channels 8:24 are not within"):
        _conv_kernels.winograd_input(x, np.zeros((16, 16, 18), np.float32), 0, 8, 1, 1, 3, 3)
    with pytest.raises(ValueError, match=r"pad must be non-negative \(got -1, 1\)"):
        _conv_kernels.winograd_input(x, np.zeros((16, 16, 18), np.float32), 0, 0, -1, 1, 3, 3)
    with pytest.raises(ValueError, match="2 x 3 tiles do not cover outputs of 6 x 6"):
        _conv_kernels.winograd_output(np.zeros((16, 16, 12), np.float32), x, 0, 0, 2, 3)
    with pytest.raises(ValueError, match="2 x 3 tiles do not cover outputs of 6 x 6"):
        _conv_kernels.winograd_grad_output(x, np.zeros((16, 16, 12), np.float32), 0, 0, 2, 3)
    with pytest.raises(ValueError, match="channels 8:24 are not within"):
        _conv_kernels.winograd_grad_output(x, np.zeros((16, 16, 18), np.float32), 0, 8, 3, 3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_winograd_planes_are_skewed_off_4_kib(dtype):
    from runtime.ops import conv
    a = conv._winograd_planes(64, 128, dtype)
    item = np.dtype(dtype).itemsize
    assert a.shape == (16, 64, 128)
    assert a.strides[1:] == (128 * item, item)
    assert a.strides[0] % 4096 == conv.PLANE_SKEW
    assert 64 * 128 * item <= a.strides[0] < 64 * 128 * item + 4096


def test_winograd_kernels_give_the_same_transforms_in_skewed_planes():
    """Every transform written into (or read from) planes PLANE_SKEW bytes past 4 KiB
    apart equals the one in a contiguous array."""
    from runtime import _conv_kernels
    from runtime.ops import conv
    x = sample((3, 8, 7, 6), "float32")
    skewed = conv._winograd_planes(8, 3 * 4 * 3, np.float32)
    flat = np.empty((16, 8, 36), np.float32)
    _conv_kernels.winograd_input(x, skewed, 0, 0, 1, 1, 4, 3)
    _conv_kernels.winograd_input(x, flat, 0, 0, 1, 1, 4, 3)
    np.testing.assert_array_equal(skewed, flat)
    _conv_kernels.winograd_grad_output(x, skewed, 0, 0, 4, 3)
    _conv_kernels.winograd_grad_output(x, flat, 0, 0, 4, 3)
    np.testing.assert_array_equal(skewed, flat)
    a, b = np.zeros_like(x), np.ones_like(x)
    _conv_kernels.winograd_output(skewed, a, 0, 0, 4, 3)
    _conv_kernels.winograd_output(flat, b, 0, 0, 4, 3)
    np.testing.assert_array_equal(a, b)


def test_winograd_kernels_refuse_strided_planes_that_do_not_fit():
    from runtime import _conv_kernels
    x = np.zeros((2, 16, 6, 6), np.float32)
    rows = np.zeros((16, 16, 36), np.float32)[:, :, ::2]        # rows not contiguous
    with pytest.raises(ValueError, match=r"v must have contiguous rows of 18 tiles, 16 rows "
                       r"a plane, and planes that do not overlap \(got strides "
                       r"\(2304, 144, 8\)\)"):
        _conv_kernels.winograd_input(x, rows, 0, 0, 1, 1, 3, 3)
    base = np.zeros(16 * 18 * 8, np.float32)
    overlap = np.lib.stride_tricks.as_strided(base, (16, 16, 18), (8 * 18 * 4, 18 * 4, 4))
    with pytest.raises(ValueError, match=r"mm must have contiguous rows .*\(got strides "
                       r"\(576, 72, 4\)\)"):
        _conv_kernels.winograd_output(overlap, x, 0, 0, 3, 3)


def test_compiled_kernels_refuse_arrays_that_do_not_fit():
    from runtime import _conv_kernels, _pool_kernels
    x = np.zeros((2, 4, 1, 5, 5), np.float32)
    geometry = ((1, 5, 5), (1, 3, 3), (1, 1, 1), (1, 1, 1), (0, 1, 1))
    with pytest.raises(ValueError, match=r"pad and osize non-negative \(got kernel="):
        _conv_kernels.im2col(x, np.zeros((36, 25), np.float32), 0, 0, *geometry[:4],
                             (0, -1, 1))
    with pytest.raises(ValueError, match=r"col of shape \(36, 26\) is not \(channels x 9 "
                       r"kernel offsets, samples x 25 output positions\)"):
        _conv_kernels.im2col(x, np.zeros((36, 26), np.float32), 0, 0, *geometry)
    with pytest.raises(ValueError, match="samples 0:1 and channels 2:6 are not within x's"):
        _conv_kernels.im2col(x, np.zeros((36, 25), np.float32), 0, 2, *geometry)
    with pytest.raises(ValueError, match="samples 1:3 and channels 0:4 are not within x's"):
        _conv_kernels.im2col(x, np.zeros((36, 50), np.float32), 1, 0, *geometry)
    with pytest.raises(ValueError, match=r"col of shape \(36, 49\) is not \(channels x 9 "
                       r"kernel offsets, samples x 25 output positions\)"):
        _conv_kernels.col2im(np.zeros((36, 49), np.float32), x, 0, 0, *geometry)
    with pytest.raises(ValueError, match="samples 1:3 and channels 0:4 are not within out's"):
        _conv_kernels.col2im(np.zeros((36, 50), np.float32), x, 1, 0, *geometry)
    with pytest.raises(ValueError, match="samples 0:1 and channels 2:6 are not within out's"):
        _conv_kernels.col2im(np.zeros((36, 25), np.float32), x, 0, 2, *geometry)
    with pytest.raises(ValueError, match="x's shape"):
        _pool_kernels.max_pool_route(x[0], np.zeros((4, 1, 3, 3), np.float32),
                                     np.zeros((4, 1, 5, 4), np.float32), (1, 2, 2),
                                     (1, 2, 2), (0, 0, 0), -1.0, True)
    with pytest.raises(ValueError, match=r"route must have the pooled array's shape \(axis "
                       r"3: 2 != 3\)"):
        _pool_kernels.max_pool(x[0], np.zeros((4, 1, 3, 3), np.float32), (1, 2, 2),
                               (1, 2, 2), (0, 0, 0), -1.0, np.zeros((4, 1, 3, 2), np.int64))
    with pytest.raises(ValueError, match=r"route must hold positions in \[-1, 20\) \(got "
                       r"-2 at flat index 5\)"):
        route = np.zeros((4, 9), np.int64)
        route[0, 5] = -2
        _pool_kernels.route_scatter(np.zeros((4, 9), np.float32), route,
                                    np.zeros((4, 20), np.float32))


def test_convolution_matches_scipy_correlate():
    x, w, b = sample((1, 2, 9, 8)), sample((3, 2, 4, 3), seed=1), sample((3,), seed=2)
    y = nd.Convolution(arr(x), arr(w), arr(b), kernel=(4, 3), num_filter=3).asnumpy()
    for f in range(3):
        want = scipy.signal.correlate(x[0], w[f], mode="valid")[0] + b[f]
        np.testing.assert_allclose(y[0, f], want, rtol=1e-12, atol=1e-12)


def test_convolution_defaults_and_out():
    x, w = sample((2, 3, 5, 5), "float32"), sample((4, 3, 3, 3), "float32", seed=1)
    b = np.zeros(4, np.float32)
    y = nd.Convolution(arr(x), arr(w), arr(b), kernel=(3, 3), num_filter=4)   # MXNet defaults
    assert y.shape == (2, 4, 3, 3)
    out = nd.zeros((2, 4, 3, 3))
    nd.Convolution(arr(x), arr(w), arr(b), kernel=(3, 3), num_filter=4, out=out,
                   workspace=512, cudnn_tune="fastest", cudnn_off=True, layout="NCHW")
    np.testing.assert_array_equal(out.asnumpy(), y.asnumpy())


def test_convolution_only_weight_gradient_skips_the_data_gradient(monkeypatch, request):
    op = registry.get("Deconvolution")
    calls = []
    compute = op.compute
    monkeypatch.setattr(op, "compute", lambda *a: calls.append(1) or compute(*a))
    x, w, b = arr(sample((2, 3, 5, 5))), arr(sample((4, 3, 3, 3), seed=1)), arr(sample((4,)))
    w.attach_grad()
    with autograd.record():
        y = nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4, pad=(1, 1))
    y.backward()
    assert not calls                                       # no data gradient computed
    assert w.grad.shape == (4, 3, 3, 3)
    x.attach_grad()
    with autograd.record():
        y = nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4, pad=(1, 1))
    y.backward()
    assert calls


def test_convolution_gradient_through_the_tape():
    # sum(conv(x, w)): dw[f, c, k] = sum of the x values under kernel offset k
    x, w = sample((2, 3, 6, 5)), sample((2, 3, 3, 2), seed=1)
    xa, wa = arr(x), arr(w)
    xa.attach_grad()
    wa.attach_grad()
    with autograd.record():
        y = nd.Convolution(xa, wa, kernel=(3, 2), num_filter=2, stride=(2, 1), no_bias=True)
    y.backward()
    oh, ow = y.shape[2:]
    want = np.zeros((3, 3, 2))
    for kh, kw in itertools.product(range(3), range(2)):
        want[:, kh, kw] = x[:, :, kh:kh + 2 * oh:2, kw:kw + ow].sum(axis=(0, 2, 3))
    np.testing.assert_allclose(wa.grad.asnumpy(), np.broadcast_to(want, (2, 3, 3, 2)),
                               rtol=1e-12)
    dx = np.zeros_like(x)                     # the adjoint: deconvolution of ones
    for kh, kw in itertools.product(range(3), range(2)):
        dx[:, :, kh:kh + 2 * oh:2, kw:kw + ow] += w[:, :, kh, kw].sum(axis=0)[None, :, None,
                                                                             None]
    np.testing.assert_allclose(xa.grad.asnumpy(), dx, rtol=1e-12)


# -- Deconvolution ------------------------------------------------------------------------

DECONV_CASES = [
    # data shape, num_filter, kernel, stride, pad, dilate, group, adj
    ((2, 3, 4), 2, (3,), (2,), (1,), (1,), 1, (1,)),
    ((1, 4, 3, 3), 6, (3, 2), (2, 1), (1, 0), (1, 2), 2, (1, 0)),
    ((2, 2, 3, 2), 3, (2, 2), (1, 1), (0, 0), (1, 1), 1, (0, 0)),
    ((1, 2, 2, 3, 2), 2, (2, 2, 3), (2, 1, 2), (0, 1, 1), (1, 1, 1), 2, (1, 0, 1)),
]


@pytest.mark.parametrize("shape, nf, kernel, stride, pad, dilate, group, adj", DECONV_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_deconvolution_matches_direct_scatter(shape, nf, kernel, stride, pad, dilate, group,
                                              adj, dtype):
    x = sample(shape, dtype)
    w = sample((shape[1], nf // group) + kernel, dtype, seed=1)
    b = sample((nf,), dtype, seed=2)
    y = nd.Deconvolution(arr(x), arr(w), arr(b), kernel=kernel, stride=stride, pad=pad,
                         dilate=dilate, adj=adj, num_filter=nf, num_group=group,
                         no_bias=False)
    out_sp = tuple(t * (s - 1) + d * (k - 1) + 1 - 2 * p + a for s, t, d, k, p, a in
                   zip(shape[2:], stride, dilate, kernel, pad, adj))
    close(y, ref_deconv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                        stride, pad, dilate, group, out_sp), dtype)


def test_deconvolution_target_shape_and_default_no_bias():
    x, w = sample((1, 2, 4, 4)), sample((2, 3, 3, 3), seed=1)
    # full output 2 * 3 + 3 = 9; target 8: pad (9 - 8 + 1) // 2 = 1, adj (9 - 8) % 2 = 1
    y = nd.Deconvolution(arr(x), arr(w), kernel=(3, 3), stride=(2, 2), num_filter=3,
                         target_shape=(8, 8))
    assert y.shape == (1, 3, 8, 8)
    close(y, ref_deconv(x, w, None, (2, 2), (1, 1), (1, 1), 1, (8, 8)))
    with pytest.raises(TypeError, match=r"^Deconvolution: takes 2 array inputs"):
        nd.Deconvolution(arr(x), arr(w), arr(sample((3,))), kernel=(3, 3), num_filter=3)


def test_deconvolution_is_the_adjoint_of_convolution():
    x, w = sample((2, 4, 7, 6)), sample((6, 2, 3, 3), seed=1)
    kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 0), dilate=(1, 2), num_group=2,
              no_bias=True)
    y = nd.Convolution(arr(x), arr(w), num_filter=6, **kw)
    r = sample(y.shape, seed=3)
    back = nd.Deconvolution(arr(r), arr(w), num_filter=4, adj=(0, 1), **kw)
    assert back.shape == x.shape
    np.testing.assert_allclose(np.vdot(y.asnumpy(), r), np.vdot(x, back.asnumpy()),
                               rtol=1e-12)


# -- Pooling ------------------------------------------------------------------------------

POOL_CASES = [
    # shape, kernel, stride, pad, full
    ((2, 3, 7, 6), (2, 2), (2, 2), (0, 0), False),
    ((2, 3, 7, 6), (3, 3), (2, 2), (1, 1), False),
    ((2, 3, 7, 6), (3, 2), (2, 3), (1, 1), True),
    ((1, 2, 8), (3,), (3,), (1,), True),
    ((1, 2, 5, 4, 6), (2, 3, 2), (2, 1, 2), (1, 1, 0), False),
    ((1, 2, 5, 4, 6), (2, 2, 3), (2, 2, 2), (0, 1, 1), True),
]


@pytest.mark.parametrize("shape, kernel, stride, pad, full", POOL_CASES)
@pytest.mark.parametrize("kind", ["max", "avg", "sum", "lp1", "lp2", "lp3", "avg_nopad"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pooling_matches_mxnet_window_rules(shape, kernel, stride, pad, full, kind, dtype):
    x = sample(shape, dtype)
    if kind.startswith("lp"):
        x = np.abs(x) + 0.1
    attrs = dict(kernel=kernel, stride=stride, pad=pad,
                 pooling_convention="full" if full else "valid")
    p = 2
    if kind.startswith("lp"):
        p = int(kind[2])
        attrs.update(pool_type="lp", p_value=p)
    elif kind == "avg_nopad":
        attrs.update(pool_type="avg", count_include_pad=False)
    else:
        attrs.update(pool_type=kind)
    y = nd.Pooling(arr(x), **attrs)
    want = ref_pool(x.astype(np.float64), kernel, stride, pad,
                    "lp" if kind.startswith("lp") else kind.split("_")[0], full,
                    kind != "avg_nopad", p, dtype)
    close(y, want, dtype)


def test_pooling_defaults_and_global():
    x = sample((2, 3, 5, 4))
    y = nd.Pooling(arr(x), kernel=(2, 2))                  # max, stride 1, pad 0, valid
    close(y, ref_pool(x, (2, 2), (1, 1), (0, 0), "max"))
    for kind, fn in (("max", np.max), ("avg", np.mean), ("sum", np.sum)):
        g = nd.Pooling(arr(x), pool_type=kind, global_pool=True, kernel=(1, 1),
                       stride=(3, 3), pad=(1, 1))
        close(g, fn(x, axis=(2, 3), keepdims=True))


def test_max_pooling_gradient_goes_to_the_first_maximum():
    x = np.array([[[[1.0, 3.0, 3.0, 0.0],
                    [3.0, 2.0, 1.0, 3.0],
                    [0.0, 0.0, 5.0, 5.0]]]])
    xa = arr(x)
    xa.attach_grad()
    with autograd.record():
        y = nd.Pooling(xa, kernel=(2, 2), stride=(1, 1), pad=(1, 1))
    g = sample(y.shape, seed=4)
    y.backward(arr(g))
    np.testing.assert_array_equal(xa.grad.asnumpy(),
                                  ref_max_pool_grad(x, g, (2, 2), (1, 1), (1, 1)))


@pytest.mark.parametrize("shape, kernel, stride, pad, full", POOL_CASES)
def test_max_pooling_gradient_matches_reference(shape, kernel, stride, pad, full):
    x = np.round(sample(shape) * 3)              # ties everywhere
    xa = arr(x)
    xa.attach_grad()
    with autograd.record():
        y = nd.Pooling(xa, kernel=kernel, stride=stride, pad=pad,
                       pooling_convention="full" if full else "valid")
    g = sample(y.shape, seed=4)
    y.backward(arr(g))
    want = ref_max_pool_grad(x, g, kernel, stride, pad)
    np.testing.assert_allclose(xa.grad.asnumpy(), want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shape, kernel, stride, pad, full", POOL_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pooling_kernels_match_the_numpy_path(shape, kernel, stride, pad, full, dtype):
    """The compiled kernel (maximum, gradient and its adjoint) against the NumPy path it
    replaces for NumPy arrays, with ties, NaN, -inf and the dtype's lowest value (which
    the padding holds) in the data."""
    from runtime import _pool_kernels
    from runtime.ops import conv
    x = np.round(sample(shape, dtype) * 3)
    flat = x.reshape(-1)
    flat[::7] = np.nan
    flat[3::11] = -np.inf
    flat[5::13] = np.finfo(dtype).min
    attrs = {**{k: a.default for k, a in conv._POOL_ATTRS.items()}, "kernel": kernel,
             "stride": stride, "pad": pad,
             "pooling_convention": "full" if full else "valid"}
    plan = conv._PoolPlan("Pooling", attrs, shape)
    g = sample(shape[:2] + plan.out, dtype, seed=4)
    want = np.empty(shape, dtype)
    conv._pool_backward(plan, g, shape, want.dtype, conv._argmax_offsets(plan, x), want)
    got = np.full(shape, 7, dtype)
    assert conv._max_route(plan, x, g, got, True)
    np.testing.assert_array_equal(got, want)
    v = sample(shape, dtype, seed=5)
    got = np.full(g.shape, 7, dtype)
    assert conv._max_route(plan, x, v, got, False)
    win = plan.windows(conv._padded(v, plan.pad, 0, plan.extra))
    arg = conv._argmax_offsets(plan, x)
    lead = (slice(None),) * (2 + plan.nd)
    picked = np.choose(arg, [win[lead + k] for k in plan.offsets()])
    np.testing.assert_array_equal(got, picked)
    # the forward: the compiled maximum (contiguous out) against the NumPy passes (taken
    # for a non-contiguous out, and on CuPy)
    slow = np.full(g.shape[:-1] + (g.shape[-1] + 1,), 7, dtype)[..., :-1]
    conv._pool_forward(plan, x, slow)
    fast = np.full(g.shape, 7, dtype)
    conv._pool_forward(plan, x, fast)
    np.testing.assert_array_equal(fast, slow)
    # the forward keeping its route, and the gradient and its adjoint sent through it
    route = np.full(g.shape, 7, np.int64)
    fast = np.full(g.shape, 7, dtype)
    conv._pool_forward(plan, x, fast, route)
    np.testing.assert_array_equal(fast, slow)
    planes = shape[0] * shape[1]
    got = np.full(shape, 7, dtype)
    _pool_kernels.route_scatter(g.reshape(planes, -1), route.reshape(planes, -1),
                                got.reshape(planes, -1))
    np.testing.assert_array_equal(got, want)
    got = np.full(g.shape, 7, dtype)
    _pool_kernels.route_gather(v.reshape(planes, -1), route.reshape(planes, -1),
                               got.reshape(planes, -1))
    np.testing.assert_array_equal(got, picked)


def test_recorded_max_pooling_keeps_its_route_not_the_data():
    """In training mode the tape keeps the forward's route (where each window's maximum
    was), not the data: the data may be written before backward, and the gradient is
    the one of the values pooled.  In predict mode it keeps the data (the maxima found
    again in backward), and writing the data is refused."""
    x = np.round(sample((2, 3, 7, 6)) * 3)
    g = sample((2, 3, 4, 3), seed=4)
    want = ref_max_pool_grad(x, g, (3, 3), (2, 2), (1, 1))
    for train in (True, False):
        xa = arr(x)
        xa.attach_grad()
        with autograd.record(train_mode=train):
            y = nd.Pooling(xa, kernel=(3, 3), stride=(2, 2), pad=(1, 1))
        if train:
            xa[:] = 0
        y.backward(arr(g))
        np.testing.assert_array_equal(xa.grad.asnumpy(), want)
    with autograd.record(train_mode=False):
        y = nd.Pooling(xa, kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    xa[:] = 0
    with pytest.raises(RuntimeError, match=r"^backward: Pooling's input 0 \(shape \(2, 3, 7, "
                       r"6\)\) was written after Pooling saved it"):
        y.backward(arr(g))


@pytest.mark.parametrize("shape, kernel, stride", [
    ((2, 3, 8, 6), (2, 2), (2, 2)),        # windows tiling the data
    ((2, 3, 7, 6), (2, 2), (2, 2)),        # a last row in no window
    ((2, 3, 7, 6), (3, 2), (1, 2)),        # overlapping windows
    ((1, 2, 9), (3,), (3,)),
])
@pytest.mark.parametrize("kind", ["avg", "sum"])
def test_unpadded_pooling_gradient_matches_nested_loops(shape, kernel, stride, kind):
    x = sample(shape)
    xa = arr(x)
    xa.attach_grad()
    with autograd.record():
        y = nd.Pooling(xa, kernel=kernel, stride=stride, pool_type=kind)
    g = sample(y.shape, seed=4)
    y.backward(arr(g))
    want = np.zeros_like(x)
    scale = 1 / np.prod(kernel) if kind == "avg" else 1.0
    for o in itertools.product(*map(range, g.shape[2:])):
        box = tuple(slice(i * t, i * t + k) for i, t, k in zip(o, stride, kernel))
        want[(Ellipsis,) + box] += (g[(Ellipsis,) + o] * scale).reshape(
            g.shape[:2] + (1,) * len(kernel))
    np.testing.assert_allclose(xa.grad.asnumpy(), want, rtol=1e-12, atol=1e-15)


def test_avg_pooling_gradient_is_the_adjoint():
    x = sample((2, 2, 7, 6))
    kw = dict(kernel=(3, 2), stride=(2, 3), pad=(1, 1), pool_type="avg",
              pooling_convention="full", count_include_pad=False)
    xa = arr(x)
    xa.attach_grad()
    with autograd.record():
        y = nd.Pooling(xa, **kw)
    r = sample(y.shape, seed=5)
    y.backward(arr(r))
    np.testing.assert_allclose(np.vdot(y.asnumpy(), r), np.vdot(x, xa.grad.asnumpy()),
                               rtol=1e-12)


# -- UpSampling ---------------------------------------------------------------------------

def test_upsampling_nearest():
    x = sample((2, 3, 2, 4), "float32")
    y = nd.UpSampling(arr(x), scale=3, sample_type="nearest")
    np.testing.assert_array_equal(y.asnumpy(), x.repeat(3, axis=2).repeat(3, axis=3))
    a, b = sample((1, 2, 2, 2)), sample((1, 3, 4, 4), seed=1)
    y = nd.UpSampling(arr(a), arr(b), scale=2, sample_type="nearest", num_args=2)
    want = np.concatenate([a.repeat(2, 2).repeat(2, 3), b], axis=1)
    np.testing.assert_array_equal(y.asnumpy(), want)
    c = sample((1, 2, 1, 1), seed=2)
    y = nd.UpSampling(arr(a), arr(c), scale=3, multi_input_mode="sum")
    np.testing.assert_allclose(y.asnumpy(), a.repeat(3, 2).repeat(3, 3) +
                               c.repeat(6, 2).repeat(6, 3), rtol=1e-12)


def test_upsampling_nearest_gradient_sums_blocks():
    a, b = sample((1, 2, 2, 2)), sample((1, 3, 4, 4), seed=1)
    aa, ba = arr(a), arr(b)
    aa.attach_grad()
    ba.attach_grad()
    with autograd.record():
        y = nd.UpSampling(aa, ba, scale=2)
    g = sample(y.shape, seed=3)
    y.backward(arr(g))
    np.testing.assert_allclose(aa.grad.asnumpy(),
                               g[:, :2].reshape(1, 2, 2, 2, 2, 2).sum(axis=(3, 5)),
                               rtol=1e-12)
    np.testing.assert_array_equal(ba.grad.asnumpy(), g[:, 2:])


def test_upsampling_bilinear_is_a_depthwise_deconvolution():
    x = sample((1, 2, 3, 2))
    s = 2
    f = np.array([0.25, 0.75, 0.75, 0.25])       # MXNet's bilinear filter for scale 2
    w = np.broadcast_to(np.outer(f, f), (2, 1, 4, 4)).copy()
    y = nd.UpSampling(arr(x), arr(w), scale=s, sample_type="bilinear", num_filter=2)
    assert y.shape == (1, 2, 6, 4)
    want = ref_deconv(x, w, None, (2, 2), (1, 1), (1, 1), 2, (6, 4))
    close(y, want)


# -- bad input ----------------------------------------------------------------------------

@pytest.mark.parametrize("op, attrs", [
    ("Convolution", dict(kernel=(2, 2), pad=(2 ** 62, 1), num_filter=2, no_bias=True)),
    ("Pooling", dict(kernel=(2, 2), pad=(2 ** 62, 0), pool_type="max"))])
def test_an_output_too_large_for_int64_is_refused_naming_the_operator(op, attrs):
    args = [arr(sample((2, 2, 4, 6)))] + ([arr(sample((2, 2, 2, 2)))] if op == "Convolution"
                                          else [])
    with pytest.raises(ValueError, match=rf"^{op}: output shape \(2, 2, 922337203685477\d+, "
                                         r"\d+\) (of float64 )?is too large"):
        getattr(nd, op)(*args, **attrs)


def test_bad_input_leaves_out_unchanged():
    x, w = arr(sample((1, 3, 4, 4))), arr(sample((2, 3, 5, 5)))
    out = nd.ones((1, 2, 1, 1))
    with pytest.raises(ValueError, match=r"^Convolution: the dilated kernel \(5\) is larger "
                                         r"than the padded input \(4\)"):
        nd.Convolution(x, w, kernel=(5, 5), num_filter=2, no_bias=True, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 1)
    with pytest.raises(ValueError, match=r"^Pooling: pooling_convention must be one of"):
        nd.Pooling(x, kernel=(2, 2), pooling_convention="same")
    with pytest.raises(ValueError, match=r"^Convolution: kernel must have 1, 2 or 3 entries"):
        nd.Convolution(x, w, kernel=(), num_filter=2, no_bias=True)
    with pytest.raises(TypeError, match=r"^Convolution: attribute 'num_filter' is required"):
        nd.Convolution(x, w, kernel=(5, 5), no_bias=True)
    with pytest.raises(ValueError, match=r"^Convolution: layout 'NCW' does not fit 2 spatial"):
        nd.Convolution(x, w, kernel=(3, 3), num_filter=2, no_bias=True, layout="NCW")


free_failing_tests(globals())


# -- MXNet 1.x's Convolution, Deconvolution, Pooling (test_operator.py) cases, ported ------

def a64(x):
    return nd.array(np.asarray(x, dtype=np.float64), dtype="float64")


def _grads(f, arrays, head):
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        y = f(*arrays)
    y.backward(head)
    return y.asnumpy(), [a.grad.asnumpy() for a in arrays]


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("num_group", [1, 2])
def test_convolution_grouping_mxnet(dim, num_group):
    rng = np.random.default_rng(5)
    num_filter, kernel = 4, (3,) * dim
    shape = (1, 4) + (9,) * dim
    x = rng.normal(size=shape)
    w = rng.normal(size=(num_filter, 4 // num_group) + kernel)
    b = rng.normal(size=(num_filter,))
    head = a64(rng.normal(size=(1, num_filter) + (7,) * dim))

    def grouped(x, w, b):
        return nd.Convolution(x, w, b, num_filter=num_filter, num_group=num_group,
                              kernel=kernel)

    def sliced(x, w, b):
        xs = nd.split(x, num_outputs=num_group, axis=1) if num_group > 1 else [x]
        ws = nd.split(w, num_outputs=num_group, axis=0) if num_group > 1 else [w]
        bs = nd.split(b, num_outputs=num_group, axis=0) if num_group > 1 else [b]
        return nd.concat(*[nd.Convolution(xs[i], ws[i], bs[i], num_filter=num_filter //
                                          num_group, kernel=kernel)
                           for i in range(num_group)], dim=1)
    y1, g1 = _grads(grouped, [a64(x), a64(w), a64(b)], head)
    y2, g2 = _grads(sliced, [a64(x), a64(w), a64(b)], head)
    np.testing.assert_allclose(y1, y2, rtol=1e-10, atol=1e-10)
    for a, b_ in zip(g1, g2):
        np.testing.assert_allclose(a, b_, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("num_base", [1, 4])
@pytest.mark.parametrize("kernel,stride,pad", [((3, 3), (1, 1), (0, 0)),
                                               ((3, 3), (2, 2), (1, 1)),
                                               ((5, 5), (1, 1), (1, 1))])
def test_depthwise_convolution_mxnet(num_base, kernel, stride, pad):
    rng = np.random.default_rng(6)
    num_group = 4
    c = num_base * num_group
    shape = (2, c, 16, 16)
    x = rng.normal(size=shape).astype(np.float32)
    w = rng.normal(size=(c, 1) + kernel).astype(np.float32)
    b = rng.normal(size=(c,)).astype(np.float32)
    kw = dict(kernel=kernel, stride=stride, pad=pad)
    y = nd.Convolution(nd.array(x), nd.array(w), nd.array(b), num_filter=c, num_group=c, **kw)
    parts = [nd.Convolution(nd.array(x[:, i:i + 1]), nd.array(w[i:i + 1]),
                            nd.array(b[i:i + 1]), num_filter=1, **kw) for i in range(c)]
    np.testing.assert_allclose(y.asnumpy(), nd.concat(*parts, dim=1).asnumpy(), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("dil,ks", [(d, k) for d in [(1,), (2,), (3,)]
                                    for k in [(1,), (2,), (3,), (4,)]]
                         + [(d, k) for d in [(1, 1), (2, 2), (3, 3)]
                            for k in [(3, 3), (4, 4), (2, 3), (3, 2), (1, 1)]])
def test_convolution_dilated_impulse_response_mxnet(dil, ks):
    ndim = len(dil)
    spatial = (33,) * ndim
    x = np.zeros((1, 1) + spatial, np.float32)
    x[(0, 0) + tuple(s // 2 for s in spatial)] = 1.0
    w = np.ones((1, 1) + ks, np.float32)
    xs = nd.array(x)
    ws = nd.array(w)
    xs.attach_grad()
    ws.attach_grad()
    with autograd.record():
        out = nd.Convolution(xs, ws, num_filter=1, kernel=ks, dilate=dil, no_bias=True)
    out_grad = out.asnumpy().copy()
    out.backward(nd.array(out_grad))
    # the impulse reaches every kernel tap once
    assert abs(out.asnumpy().sum() - np.prod(ks)) < 1e-3
    # and the gradient of the weight at each tap is the output at that tap
    np.testing.assert_allclose(ws.grad.asnumpy(), np.ones((1, 1) + ks), rtol=1e-5)
    # random kernel: the response is the (flipped, dilated) kernel around the impulse
    rw = np.random.default_rng(7).normal(size=(1, 1) + ks).astype(np.float32)
    out = nd.Convolution(nd.array(x), nd.array(rw), num_filter=1, kernel=ks, dilate=dil,
                         no_bias=True).asnumpy()
    np.testing.assert_allclose(np.sort(out[out != 0]), np.sort(rw.ravel()[rw.ravel() != 0]),
                               rtol=1e-5)


@pytest.mark.parametrize("case", [
    ((2, 3, 4, 4), (3, 3), (2, 2), (99, 99), (101, 101), (8, 8)),
    ((2, 3, 4, 4), (3, 3), (2, 2), (1, 1), (1, 1), None),
    ((2, 3, 4), (3,), (2,), (99,), (101,), (8,)),
    ((2, 3, 4), (3,), (2,), (1,), (1,), None),
    ((2, 3, 4, 4, 4), (3, 3, 3), (2, 2, 2), (99, 99, 99), (101, 101, 101), (8, 8, 8)),
    ((2, 3, 4, 4, 4), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), None),
])
def test_deconvolution_target_shape_mxnet(case):
    shape, kernel, stride, pad, adj, target = case
    kw = dict(kernel=kernel, stride=stride, pad=pad, adj=adj, num_filter=5)
    if target:
        kw["target_shape"] = target
    w = nd.ones((shape[1], 5) + kernel)
    out = nd.Deconvolution(nd.ones(shape), w, **kw)
    assert out.shape == (shape[0], 5) + (8,) * len(kernel)


@pytest.mark.parametrize("shape,nf,kernel,stride,pad", [
    ((1, 1, 5, 5), 1, (3, 3), (1, 1), (1, 1)),
    ((4, 3, 12, 12), 3, (3, 3), (1, 1), (1, 1)),
    ((1, 3, 10), 3, (3,), (1,), (1,)),
    ((2, 2, 5, 5, 5), 2, (3, 3, 3), (1, 1, 1), (1, 1, 1)),
])
def test_deconvolution_forward_backward_mxnet(shape, nf, kernel, stride, pad):
    # conv -> deconv with one weight: the data gradient under head = data equals the output
    rng = np.random.default_rng(8)
    x = a64(rng.uniform(-5, 5, shape))
    w = a64(rng.normal(0, 1, (nf, shape[1]) + kernel))
    x.attach_grad()
    with autograd.record():
        c = nd.Convolution(x, w, kernel=kernel, stride=stride, pad=pad, num_filter=nf,
                           no_bias=True)
        d = nd.Deconvolution(c, w, kernel=kernel, stride=stride, pad=pad, num_filter=nf,
                             no_bias=True)
    d.backward(x)
    np.testing.assert_allclose(d.asnumpy(), x.grad.asnumpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape,nf,pad", [((1, 3, 5, 5), 3, (1, 1)), ((2, 3, 20, 20), 3, (3, 3))])
def test_deconvolution_gradient_mxnet(shape, nf, pad):
    # conv(data, w) with pad p == deconv(data, w') with pad k-1-p (stride 1): same grads
    rng = np.random.default_rng(9)
    k = 2 * pad[0] + 1
    kernel = (k, k)
    x = rng.normal(size=shape)
    w = rng.normal(size=(nf, shape[1]) + kernel)
    head = a64(rng.normal(size=(shape[0], nf) + shape[2:]))
    y1, g1 = _grads(lambda x, w: nd.Convolution(x, w, kernel=kernel, pad=pad, num_filter=nf,
                                               no_bias=True), [a64(x), a64(w)], head)
    wt = np.flip(w, axis=(2, 3)).swapaxes(0, 1)
    y2, g2 = _grads(lambda x, w: nd.Deconvolution(x, w, kernel=kernel,
                                                 pad=(k - 1 - pad[0],) * 2, num_filter=nf,
                                                 no_bias=True), [a64(x), a64(wt)], head)
    np.testing.assert_allclose(y1, y2, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(g1[0], g2[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(g1[1], np.flip(g2[1], axis=(2, 3)).swapaxes(0, 1), rtol=1e-9,
                               atol=1e-9)


def test_convolution_independent_gradients_mxnet():
    rng = np.random.default_rng(10)
    x_np, w_np = rng.normal(size=(2, 4, 7, 7)), rng.normal(size=(3, 4, 3, 3))
    b_np = rng.normal(size=(3,))
    head = a64(rng.normal(size=(2, 3, 5, 5)))
    _, ref = _grads(lambda x, w, b: nd.Convolution(x, w, b, kernel=(3, 3), num_filter=3),
                    [a64(x_np), a64(w_np), a64(b_np)], head)
    for reqs in [("write", "null", "add"), ("null", "add", "write"), ("add", "write", "null")]:
        arrs = [a64(x_np), a64(w_np), a64(b_np)]
        for a, r in zip(arrs, reqs):
            a.attach_grad(grad_req=r)
            if r == "add":
                a.grad[:] = 1
        with autograd.record():
            y = nd.Convolution(*arrs, kernel=(3, 3), num_filter=3)
        y.backward(head)
        for a, r, want in zip(arrs, reqs, ref):
            if r == "write":
                np.testing.assert_allclose(a.grad.asnumpy(), want, rtol=1e-10)
            elif r == "add":
                np.testing.assert_allclose(a.grad.asnumpy(), want + 1, rtol=1e-10)


def _num_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
def test_pooling_full_2d_mxnet(pool_type):
    shape, kernel, pad, stride = (2, 2, 10, 10), (4, 5), (1, 2), (3, 4)
    x_np = np.random.default_rng(11).permutation(400).reshape(shape).astype(np.float64) / 7
    kw = dict(kernel=kernel, pad=pad, stride=stride, pool_type=pool_type,
              pooling_convention="full", global_pool=False)
    x = a64(x_np)
    out = nd.Pooling(x, **kw)
    # H = 1 + ceil((10 + 2 - 4) / 3) = 4, W = 1 + ceil((10 + 4 - 5) / 4) = 4
    assert out.shape == (2, 2, 4, 4)
    rng = np.random.default_rng(12)
    head = rng.normal(size=out.shape)
    # 'full' windows of padding only give max the lowest float, as MXNet: no gradient there
    head[out.asnumpy() == np.finfo(np.float64).min] = 0
    x.attach_grad()
    with autograd.record():
        y = nd.Pooling(x, **kw)
    y.backward(a64(head))
    num = _num_grad(lambda v: float((nd.Pooling(a64(v), **kw).asnumpy() * head).sum()), x_np)
    np.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 10), (2, 3, 10, 10), (2, 3, 6, 6, 6)])
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum", "lp"])
def test_global_pooling_mxnet(shape, pool_type):
    # MXNet's test_global_pooling: kernel, pad and stride given with global_pool are ignored
    nd_ = len(shape) - 2
    x_np = np.random.default_rng(13).normal(size=shape)
    x = a64(x_np)
    extra = {"p_value": 2} if pool_type == "lp" else {}
    ax = tuple(range(2, 2 + nd_))
    want = {"max": x_np.max(axis=ax, keepdims=True), "avg": x_np.mean(axis=ax, keepdims=True),
            "sum": x_np.sum(axis=ax, keepdims=True),
            "lp": np.sqrt((x_np ** 2).sum(axis=ax, keepdims=True))}[pool_type]
    for kw in ({}, {"kernel": (2,) * nd_}, {"kernel": (2,) * nd_, "pad": (1,) * nd_},
               {"kernel": (2,) * nd_, "stride": (2,) * nd_},
               {"kernel": (2,) * nd_, "pad": (1,) * nd_, "stride": (2,) * nd_,
                "pooling_convention": "full"}):
        out = nd.Pooling(x, pool_type=pool_type, global_pool=True, **kw, **extra)
        assert out.shape == shape[:2] + (1,) * nd_
        np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-10)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pooling_mxnet(p):
    x_np = np.abs(np.random.default_rng(14).normal(size=(1, 2, 6, 6))) + 0.1
    out = nd.Pooling(a64(x_np), kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=p)
    w = x_np.reshape(1, 2, 3, 2, 3, 2)
    want = ((w ** p).sum(axis=(3, 5))) ** (1.0 / p)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-10)


def test_pooling_count_include_pad_mxnet():
    x_np = np.arange(16, dtype=np.float64).reshape(1, 1, 4, 4)
    kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")
    incl = nd.Pooling(a64(x_np), **kw).asnumpy()
    excl = nd.Pooling(a64(x_np), count_include_pad=False, **kw).asnumpy()
    xp = np.pad(x_np, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = np.pad(np.ones_like(x_np), ((0, 0), (0, 0), (1, 1), (1, 1)))
    for i in range(2):
        for j in range(2):
            win = xp[0, 0, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
            assert np.isclose(incl[0, 0, i, j], win.sum() / 9)
            assert np.isclose(excl[0, 0, i, j],
                              win.sum() / ones[0, 0, 2 * i:2 * i + 3, 2 * j:2 * j + 3].sum())
