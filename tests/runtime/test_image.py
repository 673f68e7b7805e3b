"""runtime.image and gluon.data.vision.transforms against MXNet 1.9.1's outputs
(tests/runtime/data/mxnet191_image.npz, written by mxnet_data_fixtures.py, and
mxnet_rotate_values.npz for the rotations); the image
datasets and ImageIter on files written here.  Decoding needs Pillow (the image extra)."""

import os

import numpy as np
import pytest

from runtime import image, nd, recordio
from runtime import random as mx_random
from runtime import _rng
from runtime import _image_codec
from runtime.gluon import data
from runtime.gluon.data.vision import transforms as T
from tests.runtime.conftest import free_failing_tests
from tests.runtime.mxnet_data_fixtures import IMAGE_SIZES
from tests.runtime.data_makers import DATA, maker

REF = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                           "mxnet191_image.npz"))
IMG = REF["img"]
needs_pillow = pytest.mark.skipif(not _image_codec.available(),
                                  reason="Pillow (the image extra) is not installed")


def _close_to_opencv(got, ref):
    """Equal shape and dtype; uint8 values within 1 of OpenCV's fixed-point rounding."""
    got = got.asnumpy() if isinstance(got, nd.NDArray) else got
    assert got.shape == ref.shape and got.dtype == ref.dtype
    assert np.abs(got.astype(np.int64) - ref.astype(np.int64)).max() <= 1


@pytest.mark.parametrize("interp", range(5))
@pytest.mark.parametrize("w,h", IMAGE_SIZES)
def test_imresize_matches_mxnet(w, h, interp):
    ref = REF[f"resize_{w}_{h}_{interp}"]
    got = image.imresize(nd.array(IMG, dtype=np.uint8), w, h, interp=interp)
    if interp == 0:
        np.testing.assert_array_equal(got.asnumpy(), ref)
    _close_to_opencv(got, ref)


def test_resize_short_and_center_crop_match_mxnet():
    x = nd.array(IMG, dtype=np.uint8)
    _close_to_opencv(image.resize_short(x, 8), REF["resize_short"])
    crop, box = image.center_crop(x, (9, 7))
    assert box == (4, 3, 9, 7)
    np.testing.assert_array_equal(crop.asnumpy(), REF["center_crop"])


def test_image_functions_reject_bad_arguments():
    x = nd.array(IMG, dtype=np.uint8)
    with pytest.raises(ValueError, match=r"imresize: w must be a positive integer \(got 0\)"):
        image.imresize(x, 0, 3)
    with pytest.raises(ValueError, match=r"interp must be one of"):
        image.imresize(x, 3, 3, interp=9)
    with pytest.raises(ValueError, match=r"must be an HxWxC image \(got shape \(13, 17\)\)"):
        image.imresize(nd.array(IMG[:, :, 0]), 3, 3)
    with pytest.raises(ValueError, match="must lie inside the image"):
        image.fixed_crop(x, 10, 0, 9, 3)


def test_transforms_match_mxnet():
    x = nd.array(IMG, dtype=np.uint8)
    got = T.Resize((9, 7))(nd.array(REF["imgf"])).asnumpy()
    np.testing.assert_allclose(got, REF["T_resize_f"], rtol=1e-5, atol=1e-3)
    _close_to_opencv(T.Resize(8, keep_ratio=True)(x), REF["T_resize_keep"])
    np.testing.assert_array_equal(T.CenterCrop((9, 7))(x).asnumpy(), REF["T_center"])
    _close_to_opencv(T.CenterCrop((20, 20))(x), REF["T_center_big"])
    np.testing.assert_array_equal(T.ToTensor()(x).asnumpy(), REF["T_tensor"])
    norm = T.Compose([T.ToTensor(), T.Normalize((0.1, 0.2, 0.3), (0.5, 0.6, 0.7))])
    np.testing.assert_allclose(norm(x).asnumpy(), REF["T_norm"], rtol=1e-6, atol=1e-6)


def test_to_tensor_and_resize_on_batches():
    batch = nd.array(np.stack([IMG, IMG[::-1]]), dtype=np.uint8)
    t = T.ToTensor()(batch)
    assert t.shape == (2, 3, 13, 17)
    np.testing.assert_array_equal(t.asnumpy()[1], IMG[::-1].transpose(2, 0, 1) / np.float32(255))
    r = T.Resize((5, 4))(batch)
    assert r.shape == (2, 4, 5, 3)
    np.testing.assert_array_equal(r.asnumpy()[0], image.imresize(IMG, 5, 4, 1).asnumpy())


