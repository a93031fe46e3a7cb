"""The TF1 mode's small contrib pieces: ``contrib.cloud`` (accepted, unavailable), ``contrib.lookup``'s ``mapping``
functions, ``contrib.util.loader``, ``contrib.sparsemax``, ``contrib.stateless``, ``contrib.metrics.confusion_matrix``,
``contrib.ctc``, ``contrib._warning``, ``contrib.tensorboard.plugins.projector`` and ``contrib.saved_model``'s
reader: values against NumPy references written here, and the import paths zoo scripts use, run in the mode."""

import os

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.tools import saved_model_utils

from npu_bridge.core.runtime.errors import NotAvailableError, NpuArgumentError
from npu_bridge.core.tf1 import contrib_cloud, contrib_signatures, projector, sparsemax

RNG = np.random.RandomState(5)
v1 = tf.compat.v1


def run(fetches, feed=None):
    with v1.Session() as session:
        session.run(v1.tables_initializer())
        return session.run(fetches, feed)


def numpy_sparsemax(z):
    out = np.zeros_like(z)
    for i, row in enumerate(z):
        ordered = np.sort(row)[::-1]
        cumulative = np.cumsum(ordered)
        k = np.arange(1, len(row) + 1)
        support = k[1 + k * ordered > cumulative].max()
        tau = (cumulative[support - 1] - 1) / support
        out[i] = np.maximum(row - tau, 0)
    return out


def numpy_sparsemax_loss(z, q):
    p = numpy_sparsemax(z)
    losses = []
    for row, probabilities, labels in zip(z, p, q):
        support = probabilities > 0
        tau = (row[support].sum() - 1) / support.sum()
        losses.append(0.5 * np.sum(row[support] ** 2 - tau**2) - labels @ row + 0.5 * labels @ labels)
    return np.array(losses)


# ---------------------------------------------------------------- cloud


@pytest.mark.parametrize(
    "name, service",
    [
        ("BigtableClient", "Google Cloud Bigtable"),
        ("BigtableTable", "Google Cloud Bigtable"),
        ("BigQueryReader", "Google Cloud BigQuery"),
    ],
)
def test_cloud_classes_are_accepted_and_raise_naming_the_service_when_constructed(name, service):
    cls = getattr(contrib_cloud, name)
    with pytest.raises(NotAvailableError, match=f"tf.contrib.cloud.{name} needs {service}, which is not available"):
        cls("my-project", "my-instance")


# ---------------------------------------------------------------- sparsemax


def test_sparsemax_matches_numpy_and_sums_to_one():
    logits = np.concatenate([RNG.randn(6, 7) * 3, [[0.0] * 7], [[5.0, 1, 1, 1, 1, 1, 1]]]).astype(np.float64)
    with tf.Graph().as_default():
        got = run(sparsemax.sparsemax(logits))
    np.testing.assert_allclose(got, numpy_sparsemax(logits), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-12)
    assert got[-1].tolist() == [1.0, 0, 0, 0, 0, 0, 0]  # a clear winner takes it all
    np.testing.assert_allclose(got[-2], 1 / 7)  # equal logits share it


def test_sparsemax_of_a_row_with_nan_is_nan_and_float32_works():
    logits = np.array([[1.0, np.nan, 0.0], [0.5, 0.2, -1.0]], np.float32)
    with tf.Graph().as_default():
        got = run(sparsemax.sparsemax(logits))
    assert np.isnan(got[0]).all()
    np.testing.assert_allclose(got[1], numpy_sparsemax(logits[1:].astype(np.float64))[0], rtol=1e-6)


