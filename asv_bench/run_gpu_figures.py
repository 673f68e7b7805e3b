"""GPU figures (needs an NVIDIA GPU): warm alloc+free and RMM's random trace on ndrt's
device pools, beside CuPy's MemoryPool and torch.empty(device='cuda') where those are
installed; and the MLP 784-256-256-10 SGD step on gpu(0) beside the same step in
PyTorch CUDA (medians of interleaved rounds, each step synchronised).  Run by
tests/gpu/run_device_checks.sh.

    python asv_bench/run_gpu_figures.py
"""
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_allocator import random_trace, replay  # noqa: E402
from benchmarks.bench_autograd import LAYERS, LR, mlp_data, ndrt_mlp  # noqa: E402

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




def torch_mlp(P0, X, Y):
    """The same SGD step in PyTorch on cuda: W (out, in), mean softmax cross-entropy."""
    import torch
    dev = torch.device("cuda")
    P = [torch.tensor(p, device=dev, requires_grad=True) for p in P0]
    Xt, Yt = torch.tensor(X, device=dev), torch.tensor(Y, device=dev)

    def step():
        h = torch.relu(torch.nn.functional.linear(Xt, P[0], P[1]))
        h = torch.relu(torch.nn.functional.linear(h, P[2], P[3]))
        z = torch.nn.functional.linear(h, P[4], P[5])
        loss = torch.nn.functional.cross_entropy(z, Yt)
        for p in P:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in P:
                p -= LR * p.grad
    return step, torch.cuda.synchronize


def mlp_figures(rounds=7, steps=50):
    """ndrt's MLP step on gpu(0) beside PyTorch CUDA's, per batch size (ms per step)."""
    import cupy
    from runtime.context import Context
    sync = cupy.cuda.Device(0).synchronize
    try:
        import torch
        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    print(f"\nMLP {'-'.join(map(str, LAYERS))} SGD step on gpu(0), ms per step (medians of "
          f"{rounds} rounds of {steps} steps)")
    print("| batch | ndrt | PyTorch CUDA | ratio |\n|---|---|---|---|")
    for batch in (64, 1024):
        X, Y, P0 = mlp_data(batch)
        cases = {"ndrt": (ndrt_mlp(P0, X, Y, ctx=Context("gpu", 0))[0], sync)}
        if have_torch:
            cases["torch"] = torch_mlp(P0, X, Y)
        times = {k: [] for k in cases}
        for step, done in cases.values():
            step()
            done()
        for _ in range(rounds):
            for k, (step, done) in cases.items():
                done()
                t0 = time.perf_counter()
                for _ in range(steps):
                    step()
                done()
                times[k].append((time.perf_counter() - t0) / steps * 1e3)
        ms = {k: statistics.median(v) for k, v in times.items()}
        t = ms.get("torch")
        print(f"| {batch} | {ms['ndrt']:.3f} | {t:.3f} | {ms['ndrt'] / t:.2f}x |" if t else
              f"| {batch} | {ms['ndrt']:.3f} | - | - |")


if __name__ == "__main__":
    main()
    if _cuda.device_count():
        mlp_figures()
