"""The scripts of tests/runtime/data that wrote reference values with MXNet 1.9.1, loaded
as modules so that a test builds its side from the same inputs (each script imports
mxnet only when run)."""
import importlib.util
from pathlib import Path

DATA = Path(__file__).parent / "data"


def maker(name):
    """The module of ``data/<name>.py``."""
    spec = importlib.util.spec_from_file_location(name, DATA / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
