"""The features of this build (MXNet's ``mx.runtime``): ``Features()``, an ordered map
from MXNet's feature names to :class:`Feature`, and ``feature_list()``.

Programs ask it which code path to take (``mx.runtime.Features().is_enabled('CUDA')``),
so every name MXNet 1.9 lists is here; a feature is enabled when ndrt has it: CUDA when
a GPU is visible (CuPy kernels), LAPACK (NumPy's), the profiler, the distributed
KVStore when mpi4py is installed, 64-bit tensor sizes.  MXNet's compile-time options
that ndrt has no counterpart of (cuDNN, MKL-DNN, OpenCV, the CPU instruction sets it was
built for ...) are disabled.
"""

import importlib.util
from collections import OrderedDict

from runtime.context import num_gpus

__all__ = ["Feature", "Features", "feature_list"]

# MXNet 1.9's feature names, in its order
_NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE",
          "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK",
          "MKLDNN", "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14",
          "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP")


def _enabled():
    return {"CUDA": num_gpus() > 0, "LAPACK": True, "PROFILER": True,
            "DIST_KVSTORE": importlib.util.find_spec("mpi4py") is not None,
            "INT64_TENSOR_SIZE": True}


class Feature:
    """One feature: ``name`` and whether it is ``enabled``."""

    def __init__(self, name, enabled):
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self):
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def feature_list():
    """Every feature, in MXNet's order."""
    on = _enabled()
    return [Feature(name, on.get(name, False)) for name in _NAMES]


class Features(OrderedDict):
    """The features by name."""

    def __init__(self):
        super().__init__((f.name, f) for f in feature_list())

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether ``feature_name`` (case-insensitive) is enabled; RuntimeError for a
        name MXNet does not list."""
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError(f"Feature '{name}' is unknown, known features are: "
                               f"{list(self.keys())}")
        return self[name].enabled
