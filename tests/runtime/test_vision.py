"""Vision operators against independent references: nested-loop transcriptions of MXNet's
CPU kernels (ROIPoolForward, ROIAlignForward/Backward, the bilinear resize's
SpatialUpSamplingBilinear*, adaptive average pooling's START_IND/END_IND, box_nms's
greedy suppression) on tiny inputs, MXNet's documented examples, and float64 central
differences for the gradients (tests/runtime/test_all_ops.py checks the generic
behaviour from op_samples_vision.py)."""

import math
import re

import numpy as np
import pytest

from runtime import autograd, nd
from tests.runtime.conftest import free_failing_tests
from tests.runtime.op_samples_vision import nms_reference
import itertools
import random
from numpy.testing import assert_allclose

FLT_MAX = 3.4028234663852886e38


def rand(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(dtype)


def arr(a):
    return nd.array(a, dtype=a.dtype)


def grad_of(fn, inputs, head, wrt=0):
    """The tape's gradient of <head, fn(*inputs)> for input ``wrt``."""
    xs = [arr(a) for a in inputs]
    xs[wrt].attach_grad()
    with autograd.record():
        y = fn(*xs)
    y.backward(arr(head))
    return xs[wrt].grad.asnumpy()


def numeric_grad(fn, inputs, head, wrt=0, eps=1e-6):
    x = inputs[wrt]
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        vals = []
        for s in (eps, -eps):
            xs = [a.copy() for a in inputs]
            xs[wrt][i] += s
            vals.append(float(np.sum(head * fn(*[arr(a) for a in xs]).asnumpy())))
        g[i] = (vals[0] - vals[1]) / (2 * eps)
    return g


# -- ROIPooling -----------------------------------------------------------------------------

def c_round(v):
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def roi_pool_reference(x, rois, pooled, scale):
    """MXNet's ROIPoolForward written out: (output, argmax)."""
    scale = float(np.float32(scale))          # spatial_scale is a float parameter
    n, c, h, w = x.shape
    ph_n, pw_n = pooled
    out = np.full((len(rois), c, ph_n, pw_n), -FLT_MAX)
    arg = np.full(out.shape, -1)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        sw, sh, ew, eh = (c_round(roi[k] * scale) for k in range(1, 5))
        rh, rw = max(eh - sh + 1, 1), max(ew - sw + 1, 1)
        bh, bw = rh / ph_n, rw / pw_n
        for ch in range(c):
            for ph in range(ph_n):
                for pw in range(pw_n):
                    hs = min(max(math.floor(ph * bh) + sh, 0), h)
                    he = min(max(math.ceil((ph + 1) * bh) + sh, 0), h)
                    ws = min(max(math.floor(pw * bw) + sw, 0), w)
                    we = min(max(math.ceil((pw + 1) * bw) + sw, 0), w)
                    if he <= hs or we <= ws:
                        out[r, ch, ph, pw] = 0
                        continue
                    for i in range(hs, he):
                        for j in range(ws, we):
                            if x[b, ch, i, j] > out[r, ch, ph, pw]:
                                out[r, ch, ph, pw] = x[b, ch, i, j]
                                arg[r, ch, ph, pw] = i * w + j
    return out, arg


def roi_pool_grad_reference(x, rois, arg, head):
    g = np.zeros_like(x)
    for r, c, i, j in np.ndindex(arg.shape):
        if arg[r, c, i, j] >= 0:
            a = arg[r, c, i, j]
            g[int(rois[r, 0]), c, a // x.shape[3], a % x.shape[3]] += head[r, c, i, j]
    return g


def test_roi_pooling_documented_example():
    x = np.arange(48, dtype=np.float32).reshape(1, 1, 8, 6)
    y = np.array([[0, 0, 0, 4, 4]], np.float32)
    np.testing.assert_array_equal(
        nd.ROIPooling(arr(x), arr(y), pooled_size=(2, 2), spatial_scale=1.0).asnumpy(),
        [[[[14, 16], [26, 28]]]])
    np.testing.assert_array_equal(
        nd.ROIPooling(arr(x), arr(y), pooled_size=(2, 2), spatial_scale=0.7).asnumpy(),
        [[[[7, 9], [19, 21]]]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pooled,scale", [((2, 3), 1.0), ((3, 3), 0.5), ((4, 2), 0.8),
                                          ((1, 1), 1.0)])
def test_roi_pooling_against_loops(pooled, scale, dtype):
    x = rand((3, 2, 9, 8), 1, dtype)
    rois = np.array([[0, 0, 0, 8, 7], [2, 1.4, 2.6, 5.5, 8.5], [1, 3, 3, 3, 3],
                     [0, -4, -3, 20, 18], [1, 6.5, 1, 2, 7], [2, 7.5, 8.5, 12, 13]], dtype)
    want, arg = roi_pool_reference(x.astype(np.float64), rois.astype(np.float64), pooled,
                                   scale)
    got = nd.ROIPooling(arr(x), arr(rois), pooled_size=pooled, spatial_scale=scale)
    np.testing.assert_array_equal(got.asnumpy(), want.astype(dtype))
    head = rand(want.shape, 2, dtype)
    np.testing.assert_allclose(
        grad_of(lambda a, b: nd.ROIPooling(a, b, pooled_size=pooled, spatial_scale=scale),
                [x, rois], head),
        roi_pool_grad_reference(x, rois, arg, head), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_roi_pooling_numpy_path_matches_the_loops(dtype):
    """float16 data take the NumPy passes (float32/float64 the compiled kernel): same
    maxima and argmax as MXNet's scan, ties included."""
    from runtime.ops import vision
    x = np.round(rand((2, 3, 9, 8), 21) * 4).astype(dtype)       # many ties
    rois = np.array([[0, 0, 0, 8, 7], [1, 1.4, 2.6, 5.5, 8.5], [1, 3, 3, 3, 3],
                     [0, -4, -3, 20, 18], [1, 6.5, 1, 2, 7]], dtype)
    attrs = {"pooled_size": (3, 2), "spatial_scale": 1.0}
    want, warg = roi_pool_reference(x.astype(np.float64), rois.astype(np.float64), (3, 2),
                                    1.0)
    if dtype == np.float16:
        got = nd.ROIPooling(arr(x), arr(rois), **attrs).asnumpy()
        np.testing.assert_array_equal(got, want.astype(dtype))
    # the NumPy passes directly, for a dtype the kernel would take
    val, arg = vision._roi_pool_argmax("ROIPooling", x, rois, attrs, compiled=False)
    np.testing.assert_array_equal(val, want.astype(dtype))
    np.testing.assert_array_equal(arg, warg)


def test_roi_pooling_ties_go_to_the_first_maximum_in_row_major_order():
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 1, 3] = x[0, 0, 2, 0] = x[0, 0, 3, 2] = 5.0    # ties in one bin
    rois = np.array([[0, 0, 0, 3, 3]], np.float64)
    g = grad_of(lambda a, b: nd.ROIPooling(a, b, pooled_size=(1, 1), spatial_scale=1.0),
                [x, rois], np.ones((1, 1, 1, 1)))
    want = np.zeros_like(x)
    want[0, 0, 1, 3] = 1
    np.testing.assert_array_equal(g, want)


def test_roi_pooling_gradient_by_central_differences():
    x = rand((1, 2, 5, 6), 3)
    rois = np.array([[0, 0.4, 0.3, 4.6, 3.7], [0, 2, 1, 5, 4]])
    head = rand((2, 2, 2, 2), 4)
    f = lambda a, b: nd.ROIPooling(a, b, pooled_size=(2, 2), spatial_scale=1.0)  # noqa: E731
    np.testing.assert_allclose(grad_of(f, [x, rois], head),
                               numeric_grad(f, [x, rois], head), atol=1e-8)


def test_roi_pooling_bad_batch_index_leaves_out_unchanged():
    x = rand((2, 1, 4, 4))
    out = nd.full((2, 1, 2, 2), 7.0, dtype="float64")
    with pytest.raises(ValueError, match=r"^ROIPooling: rois' batch index must be "
                                         r"0 <= index < 2 .*\(got -1.0 in row 1\)"):
        nd.ROIPooling(arr(x), arr(np.array([[0, 0, 0, 2, 2], [-1, 0, 0, 2, 2.0]])),
                      pooled_size=(2, 2), spatial_scale=1.0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 7.0)


@pytest.mark.parametrize("op", ["ROIPooling", "_contrib_ROIAlign"])
def test_roi_ops_refuse_non_finite_and_huge_rois(op):
    x = arr(rand((1, 1, 4, 4)))
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match=rf"^{op}: rois must be finite \(got row 0"):
            getattr(nd, op)(x, arr(np.array([[0, 0, 0, bad, 2.0]])), pooled_size=(2, 2),
                            spatial_scale=1.0)
    if op == "_contrib_ROIAlign":
        with pytest.raises(ValueError, match=r"sampling grid exceeds 1048576 points"):
            nd._contrib_ROIAlign(x, arr(np.array([[0, 0, 0, 1e12, 2.0]])),
                                 pooled_size=(2, 2), spatial_scale=1.0)
        got = nd._contrib_ROIAlign(x, arr(np.array([[0, 0, 0, 1e12, 2.0]])),
                                   pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2)
        assert got.shape == (1, 1, 2, 2)


@pytest.mark.parametrize("op", ["ROIPooling", "_contrib_ROIAlign"])
@pytest.mark.parametrize("index", [1e30, 2.0 ** 63, 1.0])
def test_roi_ops_refuse_a_batch_index_beyond_the_batch_even_past_int64(op, index):
    # (1e30 has no int64: cast first, it became a negative index that ROIAlign skipped)
    x = arr(rand((1, 1, 4, 4)))
    with pytest.raises(ValueError, match=rf"^{op}: rois' batch index must be (0 <= )?index < "
                                         rf"1 \(data's batch size\) \(got {re.escape(repr(index))} in row "
                                         r"0\)"):
        getattr(nd, op)(x, arr(np.array([[index, 0, 0, 2, 2.0]])), pooled_size=(2, 2),
                        spatial_scale=1.0)


# -- ROIAlign ---------------------------------------------------------------------------------

def _bilinear(h, w, y, x):
    """MXNet's bilinear_interpolate_gradient: [(weight, row, col)] of one sample."""
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return []
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = int(y), int(x)
    if yl >= h - 1:
        yh = yl = h - 1
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= w - 1:
        xh = xl = w - 1
        x = float(xl)
    else:
        xh = xl + 1
    ly, lx = y - yl, x - xl
    hy, hx = 1 - ly, 1 - lx
    return [(hy * hx, yl, xl), (hy * lx, yl, xh), (ly * hx, yh, xl), (ly * lx, yh, xh)]


def roi_align_weights(shape, rois, pooled, scale, sample_ratio=-1, position_sensitive=False,
                      aligned=False):
    """MXNet's ROIAlignForward/Backward written out, as the (output, data) coefficients:
    out.flat[o] = sum_k M[o, k] * data.flat[k]."""
    n, c, h, w = shape
    scale = float(np.float32(scale))          # spatial_scale is a float parameter
    ph_n, pw_n = pooled
    co = c // (ph_n * pw_n) if position_sensitive else c
    m = np.zeros((len(rois) * co * ph_n * pw_n, n * c * h * w))
    for r, roi in enumerate(rois):
        b = int(roi[0])
        if b < 0:
            continue
        off = 0.5 if aligned else 0.0
        sw, sh, ew, eh = (roi[k] * scale - off for k in range(1, 5))
        rw, rh = ew - sw, eh - sh
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph_n, rw / pw_n
        gh = sample_ratio if sample_ratio > 0 else math.ceil(rh / ph_n)
        gw = sample_ratio if sample_ratio > 0 else math.ceil(rw / pw_n)
        for ch in range(co):
            for ph in range(ph_n):
                for pw in range(pw_n):
                    cu = ch * ph_n * pw_n + ph * pw_n + pw if position_sensitive else ch
                    o = ((r * co + ch) * ph_n + ph) * pw_n + pw
                    for iy in range(gh):
                        y = sh + ph * bh + (iy + 0.5) * bh / gh
                        for ix in range(gw):
                            x = sw + pw * bw + (ix + 0.5) * bw / gw
                            for wt, i, j in _bilinear(h, w, y, x):
                                m[o, ((b * c + cu) * h + i) * w + j] += wt / (gh * gw)
    return m, (len(rois), co, ph_n, pw_n)


ALIGN_CASES = [
    dict(pooled_size=(2, 2), spatial_scale=1.0),
    dict(pooled_size=(3, 2), spatial_scale=0.5, sample_ratio=2),
    dict(pooled_size=(2, 3), spatial_scale=1.0, aligned=True),
    dict(pooled_size=(2, 2), spatial_scale=0.8, position_sensitive=True),
    dict(pooled_size=(1, 1), spatial_scale=1.0, sample_ratio=3, aligned=True),
]


@pytest.mark.parametrize("attrs", ALIGN_CASES)
def test_roi_align_against_loops(attrs):
    c = 8 if attrs.get("position_sensitive") else 3
    x = rand((2, c, 6, 7), 5)
    rois = np.array([[0, 0.3, 0.2, 4.1, 3.7], [1, 1.4, 0.7, 6.3, 5.1], [-1, 1, 1, 3, 3.0],
                     [1, -1.9, 2.9, 8.3, 9.2], [0, 2.1, 1.3, 2.6, 1.6], [0, 5.5, 4.5, 9, 8]])
    m, shape = roi_align_weights(x.shape, rois, attrs["pooled_size"], attrs["spatial_scale"],
                                 attrs.get("sample_ratio", -1),
                                 attrs.get("position_sensitive", False),
                                 attrs.get("aligned", False))
    got = nd._contrib_ROIAlign(arr(x), arr(rois), **attrs)
    np.testing.assert_allclose(got.asnumpy(), (m @ x.ravel()).reshape(shape), atol=1e-12)
    head = rand(shape, 6)
    g = grad_of(lambda a, b: nd._contrib_ROIAlign(a, b, **attrs), [x, rois], head)
    np.testing.assert_allclose(g, (m.T @ head.ravel()).reshape(x.shape), atol=1e-12)
    # float32 computes its coordinates in float32 (as MXNet): close, not equal
    got32 = nd._contrib_ROIAlign(arr(x.astype(np.float32)), arr(rois.astype(np.float32)),
                                 **attrs)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32.asnumpy(), (m @ x.ravel()).reshape(shape), atol=1e-5)


