"""Which Keras a TF1 script gets, for every order of importing TensorFlow, touching tf.keras and npu_bridge.

Each case runs in a fresh interpreter, since TensorFlow binds its Keras names once per process.
"""

import json
import textwrap

import pytest
from helpers.processes import run_python

# Prints, as JSON, the Keras package behind each way a script reaches Keras; trains nothing.
REPORT = """
import json, tensorflow
from tensorflow.keras import layers as from_import
from tensorflow.keras.layers import Dense as from_import_dense
import tensorflow.compat.v1 as v1
print("KERAS " + json.dumps({
    "tf.keras": tensorflow.keras.layers.Dense.__module__,
    "tf.compat.v1.keras": v1.keras.layers.Dense.__module__,
    "tf.compat.v1.layers": v1.layers.dense.__module__,
    "tf.compat.v1.nn.rnn_cell": v1.nn.rnn_cell.LSTMCell.__module__,
    "tf.losses": tensorflow.losses.MeanSquaredError.__module__,
    "tf.optimizers": tensorflow.optimizers.SGD.__module__,
    "from tensorflow.keras import layers": from_import.Dense.__module__,
    "from tensorflow.keras.layers import Dense": from_import_dense.__module__,
}))
"""
# A TF1 training step with a Keras layer in a bridged session, as scripts after npu_init run it.
TRAIN = """
from npu_bridge.npu_init import *
x = tf.placeholder(tf.float32, [None, 3])
loss = tf.reduce_sum(tf.square(tf.keras.layers.Dense(1)(x)))
train = npu_tf_optimizer(tf.train.GradientDescentOptimizer(0.1)).minimize(loss)
with tf.Session(config=npu_config_proto()) as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train, {x: [[1.0, 2.0, 3.0]]})
print("TRAINED")
"""


def _python(code, variable=None):
    """Runs ``code`` in a fresh interpreter whose TF_USE_LEGACY_KERAS is ``variable`` (None: unset; this test
    process has it set, since npu_bridge switched on here)."""
    setting = "os.environ.pop('TF_USE_LEGACY_KERAS', None)"
    if variable is not None:
        setting = f"os.environ['TF_USE_LEGACY_KERAS'] = {variable!r}"
    return run_python(f"import os\n{setting}\n" + textwrap.dedent(code), timeout=240)


def _keras_packages(stdout):
    line = next(line for line in stdout.splitlines() if line.startswith("KERAS "))
    return {name: module.split(".")[0] for name, module in json.loads(line[len("KERAS ") :]).items()}


def _run(prologue, variable=None):
    return _python(prologue + REPORT + TRAIN, variable)


def _assert_legacy(result):
    assert result.returncode == 0, result.stderr[-3000:]
    packages = _keras_packages(result.stdout)
    assert packages == dict.fromkeys(packages, "tf_keras")
    assert "TRAINED" in result.stdout


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "prologue",
    [
        "import npu_bridge\nimport tensorflow as tf\n",
        "from npu_bridge.npu_init import *\n",
        "import tensorflow as tf\nimport npu_bridge\n",
        "import tensorflow as tf\nx = tf.constant(1.0)\nfrom npu_bridge.npu_init import *\n",
    ],
    ids=["npu_bridge_first", "npu_init_first", "tensorflow_first", "tensorflow_first_then_npu_init"],
)
def test_legacy_keras_whenever_tf_keras_was_not_used_before_npu_bridge(prologue):
    _assert_legacy(_run(prologue))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_legacy_keras_chosen_before_tensorflow_allows_any_order():
    _assert_legacy(_run("import tensorflow as tf\ntf.keras.layers.Dense\nimport npu_bridge\n", "1"))


