"""tools/zoo_names.py: the TensorFlow names a zoo-style script uses, the model directories of a checkout and the
files a directory's training runs (on small trees written here; the real zoo is not downloaded)."""

import os
import sys

from helpers.paths import REPO_ROOT

sys.path.insert(0, os.path.join(REPO_ROOT, "tools"))
import zoo_names  # noqa: E402

SCRIPT = """
from npu_bridge.npu_init import *
import tensorflow.compat.v1 as tf
import tensorflow.contrib.slim as slim
from tensorflow.python.ops import math_ops as mo
flags = tf.app.flags
FLAGS = flags.FLAGS
flags.DEFINE_integer("batch_size", 8, "")
config = tf.ConfigProto()
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
net = slim.conv2d(tf.placeholder(tf.float32), 3, [3, 3])
y = mo.add(net, FLAGS.batch_size)
tf.compat.v1.nn.relu(y)
session = tf.Session()
session.run(y)
"""


def test_names_are_whole_attribute_chains_on_tensorflow_bindings():
    names = zoo_names.names_of_source(SCRIPT)
    assert names == {
        "tensorflow",
        "tensorflow.contrib.slim",
        "tensorflow.contrib.slim.conv2d",
        "tensorflow.python.ops.math_ops",
        "tensorflow.python.ops.math_ops.add",
        "tensorflow.app.flags",
        "tensorflow.app.flags.FLAGS",
        "tensorflow.app.flags.DEFINE_integer",
        "tensorflow.app.flags.FLAGS.batch_size",
        "tensorflow.ConfigProto",
        "tensorflow.core.protobuf.rewriter_config_pb2.RewriterConfig.OFF",  # bound by npu_init's star import
        "tensorflow.placeholder",
        "tensorflow.float32",
        "tensorflow.nn.relu",  # compat.v1 is written from tensorflow
        "tensorflow.Session",
    }  # session.run: the script's own variable shadows npu_init's session module
    assert zoo_names.names_of_source("print 'python 2'") is None


def _tree(tmp_path, files):
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return zoo_names.Tree(str(tmp_path))


def test_model_directories_and_the_files_their_training_runs(tmp_path):
    model = "TensorFlow/built-in/cv/image_classification/Net_ID0001_for_TensorFlow"
    tree = _tree(
        tmp_path,
        {
            f"{model}/test/train_full_1p.sh": "cd ${cur_path}/..\npython3.7 ${cur_path}/../train.py --epochs=1\n",
            f"{model}/train.py": "import tensorflow as tf\nfrom nets import net\nimport utils\ntf.nn.relu\n",
            f"{model}/nets/__init__.py": "",
            f"{model}/nets/net.py": "import tensorflow as tf\nfrom .layers import dense\ntf.layers.conv2d\n",
            f"{model}/nets/layers.py": "import tensorflow as tf\ndense = tf.layers.dense\n",
            f"{model}/utils.py": "import tensorflow as tf\ntf.math.add\n",
            f"{model}/freeze_graph.py": "import tensorflow as tf\ntf.graph_util.convert_variables_to_constants\n",
            "TensorFlow/contrib/nlp/Bert_for_TensorFlow/run_train.py": "import tensorflow as tf\ntf.Session\n",
            "TensorFlow/contrib/nlp/Docs/README.md": "no model here",
        },
    )
    dirs = zoo_names.model_dirs(tree.paths)
    assert dirs == ["TensorFlow/built-in/cv/image_classification/Net_ID0001_for_TensorFlow",
                    "TensorFlow/contrib/nlp/Bert_for_TensorFlow"]  # fmt: skip
    found, stats = zoo_names.directory_names(tree, dirs)
    assert found[model] == {
        "tensorflow",
        "tensorflow.nn.relu",
        "tensorflow.layers.conv2d",
        "tensorflow.layers.dense",
        "tensorflow.math.add",
    }  # freeze_graph.py is not part of training
    assert found["TensorFlow/contrib/nlp/Bert_for_TensorFlow"] == {"tensorflow", "tensorflow.Session"}
    assert stats["files"] == 6 and stats["skipped"] == 0
    every, _ = zoo_names.directory_names(tree, dirs, every_file=True)
    assert "tensorflow.graph_util.convert_variables_to_constants" in every[model]
