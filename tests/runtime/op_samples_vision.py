"""op_samples entries for the vision operators (runtime/ops/vision.py).

Rois are chosen so that no bin boundary, rounding or sampling position sits where the
central differences' steps could move it (data gradients only; rois get none, as in
MXNet); data are continuous random values, so max pooling has no ties.  box_nms samples
keep their boxes' IoUs away from overlap_thresh and their scores apart.
"""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, positive, uniform, zeros)

F32 = np.float32
_X = uniform((2, 3, 6, 7), seed=11)
_ROIS = np.array([[0, 0.0, 0.0, 4.2, 3.8], [1, 1.3, 0.6, 6.4, 5.2], [0, 2.2, 1.1, 3.1, 2.3],
                  [1, -2.0, 3.0, 8.6, 9.4]])
_PS = {"pooled_size": (2, 3), "spatial_scale": 1.0}
_BAD_ROIS = np.array([[0, 0.0, 0.0, 4.0, 4.0], [2, 1.0, 1.0, 3.0, 3.0]])

# -- ROIPooling and its hidden ops ------------------------------------------------------------

_add(SAMPLES, "ROIPooling",
     Sample([_X, _ROIS], _PS, wrt=[0]),
     Sample([_X, _ROIS], {"pooled_size": (3, 3), "spatial_scale": 0.6}, wrt=[0]),
     Sample([_X.astype(F32), _ROIS.astype(F32)], {"pooled_size": (2, 2),
                                                  "spatial_scale": 0.5}, grad=False))
_add(FAILURES, "ROIPooling",
     Failure([_X, _ROIS[:, 1:]], _PS, ValueError,
             r"^ROIPooling: rois must have shape \(num_rois, 5\)", out=((4, 3, 2, 3),
                                                                         np.float64)),
     Failure([_X, _ROIS], {"pooled_size": (0, 2), "spatial_scale": 1.0}, ValueError,
             r"^ROIPooling: pooled_size must be 2 positive ints \(height, width\) "
             r"\(got pooled_size=\(0, 2\)\)", out=False),
     Failure([_X, _ROIS], {"pooled_size": (2, 2), "spatial_scale": -1.0}, ValueError,
             r"^ROIPooling: spatial_scale must be finite and > 0 \(got -1.0\)", out=False),
     Failure([_X, _ROIS.astype(F32)], _PS, TypeError,
             r"^ROIPooling: inputs must have one floating dtype", out=((4, 3, 2, 3),
                                                                      np.float64)),
     # found by the kernel: the batch index of row 1 is beyond the batch
     Failure([_X, _BAD_ROIS], _PS, ValueError,
             r"^ROIPooling: rois' batch index must be 0 <= index < 2 .*\(got 2.0 in row 1\)",
             out=((2, 3, 2, 3), np.float64)))
_add(ZERO_SIZE, "ROIPooling",
     ZeroSize([_X, zeros(0, 5)], _PS, lambda x, r: np.zeros((0, 3, 2, 3))),
     ZeroSize([zeros(2, 0, 6, 7), _ROIS], _PS, lambda x, r: np.zeros((4, 0, 2, 3))))

_G = uniform((4, 3, 2, 3), seed=12)
_add(SAMPLES, "_backward_ROIPooling",
     Sample([_G, _X, _ROIS], _PS, wrt=[0]),
     Sample([_G.astype(F32), _X.astype(F32), _ROIS.astype(F32)], _PS, grad=False))
_add(FAILURES, "_backward_ROIPooling",
     Failure([_G[:, :, :1], _X, _ROIS], _PS, ValueError,
             r"^_backward_ROIPooling: grad must have shape \(4, 3, 2, 3\)",
             out=(_X.shape, np.float64)),
     Failure([_G[:2], _X, _BAD_ROIS], _PS, ValueError,
             r"^_backward_ROIPooling: rois' batch index", out=(_X.shape, np.float64)))
_add(ZERO_SIZE, "_backward_ROIPooling",
     ZeroSize([zeros(0, 3, 2, 3), _X, zeros(0, 5)], _PS, lambda g, x, r: np.zeros(x.shape)))

_V = uniform((2, 3, 6, 7), seed=13)
_add(SAMPLES, "_roi_pooling_pick",
     Sample([_X, _ROIS, _V], _PS, wrt=[2]),
     Sample([_X.astype(F32), _ROIS.astype(F32), _V.astype(F32)], _PS, grad=False))