def test_roi_align_gradient_by_central_differences():
    x = rand((1, 2, 5, 6), 7)
    rois = np.array([[0, 0.3, 0.2, 4.1, 3.7], [0, 1.2, 2.1, 3.3, 4.4]])
    head = rand((2, 2, 2, 2), 8)
    f = lambda a, b: nd._contrib_ROIAlign(a, b, pooled_size=(2, 2),  # noqa: E731
                                          spatial_scale=1.0)
    np.testing.assert_allclose(grad_of(f, [x, rois], head),
                               numeric_grad(f, [x, rois], head), atol=1e-8)


def test_roi_align_second_order_is_the_forward_map():
    """The data gradient is linear in the head gradient; its gradient with respect to the
    head is ROIAlign again: <v, M^T h> differentiated in h is M v."""
    x, rois = rand((1, 2, 5, 6), 9), np.array([[0, 0.3, 0.2, 4.1, 3.7]])
    attrs = dict(pooled_size=(2, 2), spatial_scale=1.0)
    h = arr(rand((1, 2, 2, 2), 10))
    h.attach_grad()
    v = rand(x.shape, 11)
    with autograd.record():
        g = nd._backward_ROIAlign(h, arr(rois), data_shape=x.shape, **attrs)
    g.backward(arr(v))
    want = nd._contrib_ROIAlign(arr(v), arr(rois), **attrs).asnumpy()
    np.testing.assert_allclose(h.grad.asnumpy(), want, atol=1e-12)


