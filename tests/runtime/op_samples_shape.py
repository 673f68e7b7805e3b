"""Samples, failures and zero-size cases of the operators of runtime/ops/shape.py: slice's csr
kernel (see op_samples.py for the tables' meaning)."""

from tests.runtime.op_samples import SAMPLES, Sample, _add, _csr, _sparse_input

# slice of csr over rows and columns keeps csr (MXNet's SliceDimTwoCsrImpl)
_add(SAMPLES, "slice",
     Sample([_csr(_sparse_input((5, 6), 790))], {"begin": (1, 2), "end": (4, 5)}, grad=False),
     Sample([_csr(_sparse_input((4, 3), 791))], {"begin": (None, -2), "end": (None, None)},
            grad=False))
