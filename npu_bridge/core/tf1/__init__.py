"""The TF1 mode: Ascend TF1 scripts run as their authors wrote them (``python -m npu_bridge.tf1 train.py``).

User code gets a TensorFlow 1.x ``tensorflow`` (``tensorflow.compat.v1`` names, v2 behaviour off, legacy Keras,
``tensorflow.contrib`` and ``tensorflow.examples``); libraries keep the real TensorFlow 2 module. Pieces:
``environment`` (the variables that turn the mode on, also in child processes; TensorFlow-free), ``scope``
(which files are user code; the rule is ``runtime/user_code``'s, the ``__import__`` route ``runtime/user_imports``'s),
``facade`` (the ``tensorflow`` user code sees, and what its ``import tensorflow.<x>`` gives), ``shapes`` (integral
floats as shape dimensions in the facade's functions), ``random_seeds`` (random ops without a seed under
``TF_DETERMINISTIC_OPS``, as 1.15 ran them), ``contrib`` (the lazy ``tensorflow.contrib`` shim),
``aliases`` (add-only names TensorFlow 2.21 moved), ``mnist`` (the tutorials' MNIST reader) and ``mode`` (installs
them; ``main`` runs a script). Standalone ``keras`` and ``tensorflow.python.keras`` of user code are tf_keras
through the route the TF2 adapter shares (``runtime/legacy_modules``), which ``mode`` adds.

What contrib routes to, written here: ``optimizers`` (``contrib.opt``), ``image_transforms`` and ``matching``
(``contrib.image``), ``rnn_cells`` and ``rnn_linear`` (``contrib.rnn``'s extra cells), ``tpu`` (``contrib.tpu``
beyond the Estimator, which is ``npu_bridge.core.tf_estimator.tpu``), ``hparams`` and ``hparam_proto``
(``contrib.training.HParams``), ``contrib_nn`` (``contrib.nn``), ``distort_image_ops`` (``contrib.image``'s YIQ
adjustments), ``quantize`` (``contrib.quantize``), ``seq2seq`` and ``legacy_seq2seq`` (``contrib.seq2seq``,
``contrib.legacy_seq2seq``), ``mixed_precision`` (``contrib.mixed_precision``), ``tfprof`` (``contrib.tfprof``),
``contrib_data`` and ``distributions`` (``contrib.data``'s and ``contrib.distributions``' names TensorFlow 2.21
lacks), ``graph_editor`` (``contrib.graph_editor``), ``cudnn_rnn``, ``cudnn_initializers`` and ``functional_rnn``
(``contrib.cudnn_rnn``, its canonical weights' initializers, ``contrib.recurrent``), ``all_reduce``
(``contrib.all_reduce``), ``gradient_transforms`` (``contrib.estimator.clip_gradients_by_norm``),
``feeding_queue_runner`` (``contrib.training.FeedingQueueRunner``), ``tower_replication``
(``contrib.estimator.replicate_model_fn``), ``learn`` and ``learn_preprocessing`` (``contrib.learn``),
``contrib_tensor_util`` (``contrib.framework``'s ``tensor_util``), ``contrib_signatures`` (1.15 contrib's signatures
of ``lookup``, ``metrics.confusion_matrix`` and ``util.loader`` over TensorFlow's), ``contrib_cloud``
(``contrib.cloud``, accepted but unavailable), ``sparsemax`` (``contrib.sparsemax``), ``crf`` (``contrib.crf``),
``projector`` (``contrib.tensorboard``'s projector config), ``indexed_slices_gradients`` and ``rnn_cell_checks``
(1.x names ``aliases`` adds back). ``bucket_ops`` (``contrib.training.bucket``, ``bucket_by_sequence_length``),
``contrib_xla`` (``contrib.compiler.xla.estimator_model_fn``), ``contrib_distribute`` (``contrib.distribute``'s
``CollectiveAllReduceStrategy``), ``contrib_tensorrt`` (``contrib.tensorrt``); ``multi_gpu`` and ``backprop_reach``
(``keras.utils.multi_gpu_model``, ``gradients_util._IsBackpropagatable``, which ``aliases`` adds).
``internal_paths`` adds TensorFlow 1.15-internal modules to the route of ``runtime/legacy_modules``
(``tensorflow.python.estimator`` with ``estimator_internals``, the tf.data ``threadpool``, ``graph_transforms``).
``--py-compat`` installs ``runtime/py_compat``, the opt-in Python-level names both modes share."""
