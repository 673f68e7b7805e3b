"""Write mxnet_rotate_values.npz: MXNet 1.9.1's ``mx.image.imrotate`` (what
``transforms.Rotate`` calls) on the images of ``inputs()`` for the cases of ``CASES``.
Run with an interpreter where ``import mxnet`` is MXNet 1.9.1 (the peers' README)::

    python make_mxnet_rotate_values.py mxnet_rotate_values.npz
"""

import sys

import numpy as np

# (key, angle in degrees or a list of one per image, zoom_in, zoom_out, batched)
CASES = [("r30", 30.0, False, False, False), ("rm45", -45.0, False, False, False),
         ("r90", 90.0, False, False, False), ("r0", 0.0, False, False, False),
         ("r30_in", 30.0, True, False, False), ("r30_out", 30.0, False, True, False),
         ("rm120_in", -120.0, True, False, False), ("r200_out", 200.0, False, True, False),
         ("batch", [15.0, -60.0], False, False, True),
         ("batch_out", [15.0, -60.0], False, True, True),
         ("batch_scalar", 10.0, True, False, True)]


def inputs():
    """A CxHxW image (3x5x7) and an NxCxHxW batch (2x2x6x4), float32."""
    rng = np.random.default_rng(11)
    return (rng.uniform(0, 1, (3, 5, 7)).astype(np.float32),
            rng.uniform(0, 1, (2, 2, 6, 4)).astype(np.float32))


def main(path):
    import mxnet as mx
    assert mx.__version__ == "1.9.1", mx.__version__
    image, batch = inputs()
    out = {}
    for key, angle, zin, zout, batched in CASES:
        src = mx.nd.array(batch if batched else image)
        deg = mx.nd.array(angle) if isinstance(angle, list) else angle
        out[key] = mx.image.imrotate(src, deg, zoom_in=zin, zoom_out=zout).asnumpy()
    np.savez_compressed(path, **out)


if __name__ == "__main__":
    main(sys.argv[1])
