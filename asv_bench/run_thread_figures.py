"""Which operators of the ResNet-18 training step gain from a second thread: the step of
``run_gluon_figures.py`` (``benchmarks/bench_gluon.resnet_step``, batch 16, 3x64x64)
under ``runtime.profiler``, in child processes on one thread (``OMP_NUM_THREADS=1
OPENBLAS_NUM_THREADS=1``) and on two (both variables 2), as one markdown table.

    PYTHONPATH=$PWD python asv_bench/run_thread_figures.py
    ALLOC_FIGURES_QUICK=1 PYTHONPATH=$PWD python asv_bench/run_thread_figures.py  # smoke

Each child times its steps (wall and process CPU time) and sums each operator's
profiled wall time per step; the rounds alternate one and two threads, a time is the
median over rounds, a speed-up the median of the per-round ratios.  The profiler's
records are wall times, so on a machine whose second core is busy a speed-up below 1
says the second thread waited for a core, not that the kernel is slower.
"""
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_allocator_figures import QUICK  # noqa: E402

ROUNDS, STEPS, BATCH = (1, 2, 2) if QUICK else (3, 8, 16)


def child():
    """Print {'step': wall ms, 'cpu': CPU ms, 'ops': {name: ms}} per step as JSON."""
    from benchmarks.bench_gluon import resnet_step
    from runtime import profiler

    step = resnet_step(BATCH)
    for _ in range(2):
        step()
    profiler.set_config(profile_all=True, aggregate_stats=True)
    profiler.set_state("run")
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(STEPS):
        step()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    profiler.set_state("stop")
    table = json.loads(profiler.dumps(reset=True, format="json"))["Time"]["operator"]
    print(json.dumps({"step": wall / STEPS * 1e3, "cpu": cpu / STEPS * 1e3,
                      "ops": {k: v["Total Time"] / STEPS for k, v in table.items()}}))


def run(threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, __file__, "--child"], env=env, check=True,
                         capture_output=True, text=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    runs = {1: [], 2: []}
    for _ in range(ROUNDS):
        for threads in (1, 2):
            runs[threads].append(run(threads))

    def med(threads, key, op=None):
        return statistics.median(r[key] if op is None else r["ops"].get(op, 0.0)
                                 for r in runs[threads])

    def gain(key, op=None):
        return statistics.median(
            (a[key] if op is None else a["ops"].get(op, 0.0))
            / max(b[key] if op is None else b["ops"].get(op, 0.0), 1e-9)
            for a, b in zip(runs[1], runs[2]))

    print("| per step | one thread | two threads | speed-up |")
    print("|---|---|---|---|")
    print(f"| step, wall | {med(1, 'step'):.1f} ms | {med(2, 'step'):.1f} ms | "
          f"{gain('step'):.2f}x |")
    print(f"| step, process CPU | {med(1, 'cpu'):.1f} ms | {med(2, 'cpu'):.1f} ms | |")
    ops = sorted(runs[1][0]["ops"], key=lambda op: -med(1, "ops", op))
    for op in ops:
        print(f"| {op} | {med(1, 'ops', op):.2f} ms | {med(2, 'ops', op):.2f} ms | "
              f"{gain('ops', op):.2f}x |")
    print(f"\n{ROUNDS} rounds of {STEPS} steps, batch {BATCH}; load average "
          f"{os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    child() if sys.argv[1:] == ["--child"] else main()