def test_roi_pooling_second_order_reads_the_head_at_the_argmax():
    """The data gradient scatters the head to the argmax; its gradient with respect to
    the head reads the head-gradient of data's shape back at the argmax."""
    x, rois = rand((1, 2, 5, 6), 23), np.array([[0, 0.4, 0.3, 4.6, 3.7], [0, 2, 1, 5, 4]])
    attrs = dict(pooled_size=(2, 2), spatial_scale=1.0)
    _, arg = roi_pool_reference(x, rois, (2, 2), 1.0)
    h = arr(rand((2, 2, 2, 2), 24))
    h.attach_grad()
    v = rand(x.shape, 25)
    with autograd.record():
        g = nd._backward_ROIPooling(h, arr(x), arr(rois), **attrs)
    g.backward(arr(v))
    want = np.where(arg >= 0, v[0][np.arange(2)[None, :, None, None], arg // 6, arg % 6], 0)
    np.testing.assert_allclose(h.grad.asnumpy(), want, atol=1e-15)


# -- BilinearResize2D -------------------------------------------------------------------------

def resize_reference(x, oh, ow, align_corners=True):
    """MXNet's SpatialUpSamplingBilinearUpdateOutput written out (float32 positions)."""
    n, c, ih, iw = x.shape
    f = np.float32

    def scale(i, o):
        if o <= 1:
            return f(0)
        return f(i - 1) / f(o - 1) if align_corners else f(i) / f(o)

    def src(s, d):
        if align_corners:
            return f(s * f(d))
        v = f(s * f(d + 0.5) - f(0.5))
        return f(0) if v < 0 else v
    rh, rw = scale(ih, oh), scale(iw, ow)
    out = np.zeros((n, c, oh, ow))
    for h2 in range(oh):
        h1r = src(rh, h2)
        h1 = int(h1r)
        h1p = 1 if h1 < ih - 1 else 0
        l1 = float(h1r - h1)
        for w2 in range(ow):
            w1r = src(rw, w2)
            w1 = int(w1r)
            w1p = 1 if w1 < iw - 1 else 0
            k1 = float(w1r - w1)
            top = (1 - k1) * x[:, :, h1, w1] + k1 * x[:, :, h1, w1 + w1p]
            bottom = (1 - k1) * x[:, :, h1 + h1p, w1] + k1 * x[:, :, h1 + h1p, w1 + w1p]
            out[:, :, h2, w2] = (1 - l1) * top + l1 * bottom
    return out


@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("size", [(7, 3), (3, 8), (4, 5), (1, 1), (9, 11)])
def test_bilinear_resize_against_loops(size, align_corners):
    x = rand((2, 3, 4, 5), 12)
    got = nd._contrib_BilinearResize2D(arr(x), height=size[0], width=size[1],
                                       align_corners=align_corners).asnumpy()
    np.testing.assert_allclose(got, resize_reference(x, *size, align_corners), atol=1e-6)
    f = lambda a: nd._contrib_BilinearResize2D(  # noqa: E731
        a, height=size[0], width=size[1], align_corners=align_corners)
    head = rand(got.shape, 13)
    np.testing.assert_allclose(grad_of(f, [x], head), numeric_grad(f, [x], head), atol=1e-7)


@pytest.mark.parametrize("mode,attrs,want", [
    ("size", {"height": 5, "width": 2}, (5, 2)),
    ("size", {"scale_height": 1.5, "scale_width": 0.7}, (7, 4)),
    ("size", {"scale_height": 2.0, "height": 3, "width": 9}, (10, 9)),
    ("odd_scale", {"scale_height": 2.0, "scale_width": 0.5}, (9, 3)),
    ("to_even_down", {}, (4, 6)),
    ("to_even_up", {}, (6, 6)),
    ("to_odd_down", {}, (5, 5)),
    ("to_odd_up", {}, (5, 7)),
])
def test_bilinear_resize_modes(mode, attrs, want):
    """Output sizes of MXNet's documented modes on a (5, 6) input (odd height, even
    width): 'odd_scale' gives (H - 1) * s + 1 for odd sizes and H * s for even ones."""
    x = rand((1, 2, 5, 6), 14)
    got = nd._contrib_BilinearResize2D(arr(x), mode=mode, **attrs)
    assert got.shape == (1, 2) + want
    np.testing.assert_allclose(got.asnumpy(), resize_reference(x, *want), atol=1e-6)


def test_bilinear_resize_like():
    x, like = rand((1, 2, 3, 4), 15), rand((2, 5, 6, 2), 16)
    got = nd._contrib_BilinearResize2D(arr(x), arr(like), mode="like", align_corners=False)
    np.testing.assert_allclose(got.asnumpy(), resize_reference(x, 6, 2, False), atol=1e-6)
    xs, ls = arr(x), arr(like)
    xs.attach_grad()
    ls.attach_grad()
    with autograd.record():
        y = nd._contrib_BilinearResize2D(xs, ls, mode="like")
    y.backward(nd.ones(y.shape, dtype="float64"))
    np.testing.assert_array_equal(ls.grad.asnumpy(), 0)      # MXNet: no gradient to like
    # each output's weights sum to 1: the data gradient of ones sums to the output's size
    np.testing.assert_allclose(xs.grad.asnumpy().sum(), y.size)


def test_bilinear_resize_same_size_is_a_copy():
    x = rand((2, 3, 4, 5), 17, np.float32)
    for ac in (True, False):
        np.testing.assert_array_equal(
            nd._contrib_BilinearResize2D(arr(x), height=4, width=5,
                                         align_corners=ac).asnumpy(), x)


# -- AdaptiveAvgPooling2D ---------------------------------------------------------------------

def adaptive_reference(x, oh, ow):
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        hs, he = (i * h) // oh, math.ceil((i + 1) * h / oh)
        for j in range(ow):
            ws, we = (j * w) // ow, math.ceil((j + 1) * w / ow)
            out[:, :, i, j] = x[:, :, hs:he, ws:we].sum(axis=(2, 3)) / ((he - hs) * (we - ws))
    return out


@pytest.mark.parametrize("output_size,want", [((3, 2), (3, 2)), (4, (4, 4)), ((), (1, 1)),
                                              ((7, 9), (7, 9)), ((5, 3), (5, 3))])
def test_adaptive_avg_pooling_against_loops(output_size, want):
    x = rand((2, 3, 5, 7), 18)
    got = nd._contrib_AdaptiveAvgPooling2D(arr(x), output_size=output_size).asnumpy()
    np.testing.assert_allclose(got, adaptive_reference(x, *want), atol=1e-13)
    head = rand(got.shape, 19)
    f = lambda a: nd._contrib_AdaptiveAvgPooling2D(a, output_size=output_size)  # noqa: E731
    np.testing.assert_allclose(grad_of(f, [x], head), numeric_grad(f, [x], head), atol=1e-7)


# -- box_iou, box_nms --------------------------------------------------------------------------

def test_box_iou_documented_example():
    x = np.array([[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]], np.float32)
    y = np.array([[0.25, 0.25, 0.75, 0.75]], np.float32)
    np.testing.assert_allclose(nd._contrib_box_iou(arr(x), arr(y)).asnumpy(),
                               [[1 / 7], [1 / 7]], rtol=1e-6)   # MXNet: [[0.1428], [0.1428]]


@pytest.mark.parametrize("fmt", ["corner", "center"])
def test_box_iou_against_loops(fmt):
    from tests.runtime.op_samples_vision import _iou_reference
    rng = np.random.default_rng(20)
    a, b = rng.uniform(0, 1, (2, 3, 4)), rng.uniform(0, 1, (5, 4))
    a[0, 0, 2] = a[0, 0, 0] - 0.1 if fmt == "corner" else -0.1    # a negative width
    got = nd._contrib_box_iou(arr(a), arr(b), format=fmt).asnumpy()
    assert got.shape == (2, 3, 5)
    for i, j, k in np.ndindex(got.shape):
        assert got[i, j, k] == pytest.approx(_iou_reference(a[i, j], b[k], fmt), abs=1e-15)


def test_box_iou_has_no_gradient():
    """MXNet's backward writes zeros: the op is not recorded, a sum through it gives 0."""
    a = arr(np.array([[0.1, 0.1, 0.6, 0.6]]))
    a.attach_grad()
    with autograd.record():
        y = nd._contrib_box_iou(a, arr(np.array([[0.2, 0.2, 0.5, 0.7]]))) + a.sum()
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), 1)


