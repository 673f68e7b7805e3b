"""``BucketingModule`` (MXNet's ``mx.mod.BucketingModule``): one Module per bucket key
(a sequence length, say), all on the same parameters.

``sym_gen(bucket_key)`` gives ``(symbol, data_names, label_names)``.  ``bind`` makes the
default bucket's module; a batch with another ``bucket_key`` makes that bucket's module
on first sight, bound to its shapes with the default module's parameter arrays (shared,
not copied) and, once there is one, its optimizer and updater states.  Every step runs
on the current bucket's module.
"""

import logging

from runtime.module.base_module import BaseModule
from runtime.module.module import Module


class BucketingModule(BaseModule):
    """Modules of the symbols ``sym_gen`` makes per bucket key, sharing parameters.

    Parameters
    ----------
    sym_gen : callable
        ``sym_gen(bucket_key) -> (symbol, data_names, label_names)``.
    default_bucket_key
        The key of the module ``bind`` makes (the largest bucket, usually): every other
        bucket's parameters must be among its.
    logger, context, work_load_list, fixed_param_names
        As :class:`~runtime.module.Module`'s, for every bucket's module.
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=None,
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        if not callable(sym_gen):
            raise TypeError(f"BucketingModule: sym_gen must be callable (got "
                            f"{type(sym_gen).__name__})")
        if default_bucket_key is None:
            raise ValueError("BucketingModule: default_bucket_key must be given")
        self._sym_gen = sym_gen
        self._default_bucket_key = default_bucket_key
        self.logger = logger
        self._module_kwargs = {"logger": logger, "context": context,
                               "work_load_list": work_load_list,
                               "fixed_param_names": fixed_param_names}
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._grad_req = "write"
        self.binded = self.params_initialized = self.optimizer_initialized = False
        self.for_training = self.inputs_need_grad = False

    def _module(self, bucket_key):
        sym, data_names, label_names = self._sym_gen(bucket_key)
        return Module(sym, data_names=data_names, label_names=label_names,
                      **self._module_kwargs)

    # -- names and shapes ------------------------------------------------------------------
    @property
    def default_bucket_key(self):
        return self._default_bucket_key

    @property
    def symbol(self):
        self._check("symbol")
        return self._curr_module.symbol

    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        return self._sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        return self._sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        self._check("data_shapes")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        self._check("label_shapes")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        self._check("output_shapes")
        return self._curr_module.output_shapes

    # -- binding and parameters ------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Make and bind the default bucket's module (MXNet's: the shapes are the default
        bucket's); a rebind drops the other buckets' modules."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise NotImplementedError("bind: a BucketingModule shares no module "
                                      "(shared_module must be None)")
        module = self._module(self._default_bucket_key)
        old = self._buckets.get(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, grad_req=grad_req)
        if old is not None and old.params_initialized:
            module.set_params(*old.get_params())
        self._buckets = {self._default_bucket_key: module}
        self._curr_module, self._curr_bucket_key = module, self._default_bucket_key
        self._grad_req = grad_req
        self.binded, self.for_training = True, for_training
        self.inputs_need_grad = inputs_need_grad
        self.params_initialized = module.params_initialized
        self.optimizer_initialized = False

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key``'s module current, made and bound on the default module's
        parameters (and optimizer) the first time the key is seen."""
        self._check("switch_bucket")
        if bucket_key not in self._buckets:
            module = self._module(bucket_key)
            module.bind(data_shapes, label_shapes, self.for_training, self.inputs_need_grad,
                        shared_module=self._buckets[self._default_bucket_key],
                        grad_req=self._grad_req)
            self._buckets[bucket_key] = module
        self._curr_module = self._buckets[bucket_key]
        self._curr_bucket_key = bucket_key

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise the parameters (those of the default bucket's module, which every
        bucket shares)."""
        self._check("init_params")
        if self.params_initialized and not force_init:
            return
        self._buckets[self._default_bucket_key].init_params(
            initializer, arg_params, aux_params, allow_missing, force_init, allow_extra)
        self.params_initialized = True

    def get_params(self):
        self._check("get_params", params=True)
        return self._buckets[self._default_bucket_key].get_params()

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Make the optimizer on the default bucket's module; every other bucket's module
        borrows it."""
        self._check("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            return
        default = self._buckets[self._default_bucket_key]
        default.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        for module in self._buckets.values():
            if module is not default:
                module.borrow_optimizer(default)
        self.optimizer_initialized = True

    # -- steps -------------------------------------------------------------------------------
    def _switch_to(self, data_batch):
        key = getattr(data_batch, "bucket_key", None)
        self.switch_bucket(self._default_bucket_key if key is None else key,
                           data_batch.provide_data, data_batch.provide_label)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """The current module's prepare, on the batch's bucket (the current bucket stays
        as it was)."""
        self._check("prepare", params=True)
        before = self._curr_bucket_key
        self._switch_to(data_batch)
        self._curr_module.prepare(data_batch, sparse_row_id_fn)
        self._curr_module = self._buckets[before]
        self._curr_bucket_key = before

    def forward(self, data_batch, is_train=None):
        """Switch to the batch's bucket (``data_batch.bucket_key``, its shapes from
        ``provide_data``/``provide_label``) and run its module's forward."""
        self._check("forward", params=True)
        self._switch_to(data_batch)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        self._check("backward", params=True)
        self._curr_module.backward(out_grads)

    def update(self):
        self._check("update", params=True, optimizer=True)
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        self._check("get_outputs")
        return self._curr_module.get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._check("get_input_grads")
        return self._curr_module.get_input_grads(merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)


__all__ = ["BucketingModule"]