def test_random_transforms_follow_the_runtime_seed():
    x = nd.array(IMG, dtype=np.uint8)
    flips = []
    mx_random.seed(0)
    for _ in range(40):
        y = T.RandomFlipLeftRight()(x).asnumpy()
        assert (y == IMG).all() or (y == IMG[:, ::-1]).all()
        flips.append(bool((y == IMG[:, ::-1]).all()))
    assert 5 < sum(flips) < 35
    mx_random.seed(1)
    a = T.RandomResizedCrop((8, 6))(x).asnumpy()
    mx_random.seed(1)
    b = T.RandomResizedCrop((8, 6))(x).asnumpy()
    assert a.shape == (6, 8, 3) and (a == b).all()
    assert T.Cast("float16")(x).dtype == np.float16
    c = T.CropResize(2, 3, 6, 4)(x)
    np.testing.assert_array_equal(c.asnumpy(), IMG[3:7, 2:8])
    assert T.CropResize(2, 3, 6, 4, size=(3, 2))(x).shape == (2, 3, 3)


def test_normalize_rejects_a_wrong_number_of_channels():
    with pytest.raises(ValueError, match="mean must hold 1 or 3 values for 3 channels"):
        T.Normalize((0.1, 0.2))(T.ToTensor()(nd.array(IMG, dtype=np.uint8)))
    with pytest.raises(TypeError, match="apply ToTensor first"):
        T.Normalize(0.5)(nd.array(IMG.transpose(2, 0, 1), dtype=np.uint8))


@needs_pillow
def test_imdecode_imread_round_trip_png(tmp_path):
    png = image.imencode(IMG, ".png")
    got = image.imdecode(png)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got.asnumpy(), IMG)
    np.testing.assert_array_equal(image.imdecode(png, to_rgb=False).asnumpy(), IMG[:, :, ::-1])
    grey = image.imdecode(png, flag=0)
    assert grey.shape == (13, 17, 1)
    ref = (IMG.astype(np.float64) @ [0.299, 0.587, 0.114])
    assert np.abs(grey.asnumpy()[:, :, 0] - ref).max() <= 1
    path = tmp_path / "a.png"
    path.write_bytes(png)
    np.testing.assert_array_equal(image.imread(str(path)).asnumpy(), IMG)
    with pytest.raises(ValueError, match="buf must hold an image file Pillow can decode"):
        image.imdecode(b"not an image")
    with pytest.raises(FileNotFoundError, match="no image file at"):
        image.imread(str(tmp_path / "none.png"))


