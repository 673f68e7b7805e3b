"""Contexts: where arrays live (MXNet's ``mx.cpu()``, ``mx.gpu(i)``, ``with ctx:``)."""

import threading

_DEVICE_TYPES = ("cpu", "gpu", "cpu_pinned")


class _Local(threading.local):
    stack = None      # a class default: reading it never raises on a fresh thread


_local = _Local()


class Context:
    """A device type ('cpu', 'gpu' or 'cpu_pinned') and id, usable as ``with Context(...)``.

    Parameters
    ----------
    device_type : str or Context
        'cpu', 'gpu' or 'cpu_pinned' (or a Context to copy).
    device_id : int, optional
        Ordinal of the device (0 for the CPU).
    """

    __slots__ = ("device_type", "device_id")

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        if device_type not in _DEVICE_TYPES:
            raise ValueError(f"device_type must be one of {_DEVICE_TYPES} (got {device_type!r})")
        if type(device_id) is not int or device_id < 0:
            raise ValueError(f"device_id must be an integer >= 0 (got {device_id!r})")
        self.device_type = device_type
        self.device_id = device_id

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __reduce__(self):
        return (Context, (self.device_type, self.device_id))

    def __enter__(self):
        stack = _stack()
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()

    @property
    def device_typeid(self):
        """MXNet's numeric device type: 1 cpu, 2 gpu, 3 cpu_pinned."""
        return _DEVICE_TYPES.index(self.device_type) + 1


def _stack():
    s = _local.stack
    if s is None:
        s = _local.stack = []
    return s


def cpu(device_id=0):
    """The CPU context (MXNet's ``mx.cpu()``)."""
    return Context("cpu", device_id)


def gpu(device_id=0):
    """The context of GPU ``device_id`` (MXNet's ``mx.gpu(i)``)."""
    return Context("gpu", device_id)


def cpu_pinned(device_id=0):
    """Page-locked host memory (fast host-device transfers)."""
    return Context("cpu_pinned", device_id)


_DEFAULT = Context("cpu", 0)


def current_context():
    """The innermost ``with Context(...)`` of this thread, else ``cpu(0)``."""
    s = _local.stack
    return s[-1] if s else _DEFAULT


def num_gpus():
    """Number of CUDA devices visible (0 without a driver)."""
    from allocator import _cuda
    return _cuda.device_count()
