# The invoker's C-level surface for the backward executor (runtime._executor), which runs
# operators and accumulates gradients without a Python frame.
from runtime._ndarray cimport NDArray

# Requests (MXNet's OpReqType codes): the one definition is runtime._types.

# ``invoke_parsed`` without its Python frame.
cpdef object invoke_parsed(object op, list inputs, dict attrs, object out, object req)
# dst += src through NumPy's inner loop of np.add (dense host arrays of one dtype and
# shape): False when that road does not apply (the caller then invokes "add").
cdef bint add_into(NDArray dst, NDArray src) except -1
# The profiler's hook (runtime.profiler) or None: the executor reports its C-level steps
# to it as the invoker reports its calls.
cdef object profile_hook()
