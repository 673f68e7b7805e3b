"""Anchor and box-target operators of MXNet 1.x's contrib (names, signatures, defaults
and semantics): ``_contrib_MultiBoxPrior``, ``_contrib_MultiBoxDetection``,
``_contrib_MultiBoxTarget``, ``_contrib_bipartite_matching``,
``_contrib_box_encode`` and ``_contrib_box_decode``.  None is differentiable (MXNet's
backward passes zeros or nothing).

Kernels are NumPy on the host (a device input is copied there and the result back);
coordinates are computed in float32 for float16/float32 data, as MXNet's, in float64
for float64 data.
"""

import math

import numpy as np

from runtime._device import store, to_host
from runtime.ops.registry import Attr, float_input, register
from runtime.ops.vision import _calc_dtype, _same_float


def _floats(op, name, v, positive=False):
    """A tuple of floats from a number or a sequence of numbers."""
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        v = (v,)
    try:
        out = tuple(float(x) for x in v)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: {name} must be a number or a tuple of numbers (got "
                        f"{v!r})") from None
    if not out or not all(math.isfinite(x) for x in out) or \
            (positive and not all(x > 0 for x in out)):
        raise ValueError(f"{op}: {name} must be a non-empty tuple of finite numbers"
                         f"{' > 0' if positive else ''} (got {v!r})")
    return out


# -- MultiBoxPrior ---------------------------------------------------------------------

_PRIOR = "_contrib_MultiBoxPrior"


def _prior_plan(attrs):
    sizes = _floats(_PRIOR, "sizes", attrs["sizes"], positive=True)
    ratios = _floats(_PRIOR, "ratios", attrs["ratios"], positive=True)
    steps = _floats(_PRIOR, "steps", attrs["steps"])
    offsets = _floats(_PRIOR, "offsets", attrs["offsets"])
    for name, v in (("steps", steps), ("offsets", offsets)):
        if len(v) != 2:
            raise ValueError(f"{_PRIOR}: {name} must have 2 values (y, x) (got {v!r})")
    return sizes, ratios, steps, offsets


def _prior_shape(attrs, shapes):
    if len(shapes[0]) != 4:
        raise ValueError(f"{_PRIOR}: data must be 4-D (batch, channel, height, width) (got "
                         f"shape {shapes[0]!r})")
    sizes, ratios, _, _ = _prior_plan(attrs)
    h, w = shapes[0][2:]
    return [(1, h * w * (len(sizes) + len(ratios) - 1), 4)]


def _prior(attrs, ins, outs):
    sizes, ratios, steps, offsets = _prior_plan(attrs)
    h, w = ins[0].shape[2:]
    f = _calc_dtype(ins[0].dtype).type
    step_y = f(steps[0]) if steps[0] > 0 else f(1) / f(max(h, 1))     # no cell: no box
    step_x = f(steps[1]) if steps[1] > 0 else f(1) / f(max(w, 1))
    cy = (np.arange(h, dtype=f) + f(offsets[0])) * step_y
    cx = (np.arange(w, dtype=f) + f(offsets[1])) * step_x
    # per anchor (w/2, h/2): every size at ratio 1, then sizes[0] at each other ratio
    aspect = f(h) / f(max(w, 1))
    half = [(f(s) * aspect / f(2), f(s) / f(2)) for s in sizes]
    for r in ratios[1:]:
        q = np.sqrt(f(r))
        half.append((f(sizes[0]) * aspect * q / f(2), f(sizes[0]) / q / f(2)))
    half = np.array(half, dtype=f)                                   # (A, 2)
    y, x = np.meshgrid(cy, cx, indexing="ij")                        # (h, w)
    x, y = x[..., None], y[..., None]
    boxes = np.stack([x - half[:, 0], y - half[:, 1], x + half[:, 0], y + half[:, 1]],
                     axis=-1)                                        # (h, w, A, 4)
    if attrs["clip"]:
        np.clip(boxes, 0, 1, out=boxes)
    store(outs[0], boxes.reshape(1, -1, 4))


