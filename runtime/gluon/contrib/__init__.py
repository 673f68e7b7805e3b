"""Gluon's contributed extras (``gluon.contrib``): ``data`` (IntervalSampler, text
datasets), ``nn`` (Concurrent, HybridConcurrent, Identity, SparseEmbedding) and
``estimator`` (a training loop driven by event handlers)."""

from runtime.gluon.contrib import data, estimator, nn

__all__ = ["data", "estimator", "nn"]
