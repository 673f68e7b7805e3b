"""CNN operators: Convolution, Deconvolution, Pooling, UpSampling (MXNet 1.x names,
signatures, defaults and semantics; channel-first layouts NCW, NCHW, NCDHW).

Kernels (the same NumPy-style code runs on CuPy arrays on a GPU context):

- Convolution, 2-D 3x3 stride 1 (8 or more channels per group and an output width of 7
  or more, NumPy float32/float64): Winograd F(2x2, 3x3) (Lavin and Gray, 2016): the
  input's 4x4 tiles and the filters transformed, 16 GEMMs over all channels, the products
  transformed back (runtime/_conv_kernels), per chunk of samples and group.  Its rounding
  is that of direct summation (the transforms add, subtract and halve); the weight
  gradient runs the same transforms' adjoints.
- Other convolutions on NumPy float32/float64: the columns (cg * K, m * L) of a chunk of
  samples and one group gathered by runtime/_conv_kernels (im2col; rows in the weight's
  own (channel, kernel offset) order, so the weight is never copied into another
  layout), then one GEMM per chunk and group: ``w @ columns`` for the forward (its
  (fg, m, L) product copied channel-first by runs of L), ``grad @ columns.T`` for the
  weight gradient (the transpose is BLAS's flag; the product is the weight's layout).
  The columns are gathered again for the weight gradient rather than kept from the
  forward: the gather takes a fifth to a half of the GEMM's time on ResNet-18's layers,
  keeping them would hold K times the layer's input (9x for 3x3) per convolution until
  backward.  The bias is added once at the end.
- The data gradient of a convolution is a transposed convolution (MXNet's Deconvolution):
  one GEMM ``w.T @ grad`` per chunk and group gives the columns (BLAS's flag again: no
  flipped copy of the weight), which col2im adds back into the images (each thread owns
  whole images).  Where the stride-1 data gradient is a convolution that Winograd takes
  (the head gradient padded by dk - 1 - pad, the flipped transposed weight), it is that.
- CuPy arrays take the same steps written in NumPy style: a strided view of the (padded)
  input copied to columns, the col2im as one strided ``+=`` per kernel offset.
- Pooling: one elementwise pass per kernel offset over strided views of the input padded
  with the dtype's lowest value (max) or 0 (sum, avg, lp).  On NumPy float32/float64
  arrays max pooling, its gradient and the gradient's adjoint are one pass of a compiled
  kernel over the windows (runtime/_pool_kernels: the maximum, or the head gradient
  routed through each window's first maximum); otherwise argmax passes and a bincount.
  Max pooling on them in training mode keeps its route (where each window's first
  maximum sits, int64, the output's shape) in the call's state, the tape keeps that
  instead of the data, and the gradient is one scatter along it (PyTorch's
  max_pool2d_with_indices does the same).

Hidden helpers, so that every gradient rule is made of registry ops (and null requests
skip work: when only the weight needs a gradient, the data gradient is not computed):
``_conv_weight_grad`` (the weight gradient of Convolution and Deconvolution),
``_backward_Pooling`` (the data gradient of max, avg and sum pooling; lp builds on its
sum form), ``_pooling_max_pick`` (the values at the windows' argmax, the adjoint of
max pooling's gradient) and ``_pooling_route`` (the gradient along a kept route, and its
adjoint).
"""

import itertools
import math

import numpy as np

from runtime import _conv_kernels, _pool_kernels
from runtime._blas import matmul as _blas_matmul
from runtime._device import array_module, as_strided
from runtime._imperative import is_training
from runtime._ndarray import borrow
from runtime.ops._call import F, zeros
from runtime.ops.registry import Attr, float_input, register

_LAYOUTS = (None, "NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")
_CHANNEL_FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_CUDNN_TUNE = (None, "off", "limited_workspace", "fastest")


def _prod(t):
    return math.prod(t)


# -- attribute plans --------------------------------------------------------------------

def _check_layout(op, attrs, nd):
    layout = attrs["layout"]
    if layout is not None and layout != _CHANNEL_FIRST[nd]:
        if len(layout) != nd + 2:
            raise ValueError(f"{op}: layout {layout!r} does not fit {nd} spatial axes "
                             f"(want {_CHANNEL_FIRST[nd]!r})")
        raise NotImplementedError(f"{op}: layout {layout!r} is not supported (the "
                                  f"channel-first layouts NCW, NCHW, NCDHW are)")


def _tuple(op, attrs, name, nd, default, least):
    v = attrs[name]
    if not v:
        return (default,) * nd
    if len(v) != nd:
        raise ValueError(f"{op}: {name} must have {nd} entries, one per spatial axis of the "
                         f"{nd}-D kernel (got {name}={v!r})")
    if min(v) < least:
        rule = "positive" if least == 1 else "non-negative"
        raise ValueError(f"{op}: {name} must be {rule} (got {name}={v!r})")
    return tuple(v)


def _data_dims(op, shape, nd, what="data"):
    if len(shape) != nd + 2:
        raise ValueError(f"{op}: {what} must have {nd + 2} dimensions (batch, channel and "
                         f"{nd} spatial) for a {nd}-D kernel (got shape {shape!r})")


