"""The one place where the lower layers are handed the routines of the higher ones.

A lower layer never imports a higher one (``tests/runtime/test_layering.py``).  Where one
must call up, it offers a setter, and this module, the first thing ``runtime/__init__.py``
imports, calls each setter once, in an order that has every hook in place before any
user code runs:

=====================  =====================  =========================================
lower layer            setter                 what it is handed, and why
=====================  =====================  =========================================
``runtime._imperative``  ``connect``          the operator registry (``runtime.ops``):
                                              the invoker finds each op, its ufunc and
                                              scalar forms there; the registry's modules
                                              sit above the invoker
``runtime._executor``  ``set_ops``            the accumulating ``add`` op (sparse
                                              gradients) and the reductions' axis rule
``runtime._ndarray``   ``set_storage_hooks``  ``runtime._storage``'s sparse ``zeros``,
                                              ``check_format`` and ``rebuild`` (pickling)
``runtime._ndarray``   ``set_autograd_hooks`` ``runtime.autograd``'s ``attach_grad``,
                                              variable nodes, ``backward`` and the
                                              recording flag, behind NDArray's methods
``runtime._ndarray``   ``set_method_hook``    ``runtime.nd``'s functions, behind the
                                              methods that run operators (``x.exp()``,
                                              ``x.sum(axis=1)``, ``T``, ``astype``,
                                              indexing)
``runtime.autograd``   ``set_symbol_hook``    ``runtime.symbol``'s Symbol of a tape
                                              entry, behind ``autograd.get_symbol``
=====================  =====================  =========================================

One hook is not here because it is C-level and goes down: ``runtime._imperative``
hands NDArray its Python operators (``x + y``) as C function pointers through
``_ndarray.pxd`` (``set_operator_impl``) when it is imported.
"""

from runtime import _executor, _imperative, _ndarray, _storage
from runtime import ops

_imperative.connect(ops.OPS)
_executor.set_ops(ops.OPS["add"], ops.reduce.reduced_axes)
_ndarray.set_storage_hooks(_storage.zeros, _storage.check_format, _storage.rebuild)

from runtime import autograd  # noqa: E402  (after the registry is connected)

_ndarray.set_autograd_hooks(autograd._attach_grad, autograd._tape.variable_node,
                            autograd.backward, autograd.is_recording)

from runtime import nd  # noqa: E402

_ndarray.set_method_hook(nd._method)
_ndarray.set_pickle_hook(nd._io.from_mxnet_state)

from runtime.symbol import _recorded  # noqa: E402

autograd.set_symbol_hook(_recorded.from_tape)

__all__ = []
