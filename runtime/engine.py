"""MXNet 1.x's ``mx.engine``: bulk execution settings.

MXNet's engine queues operators and can run a "bulk" of them as one task.  ndrt has no
engine queue: each operator runs when it is called (graph mode plans a hybridized
block's calls instead).  The bulk size is therefore remembered and returned, as MXNet's
API promises, and changes nothing.
"""

import contextlib
import operator

__all__ = ["bulk", "set_bulk_size"]

_bulk_size = 0      # MXNet's default outside a bulk scope


def set_bulk_size(size):
    """Set the bulk size (remembered only: operators run eagerly) and return the
    previous one."""
    global _bulk_size
    try:
        size = operator.index(size)
    except TypeError:
        raise TypeError(f"set_bulk_size: size must be an int (got {size!r})") from None
    if size < 0:
        raise ValueError(f"set_bulk_size: size must be >= 0 (got {size})")
    previous, _bulk_size = _bulk_size, size
    return previous


@contextlib.contextmanager
def bulk(size):
    """A scope with bulk size ``size`` (restored on exit); operators still run eagerly."""
    previous = set_bulk_size(size)
    try:
        yield
    finally:
        set_bulk_size(previous)
