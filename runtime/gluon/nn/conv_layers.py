"""Convolution and pooling layers (Gluon's ``nn.conv_layers``): ``Conv1D/2D/3D``, their
transposes, max/average pooling, global pooling and ``ReflectionPad2D``.

Parameter names, shapes, defaults and ``repr`` follow Gluon 1.x: a convolution's weight is
``(channels, in_channels // groups, *kernel)`` in the channel-first layouts and
``(channels, *kernel, in_channels // groups)`` in the channel-last ones; a transposed
convolution's is ``(in_channels, channels // groups, *kernel)`` (channel-first) and
``(in_channels, *kernel, channels // groups)`` (channel-last).  ``in_channels=0`` leaves
that dimension 0 until the first call reads it from the input (deferred initialisation).
The operators (``Convolution``, ``Deconvolution``, ``Pooling``) compute channel-first;
a channel-last layer transposes its input, weight and output around them, so autograd
sees ordinary ``transpose`` nodes.
"""

import numpy as np

from runtime import nd
from runtime.gluon.block import Block
from runtime.gluon.nn.basic_layers import Activation, _positive_int

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _tuple(layer, name, value, n, minimum):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (value,) * n
    try:
        value = tuple(value)
    except TypeError:
        raise TypeError(f"{layer}: {name} must be an int or a tuple of {n} ints (got "
                        f"{value!r})") from None
    if len(value) != n or not all(isinstance(v, (int, np.integer)) and
                                  not isinstance(v, bool) and v >= minimum for v in value):
        raise ValueError(f"{layer}: {name} must be an int or a tuple of {n} ints >= "
                         f"{minimum} (got {value!r})")
    return tuple(int(v) for v in value)


def _layout(layer, layout, n):
    if layout not in _LAYOUTS[n]:
        raise ValueError(f"{layer}: layout must be one of {_LAYOUTS[n]} (got {layout!r})")
    return layout


def _to_channel_first(x, n):
    return nd.transpose(x, axes=(0, n + 1) + tuple(range(1, n + 1)))


def _to_channel_last(x, n):
    return nd.transpose(x, axes=(0,) + tuple(range(2, n + 2)) + (1,))


def _check_input(layer, x, n, layout):
    if not isinstance(x, nd.NDArray):
        raise TypeError(f"{layer}: input must be an NDArray (got {type(x).__name__})")
    if x.ndim != n + 2:
        raise ValueError(f"{layer}: input must have {n + 2} dimensions ({layout}) (got "
                         f"shape {x.shape!r})")


class _Conv(Block):
    """A convolution (``op_name='Convolution'``) or transposed convolution
    (``'Deconvolution'``) over ``len(kernel_size)`` spatial axes; see the module's
    docstring for the weight's shape."""

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", op_name="Convolution", adj=None, **kwargs):
        super().__init__(**kwargs)
        layer = type(self).__name__
        n = len(kernel_size)
        self._n = n
        self._channels = _positive_int(layer, "channels", channels)
        self._in_channels = _positive_int(layer, "in_channels", in_channels, minimum=0)
        groups = _positive_int(layer, "groups", groups)
        self._layout = _layout(layer, layout, n)
        self._channel_last = layout[1] != "C"
        self._op_name = op_name
        self._kwargs = {
            "kernel": _tuple(layer, "kernel_size", kernel_size, n, 1),
            "stride": _tuple(layer, "strides", strides, n, 1),
            "dilate": _tuple(layer, "dilation", dilation, n, 1),
            "pad": _tuple(layer, "padding", padding, n, 0),
            "num_filter": self._channels, "num_group": groups, "no_bias": not use_bias,
            "layout": layout}
        if adj is not None:
            self._kwargs["adj"] = _tuple(layer, "output_padding", adj, n, 0)
        for name, total in (("channels", self._channels), ("in_channels", self._in_channels)):
            if total % groups:
                raise ValueError(f"{layer}: groups must divide {name} (got groups={groups}, "
                                 f"{name}={total})")
        self.weight = self.params.get("weight", shape=self._weight_shape(self._in_channels),
                                      init=weight_initializer, allow_deferred_init=True)
        if use_bias:
            self.bias = self.params.get("bias", shape=(self._channels,),
                                        init=bias_initializer, allow_deferred_init=True)
        else:
            self.bias = None
        if activation is not None:
            with self.name_scope():
                self.act = Activation(activation, prefix=activation + "_")
        else:
            self.act = None

    def _weight_shape(self, in_channels):
        kernel, groups = self._kwargs["kernel"], self._kwargs["num_group"]
        if self._op_name == "Convolution":
            outer, inner = self._channels, in_channels // groups
        else:
            outer, inner = in_channels, self._channels // groups
        if self._channel_last:
            return (outer,) + kernel + (inner,)
        return (outer, inner) + kernel

    def forward(self, x):
        layer = type(self).__name__
        _check_input(layer, x, self._n, self._layout)
        if 0 in self.weight.shape:
            channels = x.shape[self._layout.find("C")]
            if channels % self._kwargs["num_group"]:
                raise ValueError(f"{layer}: groups={self._kwargs['num_group']} must divide "
                                 f"the input's {channels} channels (input shape "
                                 f"{x.shape!r})")
            self.weight.shape = self._weight_shape(channels)
        self.weight._finish_deferred_init()
        w = self.weight.data()
        if self._channel_last:
            x = _to_channel_first(x, self._n)
            w = _to_channel_first(w, self._n)
        args = [x, w]
        if self.bias is not None:
            self.bias._finish_deferred_init()
            args.append(self.bias.data())
        attrs = dict(self._kwargs, layout=None)
        out = getattr(nd, self._op_name)(*args, **attrs)
        if self._channel_last:
            out = _to_channel_last(out, self._n)
        return out if self.act is None else self.act(out)

    def _alias(self):
        return "conv"

    def __repr__(self):
        # Gluon 1.x's text, output padding never shown; the mapping reads the weight's
        # first two axes as (out, in) even where they are not (transposes, NHWC)
        k = self._kwargs
        n = self._n
        s = f"{type(self).__name__}({{mapping}}, kernel_size={k['kernel']}, stride={k['stride']}"
        if k["pad"] != (0,) * n:
            s += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            s += f", dilation={k['dilate']}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act is not None:
            s += f", {self.act!r}"
        shape = self.weight.shape
        return s.format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}") + ")"


