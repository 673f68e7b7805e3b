"""The import layering of the runtime (shared/DESIGN.md), read from the sources.

A module imports its own layer and the layers below it, never a higher one, and never
from inside a function: where a lower layer must call up, the higher one registers a
hook, and runtime/_wiring.py installs every such hook at import
(``runtime._ndarray.set_method_hook``, ``set_storage_hooks``, ``set_autograd_hooks``,
``runtime._imperative.connect``, ``runtime._executor.set_ops``).  Inside a function only the optional or costly third-party
imports of ``LAZY`` may stand, each with its reason.

    base      runtime.base, runtime.errors, runtime.context, runtime._rng, runtime._device,
              runtime._files,
              runtime._dist, runtime._image_codec
    kernels   runtime._sparse_*, runtime._types, runtime._kvstore_kernels, runtime._blas
              (NumPy and C only; _blas loads MKL)
    storage   runtime._indexing, runtime._transfer < runtime._ndarray < runtime._storage
    invoker   runtime._imperative
    executor  runtime._executor
    ops       runtime.ops.* (the registry and the operator definitions)
    api       runtime, runtime.__main__, runtime.nd.*, runtime.autograd, runtime.gluon.*,
              runtime.optimizer.*, runtime.lr_scheduler, runtime.initializer, runtime.io.*,
              runtime.test_utils, runtime.mxnet_compat, runtime.jobs.*, runtime.kvstore,
              runtime.metric, runtime.symbol.*, runtime.executor, runtime.name,
              runtime.attribute, runtime.operator, runtime.module.*, runtime.model,
              runtime.callback, runtime.rnn.*, runtime.recordio, runtime.image,
              runtime.profiler,
              runtime.contrib.*, runtime.engine, runtime.util, runtime.random,
              runtime.visualization

A module without a layer (not in ``RANKS``, nor a ``runtime._sparse_*`` kernel, nor in
runtime.ops or runtime.nd) fails the test until it is given its place.
"""

import ast
import os
import re
from pathlib import Path

import pytest

# The sources to parse: the checkout these tests belong to, or the one that .ci/run's
# wheel legs name (they run a copy of tests/ outside the tree).
ROOT = Path(os.environ.get("NDRT_SOURCE_TREE") or Path(__file__).resolve().parents[2])
if not (ROOT / "pyx" / "runtime").is_dir():
    # A named tree that is not there is an error (.ci/run names one); a copy of tests/
    # run without one has nothing to parse.
    if os.environ.get("NDRT_SOURCE_TREE"):
        raise RuntimeError(f"NDRT_SOURCE_TREE={ROOT} holds no pyx/runtime")
    pytest.skip(f"no source tree at {ROOT} (set NDRT_SOURCE_TREE)", allow_module_level=True)

BASE, KERNELS, STORAGE_LOW, STORAGE, STORAGE_HIGH, INVOKER, EXECUTOR, OPS, API = range(9)
RANKS = {
    "runtime.base": BASE, "runtime.errors": BASE, "runtime.context": BASE, "runtime._rng": BASE,
    "runtime._device": BASE, "runtime._files": BASE,
    "runtime._types": KERNELS, "runtime._norm_kernels": KERNELS, "runtime._blas": KERNELS,
    "runtime._pool_kernels": KERNELS, "runtime._conv_kernels": KERNELS,
    "runtime._vision_kernels": KERNELS,
    "runtime._loss_kernels": KERNELS, "runtime._grad_kernels": KERNELS,
    "runtime._index_kernels": KERNELS, "runtime._rnn_kernels": KERNELS,
    "runtime._indexing": STORAGE_LOW, "runtime._transfer": STORAGE_LOW, "runtime._desc": STORAGE_LOW,
    "runtime._infer": STORAGE_HIGH,
    "runtime._ndarray": STORAGE, "runtime._storage": STORAGE_HIGH,
    "runtime._imperative": INVOKER, "runtime._tape": INVOKER, "runtime._executor": EXECUTOR,
    "runtime.ops": OPS,
    "runtime": API, "runtime.__main__": API, "runtime.nd": API, "runtime.autograd": API,
    "runtime.gluon": API, "runtime.optimizer": API, "runtime.lr_scheduler": API,
    "runtime.initializer": API, "runtime.io": API, "runtime.test_utils": API,
    "runtime.mxnet_compat": API, "runtime.jobs": API, "runtime._wiring": API,
    "runtime.kvstore": API, "runtime._dist": BASE, "runtime._kvstore_kernels": KERNELS,
    "runtime.metric": API, "runtime.symbol": API,
    "runtime.executor": API, "runtime.name": API, "runtime.attribute": API,
    "runtime.module": API,
    "runtime.operator": API, "runtime.model": API, "runtime.callback": API,
    "runtime.rnn": API,
    "runtime._image_codec": BASE, "runtime.recordio": API, "runtime.image": API,
    "runtime.profiler": API, "runtime.runtime": API, "runtime.contrib": API,
    "runtime.engine": API,
    "runtime.util": API, "runtime.random": API, "runtime.visualization": API,
}
NAMES = ["base", "kernels", "storage", "storage", "storage", "invoker", "executor", "ops",
         "api"]

