"""GPU allocator figures (needs an NVIDIA GPU): warm alloc+free and RMM's random trace on
ndrt's device pools, beside CuPy's MemoryPool and torch.empty(device='cuda') where those
are installed.  Run by tests/gpu/run_device_checks.sh.

    python asv_bench/run_gpu_figures.py
"""
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_allocator import random_trace, replay  # noqa: E402

import allocator  # noqa: E402
from allocator import BestFitPool, NaivePool, RoundPool, _cuda  # noqa: E402

MiB = 1 << 20


def per_op(fn, n=20000, repeat=5):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        ts.append((time.perf_counter() - t0) / n)
    return statistics.median(ts)


def main():
    if _cuda.device_count() == 0:
        print("no CUDA device: nothing to measure")
        return
    up = _cuda.CudaUpstream(0, reserve_percent=5)
    pools = {"naive": NaivePool(up), "round": RoundPool(up), "bestfit": BestFitPool(up)}
    peers = {}
    try:
        import cupy
        mp = cupy.cuda.MemoryPool()
        peers["cupy MemoryPool"] = lambda n: mp.malloc(n)
    except ImportError:
        pass   # no CuPy: its column is left out
    try:
        import torch
        if torch.cuda.is_available():
            peers["torch.empty cuda"] = lambda n: torch.empty(n, dtype=torch.uint8,
                                                              device="cuda")
    except ImportError:
        pass   # no PyTorch: its column is left out
    print("| case | " + " | ".join(list(pools) + list(peers)) + " |")
    print("|---|" + "---|" * (len(pools) + len(peers)))
    for size in (256, 64 << 10, 16 << 20):
        cells = []
        for p in pools.values():
            p.alloc(size)
            cells.append(f"{per_op(lambda: p.alloc(size)) * 1e9:,.0f} ns")
        for f in peers.values():
            f(size)
            cells.append(f"{per_op(lambda: f(size)) * 1e9:,.0f} ns")
        print(f"| warm alloc+free {size} B | " + " | ".join(cells) + " |")
    ops = random_trace(n_ops=5000, cap=8 << 30)
    cells = []
    for name, cls in (("naive", NaivePool), ("round", RoundPool), ("bestfit", BestFitPool)):
        pool = cls(up)
        t0 = time.perf_counter()
        replay(ops, pool.alloc)
        dt = (time.perf_counter() - t0) / len(ops)
        s = pool.memory_stats()
        cells.append(f"{dt * 1e9:,.0f} ns/op, overhead "
                     f"{s['reserved_bytes.all.peak'] / s['requested_bytes.all.peak']:.3f}")
        pool.empty_cache()
    for f in peers.values():
        t0 = time.perf_counter()
        replay(ops, f)
        cells.append(f"{(time.perf_counter() - t0) / len(ops) * 1e9:,.0f} ns/op")
    print("| random trace (5,000 ops, 8 GiB cap) | " + " | ".join(cells) + " |")
    print(allocator.memory_summary("gpu(0)") if allocator.pools() else "")


if __name__ == "__main__":
    main()
