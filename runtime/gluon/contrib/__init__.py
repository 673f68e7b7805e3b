"""Gluon's contributed extras (``gluon.contrib``): ``data`` (IntervalSampler, text
datasets) and ``nn`` (Concurrent, HybridConcurrent, Identity)."""

from runtime.gluon.contrib import data, nn

__all__ = ["data", "nn"]
