"""DataLoader throughput, ndrt against PyTorch's DataLoader on the same data, as one
markdown table.

    python asv_bench/run_data_figures.py                     # a few minutes on 2 cores
    DATA_FIGURES_QUICK=1 python asv_bench/run_data_figures.py   # smoke test
    DATA_FIGURES_TORCH=/path/to/python ...   # the interpreter that has torch

The data: 60,000 float32 28x28 images and int64 labels (MNIST's size), an
``ArrayDataset`` of two NumPy arrays for ndrt and a ``TensorDataset`` of the same values
for PyTorch; batch 64 (938 batches, the last one short), no shuffling; ``num_workers`` 0
and 2 (worker processes kept across epochs on both sides: ndrt's always are, PyTorch's
with ``persistent_workers=True``).  A figure is the median time of one full epoch
(batches drawn and touched: one element read per batch) over ``REPEAT`` rounds, after a
warm-up epoch; ndrt and PyTorch epochs alternate round by round (PyTorch in a child
interpreter that waits for each round's turn), so a slow phase of a shared host hits both
alike; the ratio is the median of the per-round ratios.
"""
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from runtime.gluon import data  # noqa: E402

QUICK = bool(os.environ.get("DATA_FIGURES_QUICK"))
REPEAT = 3 if QUICK else 7
N = 6000 if QUICK else 60000
BATCH = 64
TORCH = os.environ.get("DATA_FIGURES_TORCH", "/root/peers/tvenv/bin/python")

# The PyTorch side: reads one command per line ("epoch <workers>"), answers the seconds.
TORCH_CHILD = r"""
import sys, time, numpy as np, torch
from torch.utils.data import DataLoader, TensorDataset
torch.set_num_threads(1)
n, batch = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
x = torch.from_numpy(rng.random((n, 28, 28), dtype=np.float32))
y = torch.from_numpy(rng.integers(0, 10, n))
ds = TensorDataset(x, y)
loaders = {}
def epoch(workers):
    if workers not in loaders:
        loaders[workers] = DataLoader(ds, batch_size=batch, num_workers=workers,
                                      persistent_workers=workers > 0)
    t = time.perf_counter()
    for bx, by in loaders[workers]:
        float(bx[0, 0, 0]); int(by[0])
    return time.perf_counter() - t
print("ready", flush=True)
for line in sys.stdin:
    cmd, workers = line.split()
    print(epoch(int(workers)), flush=True)
"""


def ndrt_epochs():
    rng = np.random.default_rng(0)
    ds = data.ArrayDataset(rng.random((N, 28, 28), dtype=np.float32),
                           rng.integers(0, 10, N))
    loaders = {}

    def epoch(workers):
        if workers not in loaders:
            loaders[workers] = data.DataLoader(ds, batch_size=BATCH, num_workers=workers)
        t = time.perf_counter()
        for bx, by in loaders[workers]:
            float(bx[0, 0, 0].asscalar()), int(by[0].asscalar())
        return time.perf_counter() - t
    return epoch, loaders


def main():
    torch = None
    if os.path.exists(TORCH):
        torch = subprocess.Popen([TORCH, "-c", TORCH_CHILD, str(N), str(BATCH)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if torch.stdout.readline().strip() != "ready":
            torch = None

    def torch_epoch(workers):
        torch.stdin.write(f"epoch {workers}\n")
        torch.stdin.flush()
        return float(torch.stdout.readline())

    ours, loaders = ndrt_epochs()
    print(f"DataLoader, {N} samples of 28x28 float32, batch {BATCH}; {REPEAT} rounds, "
          f"medians; PyTorch from {TORCH if torch else '(not found)'}\n")
    print("| num_workers | ndrt epoch (s) | PyTorch epoch (s) | ndrt samples/s | "
          "ratio PyTorch time / ndrt time (higher: ndrt faster) |")
    print("|---|---|---|---|---|")
    results = {}
    for workers in (0, 2):
        ours(workers)
        if torch:
            torch_epoch(workers)
        mine, theirs = [], []
        for _ in range(REPEAT):
            mine.append(ours(workers))
            if torch:
                theirs.append(torch_epoch(workers))
        m = statistics.median(mine)
        row = [str(workers), f"{m:.3f}", "-", f"{N / m:,.0f}", "-"]
        if theirs:
            row[2] = f"{statistics.median(theirs):.3f}"
            row[4] = f"{statistics.median(t / o for t, o in zip(theirs, mine)):.2f}"
        results[workers] = {"ndrt": mine, "torch": theirs}
        print("| " + " | ".join(row) + " |", flush=True)
    for loader in loaders.values():
        loader.close()
    if torch:
        torch.stdin.close()
        torch.wait(timeout=60)
    if os.environ.get("DATA_FIGURES_JSON"):
        with open(os.environ["DATA_FIGURES_JSON"], "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main()
