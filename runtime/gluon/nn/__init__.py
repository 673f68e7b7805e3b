"""Gluon's layers (``mx.gluon.nn``).  Each forward is registry operators, so autograd
records it."""

from runtime.gluon.block import Block, HybridBlock, SymbolBlock
from runtime.gluon.nn.basic_layers import (Activation, Dense, Dropout, Embedding, Flatten,
                                           Sequential)
from runtime.gluon.nn.hybrid_layers import HybridLambda, HybridSequential

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Sequential", "HybridSequential", "Dense",
           "Embedding", "Dropout", "Activation", "Flatten", "HybridLambda"]