_add(FAILURES, "_roi_pooling_pick",
     Failure([_X, _ROIS, _V[:1]], _PS, ValueError,
             r"^_roi_pooling_pick: values must have data's shape", out=((4, 3, 2, 3),
                                                                        np.float64)),
     Failure([_X, _BAD_ROIS, _V], _PS, ValueError, r"^_roi_pooling_pick: rois' batch index",
             out=((2, 3, 2, 3), np.float64)))
_add(ZERO_SIZE, "_roi_pooling_pick",
     ZeroSize([_X, zeros(0, 5), _V], _PS, lambda x, r, v: np.zeros((0, 3, 2, 3))))

# -- ROIAlign -----------------------------------------------------------------------------------

_RA = {"pooled_size": (2, 3), "spatial_scale": 1.0}
_ROIS_A = np.array([[0, 0.3, 0.2, 4.1, 3.7], [1, 1.4, 0.7, 6.3, 5.1], [-1, 1.0, 1.0, 3.0, 3.0],
                    [1, -1.9, 2.9, 8.3, 9.2], [0, 2.1, 1.3, 2.6, 1.6]])
_XP = uniform((2, 12, 5, 6), seed=14)
_add(SAMPLES, "_contrib_ROIAlign",
     Sample([_X, _ROIS_A], _RA, wrt=[0]),
     Sample([_X, _ROIS_A], {**_RA, "sample_ratio": 2, "spatial_scale": 0.8}, wrt=[0]),
     Sample([_X, _ROIS_A[:2]], {**_RA, "aligned": True}, wrt=[0]),
     Sample([_XP, _ROIS_A[:2]], {"pooled_size": (2, 3), "spatial_scale": 0.7,
                                 "position_sensitive": True}, wrt=[0]),
     Sample([_X.astype(F32), _ROIS_A.astype(F32)], _RA, grad=False))
_add(FAILURES, "_contrib_ROIAlign",
     Failure([_X, _ROIS_A[:, :4]], _RA, ValueError,
             r"^_contrib_ROIAlign: rois must have shape \(num_rois, 5\)",
             out=((5, 3, 2, 3), np.float64)),
     Failure([_X, _ROIS_A], {**_RA, "position_sensitive": True}, ValueError,
             r"^_contrib_ROIAlign: with position_sensitive=True data's channels must be a "
             r"multiple of pooled_size's product 6 \(got 3\)", out=False),
     Failure([_X, _BAD_ROIS], _RA, ValueError,
             r"^_contrib_ROIAlign: rois' batch index must be index < 2",
             out=((2, 3, 2, 3), np.float64)),
     Failure([_X, np.array([[0, 2.0, 2.0, 1.0, 4.0]])], {**_RA, "aligned": True}, ValueError,
             r"^_contrib_ROIAlign: with aligned=True every roi must have a positive",
             out=((1, 3, 2, 3), np.float64)))
_add(ZERO_SIZE, "_contrib_ROIAlign",
     ZeroSize([_X, zeros(0, 5)], _RA, lambda x, r: np.zeros((0, 3, 2, 3))),
     ZeroSize([zeros(0, 3, 6, 7), zeros(0, 5)], _RA, lambda x, r: np.zeros((0, 3, 2, 3))))

_GA = uniform((5, 3, 2, 3), seed=15)
_add(SAMPLES, "_backward_ROIAlign",
     Sample([_GA, _ROIS_A], {**_RA, "data_shape": _X.shape}, wrt=[0]),
     Sample([uniform((2, 2, 2, 3), seed=16), _ROIS_A[:2]],
            {"pooled_size": (2, 3), "spatial_scale": 0.7, "position_sensitive": True,
             "data_shape": _XP.shape}, wrt=[0]))
_add(FAILURES, "_backward_ROIAlign",
     Failure([_GA[:2], _ROIS_A], {**_RA, "data_shape": _X.shape}, ValueError,
             r"^_backward_ROIAlign: grad must have shape \(5, 3, 2, 3\)", out=(_X.shape,
                                                                              np.float64)))
_add(ZERO_SIZE, "_backward_ROIAlign",
     ZeroSize([zeros(0, 3, 2, 3), zeros(0, 5)], {**_RA, "data_shape": _X.shape},
              lambda g, r: np.zeros(_X.shape)))

