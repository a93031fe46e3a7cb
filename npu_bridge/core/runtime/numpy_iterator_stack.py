"""``np.stack`` / ``vstack`` / ``hstack`` / ``dstack`` / ``column_stack`` of an iterator (a generator, ``map(...)``),
for ``--py-compat``.

NumPy 1.16-1.23 stacked the arrays an iterator yields (with a FutureWarning); NumPy 1.24 made it a TypeError. The
functions themselves are left as they are (a library that keys a table on ``np.stack`` still finds it): the check
that refuses an iterator, which each of them asks before it runs, lets an iterator through again, as NumPy 1.x's did.
A sequence takes the unchanged path.
"""

import importlib

import numpy as np

# the modules whose stack functions ask ``_arrays_for_stack_dispatcher``, in NumPy 2 and in NumPy 1.x (whose
# ``numpy.core`` NumPy 2 keeps only as a deprecated view)
MODULES = ("numpy._core.shape_base", "numpy.lib._shape_base_impl")
MODULES_1X = ("numpy.core.shape_base", "numpy.lib.shape_base")
CHECK = "_arrays_for_stack_dispatcher"


def install(tell):
    """Lets iterators through the check in every module that has it; ``tell(what, replacement)`` is called the
    first time a script stacks an iterator. Does nothing where this NumPy still accepts iterators."""
    for name in MODULES if hasattr(np, "_core") else MODULES_1X:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        check = module.__dict__.get(CHECK)
        if check is not None and _refuses_iterators(check):
            setattr(module, CHECK, _accepting_iterators(check, tell))


def _refuses_iterators(check):
    try:
        check(iter(()))
    except TypeError:
        return True
    return False


def _accepting_iterators(check, tell):
    def accepting(arrays, *args, **kwargs):
        if hasattr(arrays, "__iter__") and not hasattr(arrays, "__getitem__"):
            tell("np.stack / vstack / hstack of an iterator", "np.stack(list(arrays))")
            return ()  # no array of the iterator takes part in dispatch: it is read once, by the function itself
        return check(arrays, *args, **kwargs)

    return accepting
