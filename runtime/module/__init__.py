"""``runtime.module`` (also ``runtime.mod``): MXNet 1.x's symbolic training API,
:class:`Module`, :class:`SequentialModule`, :class:`BucketingModule`,
:class:`PythonModule`, :class:`PythonLossModule` and their :class:`BaseModule`."""

from runtime.module.base_module import BaseModule
from runtime.module.module import Module
from runtime.module.bucketing_module import BucketingModule
from runtime.module.sequential_module import SequentialModule
from runtime.module.python_module import PythonLossModule, PythonModule

__all__ = ["BaseModule", "BucketingModule", "Module", "SequentialModule", "PythonModule",
           "PythonLossModule"]
