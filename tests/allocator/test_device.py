"""Device specs: the forms as_device takes and the ones it refuses."""

import pytest

from allocator import Device, as_device


@pytest.mark.parametrize("spec, expected", [
    ("cpu", Device("cpu", 0)), ("cpu(0)", Device("cpu", 0)), ("gpu(1)", Device("gpu", 1)),
    ("gpu:1", Device("gpu", 1)), ("cuda:2", Device("gpu", 2)), (" GPU( 3 ) ", Device("gpu", 3)),
    ("cpu_pinned(0)", Device("cpu_pinned", 0)), ("pinned", Device("cpu_pinned", 0)),
    (None, Device("cpu", 0)), (("gpu", 1), Device("gpu", 1)),
])
def test_accepted_specs(spec, expected):
    assert as_device(spec) == expected


@pytest.mark.parametrize("spec", ["cpu(0", "gpu1)", "gpu:1)", "gpu(1)(2)", "gpu()", "gpu:",
                                  "cpu0", "gpu(-1)", "tpu", "tpu(0)", ""])
def test_malformed_string_specs_name_the_spec_and_the_accepted_forms(spec):
    with pytest.raises(ValueError, match=r"device must be a spec such as 'cpu', 'cpu\(0\)', "
                                         r"'gpu\(1\)', 'gpu:1', 'cpu_pinned\(0\)'") as ei:
        as_device(spec)
    assert f"(got {spec!r})" in str(ei.value)


@pytest.mark.parametrize("spec", [3, [1], ("cpu",), ("gpu", 0, 1), 1.5])
def test_specs_of_the_wrong_kind_are_type_errors(spec):
    with pytest.raises(TypeError, match=r"device must be a string such as 'gpu\(1\)', a Device, "
                                        r"a context or a \(kind, id\) tuple") as ei:
        as_device(spec)
    assert f"(got {spec!r})" in str(ei.value)
