"""MXNet 1.x's ``mx.util``: the switches of MXNet's NumPy interface (``mx.np``) and
small environment helpers.

ndrt implements MXNet's legacy ``nd``/``sym`` interface only, so NumPy semantics are
always off: the queries say False, and turning a semantics on is refused with a
``NotImplementedError`` (code written for ``mx.np`` would otherwise run with the wrong
rules).  Turning them off, the state they are in, is accepted.
"""

import contextlib
import os

from runtime.context import num_gpus

__all__ = ["is_np_shape", "is_np_array", "set_np_shape", "set_np", "reset_np", "np_shape",
           "np_array", "use_np", "use_np_shape", "use_np_array", "getenv", "setenv",
           "get_gpu_count"]


def _refuse(what):
    raise NotImplementedError(
        f"{what}: MXNet's NumPy interface (mx.np, mx.npx and their shape and array "
        "semantics) is not part of ndrt, which implements the legacy nd/sym API; use "
        "mx.nd arrays")


def is_np_shape():
    """Whether NumPy shape semantics are on: always False in ndrt."""
    return False


def is_np_array():
    """Whether NumPy array semantics are on: always False in ndrt."""
    return False


def set_np_shape(active):
    """Turn NumPy shape semantics off (the only state ndrt has); return the previous
    state, False.  ``active=True`` raises NotImplementedError."""
    if active:
        _refuse("set_np_shape(True)")
    return False


def set_np(shape=True, array=True):
    """MXNet's switch for both NumPy semantics; only ``set_np(False, False)`` is
    accepted (a no-op)."""
    if shape or array:
        _refuse(f"set_np(shape={shape!r}, array={array!r})")


def reset_np():
    """Turn both NumPy semantics off: they already are."""


@contextlib.contextmanager
def np_shape(active=True):
    """A scope with NumPy shape semantics ``active``; only ``active=False`` is accepted."""
    if active:
        _refuse("np_shape(True)")
    yield


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
    """MXNet's decorator running under NumPy shape semantics: refused."""
    _refuse(f"use_np_shape({getattr(func, '__name__', func)!r})")


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
