"""Vision data (Gluon's ``gluon.data.vision``): datasets read from local files, and
``transforms``."""

from runtime.gluon.data.vision.datasets import (CIFAR10, CIFAR100, MNIST, FashionMNIST,
                                                ImageFolderDataset, ImageRecordDataset)
from runtime.gluon.data.vision import transforms

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset", "transforms"]
