"""Gluon's vision models (``gluon.model_zoo.vision``): ResNet v1/v2, VGG, AlexNet,
DenseNet, SqueezeNet, Inception v3, MobileNet and MobileNetV2, with MXNet 1.x's parameter
names.  ``get_model(name, pretrained=True, root=...)`` loads MXNet's published parameters
from a local folder (see :mod:`runtime.gluon.model_zoo.model_store`).

The networks are imperative blocks (ndrt's ``Block``; MXNet's are HybridBlocks)."""

from runtime.gluon.model_zoo.vision.alexnet import AlexNet, alexnet
from runtime.gluon.model_zoo.vision.densenet import (DenseNet, densenet121, densenet161,
                                                     densenet169, densenet201, get_densenet)
from runtime.gluon.model_zoo.vision.inception import Inception3, inception_v3
from runtime.gluon.model_zoo.vision.mobilenet import (MobileNet, MobileNetV2, get_mobilenet,
                                                      get_mobilenet_v2, mobilenet0_25,
                                                      mobilenet0_5, mobilenet0_75,
                                                      mobilenet1_0, mobilenet_v2_0_25,
                                                      mobilenet_v2_0_5, mobilenet_v2_0_75,
                                                      mobilenet_v2_1_0)
from runtime.gluon.model_zoo.vision.resnet import (BasicBlockV1, BasicBlockV2, BottleneckV1,
                                                   BottleneckV2, ResNetV1, ResNetV2,
                                                   get_resnet, resnet18_v1, resnet18_v2,
                                                   resnet34_v1, resnet34_v2, resnet50_v1,
                                                   resnet50_v2, resnet101_v1, resnet101_v2,
                                                   resnet152_v1, resnet152_v2)
from runtime.gluon.model_zoo.vision.squeezenet import (SqueezeNet, get_squeezenet,
                                                       squeezenet1_0, squeezenet1_1)
from runtime.gluon.model_zoo.vision.vgg import (VGG, get_vgg, vgg11, vgg11_bn, vgg13,
                                                vgg13_bn, vgg16, vgg16_bn, vgg19, vgg19_bn)

_MODELS = {
    "resnet18_v1": resnet18_v1, "resnet34_v1": resnet34_v1, "resnet50_v1": resnet50_v1,
    "resnet101_v1": resnet101_v1, "resnet152_v1": resnet152_v1,
    "resnet18_v2": resnet18_v2, "resnet34_v2": resnet34_v2, "resnet50_v2": resnet50_v2,
    "resnet101_v2": resnet101_v2, "resnet152_v2": resnet152_v2,
    "vgg11": vgg11, "vgg13": vgg13, "vgg16": vgg16, "vgg19": vgg19,
    "vgg11_bn": vgg11_bn, "vgg13_bn": vgg13_bn, "vgg16_bn": vgg16_bn, "vgg19_bn": vgg19_bn,
    "alexnet": alexnet, "densenet121": densenet121, "densenet161": densenet161,
    "densenet169": densenet169, "densenet201": densenet201,
    "squeezenet1.0": squeezenet1_0, "squeezenet1.1": squeezenet1_1,
    "inceptionv3": inception_v3,
    "mobilenet1.0": mobilenet1_0, "mobilenet0.75": mobilenet0_75,
    "mobilenet0.5": mobilenet0_5, "mobilenet0.25": mobilenet0_25,
    "mobilenetv2_1.0": mobilenet_v2_1_0, "mobilenetv2_0.75": mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet_v2_0_5, "mobilenetv2_0.25": mobilenet_v2_0_25,
}


def get_model(name, **kwargs):
    """The model ``name`` (case-insensitive; one of :data:`_MODELS`'s keys, e.g.
    'resnet50_v1', 'mobilenetv2_0.5'), made with ``kwargs`` (``classes``,
    ``pretrained``, ``ctx``, ``root`` ...)."""
    key = name.lower() if isinstance(name, str) else name
    if key not in _MODELS:
        raise ValueError(f"get_model: name must be one of the model zoo's models "
                         f"({', '.join(sorted(_MODELS))}) (got {name!r})")
    return _MODELS[key](**kwargs)


__all__ = ["get_model", "AlexNet", "DenseNet", "Inception3", "MobileNet", "MobileNetV2",
           "ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "SqueezeNet", "VGG", "get_resnet", "get_vgg", "get_densenet",
           "get_squeezenet", "get_mobilenet", "get_mobilenet_v2", "inception_v3", "alexnet",
           *[f.__name__ for f in _MODELS.values() if f.__name__ not in ("alexnet",
                                                                       "inception_v3")]]