register(
    _PRIOR, inputs=("data",),
    attrs={"sizes": Attr("any", (1.0,)), "ratios": Attr("any", (1.0,)),
           "clip": Attr("bool", False), "steps": Attr("any", (-1.0, -1.0)),
           "offsets": Attr("any", (0.5, 0.5))},
    infer_shape=_prior_shape, infer_type=float_input(_PRIOR), compute=_prior,
    ignores=(0,), differentiable=False,
    doc="""Anchor boxes for a (batch, channel, height, width) feature map (MXNet's
``contrib.MultiBoxPrior``): for each cell (row-major), centred at ``((c + offsets[1]) *
step_x, (r + offsets[0]) * step_y)`` (``steps`` (y, x); -1 means 1/width, 1/height), one
box per size at ratio 1 (width ``size * height / width``, height ``size``), then one per
further ratio at ``sizes[0]`` (width times sqrt(ratio), height divided by it).  Output
(1, height * width * (len(sizes) + len(ratios) - 1), 4), corners [xmin, ymin, xmax, ymax]
in [0, 1] coordinates, clipped to [0, 1] with ``clip``.  Only the data's shape is read.""")


# -- bipartite_matching --------------------------------------------------------------------

_MATCH = "_contrib_bipartite_matching"


def _match_shape(attrs, shapes):
    s = shapes[0]
    if len(s) < 2:
        raise ValueError(f"{_MATCH}: data must have 2 or more dimensions (..., N, M) (got "
                         f"shape {s!r})")
    if attrs["topk"] < -1:
        raise ValueError(f"{_MATCH}: topk must be -1 (no limit) or >= 0 (got "
                         f"{attrs['topk']})")
    return [s[:-1], s[:-2] + s[-1:]]


def _match(attrs, ins, outs):
    x = to_host(ins[0])
    n, m = x.shape[-2:]
    scores = x.reshape(int(np.prod(x.shape[:-2])), n * m)
    rows = np.full((scores.shape[0], n), -1.0)
    cols = np.full((scores.shape[0], m), -1.0)
    ascend, thresh, topk = attrs["is_ascend"], attrs["threshold"], attrs["topk"]
    for b, s in enumerate(scores):
        # MXNet: a stable sort of every score, then a greedy pass in that order
        order = np.argsort(s if ascend else -s, kind="stable")
        count = 0
        for k in order:
            if not ((s[k] < thresh) if ascend else (s[k] > thresh)):
                break
            i, j = divmod(int(k), m)
            if rows[b, i] < 0 and cols[b, j] < 0:
                rows[b, i], cols[b, j] = j, i
                count += 1
                if 0 < topk < count:        # MXNet's test: topk + 1 matches
                    break
    store(outs[0], rows.reshape(x.shape[:-1]))
    store(outs[1], cols.reshape(x.shape[:-2] + (m,)))


register(
    _MATCH, inputs=("data",),
    attrs={"is_ascend": Attr("bool", False), "threshold": Attr("float", required=True),
           "topk": Attr("int", -1)},
    num_outputs=2, infer_shape=_match_shape,
    infer_type=lambda attrs, dtypes: [float_input(_MATCH)(attrs, dtypes)[0]] * 2,
    compute=_match, differentiable=False,
    doc="""Greedy bipartite matching of a score matrix (..., N, M) (MXNet's
``contrib.bipartite_matching``): the scores of each matrix are taken from the best
(highest, or lowest with ``is_ascend``; ties in row-major order) until one is below
``threshold`` (strictly above it, below it with ``is_ascend``, counts) or the match
limit is passed; a pair whose row and column are both free is matched.  The limit, as
MXNet 1.9.1's kernel tests it, stops after ``topk + 1`` matches (``topk`` -1 or 0: no
limit).  Outputs: the matched
column of each row (..., N) and the matched row of each column (..., M), -1 where
unmatched, in data's dtype.""")


