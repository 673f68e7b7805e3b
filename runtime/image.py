"""Images (MXNet's ``mx.image``): reading and decoding files into HxWxC NDArrays,
resizing and cropping them, and :class:`ImageIter`, batches of images from a RecordIO
file or an image list.

Decoding and encoding files need Pillow (the ``image`` extra); without it those calls
raise ImportError saying so, and everything else works.  Images are RGB, uint8, HxWxC
(MXNet's layout; MXNet decodes with OpenCV, whose ``to_rgb=False`` gives BGR, which
ndrt also honours).  Resizing is ndrt's own NumPy code with OpenCV's sampling grid
(half-pixel centres, edges clamped) and kernels (nearest, bilinear, bicubic, area,
Lanczos), so results match OpenCV's to within one unit of uint8 rounding (OpenCV
computes in fixed point).
"""

import json
import os

import numpy as np

from runtime import _image_codec, nd, recordio
from runtime import _rng as _random
from runtime.io._ndarray_iter import DataBatch, DataDesc, DataIter

__all__ = ["imread", "imdecode", "imencode", "imresize", "resize_short", "scale_down",
           "fixed_crop", "center_crop", "random_crop", "random_size_crop", "color_normalize",
           "copyMakeBorder",
           "imrotate", "random_rotate", "ImageIter", "Augmenter", "SequentialAug",
           "RandomOrderAug", "ResizeAug", "ForceResizeAug", "RandomCropAug",
           "RandomSizedCropAug", "CenterCropAug", "CastAug", "BrightnessJitterAug",
           "ContrastJitterAug", "SaturationJitterAug", "HueJitterAug", "ColorJitterAug",
           "LightingAug", "ColorNormalizeAug", "RandomGrayAug", "HorizontalFlipAug",
           "CreateAugmenter"]

INTERPOLATIONS = (0, 1, 2, 3, 4)


def _host(src, who):
    if isinstance(src, nd.NDArray):
        return src.asnumpy()
    if isinstance(src, np.ndarray):
        return src
    raise TypeError(f"{who}: src must be an NDArray or a NumPy array (got "
                    f"{type(src).__name__})")


def _mode(who, flag):
    if flag not in (0, 1):
        raise ValueError(f"{who}: flag must be 0 (grey) or 1 (colour) (got {flag!r})")
    return "L" if flag == 0 else "RGB"


