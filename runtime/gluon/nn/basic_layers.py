r"""Layers (Gluon's ``nn``): ``Sequential``, ``Dense``, ``Embedding``, ``Dropout``,
``Activation``, ``Flatten``, the normalisations (``BatchNorm``, ``SyncBatchNorm``,
``InstanceNorm``, ``LayerNorm``, ``GroupNorm``), ``Lambda``, ``Concatenate`` and
``Identity``.  Each forward is registry operators (``FullyConnected``, ``Embedding``,
``Dropout``, ``BatchNorm``, ``relu`` ...), so autograd records it; every layer but
``Sequential``, ``Lambda`` and ``Concatenate`` (plain ``Block``\ s, as Gluon's) is a
``HybridBlock`` whose ``hybrid_forward`` calls them through ``F``, so hybridized they form
the cached graph."""

import math
import warnings

import numpy as np

from runtime import nd
from runtime.gluon.block import Block, HybridBlock

ACTIVATIONS = ("relu", "sigmoid", "tanh", "softrelu", "softsign")


class Sequential(Block):
    """Blocks applied one after the other (Gluon's ``nn.Sequential``)."""

    _is_container = True     # summary() lists its children, not itself

    def add(self, *blocks):
        """Append ``blocks`` (registered as children '0', '1', ...)."""
        for block in blocks:
            self.register_child(block)
        return self

    def forward(self, x, *args):
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                x, args = x[0], tuple(x[1:])
        return (x,) + args if args else x

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock children (Gluon's ``Sequential.hybridize``).  When
        every child is a HybridBlock this warns that a ``HybridSequential`` would run
        them as one cached graph instead of one graph per child."""
        children = list(self._children.values())
        if active and children and all(isinstance(c, HybridBlock) for c in children):
            warnings.warn(f"All children of this Sequential layer {self.prefix!r} are "
                          "HybridBlocks. Consider using HybridSequential for the best "
                          "performance.", stacklevel=2)
        super().hybridize(active, **kwargs)

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(key, slice):
            net = type(self)(prefix=self._prefix)
            net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)

    def __iter__(self):
        return iter(self._children.values())


def _positive_int(layer, name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{layer}: {name} must be an integer >= {minimum} (got {value!r})")
    return int(value)


def _activation(layer, act):
    if act is not None and act not in ACTIVATIONS:
        raise ValueError(f"{layer}: activation must be one of {ACTIVATIONS} or None (got "
                         f"{act!r})")
    return act


class Activation(HybridBlock):
    """An activation function: ``'relu'``, ``'sigmoid'``, ``'tanh'``, ``'softrelu'``
    (``log(1 + exp(x))``) or ``'softsign'`` (``x / (1 + |x|)``)."""

    def __init__(self, activation, **kwargs):
        if activation is None:
            raise ValueError(f"Activation: activation must be one of {ACTIVATIONS} (got None)")
        object.__setattr__(self, "_act_type", _activation("Activation", activation))
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self):
        return f"Activation({self._act_type})"


class Dense(HybridBlock):
    """A fully connected layer: ``activation(dot(x, weight.T) + bias)`` (the
    ``FullyConnected`` operator).

    Parameters
    ----------
    units : int
        Output size; ``weight`` has shape (units, in_units), ``bias`` (units,).
    activation : str, optional
        As :class:`Activation`; None is the identity.
    use_bias : bool
    flatten : bool
        True: the input is reshaped to (batch, -1) first; False: the layer applies to
        the last axis.
    dtype : str or numpy dtype
    weight_initializer, bias_initializer : Initializer or str
        The parameters' own initialisers (None: the one given to ``initialize``;
        the bias is zeros by default).
    in_units : int
        Input size; 0 infers it on the first call.
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._units = _positive_int("Dense", "units", units)
        self._in_units = _positive_int("Dense", "in_units", in_units, minimum=0)
        self._act = _activation("Dense", activation)
        self._flatten = bool(flatten)
        self._use_bias = bool(use_bias)
        self.weight = self.params.get("weight", shape=(self._units, self._in_units),
                                      dtype=dtype, init=weight_initializer,
                                      allow_deferred_init=True)
        if self._use_bias:
            self.bias = self.params.get("bias", shape=(self._units,), dtype=dtype,
                                        init=bias_initializer, allow_deferred_init=True)
        else:
            self.bias = None

    def _infer_params(self, x, *args):
        if x.ndim < 1 or (math.prod(x.shape[1:]) if self._flatten else x.shape[-1]) == 0:
            raise ValueError(f"Dense: cannot infer in_units from input of shape "
                             f"{x.shape!r}")
        super()._infer_params(x, *args)

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, num_hidden=self._units,
                               no_bias=bias is None, flatten=self._flatten, name="fwd")
        if self._act is None:
            return out
        return F.Activation(out, act_type=self._act, name=f"{self._act}_fwd")

    def __repr__(self):
        shape = self.weight.shape
        return (f"Dense({shape[1] if shape[1] else None} -> {self._units}, "
                f"{'linear' if self._act is None else self._act})")


