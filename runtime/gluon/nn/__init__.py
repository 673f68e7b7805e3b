"""Gluon's layers (``mx.gluon.nn``).  Each forward is registry operators, so autograd
records it."""

from runtime.gluon.block import Block
from runtime.gluon.nn.basic_layers import (Activation, Dense, Dropout, Embedding, Flatten,
                                           Sequential)

__all__ = ["Block", "Sequential", "Dense", "Embedding", "Dropout", "Activation", "Flatten"]
