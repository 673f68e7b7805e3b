"""``SequentialModule`` (MXNet's ``mx.mod.SequentialModule``): modules run one after the
other, the outputs of each the data of the next.

``add(module, take_labels=True)`` gives that module the batch's labels (the last one,
with the loss, usually); ``auto_wiring=True`` renames the previous module's outputs to
this module's data names.  ``backward`` runs the modules in reverse, each passing the
gradients of its data inputs to the one before, so every module after the first is
bound with ``inputs_need_grad``.  The parameters of all the modules must have
different names.
"""

import copy

from runtime.module.base_module import BaseModule

_META_KEYS = ("take_labels", "auto_wiring")


class SequentialModule(BaseModule):
    """A chain of modules trained as one.

    Parameters
    ----------
    logger : logging.Logger or the logging module
    """

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger=None):
        if logger is not None:
            self.logger = logger
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self.binded = self.params_initialized = self.optimizer_initialized = False
        self.for_training = self.inputs_need_grad = False

    def add(self, module, **kwargs):
        """Append ``module`` (with ``take_labels``/``auto_wiring`` flags) and return this
        SequentialModule, so that calls chain.  Adding resets the binding: bind again."""
        if not isinstance(module, BaseModule):
            raise TypeError(f"SequentialModule.add: module must be a module (got "
                            f"{type(module).__name__})")
        for key in kwargs:
            if key not in _META_KEYS:
                raise ValueError(f"SequentialModule.add: unknown flag {key!r} (flags: "
                                 f"{', '.join(_META_KEYS)})")
        self._modules.append(module)
        self._metas.append(dict(kwargs))
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    # -- names and shapes ------------------------------------------------------------------
    def _first_last(self, what):
        if not self._modules:
            raise RuntimeError(f"{what}: add a module first")
        return self._modules[0], self._modules[-1]

    @property
    def data_names(self):
        return self._first_last("data_names")[0].data_names

    @property
    def output_names(self):
        return self._first_last("output_names")[1].output_names

    @property
    def data_shapes(self):
        self._check("data_shapes")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        self._check("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._check("output_shapes")
        return self._modules[-1].output_shapes

    def _takes_labels(self, i):
        return bool(self._metas[i].get(self.META_TAKE_LABELS, False))

    # -- binding and parameters ------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind each module on the shapes of the previous one's outputs."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        self._first_last("bind")
        if inputs_need_grad and not for_training:
            raise ValueError("bind: inputs_need_grad=True needs for_training=True")
        if shared_module is not None:
            raise NotImplementedError("bind: a SequentialModule shares no module "
                                      "(shared_module must be None)")
        # every wiring checked before any module is bound
        names = [d[0] for d in data_shapes]
        for i, module in enumerate(self._modules):
            wants = list(module.data_names)
            if self._metas[i].get(self.META_AUTO_WIRING, False):
                if len(wants) != len(names):
                    raise ValueError(f"bind: module {i} takes {len(wants)} data inputs "
                                     f"({', '.join(wants)}) (got {len(names)}: "
                                     f"{', '.join(names)})")
            elif sorted(wants) != sorted(names):
                raise ValueError(f"bind: module {i} takes the data inputs {wants} (got "
                                 f"{names}; add it with auto_wiring=True to rename them)")
            names = list(module.output_names)
        shapes = list(data_shapes)
        for i, module in enumerate(self._modules):
            if self._metas[i].get(self.META_AUTO_WIRING, False):
                shapes = [(name, s[1]) for name, s in zip(module.data_names, shapes)]
            module.bind(data_shapes=shapes,
                        label_shapes=label_shapes if self._takes_labels(i) else None,
                        for_training=for_training,
                        inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                        force_rebind=force_rebind, grad_req=grad_req)
            shapes = module.output_shapes
        self._label_shapes = label_shapes if any(
            self._takes_labels(i) for i in range(len(self._modules))) else None
        self.binded, self.for_training = True, for_training
        self.inputs_need_grad = inputs_need_grad

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise every module's parameters; ``arg_params``/``aux_params`` hold those
        of all the modules, by name."""
        self._check("init_params")
        if self.params_initialized and not force_init:
            return
        owners = {}
        for i, module in enumerate(self._modules):
            for name in list(module._param_names) + list(module._aux_names):
                if name in owners:
                    raise ValueError(f"init_params: duplicated parameter name {name!r} "
                                     f"(modules {owners[name]} and {i})")
                owners[name] = i
        for given in (arg_params, aux_params):
            extra = [k for k in given or () if k not in owners]
            if extra and not allow_extra:
                raise ValueError(f"init_params: {extra[0]!r} is not a parameter of the "
                                 "modules (set allow_extra=True to ignore it)")

        def own(given, names):
            return None if given is None else {k: v for k, v in given.items() if k in names}

        for module in self._modules:
            module.init_params(initializer, own(arg_params, module._param_names),
                               own(aux_params, module._aux_names), allow_missing,
                               force_init)
        self.params_initialized = True

    def get_params(self):
        """(arg_params, aux_params) of all the modules."""
        self._check("get_params", params=True)
        arg, aux = {}, {}
        for module in self._modules:
            a, x = module.get_params()
            arg.update(a)
            aux.update(x)
        return arg, aux

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Give every module its optimizer (each its own, made from the same
        arguments)."""
        self._check("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            return
        for module in self._modules:
            module.init_optimizer(kvstore, optimizer, optimizer_params, force_init)
        self.optimizer_initialized = True

    # -- steps ---------------------------------------------------------------------------
    def prepare(self, data_batch, sparse_row_id_fn=None):
        for module in self._modules:
            module.prepare(data_batch, sparse_row_id_fn)

    def forward(self, data_batch, is_train=None):
        """Run the modules in order, each on the previous one's outputs (and the batch's
        labels)."""
        self._check("forward", params=True)
        batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            batch.data = module.get_outputs()
            batch.provide_data = [(name, x.shape) for (name, _), x in
                                  zip(module.output_shapes, batch.data)]

    def backward(self, out_grads=None):
        """Run the modules' backward in reverse, each on the gradients of the next one's
        data inputs."""
        self._check("backward", params=True)
        for i, module in reversed(list(enumerate(self._modules))):
            module.backward(out_grads)
            if i == 0:
                break
            out_grads = module.get_input_grads()

    def update(self):
        self._check("update", params=True, optimizer=True)
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        """The last module's outputs."""
        self._check("get_outputs")
        return self._modules[-1].get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the first module's data inputs."""
        self._check("get_input_grads")
        if not self.inputs_need_grad:
            raise RuntimeError("get_input_grads: bind with inputs_need_grad=True")
        return self._modules[0].get_input_grads(merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the outputs of each module that takes labels."""
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)


__all__ = ["SequentialModule"]
