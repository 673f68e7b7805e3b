"""Write mxnet_image_record_values.npz: MXNet 1.9.1's ``mx.io.ImageRecordIter`` over
image_record_png.rec (PNG images, so that decoders agree to the bit; ``write_records``
writes it with ndrt) for the deterministic cases of ``CASES`` (no random crop, mirror
or shuffle): two epochs of batches (data, label, pad) each.  Run with an interpreter
where ``import mxnet`` is MXNet 1.9.1 (the peers' README)::

    python make_mxnet_image_record_values.py image_record_png.rec out.npz
"""

import sys

import numpy as np

# (key, ImageRecordIter keyword arguments)
CASES = [
    ("center", dict(data_shape=(3, 6, 8), batch_size=2)),
    ("norm_round", dict(data_shape=(3, 5, 5), batch_size=3, mean_r=120.0, mean_g=110.5,
                        mean_b=100.0, std_r=60.0, std_g=50.0, std_b=40.0, scale=0.5)),
    ("no_round", dict(data_shape=(3, 5, 5), batch_size=3, round_batch=False)),
    ("resize", dict(data_shape=(3, 7, 7), batch_size=4, resize=8)),
    ("labels2", dict(data_shape=(3, 4, 4), batch_size=2, label_width=2,
                     path="labels2")),
]
SIZES = [(10, 12), (9, 9), (12, 10), (11, 13), (8, 9)]     # (height, width) per record


def write_records(path, label_width=1):
    """The record file: ``len(SIZES)`` RGB uint8 images as PNG, labels 0, 1, ... (with
    ``label_width`` 2: (i, 10 i))."""
    from runtime import recordio
    rng = np.random.default_rng(4)
    rec = recordio.MXRecordIO(path, "w")
    for i, (h, w) in enumerate(SIZES):
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        label = float(i) if label_width == 1 else [float(i), 10.0 * i]
        rec.write(recordio.pack_img(recordio.IRHeader(0, label, i, 0), img, img_fmt=".png"))
    rec.close()


def main(rec_path, rec2_path, out_path):
    import mxnet as mx
    assert mx.__version__ == "1.9.1", mx.__version__
    out = {}
    for key, kw in CASES:
        kw = dict(kw)
        path = rec2_path if kw.pop("path", None) == "labels2" else rec_path
        it = mx.io.ImageRecordIter(path_imgrec=path, **kw)
        for epoch in range(2):
            if epoch:       # (a reset before the first epoch drops records in MXNet 1.9.1)
                it.reset()
            for b, batch in enumerate(it):
                out[f"{key}_{epoch}_{b}_data"] = batch.data[0].asnumpy()
                out[f"{key}_{epoch}_{b}_label"] = batch.label[0].asnumpy()
                out[f"{key}_{epoch}_{b}_pad"] = np.array(batch.pad)
    np.savez_compressed(out_path, **out)


if __name__ == "__main__":
    main(*sys.argv[1:4])