# -- box_encode, box_decode ----------------------------------------------------------------

_ENCODE = "_contrib_box_encode"


def _encode_shape(attrs, shapes):
    samples, matches, anchors, refs, means, stds = (tuple(s) for s in shapes)
    if len(anchors) != 3 or anchors[2] != 4:
        raise ValueError(f"{_ENCODE}: anchors must have shape (B, N, 4) (got {anchors!r})")
    b, n = anchors[:2]
    for name, s in (("samples", samples), ("matches", matches)):
        if s != (b, n):
            raise ValueError(f"{_ENCODE}: {name} must have shape {(b, n)!r} (got {s!r})")
    if len(refs) != 3 or refs[0] != b or refs[2] != 4:
        raise ValueError(f"{_ENCODE}: refs must have shape ({b}, M, 4) (got {refs!r})")
    for name, s in (("means", means), ("stds", stds)):
        if s != (4,):
            raise ValueError(f"{_ENCODE}: {name} must have shape (4,) (got {s!r})")
    return [anchors, anchors]


def _center(box):
    """(x, y, w, h) of corner boxes (..., 4)."""
    w = box[..., 2] - box[..., 0]
    h = box[..., 3] - box[..., 1]
    return box[..., 0] + w / 2, box[..., 1] + h / 2, w, h