# -- BilinearResize2D, AdaptiveAvgPooling2D -------------------------------------------------------

_XR = uniform((2, 3, 4, 5), seed=17)
_add(SAMPLES, "_contrib_BilinearResize2D",
     Sample([_XR], {"height": 7, "width": 3}),
     Sample([_XR], {"height": 3, "width": 8, "align_corners": False}),
     Sample([_XR], {"scale_height": 1.5, "scale_width": 0.5}),
     Sample([_XR], {"mode": "odd_scale", "scale_height": 2.0, "scale_width": 2.0}),
     Sample([_XR, uniform((1, 1, 6, 2), seed=18)], {"mode": "like"}, wrt=[0]),
     Sample([_XR], {"mode": "to_odd_up"}),
     Sample([_XR.astype(F32)], {"mode": "to_even_down", "align_corners": False}, grad=False))
_add(FAILURES, "_contrib_BilinearResize2D",
     Failure([_XR], {"height": 0, "width": 3}, ValueError,
             r"^_contrib_BilinearResize2D: height must be in \[1, 10000\] \(got 0\)",
             out=False),
     Failure([_XR], {"mode": "odd_scale", "scale_height": 2.0}, ValueError,
             r"^_contrib_BilinearResize2D: mode='odd_scale' needs scale_height and "
             r"scale_width", out=False),
     Failure([_XR], {"mode": "like"}, TypeError,
             r"^_contrib_BilinearResize2D: takes a like input exactly with mode='like'",
             out=False),
     Failure([_XR[0]], {"height": 2}, ValueError,
             r"^_contrib_BilinearResize2D: data must be 4-D", out=False),
     Failure([_XR.astype(np.int64)], {"height": 2}, TypeError,
             r"^_contrib_BilinearResize2D: needs a floating-point input", out=False))
_add(ZERO_SIZE, "_contrib_BilinearResize2D",
     ZeroSize([zeros(0, 3, 4, 5)], {"height": 2, "width": 3},
              lambda x: np.zeros((0, 3, 2, 3))),
     ZeroSize([zeros(1, 2, 1, 5)], {"mode": "to_even_down"}, lambda x: np.zeros((1, 2, 0, 4))))

_GR = uniform((2, 3, 7, 3), seed=19)
_add(SAMPLES, "_backward_contrib_BilinearResize2D",
     Sample([_GR], {"data_shape": (2, 3, 4, 5)}),
     Sample([_GR], {"data_shape": (2, 3, 4, 5), "align_corners": False}))
_add(FAILURES, "_backward_contrib_BilinearResize2D",
     Failure([_GR], {"data_shape": (2, 4, 4, 5)}, ValueError,
             r"^_backward_contrib_BilinearResize2D: grad must be \(N, C, OH, OW\)",
             out=((2, 4, 4, 5), np.float64)))
_add(ZERO_SIZE, "_backward_contrib_BilinearResize2D",
     ZeroSize([zeros(0, 3, 7, 3)], {"data_shape": (0, 3, 4, 5)},
              lambda g: np.zeros((0, 3, 4, 5))))

_add(SAMPLES, "_contrib_AdaptiveAvgPooling2D",
     Sample([_XR], {"output_size": (3, 2)}),
     Sample([_XR], {"output_size": 6}),
     Sample([_XR], {}),
     Sample([_XR.astype(F32)], {"output_size": (2, 2)}, grad=False))
_add(FAILURES, "_contrib_AdaptiveAvgPooling2D",
     Failure([_XR], {"output_size": (0, 2)}, ValueError,
             r"^_contrib_AdaptiveAvgPooling2D: output_size must be \(\) or 1 or 2 positive "
             r"ints \(got output_size=\(0, 2\)\)", out=False),
     Failure([_XR[0]], {}, ValueError, r"^_contrib_AdaptiveAvgPooling2D: data must be 4-D",
             out=False),
     Failure([zeros(2, 3, 0, 4)], {}, ValueError,
             r"^_contrib_AdaptiveAvgPooling2D: data must have a positive height and width",
             out=((2, 3, 1, 1), np.float64)))
_add(ZERO_SIZE, "_contrib_AdaptiveAvgPooling2D",
     ZeroSize([zeros(0, 3, 4, 5)], {"output_size": 2}, lambda x: np.zeros((0, 3, 2, 2))))

