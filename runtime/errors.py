"""Warnings and errors of the runtime."""

from runtime.base import MXNetError


class StorageFallbackWarning(UserWarning):
    """An operator had no kernel for its inputs' storage types and densified them."""


class StorageFallbackError(NotImplementedError, MXNetError):
    """Storage fallback happened while ``set_storage_fallback('error')`` is in force."""


# What MXNet's C++ layer refuses (an operator's argument check, a damaged file) MXNet
# raises as MXNetError, which MXNet's own tests and users' ``except MXNetError`` expect;
# these classes are that without ceasing to be the ValueError, TypeError or IndexError
# that Python code expects for the same fault.
class MXNetValueError(MXNetError, ValueError):
    """A refused value: a shape, an attribute, the bytes of a file."""


class MXNetTypeError(MXNetError, TypeError):
    """A refused kind of argument: a non-array input, an unknown keyword."""


class MXNetIndexError(MXNetError, IndexError):
    """An index outside its range, refused by an operator."""


_MXNET_ERRORS = {ValueError: MXNetValueError, TypeError: MXNetTypeError,
                 IndexError: MXNetIndexError}


def as_mxnet_error(exc):
    """``exc`` as the MXNetError subclass of its built-in class (same message, traceback
    and cause), or ``exc`` itself when it is not exactly ValueError, TypeError or
    IndexError (already an MXNetError, or another class)."""
    cls = _MXNET_ERRORS.get(type(exc))
    if cls is None:
        return exc
    new = cls(*exc.args).with_traceback(exc.__traceback__)
    new.__cause__ = exc.__cause__
    new.__suppress_context__ = True
    return new


# MXNet's message (src/imperative/imperative.cc) for a backward from a head off the tape or
# through a graph an earlier backward consumed; the raiser appends which case it is.
NOT_IN_GRAPH = ("Cannot differentiate node because it is not in a computational graph. You "
                "need to set is_recording to true or use autograd.record() to save "
                "computational graphs for backward. If you want to differentiate the same "
                "graph twice, you need to pass retain_graph=True to backward.")
