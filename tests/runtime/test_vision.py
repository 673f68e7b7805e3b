"""Vision operators against independent references: nested-loop transcriptions of MXNet's
CPU kernels (ROIPoolForward, ROIAlignForward/Backward, the bilinear resize's
SpatialUpSamplingBilinear*, adaptive average pooling's START_IND/END_IND, box_nms's
greedy suppression) on tiny inputs, MXNet's documented examples, and float64 central
differences for the gradients (tests/runtime/test_all_ops.py checks the generic
behaviour from op_samples_vision.py)."""

import math

import numpy as np
import pytest

from runtime import autograd, nd
from tests.runtime.conftest import free_failing_tests
from tests.runtime.op_samples_vision import nms_reference

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
