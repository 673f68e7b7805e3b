"""Image operators (MXNet 1.x's ``_image_*``, ``mx.nd.image.<name>``): ``to_tensor``,
``normalize``, ``flip_left_right`` and ``flip_top_bottom``, the kernels behind Gluon's
``ToTensor`` and ``Normalize`` transforms.  Images are HxWxC (or NxHxWxC) before
``to_tensor`` and CxHxW (or NxCxHxW) float tensors after it, as in MXNet.

Kernels are NumPy (on a GPU context the inputs are copied to the host and the result
back).  ``_backward_image_normalize`` is the hidden gradient of ``normalize``: the head
gradient divided by each channel's std (linear, so its own gradient is itself).
"""

import numpy as np

from runtime._device import store, to_host
from runtime.ops._call import F
from runtime.ops.registry import Attr, float_input, register


def _hwc(op, shape):
    if len(shape) not in (3, 4):
        raise ValueError(f"{op}: data must be an image (H, W, C) or a batch of them "
                         f"(N, H, W, C) (got shape {shape!r})")


# -- to_tensor ----------------------------------------------------------------------------

def _to_tensor_shape(attrs, shapes):
    s = shapes[0]
    _hwc("_image_to_tensor", s)
    return [s[:-3] + (s[-1], s[-3], s[-2])]


def _to_tensor_type(attrs, dtypes):
    if dtypes[0].kind not in "uif":
        raise TypeError(f"_image_to_tensor: data must hold numbers (got {dtypes[0]})")
    return [np.dtype(np.float32)]


def _to_tensor(attrs, ins, outs):
    x = to_host(ins[0])
    axes = (2, 0, 1) if x.ndim == 3 else (0, 3, 1, 2)
    store(outs[0], x.transpose(axes).astype(np.float32) / np.float32(255))


register(
    "_image_to_tensor", infer_shape=_to_tensor_shape, infer_type=_to_tensor_type,
    compute=_to_tensor, differentiable=False,
    doc="""An image (H, W, C) or a batch (N, H, W, C) with values in [0, 255] as float32
(C, H, W) or (N, C, H, W) with values in [0, 1] (``x / 255``), as MXNet's
``image.to_tensor``.  Not differentiable: its gradient is zero (MXNet's is zero too).""")


# -- normalize -----------------------------------------------------------------------------

_NORM_ATTRS = {"mean": Attr("floats", (0.0,)), "std": Attr("floats", (1.0,))}


def _channels(op, attrs, shape):
    if len(shape) not in (3, 4):
        raise ValueError(f"{op}: data must be a tensor (C, H, W) or a batch of them "
                         f"(N, C, H, W) (got shape {shape!r})")
    c = shape[-3]
    if c not in (1, 3):
        raise ValueError(f"{op}: data must have 1 or 3 channels (got {c} in shape "
                         f"{shape!r})")
    for name in ("mean", "std"):
        if name in attrs and len(attrs[name]) not in (1, c):
            raise ValueError(f"{op}: {name} must hold 1 or {c} values for {c} channels "
                             f"(got {tuple(attrs[name])!r})")
    if not all(s != 0 for s in attrs["std"]):
        raise ValueError(f"{op}: std must not hold 0 (got {tuple(attrs['std'])!r})")


def _norm_shape(op):
    def infer(attrs, shapes):
        _channels(op, attrs, shapes[0])
        return [shapes[0]]
    return infer


# what to do with an image of integers before normalising it
_NORM_FIX = "apply ToTensor first (nd.image.to_tensor) or astype('float32')"


def _per_channel(values, dtype):
    return np.asarray(values, np.float64).reshape(-1, 1, 1).astype(dtype)


def _normalize(attrs, ins, outs):
    x = to_host(ins[0])
    mean, std = _per_channel(attrs["mean"], x.dtype), _per_channel(attrs["std"], x.dtype)
    store(outs[0], (x - mean) / std)


def _normalize_back(attrs, ins, outs):
    g = to_host(ins[0])
    store(outs[0], g / _per_channel(attrs["std"], g.dtype))


register(
    "_image_normalize", attrs=_NORM_ATTRS, infer_shape=_norm_shape("_image_normalize"),
    infer_type=float_input("_image_normalize", "data tensor", _NORM_FIX), compute=_normalize,
    gradient=lambda a, i, o, g: [F._backward_image_normalize(g[0], std=a["std"])],
    doc="""``(data - mean) / std`` per channel of a float tensor (C, H, W) or batch
(N, C, H, W) with 1 or 3 channels, as MXNet's ``image.normalize``; ``mean`` and ``std``
hold one value for every channel or one per channel (the defaults 0 and 1 are MXNet's
(0, 0, 0, 0) and (1, 1, 1, 1), which mean the same).  The output keeps the dtype.
Gradient: the head gradient divided by the channel's std.""")

register(
    "_backward_image_normalize", inputs=("grad",), attrs={"std": Attr("floats", (1.0,))},
    infer_shape=_norm_shape("_backward_image_normalize"),
    infer_type=float_input("_backward_image_normalize", "data tensor", _NORM_FIX), compute=_normalize_back,
    gradient=lambda a, i, o, g: [F._backward_image_normalize(g[0], std=a["std"])],
    doc="""Hidden: ``normalize``'s gradient, ``grad / std`` per channel (linear, so its
gradient is itself).""")


# -- flips ---------------------------------------------------------------------------------

def _flip_op(name, axis, what):
    def infer(attrs, shapes):
        _hwc(name, shapes[0])
        return [shapes[0]]

    def compute(attrs, ins, outs):
        outs[0][...] = ins[0][(Ellipsis, slice(None, None, -1)) + (slice(None),) * axis]

    register(name, infer_shape=infer, compute=compute,
             gradient=lambda a, i, o, g: [getattr(F, name)(g[0])],
             doc=f"""The image (H, W, C), or each of a batch (N, H, W, C), flipped {what},
as MXNet's ``image.{name[len('_image_'):]}``; any dtype.  Its gradient is the head gradient
flipped the same way.""")


_flip_op("_image_flip_left_right", 1, "left to right (the width axis reversed)")
_flip_op("_image_flip_top_bottom", 2, "top to bottom (the height axis reversed)")
