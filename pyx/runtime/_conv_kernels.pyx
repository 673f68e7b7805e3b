"""Convolution's kernels around its GEMMs.  The channel-last forward: the columns
gathered straight from channel-first data (padding as zeros), and the GEMM's
channel-last result written back channel-first (NumPy needs a transposed, padded copy
of the data, a strided copy of the columns and a transposed copy of the result for the
same work).  Winograd F(2x2, 3x3): the data's tile transforms, the products' inverse
transform, and the head gradient's transform for the weight gradient.

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


# -- Winograd F(2x2, 3x3) ---------------------------------------------------------------
# A 3x3 stride-1 convolution computed on 4x4 input tiles that overlap by 2: each tile's
# 2x2 outputs are A^T [(G g G^T) * (B^T d B)] A, 16 products per channel pair where direct
# convolution takes 36.  The transforms below touch each value once; the 16 products over
# all channels are 16 GEMMs (the caller's).  Tiles are numbered (sample, tile row, tile
# column) with TH x TW tiles a sample; transformed arrays are (16, channels, tiles), each
# (sample, channel) a contiguous run of TH * TW.


# Tiles are taken a block of up to TILE_BLOCK of a tile row at a time, in per-thread
# scratch rows, so that every loop below runs over a contiguous run of tiles.
DEF TILE_BLOCK = 32


def _tile_check(Py_ssize_t n, Py_ssize_t n0, Py_ssize_t c, Py_ssize_t c0, Py_ssize_t cg,
                Py_ssize_t k16, Py_ssize_t tiles, Py_ssize_t th, Py_ssize_t tw, what):
    """The samples m of a transformed array (k16, cg, tiles) of th x tw tiles a sample,
    for samples n0:n0 + m and channels c0:c0 + cg of an array of n samples, c channels."""
    if k16 != 16 or th < 1 or tw < 1 or tiles % (th * tw):
        raise ValueError(f"{what} must be (16, channels, samples x {th} x {tw} tiles) "
                         f"(got ({k16}, {cg}, {tiles}))")
    m = tiles // (th * tw)
    if n0 < 0 or n0 + m > n or c0 < 0 or c0 + cg > c:
        raise ValueError(f"samples {n0}:{n0 + m} and channels {c0}:{c0 + cg} are not "
                         f"within the array's {n} samples and {c} channels")
    return m


cdef inline void _input_unit(const floating* src, floating* dst, Py_ssize_t step,
                             Py_ssize_t pad_h, Py_ssize_t pad_w, Py_ssize_t h, Py_ssize_t w,
                             Py_ssize_t th, Py_ssize_t tw) noexcept nogil:
    """The transforms B^T d B of one (sample, channel) image's tiles: transform k of
    tile t at dst[k * step + t].  B^T's rows are [1,0,-1,0], [0,1,1,0], [0,-1,1,0],
    [0,1,0,-1]: first over the tile rows' four image rows, then over each tile's four
    columns."""
    cdef floating rows[4][2 * TILE_BLOCK + 2]
    cdef floating tr[4][2 * TILE_BLOCK + 2]
    cdef Py_ssize_t i, j0, cnt, width, q, r, row, col, jj, t, lo, hi
    cdef floating* out
    for i in range(th):
        for j0 in range(0, tw, TILE_BLOCK):
            cnt = min(TILE_BLOCK, tw - j0)
            width = 2 * cnt + 2
            col = 2 * j0 - pad_w
            # the block's columns inside the image: [lo, hi) of its width
            lo = min(max(-col, 0), width)
            hi = max(min(w - col, width), lo)
            for r in range(4):
                row = 2 * i - pad_h + r
                if row < 0 or row >= h:
                    for q in range(width):
                        rows[r][q] = 0
                    continue
                for q in range(lo):
                    rows[r][q] = 0
                for q in range(lo, hi):
                    rows[r][q] = src[row * w + col + q]
                for q in range(hi, width):
                    rows[r][q] = 0
            for q in range(width):
                tr[0][q] = rows[0][q] - rows[2][q]
                tr[1][q] = rows[1][q] + rows[2][q]
                tr[2][q] = rows[2][q] - rows[1][q]
                tr[3][q] = rows[1][q] - rows[3][q]
            t = i * tw + j0
            for r in range(4):
                out = dst + 4 * r * step + t
                for jj in range(cnt):
                    out[jj] = tr[r][2 * jj] - tr[r][2 * jj + 2]
                out += step
                for jj in range(cnt):
                    out[jj] = tr[r][2 * jj + 1] + tr[r][2 * jj + 2]
                out += step
                for jj in range(cnt):
                    out[jj] = tr[r][2 * jj + 2] - tr[r][2 * jj + 1]
                out += step
                for jj in range(cnt):
                    out[jj] = tr[r][2 * jj + 1] - tr[r][2 * jj + 3]


cdef inline void _output_unit(const floating* src, floating* dst, Py_ssize_t step,
                              Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t th,
                              Py_ssize_t tw) noexcept nogil:
    """One (sample, filter) image dst (oh x ow) from its tiles' products M (product k of
    tile t at src[k * step + t]): A^T M A with A^T's rows [1,1,1,0], [0,1,-1,-1]."""
    cdef floating a[2][4][TILE_BLOCK]
    cdef floating y[2 * TILE_BLOCK]
    cdef Py_ssize_t i, j0, cnt, c, jj, r, t, row, n
    cdef const floating* e
    for i in range(th):
        for j0 in range(0, tw, TILE_BLOCK):
            cnt = min(TILE_BLOCK, tw - j0)
            t = i * tw + j0
            for c in range(4):
                e = src + c * step + t
                for jj in range(cnt):
                    a[0][c][jj] = e[jj] + e[4 * step + jj] + e[8 * step + jj]
                    a[1][c][jj] = e[4 * step + jj] - e[8 * step + jj] - e[12 * step + jj]
            for r in range(2):
                row = 2 * i + r
                if row >= oh:
                    break
                for jj in range(cnt):
                    y[2 * jj] = a[r][0][jj] + a[r][1][jj] + a[r][2][jj]
                    y[2 * jj + 1] = a[r][1][jj] - a[r][2][jj] - a[r][3][jj]
                n = min(2 * cnt, ow - 2 * j0)
                for jj in range(n):
                    dst[row * ow + 2 * j0 + jj] = y[jj]