class Embedding(HybridBlock):
    """Maps indices to rows of a (input_dim, output_dim) weight (the ``Embedding``
    operator).  ``sparse_grad=True`` gives the weight a row_sparse gradient holding only
    the rows looked up."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        self._input_dim = _positive_int("Embedding", "input_dim", input_dim)
        self._output_dim = _positive_int("Embedding", "output_dim", output_dim)
        self._dtype = nd.as_dtype(dtype)
        self._sparse_grad = bool(sparse_grad)
        self.weight = self.params.get(
            "weight", shape=(self._input_dim, self._output_dim), dtype=dtype,
            init=weight_initializer, allow_deferred_init=True,
            grad_stype="row_sparse" if self._sparse_grad else "default")

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, input_dim=self._input_dim, output_dim=self._output_dim,
                           dtype=self._dtype, sparse_grad=self._sparse_grad)

    def __repr__(self):
        return f"Embedding({self._input_dim} -> {self._output_dim}, {np.dtype(self._dtype)})"


class Dropout(HybridBlock):
    """Zeroes each value with probability ``rate`` and scales the rest by 1 / (1 - rate)
    under ``autograd.record()`` (training mode); the identity otherwise.  ``axes``
    share one mask value along those axes."""

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        if isinstance(rate, bool) or not isinstance(rate, (int, float, np.integer,
                                                           np.floating)) \
                or not 0.0 <= rate < 1.0:
            raise ValueError(f"Dropout: rate must be a number in [0, 1) (got {rate!r})")
        self._rate = float(rate)
        self._axes = tuple(axes)

    def hybrid_forward(self, F, x):
        if self._rate == 0.0:
            return x
        return F.Dropout(x, p=self._rate, axes=self._axes)

    def __repr__(self):
        return f"Dropout(p = {self._rate}, axes={self._axes})"


class Flatten(HybridBlock):
    """Reshapes the input to (batch, -1)."""

    def hybrid_forward(self, F, x):
        return F.flatten(x)

    def __repr__(self):
        return "Flatten"


def _kwargs_text(kwargs):
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def _channels(layer, value):
    return _positive_int(layer, "in_channels", value, minimum=0)


def _norm_param(block, name, trained, channels, init, **kwargs):
    """A gamma/beta/running statistic: ``grad_req='null'`` unless ``trained``."""
    return block.params.get(name, grad_req="write" if trained else "null",
                            shape=(channels,), init=init, allow_deferred_init=True,
                            **kwargs)


def _set_channels(layer, params, x, axis):
    """Complete the deferred (0,) shapes of ``params`` from ``x``'s size on ``axis`` and
    initialise them (an imperative call's deferred initialisation)."""
    if not isinstance(x, nd.NDArray):
        raise TypeError(f"{layer}: input must be an NDArray (got {type(x).__name__})")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{layer}: axis must be an axis of the input of shape "
                         f"{x.shape!r} (got {axis})")
    for param in params:
        if param.shape == (0,):
            param.shape = (x.shape[axis],)
        param._finish_deferred_init()