NMS_DOC = np.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                    [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]])


@pytest.mark.parametrize("name", ["_contrib_box_nms", "_contrib_box_non_maximum_suppression"])
def test_box_nms_documented_example(name):
    x = arr(NMS_DOC)
    x.attach_grad()
    with autograd.record():
        y = getattr(nd, name)(x, overlap_thresh=0.1, coord_start=2, score_index=1,
                              id_index=0, force_suppress=True, in_format="corner",
                              out_format="corner")
    np.testing.assert_allclose(y.asnumpy(), [[2, 0.6, 0.5, 0.5, 0.7, 0.8],
                                             [0, 0.5, 0.1, 0.1, 0.2, 0.2],
                                             [-1] * 6, [-1] * 6])
    y.backward(arr(np.repeat([[0.1], [0.2], [0.3], [0.4]], 6, axis=1)))
    np.testing.assert_allclose(x.grad.asnumpy(), [[0.2] * 6, [0] * 6, [0] * 6, [0.1] * 6])


@pytest.mark.parametrize("attrs", [
    {},
    {"overlap_thresh": 0.3, "id_index": 0},
    {"overlap_thresh": 0.3, "id_index": 0, "force_suppress": True, "topk": 6},
    {"overlap_thresh": 0.4, "valid_thresh": 0.3, "id_index": 0, "background_id": 0},
    {"overlap_thresh": 0.2, "in_format": "center", "out_format": "corner"},
    {"overlap_thresh": 0.2, "out_format": "center", "score_index": 0, "coord_start": 1,
     "id_index": 5},
    {"topk": 0},
])
def test_box_nms_against_loops(attrs):
    rng = np.random.default_rng(21)
    x = rng.uniform(0, 1, (2, 3, 12, 6))
    x[..., 0 if attrs.get("score_index") != 0 else 5] = rng.integers(0, 3, (2, 3, 12))
    if attrs.get("coord_start", 2) == 2:
        x[..., 4:6] = x[..., 2:4] + rng.uniform(0.05, 0.5, (2, 3, 12, 2))
    want, _ = nms_reference(x, **attrs)
    got = nd._contrib_box_nms(arr(x), **attrs).asnumpy()
    np.testing.assert_allclose(got, want, atol=1e-15)
    got32 = nd._contrib_box_nms(arr(x.astype(np.float32)), **attrs)
    assert got32.dtype == np.float32


def test_box_nms_second_order_routes_back():
    """box_nms's gradient is a routing of rows, linear in the head gradient; the gradient
    of that routing with respect to the head is the routing's adjoint (the rows read back
    in output order)."""
    _, record = nms_reference(NMS_DOC, overlap_thresh=0.1, id_index=0, force_suppress=True)
    attrs = dict(overlap_thresh=0.1, id_index=0, force_suppress=True)
    h = arr(rand(NMS_DOC.shape, 26))
    h.attach_grad()
    v = rand(NMS_DOC.shape, 27)
    with autograd.record():
        g = nd._backward_contrib_box_nms(h, arr(NMS_DOC), **attrs)
    g.backward(arr(v))
    want = np.zeros_like(v)
    for i, j in enumerate(record[0]):
        if j >= 0:
            want[i] = v[j]
    np.testing.assert_allclose(h.grad.asnumpy(), want)


def test_box_nms_batches_are_independent_and_keep_leading_axes():
    rng = np.random.default_rng(22)
    x = rng.uniform(0, 1, (4, 7, 6))
    x[..., 4:6] = x[..., 2:4] + 0.3
    whole = nd._contrib_box_nms(arr(x), overlap_thresh=0.2).asnumpy()
    for b in range(4):
        np.testing.assert_array_equal(
            whole[b], nd._contrib_box_nms(arr(x[b]), overlap_thresh=0.2).asnumpy())


