"""Gluon's helpers (``gluon.utils``): gradient clipping by global norm
(``clip_global_norm``) and the handles of forward hooks (``HookHandle``)."""

import math
import warnings
import weakref

import numpy as np

from runtime import nd
from runtime._ndarray import NDArray

__all__ = ["clip_global_norm", "HookHandle"]


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
