"""What switching on leaves in a process, so that scripts start and exit without paying for npu_bridge: TensorFlow's
objects frozen out of the cyclic collector's walks (objects made later are still collected), and, when TensorFlow
was imported first, no tf_keras import before a script uses Keras (``tf_keras.legacy_tf_layers``, which
TensorFlow's own layers import, is resolved when that import comes). Imported after npu_bridge, TensorFlow imports
tf_keras itself: with TF_USE_LEGACY_KERAS=1 its import loads tf_keras' optimizers. TensorFlow's import, when
npu_bridge's hook runs it, runs from a frame with room on CPython's frame stack (``data_stack``), so that its calls
do not map and unmap a stack chunk each."""

import json

import pytest
from helpers.processes import run_python

CHECKS = """
import gc, json, sys, weakref
import_frames = []


def watch_imports(event, args):
    if event == "import" and args[0] == "tensorflow.python.framework.ops" and not import_frames:
        frame, sizes = sys._getframe(), []
        while frame is not None:
            sizes.append(frame.f_code.co_nlocals)
            frame = frame.f_back
        import_frames.append(max(sizes))


sys.addaudithook(watch_imports)
{imports}
frozen_after_switching_on = gc.get_freeze_count()
keras_imported = "tf_keras" in sys.modules


class Node:
    pass


a, b = Node(), Node()
a.other, b.other = b, a  # a cycle made after switching on
gone = weakref.ref(a)
del a, b
gc.collect()
v1 = tf.compat.v1
v1.disable_eager_execution()
normalized = v1.layers.batch_normalization(v1.placeholder(tf.float32, [2, 3]), training=True)
import tf_keras.legacy_tf_layers.normalization as old_path
import tf_keras.src.legacy_tf_layers.normalization as new_path
print("RESULT " + json.dumps({{
    "frozen": frozen_after_switching_on, "keras_before_use": keras_imported, "cycle_collected": gone() is None,
    "same_module": old_path is new_path, "layer": normalized.shape.as_list(),
    "roomy_import": import_frames[0] > 30_000}}))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "imports, npu_bridge_first",
    [("import npu_bridge\nimport tensorflow as tf", True), ("import tensorflow as tf\nimport npu_bridge", False)],
)
def test_switching_on_freezes_tensorflows_objects_and_imports_no_keras_before_a_script_uses_it(
    imports, npu_bridge_first
):
    # the environment of a user's script (this process's switching on set TF_USE_LEGACY_KERAS=1, which children inherit)
    result = run_python(CHECKS.format(imports=imports), env={"TF_USE_LEGACY_KERAS": None})
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    found = json.loads(line[len("RESULT ") :])
    assert found["frozen"] > 100_000  # TensorFlow's modules, classes and functions
    assert found == dict(
        found,
        keras_before_use=npu_bridge_first,  # TensorFlow imports tf_keras itself (above)
        cycle_collected=True,
        same_module=True,
        layer=[2, 3],
        roomy_import=npu_bridge_first,  # only an import npu_bridge's hook runs
    )
