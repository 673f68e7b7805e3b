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
from runtime._types cimport floating, int64_t


# What _route_plane writes per window: its maximum (the forward), the head gradient added
# at the maximum's position (the data gradient), or the value read there (its adjoint).
cdef enum:
    MAX_VALUE = 0
    SCATTER = 1
    PICK = 2


cdef inline void _route_plane(const floating* x, const floating* src, floating* dst,
                              int64_t* route, Py_ssize_t[3] size, Py_ssize_t[3] osize,
                              Py_ssize_t[3] k, Py_ssize_t[3] t, Py_ssize_t[3] p,
                              floating lowest, int mode) noexcept nogil:
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
                    if route != NULL:
                        route[o] = best_pos
                elif mode == SCATTER:
                    if best_pos >= 0:
                        dst[best_pos] += src[o]
                else:
                    dst[o] = src[best_pos] if best_pos >= 0 else 0
                o += 1


cdef void _route(floating[:, :, :, ::1] x, floating[:, :, :, ::1] src,
                 floating[:, :, :, ::1] dst, floating[:, :, :, ::1] full, kernel, stride, pad,
                 floating lowest, int mode, int64_t[:, :, :, ::1] route=None) except *:
    """_route_plane over every plane of x (planes, D, H, W); ``full`` is the pooled
    array among src and dst (its shape gives the windows), the other one has x's shape
    (src is x itself for MAX_VALUE); ``route`` (MAX_VALUE, optional) has the pooled
    shape."""
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
    cdef bint has_route = route is not None
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
    if has_route:
        for i in range(4):
            if route.shape[i] != full.shape[i]:
                raise ValueError(f"route must have the pooled array's shape (axis {i}: "
                                 f"{route.shape[i]} != {full.shape[i]})")
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
            _route_plane(&x[pl, 0, 0, 0], &src[pl, 0, 0, 0], &dst[pl, 0, 0, 0],
                         &route[pl, 0, 0, 0] if has_route else <int64_t*>NULL, size, osize,
                         k, t, p, lowest, mode)
        late = nt > 1 and started_late(t0, starts, nt)
    if late:
        back_off()


def max_pool(floating[:, :, :, ::1] x, floating[:, :, :, ::1] out, kernel, stride, pad,
             floating lowest, int64_t[:, :, :, ::1] route=None):
    """out (planes, *O) = the maximum of each window of x (planes, D, H, W) (``kernel``,
    ``stride``, ``pad``: 3 entries each; padding holds ``lowest``; a NaN in a window
    makes its maximum NaN, as NumPy's maximum).  ``route`` (int64, out's shape), when
    given: the position in its plane of x of each window's first maximum (the first
    position for a window holding a NaN, -1 for a window of padding only), which
    :func:`route_scatter` and :func:`route_gather` take."""
    _route(x, x, out, out, kernel, stride, pad, lowest, MAX_VALUE, route)


def max_pool_route(floating[:, :, :, ::1] x, floating[:, :, :, ::1] src,
                   floating[:, :, :, ::1] dst, kernel, stride, pad, floating lowest,
                   bint scatter):
    """Per window of x (planes, D, H, W) (``kernel``, ``stride``, ``pad``: 3 entries
    each), its first maximum (padding holds ``lowest``).  ``scatter``: dst (x's shape) =
    the head gradient src (planes, *O) added at each window's maximum (padding drops it).
    Otherwise dst (planes, *O) = src (x's shape) read at each maximum (0 at padding)."""
    _route(x, src, dst, src if scatter else dst, kernel, stride, pad, lowest,
           SCATTER if scatter else PICK)


cdef int _check_route(const int64_t[:, ::1] route, Py_ssize_t size) except -1:
    """Every position of ``route`` in [-1, size): checked before anything is written."""
    cdef Py_ssize_t pl, o, bad = -1
    cdef int64_t r
    with nogil:
        for pl in range(route.shape[0]):
            for o in range(route.shape[1]):
                r = route[pl, o]
                if r < -1 or r >= size:
                    bad = pl * route.shape[1] + o
                    break
            if bad >= 0:
                break
    if bad >= 0:
        raise ValueError(f"route must hold positions in [-1, {size}) (got "
                         f"{route[bad // route.shape[1], bad % route.shape[1]]} at flat index "
                         f"{bad})")
    return 0


def route_scatter(const floating[:, ::1] src, const int64_t[:, ::1] route,
                  floating[:, ::1] dst):
    """dst (planes, S) = 0, then each src[pl, o] added at dst[pl, route[pl, o]] (src and
    route (planes, O); a route of -1 drops its value): max pooling's data gradient from
    the route its forward kept."""
    cdef Py_ssize_t n = dst.shape[0], size = dst.shape[1], out = src.shape[1], pl, o, i
    cdef int64_t r
    if src.shape[0] != n or route.shape[0] != n or route.shape[1] != out:
        raise ValueError(f"src and route must have one shape with dst's {n} planes (got "
                         f"{(src.shape[0], src.shape[1])!r}, "
                         f"{(route.shape[0], route.shape[1])!r})")
    _check_route(route, size)
    with nogil:
        for pl in range(n):
            for i in range(size):
                dst[pl, i] = 0
            for o in range(out):
                r = route[pl, o]
                if r >= 0:
                    dst[pl, r] += src[pl, o]


def route_gather(const floating[:, ::1] src, const int64_t[:, ::1] route,
                 floating[:, ::1] dst):
    """dst[pl, o] = src[pl, route[pl, o]] (0 where the route is -1): the adjoint of
    :func:`route_scatter` (src (planes, S), route and dst (planes, O))."""
    cdef Py_ssize_t n = dst.shape[0], out = dst.shape[1], pl, o
    cdef int64_t r
    if src.shape[0] != n or route.shape[0] != n or route.shape[1] != out:
        raise ValueError(f"src and route must have dst's shape {(n, out)!r} (src's "
                         f"planes) (got {(src.shape[0], src.shape[1])!r}, "
                         f"{(route.shape[0], route.shape[1])!r})")
    _check_route(route, src.shape[1])
    with nogil:
        for pl in range(n):
            for o in range(out):
                r = route[pl, o]
                dst[pl, o] = src[pl, r] if r >= 0 else 0