def test_box_nms_bad_arguments():
    x = arr(NMS_DOC)
    with pytest.raises(ValueError, match=r"^_contrib_box_nms: topk must be -1 \(all\) or "
                                         r">= 0 \(got -2\)"):
        nd._contrib_box_nms(x, topk=-2)
    with pytest.raises(ValueError, match=r"^_contrib_box_nms: id_index must be -1 or in "
                                         r"\[0, 6\).* \(got id_index=1\)"):
        nd._contrib_box_nms(x, id_index=1)
    with pytest.raises(ValueError, match=r"^_contrib_box_nms: in_format"):
        nd._contrib_box_nms(x, in_format="xywh")


free_failing_tests(globals())


def test_box_nms_float16_as_float32():
    # MXNet takes float16 boxes; the decisions and the rows kept are those of float32
    rng = np.random.default_rng(5)
    boxes = np.zeros((2, 8, 6), np.float16)
    boxes[..., 0] = rng.integers(0, 3, (2, 8))
    boxes[..., 1] = rng.uniform(0, 1, (2, 8)).round(2)
    xy = rng.uniform(0, 8, (2, 8, 2)).round(1)
    boxes[..., 2:4] = xy
    boxes[..., 4:6] = xy + rng.uniform(1, 4, (2, 8, 2)).round(1)
    attrs = dict(overlap_thresh=0.3, id_index=0, topk=5)
    half = nd.contrib.box_nms(nd.array(boxes, dtype="float16"), **attrs)
    single = nd.contrib.box_nms(nd.array(boxes.astype(np.float32)), **attrs)
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half.asnumpy().astype(np.float32), single.asnumpy())
    assert (single.asnumpy()[..., 0] >= 0).sum() > 4          # something kept


# -- MXNet 1.x's box_nms/box_iou and vision operator cases, ported -------------------------

def _nms(data, thresh=0.5, valid=0, topk=-1, coord=2, score=1, cid=0, force=False,
         in_format="corner", out_format="corner"):
    return dict(overlap_thresh=thresh, valid_thresh=valid, topk=topk, coord_start=coord,
                score_index=score, id_index=cid, force_suppress=force,
                in_format=in_format, out_format=out_format)


def nms_forward(data, expected, **kw):
    out = nd.contrib.box_nms(nd.array(data), **_nms(data, **kw))
    assert_allclose(out.asnumpy(), np.asarray(expected, np.float32), rtol=1e-5, atol=1e-6)


def nms_backward(data, grad, expected, **kw):
    x = nd.array(data)
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.box_nms(x, **_nms(data, **kw))
    y.backward(nd.array(grad))
    assert_allclose(x.grad.asnumpy(), np.asarray(expected, np.float32), rtol=1e-5,
                    atol=1e-6)


def corner_to_center(data):
    out = np.reshape(data, (-1, 6)).copy()
    out[:, 2] = (data[:, 2] + data[:, 4]) / 2.0
    out[:, 3] = (data[:, 3] + data[:, 5]) / 2.0
    out[:, 4] = data[:, 4] - data[:, 2]
    out[:, 5] = data[:, 5] - data[:, 3]
    out[np.where(data[:, 0] < 0)[0], :] = -1
    return out


def swap_position(data, expected, coord=2, score=1, cid=0, new_col=0):
    data = np.reshape(data, (-1, 6))
    expected = np.reshape(expected, (-1, 6))
    new_coord = random.randint(0, 6 + new_col - 4)
    others = list(range(new_coord)) + list(range(new_coord + 4, 6 + new_col))
    random.shuffle(others)
    new_score, new_cid = others[0], others[1]
    new_data = np.full((data.shape[0], data.shape[1] + new_col), -1.0)
    new_expected = np.full((expected.shape[0], expected.shape[1] + new_col), -1.0)
    new_data[:, new_coord:new_coord + 4] = data[:, coord:coord + 4]
    new_data[:, new_score] = data[:, score]
    new_data[:, new_cid] = data[:, cid]
    new_expected[:, new_coord:new_coord + 4] = expected[:, coord:coord + 4]
    new_expected[:, new_score] = expected[:, score]
    new_expected[:, new_cid] = expected[:, cid]
    return new_data, new_expected, new_coord, new_score, new_cid


BOXES = [[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
         [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]]


def test_box_nms_op():
    rng = np.random.default_rng(0)
    boxes = np.array(BOXES)
    # case1
    expected = [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2],
                [0, 0.3, 0.1, 0.1, 0.14, 0.14], [-1, -1, -1, -1, -1, -1]]
    grad = rng.random((4, 6))
    gin = grad[(1, 3, 2, 0), :]
    gin[1, :] = 0
    nms_forward(boxes, expected, force=True, thresh=0.5)
    nms_backward(boxes, grad, gin, force=True, thresh=0.5)
    # case2: multi batch, another new dim
    b2, e2, g2, gi2 = np.array([BOXES] * 3), np.array([expected] * 3), \
        np.array([grad] * 3), np.array([gin] * 3)
    nms_forward(b2, e2, force=True)
    nms_backward(b2, g2, gi2, force=True)
    nms_forward(np.array([b2] * 2), np.array([e2] * 2), force=True)
    nms_backward(np.array([b2] * 2), np.array([g2] * 2), np.array([gi2] * 2), force=True)
    # case3: thresh
    e3 = [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2],
          [-1, -1, -1, -1, -1, -1], [-1, -1, -1, -1, -1, -1]]
    g3 = rng.random((4, 6))
    gi3 = g3[(1, 3, 2, 0), :]
    gi3[(1, 2), :] = 0
    nms_forward(boxes, e3, force=True, thresh=0.1)
    nms_backward(boxes, g3, gi3, force=True, thresh=0.1)
    # case4: non-force
    e4 = [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2],
          [1, 0.4, 0.1, 0.1, 0.2, 0.2], [-1, -1, -1, -1, -1, -1]]
    g4 = rng.random((4, 6))
    gi4 = g4[(1, 2, 3, 0), :]
    gi4[2, :] = 0
    nms_forward(boxes, e4, thresh=0.1)
    nms_backward(boxes, g4, gi4, thresh=0.1)
    # case5: different coding
    b5 = corner_to_center(boxes)
    nms_forward(b5, e4, thresh=0.1, in_format="center")
    e5 = corner_to_center(np.array(e4))
    nms_forward(boxes, e5, thresh=0.1, out_format="center")
    nms_forward(b5, e5, thresh=0.1, in_format="center", out_format="center")
    # case6: different position
    random.seed(1)
    for _ in range(5):
        b6, e6, c, s, i = swap_position(boxes, np.array(e4), new_col=2)
        nms_forward(b6, e6, thresh=0.1, coord=c, score=s, cid=i)
    # case7: no id, should be same with force=True
    nms_forward(boxes, expected, thresh=0.5, cid=-1)
    # case8: multi-batch thresh + topk
    b8 = [[[1, 1, 0, 0, 10, 10], [1, 0.4, 0, 0, 10, 10], [1, 0.3, 0, 0, 10, 10]],
          [[2, 1, 0, 0, 10, 10], [2, 0.4, 0, 0, 10, 10], [2, 0.3, 0, 0, 10, 10]],
          [[3, 1, 0, 0, 10, 10], [3, 0.4, 0, 0, 10, 10], [3, 0.3, 0, 0, 10, 10]]]
    e8 = [[[1, 1, 0, 0, 10, 10], [-1] * 6, [-1] * 6], [[2, 1, 0, 0, 10, 10], [-1] * 6,
          [-1] * 6], [[3, 1, 0, 0, 10, 10], [-1] * 6, [-1] * 6]]
    g8 = rng.random((3, 3, 6))
    gi8 = np.zeros((3, 3, 6))
    gi8[(0, 1, 2), (0, 0, 0), :] = g8[(0, 1, 2), (0, 0, 0), :]
    nms_forward(np.array(b8), e8, thresh=0.5, valid=0.5, topk=2)
    nms_backward(np.array(b8), g8, gi8, thresh=0.5, valid=0.5, topk=2)