def test_sparsemax_loss_matches_numpy_and_is_zero_at_the_target():
    logits = RNG.randn(5, 6) * 2
    labels = np.eye(6)[RNG.randint(0, 6, 5)]
    with tf.Graph().as_default():
        z = tf.constant(logits)
        loss = run(sparsemax.sparsemax_loss(z, sparsemax.sparsemax(z), tf.constant(labels)))
        # a one-hot target far ahead of the rest: sparsemax is that target, the loss is 0
        sure = tf.constant([[10.0, 0.0, 0.0]], tf.float64)
        zero = run(sparsemax.sparsemax_loss(sure, sparsemax.sparsemax(sure), tf.constant([[1.0, 0, 0]], tf.float64)))
    np.testing.assert_allclose(loss, numpy_sparsemax_loss(logits, labels), rtol=1e-10, atol=1e-12)
    assert (loss >= -1e-12).all()
    np.testing.assert_allclose(zero, [0.0], atol=1e-12)


# ---------------------------------------------------------------- confusion_matrix, lookup


def test_confusion_matrix_takes_contribs_argument_order():
    labels = RNG.randint(0, 4, 50)
    predictions = RNG.randint(0, 4, 50)
    weights = RNG.rand(50)
    expected = np.zeros((4, 4))
    np.add.at(expected, (labels, predictions), weights)
    with tf.Graph().as_default():
        # contrib's order: labels, predictions, num_classes, dtype, name, weights
        matrix = contrib_signatures.confusion_matrix(labels, predictions, 4, tf.float64, "cm", weights)
        counts = contrib_signatures.confusion_matrix(labels, predictions, num_classes=5)
        assert matrix.dtype == tf.float64
        got, got_counts = run([matrix, counts])
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    expected_counts = np.zeros((5, 5), np.int64)
    np.add.at(expected_counts, (labels, predictions), 1)
    assert got_counts.tolist() == expected_counts.tolist()


def test_hash_table_takes_1_15_s_shared_name_and_tables_of_one_name_share_their_contents():
    with tf.Graph().as_default():
        keys = tf.constant(["a", "b"])

        def table(shared_name=None):
            init = tf.compat.v1.lookup.KeyValueTensorInitializer(keys, tf.constant([0, 1], tf.int64))
            return contrib_signatures.HashTable(init, -1, shared_name=shared_name)

        first, second, own = table("vocabulary"), table(shared_name="vocabulary"), table()
        query = tf.constant(["b", "z"])
        with tf.compat.v1.Session() as sess:
            sess.run(first.initializer)  # only the first: the second reads the same table
            assert sess.run(second.lookup(query)).tolist() == [1, -1]
            with pytest.raises(tf.errors.FailedPreconditionError, match="not initialized"):
                sess.run(own.lookup(query))  # no shared name: a table of its own
        with pytest.raises(NpuArgumentError, match="shared_name must be a string or None, got 3"):
            table(shared_name=3)


def test_lookup_functions_take_mapping():
    with tf.Graph().as_default():
        mapping = tf.constant(["emerson", "lake", "palmer"])
        to_string = contrib_signatures.index_to_string_table_from_tensor(mapping=mapping, default_value="UNKNOWN")
        to_index = contrib_signatures.index_table_from_tensor(mapping=mapping, num_oov_buckets=1, default_value=-1)
        words, ids, old_ids, old_words = run(
            [
                to_string.lookup(tf.constant([1, 5], tf.int64)),
                to_index.lookup(tf.constant(["emerson", "lake", "and", "palmer"])),
                contrib_signatures.string_to_index(tf.constant(["palmer", "x"]), mapping),
                contrib_signatures.index_to_string(tf.constant([0, -1], tf.int64), mapping),
            ]
        )
    assert words.tolist() == [b"lake", b"UNKNOWN"]
    assert ids.tolist() == [0, 1, 3, 2]
    assert old_ids.tolist() == [2, -1]
    assert old_words.tolist() == [b"emerson", b"UNK"]


# ---------------------------------------------------------------- loader, projector, saved_model reader


def test_load_op_library_takes_a_relative_path_from_the_callers_directory():
    with pytest.raises(tf.errors.NotFoundError, match=os.path.join(os.path.dirname(__file__), "no_such_ops.so")):
        contrib_signatures.load_op_library("no_such_ops.so")


