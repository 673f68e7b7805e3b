"""Convolution's kernels around its GEMMs: the columns gathered straight from
channel-first data (im2col, padding as zeros) for the forward and the weight gradient,
and the data gradient's columns added back into the images (col2im); NumPy needs a padded
copy of the data, strided copies and one strided addition per kernel offset for the same
work.  Winograd F(2x2, 3x3): the data's tile transforms, the products' inverse
transform, and the head gradient's transform for the weight gradient.

Data is C-contiguous (N, C, D, H, W): 1-D and 2-D convolutions are seen as 3-D with unit
leading axes.  The rows of the outputs are shared among the threads of ``arith_threads``
(each thread writes only its own rows).
"""

from cython.parallel cimport prange

import numpy as np

from openmp cimport omp_get_wtime

from runtime._sparse_common cimport (TRACKED_THREADS, arith_threads, back_off, clear_starts,
                                     mark_start, started_late)
from runtime._types cimport floating, int64_t


cdef int _geometry(Py_ssize_t[8] x_shape, osize, kernel, stride, dilate, pad, Py_ssize_t[3] size,
                   Py_ssize_t[3] os, Py_ssize_t[3] k, Py_ssize_t[3] t, Py_ssize_t[3] d,
                   Py_ssize_t[3] p) except -1:
    """The 3-entry geometry arguments read into C arrays (size: x_shape's last three)."""
    cdef Py_ssize_t i
    for i in range(3):
        size[i], os[i] = x_shape[2 + i], osize[i]
        k[i], t[i], d[i], p[i] = kernel[i], stride[i], dilate[i], pad[i]
        if k[i] < 1 or t[i] < 1 or d[i] < 1 or p[i] < 0 or os[i] < 0:
            raise ValueError(f"kernel, stride and dilate must be positive, pad and osize "
                             f"non-negative (got kernel={kernel!r}, stride={stride!r}, "
                             f"dilate={dilate!r}, pad={pad!r}, osize={osize!r})")
    return 0


cdef int64_t[:, ::1] _window_index(Py_ssize_t[3] size, Py_ssize_t[3] os, Py_ssize_t[3] k,
                                   Py_ssize_t[3] t, Py_ssize_t[3] d, Py_ssize_t[3] p):
    """(K, L): for kernel offset q and output position l, the position in a (D, H, W)
    image that l's window reads at q, or -1 where the window is outside (padding).  One
    table serves every sample and channel."""
    cdef Py_ssize_t kk = k[0] * k[1] * k[2], length = os[0] * os[1] * os[2]
    cdef int64_t[:, ::1] index = np.empty((kk, length), np.int64)
    cdef Py_ssize_t a, b, c, q = 0, od, oh, ow, i, j, w, l
    with nogil:
        for a in range(k[0]):
            for b in range(k[1]):
                for c in range(k[2]):
                    l = 0
                    for od in range(os[0]):
                        i = od * t[0] - p[0] + a * d[0]
                        for oh in range(os[1]):
                            j = oh * t[1] - p[1] + b * d[1]
                            for ow in range(os[2]):
                                w = ow * t[2] - p[2] + c * d[2]
                                if 0 <= i < size[0] and 0 <= j < size[1] and 0 <= w < size[2]:
                                    index[q, l] = (i * size[1] + j) * size[2] + w
                                else:
                                    index[q, l] = -1
                                l += 1
                    q += 1
    return index


cdef inline void _gather(const floating* img, floating* dst, const int64_t* index,
                         Py_ssize_t length) noexcept nogil:
    """dst (L) = img read at index (zeros at -1)."""
    cdef Py_ssize_t l
    for l in range(length):
        dst[l] = img[index[l]] if index[l] >= 0 else 0


