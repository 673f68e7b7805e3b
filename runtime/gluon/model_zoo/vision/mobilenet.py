"""MobileNet (Howard et al. 2017) and MobileNetV2 (Sandler et al. 2018) at width
multipliers 1.0, 0.75, 0.5 and 0.25, as Gluon's model zoo builds them."""

from runtime.gluon import nn
from runtime.gluon.block import HybridBlock
from runtime.gluon.model_zoo.vision._common import Classifier, finish

__all__ = ["MobileNet", "MobileNetV2", "RELU6", "LinearBottleneck", "get_mobilenet",
           "get_mobilenet_v2", "mobilenet1_0", "mobilenet0_75", "mobilenet0_5",
           "mobilenet0_25", "mobilenet_v2_1_0", "mobilenet_v2_0_75", "mobilenet_v2_0_5",
           "mobilenet_v2_0_25"]


class RELU6(HybridBlock):
    """``min(max(x, 0), 6)``."""

    def hybrid_forward(self, F, x):
        return F.clip(x, a_min=0, a_max=6)


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True,
              relu6=False):
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False),
            nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


class LinearBottleneck(HybridBlock):
    """1x1 expansion by ``t`` (ReLU6), 3x3 depthwise (ReLU6), linear 1x1 projection;
    plus the input when stride is 1 and the channels agree."""

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, in_channels * t, relu6=True)
            _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1,
                      num_group=in_channels * t, relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        return out + x if self.use_shortcut else out


class MobileNet(Classifier):
    """A 3x3 stem then 13 depthwise-separable convolutions, channels scaled by
    ``multiplier``, global average pooling, the dense classifier."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1,
                          stride=2)
                dw = [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024]
                pw = [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2
                strides = [1, 2] * 3 + [1] * 5 + [2, 1]
                for d, c, s in zip(dw, pw, strides):
                    d, c = int(d * multiplier), int(c * multiplier)
                    _add_conv(self.features, channels=d, kernel=3, stride=s, pad=1,
                              num_group=d)
                    _add_conv(self.features, channels=c)
                self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes)


class MobileNetV2(Classifier):
    """A 3x3 stem (ReLU6), 17 linear bottlenecks, a 1x1 convolution to 1280 channels
    (more above multiplier 1), global average pooling, a 1x1 convolution classifier."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1,
                          relu6=True)
                ins = [32] + [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3
                outs = [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3 + [320]
                ts = [1] + [6] * 16
                strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
                for i, c, t, s in zip(ins, outs, ts, strides):
                    self.features.add(LinearBottleneck(int(i * multiplier), int(c * multiplier),
                                                       t, s))
                last = int(1280 * multiplier) if multiplier > 1.0 else 1280
                _add_conv(self.features, last, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"),
                                nn.Flatten())


def _suffix(multiplier):
    s = f"{multiplier:.2f}"
    return s[:-1] if s in ("1.00", "0.50") else s


def get_mobilenet(multiplier, pretrained=False, ctx=None, root=None, **kwargs):
    """MobileNet at width ``multiplier``."""
    return finish(MobileNet(multiplier, **kwargs), f"mobilenet{_suffix(multiplier)}",
                  pretrained, ctx, root)


def get_mobilenet_v2(multiplier, pretrained=False, ctx=None, root=None, **kwargs):
    """MobileNetV2 at width ``multiplier``."""
    return finish(MobileNetV2(multiplier, **kwargs), f"mobilenetv2_{_suffix(multiplier)}",
                  pretrained, ctx, root)


def _maker(get, multiplier, name):
    def make(**kwargs):
        return get(multiplier, **kwargs)
    make.__name__ = name
    make.__doc__ = f"{get.__doc__.split(' at ')[0]} at width {multiplier}."
    return make


mobilenet1_0, mobilenet0_75, mobilenet0_5, mobilenet0_25 = (
    _maker(get_mobilenet, m, f"mobilenet{str(m).replace('.', '_')}")
    for m in (1.0, 0.75, 0.5, 0.25))
mobilenet_v2_1_0, mobilenet_v2_0_75, mobilenet_v2_0_5, mobilenet_v2_0_25 = (
    _maker(get_mobilenet_v2, m, f"mobilenet_v2_{str(m).replace('.', '_')}")
    for m in (1.0, 0.75, 0.5, 0.25))
