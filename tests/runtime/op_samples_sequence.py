"""Samples, failures and zero-size cases of the sequence operators (runtime/ops/sequence.py)
(see op_samples.py for the tables' meaning)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, uniform, zeros)

_SEQ = uniform((4, 3, 2), seed=730)
_SEQ_LEN = ints(2, 4, 1)
_add(SAMPLES, "SequenceMask",
     Sample([_SEQ, _SEQ_LEN], {"use_sequence_length": True}, wrt=[0]),
     Sample([_SEQ, np.array([0.0, 3.0, 1.5])], {"use_sequence_length": True, "value": -1.0},
            wrt=[0]),
     Sample([uniform((3, 4, 2), seed=731), ints(2, 4, 0)],
            {"use_sequence_length": True, "axis": 1}, wrt=[0]),
     Sample([_SEQ]))
_add(SAMPLES, "SequenceLast",
     Sample([_SEQ, _SEQ_LEN], {"use_sequence_length": True}, wrt=[0]),
     Sample([uniform((3, 4, 2), seed=732), ints(1, 4, 2)],
            {"use_sequence_length": True, "axis": 1}, wrt=[0]),
     Sample([_SEQ]),
     Sample([uniform((3, 4), seed=733)], {"axis": 1}))
_add(SAMPLES, "SequenceReverse",
     Sample([_SEQ, _SEQ_LEN], {"use_sequence_length": True}, wrt=[0]),
     Sample([_SEQ]),
     Sample([uniform((3, 2), seed=734, dtype=np.float32), ints(3, 2)],
            {"use_sequence_length": True}, grad=False))
for _name in ("SequenceMask", "SequenceLast", "SequenceReverse"):
    _low = 0 if _name == "SequenceMask" else 1
    _add(FAILURES, _name,
         Failure([_SEQ, ints(2, 4)], {"use_sequence_length": True}, ValueError,
                 rf"^{_name}: sequence_length must have shape \(3,\)"),
         Failure([_SEQ], {"use_sequence_length": True}, ValueError,
                 rf"^{_name}: use_sequence_length=True needs a sequence_length input"),
         Failure([uniform((4,))], {}, ValueError,
                 rf"^{_name}: data must have at least 2 dimensions"),
         Failure([_SEQ], {"axis": 2}, ValueError, rf"^{_name}: axis must be 0 or 1"),
         # raised by the kernel, after out= is chosen
         Failure([_SEQ, ints(2, 5, 1)], {"use_sequence_length": True}, ValueError,
                 rf"^{_name}: sequence_length must hold integers in \[{_low}, 4\] \(got 5 at "
                 r"position 1\)", out=False if _name == "SequenceLast" else None))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(3, 0, 2)], {}, (lambda x: x[-1]) if
                                    _name == "SequenceLast" else (lambda x: x)))
_add(FAILURES, "SequenceReverse",
     Failure([_SEQ], {"axis": 1}, ValueError, r"^SequenceReverse: only axis 0 is supported"))
