"""Data (Gluon's ``gluon.data``): datasets."""

from runtime.gluon.data.dataset import ArrayDataset, Dataset, SimpleDataset

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset"]
