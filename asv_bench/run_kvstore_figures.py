"""The dist kvstore's figures as markdown tables (needs the dist extra: mpi4py, mpich).

    python asv_bench/run_kvstore_figures.py            # about a minute on 2 cores
    KV_FIGURES_QUICK=1 python asv_bench/run_kvstore_figures.py   # smoke test

1. In-place Allreduce of one float32 array between 2 ranks, through ``KVStore.pushpull``
   (one in-place Allreduce on the array's pool memory; the array then holds the key's
   value, no copy kept) against raw ``mpi4py`` ``Allreduce(IN_PLACE, ...)`` on the same
   pool buffer, 4 KiB to 64 MiB.  Both run in
   the same 2 processes, round-robin: each round times a loop of each, and a figure is
   the median over rounds (the ratio: the median of the per-round ratios).
   1b. One ``pushpull`` of a list of keys (gluon's Trainer's call: 8 arrays of 1 MiB,
   each reduced alone in its own memory; 64 of 4 KiB, packed in one bucket) against raw
   ``mpi4py``, one in-place Allreduce per array.
2. ``ndrt train sparse`` on 2 ranks (``--kvstore dist_sync``) against one process with
   the same seed and global batch: throughput, test AUC, communication and merge time a
   step; rounds alternate the runs.  Throughput is the job's own figure, the same
   clock on both sides: the steady-state steps (every step but the first), each from
   before the forward to after reading its loss (forward, backward, ``trainer.step``
   with the exchange and the update), not the making of the batch, start-up,
   evaluation or the first step; the first step (the optimizer's states, the store,
   the broadcast of the parameters) is printed apart.  Beside it, one process at half
   the batch (a rank's share): 2 x its throughput / the one-process throughput is what
   2 ranks would reach with free communication and a core each (the ceiling of the
   ratio), at the job's batch of 1,024 and at 4,096; the one process runs with
   OMP_NUM_THREADS=1 as the ranks do, and again with it unset (its own default, both
   CPUs for its OpenMP and BLAS pools); the same two runs give the serial
   fraction of the one-process step (the part that does not shrink with the batch:
   2 T(B/2) - T(B), over T(B)) and the time a rank's step may spend on communication
   for 2 ranks to reach 1.5x (T(B) / 1.5 - T(B/2)).
   2b. The floor of the exchange: the bytes a step of the 2-rank job received, moved
   by raw ``mpi4py`` in the job's two collectives (an ``Allgather`` of each rank's count,
   then an ``Allgatherv`` of half the bytes from each rank), in 2 processes that do
   nothing else; against the budget above.  Where the floor exceeds the budget, 1.5x
   cannot be reached at that batch on this machine, whatever ndrt does around it.
3. Start-up: the wall time of a tiny job (a few steps) under ``mpiexec -n 2`` against one
   process, which is start-up (interpreters, MPI, data) to the first steps.

The machine is often shared: quote ratios taken in one run, and say how loaded it was
(the load average is printed).
"""
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
QUICK = bool(os.environ.get("KV_FIGURES_QUICK"))
ROUNDS = 3 if QUICK else 7
SIZES = [4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20] + ([] if QUICK else [64 << 20])
JOB = ["--rows", "40000", "--features", "200000"] if QUICK else []


