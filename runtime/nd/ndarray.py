"""MXNet 1.x's ``mxnet.ndarray.ndarray`` module path: the NDArray class and the
storage-type codes (``_STORAGE_TYPE_STR_TO_ID``) that 1.x programs and tests import from
it.  The class lives in ``runtime._ndarray``; this module only names it again."""

from runtime._ndarray import NDArray
from runtime.nd._mxnet_format import STYPE_CODES

# MXNet's NDArrayStorageType codes: kUndefinedStorage -1, then the saved-file codes
_STORAGE_TYPE_UNDEFINED = -1
_STORAGE_TYPE_DEFAULT = STYPE_CODES["default"]
_STORAGE_TYPE_ROW_SPARSE = STYPE_CODES["row_sparse"]
_STORAGE_TYPE_CSR = STYPE_CODES["csr"]
_STORAGE_TYPE_STR_TO_ID = {"undefined": _STORAGE_TYPE_UNDEFINED, **STYPE_CODES}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}

__all__ = ["NDArray"]
