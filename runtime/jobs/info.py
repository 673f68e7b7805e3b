"""``ndrt info``: what this installation of ndrt is made of and what it can use."""

import os
import platform
import sys
from importlib import metadata

import numpy as np
import scipy

import allocator
from allocator import _cuda
from allocator.errors import CudaError
from runtime import _imperative, _sparse_common
from runtime import _device
from runtime.context import num_gpus


def _version(*dists):
    """The installed version of the first of ``dists`` that is installed, or
    'not installed'."""
    for dist in dists:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue        # try the next name the package is published under
    return "not installed"


def cuda_state():
    """(usable, note): whether a CUDA device can be used, and why not when it cannot."""
    try:
        n = num_gpus()
    except (CudaError, RuntimeError) as e:
        return False, str(e)
    if n:
        return True, f"{n} device(s)"
    try:
        _cuda.init()
    except (CudaError, RuntimeError) as e:
        return False, str(e)
    return False, "the driver loads but reports no CUDA device"


def cupy_state():
    """(usable, note) for CuPy: importable and able to see a device."""
    try:
        cupy = _device.cupy("ndrt's GPU kernels")
    except ImportError:
        return False, "not installed (pip install 'ndrt[gpu]')"
    except Exception as e:                       # a broken CUDA install raises at import
        return False, f"import failed: {e}"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return False, f"CuPy {cupy.__version__} imports but sees no device ({e})"
    return n > 0, f"CuPy {cupy.__version__}, {n} device(s)"


def _fallback_note():
    """The storage fallback mode, or what is wrong with NDRT_STORAGE_FALLBACK."""
    try:
        mode = _imperative.get_storage_fallback()
    except ValueError as e:
        return f"not usable: {e}"
    return f"{mode} (NDRT_STORAGE_FALLBACK or runtime.set_storage_fallback)"


def mpi_state():
    """The MPI library that mpi4py uses, and mpi4py's version, or why there is none;
    MPI is not initialised for it (MPI_Get_library_version may run before MPI_Init)."""
    try:
        import mpi4py      # the dist extra; optional
    except ImportError:
        return "not installed (pip install 'ndrt[dist]' for the dist_sync kvstore)"
    if "mpi4py.MPI" not in sys.modules:
        saved = (mpi4py.rc.initialize, mpi4py.rc.finalize)
        mpi4py.rc.initialize = mpi4py.rc.finalize = False
        try:
            from mpi4py import MPI
        finally:
            mpi4py.rc.initialize, mpi4py.rc.finalize = saved
    else:
        from mpi4py import MPI
    library = " ".join(MPI.Get_library_version().strip().splitlines()[0].split())
    major, minor = MPI.Get_version()
    return f"{library} (MPI {major}.{minor}), mpi4py {mpi4py.__version__}"


def info_lines():
    """The report of ``ndrt info`` as a list of lines (no GPU needed)."""
    build = _sparse_common.build_info()
    cuda_ok, cuda_note = cuda_state()
    cupy_ok, cupy_note = cupy_state()
    cfg = allocator.config()
    lines = [
        f"ndrt {_version('ndrt')} ({os.path.dirname(os.path.dirname(__file__))})",
        f"Python {platform.python_version()} ({sys.implementation.name}, "
        f"{platform.machine()}, {platform.system()})",
        f"NumPy {np.__version__}, SciPy {scipy.__version__}",
        f"built with: Cython {build.get('cython', 'unknown')}, NumPy headers "
        f"{build.get('numpy_headers', 'unknown')}, flags {build.get('cflags', 'unknown')}, "
        f"OpenMP in {build.get('openmp', 'unknown')}, debug checks "
        f"{'on' if build.get('debug_checks') == '1' else 'off'}",
        f"cuda-python {_version('cuda-python')}, "
        f"CuPy {_version('cupy-cuda12x', 'cupy-cuda13x', 'cupy')}",
        f"OpenMP threads of the sparse kernels: {_sparse_common.get_num_threads()} "
        f"(CPUs usable: {len(os.sched_getaffinity(0))}, OMP_NUM_THREADS="
        f"{os.environ.get('OMP_NUM_THREADS', 'unset')})",
        f"fast path: {_imperative.fast_path_note()}",
        f"storage fallback: {_fallback_note()}",
        "pools: " + ", ".join(f"{kind} {strategy}" for kind, strategy in cfg["pool_type"].items())
        + f" (page {cfg['page_size']} B, round cutoff 2^{cfg['round_cutoff']}, "
          f"GPU reserve {cfg['reserve_percent']}%, max split {cfg['max_split_size']} B)",
        f"CUDA usable: {'yes' if cuda_ok else 'no'}: {cuda_note}",
        f"CuPy usable: {'yes' if cupy_ok else 'no'}: {cupy_note}",
        f"MPI (dist_sync kvstore): {mpi_state()}",
    ]
    for name in ("tqdm", "matplotlib", "scikit-learn"):
        lines.append(f"{name}: {_version(name)}")
    return lines
