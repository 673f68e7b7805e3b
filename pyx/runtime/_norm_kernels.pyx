"""BatchNorm's host kernels: per-channel statistics and the affine passes, fused so that
the forward reads the data twice and writes once, the backward reads the head gradient
and the data twice and writes once (NumPy needs five and six passes).

Every array is C-contiguous and seen as (pre, C, post), the channel axis in the middle;
float32 or float64 (float16 data goes through NumPy in float32).  The sums run in
16-byte vectors of the data's type, added into double every 512 values (``vec_sums``);
each channel's sums run in one order whatever the thread count.  The channels (sums) or
the rows (pre * C, the affine passes) are split into one block per thread of
``arith_threads``.  A region whose thread started late (a busy machine) sends the next
calls to one thread for a while (``back_off``, as the sparse products do).
"""

import numpy as np

from cython.parallel cimport prange

from openmp cimport omp_get_wtime

from runtime._sparse_common cimport (TRACKED_THREADS, arith_threads, back_off, clear_starts,
                                     mark_start, started_late)
from runtime._types cimport floating


cdef extern from *:
    """
    /* One channel's sums for BatchNorm's statistics over `rows` rows of n values, `stride`
       values apart, in 16-byte vectors of the data's type (GCC/Clang vector extensions:
       one running double sum is a chain of dependent adds, and the compilers do not
       vectorize a floating-point reduction on their own), two vectors of sums and two of
       products per step for independent chains.  After every 512 values and at the end
       the vectors are added into double, so a lane sums at most 512 / width + 2 values
       in the data's type.  With b: sum(a) and sum(a * (b - shift)); without (NULL):
       sum(a - shift) and sum((a - shift)^2), shift then one of a's values.  The results
       are added to *sa and *sab. */
    #include <string.h>
    template <typename T>
    static inline void ndrt_channel_sums(const T* a, const T* b, Py_ssize_t rows,
                                         Py_ssize_t stride, Py_ssize_t n, double shift,
                                         double* sa, double* sab) {
        typedef T V __attribute__((vector_size(16)));
        const Py_ssize_t W = 16 / sizeof(T), STEP = 2 * W, FLUSH = 512;
        const bool two = b != NULL;
        const T fs = (T)shift, fa = two ? (T)0 : fs;
        V vs = {}, va = {}, zero = {};
        V s0 = {}, s1 = {}, t0 = {}, t1 = {}, x0, x1, y0, y1;
        for (Py_ssize_t l = 0; l < W; ++l) { va[l] = fa; vs[l] = fs; }
        double ds = 0, dt = 0;
        Py_ssize_t pending = 0, q;
        for (Py_ssize_t r = 0; r < rows; ++r) {
            const T* ra = a + r * stride;
            const T* rb = two ? b + r * stride : ra;
            for (q = 0; q + STEP <= n; q += STEP) {
                memcpy(&x0, ra + q, 16); memcpy(&x1, ra + q + W, 16);
                memcpy(&y0, rb + q, 16); memcpy(&y1, rb + q + W, 16);
                x0 -= va; x1 -= va;
                s0 += x0; s1 += x1;
                t0 += x0 * (y0 - vs); t1 += x1 * (y1 - vs);
                pending += STEP;
                if (pending >= FLUSH) {
                    for (Py_ssize_t l = 0; l < W; ++l) {
                        ds += (double)s0[l] + (double)s1[l];
                        dt += (double)t0[l] + (double)t1[l];
                    }
                    s0 = s1 = t0 = t1 = zero;
                    pending = 0;
                }
            }
            if (q + W <= n) {
                memcpy(&x0, ra + q, 16); memcpy(&y0, rb + q, 16);
                x0 -= va;
                s0 += x0;
                t0 += x0 * (y0 - vs);
                pending += W;
                q += W;
            }
            for (; q < n; ++q) {
                double u = (double)(ra[q] - fa);
                ds += u;
                dt += u * (double)(rb[q] - fs);
            }
        }
        for (Py_ssize_t l = 0; l < W; ++l) {
            ds += (double)s0[l] + (double)s1[l];
            dt += (double)t0[l] + (double)t1[l];
        }
        *sa += ds;
        /* b - shift = (b - fs) + (fs - shift): the shift rounded to the data's type */
        *sab += dt + (two ? ((double)fs - shift) * ds : 0.0);
    }
    """
    void vec_sums "ndrt_channel_sums"[T](const T* a, const T* b, Py_ssize_t rows,
                                         Py_ssize_t stride, Py_ssize_t n, double shift,
                                         double* sa, double* sab) noexcept nogil


