"""Modules written in Python (MXNet's ``mx.mod.PythonModule`` and
``mx.mod.PythonLossModule``): a module without parameters whose computation is plain
Python, most often a loss at the end of a :class:`~runtime.module.SequentialModule`
whose gradient a function gives.
"""

import logging

from runtime import nd
from runtime.initializer import Uniform
from runtime.module.base_module import BaseModule


class PythonModule(BaseModule):
    """A module without parameters: ``init_params``, ``init_optimizer`` and ``update``
    do nothing; a subclass gives ``_compute_output_shapes``, ``forward``,
    ``backward``, ``get_outputs`` and ``get_input_grads``.

    Parameters
    ----------
    data_names : list of str
    label_names : list of str or None
        None for a module that takes no labels.
    output_names : list of str
    logger : logging.Logger
    """

    _param_names = ()
    _aux_names = ()

    def __init__(self, data_names, label_names, output_names, logger=logging):
        self.logger = logger
        self._data_names = list(data_names)
        self._label_names = None if label_names is None else list(label_names)
        self._output_names = list(output_names)
        self._data_shapes = None
        self._label_shapes = None
        self._output_shapes = None
        self.binded = self.params_initialized = self.optimizer_initialized = False
        self.for_training = self.inputs_need_grad = False

    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes

    @property
    def output_shapes(self):
        return self._output_shapes

    def get_params(self):
        """``({}, {})``: no parameters."""
        return {}, {}

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Nothing to initialise."""
        self.params_initialized = True

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Nothing to optimise."""
        self.optimizer_initialized = True

    def update(self):
        """Nothing to update."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """``eval_metric.update(labels, outputs)`` when the module takes labels (a module
        without labels has nothing to score)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise RuntimeError("PythonModule.update_metric: labels must not be pre-sliced "
                               "(a PythonModule runs on one context)")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True,
             inputs_need_grad=False, force_rebind=False, shared_module=None,
             grad_req="write"):
        """Take the data's and labels' names and shapes (``DataDesc`` or (name, shape))
        and compute the outputs' shapes."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise ValueError(f"{type(self).__name__}.bind: grad_req must be 'write' (got "
                             f"{grad_req!r})")
        names = [d[0] for d in data_shapes]
        if names != self._data_names:
            raise ValueError(f"{type(self).__name__}.bind: data_shapes must name "
                             f"{self._data_names} (got {names})")
        if label_shapes is not None:
            names = [d[0] for d in label_shapes]
            if self._label_names is None or names != self._label_names:
                raise ValueError(f"{type(self).__name__}.bind: label_shapes must name "
                                 f"{self._label_names} (got {names})")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = list(data_shapes)
        self._label_shapes = None if label_shapes is None else list(label_shapes)
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        raise NotImplementedError(f"{type(self).__name__}: a PythonModule defines "
                                  "_compute_output_shapes()")


class PythonLossModule(PythonModule):
    """A loss as a module: its output is its input (the scores), and its backward
    gives the scores' gradient ``grad_func(scores, labels)`` (a NumPy array or an
    NDArray).

    Parameters
    ----------
    name : str
        The output is named ``name + '_output'``.
    data_names, label_names : one name each
    logger : logging.Logger
    grad_func : callable, optional
        ``grad_func(scores, labels)``; without it, a subclass defines
        ``_backward_impl``.
    """

    def __init__(self, name="pyloss", data_names=("data",), label_names=("softmax_label",),
                 logger=logging, grad_func=None):
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        if len(self._data_names) != 1 or len(self._label_names) != 1:
            raise ValueError(f"PythonLossModule: data_names and label_names must hold one "
                             f"name each (got {list(data_names)}, {list(label_names)})")
        if grad_func is not None and not callable(grad_func):
            raise TypeError(f"PythonLossModule: grad_func must be callable (got "
                            f"{grad_func!r})")
        self._name = name
        self._grad_func = grad_func
        self._scores = self._labels = self._scores_grad = None

    def _compute_output_shapes(self):
        return [(self._name + "_output", self._data_shapes[0][1])]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (the batch's data) and, in training, the labels."""
        self._scores = data_batch.data[0]
        if self.for_training if is_train is None else is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        """``[scores]``: the module passes its input on."""
        return [self._scores]

    def backward(self, out_grads=None):
        """The scores' gradient, from ``grad_func``."""
        if out_grads is not None:
            raise ValueError("PythonLossModule.backward: a loss module takes no out_grads")
        if not self.for_training:
            raise RuntimeError("PythonLossModule.backward: bind with for_training=True")
        self._backward_impl()

    def _backward_impl(self):
        if self._grad_func is None:
            raise NotImplementedError("PythonLossModule: give grad_func or define "
                                      "_backward_impl")
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, nd.NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context=True):
        """``[the scores' gradient]`` of the last backward."""
        return [self._scores_grad]

    def install_monitor(self, mon):
        raise NotImplementedError("PythonLossModule: no executors to monitor")


__all__ = ["PythonModule", "PythonLossModule"]
