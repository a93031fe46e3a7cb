"""Keras of the script's era for user code, in both modes: the route, the modules and views it gives.

``add_route`` (the TF1 mode at its start, the TF2 adapter at ``import npu_device``) makes user code's ``import
keras...`` and ``tensorflow.python.keras...`` give tf_keras (Keras 2) in the Keras 2.2-2.6 layouts ``legacy_paths``
maps, and the TensorFlow-internal modules that moved be found; installed packages keep Keras 3 and TensorFlow's own
modules. Once tf_keras is imported, the Keras 2.x names tf_keras lacks are added (``layer._layers``), add-only.

A mapped path is the real module it resolves to (``keras.layers.core.dense`` is ``tf_keras.src.layers.core.dense``
itself), except where that module cannot answer for it: a Keras root (``keras``) or package, whose children may
come from elsewhere (``keras.layers.merge`` is ``tf_keras.src.layers.merging``, ``keras.applications.resnet50`` the
public ``tf_keras.applications.resnet50``), a parent of a mapped TensorFlow module (``tensorflow.python.training``,
whose ``training_ops`` TensorFlow 2.21 lacks) and a module with several sources. Those are ``ModuleView`` objects:
the mapped children first, then the real modules' attributes (a submodule as user code gets it), then the modules
a child path maps to. Nothing is put in ``sys.modules``: installed packages importing the same names keep what they
get.
"""

import importlib
import importlib.util
import threading
import types

from npu_bridge.core.runtime import addons_keras, after_import, keras_selection, legacy_paths, log, user_imports

_KERAS_3_KEPT = ("0", "false", "False")  # TF_USE_LEGACY_KERAS values that keep Keras 3 (keras_selection)
_era_lock = threading.Lock()
_era_names_added = False
_modules = {}  # user-visible path -> its module or view


def add_route(route_name, is_user, before_first=None):
    """Gives user code Keras of its era from now on (see the module docstring); once per route name.

    Args:
      route_name: the ``user_imports`` route's name ("tf1-keras", "tf2").
      is_user: function(globals of the importing module) -> True for user code (the mode's ``user_code`` rule).
      before_first: None, or a function called once before the route maps its first import (the TF1 mode sets up
        TensorFlow 1.x behaviour there, as Keras 2.2 ran on it).
    Returns:
      True when the route is on; False when ``TF_USE_LEGACY_KERAS`` keeps Keras 3 (``tf.keras`` is Keras 3, so
      standalone ``keras`` stays Keras 3 too and the two never mix) or tf_keras is not installed.
    Raises:
      EnvironmentVariableError: TF_USE_LEGACY_KERAS has a value TensorFlow would read ambiguously.
    """
    if user_imports.has_route(route_name):
        return True
    if keras_selection.choice() in _KERAS_3_KEPT:
        log.logger.info("TF_USE_LEGACY_KERAS keeps Keras 3: user code's `import keras` stays Keras 3 as well")
        return False
    if importlib.util.find_spec("tf_keras") is None:
        log.logger.warning("tf_keras is not installed: user code's `import keras` stays Keras 3 (pip install tf-keras)")
        return False
    first = [before_first]

    def resolve(name, module_globals, module_locals, fromlist, proceed):
        if first[0] is not None and legacy_paths.candidates(name) is not None:
            before, first[0] = first[0], None
            before()
        found = import_for_user(name, fromlist or ())
        return found if found is not None else proceed(name, module_globals, module_locals, fromlist, 0)

    user_imports.add_route(route_name, legacy_paths.TOP_NAMES, is_user, resolve, calls_too=True)
    after_import.when_imported("tf_keras.src.engine.base_layer", _add_era_names)
    addons_keras.add_route()  # tensorflow_addons, which user code imports, on tf_keras too
    return True


def _add_era_names(base_layer):
    """Adds the Keras 2.x names scripts use that tf_keras 2.21 lacks (once; nothing that exists is replaced).

    ``layer._layers`` (so ``model._layers`` too): Keras 2.2-2.3's list of a layer's or model's tracked layers (a
    ``Sequential``'s input layer first), which ``tf.keras`` renamed ``_self_tracked_trackables`` in TensorFlow 2.4;
    the same list, so changes show in both. It is answered by ``Layer.__getattr__``, which Python asks only when the
    layer has no ``_layers`` of its own: a class attribute would make Keras stop tracking the layers a custom layer
    of that era assigns to ``self._layers``. Called when tf_keras' ``engine.base_layer`` is imported, however user
    code reached it (``import keras``, ``tf.keras.Model``).
    """
    global _era_names_added
    with _era_lock:
        if _era_names_added:
            return
        _era_names_added = True
        layer = base_layer.Layer
        if "__getattr__" not in vars(layer) and not hasattr(layer, "_layers"):
            layer.__getattr__ = _era_attribute


