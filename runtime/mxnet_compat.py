"""Run programs written for MXNet 1.x unmodified: ``import mxnet`` resolves to ``runtime``.

    python -m runtime.mxnet_compat SCRIPT [ARGS]      run a script
    python -m runtime.mxnet_compat -m MODULE [ARGS]   run a module (``-m pytest tests/``)

or, from a ``conftest.py`` or a program's first lines, :func:`install`.  Nothing changes
unless asked for: importing ``runtime`` never installs the hook.

The hook is a ``sys.meta_path`` finder: ``mxnet`` and every ``mxnet.<path>`` are the very
module objects ``runtime`` and ``runtime.<path>`` (one class per name: an
``mxnet.nd.NDArray`` is a ``runtime.nd.NDArray``).  A path ndrt does not provide raises
``ModuleNotFoundError`` naming the MXNet path and the ndrt path it looked for.
"""

import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys

__all__ = ["install", "uninstall", "installed", "main"]

_PREFIX = "mxnet"
_TARGET = "runtime"


class _Alias(importlib.abc.Loader):
    def __init__(self, module):
        self._module = module

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        """Nothing to run: the module is ``runtime``'s, already imported and executed."""


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``mxnet`` and ``mxnet.*`` as the matching ``runtime`` modules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + "."):
            return None
        ours = _TARGET + fullname[len(_PREFIX):]
        try:
            module = importlib.import_module(ours)
        except ModuleNotFoundError as e:
            if e.name is not None and ours != e.name and not ours.startswith(e.name + "."):
                raise
            raise ModuleNotFoundError(
                f"{fullname}: ndrt does not provide this MXNet module (looked for {ours}; "
                f"docs/differences.md lists what ndrt leaves out)", name=fullname) from None
        spec = importlib.util.spec_from_loader(fullname, _Alias(module),
                                               is_package=hasattr(module, "__path__"))
        return spec


_FINDER = _Finder()


def install():
    """Make ``import mxnet`` (and ``mxnet.*``) resolve to ``runtime``; idempotent."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall():
    """Undo :func:`install` and forget the ``mxnet`` modules imported through it."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == _PREFIX or n.startswith(_PREFIX + ".")]:
        if getattr(sys.modules[name], "__name__", "").startswith(_TARGET):
            del sys.modules[name]


def installed():
    """Whether the hook is installed."""
    return _FINDER in sys.meta_path


_USAGE = ("usage: python -m runtime.mxnet_compat SCRIPT [ARGS]\n"
          "       python -m runtime.mxnet_compat -m MODULE [ARGS]")


def main(argv=None):
    """Run a script or module (``-m``) with the hook installed, as ``python`` would."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
