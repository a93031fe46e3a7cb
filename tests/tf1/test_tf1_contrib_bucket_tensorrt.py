"""The TF1 mode's ``contrib.training.bucket`` / ``bucket_by_sequence_length`` (queue-based bucketing) and
``contrib.tensorrt.create_inference_graph``: the batches a queue pipeline yields (which elements, in which bucket,
padded how), the errors of bad arguments, and the import paths zoo scripts use, run in the mode."""

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.tf1 import bucket_ops, contrib_tensorrt

v1 = tf.compat.v1


def _lengths_pipeline(lengths):
    """One element per length: (its length n, the sequence 0..n-1)."""
    dataset = tf.data.Dataset.from_tensor_slices(np.array(lengths, np.int32))
    n = v1.data.make_one_shot_iterator(dataset).get_next()
    return n, tf.range(n)


def _drain(fetches):
    """Every batch the queues yield until they run out."""
    batches = []
    with v1.Session() as session:
        coordinator = v1.train.Coordinator()
        threads = v1.train.start_queue_runners(session, coordinator)
        try:
            while True:
                batches.append(session.run(fetches))
        except tf.errors.OutOfRangeError:
            pass
        coordinator.request_stop()
        coordinator.join(threads)
    return batches


def test_bucket_by_sequence_length_batches_elements_of_one_bucket_padded_to_the_longest():
    with tf.Graph().as_default():
        n, sequence = _lengths_pipeline([1, 5, 2, 7, 3, 9, 4, 6, 8, 2, 1, 10])
        lengths, outputs = bucket_ops.bucket_by_sequence_length(
            n,
            {"sequence": sequence, "n": n},
            batch_size=2,
            bucket_boundaries=[3, 6],
            dynamic_pad=True,
            allow_smaller_final_batch=True,
            keep_input=n < 10,
        )
        assert sorted(outputs) == ["n", "sequence"]
        assert outputs["sequence"].shape.as_list() == [None, None]
        assert len(v1.get_collection(v1.GraphKeys.QUEUE_RUNNERS)) == 2
        batches = _drain([lengths, outputs])
    # buckets: below 3, 3..5, 6 and up; each fills in arrival order; 10 is dropped by keep_input; with
    # allow_smaller_final_batch the 3..5 bucket's last element comes as a batch of one. Which bucket's batch
    # comes first is a race between the buckets' queue runners, as in TensorFlow 1.15.
    got = [(list(batch[0]), list(batch[1]["n"]), batch[1]["sequence"].tolist()) for batch in batches]
    assert sorted(got) == sorted(
        [
            ([1, 2], [1, 2], [[0, 0], [0, 1]]),
            ([5, 3], [5, 3], [[0, 1, 2, 3, 4], [0, 1, 2, 0, 0]]),
            ([7, 9], [7, 9], [[0, 1, 2, 3, 4, 5, 6, 0, 0], [0, 1, 2, 3, 4, 5, 6, 7, 8]]),
            ([6, 8], [6, 8], [[0, 1, 2, 3, 4, 5, 0, 0], [0, 1, 2, 3, 4, 5, 6, 7]]),
            ([2, 1], [2, 1], [[0, 1], [0, 0]]),
            ([4], [4], [[0, 1, 2, 3]]),
        ]
    )


def test_bucket_by_sequence_length_drops_remainders_and_keeps_a_static_batch_size_by_default():
    with tf.Graph().as_default():
        n, _ = _lengths_pipeline([1, 4, 2, 5, 1])
        lengths, (doubled,) = bucket_ops.bucket_by_sequence_length(n, [n * 2], batch_size=2, bucket_boundaries=[3])
        assert lengths.shape.as_list() == [2] and doubled.shape.as_list() == [2]
        batches = _drain([lengths, doubled])
    assert sorted((list(a), list(b)) for a, b in batches) == [([1, 2], [2, 4]), ([4, 5], [8, 10])]


def test_bucket_takes_per_bucket_batch_sizes_and_reports_the_bucket():
    with tf.Graph().as_default():
        n, _ = _lengths_pipeline([0, 1, 2, 3, 4, 5, 6, 7])
        index, (values,) = bucket_ops.bucket([n], which_bucket=n % 2, batch_size=[3, 1], num_buckets=2)
        assert values.shape.as_list() == [None]
        batches = _drain([index, values])
    assert sorted((int(i), list(v)) for i, v in batches) == [(0, [0, 2, 4]), (1, [1]), (1, [3]), (1, [5]), (1, [7])]