def test_box_nms_background_id_and_alias():
    # MXNet 1.x: background_id drops the boxes of that class
    boxes = np.array(BOXES)
    out = nd.contrib.box_nms(nd.array(boxes), overlap_thresh=0.1, id_index=0,
                             background_id=0)
    assert_allclose(out.asnumpy(), [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                                    [-1] * 6, [-1] * 6], rtol=1e-6)
    out2 = nd.contrib.box_non_maximum_suppression(nd.array(boxes), overlap_thresh=0.1,
                                                  id_index=0, background_id=0)
    assert_allclose(out2.asnumpy(), out.asnumpy())
    # defaults: overlap_thresh=0.5, valid_thresh=0, topk=-1, coord_start=2,
    # score_index=1, id_index=-1, force_suppress=False
    d = nd.contrib.box_nms(nd.array(boxes)).asnumpy()
    assert_allclose(d, nd.contrib.box_nms(nd.array(boxes), overlap_thresh=0.5, id_index=-1,
                                          coord_start=2, score_index=1).asnumpy())


def _np_box_iou(a, b, fmt="corner"):
    def area(l, t, r, bt):
        return np.maximum(0, r - l) * np.maximum(0, bt - t)
    oshape = a.shape[:-1] + b.shape[:-1]
    a = a.reshape((-1, 4))
    n = a.shape[0]
    b = b.reshape((-1, 4))
    a = np.tile(a, reps=[1, b.shape[0]]).reshape((-1, 4))
    b = np.tile(b, reps=[n, 1]).reshape((-1, 4))
    if fmt == "corner":
        al, at, ar, ab = np.split(a, 4, axis=-1)
        bl, bt, br, bb = np.split(b, 4, axis=-1)
    else:
        ax, ay, aw, ah = np.split(a, 4, axis=-1)
        bx, by, bw, bh = np.split(b, 4, axis=-1)
        al, at, ar, ab = ax - aw / 2, ay - ah / 2, ax + aw / 2, ay + ah / 2
        bl, bt, br, bb = bx - bw / 2, by - bh / 2, bx + bw / 2, by + bh / 2
    w = np.maximum(0, np.minimum(ar, br) - np.maximum(al, bl))
    h = np.maximum(0, np.minimum(ab, bb) - np.maximum(at, bt))
    inter = w * h
    union = area(al, at, ar, ab) + area(bl, bt, br, bb) - inter
    union[np.where(inter <= 0)] = 1e-12
    return (inter / union).reshape(oshape)


def test_box_iou_op():
    rng = np.random.default_rng(3)

    def gen(dims):
        s1, off1, s2, off2 = rng.random(4) * 100
        xy = rng.random(dims + [2]) * s1 + off1
        wh = rng.random(dims + [2]) * s2 + off2
        return np.concatenate([xy, wh], -1), np.concatenate([xy - wh / 2, xy + wh / 2], -1)

    for nda in range(1, 6):
        for ndb in range(1, 6):
            da = rng.integers(1, 3, size=nda).tolist()
            db = rng.integers(1, 3, size=ndb).tolist()
            xa, la = gen(da)
            xb, lb = gen(db)
            want = _np_box_iou(la, lb)
            got = nd.contrib.box_iou(nd.array(la), nd.array(lb), format="corner")
            got2 = nd.contrib.box_iou(nd.array(xa), nd.array(xb), format="center")
            assert got.shape == want.shape
            assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)
            assert_allclose(got2.asnumpy(), want, rtol=1e-5, atol=1e-5)


# -- ROIAlign (test_operator.py test_op_roi_align) ----------------------------------------

T = np.float32


def _bilinear_value(bottom, height, width, y, x):
    """MXNet's test bilinear_interpolate: (value, [(row, col, weight)])."""
    g = [(r, c, T(wt)) for wt, r, c in _bilinear(height, width, float(y), float(x))]
    return T(sum(wt * bottom[r, c] for r, c, wt in g)), g


def roialign_forward_backward(data, rois, pooled_size, spatial_scale, sampling_ratio,
                              position_sensitive, dy):
    n, c, h, w = data.shape
    r_count = rois.shape[0]
    ph_, pw_ = pooled_size
    c_out = c // ph_ // pw_ if position_sensitive else c
    out = np.zeros((r_count, c_out, ph_, pw_), dtype=T)
    dx = np.zeros_like(data)
    for r in range(r_count):
        b = int(rois[r, 0])
        sw, sh, ew, eh = rois[r, 1:5] * T(spatial_scale)
        roi_w, roi_h = T(max(ew - sw, 1.0)), T(max(eh - sh, 1.0))
        bin_h, bin_w = roi_h / T(ph_), roi_w / T(pw_)
        if sampling_ratio > 0:
            gh = gw = sampling_ratio
        else:
            gh, gw = int(np.ceil(roi_h / T(ph_))), int(np.ceil(roi_w / T(pw_)))
        count = T(gh * gw)
        for cc in range(c_out):
            for ph in range(ph_):
                for pw in range(pw_):
                    val = T(0.0)
                    c_in = cc * ph_ * pw_ + ph * pw_ + pw if position_sensitive else cc
                    for iy in range(gh):
                        y = sh + T(ph) * bin_h + (T(iy) + T(0.5)) * bin_h / T(gh)
                        for ix in range(gw):
                            x = sw + T(pw) * bin_w + (T(ix) + T(0.5)) * bin_w / T(gw)
                            v, g = _bilinear_value(data[b, c_in], h, w, y, x)
                            val += v
                            for qy, qx, qw in g:
                                dx[b, c_in, qy, qx] += dy[r, cc, ph, pw] * qw / count
                    out[r, cc, ph, pw] = val / count
    return out, dx