def test_visualize_embeddings_writes_the_config_to_the_writers_logdir(tmp_path):
    config = projector.ProjectorConfig()
    embedding = config.embeddings.add()
    embedding.tensor_name = "embedding/weights"
    embedding.metadata_path = "metadata.tsv"
    embedding.sprite.image_path = "sprite.png"
    embedding.sprite.single_image_dim.extend([28, 28])
    with tf.Graph().as_default():
        writer = v1.summary.FileWriter(str(tmp_path))
        projector.visualize_embeddings(writer, config)
        writer.close()
    text = (tmp_path / "projector_config.pbtxt").read_text()
    assert 'tensor_name: "embedding/weights"' in text and "single_image_dim: 28" in text
    from google.protobuf import text_format

    assert text_format.Parse(text, projector.ProjectorConfig()) == config


def test_the_saved_model_reader_reads_a_saved_models_tags(tmp_path):
    export = str(tmp_path / "model")
    with tf.Graph().as_default(), v1.Session() as session:
        v1.Variable(3.0, name="v")
        session.run(v1.global_variables_initializer())
        builder = v1.saved_model.Builder(export)
        builder.add_meta_graph_and_variables(session, ["serve", "extra"])
        builder.save()
    saved = saved_model_utils.read_saved_model(export)
    assert len(saved.meta_graphs) == 1
    assert saved_model_utils.get_saved_model_tag_sets(export) == [["serve", "extra"]]
    with pytest.raises(IOError, match="SavedModel file does not exist"):
        saved_model_utils.read_saved_model(str(tmp_path))


SCRIPT = r"""
import json, os
import numpy as np
import tensorflow as tf
from tensorflow.contrib import cloud as contrib_cloud
from tensorflow.contrib.training.python.training import evaluation
from tensorflow.contrib.util import loader
from tensorflow.contrib.sparsemax import sparsemax
import tensorflow.contrib.ctc as ctc
from tensorflow.contrib.tensorboard.plugins import projector
from tensorflow.contrib.saved_model.python.saved_model import reader

out = {"warning_default": tf.contrib._warning}
tf.contrib._warning = None
try:
    contrib_cloud.BigtableClient("project", "instance")
except NotImplementedError as error:
    out["bigtable"] = str(error)
out["iterator"] = evaluation.checkpoints_iterator.__name__
out["wait"] = callable(evaluation.wait_for_new_checkpoint)
out["loader"] = callable(loader.load_op_library)
out["ctc"] = [callable(ctc.ctc_loss), callable(ctc.ctc_greedy_decoder), callable(ctc.ctc_beam_search_decoder)]

table = tf.contrib.lookup.index_to_string_table_from_tensor(tf.constant(["a", "b"]), default_value="?")
words = table.lookup(tf.constant([1, 7], tf.int64))
probabilities = sparsemax(tf.constant([[2.0, 1.0, -3.0]]))
seed = tf.constant([1, 2], tf.int64)
normal = [tf.contrib.stateless.stateless_random_normal([3], seed=seed) for _ in range(2)]
uniform = tf.contrib.stateless.stateless_random_uniform([4], seed=[3, 4])
matrix = tf.contrib.metrics.confusion_matrix([0, 1, 1], [0, 1, 0], 2)
with tf.Session() as session:
    session.run(tf.tables_initializer())
    w, p, n, u, m = session.run([words, probabilities, normal, uniform, matrix])
out.update(words=[x.decode() for x in w], sparsemax=p.tolist(), same=n[0].tolist() == n[1].tolist(),
           uniform=u.tolist(), matrix=m.tolist())

config = projector.ProjectorConfig()
config.embeddings.add().tensor_name = "emb"
writer = tf.summary.FileWriter("logs")
projector.visualize_embeddings(writer, config)
writer.close()
out["pbtxt"] = open(os.path.join("logs", "projector_config.pbtxt")).read()

with tf.Graph().as_default(), tf.Session() as session:
    tf.Variable(1.0)
    session.run(tf.global_variables_initializer())
    builder = tf.saved_model.builder.SavedModelBuilder("exported")
    builder.add_meta_graph_and_variables(session, [tf.saved_model.tag_constants.SERVING])
    builder.save()
out["tags"] = [list(m.meta_info_def.tags) for m in reader.read_saved_model("exported").meta_graphs]
out["tag_sets"] = reader.get_saved_model_tag_sets("exported")
print("RESULT " + json.dumps(out))
"""


