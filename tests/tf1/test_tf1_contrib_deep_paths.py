"""Upstream's deep paths to contrib source modules (``contrib.opt.python.training.lazy_adam_optimizer``) in the TF1
mode: each is a module holding our names, the way scripts import it, and it names what it lacks."""

import re

import helpers.tf1
import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NotProvidedError
from npu_bridge.core.tf1 import contrib, contrib_nn, crf, functional_rnn, learn_preprocessing, optimizers

# upstream path -> (a name its module holds, where that name is ours)
MODULES = {
    "crf.python.ops.crf": ("crf_log_likelihood", "npu_bridge.core.tf1.crf"),
    "opt.python.training.external_optimizer": ("ScipyOptimizerInterface", "npu_bridge.core.tf1.optimizers"),
    "opt.python.training.lars_optimizer": ("LARSOptimizer", "npu_bridge.core.tf1.optimizers"),
    "opt.python.training.lazy_adam_optimizer": ("LazyAdamOptimizer", "npu_bridge.core.tf1.optimizers"),
    "opt.python.training.moving_average_optimizer": ("MovingAverageOptimizer", "npu_bridge.core.tf1.optimizers"),
    "opt.python.training.nadam_optimizer": ("NadamOptimizer", "npu_bridge.core.tf1.optimizers"),
    "opt.python.training.weight_decay_optimizers": ("AdamWOptimizer", "npu_bridge.core.tf1.optimizers"),
    "nn.python.ops.alpha_dropout": ("alpha_dropout", "npu_bridge.core.tf1.contrib_nn"),
    "nn.python.ops.cross_entropy": (
        "deprecated_flipped_softmax_cross_entropy_with_logits",
        "npu_bridge.core.tf1.contrib_nn",
    ),
    "nn.python.ops.sampling_ops": ("rank_sampled_softmax_loss", "npu_bridge.core.tf1.contrib_nn"),
    "nn.python.ops.scaled_softplus": ("scaled_softplus", "npu_bridge.core.tf1.contrib_nn"),
    "recurrent.python.ops.functional_rnn": ("functional_rnn", "npu_bridge.core.tf1.functional_rnn"),
    "training.python.training.feeding_queue_runner": (
        "FeedingQueueRunner",
        "npu_bridge.core.tf1.feeding_queue_runner",
    ),
    "training.python.training.training": ("create_train_op", "tf_slim.training.training"),
    "learn.python.learn.preprocessing.text": ("VocabularyProcessor", "npu_bridge.core.tf1.learn_preprocessing"),
    "learn.python.learn.preprocessing.categorical_vocabulary": (
        "CategoricalVocabulary",
        "npu_bridge.core.tf1.learn_preprocessing",
    ),
    "framework.python.framework.checkpoint_utils": ("load_variable", "tensorflow.python.training.checkpoint_utils"),
    "framework.python.ops.sort_ops": ("argsort", "tensorflow.python.ops.sort_ops"),
    "distributions.python.ops.mvn_diag": ("MultivariateNormalDiag", "npu_bridge.core.tf1.distributions"),
}


def _walk(root, path):
    value = root
    for part in path.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize("path", sorted(MODULES))
def test_deep_path_is_a_module_holding_our_names_and_naming_what_it_lacks(path):
    name, home = MODULES[path]
    module = _walk(contrib.ContribModule("", None, tf), path)
    assert module.__name__ == f"tensorflow.contrib.{path}"
    assert getattr(module, name) is getattr(__import__(home, fromlist=[name]), name)
    with pytest.raises(NotProvidedError, match=re.escape(f"tf.contrib.{path}.no_such_name is not provided")):
        module.no_such_name  # noqa: B018