def _finish(img, flag, to_rgb, out=None):
    if flag == 0:
        img = img[:, :, None]
    elif not to_rgb:
        img = img[:, :, ::-1]
    img = np.ascontiguousarray(img)
    if out is not None:
        if out.shape != img.shape or np.dtype(out.dtype) != np.uint8:
            raise ValueError(f"imdecode: out must be a uint8 array of shape {img.shape} "
                             f"(got {out.dtype} of shape {out.shape})")
        out[:] = img
        return out
    return nd.array(img, dtype=np.uint8)


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decode the image file held by the bytes ``buf`` into a uint8 HxWxC NDArray.

    Parameters
    ----------
    buf : bytes, bytearray, NumPy uint8 array or NDArray of uint8
    flag : {1, 0}
        1: three colour channels; 0: one grey channel (HxWx1).
    to_rgb : bool
        Channels in RGB order (True) or BGR (False, OpenCV's own order).
    out : NDArray, optional
        Where to write the image (its shape must match).
    """
    if isinstance(buf, nd.NDArray):
        buf = buf.asnumpy().tobytes()
    elif isinstance(buf, np.ndarray):
        buf = buf.tobytes()
    elif not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"imdecode: buf must be bytes or a uint8 array (got "
                        f"{type(buf).__name__})")
    return _finish(_image_codec.decode(buf, _mode("imdecode", flag)), flag, to_rgb, out)


def imread(filename, flag=1, to_rgb=True, out=None):
    """Read the image file ``filename`` into a uint8 HxWxC NDArray (see :func:`imdecode`)."""
    if not os.path.isfile(filename):
        raise FileNotFoundError(f"imread: no image file at {filename!r}")
    return _finish(_image_codec.read(filename, _mode("imread", flag)), flag, to_rgb, out)


def imencode(img, img_fmt=".jpg", quality=95):
    """The bytes of the uint8 HxWxC (RGB) image ``img`` as an image file."""
    return _image_codec.encode(_host(img, "imencode"), img_fmt, quality)


# -- resizing ------------------------------------------------------------------------------

def _taps(n_in, n_out, interp):
    """The (n_out, n_in) float64 matrix that resamples one axis as OpenCV's ``resize``
    does: its sampling grid (half-pixel centres), its kernels (bicubic with A = -0.75,
    Lanczos over 8 taps, area as pixel coverage when shrinking) and its border
    (indices clamped to the edge)."""
    scale = n_in / n_out
    out = np.arange(n_out)
    w = np.zeros((n_out, n_in))
    if interp == 0:
        w[out, np.minimum(np.floor(out * scale).astype(np.int64), n_in - 1)] = 1
        return w
    if interp == 3 and scale > 1:          # area: the share of each source pixel covered
        lo, hi = out * scale, (out + 1) * scale
        src = np.arange(n_in)
        cover = np.clip(np.minimum(hi[:, None], src + 1) - np.maximum(lo[:, None], src), 0, None)
        return cover / scale
    if interp == 3:                        # area when enlarging: OpenCV's linear variant
        start = np.floor(out * scale)
        t = (out + 1) - (start + 1) / scale
        t = np.where(t <= 0, 0, t - np.floor(t))
        offsets, kernel = np.arange(2), np.stack([1 - t, t], axis=1)
    else:
        f = (out + 0.5) * scale - 0.5
        start = np.floor(f)
        t = f - start
        if interp == 1:
            offsets, kernel = np.arange(2), np.stack([1 - t, t], axis=1)
        elif interp == 2:
            a = -0.75
            d = np.stack([t + 1, t, 1 - t, 2 - t], axis=1)
            near = ((a + 2) * d - (a + 3)) * d * d + 1
            far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
            offsets, kernel = np.arange(-1, 3), np.where(d <= 1, near, far)
        else:
            d = t[:, None] + 3 - np.arange(8)
            kernel = np.sinc(d) * np.sinc(d / 4)
            offsets, kernel = np.arange(-3, 5), kernel / kernel.sum(axis=1, keepdims=True)
    if interp in (1, 3):
        # OpenCV keeps the edge pixel's own value where the grid leaves the image
        below, above = start < 0, start >= n_in - 1
        kernel[below | above] = [1, 0]
        start = np.where(below, 0, np.where(above, n_in - 1, start))
    cols = np.clip(start[:, None].astype(np.int64) + offsets, 0, n_in - 1)
    np.add.at(w, (np.repeat(out, len(offsets)), cols.ravel()), kernel.ravel())
    return w


def _resize_array(img, w, h, interp):
    """``img`` (HxWxC NumPy) resized to width ``w``, height ``h``."""
    ih, iw = img.shape[:2]
    if interp == 0:
        rows = np.minimum((np.arange(h) * (ih / h)).astype(np.int64), ih - 1)
        cols = np.minimum((np.arange(w) * (iw / w)).astype(np.int64), iw - 1)
        return img[rows][:, cols]
    ry = _taps(ih, h, interp).astype(np.float32)
    rx = _taps(iw, w, interp).astype(np.float32)
    x = np.einsum("hi,iwc->hwc", ry, img.astype(np.float32))
    x = np.einsum("wj,hjc->hwc", rx, x)
    if np.issubdtype(img.dtype, np.integer):
        info = np.iinfo(img.dtype)
        return np.clip(np.floor(x + 0.5), info.min, info.max).astype(img.dtype)
    return x.astype(img.dtype)


def _check_size(who, w, h):
    for name, v in (("w", w), ("h", h)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{who}: {name} must be a positive integer (got {v!r})")


def _check_interp(who, interp):
    if interp not in INTERPOLATIONS:
        raise ValueError(f"{who}: interp must be one of {INTERPOLATIONS} (0 nearest, "
                         f"1 bilinear, 2 bicubic, 3 area, 4 Lanczos) (got {interp!r})")


def _as_hwc(who, src):
    img = _host(src, who)
    if img.ndim != 3:
        raise ValueError(f"{who}: src must be an HxWxC image (got shape {img.shape})")
    return img


def imresize(src, w, h, interp=1, out=None):
    """``src`` (HxWxC) resized to width ``w`` and height ``h``.

    ``interp``: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos, each on OpenCV's
    grid and kernel.  Returns an NDArray of ``src``'s dtype."""
    _check_size("imresize", w, h)
    _check_interp("imresize", interp)
    res = _resize_array(_as_hwc("imresize", src), int(w), int(h), interp)
    if out is not None:
        out[:] = res
        return out
    return nd.array(res, dtype=res.dtype)


def resize_short(src, size, interp=2):
    """``src`` resized so that its shorter side is ``size``, keeping the aspect ratio
    (the longer side rounded down, as MXNet)."""
    _check_size("resize_short", size, size)
    img = _as_hwc("resize_short", src)
    h, w = img.shape[:2]
    if h > w:
        new_w, new_h = size, size * h // w
    else:
        new_w, new_h = size * w // h, size
    return imresize(img, new_w, new_h, interp)


def scale_down(src_size, size):
    """``size`` = (w, h) scaled down, keeping its aspect ratio, to fit in ``src_size``."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """The ``w`` x ``h`` window of ``src`` at (``x0``, ``y0``), resized to ``size`` =
    (w, h) when given."""
    img = _as_hwc("fixed_crop", src)
    if x0 < 0 or y0 < 0 or w < 1 or h < 1 or x0 + w > img.shape[1] or y0 + h > img.shape[0]:
        raise ValueError(f"fixed_crop: the window (x0={x0}, y0={y0}, w={w}, h={h}) must lie "
                         f"inside the image of size {img.shape[1]}x{img.shape[0]}")
    out = img[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        _check_interp("fixed_crop", interp)
        out = _resize_array(out, int(size[0]), int(size[1]), interp)
    return nd.array(np.ascontiguousarray(out), dtype=out.dtype)


def _wh(who, size):
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (size, size)
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise ValueError(f"{who}: size must be an int or (width, height) (got {size!r})")
    _check_size(who, *size)
    return int(size[0]), int(size[1])


def center_crop(src, size, interp=2):
    """The centre window of ``src`` of ``size`` = (w, h) (scaled down to fit, then
    resized to ``size``); returns ``(image, (x0, y0, w, h))``."""
    w, h = _wh("center_crop", size)
    img = _as_hwc("center_crop", src)
    ih, iw = img.shape[:2]
    new_w, new_h = scale_down((iw, ih), (w, h))
    x0, y0 = int((iw - new_w) / 2), int((ih - new_h) / 2)
    return fixed_crop(img, x0, y0, new_w, new_h, (w, h), interp), (x0, y0, new_w, new_h)


def random_crop(src, size, interp=2):
    """A random window of ``src`` of ``size`` = (w, h) (scaled down to fit, then resized
    to ``size``); returns ``(image, (x0, y0, w, h))``."""
    w, h = _wh("random_crop", size)
    img = _as_hwc("random_crop", src)
    ih, iw = img.shape[:2]
    new_w, new_h = scale_down((iw, ih), (w, h))
    rng = _random.generator()
    x0 = int(rng.integers(0, iw - new_w + 1))
    y0 = int(rng.integers(0, ih - new_h + 1))
    return fixed_crop(img, x0, y0, new_w, new_h, (w, h), interp), (x0, y0, new_w, new_h)


def random_size_crop(src, size, area, ratio, interp=2):
    """A random window covering a fraction ``area`` = (min, max) of ``src`` (or
    (``area``, 1) for a number) with aspect ratio w/h in ``ratio`` = (min, max) (drawn
    log-uniformly), resized to ``size``; after 10 draws that do not fit, the centre
    crop.  Returns ``(image, (x0, y0, w, h))``."""
    w, h = _wh("random_size_crop", size)
    img = _as_hwc("random_size_crop", src)
    ih, iw = img.shape[:2]
    if isinstance(area, (int, float, np.number)):
        area = (area, 1.0)
    rng = _random.generator()
    log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
    for _ in range(10):
        target = rng.uniform(area[0], area[1]) * ih * iw
        new_ratio = np.exp(rng.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target * new_ratio)))
        new_h = int(round(np.sqrt(target / new_ratio)))
        if 0 < new_w <= iw and 0 < new_h <= ih:
            x0 = int(rng.integers(0, iw - new_w + 1))
            y0 = int(rng.integers(0, ih - new_h + 1))
            return fixed_crop(img, x0, y0, new_w, new_h, (w, h), interp), (x0, y0, new_w,
                                                                             new_h)
    return center_crop(img, (w, h), interp)


# OpenCV's border types (cv::BorderTypes) and NumPy's pad modes that do the same
_BORDERS = {0: "constant", 1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}


def _pad_width(who, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{who}: {name} must be an int >= 0 (got {value!r})")
    return int(value)


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None):  # noqa: N802,A002
    """``src`` (HxWxC) with ``top``/``bot`` rows and ``left``/``right`` columns added
    around it (MXNet's ``mx.image.copyMakeBorder``, OpenCV's ``copyMakeBorder``).

    ``type``: 0 constant (``value``, or one value per channel in ``values``), 1 replicate
    the edge, 2 reflect (``fedcba|abcdefgh|hgfedcb``), 3 wrap around, 4 reflect without
    repeating the edge (``gfedcb|abcdefgh|gfedcba``).  Returns an NDArray of ``src``'s
    dtype (into ``out`` when given)."""
    who = "copyMakeBorder"
    img = _as_hwc(who, src)
    widths = [_pad_width(who, n, v) for n, v in
              (("top", top), ("bot", bot), ("left", left), ("right", right))]
    if type not in _BORDERS:
        raise ValueError(f"{who}: type must be one of {sorted(_BORDERS)} (0 constant, 1 "
                         f"replicate, 2 reflect, 3 wrap, 4 reflect_101) (got {type!r})")
    pad = ((widths[0], widths[1]), (widths[2], widths[3]), (0, 0))
    mode = _BORDERS[type]
    if mode != "constant":
        if any(widths) and 0 in img.shape[:2]:
            raise ValueError(f"{who}: a border of type {type} needs a non-empty image (got "
                             f"shape {img.shape})")
        res = np.pad(img, pad, mode=mode)
    else:
        fill = np.asarray(values if len(values) else [value], np.float64).reshape(-1)
        if fill.size not in (1, img.shape[2]):
            raise ValueError(f"{who}: values must hold one value per channel ({img.shape[2]}) "
                             f"(got {len(values)})")
        res = np.empty((img.shape[0] + widths[0] + widths[1],
                        img.shape[1] + widths[2] + widths[3], img.shape[2]), img.dtype)
        if img.dtype.kind in "iu":      # OpenCV's saturate_cast: round, then clip
            info = np.iinfo(img.dtype)
            fill = np.clip(np.rint(fill), info.min, info.max)
        res[...] = fill.astype(img.dtype)
        res[widths[0]:widths[0] + img.shape[0], widths[2]:widths[2] + img.shape[1]] = img
    if out is not None:
        out[:] = res
        return out
    return nd.array(res, dtype=res.dtype)


def color_normalize(src, mean, std=None):
    """``(src - mean) / std`` (float32), channel-wise for HxWxC images."""
    img = _host(src, "color_normalize").astype(np.float32)
    img = img - _host(mean, "color_normalize") if isinstance(mean, (nd.NDArray, np.ndarray)) \
        else img - np.float32(mean)
    if std is not None:
        img = img / (_host(std, "color_normalize") if isinstance(std, (nd.NDArray, np.ndarray))
                     else np.float32(std))
    return nd.array(img)


# -- rotation --------------------------------------------------------------------------------

def _bilinear_sample(src, x, y):
    """``src`` (N, C, H, W) sampled at pixel coordinates ``x``, ``y`` (N, Ho, Wo) with
    bilinear weights, a neighbour outside the image counting as 0 (MXNet's
    ``BilinearSampler``)."""
    n, c, h, w = src.shape
    x0, y0 = np.floor(x), np.floor(y)
    wx, wy = (x - x0).astype(src.dtype), (y - y0).astype(src.dtype)
    x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
    out = np.zeros((n, c) + x.shape[1:], src.dtype)
    batch = np.arange(n).reshape(n, 1, 1)
    for dy, fy in ((0, 1 - wy), (1, wy)):
        for dx, fx in ((0, 1 - wx), (1, wx)):
            xi, yi = x0 + dx, y0 + dy
            inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            v = src[batch, :, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]  # N,Ho,Wo,C
            weight = np.where(inside, fy * fx, 0).astype(src.dtype)
            out += np.moveaxis(v * weight[..., None], -1, 1)
    return out


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """``src`` rotated by ``rotation_degrees`` about its centre (counter-clockwise as
    displayed, rows down, for a positive angle: 90 is ``np.rot90``), keeping its shape;
    the area outside the source is 0 (MXNet's ``mx.image.imrotate``).

    Parameters
    ----------
    src : NDArray
        A CxHxW image or an NxCxHxW batch, float32 (apply ``ToTensor`` first).
    rotation_degrees : float or NDArray
        The angle: a number, or for a batch one per image (a 1-D NDArray).
    zoom_in, zoom_out : bool
        Scale so that no padding shows (``zoom_in``) or so that the whole source shows
        (``zoom_out``); not both.
    """
    if zoom_in and zoom_out:
        raise ValueError("imrotate: zoom_in and zoom_out must not both be True (got "
                         "zoom_in=True, zoom_out=True)")
    if not isinstance(src, nd.NDArray):
        raise TypeError(f"imrotate: src must be an NDArray (got {type(src).__name__})")
    if np.dtype(src.dtype) != np.float32:
        raise TypeError(f"imrotate: src must be float32, a CxHxW tensor such as ToTensor "
                        f"gives (got {np.dtype(src.dtype)})")
    if src.ndim not in (3, 4):
        raise ValueError(f"imrotate: src must be CxHxW or NxCxHxW (got shape {src.shape})")
    a = src.asnumpy()
    single = a.ndim == 3
    if single:
        a = a[None]
    if isinstance(rotation_degrees, nd.NDArray):
        if single:
            raise TypeError("imrotate: rotation_degrees must be a number for one image "
                            f"(got an NDArray of shape {rotation_degrees.shape})")
        deg = rotation_degrees.asnumpy().astype(np.float32).reshape(-1)
    elif isinstance(rotation_degrees, (int, float, np.number)) and not isinstance(
            rotation_degrees, bool):
        deg = np.full(a.shape[0], rotation_degrees, np.float32)
    else:
        raise TypeError(f"imrotate: rotation_degrees must be a number or an NDArray (got "
                        f"{type(rotation_degrees).__name__})")
    if deg.shape[0] != a.shape[0]:
        raise ValueError(f"imrotate: rotation_degrees must hold one angle per image "
                         f"({a.shape[0]}) (got {deg.shape[0]})")
    n, _, h, w = a.shape
    # float32 throughout, as MXNet's NDArray formulas: the grid of each output pixel,
    # centred, rotated, then normalised to [-1, 1] per axis
    rad = (np.float32(np.pi) * deg / np.float32(180)).reshape(n, 1, 1)
    hs, ws = np.float32((h - 1) / 2), np.float32((w - 1) / 2)
    hm = (np.arange(h, dtype=np.float32).reshape(h, 1) - hs) * np.ones((1, w), np.float32)
    wm = (np.arange(w, dtype=np.float32).reshape(1, w) - ws) * np.ones((h, 1), np.float32)
    cos, sin = np.cos(rad), np.sin(rad)
    gx = (wm * cos - hm * sin) / ws
    gy = (wm * sin + hm * cos) / hs
    if zoom_in or zoom_out:
        fh, fw = np.float32(h), np.float32(w)
        rho, corner = np.sqrt(fh * fh + fw * fw), np.arctan(fh / fw)
        turn = np.abs(rad)
        max_x = np.maximum(np.abs(rho * np.cos(corner + turn)),
                           np.abs(rho * np.cos(corner - turn)))
        max_y = np.maximum(np.abs(rho * np.sin(corner + turn)),
                           np.abs(rho * np.sin(corner - turn)))
        scale = (np.maximum(max_x / fw, max_y / fh) if zoom_out
                 else np.minimum(fw / max_x, fh / max_y))
        gx, gy = gx * scale, gy * scale
    x = (gx + np.float32(1)) * np.float32(w - 1) / np.float32(2)
    y = (gy + np.float32(1)) * np.float32(h - 1) / np.float32(2)
    out = _bilinear_sample(a, x, y)
    return nd.array(out[0] if single else out, ctx=src.context)


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """:func:`imrotate` by an angle drawn uniformly from ``angle_limits`` = (lower,
    upper) degrees, one per image of a batch (MXNet's ``mx.image.random_rotate``; the
    draws come from ``runtime.random``'s generator)."""
    lower, upper = _angle_limits("random_rotate", angle_limits)
    rng = _random.generator()
    if isinstance(src, nd.NDArray) and src.ndim == 4:
        deg = nd.array(rng.uniform(lower, upper, size=src.shape[0]))
    else:
        deg = float(rng.uniform(lower, upper))
    return imrotate(src, deg, zoom_in=zoom_in, zoom_out=zoom_out)


def _angle_limits(who, angle_limits):
    try:
        lower, upper = (float(v) for v in angle_limits)
    except (TypeError, ValueError):
        raise TypeError(f"{who}: angle_limits must be (lower, upper) degrees (got "
                        f"{angle_limits!r})") from None
    if not lower < upper:
        raise ValueError(f"{who}: angle_limits must be ordered, lower < upper (got "
                         f"{angle_limits!r})")
    return lower, upper


# -- ImageIter -----------------------------------------------------------------------------

# -- augmenters (MXNet's mx.image.Augmenter family) -----------------------------------------
# Each is a callable HxWxC NDArray -> HxWxC NDArray.  The random ones draw from ndrt's
# generator (mx.random.seed fixes them); MXNet's draw from Python's random module and
# NumPy's global generator.

class Augmenter:
    """An image transformation; ``dumps()`` gives its name and arguments as JSON."""

    def __init__(self, **kwargs):
        self._kwargs = {k: (np.asarray(_host(v, type(self).__name__)).tolist()
                            if isinstance(v, (nd.NDArray, np.ndarray)) else v)
                        for k, v in kwargs.items()}

    def dumps(self):
        """``[name, {argument: value}]`` as a JSON string."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")


class SequentialAug(Augmenter):
    """The augmenters ``ts`` applied in order."""

    def __init__(self, ts):
        super().__init__()
        self.ts = list(ts)

    def dumps(self):
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def __call__(self, src):
        for t in self.ts:
            src = t(src)
        return src


def apply_in_random_order(fns, x):
    """``x`` through every function of ``fns``, in an order drawn from ndrt's generator
    (MXNet's RandomOrderAug, Gluon's RandomColorJitter)."""
    for i in _random.generator().permutation(len(fns)):
        x = fns[i](x)
    return x


class RandomOrderAug(SequentialAug):
    """The augmenters ``ts`` applied in a random order."""

    def __call__(self, src):
        return apply_in_random_order(self.ts, src)


class ResizeAug(Augmenter):
    """The shorter side resized to ``size`` (:func:`resize_short`)."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(Augmenter):
    """Resized to ``size`` = (w, h), whatever the aspect ratio."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = _wh("ForceResizeAug", size), interp

    def __call__(self, src):
        return imresize(src, *self.size, interp=self.interp)


class _WindowAug(Augmenter):
    """A window of ``size`` = (w, h) cut by ``_window`` (a crop function returning
    (image, (x, y, w, h)))."""

    _window = None

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        return type(self)._window(src, self.size, self.interp)[0]


class RandomCropAug(_WindowAug):
    """A random window of ``size`` = (w, h) (:func:`random_crop`)."""

    _window = staticmethod(random_crop)


class RandomSizedCropAug(Augmenter):
    """A random window of random area and aspect ratio, resized to ``size``
    (:func:`random_size_crop`)."""

    def __init__(self, size, area, ratio, interp=2):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size, self.area, self.ratio, self.interp = size, area, ratio, interp

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(_WindowAug):
    """The centre window of ``size`` = (w, h) (:func:`center_crop`)."""

    _window = staticmethod(center_crop)


class CastAug(Augmenter):
    """Cast to ``typ``."""

    def __init__(self, typ="float32"):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


def _jitter(amount):
    return 1.0 + _random.generator().uniform(-amount, amount)


# luma weights of RGB (ITU-R BT.601), as MXNet's jitter augmenters use them
_LUMA = np.array([0.299, 0.587, 0.114], np.float32)


class BrightnessJitterAug(Augmenter):
    """Scaled by a factor drawn from [1 - brightness, 1 + brightness]."""

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        return src * _jitter(self.brightness)


class ContrastJitterAug(Augmenter):
    """Blended with its mean grey level by a factor drawn from [1 - contrast, 1 +
    contrast]."""

    def __init__(self, contrast):
        super().__init__(contrast=contrast)
        self.contrast = contrast

    def __call__(self, src):
        alpha = _jitter(self.contrast)
        gray = float((src.asnumpy() * _LUMA).sum()) * 3.0 * (1.0 - alpha) / src.size
        return src * alpha + gray


class SaturationJitterAug(Augmenter):
    """Blended with its grey image by a factor drawn from [1 - saturation, 1 +
    saturation]."""

    def __init__(self, saturation):
        super().__init__(saturation=saturation)
        self.saturation = saturation

    def __call__(self, src):
        alpha = _jitter(self.saturation)
        gray = (src.asnumpy() * _LUMA).sum(axis=2, keepdims=True) * (1.0 - alpha)
        return src * alpha + nd.array(gray, dtype=src.dtype)


class HueJitterAug(Augmenter):
    """Hue rotated by an angle drawn from [-hue, hue] (times pi) in YIQ space."""

    _TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321],
                        [0.211, -0.523, 0.311]])
    _FROM_YIQ = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647],
                          [1.0, -1.107, 1.705]])

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = hue

    def __call__(self, src):
        angle = _random.generator().uniform(-self.hue, self.hue) * np.pi
        u, w = np.cos(angle), np.sin(angle)
        rotate = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = (self._FROM_YIQ @ rotate @ self._TO_YIQ).T
        return nd.dot(src, nd.array(t, dtype=src.dtype))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter (those given > 0), in a random
    order."""

    def __init__(self, brightness, contrast, saturation):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet's PCA lighting noise: adds ``eigvec @ (alpha * eigval)`` with ``alpha``
    drawn from N(0, alphastd)."""

    def __init__(self, alphastd, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = np.asarray(eigval, np.float64)
        self.eigvec = np.asarray(eigvec, np.float64)

    def __call__(self, src):
        alpha = _random.generator().normal(0, self.alphastd, size=(3,))
        rgb = np.dot(self.eigvec * alpha, self.eigval)
        return src + nd.array(rgb, dtype=src.dtype)


class ColorNormalizeAug(Augmenter):
    """``(src - mean) / std`` (:func:`color_normalize`)."""

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, nd.NDArray) else nd.array(mean)
        self.std = std if std is None or isinstance(std, nd.NDArray) else nd.array(std)

    def __call__(self, src):
        return color_normalize(src, 0.0 if self.mean is None else self.mean, self.std)


class RandomGrayAug(Augmenter):
    """Turned grey (all channels the luma) with probability ``p``."""

    _MAT = np.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]])

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if _random.generator().random() < self.p:
            src = nd.dot(src, nd.array(self._MAT, dtype=src.dtype))
        return src


class HorizontalFlipAug(Augmenter):
    """Mirrored left to right with probability ``p``."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if _random.generator().random() < self.p:
            src = nd.flip(src, axis=1)
        return src


# ImageNet's mean and deviation per RGB channel, and its PCA lighting basis (MXNet's)
_IMAGENET_MEAN = (123.68, 116.28, 103.53)
_IMAGENET_STD = (58.395, 57.12, 57.375)
_IMAGENET_EIGVAL = (55.46, 4.794, 1.148)
_IMAGENET_EIGVEC = ((-0.5675, 0.7192, 0.4009), (-0.5808, -0.0045, -0.8140),
                    (-0.5836, -0.6948, 0.4203))


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False,  # noqa: N802
                    rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                    saturation=0, hue=0, pca_noise=0, rand_gray=0, inter_method=2):
    """MXNet's standard augmenter list for images of ``data_shape`` (C, H, W): resize
    the shorter side to ``resize`` (> 0), crop to (W, H) (random sized with
    ``rand_resize``, random with ``rand_crop``, else the centre), mirror with
    ``rand_mirror``, cast to float32, colour jitter, hue jitter, PCA noise, random grey,
    then normalise (``mean``/``std`` True: ImageNet's)."""
    if len(data_shape) != 3:
        raise ValueError(f"CreateAugmenter: data_shape must be (channels, height, width) "
                         f"(got {data_shape!r})")
    if rand_resize and not rand_crop:
        raise ValueError("CreateAugmenter: rand_resize needs rand_crop=True")
    auglist = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0),
                                          inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        auglist.append(LightingAug(pca_noise, _IMAGENET_EIGVAL, _IMAGENET_EIGVEC))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    mean = _normalizer("mean", mean, _IMAGENET_MEAN)
    std = _normalizer("std", std, _IMAGENET_STD)
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


def _normalizer(name, value, imagenet):
    if value is True:
        return nd.array(imagenet)
    if value is None or value is False:
        return None
    if not isinstance(value, (np.ndarray, nd.NDArray)) or value.shape[0] not in (1, 3):
        raise ValueError(f"CreateAugmenter: {name} must be True or an array of 1 or 3 "
                         f"values (got {value!r})")
    return value


class ImageIter(DataIter):
    """Batches of images read from a RecordIO file (``path_imgrec``, with
    ``path_imgidx`` for shuffling) or from an image list (``path_imglist`` or
    ``imglist``, files under ``path_root``), MXNet's ``mx.image.ImageIter``.

    Each image is decoded (RGB), passed through ``aug_list`` (callables HxWxC NDArray
    -> HxWxC NDArray; by default :func:`CreateAugmenter` of ``data_shape`` and the
    keyword arguments ``kwargs`` (``resize``, ``rand_crop``, ``rand_mirror``, ``mean``,
    ``std`` ...), whose plainest list centre-crops to ``data_shape`` (C, H, W)), cast to
    ``dtype`` and laid out CxHxW.  Batches are :class:`runtime.io.DataBatch` with ``data`` of
    shape (batch_size, C, H, W) and ``label`` of shape (batch_size,) (or (batch_size,
    label_width)).  ``last_batch_handle``: 'pad' (the last batch filled with its own
    first images again, ``batch.pad`` says how many; MXNet takes them from the next
    epoch), 'discard', or 'roll_over' (left-over images start the next epoch).
    An image list holds lines ``index<TAB>label(s)<TAB>path``.
    """

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name="data",
                 label_name="softmax_label", dtype="float32", last_batch_handle="pad",
                 **kwargs):
        who = "ImageIter"
        super().__init__(batch_size)
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size < 1:
            raise ValueError(f"{who}: batch_size must be a positive integer (got "
                             f"{batch_size!r})")
        if len(data_shape) != 3 or data_shape[0] not in (1, 3):
            raise ValueError(f"{who}: data_shape must be (channels, height, width) with 1 or "
                             f"3 channels (got {data_shape!r})")
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError(f"{who}: last_batch_handle must be 'pad', 'discard' or "
                             f"'roll_over' (got {last_batch_handle!r})")
        if path_imgrec is None and path_imglist is None and imglist is None:
            raise ValueError(f"{who}: one of path_imgrec, path_imglist or imglist must be "
                             "given")
        self.data_shape = tuple(data_shape)
        self._flag = 0 if data_shape[0] == 1 else 1
        self.label_width = label_width
        self.shuffle = shuffle
        self.dtype = np.dtype(dtype)
        self.last_batch_handle = last_batch_handle
        self.path_root = path_root or ""
        self.imgrec = None
        self.imglist = None
        if path_imgrec is not None:
            if path_imgidx is not None:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.seq = list(self.imgrec.keys)
            elif shuffle or num_parts > 1:
                raise ValueError(f"{who}: shuffle and num_parts > 1 need path_imgidx with "
                                 "path_imgrec")
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
                self.seq = None
        else:
            self.imglist = self._read_list(path_imglist) if path_imglist is not None else {
                i + 1: (np.asarray(item[:-1] if len(item) > 2 else item[0],
                                   np.float32).reshape(-1), item[-1])
                for i, item in enumerate(imglist)}
            self.seq = list(self.imglist)
        if self.seq is not None and num_parts > 1:
            n = len(self.seq) // num_parts
            self.seq = self.seq[part_index * n:(part_index + 1) * n]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self._provide_data = [DataDesc(data_name, (batch_size,) + self.data_shape)]
        lshape = (batch_size,) if label_width == 1 else (batch_size, label_width)
        self._provide_label = [DataDesc(label_name, lshape)]
        self._carry = []
        self.reset()

    def _read_list(self, path):
        table = {}
        with open(path) as f:
            for n, line in enumerate(f):
                fields = line.strip().split("\t")
                if len(fields) < 3:
                    raise ValueError(f"ImageIter: line {n + 1} of {path!r} must be "
                                     f"'index<TAB>label(s)<TAB>path' (got {line!r})")
                table[int(float(fields[0]))] = (np.asarray(fields[1:-1], np.float32),
                                                fields[-1])
        return table

    def reset(self):
        """Start the next epoch (reshuffled with ``shuffle``)."""
        if self.seq is not None and self.shuffle:
            order = _random.generator().permutation(len(self.seq))
            self.seq = [self.seq[i] for i in order]
        if self.imgrec is not None and self.seq is None:
            self.imgrec.reset()
        self.cur = 0

    def next_sample(self):
        """``(label, decoded HxWxC image)`` of the next image; StopIteration at the end."""
        if self.seq is not None:
            if self.cur >= len(self.seq):
                raise StopIteration
            key = self.seq[self.cur]
            self.cur += 1
            if self.imgrec is not None:
                header, img = recordio.unpack(self.imgrec.read_idx(key))
                return header.label, imdecode(img, self._flag)
            label, fname = self.imglist[key]
            return label, imread(os.path.join(self.path_root, fname), self._flag)
        s = self.imgrec.read()
        if s is None:
            raise StopIteration
        header, img = recordio.unpack(s)
        return header.label, imdecode(img, self._flag)

    def _augment(self, img):
        for aug in self.auglist:
            img = aug(img)
        return img

    def next(self):
        c, h, w = self.data_shape
        data = np.zeros((self.batch_size, c, h, w), self.dtype)
        label = np.zeros(self._provide_label[0].shape, np.float32)
        samples, self._carry = self._carry, []
        try:
            while len(samples) < self.batch_size:
                samples.append(self.next_sample())
        except StopIteration:
            if not samples or self.last_batch_handle == "discard":
                raise
            if self.last_batch_handle == "roll_over":
                self._carry = samples
                raise
        pad = self.batch_size - len(samples)
        for i, (lab, img) in enumerate(samples):
            arr = np.asarray(self._augment(img).asnumpy(), dtype=self.dtype)
            if arr.shape != (h, w, c):
                raise ValueError(f"ImageIter: an augmented image must have shape {(h, w, c)} "
                                 f"(got {arr.shape})")
            data[i] = arr.transpose(2, 0, 1)
            label[i] = np.asarray(lab, np.float32).reshape(label[i].shape)
        for i in range(len(samples), self.batch_size):    # 'pad': repeat from the start
            data[i], label[i] = data[i % len(samples)], label[i % len(samples)]
        return DataBatch([nd.array(data, dtype=self.dtype)], [nd.array(label)], pad=pad,
                         provide_data=self.provide_data, provide_label=self.provide_label)
