"""``scipy.misc.imread`` / ``imsave`` / ``imresize`` / ``imrotate`` on Pillow, for ``--py-compat``.

SciPy removed these in 1.2/1.3; TF1-era input pipelines still call them. Each follows the behaviour SciPy 1.1
documented: arrays that are not ``uint8`` are byte-scaled (their minimum to 0, their maximum to 255) before they
become an image, ``imresize`` and ``imrotate`` return ``uint8``, ``imresize``'s size is a percentage (int), a
fraction (float) or ``(height, width)``. They need Pillow; without it, a call says so.

``install()`` adds them to ``scipy.misc`` when a script imports it, add-only (a name the installed SciPy has is
left alone; a SciPy without ``scipy.misc`` gets a module holding only these).
"""

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

import numpy as np

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuUsageError

_INTERPOLATIONS = {"nearest": 0, "lanczos": 1, "bilinear": 2, "bicubic": 3, "cubic": 3}


def _pil():
    try:
        from PIL import Image  # optional: only these functions need Pillow
    except ImportError:
        raise NpuUsageError(
            "scipy.misc's image functions (given back by --py-compat) need Pillow: pip install Pillow"
        ) from None
    return Image


def bytescale(data):
    """``data`` as ``uint8``: unchanged when it is ``uint8``, else its range stretched onto 0..255.

    Args:
      data: an array.
    Returns:
      A ``uint8`` array of the same shape.
    """
    data = np.asarray(data)
    if data.dtype == np.uint8:
        return data
    low, high = float(data.min()), float(data.max())
    scale = 255.0 / ((high - low) or 1.0)
    return (np.clip((data - low) * scale, 0, 255) + 0.5).astype(np.uint8)


def _to_image(array):
    array = np.asarray(array)
    modes = {2: "L", 3: "RGB", 4: "RGBA"}
    if array.ndim == 3 and array.shape[2] in modes and array.shape[2] != 2:
        return _pil().fromarray(bytescale(array), modes[array.shape[2]])
    if array.ndim == 2:
        return _pil().fromarray(bytescale(array), "L")
    raise NpuArgumentError(
        f"scipy.misc: arr must be an image array of shape (H, W), (H, W, 3) or (H, W, 4), given shape {array.shape}"
    )


def _interpolation(interp):
    if interp not in _INTERPOLATIONS:
        raise NpuArgumentError(f"scipy.misc: interp must be one of {sorted(_INTERPOLATIONS)}, given: {interp!r}")
    return _INTERPOLATIONS[interp]


def imread(name, flatten=False, mode=None):
    """Reads an image file into an array (``flatten``: one float32 grey channel; ``mode``: a Pillow mode).

    Raises:
      NpuUsageError: Pillow is not installed.
      OSError: the file cannot be read.
    """
    with _pil().open(name) as image:
        if mode is not None:
            image = image.convert(mode)
        elif flatten:
            image = image.convert("F")
        return np.array(image)


def imsave(name, arr, format=None):  # SciPy's argument name
    """Writes an array as an image file (byte-scaled unless ``uint8``; ``format`` from the name by default).

    Raises:
      NpuUsageError: Pillow is not installed.
      ValueError: ``arr`` is not an image array.
    """
    _to_image(arr).save(name, format=format)


def imresize(arr, size, interp="bilinear", mode=None):
    """Resizes an image array; returns ``uint8``.

    Args:
      arr: an image array.
      size: an int (percent), a float (fraction) or ``(height, width)``.
      interp: "nearest", "lanczos", "bilinear", "bicubic" or "cubic".
      mode: a Pillow mode to convert to first.
    Raises:
      ValueError: a bad ``size`` or ``interp``.
    """
    image = _to_image(arr)
    if mode is not None:
        image = image.convert(mode)
    height, width = np.asarray(arr).shape[:2]
    if isinstance(size, (bool, np.bool_)):
        size = None
    if isinstance(size, (int, np.integer)):
        shape = (int(height * size / 100.0), int(width * size / 100.0))
    elif isinstance(size, (float, np.floating)):
        shape = (int(height * size), int(width * size))
    elif isinstance(size, (tuple, list)) and len(size) >= 2:
        shape = (int(size[0]), int(size[1]))
    else:
        shape = None
    if shape is None or min(shape) < 1:
        raise NpuArgumentError(
            f"scipy.misc.imresize: size must be a percentage (int), a fraction (float) or (height, width) giving "
            f"a non-empty image, given: {size!r}"
        )
    return np.array(image.resize((shape[1], shape[0]), resample=_interpolation(interp)))


def imrotate(arr, angle, interp="bilinear"):
    """Rotates an image array ``angle`` degrees counter-clockwise (same size); returns ``uint8``.

    Raises:
      ValueError: a bad ``interp``.
    """
    return np.array(_to_image(arr).rotate(angle, resample=_interpolation(interp)))


FUNCTIONS = {"imread": imread, "imsave": imsave, "imresize": imresize, "imrotate": imrotate}


class _ScipyMiscFinder(importlib.abc.MetaPathFinder):
    """Adds the functions to ``scipy.misc`` when it is imported, or provides it when the installed SciPy lacks it."""

    def __init__(self, add):
        self._add = add

    def find_spec(self, fullname, path, target=None):
        if fullname != "scipy.misc":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return importlib.util.spec_from_loader(fullname, _Loader(None, self._add))
        spec.loader = _Loader(spec.loader, self._add)
        return spec


class _Loader(importlib.abc.Loader):
    def __init__(self, real, add):
        self._real, self._add = real, add

    def create_module(self, spec):
        return self._real.create_module(spec) if self._real is not None else None

    def exec_module(self, module):
        if self._real is not None:
            self._real.exec_module(module)
        self._add(module)


def install(add):
    """Makes ``scipy.misc`` carry the functions (now if it is imported, else when it is).

    Args:
      add: called with the ``scipy.misc`` module; adds the names it lacks.
    """
    module = sys.modules.get("scipy.misc")
    if isinstance(module, types.ModuleType):
        add(module)
        return
    if not any(isinstance(finder, _ScipyMiscFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _ScipyMiscFinder(add))
