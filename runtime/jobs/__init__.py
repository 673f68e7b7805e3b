"""``runtime.jobs``: the training jobs behind ``ndrt train`` (``train_sparse``,
``train_mlp``), their data sets (``synthetic_ctr``, ``digits``), metrics (``auc``,
``accuracy``) and ``ndrt info``'s report (``info_lines``).

>>> from runtime.jobs import train_sparse
>>> r = train_sparse(rows=4000, features=20000, epochs=2, batch_size=256, quiet=True)
>>> r.metric, r.reference          # test AUC, and the hidden model's own test AUC
"""

from runtime.jobs.data import CTRData, digits, synthetic_ctr
from runtime.jobs.info import info_lines
from runtime.jobs.metrics import accuracy, auc
from runtime.jobs.train import (MLP_DEFAULTS, SPARSE_DEFAULTS, JobResult, SparseCTR,
                                digits_mlp, train_mlp, train_sparse)

__all__ = ["CTRData", "synthetic_ctr", "digits", "auc", "accuracy", "info_lines",
           "JobResult", "SparseCTR", "digits_mlp", "train_sparse", "train_mlp",
           "SPARSE_DEFAULTS", "MLP_DEFAULTS"]
