"""Device labels: the allocator's only notion of where memory lives."""

import re

KINDS = ("cpu", "gpu", "cpu_pinned")
_ALIASES = {"cuda": "gpu", "pinned": "cpu_pinned"}
# kind, kind(N) or kind:N; nothing else (an unclosed 'cpu(0' is a typo, not a spec).
_SPEC = re.compile(r"^\s*([a-z_]+)\s*(?:\(\s*(\d+)\s*\)|:\s*(\d+))?\s*$")
_FORMS = "'cpu', 'cpu(0)', 'gpu(1)', 'gpu:1', 'cpu_pinned(0)'"


class Device:
    """A device kind ('cpu', 'gpu', 'cpu_pinned') and its ordinal, printed as ``gpu(0)``."""

    __slots__ = ("kind", "id")

    def __init__(self, kind, id=0):
        if kind not in KINDS:
            raise ValueError(f"device kind must be one of {KINDS} (got {kind!r})")
        if type(id) is not int or id < 0:
            raise ValueError(f"device id must be an integer >= 0 (got {id!r})")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "id", id)

    def __setattr__(self, name, value):
        raise AttributeError("Device is immutable")

    def __eq__(self, other):
        return isinstance(other, Device) and (self.kind, self.id) == (other.kind, other.id)

    def __hash__(self):
        return hash((self.kind, self.id))

    def __str__(self):
        return f"{self.kind}({self.id})"

    def __repr__(self):
        return f"Device({self.kind!r}, {self.id})"

    def __reduce__(self):
        return (Device, (self.kind, self.id))


def as_device(spec):
    """Turn a device spec into a :class:`Device`.

    Accepts None (the CPU), a Device, an object with ``device_type``/``device_id``
    (an ndrt or MXNet context), a ``(kind, id)`` tuple, or a string ``kind``,
    ``kind(N)`` or ``kind:N`` (``'cpu'``, ``'gpu(1)'``, ``'cuda:1'``, ``'cpu_pinned'``;
    ``cuda`` and ``pinned`` are aliases).  A string of another form raises ValueError,
    anything else TypeError.
    """
    if spec is None:
        return Device("cpu", 0)
    if isinstance(spec, Device):
        return spec
    if hasattr(spec, "device_type") and hasattr(spec, "device_id"):
        return Device(_ALIASES.get(spec.device_type, spec.device_type), spec.device_id)
    if isinstance(spec, tuple) and len(spec) == 2:
        return Device(_ALIASES.get(spec[0], spec[0]), spec[1])
    if not isinstance(spec, str):
        raise TypeError(f"device must be a string such as 'gpu(1)', a Device, a context or a "
                        f"(kind, id) tuple (got {spec!r})")
    m = _SPEC.match(spec.lower())
    kind = _ALIASES.get(m.group(1), m.group(1)) if m else None
    if kind not in KINDS:
        raise ValueError(f"device must be a spec such as {_FORMS} (got {spec!r})")
    return Device(kind, int(m.group(2) or m.group(3) or 0))
