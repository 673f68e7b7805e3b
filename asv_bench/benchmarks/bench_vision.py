"""Vision operators on detection-sized inputs (float32): ROIPooling and ROIAlign of 256
rois over a (2, 256, 38, 50) feature map to 7 x 7 (forward, and forward + backward),
BilinearResize2D (8, 64, 56, 56) -> 112 x 112, AdaptiveAvgPooling2D to 7 x 7, box_nms of
8 x 2000 boxes (topk 400)."""
import numpy as np

from runtime import autograd, nd


def _rois(n=256, seed=0):
    rng = np.random.default_rng(seed)
    r = np.zeros((n, 5), np.float32)
    r[:, 0] = rng.integers(0, 2, n)
    xy = rng.uniform(0, 500, (n, 2))
    r[:, 1:3] = xy
    r[:, 3:5] = np.minimum(xy + rng.uniform(16, 300, (n, 2)), 799)
    return r


class ROI:
    params = ["ROIPooling", "_contrib_ROIAlign"]
    param_names = ["op"]

    def setup(self, op):
        rng = np.random.default_rng(1)
        self.x = nd.array(rng.standard_normal((2, 256, 38, 50), dtype=np.float32))
        self.rois = nd.array(_rois())
        self.f = getattr(nd, op)
        self.attrs = {"pooled_size": (7, 7), "spatial_scale": 1 / 16}
        if op == "_contrib_ROIAlign":
            self.attrs["sample_ratio"] = 2

    def time_forward(self, op):
        self.f(self.x, self.rois, **self.attrs).wait_to_read()

    def time_forward_backward(self, op):
        self.x.attach_grad()
        with autograd.record():
            y = self.f(self.x, self.rois, **self.attrs)
        y.backward()
        self.x.grad.wait_to_read()


class Resize:
    def setup(self):
        rng = np.random.default_rng(2)
        self.x = nd.array(rng.standard_normal((8, 64, 56, 56), dtype=np.float32))

    def time_bilinear_resize_up(self):
        nd._contrib_BilinearResize2D(self.x, height=112, width=112).wait_to_read()

    def time_adaptive_avg_pooling(self):
        nd._contrib_AdaptiveAvgPooling2D(self.x, output_size=7).wait_to_read()


class NMS:
    def setup(self):
        rng = np.random.default_rng(3)
        d = rng.uniform(0, 1, (8, 2000, 6)).astype(np.float32)
        d[..., 4:6] = d[..., 2:4] + rng.uniform(0.01, 0.2, (8, 2000, 2))
        d[..., 0] = rng.integers(0, 20, (8, 2000))
        self.d = nd.array(d)

    def time_box_nms(self):
        nd._contrib_box_nms(self.d, overlap_thresh=0.5, id_index=0, topk=400).wait_to_read()