class BatchNorm(HybridBlock):
    """Batch normalisation (Gluon's ``nn.BatchNorm``; the ``BatchNorm`` operator).

    Under ``autograd.record()`` (training) each channel of ``axis`` is normalised by the
    batch's mean and variance, and the running statistics move towards them
    (``running = running * momentum + batch * (1 - momentum)``); otherwise the running
    statistics normalise.  Parameters ``gamma`` (trained unless ``scale=False``), ``beta``
    (unless ``center=False``), ``running_mean`` and ``running_var`` (``grad_req='null'``,
    the operator's auxiliary states, which it writes in place, imperative or hybridized),
    each of shape ``(in_channels,)``; ``in_channels=0`` reads it from the first input.

    Parameters
    ----------
    axis : int
        The channel axis (1 for NCHW, -1 for NHWC).
    momentum : float
    epsilon : float
    center, scale : bool
    use_global_stats : bool
        Normalise with the running statistics in training too.
    beta_initializer, gamma_initializer, running_mean_initializer,
    running_variance_initializer : Initializer or str
    in_channels : int
    """

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(**kwargs)
        layer = type(self).__name__
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"{layer}: axis must be an int (got {axis!r})")
        self._kwargs = {"axis": int(axis), "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        channels = _channels(layer, in_channels)
        self.gamma = _norm_param(self, "gamma", scale, channels, gamma_initializer,
                                 differentiable=scale)
        self.beta = _norm_param(self, "beta", center, channels, beta_initializer,
                                differentiable=center)
        self.running_mean = _norm_param(self, "running_mean", False, channels,
                                        running_mean_initializer, differentiable=False)
        self.running_var = _norm_param(self, "running_var", False, channels,
                                       running_variance_initializer, differentiable=False)

    def cast(self, dtype):
        # float16 data keeps float32 statistics (the BatchNorm operator's rule)
        super().cast("float32" if np.dtype(dtype) == np.float16 else dtype)

    def _infer_params(self, x, *args):
        _set_channels(type(self).__name__, list(self._reg_params.values()), x,
                      self._kwargs["axis"])

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                           **self._kwargs)

    def __repr__(self):
        channels = self.gamma.shape[0]
        return (f"{type(self).__name__}({_kwargs_text(self._kwargs)}, "
                f"in_channels={channels if channels else None})")


class BatchNormReLU(BatchNorm):
    """:class:`BatchNorm` followed by ``relu`` (Gluon 1.x's ``nn.BatchNormReLU``, MXNet's
    fused ``BatchNormWithReLU``; the same arguments and parameters)."""

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.relu(super().hybrid_forward(F, x, gamma, beta, running_mean, running_var))


class SyncBatchNorm(BatchNorm):
    """Batch normalisation whose statistics are taken over the devices of one process
    (Gluon's ``contrib.nn.SyncBatchNorm``).  ndrt keeps a parameter on one context, so
    this is :class:`BatchNorm` over the channel axis 1; ``num_devices`` other than None
    or 1 is refused."""

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", **kwargs):
        if num_devices not in (None, 1):
            raise NotImplementedError(f"SyncBatchNorm: ndrt keeps parameters on one "
                                      f"device, so num_devices must be None or 1 (got "
                                      f"{num_devices!r})")
        super().__init__(1, momentum, epsilon, center, scale, use_global_stats,
                         beta_initializer, gamma_initializer, running_mean_initializer,
                         running_variance_initializer, in_channels, **kwargs)

    def __repr__(self):
        k = dict(self._kwargs)
        del k["axis"]
        channels = self.gamma.shape[0]
        return (f"SyncBatchNorm({_kwargs_text(k)}, ndev=1, key={self.prefix!r}, "
                f"in_channels={channels if channels else None})")


class _AxisNorm(HybridBlock):
    """A normalisation over one ``axis`` with ``(in_channels,)`` parameters ``gamma``
    (trained when ``scale``) and ``beta`` (when ``center``)."""

    def __init__(self, axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                 in_channels, **kwargs):
        super().__init__(**kwargs)
        layer = type(self).__name__
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"{layer}: axis must be an int (got {axis!r})")
        self._kwargs = {"eps": epsilon, "axis": int(axis), "center": center, "scale": scale}
        channels = _channels(layer, in_channels)
        self.gamma = _norm_param(self, "gamma", scale, channels, gamma_initializer)
        self.beta = _norm_param(self, "beta", center, channels, beta_initializer)

    def _infer_params(self, x, *args):
        _set_channels(type(self).__name__, [self.gamma, self.beta], x, self._kwargs["axis"])

    def __repr__(self):
        return (f"{type(self).__name__}({_kwargs_text(self._kwargs)}, "
                f"in_channels={self.gamma.shape[0]})")


