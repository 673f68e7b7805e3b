"""Where a step of ``ndrt train sparse`` goes, phase by phase, in one process or on each
rank of a ``dist_sync`` job: wall time (``perf_counter``) and this thread's CPU time
(``thread_time``) a steady-state step (the first step, which makes the store and
broadcasts the parameters, is left out: the job's report prints its time), and the
process's CPU time over the training steps (all its threads) against their wall time.

    python asv_bench/profile_kvstore_job.py [ndrt train options]          # one process
    mpiexec -n 2 python asv_bench/profile_kvstore_job.py --kvstore dist_sync [options]

Phases: data (the iterator's batch, outside the job's clock), forward (model and loss,
recorded, from the model's call), backward (to ``Trainer.step``), pushpull
(``Trainer._allreduce_grads``: the collectives, split by kind, and the row_sparse merge
inside it), update
(``Trainer._update`` and ``_sync_copies``), loss (reading the batch's mean loss, the
last thing the job's clock covers).  The job's own epoch loop runs, handed timed
callables; its clock is taken here from the model's call to the step's end (the rank's
slice of the batch falls before it).  The timers cost about a microsecond each
(``thread_time`` is a system call); the job's clock is printed beside their sum.
"""
import sys
import time
from collections import defaultdict

import runtime.jobs.train as job
from runtime import _dist, autograd
from runtime.__main__ import main as cli_main
from runtime.gluon import trainer as trainer_mod

WALL, CPU = defaultdict(float), defaultdict(float)
STEPS = [0]          # steps finished
ACTIVE = [False]     # inside a steady-state step (not the first, not evaluation)
PROCESS = [0.0]      # CPU time of all the process's threads in the steady-state steps


def _add(phase, w0, c0):
    if ACTIVE[0]:
        WALL[phase] += time.perf_counter() - w0
        CPU[phase] += time.thread_time() - c0


def _timed(phase, fn):
    def wrapper(*args, **kwargs):
        w0, c0 = time.perf_counter(), time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _add(phase, w0, c0)
    return wrapper


MARK = {}            # the current step's times: net called, loss made, trainer.step done
_job_epoch = job._epoch


class _TimedBatches:
    """The epoch's iterator, its ``next`` timed as the data phase."""

    def __init__(self, it):
        self.it = iter(it)

    def __iter__(self):
        return self

    def __next__(self):
        ACTIVE[0] = STEPS[0] >= 1
        w0, c0 = time.perf_counter(), time.thread_time()
        try:
            batch = next(self.it)
        except StopIteration:
            ACTIVE[0] = False
            raise
        _add("data", w0, c0)
        return batch


def _epoch(result, net, loss_fn, trainer, it, ctx, on_step, meter, bar, where, rank, ranks):
    """``runtime.jobs.train._epoch`` itself, handed a timed iterator, model, loss and
    step callback: forward runs from the model's call to the loss made, backward from
    there to ``trainer.step`` (see ``_marked_step``), the loss phase from the step's end
    to the step callback, which closes the job's clock."""
    def timed_net(x):
        MARK["start"] = (time.perf_counter(), time.process_time(), time.thread_time())
        return net(x)

    def timed_loss(out, y):
        value = loss_fn(out, y)
        _add("forward", MARK["start"][0], MARK["start"][2])
        MARK["forward"] = (time.perf_counter(), time.thread_time())
        return value

    def timed_on_step():
        _add("loss", *MARK["step"])
        if ACTIVE[0]:
            WALL["step (the job's clock)"] += time.perf_counter() - MARK["start"][0]
            PROCESS[0] += time.process_time() - MARK["start"][1]
        STEPS[0] += 1
        ACTIVE[0] = False
        if on_step is not None:
            on_step()

    return _job_epoch(result, timed_net, timed_loss, trainer, _TimedBatches(it), ctx,
                      timed_on_step, meter, bar, where, rank, ranks)


def _marked_step(fn):
    """Trainer.step, the backward phase ending where it starts."""
    def wrapper(self, *args, **kwargs):
        _add("backward", *MARK["forward"])
        try:
            return fn(self, *args, **kwargs)
        finally:
            MARK["step"] = (time.perf_counter(), time.thread_time())
    return wrapper


def _collective(name, fn):
    def wrapper(self, *args, **kwargs):
        what = next((a for a in args if isinstance(a, str)), kwargs.get("what", name))
        kind = ("Allgather (fixed blocks)" if name == "allgather" else
                "Allgather of the counts" if name == "allgather_counts" else
                "Allgatherv" if name == "allgatherv" else
                "Allreduce (dense)" if "densified" not in str(what) else "Allreduce (densified)")
        return _timed("  " + kind, fn)(self, *args, **kwargs)
    return wrapper


def main():
    job._epoch = _epoch
    T = trainer_mod.Trainer
    T.step = _marked_step(T.step)
    T._allreduce_grads = _timed("pushpull", T._allreduce_grads)
    T._update = _timed("update", T._update)
    T._sync_copies = _timed("update", T._sync_copies)
    C = _dist.Communicator
    for name in ("allreduce", "allgather", "allgatherv", "allgather_counts"):
        setattr(C, name, _collective(name, getattr(C, name)))
    from runtime import kvstore
    kvstore.KVStore._merge = _timed("  merge", kvstore.KVStore._merge)
    p0, w0 = time.process_time(), time.perf_counter()
    code = cli_main(["train", "sparse", "--quiet", *sys.argv[1:]])
    rank = _dist.get().rank if "--kvstore" in sys.argv else 0
    n = max(STEPS[0] - 1, 1)
    step_wall = WALL["step (the job's clock)"]
    lines = [f"rank {rank}: {n} steady-state steps; CPU time of all the process's threads "
             f"in them / their wall time: {PROCESS[0]:.3f} s / {step_wall:.3f} s = "
             f"{PROCESS[0] / max(step_wall, 1e-9):.2f} cores (whole run {time.process_time() - p0:.2f}"
             f" s / {time.perf_counter() - w0:.2f} s)",
             "| phase | wall ms/step | thread CPU ms/step |", "|---|---:|---:|"]
    order = ["data", "forward", "backward", "pushpull", "  Allgather of the counts",
             "  Allgather (fixed blocks)", "  Allgatherv", "  Allreduce (dense)",
             "  Allreduce (densified)", "  merge", "update", "loss", "step (the job's clock)"]
    for phase in order:
        if phase in WALL:
            lines.append(f"| {phase} | {1e3 * WALL[phase] / n:.3f} | "
                         f"{1e3 * CPU[phase] / n if phase in CPU else float('nan'):.3f} |")
    if "--kvstore" in sys.argv:
        time.sleep(0.2 * rank)          # rank 0's table first
    print("\n".join(lines), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
