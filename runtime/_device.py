"""The device boundary of the kernels: the one module that imports CuPy, and the few moves
between host (NumPy) and device (CuPy) arrays that kernels make.

A kernel receives raw arrays, NumPy ones for CPU data and CuPy ones for GPU data; it asks
this module which array module to compute with and how to bring small host values (index
arrays, masks, lengths) to the device of its output, or device values to the host.

- :func:`cupy` -- the CuPy module, imported on first use (ImportError naming the ``gpu``
  extra when it is not installed)
- :func:`array_module` -- NumPy or CuPy for a kernel array
- :func:`as_strided` -- a strided view in the array's own module
- :func:`to_host` -- a NumPy array of a kernel array (the array itself, or a copy)
- :func:`like` / :func:`store` -- host values on the device of a kernel array / written
  into a kernel output
- :func:`cupy_view` -- a zero-copy CuPy array over a GPU NDArray

NumPy arrays never reach CuPy, so none of this imports CuPy on a host-only program.
"""

import numpy as np

_GPU_EXTRA = "pip install 'ndrt[gpu]'"
_cupy = None


def cupy(what="this"):
    """The ``cupy`` module, imported on first use.

    Parameters
    ----------
    what : str
        What needs CuPy, for the message (``"from_dlpack of GPU memory"``).

    Raises
    ------
    ImportError
        CuPy is not installed: ``<what> needs CuPy: pip install 'ndrt[gpu]'``.  Any other
        error of CuPy's import (a broken CUDA install) propagates as raised.
    """
    global _cupy
    if _cupy is None:
        try:
            import cupy as module    # optional dependency (the gpu extra): imported on use
        except ImportError:
            raise ImportError(f"{what} needs CuPy: {_GPU_EXTRA}") from None
        _cupy = module
    return _cupy


def array_module(a):
    """``numpy`` for a NumPy array, ``cupy`` for any other kernel array."""
    return np if isinstance(a, np.ndarray) else cupy("a GPU array")


def as_strided(a, shape, strides):
    """A strided view of kernel array ``a`` (``stride_tricks.as_strided`` of its module)."""
    return array_module(a).lib.stride_tricks.as_strided(a, shape, strides)


def to_host(a, copy=False):
    """A NumPy array of kernel array ``a``: ``a`` itself if it is NumPy (a copy with
    ``copy=True``), else a host copy of the device array."""
    if isinstance(a, np.ndarray):
        return np.array(a) if copy else a
    return np.asarray(a.get())


def like(a, values):
    """Host ``values`` on the device of kernel array ``a``: ``values`` itself beside a
    NumPy array, a device copy beside a CuPy one."""
    if isinstance(a, np.ndarray):
        return values
    return cupy("a GPU array").asarray(values)


def store(out, values):
    """Write host ``values`` into kernel output ``out`` (NumPy or CuPy), broadcasting."""
    out[...] = like(out, values)


def cupy_view(x):
    """A CuPy array over GPU NDArray ``x`` (zero-copy); needs the ``gpu`` extra."""
    cp = cupy("this operation on a GPU array")
    with cp.cuda.Device(x.ctx.device_id):
        return cp.asarray(x)
