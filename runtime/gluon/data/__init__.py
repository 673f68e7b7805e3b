"""Data (Gluon's ``gluon.data``): datasets, samplers, the DataLoader, and ``vision``."""

from runtime.gluon.data.dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from runtime.gluon.data.sampler import (BatchSampler, FilterSampler, RandomSampler, Sampler,
                                        SequentialSampler)
from runtime.gluon.data.dataloader import DataLoader
from runtime.gluon.data import vision

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "Sampler",
           "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler",
           "DataLoader", "vision"]
