"""``gluon.contrib.data``: :class:`IntervalSampler` and the ``text`` datasets."""

from runtime.gluon.data.sampler import IntervalSampler
from runtime.gluon.contrib.data import text

__all__ = ["IntervalSampler", "text"]
