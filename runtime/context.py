"""Contexts: where arrays live (MXNet's ``mx.cpu()``, ``mx.gpu(i)``, ``with ctx:``)."""

import operator
import threading
import warnings

from allocator import _cuda

_DEVICE_TYPES = ("cpu", "gpu", "cpu_pinned")
_INSTANCES = {}     # (class, device type, id) -> the one Context of those


class _Local(threading.local):
    stack = None      # a class default: reading it never raises on a fresh thread


_local = _Local()


class _ContextType(type):
    """Gives ``Context`` MXNet's deprecated class attribute ``default_ctx``."""

    @property
    def default_ctx(cls):
        """The current context (MXNet 1.x's deprecated ``Context.default_ctx``; use
        :func:`current_context`); assigning it replaces the current context of this
        thread, as ``test_utils.set_default_context``."""
        warnings.warn("Context.default_ctx has been deprecated: use current_context() "
                      "and test_utils.set_default_context", DeprecationWarning, stacklevel=2)
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, ctx):
        warnings.warn("Context.default_ctx has been deprecated: use current_context() "
                      "and test_utils.set_default_context", DeprecationWarning, stacklevel=2)
        set_current_context(ctx)


class Context(metaclass=_ContextType):
    """A device type ('cpu', 'gpu' or 'cpu_pinned') and id, usable as ``with Context(...)``.

    A Context is an immutable value (equal and hashed by device type and id; equal
    contexts are one object): every array made without ``ctx=`` shares the default one,
    so changing it in place would move them all.

    Parameters
    ----------
    device_type : str or Context
        'cpu', 'gpu' or 'cpu_pinned', or a Context to copy (``device_id`` is then
        ignored, as MXNet does).  'cpu_shared' (MXNet's shared-memory context for
        multi-process data loading) names the CPU: ``Context('cpu_shared', i)`` is
        ``cpu(i)``: ndrt's host arrays share one pool, and its DataLoader moves
        batches through shared memory by itself.
    device_id : int, optional
        Ordinal of the device (0 for the CPU).
    """

    __slots__ = ("device_type", "device_id")
    devtype2str = {i + 1: name for i, name in enumerate(_DEVICE_TYPES)}
    """MXNet's numeric device types by number: 1 cpu, 2 gpu, 3 cpu_pinned."""
    devstr2type = {name: i + 1 for i, name in enumerate(_DEVICE_TYPES)}
    """The numbers of :attr:`devtype2str` by device type name."""

    def __new__(cls, device_type, device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        elif not isinstance(device_type, str):
            raise TypeError(f"device_type must be one of {_DEVICE_TYPES} or a Context "
                            f"(got {device_type!r})")
        if device_type == "cpu_shared":
            device_type = "cpu"
        elif device_type not in _DEVICE_TYPES:
            raise ValueError(f"device_type must be one of {_DEVICE_TYPES} (got {device_type!r})")
        try:                                            # ints and NumPy integers
            index = None if isinstance(device_id, bool) else operator.index(device_id)
        except TypeError:
            index = None
        if index is None:
            raise TypeError(f"device_id must be an integer >= 0 (got {device_id!r})")
        if index < 0:
            raise ValueError(f"device_id must be an integer >= 0 (got {device_id!r})")
        # one object per (class, device type, id), so the hot paths (the parameters'
        # lookup, the invoker's input check) compare contexts by identity first
        key = (cls, device_type, index)
        self = _INSTANCES.get(key)
        if self is None:
            # The one place the slots are written: __setattr__ refuses every later write.
            self = object.__new__(cls)
            object.__setattr__(self, "device_type", device_type)
            object.__setattr__(self, "device_id", index)
            self = _INSTANCES.setdefault(key, self)
        return self

    def __setattr__(self, name, value):
        raise AttributeError(f"Context is immutable: {name!r} cannot be set (make a new "
                             "one, e.g. gpu(1))")

    def __delattr__(self, name):
        raise AttributeError(f"Context is immutable: {name!r} cannot be deleted")

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
        return Context.devstr2type[self.device_type]


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


def set_current_context(ctx):
    """Make ``ctx`` the current context of this thread until the enclosing ``with``
    block (if any) ends, as MXNet's assignment of the default context: it replaces the
    innermost one rather than adding a level."""
    if not isinstance(ctx, Context):
        raise TypeError(f"ctx must be a Context (got {ctx!r})")
    stack = _stack()
    if stack:
        stack[-1] = ctx
    else:
        stack.append(ctx)


def num_gpus():
    """Number of CUDA devices visible (0 without a driver)."""
    return _cuda.device_count()


def saved_context(device_type, device_id):
    """The context that an array saved on ``device_type``/``device_id`` loads onto: that
    one, except that a GPU array loads onto ``cpu(0)`` on a machine without GPUs (MXNet's
    ``NDArray::Load`` rule), so that checkpoints written on a GPU load anywhere."""
    if device_type == "gpu" and num_gpus() == 0:
        return Context("cpu", 0)
    return Context(device_type, device_id)
