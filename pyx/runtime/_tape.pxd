from runtime._ndarray cimport NDArray


cdef class Node:
    cdef readonly object op          # registry Op or autograd.Function; None: a variable
    cdef readonly dict attrs
    cdef readonly object state       # per-call state of the forward (Dropout's mask)
    cdef readonly Py_ssize_t seq     # creation order: every input's node has a smaller one
    cdef readonly list inputs        # Entry or None (not on the tape), per input
    cdef readonly list in_descs      # ArrayDesc per input
    cdef readonly list out_descs     # ArrayDesc per output
    cdef list saved_in               # detached alias or None, per input
    cdef list saved_out              # detached alias or None, per output
    cdef list versions_in            # chunk version of each saved alias when saved
    cdef list versions_out
    cdef readonly bint consumed      # backward ran without retain_graph: saved arrays gone
    # variables only
    cdef public NDArray grad
    cdef public int grad_req

    cdef int release(self) except -1
    cdef object value(self, bint outputs, Py_ssize_t i, bint with_entry)


cdef class Entry:
    cdef readonly Node node
    cdef readonly Py_ssize_t index


cdef int record(object op, dict attrs, object state, list inputs, list outputs) except -1
cdef bint on_tape(list inputs) noexcept