def _era_attribute(layer, name):
    """``Layer.__getattr__``: Keras 2.2's ``_layers``; for any other name, the AttributeError lookup gave."""
    if name == "_layers":
        return layer._self_tracked_trackables
    # looked up again so the error is the original one: a property's own message ("has no inbound nodes")
    return type(layer).__getattribute__(layer, name)


class ModuleView(types.ModuleType):
    """A module named as the script names it (``keras``), answering from real modules.

    Args:
      name: the user-visible module path.
      sources: the real modules behind it, searched in order (may be empty for a parent that only has mapped
        children).
    """

    def __init__(self, name, sources):
        super().__init__(name, sources[0].__doc__ if sources else None)
        self.__dict__["_npu_sources"] = tuple(sources)

    def __getattr__(self, attr):
        sources = self.__dict__["_npu_sources"]
        child = f"{self.__name__}.{attr}"
        dunder = attr.startswith("__") and attr.endswith("__")
        if not dunder and legacy_paths.is_mapped_child(child):
            return _child(self, attr, child)
        for source in sources:
            try:
                value = getattr(source, attr)
            except AttributeError:
                continue
            if isinstance(value, types.ModuleType) and not dunder and legacy_paths.in_keras(child):
                return _canonical(self, attr, child, value)
            return value
        if not dunder:
            target = legacy_paths.moved_name(self.__name__, attr)
            if target is not None:  # a name TensorFlow 1.15 / 2.6 had here and 2.21 moved (the generated table)
                return _moved_name(target)
            found = _submodule(child, sources)
            if found is not None:
                return _child(self, attr, child, found)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")

    def __setattr__(self, attr, value):
        # a script that sets a module attribute sets it where every user of the module sees it
        sources = self.__dict__["_npu_sources"]
        if sources:
            setattr(sources[0], attr, value)
        else:
            self.__dict__[attr] = value

    def __delattr__(self, attr):
        sources = self.__dict__["_npu_sources"]
        if sources:
            delattr(sources[0], attr)
        else:
            del self.__dict__[attr]

    @property
    def __all__(self):
        """The names ``from <view> import *`` gives: its first source's ``__all__``, else its public names."""
        sources = self.__dict__["_npu_sources"]
        if not sources:
            return []
        names = getattr(sources[0], "__all__", None)
        return list(names) if names is not None else [n for n in vars(sources[0]) if not n.startswith("_")]

    def __dir__(self):
        names = (set(self.__dict__) - {"_npu_sources"}) | set(legacy_paths.MOVED_NAMES.get(self.__name__, ()))
        for source in self.__dict__["_npu_sources"]:
            names.update(dir(source))
        return sorted(names)

    def __repr__(self):
        real = ", ".join(source.__name__ for source in self.__dict__["_npu_sources"]) or "no module of its own"
        return f"<module {self.__name__!r} (npu_bridge: {real})>"


def module(path):
    """Returns the module user code gets for ``path`` (imported now if needed).

    Args:
      path: a user-visible module path that ``legacy_paths.candidates`` maps, or a parent of one.
    Returns:
      The real module, or a ``ModuleView``.
    Raises:
      ModuleNotFoundError: no candidate exists (Python's own error for the last candidate, with a note naming
        ``path`` and every candidate tried); an ImportError raised inside a candidate propagates as it is.
    """
    found = _modules.get(path)
    if found is not None:
        return found
    names = legacy_paths.candidates(path)
    if names is None:  # a parent of mapped paths, e.g. tensorflow.python: the real module
        names = [path]
    sources = _importable(path, names, every=legacy_paths.combined(path))
    # a Keras package is a view too: a child may come from elsewhere (keras.applications.resnet50 is public tf_keras's)
    package = legacy_paths.in_keras(path) and bool(sources) and hasattr(sources[0], "__path__")
    if legacy_paths.needs_view(path) or package:
        found = ModuleView(path, [*_v1_api(path), *sources])
    else:
        found = sources[0]
    return _modules.setdefault(path, found)


