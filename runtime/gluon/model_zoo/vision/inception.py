"""Inception v3 (Szegedy et al. 2015), as Gluon's model zoo builds it; inputs 299x299."""

from runtime.gluon import nn
from runtime.gluon.contrib.nn import HybridConcurrent
from runtime.gluon.model_zoo.vision._common import Classifier, finish

__all__ = ["Inception3", "inception_v3"]

_SETTINGS = ("channels", "kernel_size", "strides", "padding")


def _basic_conv(**kwargs):
    """Convolution without bias, batch norm (epsilon 1e-3), ReLU."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(use_bias=False, **kwargs), nn.BatchNorm(epsilon=0.001),
            nn.Activation("relu"))
    return out


def _branch(pool, *convs):
    """An optional pooling ('avg': 3x3/1 padded, 'max': 3x3/2) then basic convolutions,
    each given as (channels, kernel_size, strides, padding) with None for the default."""
    out = nn.HybridSequential(prefix="")
    if pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for conv in convs:
        out.add(_basic_conv(**{k: v for k, v in zip(_SETTINGS, conv) if v is not None}))
    return out


def _concurrent(prefix, *branches):
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for make in branches:
            out.add(make())
    return out


def _module_a(pool_features, prefix):
    return _concurrent(
        prefix,
        lambda: _branch(None, (64, 1, None, None)),
        lambda: _branch(None, (48, 1, None, None), (64, 5, None, 2)),
        lambda: _branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
        lambda: _branch("avg", (pool_features, 1, None, None)))


def _module_b(prefix):
    return _concurrent(
        prefix,
        lambda: _branch(None, (384, 3, 2, None)),
        lambda: _branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
        lambda: _branch("max"))


def _module_c(c7, prefix):
    return _concurrent(
        prefix,
        lambda: _branch(None, (192, 1, None, None)),
        lambda: _branch(None, (c7, 1, None, None), (c7, (1, 7), None, (0, 3)),
                        (192, (7, 1), None, (3, 0))),
        lambda: _branch(None, (c7, 1, None, None), (c7, (7, 1), None, (3, 0)),
                        (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                        (192, (1, 7), None, (0, 3))),
        lambda: _branch("avg", (192, 1, None, None)))


def _module_d(prefix):
    return _concurrent(
        prefix,
        lambda: _branch(None, (192, 1, None, None), (320, 3, 2, None)),
        lambda: _branch(None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                        (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
        lambda: _branch("max"))


def _split(first):
    """``first`` then its output through a 1x3 and a 3x1 branch joined on channels."""
    seq = nn.HybridSequential(prefix="")
    seq.add(first)
    both = HybridConcurrent(axis=1, prefix="")
    seq.add(both)
    both.add(_branch(None, (384, (1, 3), None, (0, 1))),
             _branch(None, (384, (3, 1), None, (1, 0))))
    return seq


def _module_e(prefix):
    return _concurrent(
        prefix,
        lambda: _branch(None, (320, 1, None, None)),
        lambda: _split(_branch(None, (384, 1, None, None))),
        lambda: _split(_branch(None, (448, 1, None, None), (384, 3, None, 1))),
        lambda: _branch("avg", (192, 1, None, None)))


class Inception3(Classifier):
    """The stem, modules A (x3), B, C (x4), D, E (x2), 8x8 average pooling, dropout and
    the dense classifier."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            f = self.features = nn.HybridSequential(prefix="")
            f.add(_basic_conv(channels=32, kernel_size=3, strides=2),
                  _basic_conv(channels=32, kernel_size=3),
                  _basic_conv(channels=64, kernel_size=3, padding=1),
                  nn.MaxPool2D(pool_size=3, strides=2),
                  _basic_conv(channels=80, kernel_size=1),
                  _basic_conv(channels=192, kernel_size=3),
                  nn.MaxPool2D(pool_size=3, strides=2))
            f.add(_module_a(32, "A1_"), _module_a(64, "A2_"), _module_a(64, "A3_"))
            f.add(_module_b("B_"))
            f.add(*(_module_c(c, f"C{i + 1}_") for i, c in enumerate((128, 160, 160, 192))))
            f.add(_module_d("D_"), _module_e("E1_"), _module_e("E2_"))
            f.add(nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
            self.output = nn.Dense(classes)


def inception_v3(pretrained=False, ctx=None, root=None, **kwargs):
    """Inception v3; ``pretrained`` loads MXNet's published parameters from ``root``."""
    return finish(Inception3(**kwargs), "inceptionv3", pretrained, ctx, root)
