"""Make mxnet_lr_scheduler_values.json: MXNet 1.9.1's learning rates of the schedules in
SCHEDULES for update counts 0 to 59 (the reference of tests/runtime/test_lr_scheduler.py).
Run with MXNet 1.9.1, as make_mxnet_optimizer_values.py says."""
import json
import os

import numpy as np

np.bool = bool          # MXNet 1.9.1 still says np.bool
import mxnet as mx     # noqa: E402

# name -> (class name, kwargs); the test builds ndrt's from the same entries.
SCHEDULES = {
    "multifactor": ("MultiFactorScheduler", {"step": [10, 15, 30], "factor": 0.5,
                                             "base_lr": 0.4, "warmup_steps": 4,
                                             "warmup_begin_lr": 0.1}),
    "multifactor_constant": ("MultiFactorScheduler", {
        "step": [10, 15, 30], "factor": 0.5, "base_lr": 0.4, "warmup_steps": 4,
        "warmup_begin_lr": 0.1, "warmup_mode": "constant"}),
    "factor": ("FactorScheduler", {"step": 3, "factor": 0.1, "stop_factor_lr": 1e-3,
                                   "base_lr": 1.0, "warmup_steps": 2, "warmup_begin_lr": 0.5}),
    "poly": ("PolyScheduler", {"max_update": 45, "base_lr": 0.5, "pwr": 3, "final_lr": 0.05,
                               "warmup_steps": 5, "warmup_begin_lr": 0.01}),
    "cosine": ("CosineScheduler", {"max_update": 45, "base_lr": 0.5, "final_lr": 0.05,
                                   "warmup_steps": 5, "warmup_begin_lr": 0.01}),
}

if __name__ == "__main__":
    out = {}
    for name, (cls, kw) in SCHEDULES.items():
        s = getattr(mx.lr_scheduler, cls)(**kw)
        out[name] = {"class": cls, "kwargs": kw, "lr": [float(s(n)) for n in range(60)]}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "mxnet_lr_scheduler_values.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(f"{len(out)} schedules written with MXNet {mx.__version__}")