def _env(one_thread=True):
    """The runs' environment: OMP_NUM_THREADS=1 (a rank's share of the 2 CPUs), or,
    for the one-process reference at its own default, unset."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    if not one_thread:
        del env["OMP_NUM_THREADS"]
    return env


def allreduce_worker():
    """Rank side of figure 1: prints one line per size on rank 0."""
    import runtime as mx
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    for size in SIZES:
        kv = mx.kv.create("dist_sync")
        x = mx.nd.ones((size // 4,))
        kv.init(0, x)
        view = np.asarray(x)                   # the same pool memory, zero-copy
        loops = max(3, min(2000, (64 << 20) // size))
        raw, ours = [], []
        for _ in range(ROUNDS):
            comm.Barrier()
            t = time.perf_counter()
            for _ in range(loops):
                comm.Allreduce(MPI.IN_PLACE, view)
            raw.append((time.perf_counter() - t) / loops)
            comm.Barrier()
            t = time.perf_counter()
            for _ in range(loops):
                kv.pushpull(0, x)
            ours.append((time.perf_counter() - t) / loops)
            view[:] = 1                         # keep the values finite
        if kv.rank == 0:
            ratio = statistics.median(o / r for o, r in zip(ours, raw))
            extra = statistics.median(o - r for o, r in zip(ours, raw))
            print(f"| {size >> 10:,} KiB | {statistics.median(raw) * 1e6:,.1f} | "
                  f"{statistics.median(ours) * 1e6:,.1f} | {ratio:.2f} | {extra * 1e6:+,.1f} |",
                  flush=True)


def list_worker():
    """Rank side of figure 1b: one ``pushpull`` of a list of keys (gluon's Trainer's
    call) against raw ``mpi4py``, one in-place Allreduce per array."""
    import runtime as mx
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    for count, size in ((8, 1 << 20), (64, 4 << 10)):
        kv = mx.kv.create("dist_sync")
        xs = [mx.nd.ones((size // 4,)) for _ in range(count)]
        keys = list(range(count))
        kv.init(keys, xs)
        views = [np.asarray(x) for x in xs]
        loops = max(3, min(500, (16 << 20) // (count * size)))
        raw, ours = [], []
        for _ in range(ROUNDS):
            comm.Barrier()
            t = time.perf_counter()
            for _ in range(loops):
                for v in views:
                    comm.Allreduce(MPI.IN_PLACE, v)
            raw.append((time.perf_counter() - t) / loops)
            comm.Barrier()
            t = time.perf_counter()
            for _ in range(loops):
                kv.pushpull(keys, xs)
            ours.append((time.perf_counter() - t) / loops)
            for v in views:
                v[:] = 1
        if kv.rank == 0:
            ratio = statistics.median(o / r for o, r in zip(ours, raw))
            print(f"| {count} x {size >> 10:,} KiB | {statistics.median(raw) * 1e6:,.1f} | "
                  f"{statistics.median(ours) * 1e6:,.1f} | {ratio:.2f} |", flush=True)


def exchange_worker(kib):
    """Rank side of figure 2b: prints the median time of one step's exchange on rank 0."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    share = int(kib * 1024 / comm.size)
    send = np.ones(share, np.uint8)
    counts = np.full(comm.size, share, np.int64)
    offsets = np.arange(comm.size, dtype=np.int64) * share
    out = np.empty(share * comm.size, np.uint8)
    mine, every = np.array([share], np.int64), np.empty(comm.size, np.int64)
    loops = 50 if QUICK else 1000
    times = []
    for _ in range(ROUNDS):
        comm.Barrier()
        t = time.perf_counter()
        for _ in range(loops):
            comm.Allgather(mine, every)
            comm.Allgatherv(send, [out, counts, offsets, MPI.BYTE])
        times.append((time.perf_counter() - t) / loops)
    if comm.rank == 0:
        print(f"{statistics.median(times) * 1e6:.1f}", flush=True)


def _job(ranks, extra=(), one_thread=True):
    cmd = [sys.executable, "-m", "runtime", "train", "sparse", "--quiet", *JOB, *extra]
    if ranks > 1:
        cmd = ["mpiexec", "-n", str(ranks)] + cmd + ["--kvstore", "dist_sync"]
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, env=_env(one_thread), capture_output=True,
                         text=True, timeout=600, check=True).stdout
    wall = time.perf_counter() - t
    get = lambda pattern: float(re.search(pattern, out).group(1).replace(",", ""))  # noqa: E731
    row = {"wall": wall, "auc": get(r"test AUC: ([0-9.]+)"),
           "samples_s": get(r"throughput: ([0-9,]+) samples/s"),
           "first_ms": get(r"the first step, .*? took ([0-9.,]+) ms")}
    if ranks > 1:
        row["comm_ms"] = get(r"communication ([0-9.]+) ms")
        row["kib"] = get(r"and ([0-9,.]+) KiB a step")
        row["merge_ms"] = get(r"merge ([0-9.]+) ms")
    return row


def _two_ranks(flag, *args, capture=False):
    """Run this script's worker ``flag`` on 2 ranks (rank 0 prints table rows); with
    ``capture``, return what it printed."""
    sys.stdout.flush()
    done = subprocess.run(["mpiexec", "-n", "2", sys.executable, __file__, flag, *args],
                          cwd=ROOT, env=_env(), check=True, timeout=900,
                          capture_output=capture, text=True)
    return done.stdout if capture else None


