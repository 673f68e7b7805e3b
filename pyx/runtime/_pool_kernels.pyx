"""Max pooling's routing kernel: each window's first maximum found in one pass over the
data, and the head gradient sent there (the data gradient) or the values read there
(its adjoint), without NumPy's per-offset passes, argmax array and scatter.

Arrays are C-contiguous (planes, D, H, W): the batch and channel axes flattened to planes,
1-D and 2-D pooling seen as 3-D with unit leading axes.  A window position outside the
data (padding, or past it with pooling_convention='full') holds the dtype's lowest finite
value, as the NumPy path pads; a window holding a NaN routes to its first position (NumPy's
maximum propagates the NaN, which then equals no position).  The planes are shared among
the threads of ``arith_threads`` (each thread writes only its own planes).
"""

from cython.parallel cimport prange

from openmp cimport omp_get_wtime

from runtime._sparse_common cimport (TRACKED_THREADS, arith_threads, back_off, clear_starts,
                                     mark_start, started_late)
from runtime._types cimport floating


cdef inline void _route_plane(const floating* x, const floating* src, floating* dst,
                              Py_ssize_t[3] size, Py_ssize_t[3] osize, Py_ssize_t[3] k,
                              Py_ssize_t[3] t, Py_ssize_t[3] p, floating lowest,
                              bint scatter) noexcept nogil:
    cdef Py_ssize_t od, oh, ow, a, b, c, i, j, l, pos, best_pos, o = 0
    cdef Py_ssize_t plane = size[0] * size[1] * size[2]
    cdef floating v, best
    cdef bint nan, first
    if scatter:
        for pos in range(plane):
            dst[pos] = 0
    for od in range(osize[0]):
        for oh in range(osize[1]):
            for ow in range(osize[2]):
                first = True
                nan = False
                best = lowest
                best_pos = -1
                for a in range(k[0]):
                    i = od * t[0] - p[0] + a
                    for b in range(k[1]):
                        j = oh * t[1] - p[1] + b
                        for c in range(k[2]):
                            l = ow * t[2] - p[2] + c
                            if 0 <= i < size[0] and 0 <= j < size[1] and 0 <= l < size[2]:
                                pos = (i * size[1] + j) * size[2] + l
                                v = x[pos]
                                if v != v:
                                    nan = True
                            else:
                                pos = -1
                                v = lowest
                            if first:
                                best, best_pos, first = v, pos, False
                                if nan:
                                    break
                            elif v > best:
                                best, best_pos = v, pos
                        if nan:
                            break
                    if nan:
                        break
                if nan:   # the window's first position
                    i, j, l = od * t[0] - p[0], oh * t[1] - p[1], ow * t[2] - p[2]
                    if 0 <= i < size[0] and 0 <= j < size[1] and 0 <= l < size[2]:
                        best_pos = (i * size[1] + j) * size[2] + l
                    else:
                        best_pos = -1
                if scatter:
                    if best_pos >= 0:
                        dst[best_pos] += src[o]
                else:
                    dst[o] = src[best_pos] if best_pos >= 0 else 0
                o += 1


def max_pool_route(floating[:, :, :, ::1] x, floating[:, :, :, ::1] src,
                   floating[:, :, :, ::1] dst, kernel, stride, pad, floating lowest,
                   bint scatter):
    """Per window of x (planes, D, H, W) (``kernel``, ``stride``, ``pad``: 3 entries
    each), its first maximum (padding holds ``lowest``).  ``scatter``: dst (x's shape) =
    the head gradient src (planes, *O) added at each window's maximum (padding drops it).
    Otherwise dst (planes, *O) = src (x's shape) read at each maximum (0 at padding)."""
    cdef Py_ssize_t n = x.shape[0], pl
    cdef Py_ssize_t size[3]
    cdef Py_ssize_t osize[3]
    cdef Py_ssize_t k[3]
    cdef Py_ssize_t t[3]
    cdef Py_ssize_t p[3]
    cdef Py_ssize_t i, in_plane, out_plane
    cdef int nt
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late
    cdef floating[:, :, :, ::1] full = src if scatter else dst    # the pooled array
    cdef floating[:, :, :, ::1] same = dst if scatter else src    # x's shape
    for i in range(3):
        size[i] = x.shape[1 + i]
        osize[i] = full.shape[1 + i]
        k[i], t[i], p[i] = kernel[i], stride[i], pad[i]
        if k[i] < 1 or t[i] < 1 or p[i] < 0:
            raise ValueError(f"kernel and stride must be positive, pad non-negative (got "
                             f"kernel={kernel!r}, stride={stride!r}, pad={pad!r})")
        if same.shape[1 + i] != size[i]:
            raise ValueError(f"the data-shaped array must have x's shape (axis {1 + i}: "
                             f"{same.shape[1 + i]} != {size[i]})")
    if same.shape[0] != n or full.shape[0] != n:
        raise ValueError(f"every array must have x's {n} planes")
    in_plane = size[0] * size[1] * size[2]
    out_plane = osize[0] * osize[1] * osize[2]
    if n == 0 or in_plane == 0:
        return
    nt = arith_threads(n, n * (in_plane + out_plane * k[0] * k[1] * k[2]))
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for pl in prange(n, num_threads=nt, schedule="static"):
            mark_start(starts)
            if scatter:
                _route_plane(&x[pl, 0, 0, 0], &src[pl, 0, 0, 0], &dst[pl, 0, 0, 0], size,
                             osize, k, t, p, lowest, True)
            else:
                _route_plane(&x[pl, 0, 0, 0], &src[pl, 0, 0, 0], &dst[pl, 0, 0, 0], size,
                             osize, k, t, p, lowest, False)
        late = nt > 1 and started_late(t0, starts, nt)
    if late:
        back_off()