def test_the_import_paths_zoo_scripts_use_work_in_the_mode(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, SCRIPT)
    assert "tf.contrib.cloud.BigtableClient needs Google Cloud Bigtable" in found["bigtable"]
    assert found["iterator"] == "checkpoints_iterator" and found["wait"] and found["loader"]
    assert found["ctc"] == [True, True, True] and found["warning_default"] is None
    assert found["words"] == ["b", "?"]
    np.testing.assert_allclose(found["sparsemax"], [[1.0, 0.0, 0.0]])
    assert found["same"]
    assert all(0 <= x < 1 for x in found["uniform"]) and len(set(found["uniform"])) == 4
    assert found["matrix"] == [[1, 0], [1, 1]]
    assert 'tensor_name: "emb"' in found["pbtxt"]
    assert found["tags"] == [["serve"]] and found["tag_sets"] == [["serve"]]


def test_stateless_ops_are_deterministic_in_the_seed_and_check_its_shape():
    from tensorflow.python.ops import stateless_random_ops as ops

    with tf.Graph().as_default():
        seed = tf.constant([7, 11], tf.int32)
        twice = [ops.stateless_random_normal([1000], seed=seed) for _ in range(2)]
        other = ops.stateless_random_normal([1000], seed=[7, 12])
        truncated = ops.stateless_truncated_normal([1000], seed=tf.constant([1, 1], tf.int64))
        samples = ops.stateless_multinomial(tf.math.log([[0.1, 0.9]]), 2000, seed=[5, 5])
        (a, b), c, t, s = run([twice, other, truncated, samples])
        with pytest.raises(ValueError):
            ops.stateless_random_uniform([2], seed=[1, 2, 3])
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()
    assert abs(a.mean()) < 0.15 and abs(a.std() - 1) < 0.1
    assert np.abs(t).max() <= 2.0
    assert abs(s.mean() - 0.9) < 0.05


SLIM_DECODER_SCRIPT = """
import io, json
import numpy as np
import tensorflow as tf
import tf_slim as slim
from PIL import Image

buffer = io.BytesIO()
Image.fromarray(np.full((6, 4, 3), 90, np.uint8)).save(buffer, format="PNG")
example = tf.train.Example(features=tf.train.Features(feature={
    "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[buffer.getvalue()])),
    "image/format": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"png"])),
}))
keys = {
    "image/encoded": tf.FixedLenFeature((), tf.string, default_value=""),
    "image/format": tf.FixedLenFeature((), tf.string, default_value="jpeg"),
}
decoder = slim.tfexample_decoder.TFExampleDecoder(keys, {"image": slim.tfexample_decoder.Image()})
(image,) = decoder.decode(tf.constant(example.SerializeToString()), ["image"])
with tf.Session() as sess:
    value = sess.run(image)
print("RESULT " + json.dumps({"shape": list(value.shape), "pixel": int(value[0, 0, 0])}))
"""


def test_slims_example_decoder_picks_its_image_decoder_in_the_mode(tmp_path):
    # tf_slim's TFExampleDecoder chooses the decoder with control_flow_ops.case, which TensorFlow 2.21 moved
    found = helpers.tf1.run_tf1_script(tmp_path, SLIM_DECODER_SCRIPT)
    assert found == {"shape": [6, 4, 3], "pixel": 90}
