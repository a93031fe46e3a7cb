"""``tf.contrib.training.FeedingQueueRunner`` of TensorFlow 1.15 for the TF1 mode: a ``QueueRunner`` whose enqueue
threads feed values (NumPy arrays, Python data) from a feed function at every enqueue."""

import threading

import tensorflow as tf

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NotAvailableError, NpuArgumentError

__all__ = ["FeedingQueueRunner"]

_CLOSED = (tf.errors.OutOfRangeError, tf.errors.CancelledError)


class FeedingQueueRunner(tf.compat.v1.train.QueueRunner):
    """A queue runner whose thread i runs ``enqueue_ops[i]`` with ``feed_dict=feed_fns[i]()`` until the queue
    closes, the coordinator stops or a feed function raises ``OutOfRangeError`` / ``CancelledError`` (then the last
    thread to finish closes the queue).

    Args:
      queue: the ``Queue``.
      enqueue_ops: the enqueue ops, one thread each.
      close_op: op closing the queue (default: the queue's ``close()``).
      cancel_op: op closing it and cancelling pending enqueues.
      feed_fns: None, or one function per enqueue op returning its ``feed_dict``.
      queue_closed_exception_types: exceptions that mean the queue was closed (default ``OutOfRangeError`` and
        ``CancelledError``).

    Raises:
      NpuArgumentError: ``feed_fns`` has another length than ``enqueue_ops``.
    """

    def __init__(
        self,
        queue=None,
        enqueue_ops=None,
        close_op=None,
        cancel_op=None,
        feed_fns=None,
        queue_closed_exception_types=None,
    ):
        super().__init__(
            queue,
            enqueue_ops,
            close_op,
            cancel_op,
            queue_closed_exception_types=queue_closed_exception_types or _CLOSED,
        )
        if feed_fns is None:
            self._feed_fns = [None] * len(self._enqueue_ops)
        elif len(feed_fns) != len(self._enqueue_ops):
            raise NpuArgumentError(
                f"feed_fns must hold one function per enqueue op ({len(self._enqueue_ops)}), got {len(feed_fns)}"
            )
        else:
            self._feed_fns = list(feed_fns)

    def _feeding_run(self, sess, enqueue_op, feed_fn, coord=None):
        if coord:
            coord.register_thread(threading.current_thread())
        counted = True
        try:
            while not (coord and coord.should_stop()):
                try:
                    sess.run(enqueue_op, feed_dict=None if feed_fn is None else feed_fn())
                except _CLOSED:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        counted = False
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as error:  # the queue may be closed already
                                log.logger.debug("FeedingQueueRunner: closing the queue: %s", error)
                    return
        except Exception as error:
            if coord:
                coord.request_stop(error)
            else:
                log.logger.error("Exception in FeedingQueueRunner: %s", error)
                with self._lock:
                    self._exceptions_raised.append(error)
                raise
        finally:
            if counted:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """One thread per enqueue op (and one that closes the queue when ``coord`` stops), unless threads of this
        runner still run for ``sess``; see ``tf.compat.v1.train.QueueRunner.create_threads``."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [
            threading.Thread(target=self._feeding_run, args=(sess, op, feed_fn, coord))
            for op, feed_fn in zip(self._enqueue_ops, self._feed_fns)
        ]
        if coord:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, self._cancel_op, coord)))
        for thread in threads:
            thread.daemon = bool(daemon)
            if start:
                thread.start()
        return threads

    def to_proto(self, export_scope=None):
        """Not possible: feed functions do not serialize (as in TensorFlow 1.15)."""
        raise NotAvailableError("FeedingQueueRunner cannot be serialized to a QueueRunnerDef (its feed functions)")
