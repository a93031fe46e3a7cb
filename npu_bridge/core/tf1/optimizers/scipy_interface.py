"""``tf.contrib.opt.ScipyOptimizerInterface`` and ``ExternalOptimizerInterface`` of TensorFlow 1.15: minimize a
graph's loss over its variables with ``scipy.optimize.minimize``, driving a ``tf.compat.v1.Session``.

The variables are packed into one float64 vector for SciPy. Each evaluation SciPy asks for writes its point into the
variables and runs the loss and its gradient (a variable the loss does not depend on has a zero gradient), with the
caller's ``feed_dict``; after the run the variables hold SciPy's result. TensorFlow 1.15 fed the point instead of
assigning it; the values computed are the same.
"""

import numpy as np
import tensorflow as tf

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError

__all__ = ["ExternalOptimizerInterface", "ScipyOptimizerInterface"]


class ExternalOptimizerInterface:
    """Base class of optimizers that run outside TensorFlow on a packed vector of the variables.

    Args:
      loss: scalar tensor to minimize.
      var_list: variables to optimize (default: the trainable variables).
      equalities: scalar tensors constrained to equal 0.
      inequalities: scalar tensors constrained to be >= 0.
      var_to_bounds: {variable: (lower, upper)}, each a number or an array broadcast to the variable's shape
        (``-np.inf`` / ``np.inf`` for none).
      **optimizer_kwargs: passed to the external optimizer.

    Raises:
      NpuArgumentError: no variables, or a variable of unknown shape.
    """

    def __init__(self, loss, var_list=None, equalities=None, inequalities=None, var_to_bounds=None, **optimizer_kwargs):
        self._loss = loss
        self._equalities = list(equalities or [])
        self._inequalities = list(inequalities or [])
        self._vars = list(tf.compat.v1.trainable_variables() if var_list is None else var_list)
        if not self._vars:
            raise NpuArgumentError("var_list must hold at least one variable to optimize, got none")
        shapes = []
        for var in self._vars:
            if not var.get_shape().is_fully_defined():
                raise NpuArgumentError(f"variable {var.name} must have a fully known shape, got {var.get_shape()}")
            shapes.append(tuple(var.get_shape().as_list()))
        self._shapes = shapes
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        ends = np.cumsum([0] + sizes)
        self._slices = [slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:])]
        self._packed_bounds = None
        if var_to_bounds is not None:
            lows, highs = [], []
            for var, shape in zip(self._vars, shapes):
                low, high = var_to_bounds.get(var, (-np.inf, np.inf))
                lows.extend(np.broadcast_to(low, shape).flat)
                highs.extend(np.broadcast_to(high, shape).flat)
            self._packed_bounds = list(zip(lows, highs))
        self._update_placeholders = [tf.compat.v1.placeholder(var.dtype.base_dtype) for var in self._vars]
        self._var_updates = [
            var.assign(tf.reshape(p, shape)) for var, p, shape in zip(self._vars, self._update_placeholders, shapes)
        ]
        self.optimizer_kwargs = optimizer_kwargs
        self._packed_var = _pack(self._vars)
        self._packed_loss_grad = _pack(_gradients(loss, self._vars))
        self._packed_equality_grads = [_pack(_gradients(t, self._vars)) for t in self._equalities]
        self._packed_inequality_grads = [_pack(_gradients(t, self._vars)) for t in self._inequalities]

    def minimize(
        self, session=None, feed_dict=None, fetches=None, step_callback=None, loss_callback=None, **run_kwargs
    ):
        """Minimizes the loss; the variables hold the result afterwards.

        Args:
          session: the session (default: the default session).
          feed_dict: feeds of every evaluation.
          fetches: tensors also run at each loss evaluation, handed to ``loss_callback``.
          step_callback: called with the packed variable vector after each optimizer iteration.
          loss_callback: called with the values of ``fetches`` after each loss evaluation.
          **run_kwargs: passed to ``session.run``.

        Raises:
          NpuArgumentError: no session given and none is the default.
        """
        session = session or tf.compat.v1.get_default_session()
        if session is None:
            raise NpuArgumentError("minimize needs a session: pass session= or run it under `with session:`")
        feed_dict = dict(feed_dict or {})
        fetches = list(fetches or [])
        loss_grad = self._evaluator(
            [self._loss, self._packed_loss_grad], session, feed_dict, fetches, run_kwargs, loss_callback
        )
        single = lambda tensor: self._evaluator([tensor], session, feed_dict, [], run_kwargs)  # noqa: E731
        equality = [_first(single(t)) for t in self._equalities]
        equality_grads = [_first(single(t)) for t in self._packed_equality_grads]
        inequality = [_first(single(t)) for t in self._inequalities]
        inequality_grads = [_first(single(t)) for t in self._packed_inequality_grads]
        initial = session.run(self._packed_var)
        result = self._minimize(
            initial_val=initial,
            loss_grad_func=loss_grad,
            equality_funcs=equality,
            equality_grad_funcs=equality_grads,
            inequality_funcs=inequality,
            inequality_grad_funcs=inequality_grads,
            packed_bounds=self._packed_bounds,
            step_callback=step_callback or (lambda xk: None),
            optimizer_kwargs=self.optimizer_kwargs,
        )
        self._write(session, result, run_kwargs)

    def _minimize(
        self,
        initial_val,
        loss_grad_func,
        equality_funcs,
        equality_grad_funcs,
        inequality_funcs,
        inequality_grad_funcs,
        packed_bounds,
        step_callback,
        optimizer_kwargs,
    ):
        """Runs the external optimizer from ``initial_val``; returns the packed result. Subclasses implement it."""
        raise NotImplementedError("ExternalOptimizerInterface._minimize is implemented by subclasses")

    def _write(self, session, packed, run_kwargs):
        values = [np.reshape(packed[s], shape) for s, shape in zip(self._slices, self._shapes)]
        session.run(self._var_updates, feed_dict=dict(zip(self._update_placeholders, values)), **run_kwargs)

    def _evaluator(self, tensors, session, feed_dict, fetches, run_kwargs, callback=None):
        def evaluate(x):
            self._write(session, x, run_kwargs)
            values = session.run(list(tensors) + fetches, feed_dict=feed_dict, **run_kwargs)
            if callable(callback):
                callback(*values[len(tensors) :])
            return values[: len(tensors)]

        return evaluate


