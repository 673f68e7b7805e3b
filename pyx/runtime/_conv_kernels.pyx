"""Convolution's copy kernels around the GEMM of the channel-last forward: the columns
gathered straight from channel-first data (padding as zeros), and the GEMM's
channel-last result written back channel-first.  NumPy needs a transposed, padded copy
of the data, a strided copy of the columns and a transposed copy of the result for the
same work.

Data is C-contiguous (N, C, D, H, W): 1-D and 2-D convolutions are seen as 3-D with unit
leading axes.  The rows of the outputs are shared among the threads of ``arith_threads``
(each thread writes only its own rows).
"""

from cython.parallel cimport prange

from openmp cimport omp_get_wtime

from runtime._sparse_common cimport (TRACKED_THREADS, arith_threads, back_off, clear_starts,
                                     mark_start, started_late)
from runtime._types cimport floating


cdef inline void _column_row(const floating* x, floating* row, Py_ssize_t[3] size,
                             Py_ssize_t plane, Py_ssize_t cg, Py_ssize_t[3] o,
                             Py_ssize_t[3] k, Py_ssize_t[3] t, Py_ssize_t[3] d,
                             Py_ssize_t[3] p) noexcept nogil:
    """One output position's columns (*K, cg): x read at each kernel offset, channel by
    channel (``plane`` apart), zeros outside."""
    cdef Py_ssize_t a, b, c, i, j, l, ch, q = 0
    cdef const floating* src
    for a in range(k[0]):
        i = o[0] * t[0] - p[0] + a * d[0]
        for b in range(k[1]):
            j = o[1] * t[1] - p[1] + b * d[1]
            for c in range(k[2]):
                l = o[2] * t[2] - p[2] + c * d[2]
                if 0 <= i < size[0] and 0 <= j < size[1] and 0 <= l < size[2]:
                    src = x + (i * size[1] + j) * size[2] + l
                    for ch in range(cg):
                        row[q + ch] = src[ch * plane]
                else:
                    for ch in range(cg):
                        row[q + ch] = 0
                q += cg


def channel_last_columns(floating[:, :, :, :, ::1] x, floating[:, ::1] col, Py_ssize_t n0,
                         Py_ssize_t c0, Py_ssize_t cg, osize, kernel, stride, dilate, pad):
    """col (m * OD * OH * OW, KD * KH * KW * cg) = the columns of samples n0:n0 + m and
    channels c0:c0 + cg of x (N, C, D, H, W): row (sample, output position), column
    (kernel offset, channel); ``osize``, ``kernel``, ``stride``, ``dilate``, ``pad`` have
    3 entries each."""
    cdef Py_ssize_t size[3]
    cdef Py_ssize_t os[3]
    cdef Py_ssize_t k[3]
    cdef Py_ssize_t t[3]
    cdef Py_ssize_t d[3]
    cdef Py_ssize_t p[3]
    cdef Py_ssize_t o[3]
    cdef Py_ssize_t i, r, lines, m, kk, plane, width
    cdef int nt
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late
    for i in range(3):
        size[i], os[i] = x.shape[2 + i], osize[i]
        k[i], t[i], d[i], p[i] = kernel[i], stride[i], dilate[i], pad[i]
        if k[i] < 1 or t[i] < 1 or d[i] < 1 or p[i] < 0 or os[i] < 0:
            raise ValueError(f"kernel, stride and dilate must be positive, pad and osize "
                             f"non-negative (got kernel={kernel!r}, stride={stride!r}, "
                             f"dilate={dilate!r}, pad={pad!r}, osize={osize!r})")
    kk = k[0] * k[1] * k[2]
    width = os[0] * os[1] * os[2]
    if cg < 0 or c0 < 0 or c0 + cg > x.shape[1] or col.shape[1] != kk * cg:
        raise ValueError(f"channels {c0}:{c0 + cg} of {x.shape[1]} do not fit columns of "
                         f"width {col.shape[1]} for {kk} kernel offsets")
    if width == 0 or col.shape[0] % width:
        raise ValueError(f"col's {col.shape[0]} rows are no whole number of samples of "
                         f"{width} output positions")
    m = col.shape[0] // width
    if n0 < 0 or n0 + m > x.shape[0]:
        raise ValueError(f"samples {n0}:{n0 + m} are not within x's {x.shape[0]}")
    if cg == 0 or m == 0:
        return
    plane = size[0] * size[1] * size[2]
    lines = m * os[0] * os[1]
    nt = arith_threads(lines, col.shape[0] * col.shape[1])
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for r in prange(lines, num_threads=nt, schedule="static"):
            mark_start(starts)
            _column_line(&x[0, 0, 0, 0, 0], &col[0, 0], size, plane, cg, os, k, t, d, p,
                         n0, c0, r, x.shape[1])
        late = nt > 1 and started_late(t0, starts, nt)
    if late:
        back_off()


cdef inline void _column_line(const floating* x, floating* col, Py_ssize_t[3] size,
                              Py_ssize_t plane, Py_ssize_t cg, Py_ssize_t[3] os,
                              Py_ssize_t[3] k, Py_ssize_t[3] t, Py_ssize_t[3] d,
                              Py_ssize_t[3] p, Py_ssize_t n0, Py_ssize_t c0, Py_ssize_t r,
                              Py_ssize_t channels) noexcept nogil:
    """The columns of line ``r`` (sample, OD, OH): OW rows."""
    cdef Py_ssize_t n = r // (os[0] * os[1])
    cdef Py_ssize_t o[3]
    cdef Py_ssize_t width = k[0] * k[1] * k[2] * cg
    o[0] = (r // os[1]) % os[0]
    o[1] = r % os[1]
    cdef const floating* xs = x + ((n0 + n) * channels + c0) * plane
    cdef floating* row = col + r * os[2] * width
    cdef Py_ssize_t w
    for w in range(os[2]):
        o[2] = w
        _column_row(xs, row + w * width, size, plane, cg, o, k, t, d, p)


def to_channel_first(floating[:, :, ::1] res, floating[:, :, ::1] out, Py_ssize_t n0,
                     Py_ssize_t f0):
    """out[n0:n0 + m, f0:f0 + F] (of out (N, F_all, L)) = res (m, L, F) transposed per
    sample, by blocks."""
    cdef Py_ssize_t m = res.shape[0], length = res.shape[1], f = res.shape[2]
    cdef Py_ssize_t blocks, b, n, l0, l1, l, q
    cdef Py_ssize_t BLOCK = 64
    cdef int nt
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late
    if (n0 < 0 or f0 < 0 or out.shape[0] < n0 + m or out.shape[1] < f0 + f
            or out.shape[2] != length):
        raise ValueError(f"res of shape ({m}, {length}, {f}) does not fit at ({n0}, {f0}) "
                         f"into out of shape ({out.shape[0]}, {out.shape[1]}, "
                         f"{out.shape[2]})")
    if m == 0 or length == 0 or f == 0:
        return
    blocks = (length + BLOCK - 1) // BLOCK
    nt = arith_threads(m * blocks, m * length * f)
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for b in prange(m * blocks, num_threads=nt, schedule="static"):
            mark_start(starts)
            n = b // blocks
            l0 = (b % blocks) * BLOCK
            l1 = min(l0 + BLOCK, length)
            for q in range(f):
                for l in range(l0, l1):
                    out[n0 + n, f0 + q, l] = res[n, l, q]
        late = nt > 1 and started_late(t0, starts, nt)
    if late:
        back_off()
