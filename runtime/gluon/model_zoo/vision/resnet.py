"""ResNet v1 (He et al. 2015) and v2 (pre-activation, He et al. 2016), 18 to 152 layers,
as Gluon's model zoo builds them (its parameter names)."""

from runtime.gluon import nn
from runtime.gluon.block import HybridBlock
from runtime.gluon.model_zoo.vision._common import Classifier, finish, relu

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "resnet_spec", "get_resnet"] + [
    f"resnet{d}_v{v}" for v in (1, 2) for d in (18, 34, 50, 101, 152)]


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _projection(channels, stride, in_channels, with_bn):
    """The 1x1 convolution that brings the shortcut to the body's shape."""
    seq = nn.HybridSequential(prefix="")
    seq.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                      in_channels=in_channels))
    if with_bn:
        seq.add(nn.BatchNorm())
    return seq


class _ResidualV1(HybridBlock):
    """``relu(body(x) + shortcut(x))``, the shortcut a strided 1x1 convolution with batch
    norm when the shape changes."""

    def _build(self, layers, channels, stride, downsample, in_channels):
        # the shortcut's layers are made after the body's (MXNet's numbering)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(*layers)
        self.downsample = (_projection(channels, stride, in_channels, True) if downsample
                           else None)

    def hybrid_forward(self, F, x):
        shortcut = self.downsample(x) if self.downsample is not None else x
        return relu(F, self.body(x) + shortcut)


class BasicBlockV1(_ResidualV1):
    """Two 3x3 convolutions with batch norm, added to the (projected) input, then ReLU."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._build([_conv3x3(channels, stride, in_channels), nn.BatchNorm(),
                     nn.Activation("relu"), _conv3x3(channels, 1, channels), nn.BatchNorm()],
                    channels, stride, downsample, in_channels)


class BottleneckV1(_ResidualV1):
    """1x1 (to channels/4, strided), 3x3, 1x1 (to channels) convolutions with batch norm,
    added to the (projected) input, then ReLU."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._build([nn.Conv2D(channels // 4, kernel_size=1, strides=stride), nn.BatchNorm(),
                     nn.Activation("relu"), _conv3x3(channels // 4, 1, channels // 4),
                     nn.BatchNorm(), nn.Activation("relu"),
                     nn.Conv2D(channels, kernel_size=1, strides=1), nn.BatchNorm()],
                    channels, stride, downsample, in_channels)


class _ResidualV2(HybridBlock):
    """Pre-activation: ``x = relu(bn1(x))``, then ``residual(x)`` plus the shortcut (the
    input, or a strided 1x1 convolution of ``x`` when the shape changes)."""

    def _shortcut(self, channels, stride, downsample, in_channels):
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False,
                                     in_channels=in_channels) if downsample else None)

    def hybrid_forward(self, F, x):
        shortcut = x
        x = relu(F, self.bn1(x))
        if self.downsample is not None:
            shortcut = self.downsample(x)
        return self.residual(F, x) + shortcut


class BasicBlockV2(_ResidualV2):
    """Pre-activation basic block: BN-ReLU-3x3 conv (strided), BN-ReLU-3x3 conv."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self._shortcut(channels, stride, downsample, in_channels)

    def residual(self, F, x):
        return self.conv2(relu(F, self.bn2(self.conv1(x))))


class BottleneckV2(_ResidualV2):
    """Pre-activation bottleneck: BN-ReLU-1x1, BN-ReLU-3x3 (strided), BN-ReLU-1x1."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self._shortcut(channels, stride, downsample, in_channels)

    def residual(self, F, x):
        x = self.conv2(relu(F, self.bn2(self.conv1(x))))
        return self.conv3(relu(F, self.bn3(x)))


def _stage(block, layers, channels, stride, index, in_channels):
    stage = nn.HybridSequential(prefix=f"stage{index}_")
    with stage.name_scope():
        stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                        prefix=""))
        for _ in range(layers - 1):
            stage.add(block(channels, 1, False, in_channels=channels, prefix=""))
    return stage


def _add_body(features, block, layers, channels, thumbnail):
    """The stem (7x7/2 conv, BN, ReLU, 3x3/2 max pooling; a 3x3 conv with ``thumbnail``)
    and one stage per entry of ``layers`` (the first at stride 1, the others 2)."""
    if len(layers) != len(channels) - 1:
        raise ValueError(f"ResNet: channels must hold one more entry than layers (got "
                         f"{len(layers)} layers and {len(channels)} channels)")
    if thumbnail:
        features.add(_conv3x3(channels[0], 1, 0))
    else:
        features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False), nn.BatchNorm(),
                     nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))
    for i, n in enumerate(layers):
        features.add(_stage(block, n, channels[i + 1], 1 if i == 0 else 2, i + 1,
                            channels[i]))


class ResNetV1(Classifier):
    """ResNet v1: the stem, the stages, global average pooling, a dense classifier."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            _add_body(self.features, block, layers, channels, thumbnail)
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(Classifier):
    """ResNet v2: input batch norm (no scale, no shift), the stem, pre-activation stages,
    a final BN-ReLU, global average pooling, a dense classifier."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.BatchNorm(scale=False, center=False))
            _add_body(self.features, block, layers, channels, thumbnail)
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.GlobalAvgPool2D(),
                              nn.Flatten())
            self.output = nn.Dense(classes, in_units=channels[-1])


# depth -> (block kind, layers per stage, channels: stem then per stage)
resnet_spec = {18: ("basic", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottleneck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottleneck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottleneck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
_BLOCKS = {1: {"basic": BasicBlockV1, "bottleneck": BottleneckV1},
           2: {"basic": BasicBlockV2, "bottleneck": BottleneckV2}}


def get_resnet(version, num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """ResNet ``version`` (1 or 2) of ``num_layers`` (18, 34, 50, 101, 152) layers."""
    if num_layers not in resnet_spec:
        raise ValueError(f"get_resnet: num_layers must be one of {sorted(resnet_spec)} (got "
                         f"{num_layers!r})")
    if version not in (1, 2):
        raise ValueError(f"get_resnet: version must be 1 or 2 (got {version!r})")
    kind, layers, channels = resnet_spec[num_layers]
    net = (ResNetV1 if version == 1 else ResNetV2)(_BLOCKS[version][kind], layers, channels,
                                                   **kwargs)
    return finish(net, f"resnet{num_layers}_v{version}", pretrained, ctx, root)


def _maker(version, depth):
    def make(**kwargs):
        return get_resnet(version, depth, **kwargs)
    make.__name__ = f"resnet{depth}_v{version}"
    make.__doc__ = f"ResNet-{depth} v{version} (see :func:`get_resnet`)."
    return make


resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1 = (
    _maker(1, d) for d in (18, 34, 50, 101, 152))
resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2 = (
    _maker(2, d) for d in (18, 34, 50, 101, 152))
