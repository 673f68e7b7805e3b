"""Gluon's model zoo (``gluon.model_zoo``): the MXNet 1.x image classification networks
in ``vision``, with MXNet's parameter names, so that MXNet's published pretrained
parameter files load from a local folder (``model_store``)."""

from runtime.gluon.model_zoo import model_store, vision

__all__ = ["model_store", "vision"]