cdef inline void _grad_unit(const floating* src, floating* dst, Py_ssize_t step,
                            Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t th,
                            Py_ssize_t tw) noexcept nogil:
    """A g A^T of the 2x2 tiles g of one (sample, filter) head gradient src (oh x ow),
    transform k of tile t at dst[k * step + t] (A's rows: [1,0], [1,1], [1,-1], [0,-1]):
    the adjoint of ``_output_unit``."""
    cdef floating g[2][2 * TILE_BLOCK]
    cdef floating a[4][2 * TILE_BLOCK]
    cdef Py_ssize_t i, j0, cnt, n, r, row, jj, q, t
    cdef floating* out
    for i in range(th):
        for j0 in range(0, tw, TILE_BLOCK):
            cnt = min(TILE_BLOCK, tw - j0)
            n = min(2 * cnt, ow - 2 * j0)
            for r in range(2):
                row = 2 * i + r
                if row >= oh:
                    for q in range(2 * cnt):
                        g[r][q] = 0
                    continue
                for q in range(n):
                    g[r][q] = src[row * ow + 2 * j0 + q]
                for q in range(n, 2 * cnt):
                    g[r][q] = 0
            for q in range(2 * cnt):
                a[0][q] = g[0][q]
                a[1][q] = g[0][q] + g[1][q]
                a[2][q] = g[0][q] - g[1][q]
                a[3][q] = -g[1][q]
            t = i * tw + j0
            for r in range(4):
                out = dst + 4 * r * step + t
                for jj in range(cnt):
                    out[jj] = a[r][2 * jj]
                out += step
                for jj in range(cnt):
                    out[jj] = a[r][2 * jj] + a[r][2 * jj + 1]
                out += step
                for jj in range(cnt):
                    out[jj] = a[r][2 * jj] - a[r][2 * jj + 1]
                out += step
                for jj in range(cnt):
                    out[jj] = -a[r][2 * jj + 1]