class _ConvPlan:
    """The normalised geometry of a convolution (or of the convolution a Deconvolution
    transposes): kernel, stride, dilate, pad, groups."""

    __slots__ = ("nd", "kernel", "stride", "dilate", "pad", "group")

    def __init__(self, op, attrs):
        kernel = attrs["kernel"]
        nd = len(kernel)
        if not 1 <= nd <= 3:
            raise ValueError(f"{op}: kernel must have 1, 2 or 3 entries (got "
                             f"kernel={kernel!r})")
        if any(k < 1 for k in kernel):
            raise ValueError(f"{op}: kernel must be positive (got kernel={kernel!r})")
        _check_layout(op, attrs, nd)
        self.nd, self.kernel = nd, tuple(kernel)
        self.stride = _tuple(op, attrs, "stride", nd, 1, 1)
        self.dilate = _tuple(op, attrs, "dilate", nd, 1, 1)
        self.pad = _tuple(op, attrs, "pad", nd, 0, 0)
        self.group = attrs["num_group"]
        if self.group < 1:
            raise ValueError(f"{op}: num_group must be >= 1 (got {self.group})")

    def dk(self, i):
        """The dilated kernel size along spatial axis ``i``."""
        return self.dilate[i] * (self.kernel[i] - 1) + 1

    def out_spatial(self, op, spatial):
        out = []
        for i, s in enumerate(spatial):
            span = s + 2 * self.pad[i]
            if self.dk(i) > span:
                raise ValueError(
                    f"{op}: the dilated kernel ({self.dk(i)}) is larger than the padded input "
                    f"({span}) along spatial axis {i} (kernel={self.kernel!r}, "
                    f"dilate={self.dilate!r}, pad={self.pad!r}, spatial shape "
                    f"{tuple(spatial)!r})")
            out.append((span - self.dk(i)) // self.stride[i] + 1)
        return tuple(out)

    def adj(self, spatial):
        """The ``adj`` of the transposed convolution that gives back ``spatial``."""
        return tuple((s + 2 * p - self.dk(i)) % t
                     for i, (s, p, t) in enumerate(zip(spatial, self.pad, self.stride)))

    def with_pad(self, pad):
        """This geometry with another ``pad``."""
        other = _ConvPlan.__new__(_ConvPlan)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other.pad = tuple(pad)
        return other

    def attrs(self, **extra):
        """Explicit attributes of this geometry for the F.<op> calls of the rules."""
        return dict(kernel=self.kernel, stride=self.stride, dilate=self.dilate, pad=self.pad,
                    num_group=self.group, **extra)


def _check_inputs(op, attrs, shapes):
    want = 2 if attrs["no_bias"] else 3
    if len(shapes) != want:
        names = "data, weight" if want == 2 else "data, weight, bias"
        raise TypeError(f"{op}: takes {want} array inputs ({names}) with "
                        f"no_bias={attrs['no_bias']} (got {len(shapes)})")


def _check_groups(op, plan, channels, nf, what="num_filter"):
    g = plan.group
    if channels % g:
        raise ValueError(f"{op}: the {channels} input channels are not divisible by "
                         f"num_group={g}")
    if nf % g:
        raise ValueError(f"{op}: {what}={nf} is not divisible by num_group={g}")


def _check_weight(op, shapes, want, attrs, nf):
    if shapes[1] != want:
        raise ValueError(f"{op}: weight must have shape {want!r} for data of shape "
                         f"{shapes[0]!r} (got {shapes[1]!r})")
    if not attrs["no_bias"] and shapes[2] != (nf,):
        raise ValueError(f"{op}: bias must have shape {(nf,)!r} (got {shapes[2]!r})")


def _layer_plan(op, attrs, shapes, weight_shape):
    """(plan, num_filter, data shape) of a Convolution or Deconvolution after checking
    the inputs; ``weight_shape(channels, num_filter, group)`` gives the weight's leading
    two axes."""
    _check_inputs(op, attrs, shapes)
    plan = _ConvPlan(op, attrs)
    nf = attrs["num_filter"]
    if nf < 1:
        raise ValueError(f"{op}: num_filter must be >= 1 (got {nf})")
    ds = shapes[0]
    _data_dims(op, ds, plan.nd)
    _check_groups(op, plan, ds[1], nf)
    _check_weight(op, shapes, weight_shape(ds[1], nf, plan.group) + plan.kernel, attrs, nf)
    return plan, nf, ds


def _conv_plan(attrs, shapes):
    op = "Convolution"
    plan, nf, ds = _layer_plan(op, attrs, shapes, lambda c, nf, g: (nf, c // g))
    return plan, (ds[0], nf) + plan.out_spatial(op, ds[2:])


def _deconv_plan(attrs, shapes):
    """(plan with the effective pad, adj, output shape) of a Deconvolution."""
    op = "Deconvolution"
    plan, nf, ds = _layer_plan(op, attrs, shapes, lambda c, nf, g: (c, nf // g))
    adj = _tuple(op, attrs, "adj", plan.nd, 0, 0)
    target = _tuple(op, attrs, "target_shape", plan.nd, 0, 0)
    full = tuple(t * (s - 1) + plan.dk(i) if s else 0
                 for i, (s, t) in enumerate(zip(ds[2:], plan.stride)))
    if any(target):
        pad, adj = [], []
        for i, (f, t) in enumerate(zip(full, target)):
            if t > f:
                raise ValueError(f"{op}: target_shape {target!r} is larger than the full "
                                 f"output {full!r} along spatial axis {i}")
            pad.append((f - t + 1) // 2)
            adj.append((f - t) % 2)
        plan.pad, adj = tuple(pad), tuple(adj)
    for i, (a, t) in enumerate(zip(adj, plan.stride)):
        if a >= t:
            raise ValueError(f"{op}: adj must be smaller than stride (got adj={adj!r}, "
                             f"stride={plan.stride!r})")
    out = []
    for i, (f, p, a) in enumerate(zip(full, plan.pad, adj)):
        o = f - 2 * p + a
        if ds[2 + i] and o < 1:
            raise ValueError(f"{op}: pad {plan.pad!r} leaves no output along spatial axis "
                             f"{i} (full output {full!r}, adj {adj!r})")
        out.append(max(o, 0))
    return plan, adj, (ds[0], nf) + tuple(out)


# -- kernels ----------------------------------------------------------------------------

def _padded(x, pad, fill=0, extra=None):
    """``x`` (N, C, *S) padded by ``pad`` on both sides of each spatial axis (and by
    ``extra`` more at the high end), filled with ``fill``; ``x`` itself without padding."""
    extra = extra or (0,) * len(pad)
    if not any(pad) and not any(extra):
        return x
    xp = array_module(x)
    shape = x.shape[:2] + tuple(s + 2 * p + e for s, p, e in zip(x.shape[2:], pad, extra))
    out = xp.full(shape, fill, x.dtype)
    out[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(pad, x.shape[2:]))] = x
    return out


def _windows(a, kernel, stride, dilate, out_spatial, kernel_first=True):
    """A strided view of ``a`` (N, C, *P): (N, C, *K, *O) (or (N, C, *O, *K))."""
    st = a.strides[2:]
    ks = tuple(s * d for s, d in zip(st, dilate))
    os_ = tuple(s * t for s, t in zip(st, stride))
    if kernel_first:
        return as_strided(a, a.shape[:2] + tuple(kernel) + tuple(out_spatial),
                           a.strides[:2] + ks + os_)
    return as_strided(a, a.shape[:2] + tuple(out_spatial) + tuple(kernel),
                       a.strides[:2] + os_ + ks)


def _contiguous_target(out):
    xp = array_module(out)
    return out if out.flags.c_contiguous else xp.empty(out.shape, out.dtype)


# Samples are taken in chunks whose columns fill about this many bytes: one GEMM per chunk
# and group (GEMMs over several samples run 2-3x faster than one per sample).
COL_BYTES = 64 << 20



def _chunks(n, per_sample, limit=None):
    """(start, count) of the sample chunks for columns of ``per_sample`` bytes each
    (about ``limit`` bytes a chunk, COL_BYTES by default)."""
    limit = COL_BYTES if limit is None else limit
    nb = max(1, min(n, limit // max(per_sample, 1)))
    return [(i, min(nb, n - i)) for i in range(0, n, nb)]


def _to_samples_last(nd):
    """Axes that move a (m, c, *K, *O) window view to (c, *K, m, *O)."""
    return (1,) + tuple(range(2, 2 + nd)) + (0,) + tuple(range(2 + nd, 2 + 2 * nd))


def _group_grad(gy, i, m, j, fg, length):
    """The head gradient of samples i:i+m and group j as a contiguous (fg, m * L)."""
    xp = array_module(gy)
    part = gy[i:i + m, j * fg:(j + 1) * fg].reshape(m, fg, length)
    return xp.ascontiguousarray(part.transpose(1, 0, 2)).reshape(fg, m * length)


def _sizes(plan, channels, filters, o_sp):
    """(channels per group, filters per group, output positions, kernel positions)."""
    g = plan.group
    return channels // g, filters // g, _prod(o_sp), _prod(plan.kernel)


def _column_chunks(plan, n, cg, o_sp, dtype, xp):
    """(start, count, columns) per chunk of samples: ``columns`` (cg, *K, count, *O) is
    a buffer reused from chunk to chunk."""
    col = None
    per_sample = cg * _prod(plan.kernel) * _prod(o_sp) * np.dtype(dtype).itemsize
    for i, m in _chunks(n, per_sample):
        if col is None or col.shape[plan.nd + 1] != m:
            col = xp.empty((cg,) + plan.kernel + (m,) + o_sp, dtype)
        yield i, m, col


# The NumPy-written forward (CuPy arrays, non-contiguous outputs) takes the channel-last
# columns with at least this many channels per group (contiguous runs of channels to copy).
CHANNEL_LAST_MIN = 16


def _conv_forward(plan, x, w, out):
    """out (N, F, *O) = the convolution of x (N, C, *S) with w (F, C/g, *K)."""
    o_sp = out.shape[2:]
    cg, fg, length, kk = _sizes(plan, x.shape[1], w.shape[0], o_sp)
    if out.size == 0:
        return
    if cg * kk == 0:
        out[...] = 0
    elif _winograd(plan, x, cg, o_sp[-1]) and out.flags.c_contiguous:
        _conv_forward_winograd(plan, x, w, out)
    elif _compiled(x, out):
        _conv_forward_compiled(plan, x, w, out)
    elif cg >= CHANNEL_LAST_MIN:
        _conv_forward_channel_last(plan, x, w, out)
    else:
        _conv_forward_channel_first(plan, x, w, out)


# -- Winograd F(2x2, 3x3) ---------------------------------------------------------------
# 2-D 3x3 stride-1 undilated convolutions of NumPy float32/float64 take Winograd: 16
# GEMMs over 4x4 tiles (runtime/_conv_kernels) do the work of im2col's 36 products per
# channel pair with 16, and no columns are copied; but the transforms cost a fixed time per
# row of tiles and per channel.  Taken with at least WINOGRAD_MIN channels per group and
# WINOGRAD_WIDE tile columns (output width 7 or more).  Measured against the compiled
# im2col + GEMM (one thread, ResNet-18's layers, batch 16; forward, data gradient, weight
# gradient): 64 channels 16x16 1.3x, 1.1x, 1.05x faster; 128 channels 8x8 1.5x, 1.3x,
# 1.15x; 2 tile columns, 256 channels 4x4 about even, 0.8x for the weight gradient; 1 tile
# column (512 channels 2x2) 0.5-0.8x.  Earlier, against a slower im2col: 8 -> 8 channels
# (56x56) 1.3x, 4 -> 64 0.3x (GEMMs of inner size 4).
WINOGRAD_MIN = 8
WINOGRAD_WIDE = 4

# G of F(2x2, 3x3) (Lavin and Gray, 2016): U = G g G^T is a filter's transform (B^T and
# A^T, the data's and the products', are written out in runtime/_conv_kernels).  As one
# product for all filters: U (16, F * C) = kron(G, G) (16, 9) @ g (F * C, 9).T.
_WINOGRAD_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
_WINOGRAD_K = np.kron(_WINOGRAD_G, _WINOGRAD_G)


def _winograd(plan, x, cg, out_width):
    tw = (out_width + 1) // 2
    return (array_module(x) is np and plan.nd == 2 and plan.kernel == (3, 3) and _unit_stride(plan)
            and plan.dilate == (1, 1) and x.dtype in (np.float32, np.float64)
            and cg >= WINOGRAD_MIN and tw >= WINOGRAD_WIDE)


def _winograd_tiles(plan, o_sp):
    """(tile rows, tile columns) of 2x2 tiles covering outputs o_sp."""
    return (o_sp[0] + 1) // 2, (o_sp[1] + 1) // 2


# Samples are transformed in chunks of about this many bytes of transforms and products:
# they stay in a core's L2 cache between the transform, the GEMM and the inverse
# transform (ResNet-18's 64-channel 16x16 layers, batch 16, one thread: forward and data
# gradient 1.7x faster than with 16 MiB chunks, weight gradient 1.2x; 0.5 MiB no faster).
WINOGRAD_BYTES = 1 << 20


# The planes of a transformed array start this many bytes past a multiple of 4 KiB apart.
# A tile's 16 transforms go to the 16 planes; planes a multiple of 4 KiB apart map them
# to one set of the L1 cache, which then misses on every tile (the data transform of
# ResNet-18's 64-channel 16x16 layers took 1.6x as long).
PLANE_SKEW = 256


def _winograd_planes(rows, cols, dtype):
    """An uninitialised (16, rows, cols) array of contiguous rows whose planes lie
    PLANE_SKEW bytes past a multiple of 4 KiB apart (each plane's rows contiguous)."""
    itemsize = np.dtype(dtype).itemsize
    plane = rows * cols * itemsize
    gap = (PLANE_SKEW - plane) % 4096
    flat = np.empty((16, (plane + gap) // itemsize), dtype)
    return flat[:, :rows * cols].reshape(16, rows, cols)


def _winograd_chunks(n, cg, fg, th, tw, dtype):
    """(start, data transforms V (16, cg, tiles), products (16, fg, tiles)) per chunk of
    samples, with th x tw tiles a sample; the buffers are reused from chunk to chunk."""
    v = mm = None
    per_sample = 16 * (cg + fg) * th * tw * np.dtype(dtype).itemsize
    for i, m in _chunks(n, per_sample, WINOGRAD_BYTES):
        if v is None or v.shape[2] != m * th * tw:
            v = _winograd_planes(cg, m * th * tw, dtype)
            mm = _winograd_planes(fg, m * th * tw, dtype)
        yield i, v, mm


def _conv_forward_winograd(plan, x, w, out):
    """out (N, F, OH, OW) = the convolution of x (N, C, H, W) with w (F, C/g, 3, 3):
    per chunk of samples and group, the input tiles' transforms V (16, cg, tiles), 16
    GEMMs ``U[k] @ V[k]`` with the filters' transforms U (16, fg, cg), and the products'
    inverse transform written into out."""
    x = np.ascontiguousarray(x)
    n, c = x.shape[:2]
    f = w.shape[0]
    cg, fg = c // plan.group, f // plan.group
    th, tw = _winograd_tiles(plan, out.shape[2:])
    u = _blas_matmul(_WINOGRAD_K.astype(x.dtype), w.reshape(f * cg, 9).T,
                     np.empty((16, f * cg), x.dtype)).reshape(16, f, cg)
    for i, v, mm in _winograd_chunks(n, cg, fg, th, tw, x.dtype):
        for j in range(plan.group):
            _conv_kernels.winograd_input(x, v, i, j * cg, plan.pad[0], plan.pad[1], th, tw)
            _blas_matmul(u[:, j * fg:(j + 1) * fg], v, mm)
            _conv_kernels.winograd_output(mm, out, i, j * fg, th, tw)


def _conv_weight_grad_winograd(plan, x, gy, out):
    """out (F, C/g, 3, 3) = the weight gradient of the Winograd forward: per chunk and
    group, the head gradient's tiles transformed by the adjoint of the output transform
    (Z, 16 x fg x tiles), 16 GEMMs ``Z[k] @ V[k].T`` summed into the gradient of U, which
    G^T dU G takes back to the filters."""
    x = np.ascontiguousarray(x)
    gy = np.ascontiguousarray(gy)
    n, c = x.shape[:2]
    f = gy.shape[1]
    cg, fg = c // plan.group, f // plan.group
    th, tw = _winograd_tiles(plan, gy.shape[2:])
    du = np.zeros((16, f, cg), out.dtype)
    part = np.empty((16, fg, cg), out.dtype)
    for i, v, z in _winograd_chunks(n, cg, fg, th, tw, x.dtype):
        for j in range(plan.group):
            _conv_kernels.winograd_input(x, v, i, j * cg, plan.pad[0], plan.pad[1], th, tw)
            _conv_kernels.winograd_grad_output(gy, z, i, j * fg, th, tw)
            _blas_matmul(z, v.transpose(0, 2, 1), part)
            du[:, j * fg:(j + 1) * fg] += part
    out[...] = _blas_matmul(_WINOGRAD_K.T.astype(out.dtype), du.reshape(16, f * cg),
                            np.empty((9, f * cg), out.dtype)).T.reshape(out.shape)


def _gemm(xp, a, b, out):
    """``out[...] = a @ b``: ``_blas.matmul`` on host arrays (MKL on ndrt's thread team
    where it is installed), the array module's matmul on CuPy's."""
    if xp is np:
        _blas_matmul(a, b, out)
    else:
        xp.matmul(a, b, out=out)


def _unit_stride(plan):
    return all(t == 1 for t in plan.stride)


def _flipped_transpose(plan, w):
    """The weight (C, F/g, *K) of the stride-1 convolution of the head gradient that is
    the data gradient of a convolution with weight ``w`` (F, C/g, *K): per group, the
    filter and channel axes swapped and the kernel reversed."""
    xp = array_module(w)
    g, nd = plan.group, plan.nd
    fg, cg = w.shape[0] // g, w.shape[1]
    wk = w.reshape((g, fg, cg) + plan.kernel).swapaxes(1, 2)
    wk = wk[(Ellipsis,) + (slice(None, None, -1),) * nd]
    return xp.ascontiguousarray(wk).reshape((g * cg, fg) + plan.kernel)


def _conv_forward_channel_first(plan, x, w, out):
    """Columns (cg, *K, m, *O) copied from the windows of x (runs of output positions),
    one GEMM ``w @ columns`` per chunk and group."""
    xp = array_module(x)
    o_sp = out.shape[2:]
    cg, fg, length, kk = _sizes(plan, x.shape[1], w.shape[0], o_sp)
    win = _windows(_padded(x, plan.pad), plan.kernel, plan.stride, plan.dilate, o_sp)
    wm = xp.ascontiguousarray(w).reshape(plan.group, fg, cg * kk)
    order = _to_samples_last(plan.nd)
    for i, m, col in _column_chunks(plan, x.shape[0], cg, o_sp, x.dtype, xp):
        res = xp.empty((fg, m) + o_sp, out.dtype)
        for j in range(plan.group):
            col[...] = win[i:i + m, j * cg:(j + 1) * cg].transpose(order)
            _gemm(xp, wm[j], col.reshape(cg * kk, m * length), res.reshape(fg, m * length))
            out[i:i + m, j * fg:(j + 1) * fg] = res.swapaxes(0, 1)


def _conv_forward_channel_last(plan, x, w, out):
    """x copied once to channel-last (N, *P, C) with its padding; columns (m, *O, cg, *K)
    (the weight's own order), one GEMM ``columns @ w.T`` per chunk and group, whose
    (m, *O, fg) result is written back channel-first."""
    xp = array_module(x)
    n, c = x.shape[:2]
    nd, o_sp = plan.nd, out.shape[2:]
    cg, fg, length, kk = _sizes(plan, c, w.shape[0], o_sp)
    spatial = x.shape[2:]
    xh = xp.zeros((n,) + tuple(s + 2 * p for s, p in zip(spatial, plan.pad)) + (c,), x.dtype)
    inner = tuple(slice(p, p + s) for p, s in zip(plan.pad, spatial))
    xh[(slice(None),) + inner] = xp.moveaxis(x, 1, -1)
    st = xh.strides
    win = as_strided(xh, (n,) + o_sp + (c,) + plan.kernel,
                      (st[0],) + tuple(st[1 + i] * plan.stride[i] for i in range(nd))
                      + (st[-1],) + tuple(st[1 + i] * plan.dilate[i] for i in range(nd)))
    wm = xp.ascontiguousarray(w).reshape(plan.group, fg, cg * kk)
    col = None
    for i, m in _chunks(n, cg * kk * length * x.itemsize):
        if col is None or col.shape[0] != m:
            col = xp.empty((m,) + o_sp + (cg,) + plan.kernel, x.dtype)
            res = xp.empty((m,) + o_sp + (fg,), out.dtype)
        for j in range(plan.group):
            col[...] = win[(slice(i, i + m),) + (slice(None),) * nd
                           + (slice(j * cg, (j + 1) * cg),)]
            _gemm(xp, col.reshape(m * length, cg * kk), wm[j].T,
                  res.reshape(m * length, fg))
            out[i:i + m, j * fg:(j + 1) * fg] = xp.moveaxis(res, -1, 1)


def _compiled(x, out=None):
    """Whether the compiled column kernels take ``x`` (NumPy float32/float64) and write
    ``out`` (C-contiguous) directly."""
    return (isinstance(x, np.ndarray) and x.dtype in (np.float32, np.float64)
            and (out is None or out.flags.c_contiguous))


def _geometry(plan, spatial, o_sp):
    """(``spatial`` as 3-D, the geometry arguments of the compiled column kernels): 1-D
    and 2-D convolutions are 3-D ones with unit leading axes."""
    lead = 3 - plan.nd
    one = (1,) * lead
    return one + tuple(spatial), (one + tuple(o_sp), one + plan.kernel, one + plan.stride,
                                  one + plan.dilate, (0,) * lead + plan.pad)


def _conv_forward_compiled(plan, x, w, out):
    """The columns (cg * K, m * L) gathered from x by runtime/_conv_kernels (no padded
    copy of x), one GEMM ``w @ columns`` per chunk and group (the weight in its own
    layout), its (fg, m, L) product copied into out by runs of L."""
    n, c = x.shape[:2]
    o_sp = out.shape[2:]
    cg, fg, length, kk = _sizes(plan, c, w.shape[0], o_sp)
    spatial, geometry = _geometry(plan, x.shape[2:], o_sp)
    x5 = np.ascontiguousarray(x).reshape((n, c) + spatial)
    wm = np.ascontiguousarray(w).reshape(plan.group, fg, cg * kk)
    flat = out.reshape(n, out.shape[1], length)
    col = res = None
    for i, m in _chunks(n, cg * kk * length * x.itemsize):
        if col is None or col.shape[1] != m * length:
            col = np.empty((cg * kk, m * length), x.dtype)
            res = np.empty((fg, m, length), out.dtype)
        for j in range(plan.group):
            _conv_kernels.im2col(x5, col, i, j * cg, *geometry)
            if m == 1:
                _blas_matmul(wm[j], col, flat[i, j * fg:(j + 1) * fg])
                continue
            _blas_matmul(wm[j], col, res.reshape(fg, m * length))
            flat[i:i + m, j * fg:(j + 1) * fg] = res.swapaxes(0, 1)


def _conv_data_grad_compiled(plan, gy, w, out):
    """One GEMM ``w.T @ grad`` per chunk and group gives the columns (cg * K, m * L) (the
    weight in its own layout, transposed by BLAS's flag: no flipped copy), which
    runtime/_conv_kernels adds back into the images of out (col2im)."""
    n, c = out.shape[:2]
    o_sp = gy.shape[2:]
    cg, fg, length, kk = _sizes(plan, c, w.shape[0], o_sp)
    spatial, geometry = _geometry(plan, out.shape[2:], o_sp)
    out5 = out.reshape((n, c) + spatial)
    wm = np.ascontiguousarray(w).reshape(plan.group, fg, cg * kk)
    col = None
    for i, m in _chunks(n, cg * kk * length * out.itemsize):
        if col is None or col.shape[1] != m * length:
            col = np.empty((cg * kk, m * length), out.dtype)
        for j in range(plan.group):
            _blas_matmul(wm[j].T, _group_grad(gy, i, m, j, fg, length), col)
            _conv_kernels.col2im(col, out5, i, j * cg, *geometry)


def _conv_weight_grad_compiled(plan, x, gy, out):
    """The columns (cg * K, m * L) of x gathered as for the forward, one GEMM ``grad @
    columns.T`` per chunk and group with the head gradient as (fg, m * L) (the columns'
    transpose is BLAS's flag): the product is the weight's own layout (fg, cg * K),
    summed over the chunks."""
    n, c = x.shape[:2]
    o_sp = gy.shape[2:]
    cg, fg, length, kk = _sizes(plan, c, gy.shape[1], o_sp)
    spatial, geometry = _geometry(plan, x.shape[2:], o_sp)
    x5 = np.ascontiguousarray(x).reshape((n, c) + spatial)
    target = _contiguous_target(out)
    acc = target.reshape(plan.group, fg, cg * kk)
    col = None
    for i, m in _chunks(n, cg * kk * length * x.itemsize):
        if col is None or col.shape[1] != m * length:
            col = np.empty((cg * kk, m * length), x.dtype)
        for j in range(plan.group):
            _conv_kernels.im2col(x5, col, i, j * cg, *geometry)
            _blas_matmul(_group_grad(gy, i, m, j, fg, length), col.T, acc[j], add=i > 0)
    if target is not out:
        out[...] = target


def _conv_data_grad(plan, gy, w, out):
    """out (N, C, *S) = the transposed convolution (col2im) of gy (N, F, *O) with
    w (F, C/g, *K): the data gradient of a convolution, and Deconvolution's forward."""
    xp = array_module(gy)
    o_sp = gy.shape[2:]
    cg, fg, length, kk = _sizes(plan, out.shape[1], w.shape[0], o_sp)
    if out.size == 0:
        return
    compiled = gy.size and _compiled(gy, out)
    if gy.size and fg * kk and _unit_stride(plan) and all(
            p <= plan.dk(i) - 1 for i, p in enumerate(plan.pad)):
        # stride 1: the convolution of gy padded by dk - 1 - pad with the flipped weight,
        # where that convolution is Winograd's (or the compiled kernels are not taken)
        back = plan.with_pad(tuple(plan.dk(i) - 1 - p for i, p in enumerate(plan.pad)))
        if not compiled or _winograd(back, gy, fg, out.shape[-1]):
            _conv_forward(back, gy, _flipped_transpose(plan, w), out)
            return
    if compiled:
        _conv_data_grad_compiled(plan, gy, w, out)
        return
    padded = xp.zeros(out.shape[:2] + tuple(s + 2 * p for s, p in
                                            zip(out.shape[2:], plan.pad)), out.dtype)
    if gy.size:
        win = _windows(padded, plan.kernel, plan.stride, plan.dilate, o_sp)
        wt = xp.ascontiguousarray(w).reshape(plan.group, fg, cg * kk).transpose(0, 2, 1)
        offsets = list(itertools.product(*(range(k) for k in plan.kernel)))
        order = _to_samples_last(plan.nd)
        for i, m, col in _column_chunks(plan, out.shape[0], cg, o_sp, out.dtype, xp):
            for j in range(plan.group):
                _gemm(xp, wt[j], _group_grad(gy, i, m, j, fg, length),
                      col.reshape(cg * kk, m * length))
                # col2im: the columns (cg, *K, m, *O) added through the windows
                view = win[i:i + m, j * cg:(j + 1) * cg].transpose(order)
                for k in offsets:
                    idx = (slice(None),) + k
                    view[idx] += col[idx]
    out[...] = padded[(Ellipsis,) + tuple(slice(p, p + s)
                                          for p, s in zip(plan.pad, out.shape[2:]))]


def _conv_weight_grad_kernel(plan, x, gy, out):
    """out (F, C/g, *K) = the weight gradient of the convolution of x (N, C, *S) that
    gave gy (N, F, *O)."""
    xp = array_module(x)
    o_sp = gy.shape[2:]
    cg, fg, length, kk = _sizes(plan, x.shape[1], gy.shape[1], o_sp)
    if x.shape[0] and length and _winograd(plan, x, cg, o_sp[-1]):
        _conv_weight_grad_winograd(plan, x, gy, out)
        return
    if x.shape[0] and length and cg * kk and fg and _compiled(x):
        _conv_weight_grad_compiled(plan, x, gy, out)
        return
    acc = xp.zeros((plan.group, fg, cg * kk), out.dtype)
    if x.shape[0] and length and cg * kk:
        win = _windows(_padded(x, plan.pad), plan.kernel, plan.stride, plan.dilate, o_sp)
        order = _to_samples_last(plan.nd)
        part = xp.empty((cg * kk, fg), out.dtype)
        for i, m, col in _column_chunks(plan, x.shape[0], cg, o_sp, x.dtype, xp):
            for j in range(plan.group):
                col[...] = win[i:i + m, j * cg:(j + 1) * cg].transpose(order)
                # (columns @ grad.T).T: OpenBLAS runs this form of the long-inner GEMM
                # several times faster than grad @ columns.T
                _gemm(xp, col.reshape(cg * kk, m * length),
                      _group_grad(gy, i, m, j, fg, length).T, part)
                acc[j] += part.T
    out[...] = acc.reshape(out.shape)


def _float32_accumulation(compute):
    """``compute`` run on float32 copies of float16 inputs, its result rounded once into
    the float16 outputs (MXNet's accumulation type; NumPy's float16 GEMMs are slow and
    round at every step)."""
    def run(attrs, ins, outs):
        if ins[0].dtype != np.float16:
            return compute(attrs, ins, outs)
        wide = [o.astype(np.float32) for o in outs]
        compute(attrs, [a.astype(np.float32) for a in ins], wide)
        for o, w in zip(outs, wide):
            o[...] = w
    return run


def _bias(out, b):
    if b is not None and out.size:
        out += b.reshape((-1,) + (1,) * (out.ndim - 2))


# -- Convolution ------------------------------------------------------------------------

def _conv_shape(attrs, shapes):
    return [_conv_plan(attrs, shapes)[1]]


def _conv_inputs(attrs, shapes):
    # weight (num_filter, C / num_group, *kernel) and bias (num_filter,) from data
    data = shapes[0]
    if data is not None and len(data) >= 2:
        shapes[1] = shapes[1] or ((attrs["num_filter"], data[1] // attrs["num_group"])
                                  + tuple(attrs["kernel"]))
    if len(shapes) > 2:
        shapes[2] = shapes[2] or (attrs["num_filter"],)
    return shapes


def _same_float_type(op):
    check = float_input(op, "data")

    def infer(attrs, dtypes):
        check(attrs, dtypes)
        for name, d in zip(("weight", "bias"), dtypes[1:]):
            if d != dtypes[0]:
                raise TypeError(f"{op}: {name} must have data's dtype {dtypes[0]} (got {d})")
        return [dtypes[0]]
    return infer


@_float32_accumulation
def _conv(attrs, ins, outs):
    x, w = ins[0], ins[1]
    plan, _ = _conv_plan(attrs, [a.shape for a in ins])
    out = _contiguous_target(outs[0])
    _conv_forward(plan, x, w, out)
    _bias(out, None if attrs["no_bias"] else ins[2])
    if out is not outs[0]:
        outs[0][...] = out


def _spatial_axes(nd):
    return (0,) + tuple(range(2, nd + 2))


def _conv_grad(attrs, inputs, outputs, out_grads, needs=(True, True, True)):
    x, w = inputs[0], inputs[1]
    g = out_grads[0]
    plan, _ = _conv_plan(attrs, [x.shape, w.shape] + ([] if attrs["no_bias"]
                                                      else [(attrs["num_filter"],)]))
    dx = dw = None
    if needs[0]:
        dx = zeros(x) if x.size == 0 else F.Deconvolution(
            g, w, **plan.attrs(adj=plan.adj(x.shape[2:]), num_filter=x.shape[1],
                               no_bias=True))
    if needs[1]:
        dw = F._conv_weight_grad(x, g, **plan.attrs())
    if attrs["no_bias"]:
        return [dx, dw]
    return [dx, dw, F.sum(g, axis=_spatial_axes(plan.nd)) if needs[2] else None]


_COMMON = {"kernel": Attr("shape", required=True), "stride": Attr("shape", ()),
           "dilate": Attr("shape", ()), "pad": Attr("shape", ())}
_CUDNN = {"cudnn_tune": Attr("str", None, choices=_CUDNN_TUNE),
          "cudnn_off": Attr("bool", False),
          "layout": Attr("str", None, choices=_LAYOUTS)}

register(
    "Convolution", inputs=("data", "weight", "bias"), variadic=True,
    attrs={**_COMMON, "num_filter": Attr("int", required=True),
           "num_group": Attr("int", 1), "workspace": Attr("int", 1024),
           "no_bias": Attr("bool", False), **_CUDNN},
    infer_shape=_conv_shape, infer_type=_same_float_type("Convolution"), compute=_conv,
    infer_inputs=_conv_inputs,
    gradient=_conv_grad, grad_inputs=(0, 1),
    doc="""Convolution over 1, 2 or 3 spatial axes (MXNet's ``Convolution``; layouts NCW,
NCHW, NCDHW): ``data`` (N, C, *S), ``weight`` (num_filter, C / num_group, *kernel),
``bias`` (num_filter,) (absent with ``no_bias=True``).  ``stride`` and ``dilate``
default to 1, ``pad`` (zeros on both sides) to 0; the output has
``(S + 2 * pad - dilate * (kernel - 1) - 1) // stride + 1`` positions per spatial axis.
``num_group`` splits the channels into groups convolved apart.  ``workspace``,
``cudnn_tune`` and ``cudnn_off`` are accepted and ignored; a channel-last ``layout`` is
refused (NotImplementedError).  The data gradient is a Deconvolution of the head gradient
with the same weight; the weight gradient is ``_conv_weight_grad``; each is computed only
when requested.""")


# -- Deconvolution ----------------------------------------------------------------------

def _deconv_shape(attrs, shapes):
    return [_deconv_plan(attrs, shapes)[2]]


def _deconv_inputs(attrs, shapes):
    # weight (C, num_filter / num_group, *kernel) and bias (num_filter,) from data
    data = shapes[0]
    if data is not None and len(data) >= 2:
        shapes[1] = shapes[1] or ((data[1], attrs["num_filter"] // attrs["num_group"])
                                  + tuple(attrs["kernel"]))
    if len(shapes) > 2:
        shapes[2] = shapes[2] or (attrs["num_filter"],)
    return shapes


@_float32_accumulation
def _deconv(attrs, ins, outs):
    x, w = ins[0], ins[1]
    plan, _, _ = _deconv_plan(attrs, [a.shape for a in ins])
    out = _contiguous_target(outs[0])
    _conv_data_grad(plan, x, w, out)
    _bias(out, None if attrs["no_bias"] else ins[2])
    if out is not outs[0]:
        outs[0][...] = out


def _deconv_grad(attrs, inputs, outputs, out_grads, needs=(True, True, True)):
    x, w = inputs[0], inputs[1]
    g = out_grads[0]
    nf = attrs["num_filter"]
    plan, _, _ = _deconv_plan(attrs, [x.shape, w.shape] + ([] if attrs["no_bias"]
                                                           else [(nf,)]))
    dx = dw = None
    if needs[0]:
        dx = zeros(x) if x.size == 0 else F.Convolution(
            g, w, **plan.attrs(num_filter=x.shape[1], no_bias=True))
    if needs[1]:
        dw = F._conv_weight_grad(g, x, **plan.attrs())
    if attrs["no_bias"]:
        return [dx, dw]
    return [dx, dw, F.sum(g, axis=_spatial_axes(plan.nd)) if needs[2] else None]


register(
    "Deconvolution", inputs=("data", "weight", "bias"), variadic=True,
    attrs={**_COMMON, "adj": Attr("shape", ()), "target_shape": Attr("shape", ()),
           "num_filter": Attr("int", required=True), "num_group": Attr("int", 1),
           "workspace": Attr("int", 512), "no_bias": Attr("bool", True), **_CUDNN},
    infer_shape=_deconv_shape, infer_type=_same_float_type("Deconvolution"),
    infer_inputs=_deconv_inputs, compute=_deconv, gradient=_deconv_grad, grad_inputs=(0, 1),
    doc="""Transposed convolution (MXNet's ``Deconvolution``), the data gradient of a
Convolution with the same geometry: ``data`` (N, C, *S), ``weight`` (C, num_filter /
num_group, *kernel), ``bias`` (num_filter,) only with ``no_bias=False`` (the default is
True, as MXNet's).  The output has ``stride * (S - 1) + dilate * (kernel - 1) + 1 -
2 * pad + adj`` positions per spatial axis; ``adj`` must be smaller than ``stride``.  A
non-zero ``target_shape`` sets the output size instead: pad and adj are then derived
from it as MXNet does (``pad = (full - target + 1) // 2``, ``adj = (full - target) %
2``).  The data gradient is a Convolution of the head gradient; the weight gradient is
``_conv_weight_grad``.""")


# -- _conv_weight_grad ------------------------------------------------------------------

def _wgrad_plan(attrs, shapes):
    op = "_conv_weight_grad"
    plan = _ConvPlan(op, attrs)
    ds, gs = shapes
    _data_dims(op, ds, plan.nd)
    _data_dims(op, gs, plan.nd, "grad")
    _check_groups(op, plan, ds[1], gs[1], "grad's channel count")
    want = ds[:1] + (gs[1],) + plan.out_spatial(op, ds[2:])
    if gs != want:
        raise ValueError(f"{op}: grad must have shape {want!r} for data of shape {ds!r} "
                         f"(got {gs!r})")
    return plan, (gs[1], ds[1] // plan.group) + plan.kernel


@_float32_accumulation
def _wgrad(attrs, ins, outs):
    plan, _ = _wgrad_plan(attrs, [a.shape for a in ins])
    _conv_weight_grad_kernel(plan, ins[0], ins[1], outs[0])


def _wgrad_grad(attrs, inputs, outputs, out_grads):
    x, gy = inputs
    h = out_grads[0]
    plan, _ = _wgrad_plan(attrs, [x.shape, gy.shape])
    dx = zeros(x) if x.size == 0 else F.Deconvolution(
        gy, h, **plan.attrs(adj=plan.adj(x.shape[2:]), num_filter=x.shape[1], no_bias=True))
    dg = zeros(gy) if gy.size == 0 else F.Convolution(
        x, h, **plan.attrs(num_filter=gy.shape[1], no_bias=True))
    return [dx, dg]


register(
    "_conv_weight_grad", inputs=("data", "grad"),
    attrs={**{k: _COMMON[k] for k in ("kernel", "stride", "dilate", "pad")},
           "num_group": Attr("int", 1), "layout": Attr("str", None, choices=_LAYOUTS)},
    infer_shape=lambda attrs, shapes: [_wgrad_plan(attrs, shapes)[1]],
    infer_type=_same_float_type("_conv_weight_grad"), compute=_wgrad,
    gradient=_wgrad_grad, grad_inputs=(0, 1),
    doc="""Hidden: the weight gradient (F, C / num_group, *kernel) of the convolution of
``data`` (N, C, *S) whose head gradient is ``grad`` (N, F, *O): one GEMM per chunk of
samples and group over the im2col columns (Winograd's adjoint where the forward is
Winograd's).  Also Deconvolution's weight gradient (the roles of its
data and head gradient swapped).""")


# -- Pooling ----------------------------------------------------------------------------

_POOL_TYPES = ("avg", "lp", "max", "sum")


class _PoolPlan:
    __slots__ = ("nd", "kernel", "stride", "pad", "out", "extra", "kind", "p",
                 "include_pad")

    def __init__(self, op, attrs, shape):
        kind = attrs["pool_type"]
        if len(shape) < 3 or len(shape) > 5:
            raise ValueError(f"{op}: data must have 3, 4 or 5 dimensions (batch, channel and "
                             f"1 to 3 spatial) (got shape {shape!r})")
        nd = len(shape) - 2
        _check_layout(op, attrs, nd)
        spatial = shape[2:]
        if attrs["global_pool"]:
            if not all(spatial):
                raise ValueError(f"{op}: global pooling needs non-empty spatial axes (got "
                                 f"shape {shape!r})")
            kernel, stride, pad = tuple(spatial), (1,) * nd, (0,) * nd
        else:
            kernel = attrs["kernel"]
            if not kernel:
                raise ValueError(f"{op}: kernel must be given unless global_pool=True "
                                 f"(got kernel=())")
            if len(kernel) != nd:
                raise ValueError(f"{op}: kernel must have {nd} entries for data of shape "
                                 f"{shape!r} (got kernel={kernel!r})")
            if any(k < 1 for k in kernel):
                raise ValueError(f"{op}: kernel must be positive (got kernel={kernel!r})")
            stride = _tuple(op, attrs, "stride", nd, 1, 1)
            pad = _tuple(op, attrs, "pad", nd, 0, 0)
        full = attrs["pooling_convention"] == "full" and not attrs["global_pool"]
        out, extra = [], []
        for i, (s, k, t, p) in enumerate(zip(spatial, kernel, stride, pad)):
            span = s + 2 * p
            if k > span:
                raise ValueError(f"{op}: kernel {kernel!r} is larger than the padded input "
                                 f"along spatial axis {i} (spatial shape {tuple(spatial)!r}, "
                                 f"pad {pad!r})")
            o = 1 + (-(-(span - k) // t) if full else (span - k) // t)
            out.append(o)
            extra.append(max((o - 1) * t + k - span, 0))   # 'full': windows past the pad
        if kind == "lp" and attrs["p_value"] not in (1, 2, 3):
            raise ValueError(f"{op}: p_value must be 1, 2 or 3 for pool_type='lp' (got "
                             f"p_value={attrs['p_value']!r})")
        self.nd, self.kernel, self.stride, self.pad = nd, tuple(kernel), stride, pad
        self.out, self.extra, self.kind, self.p = tuple(out), tuple(extra), kind, attrs["p_value"]
        cip = attrs["count_include_pad"]
        self.include_pad = True if cip is None else cip

    def offsets(self):
        return list(itertools.product(*(range(k) for k in self.kernel)))

    def windows(self, a):
        """(N, C, *O, *K) view of ``a`` padded (or of the padded gradient buffer)."""
        return _windows(a, self.kernel, self.stride, (1,) * self.nd, self.out, False)

    def counts(self, spatial, xp, dtype):
        """avg's divisor per output position, MXNet's rule: the window clipped to the
        padded input (to the input itself without count_include_pad)."""
        total = None
        for i, (s, k, t, p, o) in enumerate(zip(spatial, self.kernel, self.stride, self.pad,
                                                self.out)):
            start = np.arange(o) * t - p
            end = np.minimum(start + k, s + p)
            if self.include_pad:
                size = end - start
            else:
                size = np.minimum(end, s) - np.maximum(start, 0)
            shape = [1] * self.nd
            shape[i] = o
            size = size.reshape(shape)
            total = size if total is None else total * size
        return xp.asarray(total.astype(dtype))

    def pad_spec(self):
        return self.pad, self.extra


def _pool_plan(attrs, shape):
    return _PoolPlan("Pooling", attrs, shape)


def _pool_shape(attrs, shapes):
    plan = _pool_plan(attrs, shapes[0])
    return [shapes[0][:2] + plan.out]


def _pool_fill(kind, dtype):
    """The padding of max pooling is the dtype's lowest finite value, MXNet's initial
    maximum: a window of padding only (possible with 'full') gives it, as MXNet does."""
    return np.finfo(dtype).min if kind == "max" else 0


def _pool_forward(plan, x, out, route=None):
    """out = the pooling of x; ``route`` (int64, out's shape; max pooling of float32 or
    float64 NumPy arrays only): where each window's first maximum sits, filled too."""
    xp = array_module(x)
    if out.size == 0:
        return
    kind = plan.kind
    if (kind == "max" and xp is np and x.dtype in (np.float32, np.float64)
            and out.flags.c_contiguous):
        lead = 3 - plan.nd
        _pool_kernels.max_pool(_planes(plan, x), _planes(plan, out),
                               (1,) * lead + plan.kernel, (1,) * lead + plan.stride,
                               (0,) * lead + plan.pad, _pool_fill("max", x.dtype),
                               None if route is None else _planes(plan, route))
        return
    xpad = _padded(x, plan.pad, _pool_fill(kind, x.dtype), plan.extra)
    win = plan.windows(xpad)
    offs = plan.offsets()
    lead = (slice(None),) * (2 + plan.nd)
    acc = out
    if kind == "max":
        acc[...] = win[lead + offs[0]]
        for k in offs[1:]:
            xp.maximum(acc, win[lead + k], out=acc)
        return
    if kind == "lp" and plan.p != 1:
        xpad = xpad * xpad if plan.p == 2 else xpad * xpad * xpad
        win = plan.windows(xpad)
    acc[...] = win[lead + offs[0]]
    for k in offs[1:]:
        xp.add(acc, win[lead + k], out=acc)
    if kind == "avg":
        with np.errstate(invalid="ignore"):    # 0 / 0 where a window is all padding
            acc /= plan.counts(x.shape[2:], xp, x.dtype)
    elif kind == "lp" and plan.p == 2:
        xp.sqrt(acc, out=acc)
    elif kind == "lp" and plan.p == 3:
        xp.cbrt(acc, out=acc)


def _argmax_offsets(plan, x):
    """The index into plan.offsets() of each max-pooling window's first maximum (MXNet:
    the first maximum in row-major window order): the maximum, then one pass per offset
    from the last to the first marking where the window equals it."""
    xp = array_module(x)
    xpad = _padded(x, plan.pad, _pool_fill("max", x.dtype), plan.extra)
    win = plan.windows(xpad)
    offs = plan.offsets()
    lead = (slice(None),) * (2 + plan.nd)
    best = win[lead + offs[0]].copy()
    for k in offs[1:]:
        xp.maximum(best, win[lead + k], out=best)
    n = len(offs)
    arg = xp.zeros(best.shape, np.uint8 if n <= 255 else np.int16 if n <= 32767 else np.int32)
    m = xp.empty(best.shape, bool)
    for i in range(n - 1, -1, -1):
        xp.equal(win[lead + offs[i]], best, out=m)
        xp.copyto(arg, i, where=m)
    return arg


def _max_scatter(plan, g, x_shape, arg):
    """The max-pooling gradient in the padded layout (float64): each head gradient added
    at its window's maximum, by one bincount over flat positions."""
    xp = array_module(g)
    n, c = x_shape[:2]
    padded = tuple(s + 2 * p + e for s, p, e in zip(x_shape[2:], plan.pad, plan.extra))
    steps = [_prod(padded[i + 1:]) for i in range(plan.nd)]     # element strides
    size = _prod(padded)
    base = (xp.arange(n * c, dtype=np.int64) * size).reshape((n, c) + (1,) * plan.nd)
    for i, (o, t) in enumerate(zip(plan.out, plan.stride)):
        shape = [1] * (2 + plan.nd)
        shape[2 + i] = o
        base = base + (xp.arange(o, dtype=np.int64) * (t * steps[i])).reshape(shape)
    delta = xp.asarray(np.array([sum(k[i] * steps[i] for i in range(plan.nd))
                                 for k in plan.offsets()], np.int64))
    flat = (base + delta[arg]).reshape(-1)
    return xp.bincount(flat, weights=g.reshape(-1), minlength=n * c * size).reshape(
        (n, c) + padded)


def _pool_backward(plan, g, x_shape, dtype, arg, out):
    """out (the data's shape) = the data gradient of Pooling for head gradient ``g``
    (max: ``arg`` from :func:`_argmax_offsets`; sum and avg: x is not read)."""
    xp = array_module(g)
    if out.size == 0:
        return
    crop = (Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(plan.pad, x_shape[2:]))
    if plan.kind == "max":
        if g.size:
            out[...] = _max_scatter(plan, g, x_shape, arg)[crop]
        else:
            out[...] = 0
        return
    direct = not any(plan.pad) and not any(plan.extra) and out.flags.c_contiguous
    # windows that tile the data exactly: each position is written once, never added to
    tiled = direct and all(k == t and s == o * t for k, t, s, o in
                           zip(plan.kernel, plan.stride, x_shape[2:], plan.out))
    if direct:
        buf = out
        if not tiled or not g.size:
            buf[...] = 0
    else:
        buf = xp.zeros(x_shape[:2] + tuple(s + 2 * p + e for s, p, e in
                                           zip(x_shape[2:], plan.pad, plan.extra)), dtype)
    if g.size:
        if plan.kind == "avg":
            with np.errstate(invalid="ignore", divide="ignore"):
                g = g / plan.counts(x_shape[2:], xp, dtype)
        if tiled:
            # each position in exactly one window: g repeated along the last axis, then one
            # broadcast write into the data seen as (N, C, O_0, K_0, ..., S_last) (a 6-D
            # broadcast with inner runs of K_last values is 1.6x slower)
            rows = xp.repeat(g, plan.kernel[-1], axis=-1)
            blocks = buf.reshape(x_shape[:2] + sum(zip(plan.out[:-1], plan.kernel[:-1]), ())
                                 + x_shape[-1:])
            blocks[...] = rows[(slice(None),) * 2 + (slice(None), None) * (plan.nd - 1)]
        else:
            win = plan.windows(buf)
            lead = (slice(None),) * (2 + plan.nd)
            for k in plan.offsets():
                win[lead + k] += g
    if not direct:
        out[...] = buf[crop]


class _PoolState:
    """Pooling's per-call state: ``keep`` (max pooling in training mode: keep its route)
    and ``route``, the position in its plane of each window's first maximum (int64, the
    output's shape; None when the compiled kernel did not run), which the gradient
    sends the head gradient through instead of finding the maxima again.  Training mode,
    not recording, decides: a static graph's plan runs its forward unrecorded, in the
    training mode its backward plan was made for."""

    __slots__ = ("keep", "route")

    def __init__(self, keep):
        self.keep = keep
        self.route = None


def _pool_prepare(attrs):
    return _PoolState(attrs["pool_type"] == "max" and is_training())


@_float32_accumulation
def _pool_values(attrs, ins, outs):
    plan = _pool_plan(attrs, ins[0].shape)
    out = _contiguous_target(outs[0])
    _pool_forward(plan, ins[0], out)
    if out is not outs[0]:
        outs[0][...] = out


def _pool(attrs, ins, outs, state):
    x, out = ins[0], outs[0]
    if (state.keep and type(x) is np.ndarray and x.dtype in (np.float32, np.float64)
            and out.flags.c_contiguous and out.size):
        route = np.empty(out.shape, np.int64)
        _pool_forward(_pool_plan(attrs, x.shape), x, out, route)
        state.route = route
        return
    _pool_values(attrs, ins, outs)


def _pool_attrs(attrs):
    """Pooling's attributes of ``attrs`` for an F.<op> call (None ones left to default)."""
    return {k: attrs[k] for k in _POOL_ATTRS if attrs[k] is not None}


def _pool_grad(attrs, inputs, outputs, out_grads, state=None):
    x, g = inputs[0], out_grads[0]
    kind = attrs["pool_type"]
    if state is not None and state.route is not None:
        route = borrow(state.route, state.route.ctypes.data, state.route.shape,
                       state.route.dtype, g.ctx)
        return [F._pooling_route(g, route, data_shape=x.shape)]
    back = {**_pool_attrs(attrs), "data_shape": x.shape}
    if kind == "max":
        return [F._backward_Pooling(g, x, **back)]
    if kind in ("avg", "sum"):
        return [F._backward_Pooling(g, **back)]
    p = attrs["p_value"]
    y = outputs[0]
    back["pool_type"] = "sum"
    if p == 1:
        return [F._backward_Pooling(g, **back)]
    if p == 2:
        return [x * F._backward_Pooling(g / y, **back)]
    return [x * x * F._backward_Pooling(g / (y * y), **back)]


def _pool_reads_in(attrs, n):
    state = attrs.get("_state")
    if state is not None and state.route is not None:
        return ()                     # the route the forward kept replaces the data
    kind = attrs["pool_type"]
    return (0,) if kind == "max" or (kind == "lp" and attrs["p_value"] != 1) else ()


def _pool_reads_out(attrs, n):
    return (0,) if attrs["pool_type"] == "lp" and attrs["p_value"] != 1 else ()


_POOL_ATTRS = {
    "kernel": Attr("shape", ()),
    "pool_type": Attr("str", "max", choices=_POOL_TYPES),
    "global_pool": Attr("bool", False),
    "cudnn_off": Attr("bool", False),
    "pooling_convention": Attr("str", "valid", choices=("full", "valid")),
    "stride": Attr("shape", ()),
    "pad": Attr("shape", ()),
    "p_value": Attr("int", None),
    "count_include_pad": Attr("bool", None),
    "layout": Attr("str", None, choices=_LAYOUTS),
}

register(
    "Pooling", attrs=_POOL_ATTRS, infer_shape=_pool_shape, infer_type=float_input("Pooling"),
    compute=_pool, prepare=_pool_prepare, gradient=_pool_grad, grad_inputs=_pool_reads_in,
    grad_outputs=_pool_reads_out,
    doc="""Pooling over 1, 2 or 3 spatial axes (MXNet's ``Pooling``; layouts NCW, NCHW,
NCDHW).  ``pool_type``: 'max' (padding never wins), 'avg' (divided by the window clipped
to the padded input, or to the input itself with ``count_include_pad=False``; the default
None counts the padding, as MXNet), 'sum', 'lp' (``(sum x ** p) ** (1 / p)`` with
``p_value`` 1, 2 or 3, as MXNet: no absolute value).  ``stride`` defaults to 1 and
``pad`` to 0 (MXNet's operator defaults; Gluon's layers pass stride=kernel).
``pooling_convention`` 'valid' gives ``(S + 2 * pad - kernel) // stride + 1`` positions,
'full' rounds up (windows may reach past the padding; those positions are ignored; a
window of padding only gives the dtype's lowest value for max and, without
count_include_pad, NaN for avg, as MXNet).  MXNet's 'same' (1-D max pooling only) is not
supported.
``global_pool=True`` pools each whole spatial extent (kernel, stride and pad ignored).
Gradients: max sends each head gradient to the window's first maximum (MXNet); avg and
sum spread it; lp is ``x ** (p - 1) * y ** (1 - p)`` times the spread.  ``cudnn_off`` is
ignored; a channel-last ``layout`` is refused (NotImplementedError).""")


def _bpool_plan(attrs, shapes):
    op = "_backward_Pooling"
    kind, ds = attrs["pool_type"], attrs["data_shape"]
    if kind == "lp":
        raise ValueError(f"{op}: pool_type must be 'max', 'avg' or 'sum' (got 'lp')")
    want = 2 if kind == "max" else 1
    if len(shapes) != want:
        names = "grad, data" if want == 2 else "grad"
        raise TypeError(f"{op}: takes {want} array input(s) ({names}) with "
                        f"pool_type={kind!r} (got {len(shapes)})")
    if kind == "max" and shapes[1] != ds:
        raise ValueError(f"{op}: data must have shape data_shape={ds!r} (got "
                         f"{shapes[1]!r})")
    plan = _PoolPlan(op, attrs, ds)
    want_g = ds[:2] + plan.out
    if shapes[0] != want_g:
        raise ValueError(f"{op}: grad must have shape {want_g!r} for data_shape={ds!r} "
                         f"(got {shapes[0]!r})")
    return plan


def _bpool_type(attrs, dtypes):
    float_input("_backward_Pooling", "grad")(attrs, dtypes)
    if len(dtypes) > 1 and dtypes[1] != dtypes[0]:
        raise TypeError(f"_backward_Pooling: data must have grad's dtype {dtypes[0]} (got "
                        f"{dtypes[1]})")
    return [dtypes[0]]


def _planes(plan, a):
    """``a`` (N, C, *S) as the C-contiguous (N * C, D, H, W) of the routing kernel."""
    lead = (1,) * (3 - plan.nd)
    return np.ascontiguousarray(a).reshape((-1,) + lead + a.shape[2:])


def _max_route(plan, x, src, dst, scatter):
    """Max pooling's routing by the compiled kernel, for NumPy arrays (False otherwise):
    ``scatter`` the head gradient ``src`` to the windows' maxima of ``x`` into ``dst``
    (x's shape), or read ``src`` (x's shape) there into ``dst`` (the pooled shape)."""
    if not isinstance(x, np.ndarray) or x.dtype not in (np.float32, np.float64):
        return False
    target = _contiguous_target(dst)
    lead = 3 - plan.nd
    _pool_kernels.max_pool_route(
        _planes(plan, x), _planes(plan, src), _planes(plan, target),
        (1,) * lead + plan.kernel, (1,) * lead + plan.stride, (0,) * lead + plan.pad,
        _pool_fill("max", x.dtype), scatter)
    if target is not dst:
        dst[...] = target
    return True


@_float32_accumulation
def _bpool(attrs, ins, outs):
    g = ins[0]
    plan = _bpool_plan(attrs, [a.shape for a in ins])
    shape = attrs["data_shape"]
    if plan.kind == "max" and g.size and outs[0].size and _max_route(plan, ins[1], g,
                                                                      outs[0], True):
        return
    arg = _argmax_offsets(plan, ins[1]) if plan.kind == "max" and g.size else None
    _pool_backward(plan, g, shape, outs[0].dtype, arg, outs[0])


def _bpool_grad(attrs, inputs, outputs, out_grads):
    h = out_grads[0]
    pool = _pool_attrs(attrs)
    if attrs["pool_type"] == "max":
        return [F._pooling_max_pick(inputs[1], h, **pool), None]
    return [F.Pooling(h, **pool)]


register(
    "_backward_Pooling", inputs=("grad", "data"), variadic=True,
    attrs={**_POOL_ATTRS, "data_shape": Attr("shape", required=True)},
    infer_shape=lambda attrs, shapes: [_bpool_plan(attrs, shapes) and attrs["data_shape"]],
    infer_type=_bpool_type, compute=_bpool, gradient=_bpool_grad,
    grad_inputs=lambda attrs, n: (1,) if attrs["pool_type"] == "max" else (),
    doc="""Hidden: the data gradient (shape ``data_shape``) of Pooling (pool_type max, avg
or sum) for head gradient ``grad``.  Only max takes ``data`` (each head gradient goes to
its window's first maximum); avg and sum take ``grad`` alone.  Linear in ``grad``: its
gradient is Pooling (avg, sum) or ``_pooling_max_pick`` (max); ``data`` gets none
(max's choice is piecewise constant in it).""")


def _pick_shape(attrs, shapes):
    op = "_pooling_max_pick"
    ds, vs = shapes
    if attrs["pool_type"] != "max":
        raise ValueError(f"{op}: pool_type must be 'max' (got {attrs['pool_type']!r})")
    if vs != ds:
        raise ValueError(f"{op}: values must have data's shape {ds!r} (got {vs!r})")
    plan = _PoolPlan(op, attrs, ds)
    return [ds[:2] + plan.out]


def _pick(attrs, ins, outs):
    x, v = ins
    plan = _PoolPlan("_pooling_max_pick", attrs, x.shape)
    out = outs[0]
    if out.size == 0 or _max_route(plan, x, v, out, False):
        return
    arg = _argmax_offsets(plan, x)
    win = plan.windows(_padded(v, plan.pad, 0, plan.extra))
    lead = (slice(None),) * (2 + plan.nd)
    xp = array_module(x)
    for i, k in enumerate(plan.offsets()):
        if i == 0:
            out[...] = win[lead + k]
        else:
            xp.copyto(out, win[lead + k], where=arg == i)


def _pick_grad(attrs, inputs, outputs, out_grads):
    x, v = inputs
    return [None, F._backward_Pooling(out_grads[0], x, data_shape=x.shape,
                                      **_pool_attrs(attrs))]


register(
    "_pooling_max_pick", inputs=("data", "values"), attrs=_POOL_ATTRS,
    infer_shape=_pick_shape,
    infer_type=lambda attrs, dtypes: _bpool_type(attrs, dtypes[::-1]), compute=_pick,
    gradient=_pick_grad, grad_inputs=(0,),
    doc="""Hidden: ``values`` (data's shape) read at the position of each max-pooling
window's first maximum of ``data``: the adjoint of max pooling's gradient.""")


def _route_shape(attrs, shapes):
    op = "_pooling_route"
    ds, rs = tuple(shapes[0]), tuple(shapes[1])
    want = tuple(attrs["data_shape"])
    if len(want) < 3 or len(rs) != len(want) or rs[:2] != want[:2]:
        raise ValueError(f"{op}: route must have data_shape's batch and channel axes and "
                         f"its number of dimensions (at least 3) (got route {rs!r}, "
                         f"data_shape={want!r})")
    if attrs["scatter"]:
        if ds != rs:
            raise ValueError(f"{op}: data must have route's shape {rs!r} with "
                             f"scatter=True (got {ds!r})")
        return [want]
    if ds != want:
        raise ValueError(f"{op}: data must have shape data_shape={want!r} with "
                         f"scatter=False (got {ds!r})")
    return [rs]


def _route_type(attrs, dtypes):
    float_input("_pooling_route")(attrs, dtypes[:1])
    if np.dtype(dtypes[1]) != np.int64:
        raise TypeError(f"_pooling_route: route must have dtype int64 (got "
                        f"{np.dtype(dtypes[1])})")
    return [dtypes[0]]


def _route_compute(attrs, ins, outs):
    src, route = ins
    out = outs[0]
    if out.size == 0:
        return
    work = src if src.dtype != np.float16 else src.astype(np.float32)
    dst = _contiguous_target(out) if out.dtype == work.dtype else np.empty(out.shape,
                                                                            work.dtype)
    n = route.shape[0] * route.shape[1]
    kernel = _pool_kernels.route_scatter if attrs["scatter"] else _pool_kernels.route_gather
    kernel(np.ascontiguousarray(work).reshape(n, work.size // n),
           np.ascontiguousarray(route).reshape(n, route.size // n),
           dst.reshape(n, dst.size // n))
    if dst is not out:
        out[...] = dst


def _route_grad(attrs, inputs, outputs, out_grads):
    src, route = inputs
    return [F._pooling_route(out_grads[0], route, data_shape=attrs["data_shape"],
                             scatter=not attrs["scatter"]), None]


register(
    "_pooling_route", inputs=("data", "route"),
    attrs={"data_shape": Attr("shape", required=True), "scatter": Attr("bool", True)},
    infer_shape=_route_shape, infer_type=_route_type, compute=_route_compute,
    gradient=_route_grad, grad_inputs=(1,),
    doc="""Hidden: max pooling's routing by the ``route`` its forward kept (int64, the
pooled shape (N, C, *O): the position of each window's first maximum in its (N, C)
plane of the data, -1 for a window of padding only).  ``scatter=True``: the data
gradient, of shape ``data_shape`` (N, C, *S): zero, and each ``data`` value (the head
gradient, route's shape) added at its route.  ``scatter=False``: the adjoint, ``data``
(of data_shape) read at each route (0 at -1).  Each is linear in ``data`` and the
other's adjoint: the gradient of one is the other; ``route`` gets none.""")


# -- UpSampling -------------------------------------------------------------------------

def _up_plan(attrs, shapes):
    """(output shape, per-input scale factor) of UpSampling."""
    op = "UpSampling"
    n = len(shapes)
    if attrs["num_args"] is not None and attrs["num_args"] != n:
        raise ValueError(f"{op}: num_args is {attrs['num_args']} but {n} arrays were given")
    s = attrs["scale"]
    if s < 1:
        raise ValueError(f"{op}: scale must be >= 1 (got {s})")
    for i, sh in enumerate(shapes):
        if len(sh) != 4:
            raise ValueError(f"{op}: input {i} must have 4 dimensions (N, C, H, W) (got "
                             f"shape {sh!r})")
    if attrs["sample_type"] == "bilinear":
        if n != 2:
            raise ValueError(f"{op}: sample_type='bilinear' takes 2 array inputs (data, "
                             f"weight) (got {n})")
        ds, ws = shapes
        want = (ds[1], 1, 2 * s - s % 2, 2 * s - s % 2)
        if ws != want:
            raise ValueError(f"{op}: weight must have shape {want!r} for data of shape "
                             f"{ds!r} and scale={s} (got {ws!r})")
        return (ds[0], ds[1], ds[2] * s, ds[3] * s), None
    first = shapes[0]
    oh, ow = first[2] * s, first[3] * s
    factors = []
    for i, sh in enumerate(shapes):
        if sh[0] != first[0]:
            raise ValueError(f"{op}: input {i} has batch size {sh[0]}, input 0 has "
                             f"{first[0]}")
        if not sh[2] or not sh[3] or oh % sh[2] or ow % sh[3] or oh // sh[2] != ow // sh[3]:
            raise ValueError(f"{op}: input {i} of shape {sh!r} cannot be scaled to the "
                             f"output size {(oh, ow)!r} by one integer factor")
        factors.append(oh // sh[2])
    if attrs["multi_input_mode"] == "sum":
        for i, sh in enumerate(shapes):
            if sh[1] != first[1]:
                raise ValueError(f"{op}: multi_input_mode='sum' needs one channel count "
                                 f"(input {i} has {sh[1]}, input 0 has {first[1]})")
        c = first[1]
    else:
        c = sum(sh[1] for sh in shapes)
    return (first[0], c, oh, ow), factors


def _bilinear_attrs(s, c):
    return dict(kernel=(2 * s - s % 2,) * 2, stride=(s, s), pad=((s - 1 + 1) // 2,) * 2,
                num_filter=c, num_group=c, no_bias=True)


def _up_shape(attrs, shapes):
    return [_up_plan(attrs, shapes)[0]]


def _up_type(attrs, dtypes):
    float_input("UpSampling", "data")(attrs, dtypes)
    for i, d in enumerate(dtypes[1:], 1):
        if d != dtypes[0]:
            raise TypeError(f"UpSampling: input {i} must have input 0's dtype {dtypes[0]} "
                            f"(got {d})")
    return [dtypes[0]]


def _up(attrs, ins, outs):
    shape, factors = _up_plan(attrs, [a.shape for a in ins])
    out = outs[0]
    if factors is None:
        s = attrs["scale"]
        kw = _bilinear_attrs(s, ins[0].shape[1])
        plan, _, _ = _deconv_plan({**kw, "dilate": (), "adj": (), "target_shape": (),
                                   "layout": None}, [ins[0].shape, ins[1].shape])
        target = _contiguous_target(out)
        _conv_data_grad(plan, ins[0], ins[1], target)
        if target is not out:
            out[...] = target
        return
    if out.size == 0:
        return
    n, _, oh, ow = shape
    summed = attrs["multi_input_mode"] == "sum"
    c0 = 0
    for x, f in zip(ins, factors):
        c, h, w = x.shape[1:]
        dst = out if summed else out[:, c0:c0 + c]
        view = dst.reshape(n, c, h, f, w, f) if dst.flags.c_contiguous else None
        src = x[:, :, :, None, :, None]
        if view is None:
            xp = array_module(x)
            up = xp.broadcast_to(src, (n, c, h, f, w, f)).reshape(n, c, oh, ow)
            if summed and c0:
                dst += up
            else:
                dst[...] = up
        elif summed and c0:
            view += src
        else:
            view[...] = src
        c0 += c


def _up_grad(attrs, inputs, outputs, out_grads):
    g = out_grads[0]
    shapes = [x.shape for x in inputs]
    _, factors = _up_plan(attrs, shapes)
    if factors is None:
        kw = _bilinear_attrs(attrs["scale"], shapes[0][1])
        return _deconv_grad({**kw, "dilate": (), "adj": (), "target_shape": (),
                             "layout": None}, inputs, outputs, out_grads)
    summed = attrs["multi_input_mode"] == "sum"
    grads, c0 = [], 0
    for sh, f in zip(shapes, factors):
        n, c, h, w = sh
        part = g if summed else F.slice_axis(g, axis=1, begin=c0, end=c0 + c)
        if 0 in sh:
            grads.append(zeros(inputs[0], sh))
        elif f == 1:
            grads.append(part)
        else:
            grads.append(F.sum(part.reshape((n, c, h, f, w, f)), axis=(3, 5)))
        c0 += c
    return grads


register(
    "UpSampling", inputs=("data",), variadic=True,
    attrs={"scale": Attr("int", required=True), "num_filter": Attr("int", 0),
           "sample_type": Attr("str", "nearest", choices=("bilinear", "nearest")),
           "multi_input_mode": Attr("str", "concat", choices=("concat", "sum")),
           "num_args": Attr("int"), "workspace": Attr("int", 512)},
    infer_shape=_up_shape, infer_type=_up_type, compute=_up, gradient=_up_grad,
    grad_inputs=lambda attrs, n: (0, 1) if attrs["sample_type"] == "bilinear" else (),
    doc="""Upsampling of (N, C, H, W) arrays by ``scale`` (MXNet's ``UpSampling``).
'nearest' repeats each value in a scale x scale block; with several inputs the output
has input 0's spatial size times ``scale`` and each input is repeated by the integer
factor that reaches it, then the results are concatenated along the channels
(``multi_input_mode='concat'``) or added (``'sum'``, one channel count).  'bilinear'
takes (data, weight) and is MXNet's depthwise Deconvolution with kernel ``2 * scale -
scale % 2``, stride ``scale`` and pad ``ceil((scale - 1) / 2)``; weight has shape (C, 1,
k, k) (initialise it with a bilinear filter).  ``num_args`` if given must equal the
number of arrays; ``num_filter`` and ``workspace`` are accepted and ignored.
``sample_type`` defaults to 'nearest' (MXNet requires it).""")
