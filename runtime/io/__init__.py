"""``runtime.io``: data iterators (MXNet's ``mx.io``): :class:`NDArrayIter`,
:class:`DataBatch`, :class:`DataDesc`, :class:`DataIter`."""

from runtime.io._ndarray_iter import DataBatch, DataDesc, DataIter, NDArrayIter

__all__ = ["DataBatch", "DataDesc", "DataIter", "NDArrayIter"]