# What _tile_pass does per (sample, channel) image.
cdef enum:
    INPUT = 0       # the data's tile transforms (_input_unit)
    OUTPUT = 1      # the products' inverse transform into the image (_output_unit)
    GRAD = 2        # the head gradient's tile transforms (_grad_unit)


cdef void _tile_pass(floating[:, :, ::1] t, floating[:, :, :, ::1] img, Py_ssize_t n0,
                     Py_ssize_t c0, Py_ssize_t th, Py_ssize_t tw, int mode, Py_ssize_t pad_h,
                     Py_ssize_t pad_w, what) except *:
    """One of the transforms between the tile array t (16, cg, m * th * tw) and channels
    c0:c0 + cg of samples n0:n0 + m of img (N, C, H, W), an image at a time (``mode``)."""
    cdef Py_ssize_t cg = t.shape[1], tiles = t.shape[2], h = img.shape[2], w = img.shape[3]
    cdef Py_ssize_t step = cg * tiles
    cdef Py_ssize_t m, u, n, c
    cdef int nt
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late
    m = _tile_check(img.shape[0], n0, img.shape[1], c0, cg, t.shape[0], tiles, th, tw, what)
    if mode == INPUT and (pad_h < 0 or pad_w < 0):
        raise ValueError(f"pad must be non-negative (got {pad_h}, {pad_w})")
    if mode != INPUT and (th < (h + 1) // 2 or tw < (w + 1) // 2):
        raise ValueError(f"{th} x {tw} tiles do not cover outputs of {h} x {w}")
    if m == 0 or cg == 0:
        return
    nt = arith_threads(m * cg, 16 * cg * tiles)
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for u in prange(m * cg, num_threads=nt, schedule="static"):
            mark_start(starts)
            n = u // cg
            c = u % cg
            if mode == INPUT:
                _input_unit(&img[n0 + n, c0 + c, 0, 0], &t[0, c, n * th * tw], step, pad_h,
                            pad_w, h, w, th, tw)
            elif mode == OUTPUT:
                _output_unit(&t[0, c, n * th * tw], &img[n0 + n, c0 + c, 0, 0], step, h, w,
                             th, tw)
            else:
                _grad_unit(&img[n0 + n, c0 + c, 0, 0], &t[0, c, n * th * tw], step, h, w,
                           th, tw)
        late = nt > 1 and started_late(t0, starts, nt)
    if late:
        back_off()


def winograd_input(floating[:, :, :, ::1] x, floating[:, :, ::1] v, Py_ssize_t n0,
                   Py_ssize_t c0, Py_ssize_t pad_h, Py_ssize_t pad_w, Py_ssize_t th,
                   Py_ssize_t tw):
    """v (16, cg, m * th * tw) = B^T d B of every 4x4 tile d of channels c0:c0 + cg of
    samples n0:n0 + m of x (N, C, H, W), tile (i, j) starting at row 2i - pad_h and column
    2j - pad_w (zeros outside x)."""
    _tile_pass(v, x, n0, c0, th, tw, INPUT, pad_h, pad_w, "v")


def winograd_output(floating[:, :, ::1] mm, floating[:, :, :, ::1] out, Py_ssize_t n0,
                    Py_ssize_t f0, Py_ssize_t th, Py_ssize_t tw):
    """out[n0:n0 + m, f0:f0 + fg] (of out (N, F, OH, OW)) = A^T M A of every tile of
    mm (16, fg, m * th * tw), the outputs past OH and OW dropped."""
    _tile_pass(mm, out, n0, f0, th, tw, OUTPUT, 0, 0, "mm")


def winograd_grad_output(floating[:, :, :, ::1] gy, floating[:, :, ::1] z, Py_ssize_t n0,
                         Py_ssize_t f0, Py_ssize_t th, Py_ssize_t tw):
    """z (16, fg, m * th * tw) = A g A^T of every 2x2 tile g of the head gradient
    gy[n0:n0 + m, f0:f0 + fg] (zeros past OH and OW): the adjoint of ``winograd_output``,
    for the weight gradient."""
    _tile_pass(z, gy, n0, f0, th, tw, GRAD, 0, 0, "z")