_add(SAMPLES, "_backward_contrib_AdaptiveAvgPooling2D",
     Sample([uniform((2, 3, 3, 2), seed=20)], {"data_shape": (2, 3, 4, 5)}))
_add(FAILURES, "_backward_contrib_AdaptiveAvgPooling2D",
     Failure([uniform((2, 3, 3, 2))], {"data_shape": (2, 3, 4)}, ValueError,
             r"^_backward_contrib_AdaptiveAvgPooling2D: data_shape must be 4-D",
             out=((2, 3, 4), np.float64)))
_add(ZERO_SIZE, "_backward_contrib_AdaptiveAvgPooling2D",
     ZeroSize([zeros(0, 3, 3, 2)], {"data_shape": (0, 3, 4, 5)},
              lambda g: np.zeros((0, 3, 4, 5))))

# -- box_iou, box_nms ---------------------------------------------------------------------------

_BOXES_L = np.array([[0.1, 0.1, 0.5, 0.6], [0.3, 0.2, 0.9, 0.8], [0.6, 0.6, 0.7, 0.9]])
_BOXES_R = np.array([[[0.2, 0.0, 0.6, 0.5], [0.0, 0.0, 0.05, 0.05]]])
_add(SAMPLES, "_contrib_box_iou",
     Sample([_BOXES_L, _BOXES_R], grad=False),
     Sample([_BOXES_L.astype(F32), _BOXES_L.astype(F32)], {"format": "center"}, grad=False))
_add(FAILURES, "_contrib_box_iou",
     Failure([_BOXES_L, _BOXES_L[:, :3]], {}, ValueError,
             r"^_contrib_box_iou: rhs must have 2 or more dimensions, the last of size 4 "
             r"\(got shape \(3, 3\)\)", out=((3, 3), np.float64)),
     Failure([_BOXES_L, _BOXES_L.astype(F32)], {}, TypeError,
             r"^_contrib_box_iou: inputs must have one floating dtype", out=((3, 3),
                                                                            np.float64)))
_add(ZERO_SIZE, "_contrib_box_iou",
     ZeroSize([zeros(0, 4), _BOXES_L], {}, lambda a, b: np.zeros((0, 3))))

# [id, score, x1, y1, x2, y2]: well separated scores and IoUs
_DETS = np.array([
    [[0, 0.91, 0.10, 0.10, 0.50, 0.50], [0, 0.72, 0.12, 0.11, 0.52, 0.49],
     [1, 0.64, 0.11, 0.12, 0.49, 0.51], [0, 0.35, 0.60, 0.60, 0.90, 0.95],
     [1, 0.02, 0.20, 0.20, 0.30, 0.30]],
    [[1, 0.55, 0.00, 0.00, 0.30, 0.30], [1, 0.83, 0.50, 0.50, 0.80, 0.80],
     [0, 0.47, 0.05, 0.02, 0.33, 0.31], [1, 0.66, 0.52, 0.49, 0.81, 0.79],
     [0, 0.28, 0.40, 0.10, 0.45, 0.20]]])
# class ids off integers for the gradient samples: MXNet truncates them (static_cast<int>),
# so that a central difference's step below an integer id would change the class
_DETS_G = _DETS + np.array([0.25, 0, 0, 0, 0, 0])
_NMS = {"overlap_thresh": 0.5, "valid_thresh": 0.1, "id_index": 0}
_add(SAMPLES, "_contrib_box_nms",
     Sample([_DETS_G], _NMS),
     Sample([_DETS_G], {**_NMS, "force_suppress": True, "topk": 3}),
     Sample([_DETS[0]], {"background_id": 1, "id_index": 0, "overlap_thresh": 0.3},
            grad=False),
     Sample([_DETS], {"topk": 0}),
     # MXNet's gradient copies rows without the format conversion: the documented rule
     Sample([_DETS_G], {**_NMS, "out_format": "center"},
            grad_ref=lambda ins, heads: [_nms_routing(ins[0], heads[0], {
                **_NMS, "out_format": "center"})]),
     Sample([_DETS.astype(F32)], _NMS, grad=False),
     Sample([_DETS.astype(np.float16)], _NMS, grad=False))
