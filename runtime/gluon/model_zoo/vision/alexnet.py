"""AlexNet (Krizhevsky et al. 2012), as Gluon's model zoo builds it."""

from runtime.gluon import nn
from runtime.gluon.model_zoo.vision._common import Classifier, finish

__all__ = ["AlexNet", "alexnet"]


class AlexNet(Classifier):
    """Five convolutions (11x11/4, 5x5, three 3x3; ReLU; max pooling after the 1st, 2nd
    and 5th), two dense layers of 4096 with dropout, the dense classifier."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                f = self.features
                f.add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"))
                f.add(nn.MaxPool2D(pool_size=3, strides=2))
                f.add(nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"))
                f.add(nn.MaxPool2D(pool_size=3, strides=2))
                for channels in (384, 256, 256):
                    f.add(nn.Conv2D(channels, kernel_size=3, padding=1, activation="relu"))
                f.add(nn.MaxPool2D(pool_size=3, strides=2), nn.Flatten())
                for _ in range(2):
                    f.add(nn.Dense(4096, activation="relu"), nn.Dropout(0.5))
            self.output = nn.Dense(classes)


def alexnet(pretrained=False, ctx=None, root=None, **kwargs):
    """AlexNet; ``pretrained`` loads MXNet's published parameters from ``root``."""
    return finish(AlexNet(**kwargs), "alexnet", pretrained, ctx, root)