# Third-party modules that may be imported inside a function, and why.
LAZY = {
    "cupy": "optional dependency (the gpu extra)",
    "scipy.sparse": "imported on first use: it costs import time and few programs need it",
    "scipy.stats": "imported on first use by test_utils' generator checks: it costs import "
                   "time and only test suites call them",
    "matplotlib": "optional dependency (the demo extra), needed by `ndrt train --plot` only",
    "threadpoolctl": "optional dependency (the dist extra): only a dist store limits the "
                     "threads of the BLAS libraries, once",
    "mpi4py": "optional dependency (the dist extra); importing mpi4py.MPI initialises MPI, "
              "so only a dist_* kvstore imports it",
    "requests": "optional dependency (the download extra), needed by "
                "gluon.utils.download only",
    "sklearn": "optional dependency (the demo extra) that costs about a second of import "
               "time, needed by `ndrt train mlp` only",
}

# Known violations waiting for their fix; each entry must still occur (remove it when
# the fix lands).  (module, imported module, "function" or "upward")
PENDING = {}


def _modules():
    """(module name, path) of every runtime source: runtime/**.py, pyx/runtime/*.pyx|pxd."""
    for path in sorted((ROOT / "runtime").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path
    for path in sorted((ROOT / "pyx" / "runtime").glob("*.p[yx][xd]")):
        yield "runtime." + path.stem, path


def rank(module):
    """The layer of ``module``: its own entry, its package's (runtime.ops.*, runtime.nd.*),
    kernels for runtime._sparse_* (DESIGN.md); None when it has none."""
    if module in RANKS:
        return RANKS[module]
    if module.startswith("runtime._sparse_"):
        return KERNELS
    for package in ("runtime.ops", "runtime.nd", "runtime.gluon", "runtime.optimizer",
                    "runtime.io", "runtime.jobs", "runtime.symbol", "runtime.module",
                    "runtime.contrib", "runtime.rnn"):
        if module.startswith(package + "."):
            return RANKS[package]
    return None


def _is_module(name):
    parts = name.split(".")
    base = ROOT.joinpath(*parts)
    return (base.with_suffix(".py").exists() or (base / "__init__.py").exists()
            or (ROOT / "pyx").joinpath(*parts).with_suffix(".pyx").exists()
            or (ROOT / "pyx").joinpath(*parts).with_suffix(".pxd").exists())


def _targets(module, names):
    """What ``from module import names`` imports: each name that is a submodule, else
    ``module`` itself."""
    subs = [f"{module}.{n}" for n in names if _is_module(f"{module}.{n}")]
    return subs if len(subs) == len(names) else subs + [module]


def _python_imports(path, module):
    """(imported module, line, inside a function) of a Python source."""
    tree = ast.parse(path.read_text(), str(path))
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:             # relative: from the module's package up
                    pkg = module if path.name == "__init__.py" else module.rpartition(".")[0]
                    for _ in range(child.level - 1):
                        pkg = pkg.rpartition(".")[0]
                    base = f"{pkg}.{base}" if base else pkg
                found.extend((t, child.lineno, in_function)
                             for t in _targets(base, [a.name for a in child.names]))
            visit(child, inside)

    visit(tree, False)
    return found


_CY_IMPORT = re.compile(r"^(\s*)(?:from\s+([\w.]+)\s+c?import\s+(.+)|c?import\s+(.+))$")
_CY_BLOCK = re.compile(r"^(?:async\s+def|def|cpdef|cdef|class)\b.*:\s*(#.*)?$")


def _cython_imports(path):
    """(imported module, line, inside a function) of a Cython source: the imports of an
    indented block under a top-level def/cdef/cpdef/class are inside a function."""
    found = []
    lines = path.read_text().splitlines()
    block = ""
    i = 0
    while i < len(lines):
        line, lineno = lines[i], i + 1
        i += 1
        code = line.split("#", 1)[0].rstrip()
        if not code.strip():
            continue
        if not code[0].isspace():
            block = code
        m = _CY_IMPORT.match(code)
        if not m:
            continue
        while code.count("(") > code.count(")") and i < len(lines):
            code += " " + lines[i].split("#", 1)[0].strip()
            i += 1
        m = _CY_IMPORT.match(code)
        indent, base, names, plain = m.groups()
        in_function = bool(indent) and bool(_CY_BLOCK.match(block))
        if base:
            names = [n.split(" as ")[0].strip() for n in names.strip("() ").split(",")]
            found.extend((t, lineno, in_function)
                         for t in _targets(base, [n for n in names if n]))
        else:
            found.extend((n.split(" as ")[0].strip(), lineno, in_function)
                         for n in plain.split(","))
    return found


def _imports():
    for module, path in _modules():
        found = (_python_imports(path, module) if path.suffix == ".py"
                 else _cython_imports(path))
        for target, lineno, in_function in found:
            yield module, path.relative_to(ROOT), target, lineno, in_function


def _violations():
    found = {}
    for module, path, target, lineno, in_function in _imports():
        where = f"{path}:{lineno}"
        runtime = target == "runtime" or target.startswith("runtime.")
        if in_function and (runtime or not any(
                target == m or target.startswith(m + ".") for m in LAZY)):
            found[(module, target, "function")] = f"{where}: {module} imports {target} " \
                "inside a function"
        if runtime and rank(target) is not None and rank(module) is not None \
                and rank(target) > rank(module):
            found[(module, target, "upward")] = (
                f"{where}: {module} ({NAMES[rank(module)]}) imports {target} "
                f"({NAMES[rank(target)]}), a higher layer")
    return found


def test_every_runtime_module_has_a_layer():
    missing = [m for m, _ in _modules() if rank(m) is None]
    assert not missing, f"give these modules a layer in RANKS: {missing}"


def test_imports_go_down_and_stay_at_module_level():
    found = _violations()
    bad = [msg for key, msg in found.items() if key not in PENDING]
    assert not bad, "\n".join(bad)


def test_pending_violations_still_exist():
    gone = [f"{key}: {why}" for key, why in PENDING.items() if key not in _violations()]
    assert not gone, "fixed: remove from PENDING:\n" + "\n".join(gone)


@pytest.mark.parametrize("source, expect", [
    ("import runtime.nd\n", [("runtime.nd", 1, False)]),
    ("def f():\n    from runtime import _transfer, nd\n",
     [("runtime._transfer", 2, True), ("runtime.nd", 2, True)]),
    ("from runtime._ndarray import (as_ctx,\n    as_dtype)\n", [("runtime._ndarray", 1, False)]),
    ("try:\n    import cupy\nexcept ImportError:\n    pass\n", [("cupy", 2, False)]),
])
def test_the_parsers_find_imports(tmp_path, source, expect):
    py = tmp_path / "m.py"
    py.write_text(source)
    assert _python_imports(py, "runtime.m") == expect
    pyx = tmp_path / "m.pyx"
    pyx.write_text(source.replace("def f", "cdef object f"))
    assert _cython_imports(pyx) == expect


def test_unknown_modules_have_no_layer():
    assert rank("runtime._newmodule") is None and rank("runtime.newpackage.x") is None
    assert rank("runtime._sparse_format") == KERNELS and rank("runtime.ops.x") == OPS


def test_a_function_level_import_of_the_api_fails(tmp_path):
    """The check itself: a function-level import of the API from a storage module is
    refused."""
    pyx = tmp_path / "m.pyx"
    pyx.write_text("cdef class A:\n    def f(self):\n        from runtime.nd import sparse\n")
    (target, _, in_function), = _cython_imports(pyx)
    assert target == "runtime.nd.sparse" and in_function
    assert rank(target) > rank("runtime._ndarray")


# The one module that imports CuPy on the runtime's behalf (the device boundary), and the
# allocator's CuPy bridge (allocator.cupy.use_pool: the allocator sits below runtime and
# cannot call into it).
CUPY_IMPORTERS = {"runtime._device", "allocator.cupy"}

# The public API layer: modules users import.  Operators and kernels work on raw arrays
# and registry ops and never reach up into them.
API_PACKAGES = ("runtime.nd", "runtime.ndarray", "runtime.autograd", "runtime.gluon",
                "runtime.nn", "runtime.optim", "runtime.optimizer", "runtime.initializer",
                "runtime.init", "runtime.lr_scheduler", "runtime.metric", "runtime.io",
                "runtime.kvstore", "runtime.jobs", "runtime.test_utils")


def _allocator_imports():
    for path in sorted((ROOT / "allocator").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for target, lineno, _ in _python_imports(path, module):
            yield module, path.relative_to(ROOT), target, lineno
    for path in sorted((ROOT / "pyx" / "allocator").glob("*.p[yx][xd]")):
        for target, lineno, _ in _cython_imports(path):
            yield "allocator." + path.stem, path.relative_to(ROOT), target, lineno


def _cupy_importers():
    everything = [(m, p, t, n) for m, p, t, n, _ in _imports()] + list(_allocator_imports())
    return {(m, f"{p}:{n}") for m, p, t, n in everything
            if t == "cupy" or t.startswith("cupy.")}


def test_only_the_device_module_imports_cupy():
    found = _cupy_importers()
    stray = sorted(where for module, where in found if module not in CUPY_IMPORTERS)
    assert not stray, "import CuPy through runtime._device:\n" + "\n".join(stray)
    assert {module for module, _ in found} == CUPY_IMPORTERS


def _is_api(target):
    return target == "runtime" or any(target == p or target.startswith(p + ".")
                                      for p in API_PACKAGES)


def test_operators_and_kernels_never_import_the_api():
    bad = [f"{path}:{lineno}: {module} imports {target}"
           for module, path, target, lineno, _ in _imports()
           if (module.startswith("runtime.ops") or rank(module) == KERNELS) and _is_api(target)]
    assert not bad, "\n".join(bad)


def test_the_api_check_knows_the_api():
    assert _is_api("runtime.nd.sparse") and _is_api("runtime.gluon.nn") and _is_api("runtime")
    assert not _is_api("runtime.ops.registry") and not _is_api("runtime._device")
    assert not _is_api("runtime.ndarray_kernels")