_add(FAILURES, "_contrib_box_nms",
     Failure([_DETS], {"coord_start": 3}, ValueError,
             r"^_contrib_box_nms: coord_start must leave 4 coordinates inside the box width "
             r"6 \(got coord_start=3\)"),
     Failure([_DETS], {"score_index": 2}, ValueError,
             r"^_contrib_box_nms: score_index must be in \[0, 6\) and outside the "
             r"coordinates \[2, 5\] \(got score_index=2\)"),
     Failure([_DETS], {"id_index": 1}, ValueError, r"^_contrib_box_nms: id_index must be -1"),
     Failure([_DETS[0, 0]], {}, ValueError,
             r"^_contrib_box_nms: data must have 2 or more dimensions", out=((6,),
                                                                            np.float64)),
     Failure([_DETS.astype(np.int32)], {}, TypeError,
             r"^_contrib_box_nms: needs float16, float32 or float64 inputs \(got int32\)",
             out=(_DETS.shape, np.int32)))
_add(ZERO_SIZE, "_contrib_box_nms",
     ZeroSize([zeros(2, 0, 6)], {}, lambda x: np.zeros((2, 0, 6))),
     ZeroSize([zeros(0, 3, 6)], {}, lambda x: np.zeros((0, 3, 6))))

_GN = uniform(_DETS.shape, seed=21)
_add(SAMPLES, "_backward_contrib_box_nms",
     Sample([_GN, _DETS_G], _NMS, wrt=[0]),
     Sample([_GN, _DETS_G], {**_NMS, "force_suppress": True, "topk": 3}, wrt=[0]),
     Sample([_GN, _DETS_G], {"topk": 0}, wrt=[0]))
_add(FAILURES, "_backward_contrib_box_nms",
     Failure([_GN[0], _DETS], _NMS, ValueError,
             r"^_backward_contrib_box_nms: grad must have data's shape"))
_add(ZERO_SIZE, "_backward_contrib_box_nms",
     ZeroSize([zeros(2, 0, 6), zeros(2, 0, 6)], {}, lambda g, x: np.zeros((2, 0, 6))))

_add(SAMPLES, "_box_nms_pick",
     Sample([_DETS_G, _GN], _NMS, wrt=[1]),
     Sample([_DETS_G, _GN], {**_NMS, "force_suppress": True}, wrt=[1]),
     Sample([_DETS_G, _GN], {"topk": 0}, wrt=[1]))
_add(FAILURES, "_box_nms_pick",
     Failure([_DETS, _GN[0]], _NMS, ValueError,
             r"^_box_nms_pick: values must have data's shape"))
_add(ZERO_SIZE, "_box_nms_pick",
     ZeroSize([zeros(2, 0, 6), zeros(2, 0, 6)], {}, lambda x, v: np.zeros((2, 0, 6))))


def _iou_reference(a, b, fmt):
    """IoU of two boxes by MXNet's BoxArea and Intersect, written out."""
    def sides(x):
        if fmt == "corner":
            return x[0], x[1], x[2], x[3]
        return x[0] - x[2] / 2, x[1] - x[3] / 2, x[0] + x[2] / 2, x[1] + x[3] / 2

    def area(x):
        w, h = (x[2] - x[0], x[3] - x[1]) if fmt == "corner" else (x[2], x[3])
        return 0.0 if w < 0 or h < 0 else w * h
    al, at, ar, ab = sides(a)
    bl, bt, br, bb = sides(b)
    inter = max(min(ar, br) - max(al, bl), 0) * max(min(ab, bb) - max(at, bt), 0)
    if inter <= 0:
        return 0.0
    return inter / (area(a) + area(b) - inter)


