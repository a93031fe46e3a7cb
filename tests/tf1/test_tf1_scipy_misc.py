"""``--py-compat``'s ``scipy.misc.imread/imsave/imresize/imrotate`` on Pillow: SciPy 1.1's documented behaviour
(byte-scaling, percent/fraction/shape sizes, uint8 results) and the names appearing in ``scipy.misc`` for a script
run with ``--py-compat``, logged once. SciPy and Pillow come with the ``test`` extra."""

import os
import subprocess
import sys

import numpy as np
import pytest
from helpers.paths import REPO_ROOT, TESTS_DIR

from npu_bridge.core.runtime import scipy_integrate, scipy_misc
from npu_bridge.core.runtime.errors import NpuArgumentError


def test_bytescale_stretches_the_range_and_keeps_uint8():
    data = np.array([[-1.0, 0.0], [1.0, 3.0]])
    expected = np.floor((data + 1.0) * 255.0 / 4.0 + 0.5).astype(np.uint8)
    np.testing.assert_array_equal(scipy_misc.bytescale(data), expected)
    assert scipy_misc.bytescale(np.full((2, 2), 7.0)).tolist() == [[0, 0], [0, 0]]
    same = np.array([[3, 250]], np.uint8)
    assert scipy_misc.bytescale(same) is same


def test_imsave_then_imread_round_trips_and_flatten_gives_grey_floats(tmp_path):
    rgb = (np.arange(4 * 5 * 3).reshape(4, 5, 3) * 4).astype(np.uint8)
    path = str(tmp_path / "image.png")
    scipy_misc.imsave(path, rgb)
    np.testing.assert_array_equal(scipy_misc.imread(path), rgb)
    grey = scipy_misc.imread(path, flatten=True)
    assert grey.dtype == np.float32 and grey.shape == (4, 5)
    luminance = rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114
    np.testing.assert_allclose(grey, luminance, atol=0.6)
    assert scipy_misc.imread(path, mode="L").shape == (4, 5)


def test_imresize_sizes_and_interpolations():
    image = (np.arange(16).reshape(4, 4) * 16).astype(np.uint8)
    assert scipy_misc.imresize(image, 50).shape == (2, 2)  # percent
    assert scipy_misc.imresize(image, 1.5).shape == (6, 6)  # fraction
    doubled = scipy_misc.imresize(image, (8, 6), interp="nearest")
    assert doubled.shape == (8, 6) and doubled.dtype == np.uint8
    np.testing.assert_array_equal(scipy_misc.imresize(image, (8, 8), interp="nearest"), image.repeat(2, 0).repeat(2, 1))
    floats = scipy_misc.imresize(np.array([[0.0, 1.0], [2.0, 4.0]]), (2, 2), interp="nearest")
    np.testing.assert_array_equal(floats, [[0, 64], [128, 255]])  # byte-scaled first, as SciPy did
    with pytest.raises(NpuArgumentError, match="interp must be one of"):
        scipy_misc.imresize(image, 50, interp="area")
    with pytest.raises(NpuArgumentError, match="imresize: size must be .* given: 0"):
        scipy_misc.imresize(image, 0)
    with pytest.raises(NpuArgumentError, match=r"given shape \(4,\)"):
        scipy_misc.imresize(np.zeros(4), 50)


def test_imrotate_quarter_turn_is_numpy_rot90():
    image = (np.arange(25).reshape(5, 5) * 10).astype(np.uint8)
    np.testing.assert_array_equal(scipy_misc.imrotate(image, 90, interp="nearest"), np.rot90(image))


SCRIPT = """
import scipy.misc
from scipy.misc import imread, imresize
import numpy as np
scipy.misc.imsave("a.png", np.full((6, 6, 3), 200, np.uint8))
print("SHAPE", imresize(imread("a.png"), 50).shape, imresize(imread("a.png"), (3, 2)).shape)
"""


