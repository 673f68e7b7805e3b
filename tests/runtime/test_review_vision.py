"""MXNet 1.x's test_contrib_operator.py (box_nms, box_iou) and test_operator.py
(ROIAlign, ROIPooling, BilinearResize2D, AdaptiveAvgPooling2D) cases, ported."""

import itertools
import random

import numpy as np
import pytest
from numpy.testing import assert_allclose

from runtime import autograd, nd
from tests.runtime.test_vision import _bilinear as _weights


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


def _bilinear(bottom, height, width, y, x):
    """MXNet's test bilinear_interpolate: (value, [(row, col, weight)])."""
    g = [(r, c, T(wt)) for wt, r, c in _weights(height, width, float(y), float(x))]
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
                            v, g = _bilinear(data[b, c_in], h, w, y, x)
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