def main():
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs\n")
    print("## Allreduce of one float32 array, 2 ranks: KVStore.pushpull vs raw mpi4py\n")
    print("| size | mpi4py (us) | KVStore (us) | ratio | extra (us) |")
    print("|---:|---:|---:|---:|---:|")
    _two_ranks("--allreduce")
    print("\nOne pushpull of a list of keys (the Trainer's call) vs an Allreduce per array:\n")
    print("| arrays | mpi4py (us) | KVStore (us) | ratio |")
    print("|---:|---:|---:|---:|")
    _two_ranks("--list")

    print("\n## ndrt train sparse: 2 ranks (dist_sync) vs one process, same global batch\n")
    med = lambda rows, k: statistics.median(r[k] for r in rows)  # noqa: E731
    for batch in (1024, 4096):
        size = ["--batch-size", str(batch)]
        half = ["--batch-size", str(batch // 2)]
        one, two, share, free = [], [], [], []
        for _ in range(2 if QUICK else 3):
            one.append(_job(1, size))
            free.append(_job(1, size, one_thread=False))
            share.append(_job(1, half))
            two.append(_job(2, size))
        ratio = statistics.median(b["samples_s"] / a["samples_s"] for a, b in zip(one, two))
        ceiling = statistics.median(2 * h["samples_s"] / a["samples_s"]
                                    for a, h in zip(one, share))
        print(f"global batch {batch:,}:\n")
        print("| run | samples/s | ms/step | first step ms | test AUC | comm ms/step | "
              "KiB/step | merge ms/step |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        step_ms = lambda rows, b: 1e3 * b / med(rows, "samples_s")  # noqa: E731
        print(f"| 1 process | {med(one, 'samples_s'):,.0f} | {step_ms(one, batch):.3f} | "
              f"{med(one, 'first_ms'):.1f} | {med(one, 'auc'):.4f} | | | |")
        print(f"| 1 process, OMP_NUM_THREADS unset | {med(free, 'samples_s'):,.0f} | "
              f"{step_ms(free, batch):.3f} | {med(free, 'first_ms'):.1f} | "
              f"{med(free, 'auc'):.4f} | | | |")
        print(f"| 1 process, batch {batch // 2:,} | {med(share, 'samples_s'):,.0f} | "
              f"{step_ms(share, batch // 2):.3f} | {med(share, 'first_ms'):.1f} | "
              f"{med(share, 'auc'):.4f} | | | |")
        print(f"| 2 ranks | {med(two, 'samples_s'):,.0f} | {step_ms(two, batch):.3f} | "
              f"{med(two, 'first_ms'):.1f} | {med(two, 'auc'):.4f} | "
              f"{med(two, 'comm_ms'):.2f} | {med(two, 'kib'):,.1f} | "
              f"{med(two, 'merge_ms'):.2f} |")
        whole, half = step_ms(one, batch), step_ms(share, batch // 2)
        ratio_free = statistics.median(b["samples_s"] / a["samples_s"]
                                       for a, b in zip(free, two))
        print(f"\nthroughput ratio 2 ranks / 1 process (median of rounds): {ratio:.2f}x "
              f"(scaling efficiency {ratio / 2:.0%}; {ratio_free:.2f}x against one "
              f"process with OMP_NUM_THREADS unset); ceiling with free communication "
              f"{ceiling:.2f}x; serial fraction of the one-process step "
              f"{(2 * half - whole) / whole:.0%}; for 1.5x a rank's step may spend "
              f"{1e3 * (whole / 1.5 - half):.0f} us a step beyond the work of its half "
              f"batch")
        kib = med(two, "kib")
        floor = float(_two_ranks("--exchange", f"{kib:.1f}", capture=True))
        print(f"the exchange alone, raw mpi4py (Allgather of the counts, Allgatherv of "
              f"{kib:,.1f} KiB in all, as the job's step): {floor:.0f} us a step, against "
              f"that budget of {1e3 * (whole / 1.5 - half):.0f} us\n")
        sys.stdout.flush()

    print("## Start-up: a tiny job under mpiexec -n 2 vs one process\n")
    tiny = ["--rows", "3000", "--features", "5000", "--batch-size", "512"]
    walls = [(_job(1, tiny)["wall"], _job(2, tiny)["wall"]) for _ in range(3)]
    print(f"one process {statistics.median(w[0] for w in walls):.2f} s, mpiexec -n 2 "
          f"{statistics.median(w[1] for w in walls):.2f} s, extra "
          f"{statistics.median(w[1] - w[0] for w in walls):.2f} s (median of 3)")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    if "--allreduce" in sys.argv:
        allreduce_worker()
    elif "--list" in sys.argv:
        list_worker()
    elif "--exchange" in sys.argv:
        exchange_worker(float(sys.argv[sys.argv.index("--exchange") + 1]))
    else:
        main()