class InstanceNorm(_AxisNorm):
    """Instance normalisation (Gluon's ``nn.InstanceNorm``; the ``InstanceNorm``
    operator): each sample's channel (``axis``) normalised over the other non-batch
    axes, then ``* gamma + beta``.  ``gamma`` is trained only with ``scale=True`` (off
    by default, as Gluon), ``beta`` unless ``center=False``."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         in_channels, **kwargs)

    def hybrid_forward(self, F, x, gamma, beta):
        axis, eps = self._kwargs["axis"], self._kwargs["eps"]
        if axis == 1:
            return F.InstanceNorm(x, gamma, beta, eps=eps, name="fwd")
        out = F.InstanceNorm(F.swapaxes(x, 1, axis), gamma, beta, eps=eps, name="fwd")
        return F.swapaxes(out, 1, axis)


class LayerNorm(_AxisNorm):
    """Layer normalisation (Gluon's ``nn.LayerNorm``; the ``LayerNorm`` operator): each
    position normalised over ``axis`` (default -1), then ``* gamma + beta`` of shape
    ``(in_channels,)``."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         in_channels, **kwargs)

    def hybrid_forward(self, F, x, gamma, beta):
        return F.LayerNorm(x, gamma, beta, axis=self._kwargs["axis"],
                           eps=self._kwargs["eps"], name="fwd")


class GroupNorm(HybridBlock):
    """Group normalisation (Gluon 1.x's ``nn.GroupNorm``; the ``GroupNorm`` operator):
    the channels (axis 1) split into ``num_groups`` groups, each sample's group
    normalised, then ``* gamma + beta`` with one value per group (shape
    ``(num_groups,)``, as Gluon 1.x)."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", **kwargs):
        super().__init__(**kwargs)
        groups = _positive_int("GroupNorm", "num_groups", num_groups)
        self._kwargs = {"eps": epsilon, "num_groups": groups, "center": center,
                        "scale": scale}
        self.gamma = _norm_param(self, "gamma", scale, groups, gamma_initializer)
        self.beta = _norm_param(self, "beta", center, groups, beta_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        return F.GroupNorm(x, gamma, beta, num_groups=self._kwargs["num_groups"],
                           eps=self._kwargs["eps"], name="fwd")

    def __repr__(self):
        return f"GroupNorm({_kwargs_text(self._kwargs)})"


class Lambda(Block):
    """Wraps a function as a block (Gluon's ``nn.Lambda``): ``function`` is a callable
    taking and returning NDArrays, or the name of an ``nd`` function (``'tanh'``)."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not callable(getattr(nd, function, None)):
                raise ValueError(f"Lambda: function must name an nd function (got "
                                 f"{function!r})")
            function = getattr(nd, function)
        elif not callable(function):
            raise ValueError(f"Lambda: function must be a callable or the name of an nd "
                             f"function (got {function!r} of type {type(function).__name__})")
        self._func_impl = function

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return f"Lambda({getattr(self._func_impl, '__name__', repr(self._func_impl))})"


def _int_axis(layer, axis):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{layer}: axis must be an int (got {axis!r})")
    return int(axis)


def _concat_children(F, block, x):
    """Every child of ``block`` called on ``x``, joined along ``block.axis``."""
    if not block._children:
        raise ValueError(f"{type(block).__name__}: add at least one block before calling it")
    return F.concat(*[child(x) for child in block._children.values()], dim=block.axis)


class Concatenate(Sequential):
    """Runs every child on the same input and joins their outputs along ``axis``
    (default -1; Gluon 2's ``nn.Concatenate``, Gluon 1.x's ``contrib.nn.Concurrent``)."""

    _is_container = False

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = _int_axis(type(self).__name__, axis)

    def forward(self, x):
        return _concat_children(nd, self, x)


class Identity(HybridBlock):
    """Returns its input (Gluon's ``contrib.nn.Identity``; a branch of
    :class:`Concatenate` that passes the input on)."""

    def hybrid_forward(self, F, x):
        return x


__all__ = ["Sequential", "Dense", "Embedding", "Dropout", "Activation", "Flatten",
           "BatchNorm", "BatchNormReLU", "SyncBatchNorm", "InstanceNorm", "LayerNorm",
           "GroupNorm", "Lambda", "Concatenate", "Identity"]
