"""SqueezeNet 1.0 and 1.1 (Iandola et al. 2016), as Gluon's model zoo builds them."""

from runtime.gluon import nn
from runtime.gluon.contrib.nn import HybridConcurrent
from runtime.gluon.model_zoo.vision._common import Classifier, finish

__all__ = ["SqueezeNet", "get_squeezenet", "squeezenet1_0", "squeezenet1_1"]


def _conv_relu(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return out


def _fire(squeeze, expand1x1, expand3x3):
    """A 1x1 squeeze, then 1x1 and 3x3 expansions joined on channels."""
    out = nn.HybridSequential(prefix="")
    out.add(_conv_relu(squeeze, 1))
    paths = HybridConcurrent(axis=1, prefix="")
    paths.add(_conv_relu(expand1x1, 1), _conv_relu(expand3x3, 3, 1))
    out.add(paths)
    return out


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(Classifier):
    """Fire modules between max poolings; a 1x1 convolution to ``classes`` channels,
    ReLU and 13x13 average pooling classify.  ``version`` '1.0' or '1.1' (fewer
    operations: a 3x3 stem and earlier pooling)."""

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        if version not in ("1.0", "1.1"):
            raise ValueError(f"SqueezeNet: version must be '1.0' or '1.1' (got {version!r})")
        with self.name_scope():
            f = self.features = nn.HybridSequential(prefix="")
            if version == "1.0":
                f.add(nn.Conv2D(96, kernel_size=7, strides=2), nn.Activation("relu"), _pool())
                f.add(_fire(16, 64, 64), _fire(16, 64, 64), _fire(32, 128, 128), _pool())
                f.add(_fire(32, 128, 128), _fire(48, 192, 192), _fire(48, 192, 192),
                      _fire(64, 256, 256), _pool(), _fire(64, 256, 256))
            else:
                f.add(nn.Conv2D(64, kernel_size=3, strides=2), nn.Activation("relu"), _pool())
                f.add(_fire(16, 64, 64), _fire(16, 64, 64), _pool())
                f.add(_fire(32, 128, 128), _fire(32, 128, 128), _pool())
                f.add(_fire(48, 192, 192), _fire(48, 192, 192), _fire(64, 256, 256),
                      _fire(64, 256, 256))
            f.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"),
                            nn.AvgPool2D(13), nn.Flatten())


def get_squeezenet(version, pretrained=False, ctx=None, root=None, **kwargs):
    """SqueezeNet ``version`` '1.0' or '1.1'."""
    return finish(SqueezeNet(version, **kwargs), f"squeezenet{version}", pretrained, ctx, root)


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0 (see :func:`get_squeezenet`)."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1 (see :func:`get_squeezenet`)."""
    return get_squeezenet("1.1", **kwargs)