@pytest.mark.parametrize("sampling_ratio,ps", [(0, False), (2, False), (0, True)])
def test_roi_align_value(sampling_ratio, ps):
    rng = np.random.default_rng(sampling_ratio + 2 * ps)
    dlen = 224
    n, c, h, w = 5, 3, 16, 16
    r = 7
    pooled = (3, 4)
    c = c * pooled[0] * pooled[1] if ps else c
    scale = h * 1.0 / dlen
    data = nd.array(np.arange(n * c * w * h).reshape((n, c, h, w)), dtype=np.float32)
    cxy = rng.uniform(0, dlen, (r, 2))
    wh = rng.uniform(0, dlen, (r, 2))
    bi = rng.integers(0, n, size=(r, 1))
    rois = nd.array(np.concatenate([bi, cxy - wh / 2, cxy + wh / 2], axis=1))
    data.attach_grad()
    rois.attach_grad()
    with autograd.record():
        out = nd.contrib.ROIAlign(data, rois, pooled_size=pooled, spatial_scale=scale,
                                  sample_ratio=sampling_ratio, position_sensitive=ps)
    c_out = c // pooled[0] // pooled[1] if ps else c
    dy = nd.array(rng.uniform(-1, 1, (r, c_out) + pooled))
    out.backward(dy)
    want, dx = roialign_forward_backward(data.asnumpy(), rois.asnumpy(), pooled, scale,
                                         sampling_ratio, ps, dy.asnumpy())
    assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-3)
    assert_allclose(data.grad.asnumpy(), dx, rtol=1e-4, atol=1e-3)
    assert not rois.grad.asnumpy().any()


def _numeric_grad(f, x, eps=1e-4):
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        old = x[i]
        x[i] = old + eps
        p = f(x)
        x[i] = old - eps
        m = f(x)
        x[i] = old
        g[i] = (p - m) / (2 * eps)
    return g


@pytest.mark.parametrize("op,attrs,shape,rois", [
    ("ROIAlign", {"pooled_size": (4, 4), "spatial_scale": 1, "sample_ratio": 0}, (4, 1, 12, 12),
     [[0, 1.1, 1.1, 6.2, 6.2], [2, 6.1, 2.1, 8.2, 11.2], [1, 3.1, 1.1, 5.2, 10.2]]),
    ("ROIPooling", {"pooled_size": (3, 3), "spatial_scale": 1}, (4, 3, 12, 8),
     [[0, 1.1, 1.1, 6.2, 6.2], [2, 6.1, 2.1, 8.2, 11.2], [1, 3.1, 1.1, 5.2, 10.7]])])
@pytest.mark.parametrize("req", ["write", "add"])
def test_roi_numeric_gradient(op, attrs, shape, rois, req):
    """test_roipooling / test_roi_align_autograd: check_numeric_gradient with
    grad_nodes={'data': write|add, 'rois': 'null'} (float64)."""
    rng = np.random.default_rng(5)
    x1 = rng.random(shape)
    x2 = np.array(rois)
    fn = nd.ROIPooling if op == "ROIPooling" else nd.contrib.ROIAlign
    proj = rng.random((len(rois), shape[1]) + attrs["pooled_size"])
    num = _numeric_grad(lambda x: float((fn(nd.array(x, dtype="float64"),
                                            nd.array(x2, dtype="float64"), **attrs)
                                         .asnumpy() * proj).sum()), x1.copy())
    x = nd.array(x1, dtype="float64")
    x.attach_grad(grad_req=req)
    base = rng.random(shape) if req == "add" else np.zeros(shape)
    if req == "add":
        x.grad[:] = base
    with autograd.record():
        y = fn(x, nd.array(x2, dtype="float64"), **attrs)
    y.backward(nd.array(proj, dtype="float64"))
    assert_allclose(x.grad.asnumpy() - base, num, rtol=1e-1, atol=1e-4)


def test_roi_pooling_mxnet_doc_example():
    # the example of MXNet's ROIPooling docstring
    x = nd.array(np.arange(48, dtype=np.float32).reshape(1, 1, 8, 6))
    y = nd.array([[0, 0, 0, 4, 4]])
    out = nd.ROIPooling(x, y, pooled_size=(2, 2), spatial_scale=1.0)
    assert_allclose(out.asnumpy(), [[[[14, 16], [26, 28]]]])
    out = nd.ROIPooling(x, y, (2, 2), 0.7)          # positional, MXNet's order
    assert_allclose(out.asnumpy(), [[[[7, 9], [19, 21]]]])


# -- BilinearResize2D (test_operator.py test_bilinear_resize_op) ---------------------------

def py_bilinear_resize(x, oh, ow):
    b, c, ih, iw = x.shape
    if oh == ih and ow == iw:
        return x
    y = np.empty([b, c, oh, ow])
    rh = 1.0 * (ih - 1) / (oh - 1) if oh > 1 else 0.0
    rw = 1.0 * (iw - 1) / (ow - 1) if ow > 1 else 0.0
    for h2 in range(oh):
        h1r = 1.0 * h2 * rh
        h1 = int(np.floor(h1r))
        hl = h1r - h1
        h1p = 1 if h1 < (ih - 1) else 0
        for w2 in range(ow):
            w1r = 1.0 * w2 * rw
            w1 = int(np.floor(w1r))
            wl = w1r - w1
            w1p = 1 if w1 < (iw - 1) else 0
            y[:, :, h2, w2] = (1 - hl) * ((1 - wl) * x[:, :, h1, w1] + wl * x[:, :, h1, w1 + w1p]) \
                + hl * ((1 - wl) * x[:, :, h1 + h1p, w1] + wl * x[:, :, h1 + h1p, w1 + w1p])
    return y


def py_bilinear_resize_backward(x, g):
    d1 = np.zeros_like(x)
    h1_, w1_ = x.shape[2:]
    h2_, w2_ = g.shape[2:]
    rh = float(h1_ - 1) / (h2_ - 1) if h2_ > 1 else 0
    rw = float(w1_ - 1) / (w2_ - 1) if w2_ > 1 else 0
    if h1_ == h2_ and w1_ == w2_:
        return d1 + g
    for h2 in range(h2_):
        for w2 in range(w2_):
            h1r = rh * h2
            h1 = int(h1r)
            h1p = 1 if h1 < h1_ - 1 else 0
            hl = h1r - h1
            w1r = rw * w2
            w1 = int(w1r)
            w1p = 1 if w1 < w1_ - 1 else 0
            wl = w1r - w1
            v = g[:, :, h2, w2]
            d1[:, :, h1, w1] += (1 - hl) * (1 - wl) * v
            d1[:, :, h1, w1 + w1p] += (1 - hl) * wl * v
            d1[:, :, h1 + h1p, w1] += hl * (1 - wl) * v
            d1[:, :, h1 + h1p, w1 + w1p] += hl * wl * v
    return d1


@pytest.mark.parametrize("hw", [(5, 5), (10, 10), (15, 15), (3, 7), (13, 17)])
def test_bilinear_resize_op(hw):
    height, width = hw
    shape = (2, 2, 10, 10)
    x = nd.random.uniform(shape=shape)
    y = nd.contrib.BilinearResize2D(x, height=height, width=width)
    assert_allclose(y.asnumpy(), py_bilinear_resize(x.asnumpy(), height, width), rtol=1e-5,
                    atol=1e-6)
    y = nd.contrib.BilinearResize2D(x, scale_height=height / shape[-2],
                                    scale_width=width / shape[-1])
    assert_allclose(y.asnumpy(), py_bilinear_resize(x.asnumpy(), height, width), rtol=1e-5,
                    atol=1e-6)