@needs_pillow
def test_image_record_dataset_and_loader(tmp_path):
    rec, idx = str(tmp_path / "im.rec"), str(tmp_path / "im.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    imgs = [np.roll(IMG, i, axis=1) for i in range(5)]
    for i, im in enumerate(imgs):
        w.write_idx(i, recordio.pack_img((0, float(i), i, 0), im, img_fmt=".png"))
    w.close()
    ds = data.vision.ImageRecordDataset(rec)
    assert len(ds) == 5
    img, label = ds[2]
    np.testing.assert_array_equal(img.asnumpy(), imgs[2])
    assert label == 2.0
    header, decoded = recordio.unpack_img(ds._record.read_idx(0))
    assert header.label == 0.0
    np.testing.assert_array_equal(decoded, imgs[0])
    for workers in (0, 2):
        loader = data.DataLoader(ds.transform_first(T.ToTensor()), batch_size=1,
                                 num_workers=workers)
        for i, (x, y) in enumerate(loader):
            assert x.shape == (1, 3, 13, 17) and y.asscalar() == i
        loader.close()
    it = image.ImageIter(2, (3, 7, 9), path_imgrec=rec, path_imgidx=idx)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    assert batches[0].data[0].shape == (2, 3, 7, 9)
    np.testing.assert_array_equal(batches[1].label[0].asnumpy(), [2, 3])
    np.testing.assert_array_equal(batches[0].data[0].asnumpy()[1],
                                  image.center_crop(imgs[1], (9, 7), 2)[0].asnumpy()
                                  .transpose(2, 0, 1))


@needs_pillow
def test_image_folder_dataset(tmp_path):
    for cls, n in (("cat", 2), ("dog", 3)):
        (tmp_path / cls).mkdir()
        for i in range(n):
            (tmp_path / cls / f"{i}.png").write_bytes(image.imencode(IMG + i, ".png"))
    (tmp_path / "dog" / "notes.txt").write_text("x")
    with pytest.warns(UserWarning, match="ignoring 'notes.txt'"):
        ds = data.vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"] and len(ds) == 5
    img, label = ds[3]
    assert label == 1
    np.testing.assert_array_equal(img.asnumpy(), IMG + 1)
    lst = tmp_path / "list.lst"
    lst.write_text("".join(f"{i}\t{lab}\t{p}\n" for i, (p, lab) in enumerate(ds.items)))
    it = image.ImageIter(5, (3, 13, 17), path_imglist=str(lst), path_root="")
    b = next(it)
    np.testing.assert_array_equal(b.label[0].asnumpy(), [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(b.data[0].asnumpy()[4], (IMG + 2).transpose(2, 0, 1))


def test_pillow_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(_image_codec, "_Image", None)
    with pytest.raises(ImportError, match=r"imdecode needs Pillow .* pip install 'ndrt\[image\]'"):
        image.imdecode(b"\x89PNG")


def test_colour_jitter_blends_with_its_target():
    x = nd.array(IMG, dtype=np.uint8)
    grey = IMG.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    for cls, target in ((T.RandomBrightness, np.float32(0)),
                        (T.RandomContrast, np.float32(grey.mean())),
                        (T.RandomSaturation, grey[..., None])):
        mx_random.seed(4)
        alpha = 1 + _rng.generator().uniform(-0.3, 0.3)
        mx_random.seed(4)
        got = cls(0.3)(x).asnumpy()
        ref = np.clip(np.floor(IMG.astype(np.float32) * np.float32(alpha)
                               + target * np.float32(1 - alpha) + 0.5), 0, 255)
        assert np.abs(got.astype(int) - ref.astype(int)).max() <= 1
    with pytest.raises(ValueError, match=r"RandomContrast: the strength must be >= 0"):
        T.RandomContrast(-1)


def test_hue_jitter_keeps_grey_and_brightness():
    # a hue rotation in YIQ leaves Y (the grey level) alone and maps grey pixels to
    # themselves, up to the rounding of the matrices' published 3 decimals; at hue 0 it
    # is the identity
    x = nd.array(IMG.astype(np.float32))
    mx_random.seed(2)
    y = T.RandomHue(0.5)(x).asnumpy()
    weights = np.array([0.299, 0.587, 0.114], np.float32)
    np.testing.assert_allclose(y @ weights, IMG.astype(np.float32) @ weights, atol=0.5)
    grey = nd.array(np.full((2, 2, 3), 100, np.float32))
    np.testing.assert_allclose(T.RandomHue(0.5)(grey).asnumpy(), 100, atol=0.5)
    np.testing.assert_allclose(T.RandomHue(0)(x).asnumpy(), IMG, atol=1.0)
    mx_random.seed(3)
    jit = T.RandomColorJitter(brightness=0.2, hue=0.1)(nd.array(IMG, dtype=np.uint8))
    assert jit.shape == IMG.shape and jit.dtype == np.uint8
    never = T.RandomApply(T.RandomFlipLeftRight(), p=0)
    np.testing.assert_array_equal(never(x).asnumpy(), IMG)



# -- rotation (tests/runtime/data/mxnet_rotate_values.npz, written by
# make_mxnet_rotate_values.py there with MXNet 1.9.1, from its inputs()) --------------------

def _rotate_fixture():
    return maker("make_mxnet_rotate_values"), np.load(DATA / "mxnet_rotate_values.npz")


ROT, ROT_REF = _rotate_fixture()


@pytest.mark.parametrize("case", ROT.CASES, ids=lambda c: c[0])
def test_imrotate_matches_mxnet(case):
    key, angle, zoom_in, zoom_out, batched = case
    single, batch = ROT.inputs()
    src = nd.array(batch if batched else single)
    deg = nd.array(angle) if isinstance(angle, list) else angle
    got = image.imrotate(src, deg, zoom_in=zoom_in, zoom_out=zoom_out)
    assert got.shape == src.shape and got.dtype == np.float32
    np.testing.assert_allclose(got.asnumpy(), ROT_REF[key], rtol=0, atol=2e-6)
    if not batched and not (zoom_in or zoom_out):
        np.testing.assert_allclose(T.Rotate(angle)(src).asnumpy(), ROT_REF[key], atol=2e-6)


def test_rotate_by_90_degrees_of_a_square_is_numpy_rot90():
    a = np.arange(2 * 5 * 5, dtype=np.float32).reshape(2, 5, 5)
    got = image.imrotate(nd.array(a), 90.0).asnumpy()
    np.testing.assert_allclose(got, np.rot90(a, k=1, axes=(1, 2)), atol=1e-4)
    np.testing.assert_allclose(image.imrotate(nd.array(a), 0.0).asnumpy(), a, atol=1e-5)


def test_random_rotation_draws_its_angles_from_runtime_random():
    single, batch = ROT.inputs()
    t = T.RandomRotation((-30, 40), zoom_out=True)
    mx_random.seed(5)
    got = t(nd.array(batch)).asnumpy()
    mx_random.seed(5)
    rng = _rng.generator()
    rng.random()                                  # the draw that decides to rotate
    deg = rng.uniform(-30, 40, size=2)
    want = image.imrotate(nd.array(batch), nd.array(deg), zoom_out=True).asnumpy()
    np.testing.assert_array_equal(got, want)
    assert not np.allclose(got, batch)
    never = T.RandomRotation((-30, 40), rotate_with_proba=0)
    x = nd.array(single)
    assert never(x) is x


@pytest.mark.parametrize("make,err,match", [
    (lambda: T.Rotate(30, zoom_in=True, zoom_out=True), ValueError,
     r"Rotate: zoom_in and zoom_out must not both be True"),
    (lambda: T.Rotate("30"), TypeError, r"Rotate: rotation_degrees must be a number"),
    (lambda: T.RandomRotation((40, -30)), ValueError,
     r"RandomRotation: angle_limits must be ordered, lower < upper \(got \(40, -30\)\)"),
    (lambda: T.RandomRotation(30), TypeError,
     r"RandomRotation: angle_limits must be \(lower, upper\) degrees \(got 30\)"),
    (lambda: T.RandomRotation((0, 1), rotate_with_proba=1.5), ValueError,
     r"RandomRotation: rotate_with_proba must be a probability in \[0, 1\] \(got 1.5\)"),
])
def test_rotation_transforms_refuse_bad_arguments(make, err, match):
    with pytest.raises(err, match=match):
        make()


def test_imrotate_refuses_bad_input():
    with pytest.raises(TypeError, match=r"imrotate: src must be float32, a CxHxW tensor "
                       r"such as ToTensor gives \(got uint8\)"):
        T.Rotate(10)(nd.array(IMG, dtype="uint8"))
    with pytest.raises(ValueError, match=r"imrotate: src must be CxHxW or NxCxHxW \(got "
                       r"shape \(4, 4\)\)"):
        image.imrotate(nd.zeros((4, 4)), 10.0)
    with pytest.raises(ValueError, match=r"imrotate: rotation_degrees must hold one angle "
                       r"per image \(2\) \(got 3\)"):
        image.imrotate(nd.zeros((2, 1, 4, 4)), nd.array([1, 2, 3]))
    with pytest.raises(TypeError, match=r"imrotate: rotation_degrees must be a number for "
                       r"one image"):
        image.imrotate(nd.zeros((1, 4, 4)), nd.array([1.0]))


def test_copy_make_border_follows_opencvs_border_types():
    row = np.arange(1, 9, dtype=np.uint8)               # "abcdefgh" as 1..8
    img = np.stack([row, row + 10]).reshape(2, 8, 1)    # 2 rows, 8 columns, 1 channel
    x = nd.array(img, dtype=np.uint8)
    # OpenCV's documented borders of "abcdefgh" with 3 columns each side
    want = {1: [1, 1, 1, *range(1, 9), 8, 8, 8],       # aaa|abcdefgh|hhh
            2: [3, 2, 1, *range(1, 9), 8, 7, 6],       # cba|abcdefgh|hgf
            3: [6, 7, 8, *range(1, 9), 1, 2, 3],       # fgh|abcdefgh|abc
            4: [4, 3, 2, *range(1, 9), 7, 6, 5]}       # dcb|abcdefgh|gfe
    for border, cols in want.items():
        got = image.copyMakeBorder(x, 0, 0, 3, 3, type=border).asnumpy()
        assert got.dtype == np.uint8 and got.shape == (2, 14, 1)
        np.testing.assert_array_equal(got[0, :, 0], cols)
        np.testing.assert_array_equal(got[1, :, 0], np.array(cols) + 10)
    const = image.copyMakeBorder(nd.array(IMG, dtype=np.uint8), 2, 1, 0, 4, value=300.0)
    want_const = np.pad(IMG, ((2, 1), (0, 4), (0, 0)), constant_values=255)   # saturated
    np.testing.assert_array_equal(const.asnumpy(), want_const)
    per_channel = image.copyMakeBorder(nd.array(IMG, dtype=np.uint8), 1, 1, 1, 1,
                                       values=(10, 20, 30)).asnumpy()
    np.testing.assert_array_equal(per_channel[0, 0], [10, 20, 30])
    np.testing.assert_array_equal(per_channel[1:-1, 1:-1], IMG)
    with pytest.raises(ValueError, match=r"^copyMakeBorder: type must be one of"):
        image.copyMakeBorder(x, 1, 1, 1, 1, type=5)
    with pytest.raises(ValueError, match=r"^copyMakeBorder: left must be an int >= 0 "
                                         r"\(got -1\)"):
        image.copyMakeBorder(x, 1, 1, -1, 1)
    with pytest.raises(ValueError, match=r"^copyMakeBorder: values must hold one value per "
                                         r"channel \(3\) \(got 2\)"):
        image.copyMakeBorder(nd.array(IMG, dtype=np.uint8), 1, 1, 1, 1, values=(1, 2))


@needs_pillow
@pytest.mark.parametrize("fmt", [".png", ".jpg"])
def test_unpack_img_keeps_a_grey_image_grey_by_default(fmt):
    # MXNet's iscolor=-1 is OpenCV's IMREAD_UNCHANGED: a grey record decodes to HxW
    # (its data tutorial packs np.ones((3, 3, 1)) and gets a 3x3 array back)
    grey = np.full((3, 3, 1), 1, np.uint8)
    s = recordio.pack_img(recordio.IRHeader(0, 1.0, 0, 0), grey, quality=100, img_fmt=fmt)
    header, img = recordio.unpack_img(s)
    assert header.label == 1.0
    np.testing.assert_array_equal(img, np.ones((3, 3), np.uint8))
    assert recordio.unpack_img(s, iscolor=1)[1].shape == (3, 3, 3)
    assert recordio.unpack_img(s, iscolor=0)[1].shape == (3, 3)
    colour = recordio.pack_img(recordio.IRHeader(0, 1.0, 0, 0), IMG, img_fmt=".png")
    np.testing.assert_array_equal(recordio.unpack_img(colour)[1], IMG)


free_failing_tests(globals())


# -- augmenters ------------------------------------------------------------------------------

def _names(augs):
    return [type(a).__name__ for a in augs]


def test_create_augmenter_lists_mxnets_augmenters_in_mxnets_order():
    # MXNet 1.9.1's lists for these arguments
    assert _names(image.CreateAugmenter((3, 4, 4))) == ["CenterCropAug", "CastAug"]
    full = image.CreateAugmenter((3, 4, 4), resize=6, rand_crop=True, rand_resize=True,
                                 rand_mirror=True, mean=True, std=True, brightness=0.1,
                                 contrast=0.1, saturation=0.1, hue=0.1, pca_noise=0.1,
                                 rand_gray=0.1)
    assert _names(full) == ["ResizeAug", "RandomSizedCropAug", "HorizontalFlipAug",
                            "CastAug", "ColorJitterAug", "HueJitterAug", "LightingAug",
                            "RandomGrayAug", "ColorNormalizeAug"]
    assert _names(image.CreateAugmenter((3, 4, 4), rand_crop=True))[0] == "RandomCropAug"
    assert image.ResizeAug(6).dumps() == '["resizeaug", {"size": 6, "interp": 2}]'
    assert image.CastAug().dumps() == '["castaug", {"type": "float32"}]'
    assert image.ColorNormalizeAug(nd.array([1, 2, 3]), None).dumps() == \
        '["colornormalizeaug", {"mean": [1.0, 2.0, 3.0], "std": null}]'
    assert image.ColorJitterAug(0.1, 0, 0.2).dumps() == [
        "colorjitteraug", ['["brightnessjitteraug", {"brightness": 0.1}]',
                           '["saturationjitteraug", {"saturation": 0.2}]']]
    with pytest.raises(ValueError, match="CreateAugmenter: rand_resize needs rand_crop"):
        image.CreateAugmenter((3, 4, 4), rand_resize=True)
    with pytest.raises(ValueError, match=r"CreateAugmenter: mean must be True or an array"):
        image.CreateAugmenter((3, 4, 4), mean=[1, 2])


def test_augmenters_compute_their_transformations():
    img = np.arange(4 * 5 * 3, dtype=np.float32).reshape(4, 5, 3)
    x = nd.array(img)
    assert image.ForceResizeAug((3, 2))(x).shape == (2, 3, 3)
    assert image.ResizeAug(2)(x).shape == (2, 2, 3)
    assert image.CenterCropAug((3, 2))(x).shape == (2, 3, 3)
    assert image.RandomCropAug((3, 2))(x).shape == (2, 3, 3)
    assert image.RandomSizedCropAug((3, 2), 0.5, (0.75, 1.33))(x).shape == (2, 3, 3)
    mean, std = np.array([1, 2, 3], np.float32), np.array([2, 2, 4], np.float32)
    np.testing.assert_allclose(image.ColorNormalizeAug(mean, std)(x).asnumpy(),
                               (img - mean) / std)
    np.testing.assert_allclose(image.RandomGrayAug(1.0)(x).asnumpy(),
                               img @ np.array([[0.21] * 3, [0.72] * 3, [0.07] * 3]),
                               rtol=1e-6)
    np.testing.assert_array_equal(image.RandomGrayAug(0.0)(x).asnumpy(), img)
    np.testing.assert_array_equal(image.HorizontalFlipAug(1.0)(x).asnumpy(), img[:, ::-1])
    np.testing.assert_array_equal(image.HorizontalFlipAug(0.0)(x).asnumpy(), img)
    assert image.CastAug("float16")(nd.array(img, dtype=np.uint8)).dtype == np.float16
    np.testing.assert_allclose(image.LightingAug(0.0, (1, 1, 1), np.eye(3))(x).asnumpy(), img)
    # a grey image keeps its colour under contrast, saturation and hue jitter
    grey = nd.array(np.full((3, 4, 3), 100.0, np.float32))
    for aug in (image.ContrastJitterAug(0.5), image.SaturationJitterAug(0.5),
                image.HueJitterAug(0.4)):
        np.testing.assert_allclose(aug(grey).asnumpy(), 100.0, rtol=5e-3)
    mx_random.seed(2)
    alpha = 1 + _rng.generator().uniform(-0.4, 0.4)
    mx_random.seed(2)
    np.testing.assert_allclose(image.BrightnessJitterAug(0.4)(x).asnumpy(), img * alpha,
                               rtol=1e-6)
    mx_random.seed(2)
    alpha = 1 + _rng.generator().uniform(-0.4, 0.4)
    luma = (img * np.array([0.299, 0.587, 0.114], np.float32)).sum(axis=2, keepdims=True)
    mx_random.seed(2)
    np.testing.assert_allclose(image.SaturationJitterAug(0.4)(x).asnumpy(),
                               img * alpha + luma * (1 - alpha), rtol=1e-5)
    seq = image.SequentialAug([image.CastAug(), image.HorizontalFlipAug(1.0)])
    np.testing.assert_array_equal(seq(nd.array(img, dtype=np.uint8)).asnumpy(), img[:, ::-1])
    assert sorted(image.RandomOrderAug([image.CastAug(), image.CastAug()])(x).shape) == \
        [3, 4, 5]


@needs_pillow
def test_image_iter_builds_its_augmenters_from_keyword_arguments(tmp_path):
    rec, idx = str(tmp_path / "a.rec"), str(tmp_path / "a.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(3):
        w.write_idx(i, recordio.pack_img((0, float(i), i, 0), IMG + i, img_fmt=".png"))
    w.close()
    it = image.ImageIter(3, (3, 6, 8), path_imgrec=rec, path_imgidx=idx, resize=9,
                         mean=True, std=True)
    assert _names(it.auglist) == ["ResizeAug", "CenterCropAug", "CastAug",
                                  "ColorNormalizeAug"]
    got = next(it).data[0].asnumpy()[2]
    want = image.center_crop(image.resize_short(IMG + 2, 9), (8, 6))[0].asnumpy()
    want = (want - np.array([123.68, 116.28, 103.53])) / np.array([58.395, 57.12, 57.375])
    np.testing.assert_allclose(got, want.transpose(2, 0, 1), rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'rand_crap'"):
        image.ImageIter(3, (3, 6, 8), path_imgrec=rec, path_imgidx=idx, rand_crap=True)
