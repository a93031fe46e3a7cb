"""``tensorflow.tools.graph_transforms.TransformGraph`` in the TF1 mode: TensorFlow 2.21's Graph Transform Tool
behind 1.15's Python function: the transformed graph computes what the original did, with the nodes the
transforms remove gone; a rejected transform raises InvalidArgumentError; the zoo's import path works in the mode."""

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.tf1 import graph_transforms

v1 = tf.compat.v1


def _graph():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [None, 2], name="x")
        scale = tf.multiply(tf.constant(2.0), tf.constant(3.0), name="scale")
        tf.identity(x * scale + 1.0, name="y")
        tf.identity(x, name="unused")
    return graph.as_graph_def()


def _run(graph_def, value):
    with tf.Graph().as_default() as graph:
        tf.graph_util.import_graph_def(graph_def, name="")
        with v1.Session(graph=graph) as session:
            return session.run("y:0", {"x:0": value})


def test_transforms_strip_and_fold_and_the_graph_computes_the_same():
    before = _graph()
    after = graph_transforms.TransformGraph(
        before, ["x"], ["y"], ["strip_unused_nodes", "fold_constants(ignore_errors=true)"]
    )
    names = {node.name for node in after.node}
    assert "unused" not in names and "scale" not in names  # stripped; folded into a constant
    assert "unused" in {node.name for node in before.node}  # the input is left as it was
    value = np.array([[1.0, -2.0]], np.float32)
    np.testing.assert_allclose(_run(after, value), [[7.0, -11.0]])
    np.testing.assert_allclose(_run(after, value), _run(before, value))


def test_a_rejected_transform_raises_invalid_argument_naming_it():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"transforms=\['no_such_transform'\].*not recognized"):
        graph_transforms.TransformGraph(_graph(), ["x"], ["y"], ["no_such_transform"])


def test_names_must_come_as_lists():
    with pytest.raises(TypeError, match="outputs='y' must be a list of strings"):
        graph_transforms.TransformGraph(_graph(), ["x"], "y", ["strip_unused_nodes"])


SCRIPT = """
import json
import tensorflow as tf
from tensorflow.tools.graph_transforms import TransformGraph

x = tf.placeholder(tf.float32, [2], name="x")
y = tf.identity(x + tf.constant(1.0) * tf.constant(2.0), name="y")
graph_def = TransformGraph(tf.get_default_graph().as_graph_def(), ["x"], ["y"], ["fold_constants"])
print("RESULT " + json.dumps({
    "ops": sorted(node.op for node in graph_def.node),
    "same": tf.tools.graph_transforms.TransformGraph is TransformGraph,
}))
"""


def test_the_zoo_import_path_works_in_the_tf1_mode(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, SCRIPT)
    assert found == {"ops": ["AddV2", "Const", "Identity", "Placeholder"], "same": True}
