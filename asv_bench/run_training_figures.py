"""The training figures, measured in one process: the sparse job's step in
samples/s beside the handwritten NumPy/SciPy step and the same model in PyTorch (when it
imports), and the digits MLP step against a handwritten NumPy step; one markdown table.

    python asv_bench/run_training_figures.py            # about a minute on 2 cores
    ALLOC_FIGURES_QUICK=1 python asv_bench/run_training_figures.py   # smoke test
    # with PyTorch beside (shared/bench/peers/README.md builds the venv; same Python):
    PYTHONPATH=$PWD $HOME/peers/tvenv/bin/python asv_bench/run_training_figures.py

The models and NumPy references are those of ``benchmarks/bench_training.py``; before
timing, one step of ndrt (and of each PyTorch variant) from the same weights and batch must
give the reference's updated weights.  Timer: ``run_allocator_figures.bench`` (loops whose
count doubles up to the minimum time, rounds of all cases interleaved, GC off, 0.2 s sleep
before each timed loop so that one library's spinning thread pool does not slow the next);
a time is the median over rounds, a ratio the median of the per-round ratios.

PyTorch runs the same model two ways, both on the same CSR batches (8 batches of 1,024 rows
cycled, as ndrt's):

* ``torch.sparse.mm(csr, E)`` with a dense E.grad and ``torch.optim.Adam`` over everything
  (PyTorch's autograd gives the dense operand of a sparse product a dense gradient);
* ``nn.EmbeddingBag(mode='sum', sparse=True)`` fed the CSR's indices, offsets and values
  (``per_sample_weights``), ``SparseAdam`` for E (lazy, as MXNet's) and ``Adam`` for the MLP:
  PyTorch's idiomatic sparse model.

The target compares ndrt with the faster of the two.
"""
import math
import statistics
import warnings
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_training import (BETA1, BETA2, EPS, EMBED, FEATURES,  # noqa: E402
                                       MLP_BATCH, SPARSE_BATCH, SPARSE_LR, check_same_update,
                                       checked_mlp, checked_sparse, sparse_batches,
                                       sparse_params, numpy_sparse_step, NumpyAdam)
from benchmarks.bench_autograd import upstream_allocs  # noqa: E402
from run_allocator_figures import bench  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

PAUSE = 0.2


def line(*cells):
    print("| " + " | ".join(cells) + " |")
    sys.stdout.flush()


def paired(times, ours, ref):
    return statistics.median(a / b for a, b in zip(times[ours], times[ref]))


def ms(t):
    return f"{t * 1e3:.2f} ms"


# -- PyTorch ---------------------------------------------------------------------------------

def torch_sparse(P0, batches, variant, eps=EPS):
    """(step, values): the sparse model in PyTorch on the same batches (cycled);
    variant 'mm' or 'bag' (module docstring).  values() gives the weights as NumPy.
    PyTorch's Adam adds ``eps`` to the bias-corrected sqrt(v), MXNet's (and PyTorch's
    SparseAdam) to sqrt(v) before the correction: at the first step Adam agrees when its
    eps is EPS / sqrt(1 - BETA2), which the check passes (the timed models use EPS)."""
    F = torch.nn.functional
    E0, W1, b1, W2, b2 = (torch.from_numpy(p.copy()) for p in P0)
    mlp = [p.requires_grad_() for p in (W1, b1, W2, b2)]
    data = []
    for X, y in batches:
        yt = torch.from_numpy(y.reshape(-1, 1).copy())
        if variant == "mm":
            x = torch.sparse_csr_tensor(torch.from_numpy(X.indptr), torch.from_numpy(X.indices),
                                        torch.from_numpy(X.data), size=X.shape)
        else:
            x = (torch.from_numpy(X.indices), torch.from_numpy(X.indptr[:-1].copy()),
                 torch.from_numpy(X.data))
        data.append((x, yt))
    if variant == "mm":
        E = E0.requires_grad_()
        opts = [torch.optim.Adam([E, *mlp], lr=SPARSE_LR, betas=(BETA1, BETA2), eps=eps)]

        def embed(x):
            return torch.sparse.mm(x, E)
        weight = E
    else:
        bag = torch.nn.EmbeddingBag(FEATURES, EMBED, mode="sum", sparse=True)
        with torch.no_grad():
            bag.weight.copy_(E0)
        opts = [torch.optim.SparseAdam(bag.parameters(), lr=SPARSE_LR, betas=(BETA1, BETA2),
                                       eps=EPS),      # SparseAdam adds eps as MXNet does
                torch.optim.Adam(mlp, lr=SPARSE_LR, betas=(BETA1, BETA2), eps=eps)]

        def embed(x):
            return bag(x[0], x[1], per_sample_weights=x[2])
        weight = bag.weight
    state = {"i": 0}

    def step():
        x, y = data[state["i"] % len(data)]
        state["i"] += 1
        for o in opts:
            o.zero_grad(set_to_none=True)
        h = torch.relu(F.linear(embed(x), W1, b1))
        z = F.linear(h, W2, b2)
        F.binary_cross_entropy_with_logits(z, y).backward()
        for o in opts:
            o.step()

    def values():
        return [t.detach().numpy().copy() for t in (weight, W1, b1, W2, b2)]
    return step, values


