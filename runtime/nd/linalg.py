"""Linear algebra on batches of matrices (MXNet's ``mx.nd.linalg``): the registry
operators ``_linalg_<name>`` (runtime.ops.linalg documents them) under MXNet's short
names."""

from runtime.nd._ops import prefixed


_op = prefixed("_linalg_")


gemm = _op("gemm")
gemm2 = _op("gemm2")
potrf = _op("potrf")
potri = _op("potri")
trsm = _op("trsm")
trmm = _op("trmm")
syrk = _op("syrk")
inverse = _op("inverse")
det = _op("det")
slogdet = _op("slogdet")
sumlogdiag = _op("sumlogdiag")
gelqf = _op("gelqf")

__all__ = ["gemm", "gemm2", "potrf", "potri", "trsm", "trmm", "syrk", "inverse", "det",
           "slogdet", "sumlogdiag", "gelqf"]
