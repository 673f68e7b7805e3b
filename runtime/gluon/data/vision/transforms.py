"""Image transforms (Gluon's ``gluon.data.vision.transforms``): blocks that take an
image NDArray (HxWxC, or NxHxWxC where noted) and return the transformed image, meant
for ``dataset.transform_first(...)``.  They run on the host through NumPy (data
preparation, never recorded); random ones draw from ``runtime.random``'s generator.
:class:`Rotate` and :class:`RandomRotation` take CxHxW (or NxCxHxW) float32 tensors, as
``ToTensor`` gives them (MXNet's rule)."""

import numpy as np

from runtime import image, nd
from runtime import _rng as _random
from runtime.errors import MXNetValueError
from runtime.gluon.block import Block
from runtime.gluon.nn import Sequential

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Resize", "CenterCrop", "CropResize",
           "RandomResizedCrop", "RandomFlipLeftRight", "RandomFlipTopBottom",
           "RandomBrightness", "RandomContrast", "RandomSaturation", "RandomHue",
           "RandomColorJitter", "RandomLighting", "RandomApply", "Rotate", "RandomRotation"]


def _np(who, x):
    if isinstance(x, nd.NDArray):
        return x.asnumpy()
    if isinstance(x, np.ndarray):
        return x
    raise TypeError(f"{who}: the image must be an NDArray (got {type(x).__name__})")


def _nd(who, x):
    if isinstance(x, nd.NDArray):
        return x
    if isinstance(x, np.ndarray):
        return nd.array(x, dtype=x.dtype)
    raise TypeError(f"{who}: the image must be an NDArray (got {type(x).__name__})")


def _image(who, x, batched=True):
    a = _np(who, x)
    if a.ndim != 3 and not (batched and a.ndim == 4):
        layout = "HxWxC or NxHxWxC" if batched else "HxWxC"
        raise ValueError(f"{who}: the image must be {layout} (got shape {a.shape})")
    return a


class Compose(Sequential):
    """The transforms of ``transforms`` applied in order."""

    def __init__(self, transforms):
        super().__init__()
        for t in transforms:
            if not callable(t):
                raise TypeError(f"Compose: every transform must be callable (got {t!r})")
            if not isinstance(t, Block):
                t = _Function(t)
            self.add(t)


class _Function(Block):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def forward(self, x, *args):
        return self._fn(x, *args)


class Cast(Block):
    """The image cast to ``dtype``."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = np.dtype(dtype)

    def forward(self, x):
        return x.astype(self._dtype) if isinstance(x, nd.NDArray) else nd.array(
            np.asarray(x, self._dtype), dtype=self._dtype)


class ToTensor(Block):
    """HxWxC (or NxHxWxC) values in [0, 255] to CxHxW (NxCxHxW) float32 in [0, 1]
    (the operator ``nd.image.to_tensor``)."""

    def forward(self, x):
        return nd.image.to_tensor(_nd("ToTensor", x))


def _per_channel(who, name, value):
    v = np.asarray(value, np.float32).reshape(-1)
    if v.size == 0:
        raise ValueError(f"{who}: {name} must hold one value or one per channel (got "
                         f"{value!r})")
    return v


class Normalize(Block):
    """``(x - mean) / std`` per channel of a CxHxW (or NxCxHxW) float tensor.

    Parameters
    ----------
    mean, std : float or sequence of float
        One value for every channel, or one per channel.
    """

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = _per_channel("Normalize", "mean", mean)
        self._std = _per_channel("Normalize", "std", std)
        if np.any(self._std == 0):
            raise ValueError(f"Normalize: std must not be 0 (got {std!r})")

    def forward(self, x):
        return nd.image.normalize(_nd("Normalize", x), mean=tuple(self._mean.tolist()),
                                  std=tuple(self._std.tolist()))


def _size(who, size):
    """``size`` as (width, height); an int is a square.  A refusal is an MXNetError, as
    MXNet's image operators (``image.resize``) raise it."""
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (size, size)
    if (isinstance(size, (tuple, list)) and len(size) == 2
            and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0
                    for v in size)):
        return int(size[0]), int(size[1])
    raise MXNetValueError(f"{who}: size must be an int > 0 or (width, height), two ints > 0 "
                          f"(got {size!r})")