@pytest.mark.parametrize(
    "boundaries, error, words",
    [
        (3, TypeError, "must be a list or tuple"),
        ([], ValueError, "is empty"),
        ([1.5, 3], TypeError, "must be ints"),
        ([4, 2], ValueError, "must increase, but 4 comes before 2"),
    ],
)
def test_bucket_by_sequence_length_rejects_bad_boundaries_naming_them(boundaries, error, words):
    with tf.Graph().as_default():
        with pytest.raises(error, match=words):
            bucket_ops.bucket_by_sequence_length(tf.constant(1), [tf.constant(1.0)], 2, boundaries)


def test_bucket_rejects_lists_of_the_wrong_length():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"batch_size=\[2, 2\] must have exactly num_buckets \(3\) elements"):
            bucket_ops.bucket([tf.constant(1.0)], tf.constant(0), [2, 2], num_buckets=3)
        with pytest.raises(ValueError, match=r"bucket_capacities=\[4\] must have exactly num_buckets \(2\) elements"):
            bucket_ops.bucket([tf.constant(1.0)], tf.constant(0), 2, num_buckets=2, bucket_capacities=[4])


def _identity_graph():
    graph = tf.Graph()
    with graph.as_default():
        tf.identity(v1.placeholder(tf.float32, [None, 2], name="x") * 2.0, name="y")
    return graph.as_graph_def()


def test_create_inference_graph_checks_its_arguments_then_needs_tensorrt():
    graph_def = _identity_graph()
    with pytest.raises(ValueError, match="exactly one of input_graph_def and input_saved_model_dir"):
        contrib_tensorrt.create_inference_graph(graph_def, ["y"], input_saved_model_dir="/tmp/model")
    with pytest.raises(ValueError, match="precision_mode='FP64'"):
        contrib_tensorrt.create_inference_graph(graph_def, ["y"], precision_mode="FP64")
    with pytest.raises(ValueError, match="minimum_segment_size=0"):
        contrib_tensorrt.create_inference_graph(graph_def, ["y"], minimum_segment_size=0)
    assert contrib_tensorrt.tensorrt_enabled() is False  # this CPU build of TensorFlow 2.21
    with pytest.raises(RuntimeError, match=r"outputs=\['y'\]\): this TensorFlow was built without TensorRT"):
        contrib_tensorrt.create_inference_graph(graph_def, ["y"], max_batch_size=8, precision_mode="fp16")


SCRIPT = """
import json
import numpy as np
import tensorflow as tf
import tensorflow.contrib.tensorrt as trt
from tensorflow.contrib.training import bucket_by_sequence_length

n = tf.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(np.array([2, 1, 4, 5], np.int32))).get_next()
lengths, outputs = bucket_by_sequence_length(n, {"x": tf.fill([n], 1.0)}, 2, [3], dynamic_pad=True)
with tf.Session() as session:
    threads = tf.train.start_queue_runners(session)
    first, second = session.run([lengths, outputs["x"]]), session.run([lengths, outputs["x"]])
try:
    trt.create_inference_graph(input_graph_def=tf.get_default_graph().as_graph_def(), outputs=["x"])
    trt_error = None
except RuntimeError as error:
    trt_error = str(error)
print("RESULT " + json.dumps({
    "batches": [[a.tolist(), b.tolist()] for a, b in (first, second)],
    "same": tf.contrib.training.bucket is tf.contrib.training.bucket_ops.bucket,
    "trt_error": trt_error,
}))
"""


def test_zoo_import_paths_work_in_the_tf1_mode(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, SCRIPT)
    # the two buckets' batches in either order: their queue runners race, as in TensorFlow 1.15
    assert sorted(found["batches"]) == [[[2, 1], [[1.0, 1.0], [1.0, 0.0]]], [[4, 5], [[1.0] * 4 + [0.0], [1.0] * 5]]]
    assert found["same"] is True
    assert "built without TensorRT" in found["trt_error"]
