"""DenseNet 121/161/169/201 (Huang et al. 2016), as Gluon's model zoo builds them."""

from runtime.gluon import nn
from runtime.gluon.contrib.nn import HybridConcurrent, Identity
from runtime.gluon.model_zoo.vision._common import Classifier, finish

__all__ = ["DenseNet", "densenet_spec", "get_densenet", "densenet121", "densenet161",
           "densenet169", "densenet201"]


def _dense_layer(growth_rate, bn_size, dropout):
    """``[x, f(x)]`` joined on channels, f = BN-ReLU-1x1 conv-BN-ReLU-3x3 conv."""
    f = nn.HybridSequential(prefix="")
    f.add(nn.BatchNorm(), nn.Activation("relu"),
          nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False),
          nn.BatchNorm(), nn.Activation("relu"),
          nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        f.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(Identity(), f)
    return out


def _dense_block(num_layers, bn_size, growth_rate, dropout, index):
    block = nn.HybridSequential(prefix=f"stage{index}_")
    with block.name_scope():
        for _ in range(num_layers):
            block.add(_dense_layer(growth_rate, bn_size, dropout))
    return block


def _transition(channels):
    out = nn.HybridSequential(prefix="")
    out.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(channels, kernel_size=1, use_bias=False),
            nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(Classifier):
    """A 7x7 stem, dense blocks (``block_config`` layers each, ``growth_rate`` channels
    per layer) separated by transitions that halve channels and size, BN-ReLU, 7x7
    average pooling, the dense classifier."""

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2,
                                        padding=3, use_bias=False),
                              nn.BatchNorm(), nn.Activation("relu"),
                              nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            channels = num_init_features
            for i, n in enumerate(block_config):
                self.features.add(_dense_block(n, bn_size, growth_rate, dropout, i + 1))
                channels += n * growth_rate
                if i != len(block_config) - 1:
                    channels //= 2
                    self.features.add(_transition(channels))
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.AvgPool2D(pool_size=7),
                              nn.Flatten())
            self.output = nn.Dense(classes)


# depth -> (stem channels, growth rate, layers per dense block)
densenet_spec = {121: (64, 32, [6, 12, 24, 16]), 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]), 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """DenseNet of ``num_layers`` (121, 161, 169, 201) layers."""
    if num_layers not in densenet_spec:
        raise ValueError(f"get_densenet: num_layers must be one of {sorted(densenet_spec)} "
                         f"(got {num_layers!r})")
    net = DenseNet(*densenet_spec[num_layers], **kwargs)
    return finish(net, f"densenet{num_layers}", pretrained, ctx, root)


def _maker(depth):
    def make(**kwargs):
        return get_densenet(depth, **kwargs)
    make.__name__ = f"densenet{depth}"
    make.__doc__ = f"DenseNet-{depth} (see :func:`get_densenet`)."
    return make


densenet121, densenet161, densenet169, densenet201 = (_maker(d) for d in (121, 161, 169, 201))
