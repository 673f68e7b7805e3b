"""The vision operators' figures, measured in one process, as one markdown table:
ROIPooling and ROIAlign (256 rois over a (2, 256, 38, 50) float32 map to 7 x 7),
BilinearResize2D (8, 64, 56, 56) -> 112 x 112 (both align_corners settings),
AdaptiveAvgPooling2D to 7 x 7 and box_nms (8 x 2000 boxes, topk 400).  PyTorch's
``interpolate(mode='bilinear')`` and ``adaptive_avg_pool2d`` (the same definitions: with
align_corners=False PyTorch clamps negative sources at 0, as MXNet) are timed beside when
torch imports, after their results are checked against ndrt's; the ROI ops and box_nms
have no PyTorch counterpart without torchvision (absolute times only).

    PYTHONPATH=. python asv_bench/run_vision_figures.py
    ALLOC_FIGURES_QUICK=1 PYTHONPATH=. python asv_bench/run_vision_figures.py   # smoke
    PYTHONPATH=. $HOME/peers/tvenv/bin/python asv_bench/run_vision_figures.py  # + PyTorch

Timer: ``run_allocator_figures.bench`` (medians over interleaved rounds, GC off).
"""
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_vision import _rois  # noqa: E402
from run_allocator_figures import bench  # noqa: E402  (one timer for every figure)
from run_norm_figures import line, ms, torch  # noqa: E402  (table helpers, torch or None)

from runtime import autograd, nd  # noqa: E402


def _fwd_bwd(f, x, *rest, **attrs):
    def run():
        with autograd.record():
            y = f(x, *rest, **attrs)
        y.backward()
        x.grad.wait_to_read()
    return run


def main():
    rng = np.random.default_rng(0)
    print(f"NumPy {np.__version__}" + (f", PyTorch {torch.__version__} "
                                        f"({torch.get_num_threads()} threads)"
                                        if torch is not None else ", PyTorch not importable"))
    print()
    line("case", "ndrt", "PyTorch (ndrt / PyTorch)")
    line("---", "---", "---")
    fmap = nd.array(rng.standard_normal((2, 256, 38, 50), dtype=np.float32))
    fmap.attach_grad()
    rois = nd.array(_rois())
    roi = {"pooled_size": (7, 7), "spatial_scale": 1 / 16}
    x = rng.standard_normal((8, 64, 56, 56), dtype=np.float32)
    xn = nd.array(x)
    dets = rng.uniform(0, 1, (8, 2000, 6)).astype(np.float32)
    dets[..., 4:6] = dets[..., 2:4] + rng.uniform(0.01, 0.2, (8, 2000, 2))
    dets[..., 0] = rng.integers(0, 20, (8, 2000))
    dn = nd.array(dets)
    env = {"nd": nd, "fmap": fmap, "rois": rois, "roi": roi, "xn": xn, "dn": dn,
           "pool_fb": _fwd_bwd(nd.ROIPooling, fmap, rois, **roi),
           "align_fb": _fwd_bwd(nd._contrib_ROIAlign, fmap, rois, sample_ratio=2, **roi)}
    cases = {
        "ROIPooling forward": "nd.ROIPooling(fmap, rois, **roi).wait_to_read()",
        "ROIPooling forward + backward": "pool_fb()",
        "ROIAlign (sample_ratio 2) forward":
            "nd._contrib_ROIAlign(fmap, rois, sample_ratio=2, **roi).wait_to_read()",
        "ROIAlign (sample_ratio 2) forward + backward": "align_fb()",
        "BilinearResize2D 56 -> 112, align_corners=True":
            "nd._contrib_BilinearResize2D(xn, height=112, width=112).wait_to_read()",
        "BilinearResize2D 56 -> 112, align_corners=False":
            "nd._contrib_BilinearResize2D(xn, height=112, width=112, "
            "align_corners=False).wait_to_read()",
        "AdaptiveAvgPooling2D 56 -> 7":
            "nd._contrib_AdaptiveAvgPooling2D(xn, output_size=7).wait_to_read()",
        "box_nms 8 x 2000, topk 400":
            "nd._contrib_box_nms(dn, overlap_thresh=0.5, id_index=0, topk=400)"
            ".wait_to_read()",
    }
    peers = {}
    if torch is not None:
        F = torch.nn.functional
        xt = torch.from_numpy(x)
        for ac in (True, False):
            want = F.interpolate(xt, size=(112, 112), mode="bilinear",
                                 align_corners=ac).numpy()
            got = nd._contrib_BilinearResize2D(xn, height=112, width=112,
                                               align_corners=ac).asnumpy()
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(
            nd._contrib_AdaptiveAvgPooling2D(xn, output_size=7).asnumpy(),
            F.adaptive_avg_pool2d(xt, 7).numpy(), rtol=1e-4, atol=1e-6)
        env.update(F=F, xt=xt)
        peers = {
            "BilinearResize2D 56 -> 112, align_corners=True":
                "F.interpolate(xt, size=(112, 112), mode='bilinear', align_corners=True)",
            "BilinearResize2D 56 -> 112, align_corners=False":
                "F.interpolate(xt, size=(112, 112), mode='bilinear', align_corners=False)",
            "AdaptiveAvgPooling2D 56 -> 7": "F.adaptive_avg_pool2d(xt, 7)",
        }
    times = bench({**cases, **{"torch " + k: v for k, v in peers.items()}}, env, repeat=5,
                  min_time=0.2)
    for name in cases:
        ours = statistics.median(times[name])
        theirs = "-"
        if name in peers:
            ratio = statistics.median(a / b for a, b in zip(times[name],
                                                           times["torch " + name]))
            theirs = f"{ms(statistics.median(times['torch ' + name]))} ({ratio:.2f}x)"
        line(name, ms(ours), theirs)


if __name__ == "__main__":
    main()
