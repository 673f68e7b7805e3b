"""``runtime.io``: data iterators (MXNet's ``mx.io``): :class:`NDArrayIter`,
:class:`CSVIter`, :class:`LibSVMIter`, :class:`MNISTIter`, :class:`PrefetchingIter`, :class:`ResizeIter`,
:class:`ImageRecordIter`,
:class:`DataBatch`, :class:`DataDesc`, :class:`DataIter`."""

from runtime.io._ndarray_iter import DataBatch, DataDesc, DataIter, NDArrayIter
from runtime.io._file_iters import CSVIter, LibSVMIter, MNISTIter
from runtime.io._wrappers import PrefetchingIter, ResizeIter
from runtime.io._image_record import ImageRecordIter

__all__ = ["DataBatch", "DataDesc", "DataIter", "NDArrayIter", "CSVIter", "LibSVMIter", "MNISTIter",
           "PrefetchingIter", "ResizeIter", "ImageRecordIter"]