# Rows of fewer values than this are summed channel by channel (all of a channel's rows
# in one set of vector sums); longer ones in memory order, row by row (a channel's rows
# one after the other would start every row, a page apart, cold).
cdef enum:
    SHORT_ROW = 64


cdef inline void _channel_block(const floating* a, const floating* b, const double* shift,
                                Py_ssize_t pre, Py_ssize_t c, Py_ssize_t post,
                                Py_ssize_t c0, Py_ssize_t c1, double* sa,
                                double* sab) noexcept nogil:
    """The sums of channels c0 to c1 (vec_sums) into sa[ch], sab[ch]."""
    cdef Py_ssize_t p, ch, off
    for ch in range(c0, c1):
        sa[ch] = 0
        sab[ch] = 0
    if post < SHORT_ROW:
        for ch in range(c0, c1):
            vec_sums(a + ch * post, (b + ch * post) if b != NULL else <const floating*>NULL,
                     pre, c * post, post, shift[ch], &sa[ch], &sab[ch])
        return
    for p in range(pre):
        for ch in range(c0, c1):
            off = (p * c + ch) * post
            vec_sums(a + off, (b + off) if b != NULL else <const floating*>NULL, 1, 0, post,
                     shift[ch], &sa[ch], &sab[ch])


cdef int _channel_sums(const floating* a, const floating* b, const double* shift,
                       Py_ssize_t pre, Py_ssize_t c, Py_ssize_t post, double* sa,
                       double* sab, int passes) except -1:
    """_channel_block over every channel, the channels split into one block per thread
    (each channel's sum runs in the same order whatever the split)."""
    cdef int nt = arith_threads(c, passes * pre * c * post)
    cdef Py_ssize_t i, per
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late
    if nt == 1:
        with nogil:
            _channel_block(a, b, shift, pre, c, post, 0, c, sa, sab)
        return 0
    per = (c + nt - 1) // nt
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for i in prange(nt, num_threads=nt, schedule="static", chunksize=1):
            mark_start(starts)
            _channel_block(a, b, shift, pre, c, post, min(i * per, c), min((i + 1) * per, c),
                           sa, sab)
        late = started_late(t0, starts, nt)
    if late:
        back_off()
    return 0


def channel_moments(floating[:, :, ::1] x, double[::1] mean, double[::1] var):
    """Per channel of x (pre, C, post): the mean and the biased variance, into ``mean``
    and ``var`` (double, length C).  One pass: sums of x - k and (x - k) ** 2, k the
    channel's first value."""
    cdef Py_ssize_t pre = x.shape[0], c = x.shape[1], post = x.shape[2], ch
    cdef double m = <double>(pre * post), d
    cdef double[::1] k
    if mean.shape[0] != c or var.shape[0] != c:
        raise ValueError(f"mean and var must have length {c}")
    if m == 0:
        return
    k = np.empty(c)
    for ch in range(c):
        k[ch] = x[0, ch, 0]
    _channel_sums(&x[0, 0, 0], <const floating*>NULL, &k[0], pre, c, post, &mean[0],
                  &var[0], 1)
    for ch in range(c):
        d = mean[ch] / m
        mean[ch] = k[ch] + d
        var[ch] = max(var[ch] / m - d * d, 0.0)


