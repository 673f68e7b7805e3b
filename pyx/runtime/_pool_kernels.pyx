"""Max pooling's kernel: each window's first maximum found in one pass over the data, and
its value written (the forward), the head gradient sent there (the data gradient) or the
values read there (its adjoint), without NumPy's per-offset passes, argmax array and
scatter.

Arrays are C-contiguous (planes, D, H, W): the batch and channel axes flattened to planes,
1-D and 2-D pooling seen as 3-D with unit leading axes.  A window position outside the
data (padding, or past it with pooling_convention='full') holds the dtype's lowest finite
value, as the NumPy path pads; a window holding a NaN routes to its first position (NumPy's
maximum propagates the NaN, which then equals no position).  The planes are shared among
the threads of ``arith_threads`` (each thread writes only its own planes).
"""

from cython.parallel cimport prange

from libc.math cimport NAN
from openmp cimport omp_get_wtime

from runtime._sparse_common cimport (TRACKED_THREADS, arith_threads, back_off, clear_starts,
                                     mark_start, started_late)
from runtime._types cimport floating


# What _route_plane writes per window: its maximum (the forward), the head gradient added
# at the maximum's position (the data gradient), or the value read there (its adjoint).
cdef enum:
    MAX_VALUE = 0
    SCATTER = 1
    PICK = 2


cdef inline void _route_plane(const floating* x, const floating* src, floating* dst,
                              Py_ssize_t[3] size, Py_ssize_t[3] osize, Py_ssize_t[3] k,
                              Py_ssize_t[3] t, Py_ssize_t[3] p, floating lowest,
                              int mode) noexcept nogil:
    cdef Py_ssize_t od, oh, ow, a, b, c, i, j, l, i0, j0, l0, pos, row, best_pos, o = 0
    cdef Py_ssize_t plane = size[0] * size[1] * size[2]
    cdef floating v, best
    cdef bint nan, first, gt
    if mode == SCATTER:
        for pos in range(plane):
            dst[pos] = 0
    for od in range(osize[0]):
        i0 = od * t[0] - p[0]
        for oh in range(osize[1]):
            j0 = oh * t[1] - p[1]
            for ow in range(osize[2]):
                l0 = ow * t[2] - p[2]
                nan = False
                if (i0 >= 0 and j0 >= 0 and l0 >= 0 and i0 + k[0] <= size[0]
                        and j0 + k[1] <= size[1] and l0 + k[2] <= size[2]):
                    # the window inside the data: no bounds to check
                    # (selects rather than branches: which offset holds the maximum is
                    # data, and mispredicted branches cost more than the compares)
                    best_pos = (i0 * size[1] + j0) * size[2] + l0
                    best = x[best_pos]
                    for a in range(k[0]):
                        for b in range(k[1]):
                            row = ((i0 + a) * size[1] + j0 + b) * size[2] + l0
                            for c in range(k[2]):
                                v = x[row + c]
                                nan = nan | (v != v)
                                gt = v > best
                                best_pos = row + c if gt else best_pos
                                best = v if gt else best
                    if nan:   # the window's first position
                        best_pos = (i0 * size[1] + j0) * size[2] + l0
                else:
                    first = True
                    best = lowest
                    best_pos = -1
                    for a in range(k[0]):
                        i = i0 + a
                        for b in range(k[1]):
                            j = j0 + b
                            for c in range(k[2]):
                                l = l0 + c
                                if 0 <= i < size[0] and 0 <= j < size[1] and 0 <= l < size[2]:
                                    pos = (i * size[1] + j) * size[2] + l
                                    v = x[pos]
                                    nan = nan | (v != v)
                                else:
                                    pos = -1
                                    v = lowest
                                if first:
                                    best, best_pos, first = v, pos, False
                                elif v > best:
                                    best, best_pos = v, pos
                    if nan:
                        if 0 <= i0 < size[0] and 0 <= j0 < size[1] and 0 <= l0 < size[2]:
                            best_pos = (i0 * size[1] + j0) * size[2] + l0
                        else:
                            best_pos = -1
                if mode == MAX_VALUE:
                    dst[o] = <floating>NAN if nan else best
                elif mode == SCATTER:
                    if best_pos >= 0:
                        dst[best_pos] += src[o]
                else:
                    dst[o] = src[best_pos] if best_pos >= 0 else 0
                o += 1


cdef void _route(floating[:, :, :, ::1] x, floating[:, :, :, ::1] src,
                 floating[:, :, :, ::1] dst, floating[:, :, :, ::1] full, kernel, stride, pad,
                 floating lowest, int mode) except *:
    """_route_plane over every plane of x (planes, D, H, W); ``full`` is the pooled
    array among src and dst (its shape gives the windows), the other one has x's shape
    (src is x itself for MAX_VALUE)."""
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
    cdef floating[:, :, :, ::1] same = dst if mode == SCATTER else src    # x's shape
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
    if n == 0 or in_plane == 0 or out_plane == 0:
        if mode == SCATTER:
            for pl in range(n):
                for i in range(in_plane):
                    dst[pl, 0, 0, i] = 0
        return
    nt = arith_threads(n, n * (in_plane + out_plane * k[0] * k[1] * k[2]))
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for pl in prange(n, num_threads=nt, schedule="static"):
            mark_start(starts)
            _route_plane(&x[pl, 0, 0, 0], &src[pl, 0, 0, 0], &dst[pl, 0, 0, 0], size,
                         osize, k, t, p, lowest, mode)
        late = nt > 1 and started_late(t0, starts, nt)
    if late:
        back_off()


def max_pool(floating[:, :, :, ::1] x, floating[:, :, :, ::1] out, kernel, stride, pad,
             floating lowest):
    """out (planes, *O) = the maximum of each window of x (planes, D, H, W) (``kernel``,
    ``stride``, ``pad``: 3 entries each; padding holds ``lowest``; a NaN in a window
    makes its maximum NaN, as NumPy's maximum)."""
    _route(x, x, out, out, kernel, stride, pad, lowest, MAX_VALUE)


def max_pool_route(floating[:, :, :, ::1] x, floating[:, :, :, ::1] src,
                   floating[:, :, :, ::1] dst, kernel, stride, pad, floating lowest,
                   bint scatter):
    """Per window of x (planes, D, H, W) (``kernel``, ``stride``, ``pad``: 3 entries
    each), its first maximum (padding holds ``lowest``).  ``scatter``: dst (x's shape) =
    the head gradient src (planes, *O) added at each window's maximum (padding drops it).
    Otherwise dst (planes, *O) = src (x's shape) read at each maximum (0 at padding)."""
    _route(x, src, dst, src if scatter else dst, kernel, stride, pad, lowest,
           SCATTER if scatter else PICK)
