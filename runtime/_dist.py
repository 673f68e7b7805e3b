"""The MPI communicator of the dist KVStores: one per process, made on first use.

``mpi4py`` (the ``dist`` extra) is imported only here and only when a ``dist_*`` store is
created, because importing ``mpi4py.MPI`` initialises MPI.  Two guards make a failing job
end quickly instead of hanging its other ranks:

- an excepthook that, after the traceback, names the rank and aborts the communicator
  (``MPI_Abort``: mpiexec then ends every rank, non-zero);
- a watchdog thread with a deadline on each collective (``NDRT_KVSTORE_TIMEOUT`` seconds,
  default 300): a collective still waiting at its deadline (a peer hung, or killed in a
  way the launcher did not notice) names the rank, the collective and the deadline and
  aborts.  Arming costs two attribute writes; the thread sleeps between its checks.

Waits outside the hot path (``barrier``, the broadcasts of ``init``) are non-blocking
requests tested with growing sleeps, so a rank waiting for a slower one (rank 0
evaluating) does not spin a core, as MPICH's blocking calls do.
"""

import atexit
import os
import sys
import threading
import time

import numpy as np

__all__ = ["Communicator", "get", "launched_by_mpi", "TIMEOUT_ENV", "timeout"]

TIMEOUT_ENV = "NDRT_KVSTORE_TIMEOUT"
DEFAULT_TIMEOUT = 300.0
# Variables that MPI launchers set in every rank they start (MPICH/Hydra, Open MPI, PMIx,
# Slurm's PMI): how a process tells it runs under mpiexec without initialising MPI.
_LAUNCHER_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")

_WORLD = None


def launched_by_mpi():
    """Whether this process was started by an MPI launcher with more than one rank."""
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS"):
        value = os.environ.get(var, "")
        if value.isdigit() and int(value) > 1:
            return True
    return False


def timeout():
    """The deadline of one collective, in seconds, from ``NDRT_KVSTORE_TIMEOUT``."""
    text = os.environ.get(TIMEOUT_ENV)
    if text is None or text == "":
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{TIMEOUT_ENV} must be a finite number of seconds > 0 (got "
                         f"{text!r})")
    return value


def get():
    """The process's :class:`Communicator` (made, and MPI initialised, on first call)."""
    global _WORLD
    if _WORLD is None:
        _WORLD = Communicator()
    return _WORLD


class Communicator:
    """A duplicate of ``MPI.COMM_WORLD`` with the excepthook, the watchdog and counters of
    the bytes and seconds spent in collectives (``stats``)."""

    def __init__(self):
        deadline = timeout()
        try:
            from mpi4py import MPI     # initialises MPI: only when a dist store is made
        except ImportError as e:
            raise ImportError("the dist_* kvstores need mpi4py and an MPI library: pip "
                              f"install 'ndrt[dist]' (or mpi4py with your MPI) ({e})") from e
        if not MPI.Is_initialized():        # mpi4py imported without initialising
            MPI.Init_thread(MPI.THREAD_MULTIPLE)     # (ndrt info's look at the library)
            atexit.register(MPI.Finalize)
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD.Dup()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED)
        self.local_size = node.Get_size()      # the ranks sharing this node's memory
        node.Free()
        self.timeout = deadline
        self.stats = {"bytes": 0, "seconds": 0.0, "calls": 0}
        self._deadline = 0.0          # 0: no collective in flight
        self._what = ""
        self._aborting = False
        self._previous_hook = sys.excepthook
        sys.excepthook = self._excepthook
        self._watchdog = threading.Thread(target=self._watch, name="ndrt-kvstore-watchdog",
                                          daemon=True)
        self._watchdog.start()

    # -- failure ------------------------------------------------------------------------
    def abort(self, message, status=1):
        """Print ``message`` (naming this rank) to stderr and end the whole job."""
        if self._aborting:
            return
        self._aborting = True
        sys.stderr.write(f"ndrt: rank {self.rank} of {self.size}: {message}\n")
        sys.stderr.flush()
        try:
            self.comm.Abort(status)
        finally:      # Abort does not return; should the library let it, stop this rank
            os._exit(status)

    def _excepthook(self, kind, value, tb):
        self._previous_hook(kind, value, tb)
        self.abort(f"{kind.__name__}: {value}; aborting the job")

    def _watch(self):
        step = min(1.0, self.timeout / 8)
        while True:
            time.sleep(step)
            deadline = self._deadline
            if deadline and time.monotonic() > deadline:
                self.abort(f"{self._what} did not complete within {self.timeout:g} s "
                           f"({TIMEOUT_ENV}): another rank is hung or dead; aborting the job")

    def _arm(self, what):
        self._what = what
        self._deadline = time.monotonic() + self.timeout

    def _done(self, nbytes, t0):
        self._deadline = 0.0
        s = self.stats
        s["bytes"] += nbytes
        s["seconds"] += time.perf_counter() - t0
        s["calls"] += 1

    def _wait(self, request):
        """Wait for ``request`` with growing sleeps (50 us to 20 ms): no core spins."""
        pause = 5e-5
        while not request.Test():
            time.sleep(pause)
            pause = min(pause * 2, 0.02)

    # -- collectives --------------------------------------------------------------------
    def allreduce(self, buf, what="Allreduce"):
        """Sum the NumPy array ``buf`` over the ranks, in place."""
        self._arm(what)
        t0 = time.perf_counter()
        self.comm.Allreduce(self.MPI.IN_PLACE, buf, op=self.MPI.SUM)
        self._done(buf.nbytes, t0)

    def allgather_counts(self, n):
        """Every rank's integer ``n``, as an int64 array in rank order."""
        out = np.empty(self.size, np.int64)
        self._arm("Allgather of the row counts")
        t0 = time.perf_counter()
        self.comm.Allgather(np.array([n], np.int64), out)
        self._done(out.nbytes, t0)
        return out

    def allgatherv(self, send, counts, what="Allgatherv"):
        """Every rank's uint8 ``send`` (``counts[r]`` bytes from rank r), one after the
        other in rank order, and the offsets of the blocks."""
        counts = np.asarray(counts, np.int64)
        offsets = np.zeros(self.size, np.int64)
        np.cumsum(counts[:-1], out=offsets[1:])
        out = np.empty(int(counts.sum()), np.uint8)
        self._arm(what)
        t0 = time.perf_counter()
        self.comm.Allgatherv(send, [out, counts, offsets, self.MPI.BYTE])
        self._done(out.nbytes, t0)
        return out, offsets

    def allgather(self, send, what="Allgather"):
        """Every rank's uint8 ``send`` (one length on all), stacked in rank order."""
        out = np.empty((self.size, send.shape[0]), np.uint8)
        self._arm(what)
        t0 = time.perf_counter()
        self.comm.Allgather(send, out)
        self._done(out.nbytes, t0)
        return out

    def bcast(self, buf, what="Bcast"):
        """Rank 0's NumPy array ``buf`` into every rank's, waiting without spinning."""
        self._arm(what)
        t0 = time.perf_counter()
        self._wait(self.comm.Ibcast(buf, root=0))
        self._done(buf.nbytes, t0)

    def bcast_object(self, obj, what="Bcast"):
        """Rank 0's picklable ``obj`` on every rank (small metadata)."""
        self._arm(what)
        t0 = time.perf_counter()
        out = self.comm.bcast(obj, root=0)
        self._done(0, t0)
        return out

    def barrier(self):
        """Wait for every rank, without spinning."""
        self._arm("barrier")
        t0 = time.perf_counter()
        self._wait(self.comm.Ibarrier())
        self._done(0, t0)