class ScipyOptimizerInterface(ExternalOptimizerInterface):
    """``scipy.optimize.minimize`` over the variables (``method`` default "L-BFGS-B"; ``options={"maxiter": 100}``
    and the other keyword arguments of ``minimize`` go through ``optimizer_kwargs``).

    Example: ``ScipyOptimizerInterface(loss, options={"maxiter": 100}).minimize(session)``.

    Raises (at ``minimize``):
      NpuArgumentError: ``optimizer_kwargs`` set ``jac``, ``callback``, ``constraints`` or ``bounds`` (which the
        interface sets itself; bounds come from ``var_to_bounds``).
    """

    _DEFAULT_METHOD = "L-BFGS-B"

    def _minimize(
        self,
        initial_val,
        loss_grad_func,
        equality_funcs,
        equality_grad_funcs,
        inequality_funcs,
        inequality_grad_funcs,
        packed_bounds,
        step_callback,
        optimizer_kwargs,
    ):
        import scipy.optimize

        def loss_and_gradient(x):
            loss, gradient = loss_grad_func(x)
            return loss, np.asarray(gradient, dtype=np.float64)

        kwargs = dict(optimizer_kwargs)
        method = kwargs.pop("method", self._DEFAULT_METHOD)
        for name in ("jac", "callback", "constraints", "bounds"):
            if name in kwargs:
                use = "the var_to_bounds argument" if name == "bounds" else "the interface, which sets it itself"
                raise NpuArgumentError(f"optimizer keyword argument {name!r} cannot be passed: it is set by {use}")
        constraints = [{"type": "eq", "fun": f, "jac": g} for f, g in zip(equality_funcs, equality_grad_funcs)]
        constraints += [{"type": "ineq", "fun": f, "jac": g} for f, g in zip(inequality_funcs, inequality_grad_funcs)]
        extra = {"constraints": constraints} if constraints else {}
        result = scipy.optimize.minimize(
            loss_and_gradient,
            np.asarray(initial_val, dtype=np.float64),
            jac=True,
            callback=step_callback,
            method=method,
            bounds=packed_bounds,
            **extra,
            **kwargs,
        )
        lines = ["Optimization terminated with:", "  Message: %s", "  Objective function value: %f"]
        values = [result.message, result.fun]
        for key, text in (("nit", "iterations"), ("nfev", "functions evaluations")):
            if key in result:
                lines.append(f"  Number of {text}: %d")
                values.append(result[key])
        log.logger.info("\n".join(lines), *values)
        return result["x"]


def _gradients(tensor, variables):
    grads = tf.compat.v1.gradients(tensor, variables)
    return [tf.zeros_like(v) if g is None else tf.convert_to_tensor(g) for v, g in zip(variables, grads)]


def _pack(tensors):
    flat = [tf.reshape(t, [-1]) for t in tensors]
    return flat[0] if len(flat) == 1 else tf.concat(flat, 0)


def _first(evaluate):
    return lambda x: evaluate(x)[0]