MESSAGE = (
    "npu_bridge needs legacy Keras (the tf_keras package) for TF1 code, but TensorFlow already gave Keras {version} "
    "for {names}: it was used before npu_bridge was imported, while TF_USE_LEGACY_KERAS is not set. Switching now "
    "would mix Keras 3 and Keras 2 in one script. Either import npu_bridge (e.g. `from npu_bridge.npu_init import *`) "
    "before the first use of tf.keras / tensorflow.keras, or set TF_USE_LEGACY_KERAS=1 in the environment before "
    "importing TensorFlow; to keep Keras 3 on purpose, set TF_USE_LEGACY_KERAS=0."
)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "touch, names",
    [
        ("print(tf.keras.__version__)", "tf.keras"),
        ("from tensorflow.keras import layers", "tensorflow.keras"),
        ("tf.losses.MeanSquaredError", "tf.losses"),
        ("tf.compat.v1.keras.backend.floatx()", "tf.compat.v1.keras"),
    ],
    ids=["tf.keras", "from_tensorflow.keras_import", "tf.losses", "tf.compat.v1.keras"],
)
def test_keras_3_already_in_use_refuses_npu_bridge_with_what_to_do(touch, names):
    result = _python(
        f"""
        import keras
        import tensorflow as tf
        {touch}
        for attempt in range(2):  # refused for good: no later import switches npu_bridge on with mixed Keras
            try:
                from npu_bridge.npu_init import *
            except ImportError as e:
                print("ERROR", type(e).__name__)
                print("MESSAGE " + str(e))
        dense = tf.keras.layers.Dense.__module__, tf.compat.v1.keras.layers.Dense.__module__
        print("tf.keras", dense[0], "tf.compat.v1.keras", dense[1])
        print("KERAS_VERSION " + keras.__version__)
        """
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    version = next(line for line in lines if line.startswith("KERAS_VERSION ")).split()[1]
    messages = [line[len("MESSAGE ") :] for line in lines if line.startswith("MESSAGE ")]
    assert messages == [MESSAGE.format(version=version, names=names)] * 2
    assert lines.count("ERROR KerasVersionError") == 2
    # Nothing was switched: TensorFlow's Keras names all stay Keras 3, none became legacy Keras behind the script.
    assert "tf.keras keras.src.layers.core.dense tf.compat.v1.keras keras.src.layers.core.dense" in lines


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_keras_3_chosen_by_the_user_is_kept():
    result = _python(
        """
        import tensorflow as tf
        print(tf.keras.__version__)
        from npu_bridge.npu_init import *
        print("KERAS", tf.keras.layers.Dense.__module__)
        """,
        "0",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "KERAS keras.src.layers.core.dense" in result.stdout


def test_only_clear_values_of_tf_use_legacy_keras_are_accepted():
    from npu_bridge.core.runtime import keras_selection
    from npu_bridge.core.runtime.errors import EnvironmentVariableError

    for value in ("1", "true", "True", "0", "false", "False"):
        assert keras_selection.choice({"TF_USE_LEGACY_KERAS": value}) == value
    assert keras_selection.choice({}) is None and keras_selection.choice({"TF_USE_LEGACY_KERAS": ""}) is None
    for value in ("garbage", "TRUE", " 1", "yes", "\u0661", "x" * 10000):  # TensorFlow reads them all as false
        with pytest.raises(EnvironmentVariableError) as raised:
            keras_selection.choice({"TF_USE_LEGACY_KERAS": value})
        message = str(raised.value)
        assert message.startswith("TF_USE_LEGACY_KERAS has invalid value ") and len(message) < 1024
        assert "Allowed: 1 / true / True (legacy Keras), 0 / false / False (keep Keras 3)" in message


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_an_unclear_tf_use_legacy_keras_refuses_npu_bridge_in_either_order():
    result = _python(
        """
        import sys
        try:
            import npu_bridge
            import tensorflow
        except Exception as e:
            print("FIRST", type(e).__name__, str(e).split(":")[0])
        import tensorflow as tf  # TensorFlow itself imports; npu_bridge stays off
        try:
            from npu_bridge.core import activation
            activation.activate()
        except Exception as e:
            print("AGAIN", type(e).__name__)
        print("KERAS", tf.keras.layers.Dense.__module__.split(".")[0])
        """,
        "garbage",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert "FIRST EnvironmentVariableError TF_USE_LEGACY_KERAS has invalid value 'garbage'" in lines
    assert "AGAIN EnvironmentVariableError" in lines and "KERAS keras" in lines
    tensorflow_first = _python("import tensorflow\nimport npu_bridge\n", "TRUE")
    assert tensorflow_first.returncode != 0
    assert "EnvironmentVariableError: TF_USE_LEGACY_KERAS has invalid value 'TRUE'" in tensorflow_first.stderr
