"""Keras-in-Session helpers of ``npu_init``: give Keras (tf_keras) an NPU-configured session."""

from npu_bridge.core.session import config_proto


def _keras_backend():
    import tensorflow as tf

    return tf.compat.v1.keras.backend


def set_keras_session_npu_config(config=None):
    """Creates a session with an NPU config and makes it Keras' session.

    Args:
      config: a ConfigProto to start from (edited by ``npu_config_proto``), or None.
    Returns:
      The new session.
    """
    import tensorflow as tf

    sess = tf.compat.v1.Session(config=config_proto.npu_config_proto(config))
    _keras_backend().set_session(sess)
    return sess


def npu_clear_session(config=None):
    """Clears Keras' state, then gives Keras a new NPU-configured session.

    Args:
      config: a ConfigProto to start from (edited by ``npu_config_proto``), or None.
    """
    import tensorflow as tf

    backend = _keras_backend()
    backend.clear_session()
    backend.set_session(tf.compat.v1.Session(config=config_proto.npu_config_proto(config)))
