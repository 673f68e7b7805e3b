"""``runtime.module.executor_group``: the home of MXNet 1.x's
:class:`DataParallelExecutorGroup`, here a view of a bound Module's executors."""

__all__ = ["DataParallelExecutorGroup"]


class DataParallelExecutorGroup:
    """The executors of a bound :class:`~runtime.module.Module` as MXNet's
    ``DataParallelExecutorGroup`` shows them (``Module._exec_group``): ``param_names``,
    ``param_arrays``, ``grad_arrays``, ``aux_names``, ``aux_arrays``, ``state_names``,
    ``state_arrays`` (each array in a list of its per-context copies), ``execs``,
    ``data_names``, ``label_names``, ``contexts``, ``slices``, ``batch_size``.

    A view made from a bound Module, not a binder of its own: the Module binds and runs
    its executors (MXNet's group is built from a symbol, contexts and shapes).

    Parameters
    ----------
    module : Module
        A bound Module.
    """

    def __init__(self, module):
        execs = module._execs
        self.execs = list(execs)
        self.contexts = list(module._contexts)
        self.slices = list(module._slices)
        self.batch_size = module._batch_size
        self.data_names = list(module.data_names)
        self.label_names = list(module.label_names)
        self.param_names = list(module._param_names)
        self.aux_names = list(module._aux_names)
        self.param_arrays = [[ex.arg_dict[n] for ex in execs] for n in self.param_names]
        self.grad_arrays = [[ex.grad_dict.get(n) for ex in execs] for n in self.param_names]
        self.aux_arrays = [[ex.aux_dict[n] for ex in execs] for n in self.aux_names]
        self.state_names = list(module._state_names)
        self.state_arrays = [[ex.arg_dict[n] for ex in execs] for n in self.state_names]
