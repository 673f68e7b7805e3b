"""Allocator demo: ``python -m allocator`` runs a small workload and prints pool statistics."""

import time

import numpy as np

import allocator


def main():
    rng = np.random.default_rng(0)
    live = []
    t0 = time.perf_counter()
    for _ in range(20_000):
        if live and rng.random() < 0.45:
            live.pop(int(rng.integers(len(live))))
        else:
            buf = allocator.alloc(int(rng.integers(1, 1 << 20)))
            np.frombuffer(buf, np.uint8)[:64] = 1      # zero-copy NumPy view of pool memory
            live.append(buf)
    elapsed = time.perf_counter() - t0
    print(f"20,000 random alloc/free operations in {elapsed * 1e3:.1f} ms, "
          f"{len(live)} buffers alive\n")
    print(allocator.memory_summary())
    del live, buf
    allocator.empty_cache()
    s = allocator.memory_stats()
    print(f"\nafter the buffers died and empty_cache(): allocated "
          f"{s['allocated_bytes.all.current']} B, reserved {s['reserved_bytes.all.current']} B")


if __name__ == "__main__":
    main()