def nms_reference(data, overlap_thresh=0.5, valid_thresh=0.0, topk=-1, coord_start=2,
                  score_index=1, id_index=-1, background_id=-1, force_suppress=False,
                  in_format="corner", out_format="corner"):
    """MXNet's box_nms as nested loops over one batch (n, k) at a time: (output, record
    of the input row behind each output row, -1 for the rows of -1)."""
    data = np.asarray(data, np.float64)
    shape = data.shape
    data = data.reshape((-1,) + shape[-2:])
    out = np.full(data.shape, -1.0)
    record = np.full(data.shape[:2], -1)
    n = shape[-2]
    for b, boxes in enumerate(data):
        if topk == 0:
            out[b], record[b] = boxes, np.arange(n)
            continue
        cand = [i for i in range(n) if boxes[i, score_index] > valid_thresh and not (
            id_index >= 0 and background_id >= 0 and boxes[i, id_index] == background_id)]
        cand.sort(key=lambda i: -boxes[i, score_index])       # stable: ties keep order
        if topk > 0:
            cand = cand[:topk]
        alive = [True] * len(cand)
        for r in range(len(cand)):
            if not alive[r]:
                continue
            for p in range(r + 1, len(cand)):
                if not alive[p]:
                    continue
                if (id_index >= 0 and not force_suppress
                        and int(boxes[cand[r], id_index]) != int(boxes[cand[p], id_index])):
                    continue
                cs = slice(coord_start, coord_start + 4)
                if _iou_reference(boxes[cand[r], cs], boxes[cand[p], cs],
                                  in_format) > overlap_thresh:
                    alive[p] = False
        kept = [i for i, a in zip(cand, alive) if a]
        for rank, i in enumerate(kept):
            row = boxes[i].copy()
            c = row[coord_start:coord_start + 4].copy()
            if in_format != out_format and out_format == "center":
                row[coord_start:coord_start + 4] = [(c[0] + c[2]) / 2, (c[1] + c[3]) / 2,
                                                    c[2] - c[0], c[3] - c[1]]
            elif in_format != out_format:
                row[coord_start:coord_start + 4] = [c[0] - c[2] / 2, c[1] - c[3] / 2,
                                                    c[0] + c[2] / 2, c[1] + c[3] / 2]
            out[b, rank], record[b, rank] = row, i
    return out.reshape(shape), record


def _nms_routing(data, head, attrs):
    """MXNet's box_nms backward (nms_backward): output row i's head gradient goes to
    input row record[i], unchanged; the other input rows get 0."""
    _, record = nms_reference(data, **attrs)
    h = head.reshape(record.shape + (-1,))
    grad = np.zeros(h.shape)
    for b in range(record.shape[0]):
        for i in range(record.shape[1]):
            if record[b, i] >= 0:
                grad[b, record[b, i]] = h[b, i]
    return grad.reshape(data.shape)


# -- MultiBoxPrior, bipartite_matching, box_encode, box_decode (runtime/ops/bounding_box.py) --
# values against MXNet 1.9.1 in tests/runtime/test_bounding_box.py

_add(SAMPLES, "_contrib_MultiBoxPrior",
     Sample([zeros(1, 2, 3, 4)], {"sizes": (0.5, 0.2), "ratios": (1, 2)}, grad=False),
     Sample([zeros(2, 1, 2, 2).astype(F32)], {"clip": True, "steps": (0.4, 0.3)},
            grad=False))
_add(FAILURES, "_contrib_MultiBoxPrior",
     Failure([zeros(2, 3, 4)], {}, ValueError, r"^_contrib_MultiBoxPrior: data must be 4-D",
             out=False),
     Failure([zeros(1, 1, 2, 2)], {"sizes": (0.5, -1)}, ValueError,
             r"^_contrib_MultiBoxPrior: sizes must be a non-empty tuple of finite numbers > 0",
             out=False),
     Failure([zeros(1, 1, 2, 2)], {"steps": (0.5,)}, ValueError,
             r"^_contrib_MultiBoxPrior: steps must have 2 values", out=False))
_add(ZERO_SIZE, "_contrib_MultiBoxPrior",
     ZeroSize([zeros(1, 2, 0, 3)], {}, lambda x: np.zeros((1, 0, 4))))

_SCORES = uniform((2, 4, 3), 0.0, 1.0, seed=31)
_add(SAMPLES, "_contrib_bipartite_matching",
     Sample([_SCORES], {"threshold": 0.2}, grad=False),
     Sample([_SCORES[0]], {"threshold": 0.9, "is_ascend": True, "topk": 1}, grad=False))
_add(FAILURES, "_contrib_bipartite_matching",
     Failure([_SCORES[0, 0]], {"threshold": 0.1}, ValueError,
             r"^_contrib_bipartite_matching: data must have 2 or more dimensions",
             out=False),
     Failure([_SCORES], {"threshold": 0.1, "topk": -2}, ValueError,
             r"^_contrib_bipartite_matching: topk must be -1", out=False))
