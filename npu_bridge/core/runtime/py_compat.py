"""Python-level compatibility for scripts of TensorFlow 1.x and 2.6 days, opt in in both modes (``python -m
npu_bridge.tf1 --py-compat`` / ``NPU_BRIDGE_TF1_PY_COMPAT=1``, ``python -m npu_bridge.tf2 --py-compat`` /
``NPU_BRIDGE_TF2_PY_COMPAT=1``).

Names the model zoo's scripts use that Python 3.11 and NumPy 2 removed, each given back where it was, and each
logged once when a script first uses it (they change modules every library in the process shares, which is why the
patches are opt-in):

- ``time.clock`` -> ``time.perf_counter``;
- NumPy 1.x aliases (``np.int``, ``np.float``, ``np.object``, ``np.asscalar``, ``np.NaN``, ``np.Inf``,
  ``np.float_``, ``np.product``, ``np.in1d``, ``np.sctypes``, ...; ``NUMPY``), and the constants
  ``numpy.core.numeric`` defined (``from numpy.core.numeric import Inf``; ``NUMPY_CORE_NUMERIC``);
- ``collections.Iterable`` and the other ABCs, from ``collections.abc``;
- ``inspect.getargspec`` (``args, varargs, keywords, defaults`` from ``inspect.getfullargspec``);
- ``scipy.misc.imread`` / ``imsave`` / ``imresize`` / ``imrotate`` on Pillow (``scipy_misc``), and
  ``scipy.misc.comb`` / ``factorial`` / ``logsumexp`` from ``scipy.special``, when SciPy is installed;
- ``scipy.integrate.simps`` (as SciPy 1.10 computed it), ``trapz`` and ``cumtrapz`` (``scipy_integrate``);
- SciPy modules made private, under their old paths (``scipy_paths``: ``scipy.sparse.linalg.eigen.arpack``);
- NumPy's functions at SciPy's top level (``from scipy import interp``), which SciPy up to 1.11 re-exported
  (NumPy's public names that are neither SciPy's own nor one of its submodules);
- ``np.stack`` / ``vstack`` / ``hstack`` / ``dstack`` / ``column_stack`` of an iterator, which NumPy 1.24 refused
  (``numpy_iterator_stack``);
- ``yaml.load(stream)`` / ``yaml.load_all(stream)`` without a Loader, as PyYAML 5.1-5.4 read it (``FullLoader``);
  PyYAML 6 made the Loader a required argument, so a call that names one is unchanged.

Nothing that exists is replaced: a name NumPy still has is left alone.
"""

import collections
import collections.abc
import functools
import inspect
import time

import numpy as np

from npu_bridge.core.runtime import after_import, log, numpy_iterator_stack, scipy_integrate, scipy_misc, scipy_paths


class _CastTable:
    """NumPy 1.x's ``np.cast``: ``np.cast[dtype](x)`` is ``x`` as an array of ``dtype``."""

    def __getitem__(self, dtype):
        return lambda x: np.asarray(x).astype(dtype)


# name -> (its value, what to write instead)
NUMPY = {
    "int": (int, "int"),
    "float": (float, "float"),
    "complex": (complex, "complex"),
    "object": (object, "object"),
    "str": (str, "str"),
    "unicode": (str, "str"),
    "asscalar": (lambda a: np.asarray(a).item(), "a.item()"),
    "NaN": (np.nan, "np.nan"),
    "NAN": (np.nan, "np.nan"),
    "Inf": (np.inf, "np.inf"),
    "Infinity": (np.inf, "np.inf"),
    "infty": (np.inf, "np.inf"),
    "PINF": (np.inf, "np.inf"),
    "NINF": (-np.inf, "-np.inf"),
    "float_": (np.float64, "np.float64"),
    "complex_": (np.complex128, "np.complex128"),
    "int0": (np.intp, "np.intp"),
    "uint0": (np.uintp, "np.uintp"),
    "bool8": (np.bool_, "np.bool_"),
    "product": (np.prod, "np.prod"),
    "cumproduct": (np.cumprod, "np.cumprod"),
    "sometrue": (np.any, "np.any"),
    "alltrue": (np.all, "np.all"),
    "round_": (np.round, "np.round"),
    "mat": (np.asmatrix, "np.asmatrix"),
    "cast": (_CastTable(), "np.asarray(x).astype(dtype)"),
    "string_": (np.bytes_, "np.bytes_"),
    "unicode_": (np.str_, "np.str_"),
    "in1d": (lambda a, b, *args, **kwargs: np.isin(np.asarray(a).ravel(), b, *args, **kwargs), "np.isin"),
    "trapz": (getattr(np, "trapezoid", None), "np.trapezoid"),
    "sctypes": (
        {
            "int": [np.int8, np.int16, np.int32, np.int64],
            "uint": [np.uint8, np.uint16, np.uint32, np.uint64],
            "float": [np.float16, np.float32, np.float64, np.longdouble],
            "complex": [np.complex64, np.complex128, np.clongdouble],
            "others": [bool, object, bytes, str, np.void],
        },
        "the dtypes themselves, e.g. [np.float16, np.float32, np.float64]",
    ),
}
# the constants NumPy 1.x's numpy.core.numeric defined that NumPy 2's numpy.core.numeric (a view of numpy._core's)
# lacks; the others it had (inf, nan, NAN, PINF, False_, True_) it still has
NUMPY_CORE_NUMERIC = ("Inf", "Infinity", "infty", "NaN", "NINF")
ABCS = (
    "Iterable",
    "Iterator",
    "Mapping",
    "MutableMapping",
    "Sequence",
    "MutableSequence",
    "Set",
    "MutableSet",
    "Callable",
    "Hashable",
    "Sized",
    "Container",
    "Generator",
    "Awaitable",
    "Coroutine",
    "KeysView",
    "ItemsView",
    "ValuesView",
    "MappingView",
)
ArgSpec = collections.namedtuple("ArgSpec", ["args", "varargs", "keywords", "defaults"])

