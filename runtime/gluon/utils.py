"""Gluon's helpers (``gluon.utils``): gradient clipping by global norm
(``clip_global_norm``), batches cut into one slice per context (``split_data``,
``split_and_load``), the handles of forward hooks (``HookHandle``) and files fetched over
HTTP(S) (``download``, ``check_sha1``)."""

import hashlib
import math
import os
import warnings
import weakref

import numpy as np

from runtime import nd
from runtime._files import write_chunks
from runtime._ndarray import NDArray

__all__ = ["clip_global_norm", "split_data", "split_and_load", "HookHandle", "check_sha1",
           "download"]


def _square_sum(x):
    """sum(x ** 2) of an NDArray as a float: of the stored values of a sparse one (its
    zeros add nothing), with the dense ``square_sum`` operator either way."""
    values = x if x.stype == "default" else x.data
    if values.size == 0:
        return 0.0
    return float(nd.square_sum(values).asscalar())


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Rescale ``arrays`` (dense or sparse NDArrays, typically gradients) in place so
    that the 2-norm of all their values together is at most ``max_norm``; returns that
    norm before clipping, as a float.

    As gluon: every array is multiplied by min(1, max_norm / (norm + 1e-8)), and a norm
    that is NaN or infinite gives a warning when ``check_isfinite`` (the arrays are then
    scaled by NaN or 0, as in MXNet).
    """
    if isinstance(arrays, NDArray):
        arrays = [arrays]
    arrays = list(arrays)
    if not arrays:
        raise ValueError("clip_global_norm: arrays must hold at least one NDArray (got [])")
    for i, a in enumerate(arrays):
        if not isinstance(a, NDArray):
            raise TypeError(f"clip_global_norm: arrays[{i}] must be an NDArray (got "
                            f"{type(a).__name__})")
    if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)) or \
            not max_norm > 0 or not math.isfinite(max_norm):
        raise ValueError(f"clip_global_norm: max_norm must be finite and > 0 (got "
                         f"{max_norm!r})")
    total = math.sqrt(sum(_square_sum(a) for a in arrays))
    if check_isfinite and not math.isfinite(total):
        warnings.warn("clip_global_norm: nan or inf is detected; the clipping results are "
                      "undefined", UserWarning, stacklevel=2)
    scale = max_norm / (total + 1e-8)
    if scale < 1.0 or not math.isfinite(total):
        with np.errstate(invalid="ignore"):    # inf * 0: NaN, the undefined result
            for a in arrays:
                a *= scale
    return total


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """``data`` (an NDArray) cut into ``num_slice`` slices along ``batch_axis`` (gluon's
    ``split_data``): equal slices, or with ``even_split=False`` the last one takes the
    rest (and a batch smaller than ``num_slice`` gives one slice a row)."""
    if not isinstance(data, NDArray):
        raise TypeError(f"split_data: data must be an NDArray (got {type(data).__name__})")
    if isinstance(num_slice, bool) or not isinstance(num_slice, int) or num_slice < 1:
        raise ValueError(f"split_data: num_slice must be an integer >= 1 (got {num_slice!r})")
    if not -data.ndim <= batch_axis < data.ndim:
        raise ValueError(f"split_data: batch_axis must be an axis of the data's "
                         f"{data.ndim} (got {batch_axis!r})")
    batch_axis %= data.ndim
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(f"split_data: data with shape {data.shape} cannot be evenly split "
                         f"into {num_slice} slices along axis {batch_axis}. Use a batch size "
                         f"that's multiple of {num_slice} or set even_split=False to allow "
                         f"uneven partitioning of data.")
    if num_slice == 1:
        return [data]
    step = size // num_slice
    if not even_split and size < num_slice:
        step, num_slice = 1, size
    bounds = [(i * step, (i + 1) * step if i < num_slice - 1 else size)
              for i in range(num_slice)]
    if batch_axis == 0:
        return [data[a:b] for a, b in bounds]
    return [nd.slice_axis(data, axis=batch_axis, begin=a, end=b) for a, b in bounds]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """``data`` split by :func:`split_data` into one slice per context of ``ctx_list``,
    each slice copied to its context (gluon's ``split_and_load``); a NumPy array is made
    an NDArray on the first context first."""
    ctx_list = list(ctx_list) if isinstance(ctx_list, (list, tuple)) else [ctx_list]
    if not ctx_list:
        raise ValueError("split_and_load: ctx_list must hold at least one Context (got [])")
    if not isinstance(data, NDArray):
        data = nd.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(c) for s, c in zip(slices, ctx_list)]


class HookHandle:
    """The handle :meth:`Block.register_forward_hook` and
    :meth:`~Block.register_forward_pre_hook` return: ``detach()`` removes the hook (also
    on leaving a ``with`` block), as Gluon's."""

    def __init__(self):
        self._hooks_ref = None
        self._id = None

    def attach(self, hooks, hook):
        """Add ``hook`` to the ordered dict ``hooks`` (once per handle)."""
        if self._hooks_ref is not None:
            raise RuntimeError("HookHandle: a handle cannot be attached twice")
        self._id = id(hook)
        hooks[self._id] = hook
        self._hooks_ref = weakref.ref(hooks)

    def detach(self):
        """Remove the hook; a second call does nothing."""
        hooks = self._hooks_ref() if self._hooks_ref is not None else None
        if hooks is not None:
            hooks.pop(self._id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 digest of the file ``filename`` is ``sha1_hash`` (a hex string;
    only its first ``len(sha1_hash)`` characters are compared, as gluon does)."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha1.update(block)
    return sha1.hexdigest()[:len(sha1_hash)] == sha1_hash[:len(sha1.hexdigest())]


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Fetch ``url`` into a file (gluon's ``download``, through the ``requests``
    package) and return the file's path.

    Parameters
    ----------
    url : str
        What to fetch.
    path : str, optional
        The file, or a folder to put it in under the URL's last part (the default: the
        current folder).
    overwrite : bool
        Fetch even when the file exists; without it an existing file is kept unless
        ``sha1_hash`` is given and does not match it.
    sha1_hash : str, optional
        The expected SHA-1 digest (hex): a fetched file that does not match it counts as
        a failed attempt and is not kept.
    retries : int
        How many failed attempts are tried again (>= 0); the last failure's exception
        is raised.
    verify_ssl : bool
        Check the server's certificate (with False a warning says it is not checked).

    The content is written to a temporary file beside the target and renamed into place
    once complete (and matching ``sha1_hash``), so concurrent downloads of one file
    leave one whole file and a failed one leaves nothing.
    """
    if path is None:
        fname = url.split("/")[-1]
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split("/")[-1]) if os.path.isdir(path) else path
    if not fname:
        raise ValueError(f"download: path must name a file when the url ends in '/' "
                         f"(got url {url!r}, path {path!r})")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"download: retries must be an integer >= 0 (got {retries!r})")
    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). Adding "
                      "certificate verification is strongly advised.", stacklevel=2)
    if not overwrite and os.path.exists(fname) and \
            (sha1_hash is None or check_sha1(fname, sha1_hash)):
        return fname
    import requests
    folder = os.path.dirname(os.path.abspath(fname))
    os.makedirs(folder, exist_ok=True)

    def matches(tmp):
        if sha1_hash is not None and not check_sha1(tmp, sha1_hash):
            raise UserWarning(f"download: the content of {url} does not match sha1_hash "
                              f"{sha1_hash!r}; the file may be outdated or incomplete")

    for attempt in range(retries + 1):
        try:
            r = requests.get(url, stream=True, verify=verify_ssl)
            if r.status_code != 200:
                raise RuntimeError(f"download: failed downloading url {url} (HTTP status "
                                   f"{r.status_code})")
            write_chunks(fname, (c for c in r.iter_content(chunk_size=1 << 16) if c),
                         matches)
            return fname
        except Exception as e:
            if attempt == retries:
                raise
            warnings.warn(f"download: attempt {attempt + 1} for {url} failed ({e}); "
                          f"{retries - attempt} left", stacklevel=2)