def _modes_cases():
    out = []
    for shape in [(2, 2, 20, 20), (2, 2, 21, 21)]:
        for sh, sw in [(0.5, 0.5), (5, 10), (0.1, 0.2)]:
            out.append((shape, dict(scale_height=sh, scale_width=sw, mode="odd_scale")))
        for m in ["to_even_down", "to_even_up", "to_odd_down", "to_odd_up"]:
            out.append((shape, dict(mode=m)))
    out += [((2, 2, 21, 21), dict(mode="like", like=(2, 2, 10, 10))),
            ((2, 2, 10, 10), dict(mode="like", like=(2, 2, 21, 21)))]
    return out


@pytest.mark.parametrize("shape,kw", _modes_cases())
def test_bilinear_resize_modes_op(shape, kw):
    kw = dict(kw)
    mode = kw["mode"]
    oh, ow = shape[2:]
    x = nd.random.uniform(shape=shape)
    args = [x]
    if mode == "odd_scale":
        sh, sw = kw["scale_height"], kw["scale_width"]
        nh = int(oh * sh) if oh % 2 == 0 else int((oh - 1) * sh) + 1
        nw = int(ow * sw) if ow % 2 == 0 else int((ow - 1) * sw) + 1
    elif mode == "like":
        like = nd.random.uniform(shape=kw.pop("like"))
        args.append(like)
        like.attach_grad()
        nh, nw = like.shape[2:]
    else:
        odd = mode.startswith("to_odd")
        step = 1 if mode.endswith("up") else -1
        nh = oh if oh % 2 == odd else oh + step
        nw = ow if ow % 2 == odd else ow + step
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.BilinearResize2D(*args, **kw)
    assert y.shape == (shape[0], shape[1], nh, nw)
    assert_allclose(y.asnumpy(), py_bilinear_resize(x.asnumpy(), nh, nw), rtol=1e-3, atol=1e-5)
    y.backward(nd.ones(y.shape))
    assert_allclose(x.grad.asnumpy(), py_bilinear_resize_backward(x.asnumpy(),
                                                                  np.ones(y.shape)),
                    rtol=1e-3, atol=1e-5)
    if mode == "like":
        assert not args[1].grad.asnumpy().any()


# -- AdaptiveAvgPooling2D (test_operator.py test_adaptive_avg_pool_op) ---------------------

def py_adaptive_avg_pool(x, height, width):
    def start_index(idx, out, inp):
        return int(np.floor(float(idx * inp) / out))

    def end_index(idx, out, inp):
        return int(np.ceil(float((idx + 1) * inp) / out))
    b, c, ih, iw = x.shape
    y = np.empty([b, c, height, width], dtype=x.dtype)
    for oh in range(height):
        ih0, ih1 = start_index(oh, height, ih), end_index(oh, height, ih)
        for ow in range(width):
            iw0, iw1 = start_index(ow, width, iw), end_index(ow, width, iw)
            y[:, :, oh, ow] = x[:, :, ih0:ih1, iw0:iw1].mean(axis=(2, 3))
    return y


@pytest.mark.parametrize("shape", [(2, 2, 10, 10), (2, 3, 11, 7)])
@pytest.mark.parametrize("size", [None, 1, 3, (3, 4), (5, 5), (10, 3), (13, 17)])
def test_adaptive_avg_pool_op(shape, size):
    x = nd.random.uniform(shape=shape)
    if size is None:
        y = nd.contrib.AdaptiveAvgPooling2D(x)
        oh = ow = 1
    else:
        y = nd.contrib.AdaptiveAvgPooling2D(x, output_size=size)
        oh, ow = (size, size) if isinstance(size, int) else size
    assert_allclose(y.asnumpy(), py_adaptive_avg_pool(x.asnumpy(), oh, ow), rtol=1e-5,
                    atol=1e-6)


def _sample_loop(data, grid):
    """BilinearSampler one output element at a time: each grid point's four neighbours,
    zero outside the image."""
    n, c, h, w = data.shape
    out = np.zeros((n, c) + grid.shape[2:])
    for b in range(n):
        for i in range(grid.shape[2]):
            for j in range(grid.shape[3]):
                x = (grid[b, 0, i, j] + 1) * (w - 1) / 2
                y = (grid[b, 1, i, j] + 1) * (h - 1) / 2
                x0, y0 = int(np.floor(x)), int(np.floor(y))
                for yy, xx in ((y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)):
                    if 0 <= yy < h and 0 <= xx < w:
                        weight = (1 - abs(y - yy)) * (1 - abs(x - xx))
                        out[b, :, i, j] += weight * data[b, :, yy, xx]
    return out


def test_bilinear_sampler_and_spatial_transformer_match_a_loop_and_mxnet():
    rng = np.random.RandomState(0)
    data = rng.rand(2, 3, 5, 6)
    grid = rng.uniform(-1.3, 1.3, (2, 2, 4, 3))
    got = nd.BilinearSampler(nd.array(data), nd.array(grid)).asnumpy()
    np.testing.assert_allclose(got, _sample_loop(data, grid), rtol=1e-5, atol=1e-6)
    # MXNet 1.9.1 on these float32 inputs, and its gradients for the head gradient below
    np.testing.assert_allclose(got.sum(), 31.1222, atol=1e-4)
    loc = rng.uniform(-0.5, 0.5, (2, 6)) + np.array([1, 0, 0, 0, 1, 0])
    head = rng.rand(2, 3, 4, 3)
    x, g, l = nd.array(data), nd.array(grid), nd.array(loc)
    for a in (x, g, l):
        a.attach_grad()
    with autograd.record():
        y = nd.BilinearSampler(x, g)
    y.backward(nd.array(head))
    np.testing.assert_allclose(x.grad.asnumpy().sum(), 29.8683, atol=1e-4)
    np.testing.assert_allclose(g.grad.asnumpy()[1, :, 2],
                               [[-1.1551, -0.1594, -0.1765], [-0.056, 0.1058, 0.0417]],
                               atol=1e-4)
    with autograd.record():
        y = nd.SpatialTransformer(x, l, target_shape=(4, 3), transform_type="affine",
                                  sampler_type="bilinear")
    y.backward(nd.array(head))
    np.testing.assert_allclose(y.asnumpy().sum(), 26.0633, atol=1e-4)
    np.testing.assert_allclose(l.grad.asnumpy(),
                               [[-2.3829, -0.3305, -4.1983, 1.0068, -2.7623, 2.4698],
                                [-1.2449, 1.7147, -3.0282, 0.9593, 0.2974, 1.1717]],
                               atol=1e-3)
    grid_of_loc = nd.GridGenerator(l, transform_type="affine", target_shape=(4, 3))
    np.testing.assert_allclose(y.asnumpy(), nd.BilinearSampler(x, grid_of_loc).asnumpy(),
                               rtol=1e-6)