_CONV_DOC = """{n}-D {what} layer (Gluon's ``nn.{name}``).

    Parameters
    ----------
    channels : int
        Output channels.
    kernel_size : int or tuple of {n} ints
    strides, padding, dilation : int or tuple of {n} ints
        Defaults 1, 0, 1.{extra}
    groups : int
        Split the channels into this many independent groups.
    layout : {layouts}
    activation : str, optional
        As :class:`~runtime.gluon.nn.Activation`, applied to the output.
    use_bias : bool
    weight_initializer, bias_initializer : Initializer or str
    in_channels : int
        Input channels; 0 infers them on the first call.
    """

_OUTPAD_DOC = """
    output_padding : int or tuple of {n} ints
        Extra size added on one side of each output axis (0 by default)."""


def _conv_class(name, n, transpose):
    """One of the six public convolution classes: Gluon's defaults, per-class docs."""
    layouts = _LAYOUTS[n]
    op_name = "Deconvolution" if transpose else "Convolution"

    if transpose:
        def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                     dilation=1, groups=1, layout=layouts[0], activation=None, use_bias=True,
                     weight_initializer=None, bias_initializer="zeros", in_channels=0,
                     **kwargs):
            _Conv.__init__(self, channels, _tuple(name, "kernel_size", kernel_size, n, 1),
                           strides, padding, dilation, groups, layout, in_channels,
                           activation, use_bias, weight_initializer, bias_initializer,
                           op_name, output_padding, **kwargs)
            self.outpad = self._kwargs["adj"]
    else:
        def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1,
                     groups=1, layout=layouts[0], activation=None, use_bias=True,
                     weight_initializer=None, bias_initializer="zeros", in_channels=0,
                     **kwargs):
            _Conv.__init__(self, channels, _tuple(name, "kernel_size", kernel_size, n, 1),
                           strides, padding, dilation, groups, layout, in_channels,
                           activation, use_bias, weight_initializer, bias_initializer,
                           op_name, **kwargs)

    doc = _CONV_DOC.format(n=n, name=name, layouts=" or ".join(repr(x) for x in layouts),
                           what="transposed convolution" if transpose else "convolution",
                           extra=_OUTPAD_DOC.format(n=n) if transpose else "")
    return type(name, (_Conv,), {"__init__": __init__, "__doc__": doc,
                                 "__module__": __name__})


Conv1D = _conv_class("Conv1D", 1, False)
Conv2D = _conv_class("Conv2D", 2, False)
Conv3D = _conv_class("Conv3D", 3, False)
Conv1DTranspose = _conv_class("Conv1DTranspose", 1, True)
Conv2DTranspose = _conv_class("Conv2DTranspose", 2, True)
Conv3DTranspose = _conv_class("Conv3DTranspose", 3, True)


