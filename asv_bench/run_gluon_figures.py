"""The Gluon model figures beside PyTorch's CPU (when torch imports), as one markdown
table.

    PYTHONPATH=$PWD $HOME/peers/tvenv/bin/python asv_bench/run_gluon_figures.py  # + PyTorch
    PYTHONPATH=$PWD python asv_bench/run_gluon_figures.py        # ndrt's times only
    ALLOC_FIGURES_QUICK=1 PYTHONPATH=$PWD python asv_bench/run_gluon_figures.py  # smoke

1. A ResNet-18 training step (``benchmarks/bench_gluon.py``), batch 16, 3x64x64 random
   images, 10 classes: the model zoo's ``resnet18_v1`` with SoftmaxCrossEntropyLoss and
   an SGD Trainer (momentum 0.9), against the same architecture written in PyTorch
   (torchvision is not needed: a BasicBlock ResNet-18 of the same layers) with
   ``nn.CrossEntropyLoss`` and ``optim.SGD``.  Target: at most 1.5x PyTorch's time.
2. ``rnn.LSTM(256, num_layers=2)`` forward + backward on (T=35, N=32, 256) against
   ``torch.nn.LSTM(256, 256, 2)`` with the same weights (MXNet's and PyTorch's gate order
   and bias pair agree): their outputs and input gradients are compared before timing.
   Target: at most 2x PyTorch's time.

Timer: ``run_allocator_figures.bench`` (interleaved rounds, GC off, a pause before each
timed loop so that one library's thread pool goes idle before the other runs); a time is
the median over rounds, a ratio the median of the per-round ratios.  The DataLoader's
figures are ``run_data_figures.py``'s.
"""
import os
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_allocator_figures import QUICK, bench  # noqa: E402
from run_norm_figures import line, ms, torch  # noqa: E402  (table helpers, torch or None)

from benchmarks.bench_gluon import lstm_layer, resnet_step  # noqa: E402

RESNET_BATCH, LSTM_SHAPE = (16, (35, 32, 256)) if not QUICK else (2, (5, 4, 256))


def torch_resnet_step():
    tnn = torch.nn

    class Basic(tnn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = tnn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = tnn.BatchNorm2d(cout)
            self.c2 = tnn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = tnn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = tnn.Sequential(tnn.Conv2d(cin, cout, 1, stride, bias=False),
                                           tnn.BatchNorm2d(cout))

        def forward(self, x):
            r = x if self.down is None else self.down(x)
            h = torch.relu(self.b1(self.c1(x)))
            return torch.relu(self.b2(self.c2(h)) + r)

    layers = [tnn.Conv2d(3, 64, 7, 2, 3, bias=False), tnn.BatchNorm2d(64), tnn.ReLU(),
              tnn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
        cin = cout
    layers += [tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(512, 10)]
    torch.manual_seed(0)
    net = tnn.Sequential(*layers)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = tnn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((RESNET_BATCH, 3, 64, 64)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 10, RESNET_BATCH))

    def step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def lstm_pair():
    """(ndrt fwd+bwd, torch fwd+bwd or None) on the same weights and input; the outputs
    and input gradients are checked against each other first."""
    T, N, C = LSTM_SHAPE
    layer, x, ours, xs = lstm_layer(LSTM_SHAPE)

    if torch is None:
        return ours, None
    t_layer = torch.nn.LSTM(C, 256, 2)
    params = layer.collect_params()
    with torch.no_grad():
        for k in range(2):
            for ours_name, theirs in (("i2h_weight", "weight_ih"), ("h2h_weight", "weight_hh"),
                                      ("i2h_bias", "bias_ih"), ("h2h_bias", "bias_hh")):
                value = [p for n, p in params.items() if n.endswith(f"l{k}_{ours_name}")][0]
                getattr(t_layer, f"{theirs}_l{k}").copy_(
                    torch.from_numpy(value.data().asnumpy()))
    tx = torch.from_numpy(xs).requires_grad_()

    def theirs():
        tx.grad = None
        out, _ = t_layer(tx)
        out.sum().backward()
        return out

    got, want = ours().asnumpy(), theirs().detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-5)
    return ours, theirs


def main():
    load = os.getloadavg()[0]
    print(f"numpy {np.__version__}; torch {torch.__version__ if torch else 'not importable'}; "
          f"load average {load:.2f} on {os.cpu_count()} CPUs\n")
    line("figure", "ndrt", "PyTorch", "ratio", "target")
    line("---", "---", "---", "---", "---")
    cases = {"resnet_ndrt": "r_ours()"}
    scope = {"r_ours": resnet_step(RESNET_BATCH)}
    lstm_ours, lstm_theirs = lstm_pair()
    cases["lstm_ndrt"] = "l_ours()"
    scope["l_ours"] = lstm_ours
    if torch is not None:
        scope["r_theirs"], scope["l_theirs"] = torch_resnet_step(), lstm_theirs
        cases["resnet_torch"], cases["lstm_torch"] = "r_theirs()", "l_theirs()"
    for fn in list(scope.values()):
        fn()                                   # warm: plans, pools, deferred shapes
    times = bench(cases, scope, repeat=None if not QUICK else 3, pause=0.2)
    for name, what, target in (("resnet", f"ResNet-18 training step, batch {RESNET_BATCH}, "
                                          "3x64x64", "<= 1.5x"),
                               ("lstm", "LSTM 2 x 256, (T, N, C) = "
                                        f"{LSTM_SHAPE}: forward + backward", "<= 2x")):
        ours = statistics.median(times[f"{name}_ndrt"])
        if torch is None:
            line(what, ms(ours), "-", "-", target)
            continue
        theirs = statistics.median(times[f"{name}_torch"])
        ratio = statistics.median(a / b for a, b in zip(times[f"{name}_ndrt"],
                                                        times[f"{name}_torch"]))
        line(what, ms(ours), ms(theirs), f"{ratio:.2f}x", target)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
