# A TPU-era classifier, run as it is written:
#   python -m npu_bridge.tf1 examples/tf1_tpu_classifier.py --output_dir /tmp/tpu_classifier
#
# It is written the way BERT's run_classifier.py and its Ascend ports are: TensorFlow 1.x names (tf.flags,
# tf.python_io, tf.FixedLenFeature), TFRecord input through tf.contrib.data.map_and_batch, a model_fn_builder returning
# tf.contrib.tpu.TPUEstimatorSpec with scaffold_fn and eval_metrics, a TPU cluster resolver in a branch not taken,
# and tf.contrib.tpu.TPUEstimator(use_tpu=FLAGS.use_tpu). npu_bridge's TF1 mode runs it as TensorFlow 1.15 ran
# use_tpu=False (docs/tf1_mode.md); --use_tpu=true runs the same one-replica model and says so.
import json
import os

import numpy as np
import tensorflow as tf

flags = tf.flags
FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", None, "where checkpoints go")
flags.DEFINE_bool("use_tpu", False, "whether to use a TPU")
flags.DEFINE_string("tpu_name", None, "the TPU")
flags.DEFINE_integer("train_batch_size", 16, "train batch")
flags.DEFINE_integer("eval_batch_size", 32, "eval batch")
flags.DEFINE_integer("num_train_steps", 40, "steps")
flags.DEFINE_integer("iterations_per_loop", 10, "steps per TPU loop")


def write_examples(path, count, seed):
    rng = np.random.RandomState(seed)
    with tf.python_io.TFRecordWriter(path) as writer:
        for _ in range(count):
            features = rng.randn(8).astype(np.float32)
            label = int(features[:4].sum() > features[4:].sum())
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "features": tf.train.Feature(float_list=tf.train.FloatList(value=features)),
                        "label_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                    }
                )
            )
            writer.write(example.SerializeToString())


def input_fn_builder(input_file, is_training, drop_remainder):
    name_to_features = {
        "features": tf.FixedLenFeature([8], tf.float32),
        "label_ids": tf.FixedLenFeature([], tf.int64),
    }

    def _decode_record(record, name_to_features):
        example = tf.parse_single_example(record, name_to_features)
        example["label_ids"] = tf.to_int32(example["label_ids"])
        return example

    def input_fn(params):
        batch_size = params["batch_size"]
        d = tf.data.TFRecordDataset(input_file)
        if is_training:
            d = d.repeat()
            d = d.shuffle(buffer_size=100, seed=1)
        d = d.apply(
            tf.contrib.data.map_and_batch(
                lambda record: _decode_record(record, name_to_features),
                batch_size=batch_size,
                drop_remainder=drop_remainder,
            )
        )
        return d

    return input_fn


def create_model(features, is_training, num_labels):
    hidden = tf.layers.dense(features, 16, activation=tf.nn.relu, name="hidden")
    if is_training:
        hidden = tf.nn.dropout(hidden, keep_prob=0.9)
    output_weights = tf.get_variable(
        "output_weights", [num_labels, 16], initializer=tf.truncated_normal_initializer(stddev=0.02)
    )
    output_bias = tf.get_variable("output_bias", [num_labels], initializer=tf.zeros_initializer())
    logits = tf.nn.bias_add(tf.matmul(hidden, output_weights, transpose_b=True), output_bias)
    return logits


def model_fn_builder(num_labels, learning_rate, use_tpu):
    def model_fn(features, labels, mode, params):
        is_training = mode == tf.estimator.ModeKeys.TRAIN
        label_ids = features["label_ids"]
        logits = create_model(features["features"], is_training, num_labels)
        log_probs = tf.nn.log_softmax(logits, axis=-1)
        one_hot_labels = tf.one_hot(label_ids, depth=num_labels, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(one_hot_labels * log_probs, axis=-1)
        total_loss = tf.reduce_mean(per_example_loss)

        scaffold_fn = None
        if use_tpu:

            def tpu_scaffold():
                return tf.train.Scaffold()

            scaffold_fn = tpu_scaffold

        if mode == tf.estimator.ModeKeys.TRAIN:
            optimizer = tf.train.AdamOptimizer(learning_rate)
            if use_tpu:
                optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
            train_op = optimizer.minimize(total_loss, global_step=tf.train.get_or_create_global_step())
            return tf.contrib.tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, scaffold_fn=scaffold_fn
            )
        if mode == tf.estimator.ModeKeys.EVAL:

            def metric_fn(per_example_loss, label_ids, logits):
                predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
                accuracy = tf.metrics.accuracy(labels=label_ids, predictions=predictions)
                loss = tf.metrics.mean(values=per_example_loss)
                return {"eval_accuracy": accuracy, "eval_loss": loss}

            eval_metrics = (metric_fn, [per_example_loss, label_ids, logits])
            return tf.contrib.tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, eval_metrics=eval_metrics, scaffold_fn=scaffold_fn
            )
        return tf.contrib.tpu.TPUEstimatorSpec(
            mode=mode, predictions={"probabilities": tf.nn.softmax(logits)}, scaffold_fn=scaffold_fn
        )

    return model_fn


def main(_):
    tf.logging.set_verbosity(tf.logging.WARN)
    tf.gfile.MakeDirs(FLAGS.output_dir)
    train_file = os.path.join(FLAGS.output_dir, "train.tf_record")
    eval_file = os.path.join(FLAGS.output_dir, "eval.tf_record")
    write_examples(train_file, 256, seed=0)
    write_examples(eval_file, 64, seed=1)

    tpu_cluster_resolver = None
    if FLAGS.use_tpu and FLAGS.tpu_name:
        tpu_cluster_resolver = tf.contrib.cluster_resolver.TPUClusterResolver(FLAGS.tpu_name)
    is_per_host = tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2
    run_config = tf.contrib.tpu.RunConfig(
        cluster=tpu_cluster_resolver,
        model_dir=FLAGS.output_dir,
        save_checkpoints_steps=20,
        tf_random_seed=1,
        tpu_config=tf.contrib.tpu.TPUConfig(
            iterations_per_loop=FLAGS.iterations_per_loop, num_shards=8, per_host_input_for_training=is_per_host
        ),
    )
    estimator = tf.contrib.tpu.TPUEstimator(
        use_tpu=FLAGS.use_tpu,
        model_fn=model_fn_builder(2, 0.01, FLAGS.use_tpu),
        config=run_config,
        train_batch_size=FLAGS.train_batch_size,
        eval_batch_size=FLAGS.eval_batch_size,
        predict_batch_size=8,
    )
    estimator.train(input_fn=input_fn_builder(train_file, True, True), max_steps=FLAGS.num_train_steps)
    result = estimator.evaluate(input_fn=input_fn_builder(eval_file, False, False))
    predictions = list(estimator.predict(input_fn=input_fn_builder(eval_file, False, False)))
    print(
        "RESULT "
        + json.dumps(
            {
                "name": "tpu_classifier",
                "value": {
                    "accuracy": float(result["eval_accuracy"]),
                    "loss": float(result["eval_loss"]),
                    "global_step": int(result["global_step"]),
                    "predictions": len(predictions),
                    "probability_sum": float(sum(p["probabilities"].sum() for p in predictions)),
                },
            }
        )
    )


if __name__ == "__main__":
    flags.mark_flag_as_required("output_dir")
    tf.app.run()