cdef tuple _columns_fit(Py_ssize_t[8] col_shape, Py_ssize_t[8] img_shape, Py_ssize_t n0,
                        Py_ssize_t c0, osize, kernel, stride, dilate, pad, Py_ssize_t[3] size,
                        Py_ssize_t[3] os, Py_ssize_t[3] k, Py_ssize_t[3] t, Py_ssize_t[3] d,
                        Py_ssize_t[3] p, what):
    """(channels, samples, kernel offsets, output positions) of columns of col_shape for
    samples n0: and channels c0: of an image array (``what``) of img_shape, after reading
    the geometry into the C arrays."""
    _geometry(img_shape, osize, kernel, stride, dilate, pad, size, os, k, t, d, p)
    cdef Py_ssize_t kk = k[0] * k[1] * k[2], length = os[0] * os[1] * os[2]
    if length == 0 or col_shape[1] % length or col_shape[0] % kk:
        raise ValueError(f"col of shape ({col_shape[0]}, {col_shape[1]}) is not (channels "
                         f"x {kk} kernel offsets, samples x {length} output positions)")
    cdef Py_ssize_t cg = col_shape[0] // kk, m = col_shape[1] // length
    if n0 < 0 or n0 + m > img_shape[0] or c0 < 0 or c0 + cg > img_shape[1]:
        raise ValueError(f"samples {n0}:{n0 + m} and channels {c0}:{c0 + cg} are not "
                         f"within {what}'s {img_shape[0]} samples and {img_shape[1]} channels")
    return cg, m, kk, length