class _Pooling(Block):
    """Max or average pooling over ``len(pool_size)`` spatial axes (the ``Pooling``
    operator); ``strides`` None means ``pool_size``; ``ceil_mode`` rounds the output size
    up (``pooling_convention='full'``)."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type,
                 layout, count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        layer = type(self).__name__
        n = len(pool_size)
        self._n = n
        self._layout = _layout(layer, layout, n)
        self._channel_last = layout[1] != "C"
        pool_size = _tuple(layer, "pool_size", pool_size, n, 1)
        self._kwargs = {
            "kernel": pool_size,
            "stride": _tuple(layer, "strides", pool_size if strides is None else strides,
                             n, 1),
            "pad": _tuple(layer, "padding", padding, n, 0),
            "global_pool": bool(global_pool), "pool_type": pool_type, "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = bool(count_include_pad)

    def _alias(self):
        return "pool"

    def forward(self, x):
        _check_input(type(self).__name__, x, self._n, self._layout)
        if self._channel_last:
            x = _to_channel_first(x, self._n)
        out = nd.Pooling(x, **dict(self._kwargs, layout=None))
        return _to_channel_last(out, self._n) if self._channel_last else out

    def __repr__(self):
        k = self._kwargs
        return (f"{type(self).__name__}(size={k['kernel']}, stride={k['stride']}, "
                f"padding={k['pad']}, ceil_mode={k['pooling_convention'] == 'full'}, "
                f"global_pool={k['global_pool']}, pool_type={k['pool_type']}, "
                f"layout={k['layout']})")


def _pool_init(name, n, pool_type, ceil_first):
    """The ``__init__`` of a (non-global) pooling class with Gluon's defaults and its
    order of the ``layout`` and ``ceil_mode`` arguments (``ceil_first``)."""
    default = _LAYOUTS[n][0]
    avg = pool_type == "avg"

    def init(self, pool_size, strides, padding, layout, ceil_mode, count_include_pad,
             kwargs):
        _Pooling.__init__(self, _tuple(name, "pool_size", pool_size, n, 1), strides,
                          padding, ceil_mode, False, pool_type, layout,
                          count_include_pad if avg else None, **kwargs)

    if ceil_first:
        def __init__(self, pool_size=2, strides=None, padding=0, ceil_mode=False,
                     layout=default, count_include_pad=True, **kwargs):
            init(self, pool_size, strides, padding, layout, ceil_mode, count_include_pad,
                 kwargs)
    else:
        def __init__(self, pool_size=2, strides=None, padding=0, layout=default,
                     ceil_mode=False, count_include_pad=True, **kwargs):
            init(self, pool_size, strides, padding, layout, ceil_mode, count_include_pad,
                 kwargs)
    return __init__


def _pool_class(name, n, pool_type, global_pool, ceil_first=False):
    """One of the twelve public pooling classes (Gluon's defaults and argument order;
    ``count_include_pad`` only matters to average pooling)."""
    layouts = " or ".join(repr(x) for x in _LAYOUTS[n])
    if global_pool:
        def __init__(self, layout=_LAYOUTS[n][0], **kwargs):
            _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout,
                              **kwargs)
        doc = (f"Global {pool_type} pooling over the {n} spatial axes (Gluon's "
               f"``nn.{name}``): each is reduced to size 1.  layout: {layouts}.")
    else:
        __init__ = _pool_init(name, n, pool_type, ceil_first)
        doc = (f"{n}-D {'max' if pool_type == 'max' else 'average'} pooling (Gluon's "
               f"``nn.{name}``): ``pool_size`` (default 2), ``strides`` (default "
               f"``pool_size``), ``padding`` (0), ``ceil_mode`` (False: floor the output "
               f"size), layout {layouts}"
               + (", ``count_include_pad`` (True: the padding counts in the divisor)."
                  if pool_type == "avg" else "."))
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc,
                                    "__module__": __name__})


MaxPool1D = _pool_class("MaxPool1D", 1, "max", False)
MaxPool2D = _pool_class("MaxPool2D", 2, "max", False)
MaxPool3D = _pool_class("MaxPool3D", 3, "max", False, ceil_first=True)
AvgPool1D = _pool_class("AvgPool1D", 1, "avg", False)
AvgPool2D = _pool_class("AvgPool2D", 2, "avg", False, ceil_first=True)
AvgPool3D = _pool_class("AvgPool3D", 3, "avg", False, ceil_first=True)
GlobalMaxPool1D = _pool_class("GlobalMaxPool1D", 1, "max", True)
GlobalMaxPool2D = _pool_class("GlobalMaxPool2D", 2, "max", True)
GlobalMaxPool3D = _pool_class("GlobalMaxPool3D", 3, "max", True)
GlobalAvgPool1D = _pool_class("GlobalAvgPool1D", 1, "avg", True)
GlobalAvgPool2D = _pool_class("GlobalAvgPool2D", 2, "avg", True)
GlobalAvgPool3D = _pool_class("GlobalAvgPool3D", 3, "avg", True)


class ReflectionPad2D(Block):
    """Pads the last two axes of 4-D input by reflection (Gluon's ``nn.ReflectionPad2D``;
    the ``Pad`` operator with ``mode='reflect'``).  ``padding``: an int (each side of H
    and W) or the operator's 8-tuple ``pad_width``."""

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        self._padding = _tuple("ReflectionPad2D", "padding", padding, 8, 0)

    def forward(self, x):
        return nd.Pad(x, mode="reflect", pad_width=self._padding)


__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]
