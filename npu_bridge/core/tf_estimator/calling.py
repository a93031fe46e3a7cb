"""How an Estimator calls ``model_fn`` and ``input_fn``: only with the arguments their signatures take."""

import functools
import inspect

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf_estimator.spec import EstimatorSpec

MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")
INPUT_FN_ARGS = ("mode", "params", "config", "input_context")


def fn_args(fn):
    """Returns the names of the arguments ``fn`` can be called with by keyword.

    Handles functions, bound methods (``self`` excluded), ``functools.partial`` (bound names excluded) and
    callable objects.

    Args:
      fn: a callable.
    Returns:
      A tuple of argument names.
    """
    if isinstance(fn, functools.partial):
        bound = set(fn.keywords or {})
        names = fn_args(fn.func)[len(fn.args) :]
        return tuple(name for name in names if name not in bound)
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else getattr(fn, "__call__", fn)  # noqa: B004 (the callable object's own method)
    parameters = inspect.signature(target).parameters.values()
    return tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self")


def verify_model_fn_args(model_fn, params):
    """Checks the signature of a model_fn as TensorFlow's Estimator did.

    Raises:
      ValueError: ``model_fn`` does not take ``features``, takes arguments the Estimator cannot supply, or
        ``params`` are given but not taken.
    """
    if not callable(model_fn):
        raise NpuArgumentError(f"model_fn must be callable, given: {model_fn!r}")
    args = fn_args(model_fn)
    if "features" not in args:
        raise NpuArgumentError(f"model_fn ({model_fn}) must include features argument.")
    if params is not None and "params" not in args:
        raise NpuArgumentError(
            f"model_fn ({model_fn}) does not include params argument, but params ({params}) is passed to Estimator."
        )
    unexpected = sorted(set(args) - set(MODEL_FN_ARGS))
    if unexpected:
        raise NpuArgumentError(
            f"model_fn ({model_fn}) has following not expected args: {unexpected}; it may take {list(MODEL_FN_ARGS)}"
        )


def call_model_fn(model_fn, features, labels, mode, params, config, as_spec=None):
    """Calls ``model_fn`` with the arguments it takes and checks that it returned an ``EstimatorSpec``.

    Args:
      as_spec: converts what ``model_fn`` returned before the check (None: nothing to convert).
    Raises:
      ValueError: ``model_fn`` takes no labels but ``input_fn`` produced some, or it did not return an
        ``EstimatorSpec``.
    """
    args = fn_args(model_fn)
    kwargs = {}
    if "labels" in args:
        kwargs["labels"] = labels
    elif labels is not None:
        raise NpuArgumentError("model_fn does not take labels, but input_fn returns labels.")
    for name, value in (("mode", mode), ("params", params), ("config", config)):
        if name in args:
            kwargs[name] = value
    spec = model_fn(features=features, **kwargs)
    if as_spec is not None:
        spec = as_spec(spec)
    if not isinstance(spec, EstimatorSpec):
        raise NpuArgumentError(f"model_fn should return an EstimatorSpec, given: {type(spec).__name__}")
    return spec


def call_input_fn(input_fn, mode, params, config):
    """Calls ``input_fn`` (on the CPU, as Estimator does) with the arguments it takes.

    Returns:
      (features, labels, hooks): labels may be None; hooks initialize a Dataset's iterator.
    Raises:
      TypeError: ``input_fn`` is not callable.
    """
    if not callable(input_fn):
        raise NpuArgumentTypeError(f"input_fn must be callable, given: {input_fn!r}")
    args = fn_args(input_fn)
    kwargs = {name: value for name, value in (("mode", mode), ("params", params), ("config", config)) if name in args}
    with tf.compat.v1.device("/cpu:0"):
        return parse_input_fn_result(input_fn(**kwargs))


class _IteratorInitializerHook(tf.compat.v1.train.SessionRunHook):
    """Initializes a Dataset iterator when the session is created."""

    def __init__(self, iterator):
        self._iterator = iterator

    def after_create_session(self, session, coord):
        session.run(self._iterator.initializer)


def parse_input_fn_result(result):
    """Turns what an input_fn returned into (features, labels, hooks).

    A ``tf.data.Dataset`` becomes the next element of an initializable iterator; a 2-tuple is
    (features, labels); anything else is the features alone.
    """
    hooks = []
    if isinstance(result, tf.data.Dataset):
        iterator = tf.compat.v1.data.make_initializable_iterator(result)
        hooks.append(_IteratorInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise NpuArgumentError(f"input_fn should return (features, labels) or features; got {len(result)} items")
        return result[0], result[1], hooks
    return result, None, hooks
