"""Gluon's layers (``mx.gluon.nn``).  Each forward is registry operators, so autograd
records it."""

from runtime.gluon.block import Block, HybridBlock, SymbolBlock
from runtime.gluon.nn.basic_layers import (Activation, BatchNorm, BatchNormReLU, Concatenate,
                                           Dense, Dropout, Embedding, Flatten, GroupNorm,
                                           Identity, InstanceNorm, Lambda, LayerNorm,
                                           Sequential, SyncBatchNorm)
from runtime.gluon.nn.activations import ELU, GELU, SELU, LeakyReLU, PReLU, Swish
from runtime.gluon.nn.conv_layers import (AvgPool1D, AvgPool2D, AvgPool3D, Conv1D,
                                          Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D,
                                          Conv3DTranspose, GlobalAvgPool1D, GlobalAvgPool2D,
                                          GlobalAvgPool3D, GlobalMaxPool1D, GlobalMaxPool2D,
                                          GlobalMaxPool3D, MaxPool1D, MaxPool2D, MaxPool3D,
                                          ReflectionPad2D)
from runtime.gluon.nn.hybrid_layers import HybridLambda, HybridSequential

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Sequential", "HybridSequential", "Dense",
           "Embedding", "Dropout", "Activation", "Flatten", "HybridLambda",
           "BatchNorm", "BatchNormReLU", "SyncBatchNorm", "InstanceNorm", "LayerNorm",
           "GroupNorm", "Lambda", "Concatenate", "Identity", "LeakyReLU", "PReLU", "ELU",
           "SELU", "Swish", "GELU",
           "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]
