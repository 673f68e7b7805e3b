"""Build: every pyx/<package>/<_module>.pyx becomes the extension <package>._module.

Cython directives live here and only here.  NDRT_CYTHON_DEBUG=1 turns bounds and
wraparound checks back on and keeps the interpreter's debug information (-g); a release
build drops it (-g0): the generated C++ is about 15 MB, and its debug information took
about a quarter of the compile time.
"""
import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

DEBUG = os.environ.get("NDRT_CYTHON_DEBUG", "") not in ("", "0")
DIRECTIVES = dict(
    language_level=3,
    boundscheck=DEBUG,
    wraparound=DEBUG,
    initializedcheck=DEBUG,
    cdivision=not DEBUG,
    embedsignature=True,
)
# Python's own CFLAGS carry -g; a later -g0 wins.
DEBUG_INFO = [] if DEBUG else ["-g0"]
# Modules whose kernels use OpenMP prange (_sparse_common: its .pxd holds OpenMP helpers).
OPENMP = {"runtime._sparse_arith", "runtime._sparse_format", "runtime._sparse_common",
          "runtime._norm_kernels", "runtime._sparse_optim", "runtime._pool_kernels",
          "runtime._conv_kernels", "runtime._imperative", "runtime._executor"}
# Modules whose loops call sqrt and never read errno: without errno, sqrt vectorises.
NO_MATH_ERRNO = {"runtime._sparse_optim"}
# Modules that never read the floating-point exception flags: the compiler may then
# compute both sides of a select and vectorise it (relu's gradient g * (a > 0) was a
# branch per element, mispredicted on every other one); values are unchanged.
NO_TRAPPING_MATH = {"runtime._grad_kernels"}


def build_info():
    """What `runtime._sparse_common.build_info()` reports (a C string macro in every
    extension): the Cython that generated the C++, the compiler flags, the debug switch."""
    import Cython
    flags = " ".join(["-O3", "-std=c++17", *DEBUG_INFO])
    info = (f"cython={Cython.__version__};cflags={flags};"
            f"openmp={','.join(sorted(OPENMP))} (-fopenmp);"
            f"debug_checks={int(DEBUG)};numpy_headers={numpy.__version__}")
    return '"' + info.replace('"', "'") + '"'


def extensions():
    exts = []
    for src in sorted(Path("pyx").rglob("*.pyx")):
        name = ".".join(src.relative_to("pyx").with_suffix("").parts)
        omp = ["-fopenmp"] if name in OPENMP else []
        errno = ["-fno-math-errno"] if name in NO_MATH_ERRNO else []
        errno += ["-fno-trapping-math"] if name in NO_TRAPPING_MATH else []
        exts.append(Extension(
            name, [str(src)], language="c++",
            extra_compile_args=["-O3", "-std=c++17", *DEBUG_INFO, *omp, *errno],
            extra_link_args=omp,
            include_dirs=[numpy.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION"),
                           ("NDRT_BUILD_INFO", build_info())],
        ))
    return exts


setup(
    # Every subpackage (runtime.nd, runtime.ops, ...); tests/test_packaging.py checks the
    # installed tree against the source tree.
    packages=find_packages(include=["allocator", "allocator.*", "runtime", "runtime.*"]),
    package_data={"allocator": ["*.pyi", "py.typed"], "runtime": ["*.pyi", "py.typed"],
                  "runtime.nd": ["*.pyi"]},
    ext_modules=cythonize(extensions(), include_path=["pyx"], compiler_directives=DIRECTIVES,
                          annotate=bool(os.environ.get("NDRT_CYTHON_ANNOTATE"))),
    # Compile the extensions side by side in every build (pip, build, editable).
    options={"build_ext": {"parallel": os.cpu_count() or 1}},
    zip_safe=False,
)
