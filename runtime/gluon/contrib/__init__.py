"""Gluon's contributed extras (``gluon.contrib``): ``data`` (IntervalSampler, text
datasets)."""

from runtime.gluon.contrib import data

__all__ = ["data"]