@pytest.mark.timeout(120)
def test_a_script_gets_the_functions_in_scipy_misc_with_py_compat(tmp_path):
    (tmp_path / "old.py").write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]), TF_CPP_MIN_LOG_LEVEL="2")

    def run(*flags):
        argv = [sys.executable, "-m", "npu_bridge.tf1", *flags, "old.py"]
        return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=110, check=False)

    plain = run()
    assert plain.returncode != 0 and "imread" in plain.stderr
    result = run("--py-compat")
    assert result.returncode == 0, result.stderr
    assert "SHAPE (3, 3, 3) (3, 2, 3)" in result.stdout
    assert result.stderr.count("scipy.misc.imresize no longer exists; --py-compat provides it") == 1


MOVED_SCRIPT = """
from scipy.sparse.linalg.eigen.arpack import eigsh
from scipy.misc import comb, logsumexp
from scipy.integrate import simps, trapz, cumtrapz
import numpy as np
import scipy.sparse
values = eigsh(scipy.sparse.diags([1.0, 2.0, 3.0]), k=1)[0]
print("MOVED", np.round(values, 3).tolist(), comb(5, 2), round(float(logsumexp([0.0, 0.0])), 4))
cubes = np.arange(6.0) ** 3
print("INTEGRATE", simps(cubes), trapz(cubes), cumtrapz(cubes)[-1])
"""


@pytest.mark.timeout(120)
def test_a_script_gets_scipys_moved_modules_and_special_functions_with_py_compat(tmp_path):
    # graph models of the zoo (GAT, LGCN, TextING) import eigsh from the path SciPy 1.8 made private
    (tmp_path / "moved.py").write_text(MOVED_SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]), TF_CPP_MIN_LOG_LEVEL="2")
    argv = [sys.executable, "-m", "npu_bridge.tf1", "--py-compat", "moved.py"]
    result = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=110, check=False)
    assert result.returncode == 0, result.stderr
    assert "MOVED [3.0] 10.0 0.6931" in result.stdout
    assert "INTEGRATE 157.5 162.5 162.5" in result.stdout
    assert "scipy.integrate.simps no longer exists; --py-compat provides it" in result.stderr
    told = "scipy.sparse.linalg.eigen.arpack no longer exists; --py-compat provides it (write scipy.sparse.linalg"
    assert result.stderr.count(told) == 1
    assert (
        "scipy.misc.comb no longer exists; --py-compat provides it (write scipy.special.comb instead)" in result.stderr
    )


def test_simps_integrates_as_scipy_1_10_did_for_even_and_odd_sample_counts():
    from scipy.integrate import simpson

    cubes = np.arange(6.0) ** 3  # x**3 at 0..5: Simpson's rule is exact on every pair of intervals
    # even count: Simpson on [0, 4] (64) + a trapezoid on [4, 5] (94.5), and a trapezoid on [0, 1] (0.5) + [1, 5] (156)
    assert scipy_integrate.simps(cubes, even="first") == pytest.approx(158.5)
    assert scipy_integrate.simps(cubes, even="last") == pytest.approx(156.5)
    assert scipy_integrate.simps(cubes) == pytest.approx(157.5)  # "avg", the default then
    assert scipy_integrate.simps(cubes, even="simpson") == pytest.approx(simpson(cubes)) != pytest.approx(157.5)
    assert scipy_integrate.simps(cubes[:5]) == pytest.approx(64.0)  # odd count: Simpson's rule itself
    spaced = scipy_integrate.simps(np.stack([cubes, 2 * cubes]), x=np.arange(6.0) * 2, axis=1)
    np.testing.assert_allclose(spaced, [315.0, 630.0])
    assert scipy_integrate.simps([1.0, 3.0]) == pytest.approx(2.0) and scipy_integrate.simps([5.0]) == 0.0
    with pytest.raises(NpuArgumentError, match="even='mean' must be one of avg, first, last, simpson"):
        scipy_integrate.simps(cubes, even="mean")
