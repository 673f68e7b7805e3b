"""ROIPooling's kernel: each bin's first maximum (MXNet's row-major scan with a strict
``>``, starting from ``lowest``) and its flat position in the image plane, one pass over
each bin's window, without NumPy's per-offset passes over every roi, channel and bin.

The windows come computed (MXNet's rounding and clipping, in runtime/ops/vision.py); the
kernel only scans them.  Serial: a detection head's rois are few and their windows small.
"""

from runtime._types cimport floating, int32_t, int64_t


def roi_pool_max(const floating[:, :, :, ::1] x, const int64_t[::1] batch,
                 const int64_t[:, ::1] hs, const int64_t[:, ::1] he,
                 const int64_t[:, ::1] ws, const int64_t[:, ::1] we,
                 floating[:, :, :, ::1] out, int32_t[:, :, :, ::1] arg, floating lowest):
    """out (R, C, PH, PW) = the maximum of x[batch[r], c] over rows [hs[r, i], he[r, i])
    and columns [ws[r, j], we[r, j]) (0 for an empty window, ``lowest`` when no value
    beats it); arg = its position h * W + w (-1 for none).  Windows must lie in x."""
    cdef Py_ssize_t nr = out.shape[0], nc = out.shape[1], ph = out.shape[2]
    cdef Py_ssize_t pw = out.shape[3], width = x.shape[3]
    cdef Py_ssize_t r, c, i, j, h, w, b, best_pos
    cdef floating v, best
    if (hs.shape[0] != nr or he.shape[0] != nr or ws.shape[0] != nr or we.shape[0] != nr
            or batch.shape[0] != nr or hs.shape[1] != ph or he.shape[1] != ph
            or ws.shape[1] != pw or we.shape[1] != pw or x.shape[1] != nc
            or arg.shape[0] != nr or arg.shape[1] != nc or arg.shape[2] != ph
            or arg.shape[3] != pw):
        raise ValueError("roi_pool_max: the windows, out and arg must fit the rois and bins")
    for r in range(nr):
        b = batch[r]
        if not 0 <= b < x.shape[0]:
            raise ValueError(f"roi_pool_max: batch index {b} out of range")
        for i in range(ph):
            if not (0 <= hs[r, i] and he[r, i] <= x.shape[2]):
                raise ValueError("roi_pool_max: a row window leaves the data")
        for j in range(pw):
            if not (0 <= ws[r, j] and we[r, j] <= width):
                raise ValueError("roi_pool_max: a column window leaves the data")
    with nogil:
        for r in range(nr):
            b = batch[r]
            for c in range(nc):
                for i in range(ph):
                    for j in range(pw):
                        if he[r, i] <= hs[r, i] or we[r, j] <= ws[r, j]:
                            out[r, c, i, j] = 0
                            arg[r, c, i, j] = -1
                            continue
                        best = lowest
                        best_pos = -1
                        for h in range(hs[r, i], he[r, i]):
                            for w in range(ws[r, j], we[r, j]):
                                v = x[b, c, h, w]
                                if v > best:
                                    best = v
                                    best_pos = h * width + w
                        out[r, c, i, j] = best
                        arg[r, c, i, j] = <int32_t>best_pos
