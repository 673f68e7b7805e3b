"""MXNet 1.x's ``mx.util``: the switches of MXNet's NumPy semantics and small
environment helpers.

NumPy shape semantics (``set_np_shape``, ``np_shape``, ``use_np_shape``; per thread, off
in a new thread, as in MXNet) only change how symbolic shape inference marks what it
does not know (``Symbol.infer_shape_partial``: -1 for an unknown dimension and None for
an unknown shape, where legacy shapes use 0 and ``()``; a given -1 is then unknown and a
given 0 a real size): NDArrays always have them, zero-size dimensions and scalars being
real shapes.  NumPy array semantics belong to MXNet's ``mx.np`` interface, which ndrt does
not implement: the queries say False and turning them on is refused with a
``NotImplementedError`` (code written for ``mx.np`` would otherwise run with the wrong
rules).
"""

import contextlib
import functools
import os
import threading

from runtime.context import num_gpus

__all__ = ["is_np_shape", "is_np_array", "set_np_shape", "set_np", "reset_np", "np_shape",
           "np_array", "use_np", "use_np_shape", "use_np_array", "getenv", "setenv",
           "get_gpu_count"]

_state = threading.local()


def _refuse(what):
    raise NotImplementedError(
        f"{what}: MXNet's NumPy array interface (mx.np, mx.npx and their array "
        "semantics) is not part of ndrt, which implements the legacy nd/sym API; use "
        "mx.nd arrays")


def is_np_shape():
    """Whether NumPy shape semantics are on in this thread."""
    return getattr(_state, "np_shape", False)


def is_np_array():
    """Whether NumPy array semantics are on: always False in ndrt."""
    return False


def set_np_shape(active):
    """Turn NumPy shape semantics on or off in this thread; returns the previous
    state."""
    prev = is_np_shape()
    _state.np_shape = bool(active)
    return prev


def set_np(shape=True, array=True):
    """MXNet's switch for both NumPy semantics: ``shape`` as :func:`set_np_shape`;
    ``array=True`` is refused."""
    if array:
        _refuse(f"set_np(shape={shape!r}, array={array!r})")
    set_np_shape(shape)


def reset_np():
    """Turn both NumPy semantics off."""
    set_np_shape(False)


@contextlib.contextmanager
def np_shape(active=True):
    """A scope with NumPy shape semantics ``active`` (this thread's previous state is
    put back on exit)."""
    prev = set_np_shape(active)
    try:
        yield
    finally:
        set_np_shape(prev)


@contextlib.contextmanager
def np_array(active=True):
    """A scope with NumPy array semantics ``active``; only ``active=False`` is accepted."""
    if active:
        _refuse("np_array(True)")
    yield


def use_np(func):
    """MXNet's decorator running a function or class under NumPy semantics: refused."""
    _refuse(f"use_np({getattr(func, '__name__', func)!r})")


def use_np_shape(func):
    """MXNet's decorator running a function under NumPy shape semantics (a class is
    refused: decorate its methods)."""
    if isinstance(func, type) or not callable(func):
        raise TypeError(f"use_np_shape: func must be a function (got {func!r})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        with np_shape(True):
            return func(*args, **kwargs)
    return wrapped


def use_np_array(func):
    """MXNet's decorator running under NumPy array semantics: refused."""
    _refuse(f"use_np_array({getattr(func, '__name__', func)!r})")


def getenv(name):
    """The value of environment variable ``name``, or None (MXNet reads its C++
    process environment; ndrt's settings are read from ``os.environ``)."""
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable ``name`` to ``value`` (a str), or unset it with None."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def get_gpu_count():
    """The number of GPUs visible (``runtime.num_gpus()``)."""
    return num_gpus()