class Resize(Block):
    """The image resized to ``size`` = (width, height) (an int: a square), or with
    ``keep_ratio`` and an int size, its shorter side to ``size`` keeping the aspect
    ratio.  ``interpolation`` as :func:`runtime.image.imresize`.  HxWxC or NxHxWxC."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        image._check_interp("Resize", interpolation)
        self._int = isinstance(size, (int, np.integer))
        self._size = _size("Resize", size)
        self._keep = keep_ratio
        self._interp = interpolation

    def _target(self, h, w):
        if self._keep and self._int:
            s = self._size[0]
            return (s, s * h // w) if h > w else (s * w // h, s)
        return self._size

    def forward(self, x):
        a = _image("Resize", x)
        h, w = a.shape[-3:-1]
        tw, th = self._target(h, w)
        if a.ndim == 3:
            out = image._resize_array(a, tw, th, self._interp)
        else:
            out = np.stack([image._resize_array(i, tw, th, self._interp) for i in a])
        return nd.array(out, dtype=out.dtype)


class CenterCrop(Block):
    """The centre ``size`` = (width, height) window of an HxWxC image (scaled down to fit
    and resized back to ``size`` when the image is smaller)."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._size = _size("CenterCrop", size)
        self._interp = interpolation

    def forward(self, x):
        return image.center_crop(_image("CenterCrop", x, False), self._size, self._interp)[0]


class CropResize(Block):
    """The ``width`` x ``height`` window at (``x``, ``y``) of an HxWxC image, resized to
    ``size`` = (width, height) (an int: a square) when given."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._box = (x, y, width, height)
        self._size = None if size is None else _size("CropResize", size)
        self._interp = 1 if interpolation is None else interpolation

    def forward(self, x):
        return image.fixed_crop(_image("CropResize", x, False), *self._box, size=self._size,
                                interp=self._interp)


class RandomResizedCrop(Block):
    """A random window of an HxWxC image covering a fraction ``scale`` of its area with
    aspect ratio in ``ratio``, resized to ``size`` (Inception's crop)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=1):
        super().__init__()
        self._size = _size("RandomResizedCrop", size)
        self._scale, self._ratio, self._interp = scale, ratio, interpolation

    def forward(self, x):
        return image.random_size_crop(_image("RandomResizedCrop", x, False), self._size,
                                      self._scale, self._ratio, self._interp)[0]


class _RandomFlip(Block):
    _axis = None

    def forward(self, x):
        a = _image(type(self).__name__, x)
        if _random.generator().random() < 0.5:
            a = np.flip(a, self._axis - 3 if a.ndim == 3 else self._axis - 4)
        return nd.array(np.ascontiguousarray(a), dtype=a.dtype)


class RandomFlipLeftRight(_RandomFlip):
    """The image mirrored left to right with probability 1/2 (HxWxC or NxHxWxC)."""
    _axis = 1


class RandomFlipTopBottom(_RandomFlip):
    """The image flipped top to bottom with probability 1/2 (HxWxC or NxHxWxC)."""
    _axis = 0


_GREY = np.array([0.299, 0.587, 0.114], np.float32)


def _like(a, out):
    """float32 ``out`` as an NDArray of ``a``'s dtype (integers rounded and clipped)."""
    if np.issubdtype(a.dtype, np.integer):
        info = np.iinfo(a.dtype)
        out = np.clip(np.floor(out + 0.5), info.min, info.max)
    return nd.array(out.astype(a.dtype), dtype=a.dtype)


def _blend(a, other, alpha):
    return _like(a, a.astype(np.float32) * np.float32(alpha) + other * np.float32(1 - alpha))


class _RandomBlend(Block):
    """The image blended with ``self._target(image)`` by a factor drawn uniformly from
    [1 - strength, 1 + strength]."""

    def __init__(self, strength):
        super().__init__()
        if strength < 0:
            raise ValueError(f"{type(self).__name__}: the strength must be >= 0 (got "
                             f"{strength!r})")
        self._v = strength

    def forward(self, x):
        a = _image(type(self).__name__, x, False)
        alpha = 1.0 + _random.generator().uniform(-self._v, self._v)
        return _blend(a, self._target(a), alpha)


class RandomBrightness(_RandomBlend):
    """The image times a factor drawn from [1 - brightness, 1 + brightness]."""

    def _target(self, a):
        return np.float32(0)


class RandomContrast(_RandomBlend):
    """The image blended with its mean grey level by a factor drawn from
    [1 - contrast, 1 + contrast]."""

    def _target(self, a):
        return np.float32((a.astype(np.float32) @ _GREY).mean())


class RandomSaturation(_RandomBlend):
    """The image blended with its own grey version by a factor drawn from
    [1 - saturation, 1 + saturation]."""

    def _target(self, a):
        return (a.astype(np.float32) @ _GREY)[..., None]


class RandomHue(Block):
    """The image's hue rotated by an angle drawn from [-hue, hue] * pi, in YIQ space (as
    MXNet's hue jitter)."""

    _TYIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321],
                      [0.211, -0.523, 0.311]], np.float32)
    _ITYIQ = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647],
                       [1.0, -1.107, 1.705]], np.float32)

    def __init__(self, hue):
        super().__init__()
        if hue < 0:
            raise ValueError(f"RandomHue: the strength must be >= 0 (got {hue!r})")
        self._v = hue

    def forward(self, x):
        a = _image("RandomHue", x, False)
        alpha = _random.generator().uniform(-self._v, self._v)
        u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        rot = np.array([[1, 0, 0], [0, u, -w], [0, w, u]], np.float32)
        t = self._ITYIQ @ rot @ self._TYIQ
        return _like(a, a.astype(np.float32) @ t.T)


