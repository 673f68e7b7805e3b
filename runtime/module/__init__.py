"""``runtime.module`` (also ``runtime.mod``): MXNet 1.x's symbolic training API,
:class:`Module`."""

from runtime.module.module import Module

__all__ = ["Module"]