def test_a_module_named_like_its_function_is_the_module_only_below_python():
    root = contrib.ContribModule("", None, tf)
    assert root.nn.alpha_dropout is contrib_nn.alpha_dropout
    assert root.nn.python.ops.alpha_dropout.alpha_dropout is contrib_nn.alpha_dropout
    assert root.recurrent.functional_rnn is functional_rnn.functional_rnn
    assert root.recurrent.python.ops.functional_rnn.functional_rnn is functional_rnn.functional_rnn
    assert root.crf.python.ops.crf is root.crf.python.ops.crf  # one module per path


def test_paths_beside_the_source_modules_keep_the_collapsed_rule():
    root = contrib.ContribModule("", None, tf)
    assert root.opt.python.training.LazyAdamOptimizer is optimizers.LazyAdamOptimizer
    assert root.learn.python.learn.preprocessing.CategoricalVocabulary is learn_preprocessing.CategoricalVocabulary
    assert root.crf.python.ops.viterbi_decode is crf.viterbi_decode
    with pytest.raises(NotProvidedError, match=r"tf\.contrib\.opt\.no_such_optimizer is not provided"):
        root.opt.python.training.no_such_optimizer  # noqa: B018


SCRIPT = r"""
import json
import types
import tensorflow as tf
import tensorflow.contrib.opt.python.training.lazy_adam_optimizer as lazy_adam_optimizer
from tensorflow.contrib.crf.python.ops import crf
from tensorflow.contrib.crf.python.ops.crf import crf_log_likelihood, crf_no_such_function
from tensorflow.contrib.opt.python.training import external_optimizer, weight_decay_optimizers
from tensorflow.contrib.opt.python.training.nadam_optimizer import NadamOptimizer
from tensorflow.contrib.nn.python.ops import alpha_dropout, sampling_ops
from tensorflow.contrib.nn.python.ops.alpha_dropout import alpha_dropout as alpha_dropout_function
from tensorflow.contrib.recurrent.python.ops import functional_rnn
from tensorflow.contrib.training.python.training import feeding_queue_runner
from tensorflow.contrib.learn.python.learn.preprocessing import text, CategoricalVocabulary
from tensorflow.contrib.learn.python.learn.preprocessing.categorical_vocabulary import CategoricalVocabulary as CV

try:
    crf_no_such_function()
    missing = None
except Exception as error:
    missing = f"{type(error).__name__}: {str(error).split(' is ')[0]}"
print("RESULT " + json.dumps({
    "modules": [isinstance(m, types.ModuleType) for m in (
        lazy_adam_optimizer, crf, external_optimizer, weight_decay_optimizers, alpha_dropout, sampling_ops,
        functional_rnn, feeding_queue_runner, text)],
    "names": [
        lazy_adam_optimizer.LazyAdamOptimizer is tf.contrib.opt.LazyAdamOptimizer,
        crf.crf_log_likelihood is crf_log_likelihood is tf.contrib.crf.crf_log_likelihood,
        external_optimizer.ScipyOptimizerInterface is tf.contrib.opt.ScipyOptimizerInterface,
        weight_decay_optimizers.AdamWOptimizer is tf.contrib.opt.AdamWOptimizer,
        NadamOptimizer is tf.contrib.opt.NadamOptimizer,
        alpha_dropout.alpha_dropout is alpha_dropout_function is tf.contrib.nn.alpha_dropout,
        sampling_ops.rank_sampled_softmax_loss is tf.contrib.nn.rank_sampled_softmax_loss,
        functional_rnn.functional_rnn is tf.contrib.recurrent.functional_rnn,
        feeding_queue_runner.FeedingQueueRunner is tf.contrib.training.FeedingQueueRunner,
        text.VocabularyProcessor is tf.contrib.learn.preprocessing.VocabularyProcessor,
        CategoricalVocabulary is CV is tf.contrib.learn.preprocessing.CategoricalVocabulary,
    ],
    "missing": missing,
}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_scripts_import_the_deep_paths_in_the_tf1_mode(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, SCRIPT, timeout=280)
    assert found == {
        "modules": [True] * 9,
        "names": [True] * 11,
        "missing": "NotProvidedError: tf.contrib.crf.python.ops.crf.crf_no_such_function",
    }