_add(ZERO_SIZE, "_contrib_bipartite_matching",
     ZeroSize([zeros(2, 0, 3)], {"threshold": 0.1},
              lambda x: [np.zeros((2, 0)), np.full((2, 3), -1.0)]))

_ANCH = np.concatenate([uniform((2, 3, 2), 0, 4, seed=32),
                        uniform((2, 3, 2), 0, 4, seed=32) + positive((2, 3, 2), seed=33)], -1)
_REFS = np.concatenate([uniform((2, 2, 2), 0, 4, seed=34),
                        uniform((2, 2, 2), 0, 4, seed=34) + positive((2, 2, 2), seed=35)], -1)
_ENC = [np.array([[1.0, -1.0, 1.0], [0.0, 1.0, 1.0]]), np.array([[0.0, 1.0, 1.0],
                                                                  [1.0, 0.0, 1.0]]),
        _ANCH, _REFS, np.zeros(4), np.ones(4)]
_add(SAMPLES, "_contrib_box_encode", Sample(_ENC, grad=False))
_add(FAILURES, "_contrib_box_encode",
     Failure([_ENC[0][:, :2]] + _ENC[1:], {}, ValueError,
             r"^_contrib_box_encode: samples must have shape \(2, 3\)", out=False),
     Failure(_ENC[:1] + [np.array([[0.0, 1.0, 5.0], [1.0, 0.0, 1.0]])] + _ENC[2:], {},
             ValueError, r"^_contrib_box_encode: matches must index refs' 2 boxes",
             out=False))

_add(SAMPLES, "_contrib_box_decode",
     Sample([uniform((2, 3, 4), seed=36), _ANCH[:1]], {"std2": 0.5}, grad=False),
     Sample([uniform((2, 3, 4), seed=37), _ANCH[:1]], {"format": "corner", "clip": 0.3},
            grad=False))
_add(FAILURES, "_contrib_box_decode",
     Failure([uniform((2, 3, 4), seed=36), _ANCH[:1, :2]], {}, ValueError,
             r"^_contrib_box_decode: anchors must have shape \(1, 3, 4\)"))
_add(ZERO_SIZE, "_contrib_box_decode",
     ZeroSize([zeros(2, 0, 4), zeros(1, 0, 4)], {}, lambda d, a: np.zeros((2, 0, 4))))

_CLS = positive((2, 3, 4), seed=38)
_CLS = _CLS / _CLS.sum(axis=1, keepdims=True)
_add(SAMPLES, "_contrib_MultiBoxDetection",
     Sample([_CLS, uniform((2, 16), seed=39), _ANCH[:1, :2].repeat(2, axis=1) / 8],
            {"threshold": 0.2}, grad=False),
     Sample([_CLS, uniform((2, 16), seed=40), _ANCH[:1, :2].repeat(2, axis=1) / 8],
            {"force_suppress": True, "nms_topk": 2, "clip": False}, grad=False))
_add(FAILURES, "_contrib_MultiBoxDetection",
     Failure([_CLS, uniform((2, 12), seed=39), _ANCH[:1, :2].repeat(2, axis=1)], {},
             ValueError, r"^_contrib_MultiBoxDetection: loc_pred must have shape \(2, 16\)",
             out=False),
     Failure([_CLS, uniform((2, 16), seed=39), _ANCH[:1, :2].repeat(2, axis=1)],
             {"variances": (0.1, 0.2)}, ValueError,
             r"^_contrib_MultiBoxDetection: variances must have 4 values", out=False))
_add(ZERO_SIZE, "_contrib_MultiBoxDetection",
     ZeroSize([zeros(2, 3, 0), zeros(2, 0), zeros(1, 0, 4)], {},
              lambda c, l, a: np.zeros((2, 0, 6))))

_TANCH = np.array([[[0.1, 0.1, 0.4, 0.4], [0.5, 0.5, 0.9, 0.9], [0.12, 0.1, 0.42, 0.38],
                    [0.6, 0.1, 0.9, 0.3]]])
_TLAB = np.array([[[0.0, 0.1, 0.1, 0.41, 0.4], [1.0, 0.5, 0.52, 0.88, 0.9],
                   [-1.0, -1.0, -1.0, -1.0, -1.0]],
                  [[1.0, 0.6, 0.12, 0.88, 0.3], [-1.0, -1.0, -1.0, -1.0, -1.0],
                   [-1.0, -1.0, -1.0, -1.0, -1.0]]])