def _v1_api(path):
    """``[tf_keras.api._v1.keras.<rest>]`` for a Keras package while v2 behaviour is off (the TF1 mode), else ``[]``.

    ``tf.keras`` is then ``tf.compat.v1.keras``, whose layers are the v1 ones TensorFlow 1.x and Keras 2.2 had
    (``BatchNormalization`` that uses batch statistics when frozen, ``LSTM`` / ``GRU`` v1) and whose optimizers are
    the generation v1 graphs train with; tf_keras' own packages chose the v2 classes when TensorFlow imported them.
    A module ``legacy_paths`` moves (``layers.normalization``) keeps its own sources.
    """
    rest = legacy_paths.keras_rest(path)
    if rest is None or legacy_paths.moved(path) or importlib.import_module("tensorflow.python.tf2").enabled():
        return []
    name = "tf_keras.api._v1.keras" + (f".{rest}" if rest else "")
    try:
        return [importlib.import_module(name)]
    except ModuleNotFoundError as error:
        if error.name is None or not (name == error.name or name.startswith(error.name + ".")):
            raise
        return []


def import_for_user(name, fromlist):
    """What an ``import`` statement of user code gets, or None when ``legacy_paths`` does not map it.

    Args:
      name: the module named (``import name`` / ``from name import ...``), absolute.
      fromlist: the names after ``import`` in ``from name import ...`` (empty for ``import name``).
    Returns:
      For ``from name import ...``: the module ``name`` (its listed submodules imported); for ``import a.b.c``:
      the module of ``a``, through which ``a.b.c`` resolves. None: import as usual.
    """
    mapped = legacy_paths.candidates(name) is not None or name in legacy_paths.MOVED_NAMES
    if not fromlist:
        if not mapped:
            return None
        module(name)
        return module(name.partition(".")[0])  # `import keras.layers.core` binds `keras`, a view
    if not mapped and not any(legacy_paths.is_mapped_child(f"{name}.{entry}") for entry in fromlist):
        return None
    found = module(name)
    _import_listed(name, found, fromlist)
    return found


def _import_listed(name, found, fromlist):
    """Imports the submodules ``from name import a, b`` names, as Python's own import does."""
    for entry in fromlist:
        if entry == "*" or hasattr(found, entry):  # a view imports what it is asked for
            continue
        child = f"{name}.{entry}"
        try:
            _child_module(child, found)
        except ModuleNotFoundError as error:
            if error.name not in (child, f"{found.__name__}.{entry}"):
                raise  # the submodule exists but something it imports does not


def _child_module(child, parent):
    if legacy_paths.candidates(child) is not None:
        return module(child)
    return importlib.import_module(f"{parent.__name__}.{child.rpartition('.')[2]}")


def _moved_name(target):
    """The value of a moved name's ``target`` ("module:name", or a module path: the module as user code gets it)."""
    home, _, name = target.partition(":")
    if name:
        return getattr(importlib.import_module(home), name)
    if legacy_paths.candidates(home) is not None or legacy_paths.needs_view(home):
        return module(home)
    return importlib.import_module(home)


def _canonical(view, attr, child, value):
    """The module user code gets for ``child``, a submodule ``value`` of a view's source (``value`` itself when the
    attribute is a module imported under that name rather than a submodule)."""
    try:
        return _child(view, attr, child)
    except ModuleNotFoundError as error:
        if error.name != child:
            raise
        view.__dict__[attr] = value
        return value


def _child(view, attr, child, found=None):
    value = found if found is not None else module(child)
    view.__dict__[attr] = value  # modules do not change once imported: answer from the dict next time
    return value


def _submodule(child, sources):
    """The submodule ``child`` of a view, or None when there is none."""
    names = legacy_paths.candidates(child)
    if names is None:
        names = [f"{source.__name__}.{child.rpartition('.')[2]}" for source in sources]
    try:
        found = _importable(child, names, every=False) if names else None
    except ModuleNotFoundError as error:
        if error.name == child:
            return None
        raise
    return found[0] if found else None


def _importable(path, names, every):
    """The modules of ``names`` that exist: the first one, or every one when ``every``.

    Raises:
      ModuleNotFoundError: none exists and ``path`` is no parent of mapped paths.
    """
    found, missing = [], None
    for name in names:
        try:
            found.append(importlib.import_module(name))
        except ModuleNotFoundError as error:
            if error.name is None or not (name == error.name or name.startswith(error.name + ".")):
                raise  # the candidate exists but something it imports does not
            missing = error
            continue
        if not every:
            break
    if found or legacy_paths.needs_view(path):
        return found
    missing.name, missing.msg = path, f"No module named {path!r}"  # the module the script asked for
    missing.args = (missing.msg,)
    missing.add_note(
        f"npu_bridge looks up user code's `{path}` as {', '.join(names)}: none exists (docs/tf1_mode.md, "
        "'Keras of the script's era'; docs/tf2_adapter.md, 'Keras 2.x and TensorFlow-internal imports')"
    )
    raise missing