_told = set()
_installed = []


def _tell(name, replacement):
    if name not in _told:
        _told.add(name)
        log.logger.warning("%s no longer exists; --py-compat provides it (write %s instead)", name, replacement)


def _getargspec(function):
    spec = inspect.getfullargspec(function)
    return ArgSpec(spec.args, spec.varargs, spec.varkw, spec.defaults)


def _clock():
    _tell("time.clock", "time.perf_counter")
    return time.perf_counter()


def _module_getattr(module, aliases):
    """Makes ``module.<name>`` resolve through ``aliases`` ({name: (value, replacement)}) after the module's own
    ``__getattr__`` (if any) is asked only for other names."""
    previous = module.__dict__.get("__getattr__")

    def __getattr__(name):  # noqa: N807 - a module's __getattr__ (PEP 562)
        if name in aliases and aliases[name][0] is not None:
            value, replacement = aliases[name]
            _tell(f"{module.__name__}.{name}", replacement)
            return value
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

    module.__getattr__ = __getattr__


def install():
    """Adds the names (once per process)."""
    if _installed:
        return
    _installed.append(True)
    if not hasattr(time, "clock"):
        time.clock = _clock
    _module_getattr(np, {name: alias for name, alias in NUMPY.items() if name not in np.__dict__})
    after_import.when_imported("numpy.core.numeric", _add_numeric_constants)
    numpy_iterator_stack.install(_tell)
    abcs = {n: (getattr(collections.abc, n), f"collections.abc.{n}") for n in ABCS if n not in collections.__dict__}
    _module_getattr(collections, abcs)
    if not hasattr(inspect, "getargspec"):
        _module_getattr(inspect, {"getargspec": (_getargspec, "inspect.getfullargspec")})
    scipy_misc.install(_add_scipy_misc)
    after_import.when_imported("scipy.integrate", _add_scipy_integrate)
    scipy_paths.install(lambda old, new: _tell(old, new))
    after_import.when_imported("scipy", _add_scipy_numpy_names)
    after_import.when_imported("yaml", _add_yaml_default_loader)


def _add_numeric_constants(module):
    real = (getattr(np, "_core", None) or np.core).numeric  # NumPy 2 keeps it in numpy._core, 1.x in numpy.core
    _module_getattr(module, {n: NUMPY[n] for n in NUMPY_CORE_NUMERIC if n not in real.__dict__})


SCIPY_SPECIAL = ("comb", "factorial", "logsumexp")  # scipy.misc names SciPy 1.0-1.3 moved to scipy.special


def _add_scipy_misc(module):
    missing = {n: (f, "imageio / PIL.Image") for n, f in scipy_misc.FUNCTIONS.items() if n not in module.__dict__}
    import scipy.special  # scipy.misc is being imported: SciPy is there

    special = {n: (getattr(scipy.special, n), f"scipy.special.{n}") for n in SCIPY_SPECIAL}
    missing.update({n: value for n, value in special.items() if n not in module.__dict__})
    _module_getattr(module, missing)


def _add_scipy_numpy_names(module):
    own = set(module.__dict__) | set(getattr(module, "__all__", ()))  # SciPy's names and its submodules
    names = (n for n in getattr(np, "__all__", ()) if n not in own and not n.startswith("_"))
    values = ((n, getattr(np, n, None)) for n in names)
    _module_getattr(module, {n: (v, f"numpy.{n}") for n, v in values if not isinstance(v, (type(None), type(np)))})


def _add_scipy_integrate(module):
    _module_getattr(module, {n: v for n, v in scipy_integrate.names().items() if n not in module.__dict__})


def _add_yaml_default_loader(module):
    for name in ("load", "load_all"):
        original = module.__dict__.get(name)
        try:
            loader = inspect.signature(original).parameters["Loader"]
        except (TypeError, ValueError, KeyError):
            continue  # not PyYAML's function: leave it
        if loader.default is inspect.Parameter.empty:
            setattr(module, name, _with_default_loader(module, name, original))


def _with_default_loader(module, name, original):
    """PyYAML 6's ``load`` / ``load_all``, taking a stream alone as PyYAML 5.1-5.4 did (with ``FullLoader``)."""

    @functools.wraps(original)
    def call(stream, Loader=None):  # noqa: N803 - PyYAML's own parameter name, passed by keyword too
        if Loader is not None:
            return original(stream, Loader)
        _tell(f"yaml.{name}(stream) without a Loader", f"yaml.{name}(stream, Loader=yaml.FullLoader)")
        return original(stream, module.FullLoader)

    return call