_TCLS = uniform((2, 3, 4), seed=41)
_add(SAMPLES, "_contrib_MultiBoxTarget",
     Sample([_TANCH, _TLAB, _TCLS], grad=False),
     Sample([_TANCH, _TLAB, _TCLS], {"negative_mining_ratio": 1.0,
                                     "overlap_threshold": 0.3}, grad=False))
_add(FAILURES, "_contrib_MultiBoxTarget",
     Failure([_TANCH, _TLAB, _TCLS[:, :, :3]], {}, ValueError,
             r"^_contrib_MultiBoxTarget: cls_pred must have shape \(2, classes, 4\)",
             out=False),
     Failure([_TANCH, _TLAB[..., :4], _TCLS], {}, ValueError,
             r"^_contrib_MultiBoxTarget: label must have shape", out=False),
     Failure([_TANCH, _TLAB, _TCLS], {"negative_mining_ratio": 1.0,
                                      "negative_mining_thresh": 0.0}, ValueError,
             r"^_contrib_MultiBoxTarget: negative_mining_thresh must be > 0", out=False))


_add(SAMPLES, "GridGenerator",
     Sample([uniform((2, 6), seed=930)], {"transform_type": "affine", "target_shape": (3, 4)}),
     Sample([uniform((1, 2, 3, 4), seed=931)], {"transform_type": "warp"}),
     Sample([uniform((1, 6), seed=932, dtype=np.float32)],
            {"transform_type": "affine", "target_shape": (2, 2)}, grad=False))
_add(FAILURES, "GridGenerator",
     Failure([uniform((2, 5))], {"transform_type": "affine", "target_shape": (3, 3)},
             ValueError, r"^GridGenerator: affine data must be \(N, 6\)", out=False),
     Failure([uniform((1, 6))], {"transform_type": "affine", "target_shape": (1, 3)},
             ValueError, r"^GridGenerator: target_shape must have a height and width of at "
             r"least 2", out=False))


_GRID = uniform((2, 2, 3, 4), lo=-1.2, hi=1.2, seed=940)
_add(SAMPLES, "BilinearSampler",
     Sample([_X, _GRID]),
     Sample([uniform((1, 2, 4, 4), seed=941, dtype=F32),
             uniform((1, 2, 2, 2), lo=-0.9, hi=0.9, seed=942, dtype=F32)], grad=False))
_add(FAILURES, "BilinearSampler",
     Failure([_X, uniform((2, 3, 3, 4))], {}, ValueError,
             r"^BilinearSampler: grid must have shape \(N, 2, H, W\) with data's N=2 \(got "
             r"\(2, 3, 3, 4\)\)", out=False),
     Failure([uniform((3, 4)), _GRID], {}, ValueError,
             r"^BilinearSampler: data must be 4-D", out=False))
_add(ZERO_SIZE, "BilinearSampler",
     ZeroSize([zeros(2, 0, 4, 4), _GRID], {}, lambda d, g: np.zeros((2, 0, 3, 4))))

_add(SAMPLES, "_backward_BilinearSampler",
     Sample([uniform((2, 3, 3, 4), seed=943), _X, _GRID], grad=False))
_add(FAILURES, "_backward_BilinearSampler",
     Failure([uniform((2, 3, 3, 3)), _X, _GRID], {}, ValueError,
             r"^_backward_BilinearSampler: grad must have shape \(2, 3, 3, 4\)", out=False))

_LOC = uniform((2, 6), lo=-0.4, hi=0.4, seed=944) + np.array([1, 0, 0, 0, 1, 0])
_add(SAMPLES, "SpatialTransformer",
     Sample([_X, _LOC], {"target_shape": (3, 4), "transform_type": "affine",
                         "sampler_type": "bilinear"}))
_add(FAILURES, "SpatialTransformer",
     Failure([_X, uniform((2, 5))], {"target_shape": (3, 4)}, ValueError,
             r"^SpatialTransformer: loc must have shape \(N, 6\) with data's N=2", out=False),
     Failure([_X, _LOC], {"target_shape": (1, 4)}, ValueError,
             r"^SpatialTransformer: target_shape must have a height and width of at least 2",
             out=False))
