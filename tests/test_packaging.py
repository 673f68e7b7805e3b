"""The installed package holds everything the source tree defines.

Runs against whichever ``runtime`` and ``allocator`` are imported: the source tree
(editable) or site-packages (the wheel legs of .ci/run, which set NDRT_EXPECT_INSTALLED=1
and NDRT_SOURCE_TREE to the clone the wheel was built from).
"""
import importlib
import importlib.util
import os
import sysconfig
from pathlib import Path

import pytest

import allocator
import runtime

PACKAGES = {"allocator": allocator, "runtime": runtime}


def _source_tree():
    env = os.environ.get("NDRT_SOURCE_TREE")
    if env:
        assert (Path(env) / "pyx").is_dir(), f"NDRT_SOURCE_TREE={env} holds no pyx/"
        return Path(env)
    here = Path(__file__).resolve().parents[1]
    if (here / "setup.py").is_file() and (here / "pyx").is_dir():
        return here
    pytest.skip("no source tree to compare with (set NDRT_SOURCE_TREE)")


def _installed_root(name):
    return Path(PACKAGES[name].__file__).resolve().parent


def _subpackages(root):
    return {".".join(p.parent.relative_to(root.parent).parts)
            for p in root.rglob("__init__.py") if "__pycache__" not in p.parts}


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_every_subpackage_is_installed(name):
    src = _source_tree() / name
    assert _subpackages(src) <= _subpackages(_installed_root(name))


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_stubs_and_py_typed_are_installed(name):
    src = _source_tree() / name
    installed = _installed_root(name)
    want = {p.relative_to(src) for p in src.rglob("*.pyi")} | {Path("py.typed")}
    have = {p.relative_to(installed) for p in installed.rglob("*.pyi")}
    have |= {Path("py.typed")} if (installed / "py.typed").is_file() else set()
    assert want <= have


def test_every_extension_is_importable():
    pyx = _source_tree() / "pyx"
    names = [".".join(p.relative_to(pyx).with_suffix("").parts) for p in pyx.rglob("*.pyx")]
    assert names
    for name in names:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin.endswith(sysconfig.get_config_var("EXT_SUFFIX")), name
        importlib.import_module(name)


def test_every_python_module_imports():
    for name in PACKAGES:
        root = _installed_root(name)
        for path in root.rglob("*.py"):
            rel = path.relative_to(root.parent).with_suffix("")
            if rel.name == "__main__":
                continue
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            importlib.import_module(".".join(parts))


@pytest.mark.skipif(os.environ.get("NDRT_EXPECT_INSTALLED") != "1",
                    reason="only the wheel legs of .ci/run import from site-packages")
def test_imports_come_from_site_packages():
    site = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    for name in PACKAGES:
        root = _installed_root(name)
        assert root.parent in site, f"{name} imported from {root}, not from {site}"


def _stub_names(path):
    """Top-level names a .pyi declares (functions, classes, variables)."""
    import ast
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_every_extension_has_a_stub_that_matches_it():
    pyx = _source_tree() / "pyx"
    for src in pyx.rglob("*.pyx"):
        name = ".".join(src.relative_to(pyx).with_suffix("").parts)
        mod = importlib.import_module(name)
        stub = Path(mod.__file__).parent / (name.rsplit(".", 1)[1] + ".pyi")
        assert stub.is_file(), f"{name} has no .pyi stub"
        declared = _stub_names(stub)
        missing = sorted(n for n in declared if not hasattr(mod, n))
        assert not missing, f"{stub.name} declares names {name} lacks: {missing}"
        public = {n for n, v in vars(mod).items()
                  if not n.startswith("_") and callable(v)
                  and getattr(v, "__module__", name) == name}
        undeclared = sorted(public - declared)
        assert not undeclared, f"{stub.name} does not declare {undeclared}"


def test_version_is_the_installed_distributions():
    # runtime.__version__ is pyproject's one source (dynamic version); every leg of .ci/run
    # installs the package, so its metadata must agree.
    from importlib.metadata import PackageNotFoundError, version
    try:
        installed = version("ndrt")
    except PackageNotFoundError:
        pytest.skip("ndrt is not installed (an in-place build): no metadata to compare")
    assert installed == runtime.__version__
    assert runtime.__version__.count(".") == 2 and runtime.__version__.split(".")[0].isdigit()