def channel_dot(floating[:, :, ::1] g, floating[:, :, ::1] x, double[::1] mean,
                double[::1] sum_g, double[::1] dot):
    """Per channel: sum(g) and sum(g * (x - mean)), into ``sum_g`` and ``dot``."""
    cdef Py_ssize_t pre = x.shape[0], c = x.shape[1], post = x.shape[2]
    if g.shape[0] != pre or g.shape[1] != c or g.shape[2] != post:
        raise ValueError("g and x must have one shape")
    if mean.shape[0] != c or sum_g.shape[0] != c or dot.shape[0] != c:
        raise ValueError(f"mean, sum_g and dot must have length {c}")
    if pre * c * post == 0:
        for ch in range(c):
            sum_g[ch] = 0
            dot[ch] = 0
        return
    _channel_sums(&g[0, 0, 0], &x[0, 0, 0], &mean[0], pre, c, post, &sum_g[0], &dot[0], 2)


def channel_affine(floating[:, :, ::1] x, floating[::1] a, floating[::1] b,
                   floating[:, :, ::1] out):
    """out = x * a + b per channel (``out`` may be ``x``)."""
    _affine(x, a, x, a, b, out, False)


def channel_affine2(floating[:, :, ::1] x, floating[::1] a, floating[:, :, ::1] g,
                    floating[::1] d, floating[::1] b, floating[:, :, ::1] out):
    """out = x * a + g * d + b per channel (``out`` may be ``x`` or ``g``)."""
    _affine(x, a, g, d, b, out, True)


cdef inline void _affine_rows(const floating* x, const floating* a, const floating* g,
                              const floating* d, const floating* b, floating* out,
                              Py_ssize_t c, Py_ssize_t post, Py_ssize_t r0, Py_ssize_t r1,
                              bint two) noexcept nogil:
    """Rows r0 to r1 of the (pre * C, post) view (the channel counted along, not divided
    out: a division per row costs more than a short row's work)."""
    cdef Py_ssize_t r, q, ch = r0 % c, off
    cdef floating av, bv, dv
    for r in range(r0, r1):
        av = a[ch]
        bv = b[ch]
        off = r * post
        if two:
            dv = d[ch]
            for q in range(post):
                out[off + q] = x[off + q] * av + g[off + q] * dv + bv
        else:
            for q in range(post):
                out[off + q] = x[off + q] * av + bv
        ch += 1
        if ch == c:
            ch = 0


cdef int _affine(floating[:, :, ::1] x, floating[::1] a, floating[:, :, ::1] g,
                 floating[::1] d, floating[::1] b, floating[:, :, ::1] out,
                 bint two) except -1:
    cdef Py_ssize_t pre = x.shape[0], c = x.shape[1], post = x.shape[2], rows = pre * c
    cdef Py_ssize_t i, per
    cdef int nt = arith_threads(rows, (3 if two else 2) * rows * post)
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late
    if (out.shape[0] != pre or out.shape[1] != c or out.shape[2] != post
            or g.shape[0] != pre or g.shape[1] != c or g.shape[2] != post):
        raise ValueError(f"channel_affine: arrays must have shape {(pre, c, post)!r}")
    if a.shape[0] != c or b.shape[0] != c or d.shape[0] != c:
        raise ValueError(f"channel_affine: per-channel vectors must have length {c}")
    if rows * post == 0:
        return 0
    if nt == 1:
        with nogil:
            _affine_rows(&x[0, 0, 0], &a[0], &g[0, 0, 0], &d[0], &b[0], &out[0, 0, 0], c,
                         post, 0, rows, two)
        return 0
    per = (rows + nt - 1) // nt                      # one block of rows per thread
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for i in prange(nt, num_threads=nt, schedule="static", chunksize=1):
            mark_start(starts)
            _affine_rows(&x[0, 0, 0], &a[0], &g[0, 0, 0], &d[0], &b[0], &out[0, 0, 0], c,
                         post, min(i * per, rows), min((i + 1) * per, rows), two)
        late = started_late(t0, starts, nt)
    if late:
        back_off()
    return 0
