"""``ArrayDesc``: what is known of an array without its values (shape, dtype, storage
type, context).

A recorded node keeps one for every input and output, and the gradient rule receives it
in place of each array whose values the op does not declare as read (``Op.grad_inputs``
/ ``Op.grad_outputs``): so the tape saves only the arrays that rules read (the generic
operator suite checks every rule that way today).  It sits at the storage level and
imports nothing of the runtime, so that every layer, the tape included, can make one; a
``cdef class`` so that making one per recorded array stays cheap.
"""

import math


cdef class ArrayDesc:
    """Shape, dtype, storage type and context of an array, and nothing of its values.

    It answers ``.shape``, ``.dtype``, ``.stype``, ``.ctx``, ``.ndim`` and ``.size`` as the
    NDArray it describes does.  Whatever needs values raises: arithmetic and comparisons
    (``TypeError``), operators (``TypeError`` from the invoker), methods such as
    ``asnumpy`` or ``reshape`` (``AttributeError``).  Immutable; equal descriptions compare
    and hash equal.
    """

    # fields in _desc.pxd (the tape makes descriptions at C level)

    def __init__(self, shape, dtype, str stype, ctx):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.stype = stype
        self.ctx = ctx

    @staticmethod
    def of(x):
        """The description of NDArray (or ArrayDesc) ``x``."""
        cdef ArrayDesc d = ArrayDesc.__new__(ArrayDesc)
        d.shape = x.shape
        d.dtype = x.dtype
        d.stype = x.stype
        d.ctx = x.ctx
        return d

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    cdef tuple _key(self):
        return self.shape, self.dtype, self.stype, self.ctx

    cdef tuple _key_of(self, other):
        """The key of ``other``, which must be an ArrayDesc too (else a value is read)."""
        if not isinstance(other, ArrayDesc):
            raise TypeError(f"an ArrayDesc has no values to compare with "
                            f"{type(other).__name__} (it describes {self!r})")
        return (<ArrayDesc>other)._key()

    def __eq__(self, other):
        return self._key() == self._key_of(other)

    def __ne__(self, other):
        return self._key() != self._key_of(other)

    def __hash__(self):
        return hash(self._key())

    def __reduce__(self):
        return ArrayDesc, self._key()

    def __repr__(self):
        dtype = getattr(self.dtype, "__name__", self.dtype)
        return (f"ArrayDesc(shape={self.shape!r}, dtype={dtype}, stype={self.stype!r}, "
                f"ctx={self.ctx})")
