"""Image files to and from uint8 NumPy arrays, through Pillow when it is installed (the
``image`` extra): the one place that imports it, so that a missing Pillow is one clear
error at the call that needs it, never at import."""

import io

import numpy as np

try:
    from PIL import Image as _Image
except ImportError:         # optional dependency (the image extra)
    _Image = None

FORMATS = {".jpg": "JPEG", ".jpeg": "JPEG", ".png": "PNG", ".bmp": "BMP"}


def available():
    """Whether Pillow is installed."""
    return _Image is not None


def _need(what):
    if _Image is None:
        raise ImportError(f"{what} needs Pillow to decode and encode images: pip install "
                          "'ndrt[image]' (or pip install Pillow)")


def decode(buf, mode="RGB"):
    """The image file held by the bytes ``buf`` as a uint8 array: HxWx3 for mode 'RGB',
    HxW for 'L' (grey); mode None keeps a grey file grey (HxW) and gives the others as
    RGB."""
    _need("imdecode")
    try:
        img = _Image.open(io.BytesIO(bytes(buf)))
        img.load()
    except Exception as e:      # Pillow raises several kinds for undecodable bytes
        raise ValueError(f"imdecode: buf must hold an image file Pillow can decode "
                         f"({len(buf)} bytes: {e})") from None
    if mode is None:
        mode = "L" if img.mode in ("1", "L") else "RGB"
    return np.asarray(img.convert(mode))


def read(path, mode="RGB"):
    """The image file at ``path`` as :func:`decode` gives it."""
    _need("imread")
    with open(path, "rb") as f:
        return decode(f.read(), mode)


def encode(img, fmt=".jpg", quality=95):
    """The bytes of uint8 ``img`` (HxW, HxWx1 or HxWx3 RGB) as an image file of format
    ``fmt`` ('.jpg', '.png', '.bmp')."""
    _need("imencode")
    if fmt.lower() not in FORMATS:
        raise ValueError(f"imencode: img_fmt must be one of {sorted(FORMATS)} (got {fmt!r})")
    img = np.asarray(img)
    if img.dtype != np.uint8 or img.ndim not in (2, 3) or (img.ndim == 3
                                                             and img.shape[2] not in (1, 3)):
        raise ValueError(f"imencode: img must be a uint8 HxW or HxWx3 array (got "
                         f"{img.dtype} of shape {img.shape})")
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    out = io.BytesIO()
    kwargs = {"quality": int(quality)} if FORMATS[fmt.lower()] == "JPEG" else {}
    _Image.fromarray(img).save(out, format=FORMATS[fmt.lower()], **kwargs)
    return out.getvalue()
