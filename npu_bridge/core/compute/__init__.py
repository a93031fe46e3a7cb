"""NPU compute ops (``npu_ops``, ``npu_aicore_ops``, ``npu_unary_ops``, the NPU RNN layers) built from
TensorFlow ops, so they run on CPU and GPU and TensorFlow differentiates them.

activations    Gelu (tanh form), FastGelu, FastGeluV2 and PRelu, with their gradient formulas
attr_scopes    the attribute scopes of upstream's ``npu_scope``: ops built inside carry NPU hints as node attributes
op_attrs       the ``util`` functions that stamp NPU hints on existing ops
composite      Ascend ops computed with many TensorFlow ops, made to look like one op in dumps and profiles
dropout        NPU dropout: a mask from (shape, keep probability, seeds) only, then applied
keras_dropout  ``npu_convert_dropout``: Keras ``Dropout`` layers use NPU dropout
dynamic_rnn    the fused RNN layers ``DynamicRNN`` (LSTM), ``DynamicGRUV2`` and ``DynamicAUGRU``
static_rnn     ``npu_rnn.npu_dynamic_rnn``: a time-major RNN as upstream builds it, with ``tf.nn.static_rnn``
lstm_cell      ``npu_ops.basic_lstm_cell``: one LSTM cell step with all gate values returned
fused_adam     Ascend's fused Adam steps (``adam_apply_one_assign``, ``adam_apply_one_with_decay_assign``)
lars           LARS gradient updates (``npu_ops.LARS``, ``LARSV2``)
indexing       ScatterElements (ONNX semantics), NonZero and KMeansCentroids
random_choice  RandomChoiceWithMask (``npu_cpu_ops.randomchoicewithmask``): true positions drawn at random
normalization  LayerNorm (returning mean and variance) and Centralization
gen_ops        upstream's generated-op style names (``gen_npu_ops.drop_out_gen_mask`` & co)
tensors        conversion of op arguments that may be Python numbers or tensors
"""
