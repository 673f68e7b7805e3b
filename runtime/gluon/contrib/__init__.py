"""Gluon's contributed extras (``gluon.contrib``): ``data`` (IntervalSampler, text
datasets), ``nn`` (Concurrent, HybridConcurrent, Identity, SparseEmbedding,
PixelShuffle*D), ``rnn`` (convolutional cells, LSTMPCell) and ``estimator`` (a training
loop driven by event handlers)."""

from runtime.gluon.contrib import data, estimator, nn, rnn

__all__ = ["data", "estimator", "nn", "rnn"]
