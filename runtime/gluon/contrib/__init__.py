"""Gluon's contributed extras (``gluon.contrib``): ``data`` (IntervalSampler, text
datasets) and ``nn`` (Concurrent, HybridConcurrent, Identity, SparseEmbedding)."""

from runtime.gluon.contrib import data, nn

__all__ = ["data", "nn"]
