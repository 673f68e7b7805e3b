"""VGG 11/13/16/19 (Simonyan & Zisserman 2014), with or without batch norm, as Gluon's
model zoo builds them (its parameter names and initialisers)."""

from runtime.gluon import nn
from runtime.initializer import Xavier
from runtime.gluon.model_zoo.vision._common import Classifier, finish

__all__ = ["VGG", "vgg_spec", "get_vgg", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn",
           "vgg13_bn", "vgg16_bn", "vgg19_bn"]


class VGG(Classifier):
    """Blocks of 3x3 convolutions (``layers[i]`` of ``filters[i]`` channels, each with
    ReLU, and batch norm with ``batch_norm``) closed by 2x2 max pooling, then two dense
    layers of 4096 with dropout and the dense classifier."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise ValueError(f"VGG: layers and filters must have the same length (got "
                             f"{len(layers)} and {len(filters)})")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            for n, channels in zip(layers, filters):
                for _ in range(n):
                    self.features.add(nn.Conv2D(
                        channels, kernel_size=3, padding=1, bias_initializer="zeros",
                        weight_initializer=Xavier(rnd_type="gaussian", factor_type="out",
                                                  magnitude=2)))
                    if batch_norm:
                        self.features.add(nn.BatchNorm())
                    self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(strides=2))
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                           bias_initializer="zeros"),
                                  nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer="normal",
                                   bias_initializer="zeros")


# depth -> (convolutions per block, channels per block)
vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """VGG of ``num_layers`` (11, 13, 16, 19) layers; ``batch_norm=True`` for the _bn
    variant."""
    if num_layers not in vgg_spec:
        raise ValueError(f"get_vgg: num_layers must be one of {sorted(vgg_spec)} (got "
                         f"{num_layers!r})")
    net = VGG(*vgg_spec[num_layers], **kwargs)
    name = f"vgg{num_layers}{'_bn' if kwargs.get('batch_norm') else ''}"
    return finish(net, name, pretrained, ctx, root)


def _maker(depth, bn):
    def make(**kwargs):
        if bn:
            kwargs["batch_norm"] = True
        return get_vgg(depth, **kwargs)
    make.__name__ = f"vgg{depth}{'_bn' if bn else ''}"
    make.__doc__ = f"VGG-{depth}{' with batch norm' if bn else ''} (see :func:`get_vgg`)."
    return make


vgg11, vgg13, vgg16, vgg19 = (_maker(d, False) for d in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_maker(d, True) for d in (11, 13, 16, 19))