def im2col(floating[:, :, :, :, ::1] x, floating[:, ::1] col, Py_ssize_t n0, Py_ssize_t c0,
           osize, kernel, stride, dilate, pad):
    """col (cg * KD * KH * KW, m * OD * OH * OW) = the columns of samples n0:n0 + m and
    channels c0:c0 + cg of x (N, C, D, H, W): row (channel, kernel offset), the weight's
    own order; column (sample, output position), zeros where a window leaves x.
    ``osize``, ``kernel``, ``stride``, ``dilate``, ``pad`` have 3 entries each.  Each
    thread writes whole runs of one row."""
    cdef Py_ssize_t size[3]
    cdef Py_ssize_t os[3]
    cdef Py_ssize_t k[3]
    cdef Py_ssize_t t[3]
    cdef Py_ssize_t d[3]
    cdef Py_ssize_t p[3]
    cdef Py_ssize_t u, r, n, m, cg, kk, length
    cdef int64_t[:, ::1] index
    cdef int nt
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late
    cg, m, kk, length = _columns_fit(col.shape, x.shape, n0, c0, osize, kernel, stride,
                                     dilate, pad, size, os, k, t, d, p, "x")
    if m == 0 or cg == 0:
        return
    index = _window_index(size, os, k, t, d, p)
    nt = arith_threads(cg * kk * m, col.shape[0] * col.shape[1])
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for u in prange(cg * kk * m, num_threads=nt, schedule="static"):
            mark_start(starts)
            r = u // m
            n = u % m
            _gather(&x[n0 + n, c0 + r // kk, 0, 0, 0], &col[r, n * length],
                    &index[r % kk, 0], length)
        late = nt > 1 and started_late(t0, starts, nt)
    if late:
        back_off()


cdef inline void _col2im_plane(const floating* col, floating* img, const int64_t* index,
                               Py_ssize_t kk, Py_ssize_t length, Py_ssize_t plane,
                               Py_ssize_t step) noexcept nogil:
    """One (sample, channel) image img (plane values) = the sum of its columns added at
    their windows: kernel offset q's run of output positions at col[q * step]."""
    cdef Py_ssize_t i, q, l
    cdef const floating* src
    cdef const int64_t* at
    for i in range(plane):
        img[i] = 0
    for q in range(kk):
        src = col + q * step
        at = index + q * length
        for l in range(length):
            if at[l] >= 0:
                img[at[l]] += src[l]


def col2im(floating[:, ::1] col, floating[:, :, :, :, ::1] out, Py_ssize_t n0,
           Py_ssize_t c0, osize, kernel, stride, dilate, pad):
    """out[n0:n0 + m, c0:c0 + cg] (of out (N, C, D, H, W)) = the columns col (cg * KD *
    KH * KW, m * OD * OH * OW) (row (channel, kernel offset), column (sample, output
    position)) added back at their windows: the adjoint of the convolution's column
    gather, the data gradient's last step.  Each thread writes whole images."""
    cdef Py_ssize_t size[3]
    cdef Py_ssize_t os[3]
    cdef Py_ssize_t k[3]
    cdef Py_ssize_t t[3]
    cdef Py_ssize_t d[3]
    cdef Py_ssize_t p[3]
    cdef Py_ssize_t u, n, c, m, cg, kk, length, plane
    cdef int64_t[:, ::1] index
    cdef int nt
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late
    cg, m, kk, length = _columns_fit(col.shape, out.shape, n0, c0, osize, kernel, stride,
                                     dilate, pad, size, os, k, t, d, p, "out")
    if m == 0 or cg == 0:
        return
    plane = size[0] * size[1] * size[2]
    index = _window_index(size, os, k, t, d, p)
    nt = arith_threads(m * cg, col.shape[0] * col.shape[1] + m * cg * plane)
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for u in prange(m * cg, num_threads=nt, schedule="static"):
            mark_start(starts)
            n = u // cg
            c = u % cg
            _col2im_plane(&col[c * kk, n * length], &out[n0 + n, c0 + c, 0, 0, 0],
                          &index[0, 0], kk, length, plane, m * length)
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


cdef void _tile_pass(floating[:, :, :] t, floating[:, :, :, ::1] img, Py_ssize_t n0,
                     Py_ssize_t c0, Py_ssize_t th, Py_ssize_t tw, int mode, Py_ssize_t pad_h,
                     Py_ssize_t pad_w, what) except *:
    """One of the transforms between the tile array t (16, cg, m * th * tw) and channels
    c0:c0 + cg of samples n0:n0 + m of img (N, C, H, W), an image at a time (``mode``).
    t's rows are contiguous; its 16 planes may lie further apart than cg rows (see
    runtime/ops/conv.py's ``_winograd_planes``)."""
    cdef Py_ssize_t cg = t.shape[1], tiles = t.shape[2], h = img.shape[2], w = img.shape[3]
    cdef Py_ssize_t step = t.strides[0] // <Py_ssize_t>sizeof(floating)
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
    if (t.strides[2] != sizeof(floating) or t.strides[1] != tiles * t.strides[2]
            or t.strides[0] < cg * t.strides[1]):
        raise ValueError(f"{what} must have contiguous rows of {tiles} tiles, {cg} rows a "
                         f"plane, and planes that do not overlap (got strides "
                         f"({t.strides[0]}, {t.strides[1]}, {t.strides[2]}))")
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


def winograd_input(floating[:, :, :, ::1] x, floating[:, :, :] v, Py_ssize_t n0,
                   Py_ssize_t c0, Py_ssize_t pad_h, Py_ssize_t pad_w, Py_ssize_t th,
                   Py_ssize_t tw):
    """v (16, cg, m * th * tw) = B^T d B of every 4x4 tile d of channels c0:c0 + cg of
    samples n0:n0 + m of x (N, C, H, W), tile (i, j) starting at row 2i - pad_h and column
    2j - pad_w (zeros outside x)."""
    _tile_pass(v, x, n0, c0, th, tw, INPUT, pad_h, pad_w, "v")


def winograd_output(floating[:, :, :] mm, floating[:, :, :, ::1] out, Py_ssize_t n0,
                    Py_ssize_t f0, Py_ssize_t th, Py_ssize_t tw):
    """out[n0:n0 + m, f0:f0 + fg] (of out (N, F, OH, OW)) = A^T M A of every tile of
    mm (16, fg, m * th * tw), the outputs past OH and OW dropped."""
    _tile_pass(mm, out, n0, f0, th, tw, OUTPUT, 0, 0, "mm")


def winograd_grad_output(floating[:, :, :, ::1] gy, floating[:, :, :] z, Py_ssize_t n0,
                         Py_ssize_t f0, Py_ssize_t th, Py_ssize_t tw):
    """z (16, fg, m * th * tw) = A g A^T of every 2x2 tile g of the head gradient
    gy[n0:n0 + m, f0:f0 + fg] (zeros past OH and OW): the adjoint of ``winograd_output``,
    for the weight gradient."""
    _tile_pass(z, gy, n0, f0, th, tw, GRAD, 0, 0, "z")