class RandomColorJitter(Block):
    """Brightness, contrast, saturation and hue jitter (each left out at 0), applied in a
    random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._jitters = [cls(v) for cls, v in ((RandomBrightness, brightness),
                                               (RandomContrast, contrast),
                                               (RandomSaturation, saturation),
                                               (RandomHue, hue)) if v > 0]

    def forward(self, x):
        return image.apply_in_random_order(self._jitters, x)


class RandomApply(Sequential):
    """``transforms`` (a block) applied with probability ``p``, else the input."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"RandomApply: p must be in [0, 1] (got {p!r})")
        self.transforms = transforms
        self.p = p

    def forward(self, x, *args):
        if _random.generator().random() < self.p:
            return self.transforms(x, *args)
        return x if not args else (x,) + args


class RandomLighting(Block):
    """AlexNet's PCA lighting noise: the image plus ``eigvec @ (alpha * eigval)`` per
    pixel, ``alpha`` drawn from N(0, ``alpha``) for each of the 3 channels (ImageNet's
    eigenvalues and eigenvectors, as Gluon)."""

    _EIGVAL = np.array([55.46, 4.794, 1.148], np.float32)
    _EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                        [-0.5808, -0.0045, -0.8140],
                        [-0.5836, -0.6948, 0.4203]], np.float32)

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def forward(self, x):
        a = _image("RandomLighting", x, False)
        alpha = _random.generator().normal(0, self._alpha, 3).astype(np.float32)
        rgb = self._EIGVEC @ (alpha * self._EIGVAL)
        return _like(a, a.astype(np.float32) + rgb)


class Rotate(Block):
    """The CxHxW (or NxCxHxW) float32 tensor rotated by ``rotation_degrees`` about its
    centre, keeping its shape (Gluon's ``transforms.Rotate``, through
    :func:`runtime.image.imrotate`: bilinear sampling, 0 outside the source).
    ``zoom_in`` scales so that no padding shows, ``zoom_out`` so that the whole image
    shows."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        if isinstance(rotation_degrees, bool) or not isinstance(
                rotation_degrees, (int, float, np.number)):
            raise TypeError(f"Rotate: rotation_degrees must be a number (got "
                            f"{rotation_degrees!r})")
        if zoom_in and zoom_out:
            raise ValueError("Rotate: zoom_in and zoom_out must not both be True (got "
                             "zoom_in=True, zoom_out=True)")
        self._args = (float(rotation_degrees), bool(zoom_in), bool(zoom_out))

    def forward(self, x):
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """:class:`Rotate` by an angle drawn uniformly from ``angle_limits`` = (lower,
    upper) degrees (one per image of a batch), with probability ``rotate_with_proba``;
    otherwise the input unchanged (Gluon's ``transforms.RandomRotation``)."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        limits = image._angle_limits("RandomRotation", angle_limits)
        if isinstance(rotate_with_proba, bool) or not isinstance(
                rotate_with_proba, (int, float, np.number)) or not 0 <= rotate_with_proba <= 1:
            raise ValueError(f"RandomRotation: rotate_with_proba must be a probability in "
                             f"[0, 1] (got {rotate_with_proba!r})")
        if zoom_in and zoom_out:
            raise ValueError("RandomRotation: zoom_in and zoom_out must not both be True "
                             "(got zoom_in=True, zoom_out=True)")
        self._args = (limits, bool(zoom_in), bool(zoom_out))
        self._proba = float(rotate_with_proba)

    def forward(self, x):
        if _random.generator().random() >= self._proba:
            return x
        return image.random_rotate(x, *self._args)