def _encode(attrs, ins, outs):
    samples, matches, anchors, refs, means, stds = (to_host(a) for a in ins)
    f = _calc_dtype(anchors.dtype)
    m = refs.shape[1]
    idx = matches.astype(np.int64)
    positive = samples > 0.5
    bad = positive & ((idx < 0) | (idx >= m))
    if bad.any():
        b, i = np.argwhere(bad)[0]
        raise ValueError(f"{_ENCODE}: matches must index refs' {m} boxes where samples is "
                         f"positive (got {matches[b, i]!r} at ({b}, {i}))")
    ref = np.take_along_axis(refs.astype(f), np.clip(idx, 0, m - 1)[..., None], axis=1)
    ax, ay, aw, ah = _center(anchors.astype(f))
    rx, ry, rw, rh = _center(ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.stack([(rx - ax) / aw, (ry - ay) / ah, np.log(rw / aw), np.log(rh / ah)],
                     axis=-1)
    t = (t - means.astype(f)) / stds.astype(f)
    mask = np.broadcast_to(positive[..., None], t.shape)
    store(outs[0], np.where(mask, t, 0))
    store(outs[1], mask.astype(f))


register(
    _ENCODE, inputs=("samples", "matches", "anchors", "refs", "means", "stds"), num_outputs=2,
    infer_shape=_encode_shape, infer_type=lambda attrs, dtypes: [dtypes[2]] * 2,
    compute=_encode, differentiable=False,
    doc="""Regression targets of anchors (MXNet's ``contrib.box_encode``): for each
anchor (B, N, 4) whose ``samples`` value is positive (> 0.5), the box ``refs[b,
matches[b, i]]`` (refs (B, M, 4)) encoded against it in centre offsets: ``((rx - ax) /
aw, (ry - ay) / ah, log(rw / aw), log(rh / ah))``, minus ``means`` (4,), divided by
``stds`` (4,), all boxes corners [xmin, ymin, xmax, ymax].  Outputs: the targets (B, N,
4), 0 for the other anchors, and the mask (B, N, 4), 1 for positive anchors.  A positive
anchor's match outside [0, M) raises ValueError.""")


_DECODE = "_contrib_box_decode"


def _decode_shape(attrs, shapes):
    data, anchors = tuple(shapes[0]), tuple(shapes[1])
    if len(data) != 3 or data[2] != 4:
        raise ValueError(f"{_DECODE}: data must have shape (B, N, 4) (got {data!r})")
    if len(anchors) != 3 or anchors[0] not in (1, data[0]) or anchors[1:] != data[1:]:
        raise ValueError(f"{_DECODE}: anchors must have shape (1, {data[1]}, 4) (got "
                         f"{anchors!r})")
    return [data]


def _decode(attrs, ins, outs):
    data, anchors = to_host(ins[0]), to_host(ins[1])
    f = _calc_dtype(data.dtype)
    data, anchors = data.astype(f), anchors.astype(f)
    if attrs["format"] == "corner":
        ax, ay, aw, ah = _center(anchors)
    else:
        ax, ay, aw, ah = (anchors[..., k] for k in range(4))
    std = [f.type(attrs[f"std{k}"]) for k in range(4)]
    ox = data[..., 0] * std[0] * aw + ax
    oy = data[..., 1] * std[1] * ah + ay
    dw, dh = data[..., 2] * std[2], data[..., 3] * std[3]
    if attrs["clip"] > 0:
        dw = np.minimum(dw, f.type(attrs["clip"]))
        dh = np.minimum(dh, f.type(attrs["clip"]))
    with np.errstate(over="ignore"):
        hw, hh = np.exp(dw) * aw / 2, np.exp(dh) * ah / 2
    store(outs[0], np.stack([ox - hw, oy - hh, ox + hw, oy + hh], axis=-1))


register(
    _DECODE, inputs=("data", "anchors"),
    attrs={"std0": Attr("float", 1.0), "std1": Attr("float", 1.0),
           "std2": Attr("float", 1.0), "std3": Attr("float", 1.0),
           "clip": Attr("float", -1.0),
           "format": Attr("str", "center", choices=("center", "corner"))},
    infer_shape=_decode_shape, infer_type=_same_float(_DECODE), compute=_decode,
    differentiable=False,
    doc="""Boxes from regression offsets (MXNet's ``contrib.box_decode``): data (B, N, 4)
``(dx, dy, dw, dh)`` against anchors (1, N, 4) (``format`` 'center' [x, y, w, h] or
'corner' [xmin, ymin, xmax, ymax]) gives the corner boxes of centre ``(dx * std0 * aw +
ax, dy * std1 * ah + ay)`` and size ``(exp(dw * std2) * aw, exp(dh * std3) * ah)``; with
``clip`` > 0 the exponents are capped at ``clip``.""")


# -- MultiBoxDetection ----------------------------------------------------------------------

_DETECT = "_contrib_MultiBoxDetection"


def _detect_shape(attrs, shapes):
    cls, loc, anchor = (tuple(s) for s in shapes)
    if len(cls) != 3:
        raise ValueError(f"{_DETECT}: cls_prob must have shape (B, classes, anchors) (got "
                         f"{cls!r})")
    b, _, n = cls
    if loc != (b, n * 4):
        raise ValueError(f"{_DETECT}: loc_pred must have shape {(b, n * 4)!r} (got {loc!r})")
    if anchor != (1, n, 4):
        raise ValueError(f"{_DETECT}: anchor must have shape {(1, n, 4)!r} (got "
                         f"{anchor!r})")
    if len(_floats(_DETECT, "variances", attrs["variances"])) != 4:
        raise ValueError(f"{_DETECT}: variances must have 4 values (got "
                         f"{attrs['variances']!r})")
    return [(b, n, 6)]


def _iou_corner(a, b):
    """MXNet's CalculateOverlap of corner box ``a`` (4,) with each of ``b`` (m, 4)."""
    w = np.maximum(0, np.minimum(a[2], b[:, 2]) - np.maximum(a[0], b[:, 0]))
    h = np.maximum(0, np.minimum(a[3], b[:, 3]) - np.maximum(a[1], b[:, 1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union <= 0, 0, inter / union)


def _detect(attrs, ins, outs):
    cls_prob, loc_pred, anchor = (to_host(a) for a in ins)
    f = _calc_dtype(cls_prob.dtype).type
    vx, vy, vw, vh = (f(v) for v in _floats(_DETECT, "variances", attrs["variances"]))
    nb, classes, n = cls_prob.shape
    nms, topk = attrs["nms_threshold"], attrs["nms_topk"]
    out = np.full((nb, n, 6), -1, f)
    a = anchor[0].astype(f)
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    ax, ay = (a[:, 0] + a[:, 2]) / f(2), (a[:, 1] + a[:, 3]) / f(2)
    # MXNet 1.9.1's CPU kernel: class 0 is the background whatever background_id says
    candidates = list(range(1, classes))
    for b in range(nb):
        probs = cls_prob[b].astype(f)[candidates]                      # (classes', n)
        best = probs.argmax(axis=0) if candidates else np.zeros(n, np.int64)
        score = probs[best, np.arange(n)] if candidates else np.full(n, f(-1))
        valid = np.flatnonzero(score >= f(attrs["threshold"])) if candidates else \
            np.zeros(0, np.int64)
        # the ids count from class 1 (MXNet's "id - 1")
        loc = loc_pred[b].astype(f).reshape(n, 4)[valid]
        ox = loc[:, 0] * vx * aw[valid] + ax[valid]
        oy = loc[:, 1] * vy * ah[valid] + ay[valid]
        with np.errstate(over="ignore"):
            ow = np.exp(loc[:, 2] * vw) * aw[valid] / f(2)
            oh = np.exp(loc[:, 3] * vh) * ah[valid] / f(2)
        boxes = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=1)
        if attrs["clip"]:
            boxes = np.clip(boxes, 0, 1)
        rows = np.concatenate([best[valid, None].astype(f), score[valid, None], boxes],
                              axis=1)
        count = len(valid)
        out[b, :count] = rows
        if count < 1 or not 0 < nms <= 1:
            continue
        order = np.argsort(-rows[:, 1], kind="stable")
        keep = count if topk <= 0 else min(topk, count)
        out[b, :keep] = rows[order[:keep]]
        out[b, keep:count, 0] = -1        # MXNet: past nms_topk only the id is cleared
        kept = out[b, :keep]
        for i in range(keep):
            if kept[i, 0] < 0:
                continue
            later = kept[i + 1:]
            same = later[:, 0] >= 0
            if not attrs["force_suppress"]:
                same &= later[:, 0] == kept[i, 0]
            gone = same & (_iou_corner(kept[i, 2:], later[:, 2:]) >= f(nms))
            later[gone, 0] = -1
    store(outs[0], out)


register(
    _DETECT, inputs=("cls_prob", "loc_pred", "anchor"),
    attrs={"clip": Attr("bool", True), "threshold": Attr("float", 0.01),
           "background_id": Attr("int", 0), "nms_threshold": Attr("float", 0.5),
           "force_suppress": Attr("bool", False),
           "variances": Attr("any", (0.1, 0.1, 0.2, 0.2)), "nms_topk": Attr("int", -1)},
    infer_shape=_detect_shape, infer_type=_same_float(_DETECT), compute=_detect,
    differentiable=False,
    doc="""Detections from SSD's outputs (MXNet's ``contrib.MultiBoxDetection``):
cls_prob (B, classes, anchors), loc_pred (B, anchors * 4), anchor (1, anchors, 4) corner
boxes.  Each anchor takes its most probable class other than class 0, the background
(``background_id`` is accepted and, as by MXNet 1.9.1's CPU kernel, not used); those
scoring >= ``threshold`` become rows ``[id, score, xmin, ymin, xmax, ymax]`` (id = class
- 1), the box decoded from the anchor with
``variances`` (centre offsets times vx, vy and the anchor's size; size times exp(offset
times vw, vh)) and clipped to [0, 1] with ``clip``; other rows are -1.  With
``nms_threshold`` in (0, 1] the rows are sorted by score (ties in anchor order), only
the first ``nms_topk`` (-1: all) stay candidates (MXNet clears just the id of the
others, leaving their values in anchor order), and each kept row sets the id of a later
one of the same class (any class with ``force_suppress``) to -1 when their IoU is >=
``nms_threshold``.  Output (B, anchors, 6).""")


# -- MultiBoxTarget --------------------------------------------------------------------------

_TARGET = "_contrib_MultiBoxTarget"


def _target_shape(attrs, shapes):
    anchor, label, cls = (tuple(s) for s in shapes)
    if len(anchor) != 3 or anchor[0] != 1 or anchor[2] != 4:
        raise ValueError(f"{_TARGET}: anchor must have shape (1, anchors, 4) (got "
                         f"{anchor!r})")
    n = anchor[1]
    if len(label) != 3 or label[2] < 5:
        raise ValueError(f"{_TARGET}: label must have shape (B, labels, 5 or more) (got "
                         f"{label!r})")
    b = label[0]
    if len(cls) != 3 or cls[0] != b or cls[2] != n:
        raise ValueError(f"{_TARGET}: cls_pred must have shape ({b}, classes, {n}) (got "
                         f"{cls!r})")
    if len(_floats(_TARGET, "variances", attrs["variances"])) != 4:
        raise ValueError(f"{_TARGET}: variances must have 4 values (got "
                         f"{attrs['variances']!r})")
    if attrs["negative_mining_ratio"] > 0 and not attrs["negative_mining_thresh"] > 0:
        raise ValueError(f"{_TARGET}: negative_mining_thresh must be > 0 with negative "
                         f"mining (got {attrs['negative_mining_thresh']!r})")
    return [(b, n * 4), (b, n * 4), (b, n)]


def _overlaps(anchors, gt):
    """IoU (anchors, gts) of corner boxes, 0 where they do not intersect."""
    a, g = anchors[:, None], gt[None]
    w = np.maximum(0, np.minimum(a[..., 2], g[..., 2]) - np.maximum(a[..., 0], g[..., 0]))
    h = np.maximum(0, np.minimum(a[..., 3], g[..., 3]) - np.maximum(a[..., 1], g[..., 1]))
    inter = w * h
    union = ((a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
             + (g[..., 2] - g[..., 0]) * (g[..., 3] - g[..., 1]) - inter)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0)


def _match_anchors(iou, threshold):
    """MXNet's matching: (flags (A,) 1 positive / -1 undecided, best gt (A,), best IoU
    (A,), -1 where not computed).  Each gt first takes its best free anchor (greedy on
    the largest IoU left, > 1e-6), then with ``threshold`` > 0 every other anchor takes
    its best gt and is positive when that IoU exceeds the threshold."""
    na, ng = iou.shape
    flags = np.full(na, -1)
    best_gt = np.full(na, -1)
    best_iou = np.full(na, -1.0)
    free = iou.copy()
    for _ in range(ng):
        j, k = np.unravel_index(np.argmax(free), free.shape)
        if not free[j, k] > 1e-6:
            break
        flags[j], best_gt[j], best_iou[j] = 1, k, free[j, k]
        free[j, :] = -1
        free[:, k] = -1
    if threshold > 0:
        rest = flags != 1
        best_gt[rest] = iou[rest].argmax(axis=1)
        best_iou[rest] = iou[rest].max(axis=1)
        flags[rest & (best_iou > threshold)] = 1
    return flags, best_gt, best_iou


def _target(attrs, ins, outs):
    anchor, label, cls = (to_host(a) for a in ins)
    f = np.float32
    vx, vy, vw, vh = (f(v) for v in _floats(_TARGET, "variances", attrs["variances"]))
    nb, n = label.shape[0], anchor.shape[1]
    a = anchor[0].astype(f)
    loc_target = np.zeros((nb, n, 4), f)
    loc_mask = np.zeros((nb, n, 4), f)
    cls_target = np.full((nb, n), f(attrs["ignore_label"]))
    ratio = attrs["negative_mining_ratio"]
    for b in range(nb):
        rows = label[b].astype(f)
        valid = int(np.argmax(rows[:, 0] == -1)) if (rows[:, 0] == -1).any() else len(rows)
        if valid == 0:
            continue
        gt = rows[:valid]
        iou = _overlaps(a, gt[:, 1:5]).astype(f)
        flags, best_gt, best_iou = _match_anchors(iou, attrs["overlap_threshold"])
        positive = flags == 1
        if ratio > 0:
            npos = int(positive.sum())
            nneg = min(int(npos * ratio), n - npos)
            if nneg > 0:
                todo = ~positive & (best_iou < 0)
                best_gt[todo] = iou[todo].argmax(axis=1)
                best_iou[todo] = iou[todo].max(axis=1)
                cand = np.flatnonzero(~positive & (best_iou < attrs["negative_mining_thresh"]))
                logits = cls[b][:, cand].astype(f)
                prob = np.exp(logits[0] - logits.max(axis=0)) / \
                    np.exp(logits - logits.max(axis=0)).sum(axis=0)
                hardest = cand[np.argsort(prob, kind="stable")[:nneg]]   # lowest background
                flags[hardest] = 0
        else:
            flags[~positive] = 0
        pos = np.flatnonzero(flags == 1)
        g = gt[best_gt[pos]]
        cls_target[b, pos] = g[:, 0] + 1
        cls_target[b, flags == 0] = 0
        loc_mask[b, pos] = 1
        ap = a[pos]
        aw, ah = ap[:, 2] - ap[:, 0], ap[:, 3] - ap[:, 1]
        gw, gh = g[:, 3] - g[:, 1], g[:, 4] - g[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            loc_target[b, pos] = np.stack([
                ((g[:, 1] + g[:, 3]) / 2 - (ap[:, 0] + ap[:, 2]) / 2) / aw / vx,
                ((g[:, 2] + g[:, 4]) / 2 - (ap[:, 1] + ap[:, 3]) / 2) / ah / vy,
                np.log(gw / aw) / vw, np.log(gh / ah) / vh], axis=1)
    store(outs[0], loc_target.reshape(nb, n * 4))
    store(outs[1], loc_mask.reshape(nb, n * 4))
    store(outs[2], cls_target)


register(
    _TARGET, inputs=("anchor", "label", "cls_pred"), num_outputs=3,
    attrs={"overlap_threshold": Attr("float", 0.5), "ignore_label": Attr("float", -1.0),
           "negative_mining_ratio": Attr("float", -1.0),
           "negative_mining_thresh": Attr("float", 0.5),
           "minimum_negative_samples": Attr("int", 0),
           "variances": Attr("any", (0.1, 0.1, 0.2, 0.2))},
    infer_shape=_target_shape,
    infer_type=lambda attrs, dtypes: _same_float(_TARGET)(attrs, dtypes) * 3,
    compute=_target, differentiable=False,
    doc="""SSD training targets (MXNet's ``contrib.MultiBoxTarget``): anchor (1, A, 4)
corner boxes, label (B, L, 5+) rows ``[class, xmin, ymin, xmax, ymax]`` up to the first
row of class -1, cls_pred (B, classes, A).  Each ground truth first takes its best free
anchor (greedily by IoU), then every other anchor whose best IoU exceeds
``overlap_threshold`` is positive too.  With ``negative_mining_ratio`` > 0 the negatives
are the ``ratio * positives`` anchors (at most all the others) with IoU below
``negative_mining_thresh`` and the lowest background probability (softmax of cls_pred,
ties in anchor order); otherwise every other anchor is negative.  Outputs: loc_target
(B, A * 4), the positives' offsets ``((gx - ax) / aw / vx, (gy - ay) / ah / vy,
log(gw / aw) / vw, log(gh / ah) / vh)``; loc_mask (B, A * 4), 1 on positives; cls_target
(B, A), class + 1 on positives, 0 on negatives, ``ignore_label`` elsewhere (an image
without ground truth keeps 0, 0, ``ignore_label``).  ``minimum_negative_samples`` is
accepted and, as by MXNet 1.9.1's CPU kernel, not used.  Computed in float32.""")
