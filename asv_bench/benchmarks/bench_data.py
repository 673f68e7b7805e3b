"""Data loading: one epoch of a DataLoader over an ArrayDataset of 60,000 float32 28x28
images and int64 labels, batch 64, with 0 and 2 worker processes (kept across epochs),
beside the NumPy reference of the same batches (fancy-index gather of each batch's
rows); decoding nothing.  PyTorch's DataLoader on the same data is in
``run_data_figures.py``."""
import numpy as np

from runtime.gluon import data

N, BATCH = 60000, 64


class DataLoaderEpoch:
    params = [0, 2]
    param_names = ["num_workers"]
    timeout = 300

    def setup(self, num_workers):
        rng = np.random.default_rng(0)
        self.x = rng.random((N, 28, 28), dtype=np.float32)
        self.y = rng.integers(0, 10, N)
        self.loader = data.DataLoader(data.ArrayDataset(self.x, self.y), batch_size=BATCH,
                                      num_workers=num_workers)
        for _ in self.loader:       # starts the workers
            break

    def teardown(self, num_workers):
        self.loader.close()

    def time_epoch(self, num_workers):
        for bx, by in self.loader:
            bx.wait_to_read()

    def time_numpy_gather(self, num_workers):
        for start in range(0, N, BATCH):
            rows = np.arange(start, min(start + BATCH, N))
            self.x[rows].copy(), self.y[rows].copy()