# -- the figures -----------------------------------------------------------------------------

def sparse_figures():
    batches = sparse_batches()
    step, step_numpy = checked_sparse(batches)
    env = {"step": step, "step_numpy": step_numpy}
    cases = {"nd": "step()", "np": "step_numpy()"}
    notes = []
    if torch is not None:
        torch.set_num_threads(2)
        warnings.filterwarnings("ignore", message="Sparse (CSR tensor support|invariant)")
        P0 = sparse_params()
        P = [p.copy() for p in P0]
        numpy_sparse_step(P, NumpyAdam(P, SPARSE_LR), *batches[0])
        for variant in ("mm", "bag"):
            t_step, values = torch_sparse(P0, batches[:1], variant,
                                          eps=EPS / math.sqrt(1 - BETA2))
            t_step()
            check_same_update(f"torch {variant}", P0, P, values())
            env[f"t_{variant}"] = torch_sparse(P0, batches, variant)[0]
            cases[f"t_{variant}"] = f"t_{variant}()"
    for fn in env.values():
        for _ in range(3):
            fn()
    t = bench(cases, env, pause=PAUSE)
    per_s = {k: SPARSE_BATCH / statistics.median(v) for k, v in t.items()}
    line("sparse step (batch 1,024 CSR rows, 1M x 8 embedding), samples/s",
         f"{per_s['nd']:,.0f}", f"{per_s['np']:,.0f} ({paired(t, 'nd', 'np'):.2f}x time)",
         *(f"{per_s[k]:,.0f} ({paired(t, 'nd', k):.2f}x time)" if k in t else "-"
           for k in ("t_mm", "t_bag")), "<= 1.0x PyTorch")
    notes.append(f"sparse step medians: ndrt {ms(statistics.median(t['nd']))}, NumPy/SciPy "
                 f"{ms(statistics.median(t['np']))}"
                 + "".join(f", torch {k[2:]} {ms(statistics.median(t[k]))}"
                           for k in ("t_mm", "t_bag") if k in t))
    notes.append(f"sparse step upstream allocations per step (steady): "
                 f"{upstream_allocs(step)[0]:.0f}")
    return notes


def mlp_figures():
    step, step_numpy = checked_mlp()
    t = bench({"nd": "step()", "np": "step_numpy()"},
              {"step": step, "step_numpy": step_numpy}, pause=PAUSE)
    line(f"digits MLP 64-64-64-10 Adam step, batch {MLP_BATCH} / NumPy by hand",
         ms(statistics.median(t["nd"])), f"{ms(statistics.median(t['np']))} "
         f"({paired(t, 'nd', 'np'):.2f}x)", "-", "-", "<= 1.10x NumPy")
    return [f"MLP step upstream allocations per step (steady): {upstream_allocs(step)[0]:.0f}"]


def main():
    print(f"numpy {np.__version__}" + (f", torch {torch.__version__} "
                                       f"({torch.get_num_threads()} threads)" if torch else
                                       ", torch not importable: its columns stay empty"))
    line("figure", "ndrt", "NumPy/SciPy (ndrt's time ratio)", "PyTorch sparse.mm + Adam",
         "PyTorch EmbeddingBag + SparseAdam", "target")
    line(*["---"] * 6)
    notes = sparse_figures() + mlp_figures()
    print()
    for n in notes:
        print(n)


if __name__ == "__main__":
    main()
