"""``tf.contrib.seq2seq`` of TensorFlow 1.15 for the TF1 mode, written here on TensorFlow 2.21's graph-mode APIs.

Modules, one job each: ``decoder`` (``Decoder``, ``dynamic_decode``), ``helpers`` (the ``Helper`` classes),
``sampling`` (their Bernoulli and categorical samplers), ``basic_decoder`` (``BasicDecoder``), ``attention``
(Bahdanau and Luong mechanisms, ``hardmax``), ``monotonic`` (monotonic attention), ``attention_wrapper``
(``AttentionWrapper``), ``beam_search_ops`` (``gather_tree``, the ``GatherTree`` kernel in TensorFlow ops),
``beam_tiling`` (``tile_batch``, ``gather_tree_from_array``), ``beam_search`` (``BeamSearchDecoder``,
``BeamSearchDecoderV2``; upstream's ``beam_search_decoder`` module, re-exporting ``tile_batch``) and ``loss``
(``sequence_loss``). Variable names and scopes are TensorFlow 1.15's, so its checkpoints restore. The contrib shim
routes upstream's deep module paths (``contrib.seq2seq.python.ops.attention_wrapper``, ...) to these modules."""

from npu_bridge.core.tf1.seq2seq.attention import AttentionMechanism, BahdanauAttention, LuongAttention, hardmax
from npu_bridge.core.tf1.seq2seq.attention_wrapper import AttentionWrapper, AttentionWrapperState
from npu_bridge.core.tf1.seq2seq.basic_decoder import BasicDecoder, BasicDecoderOutput
from npu_bridge.core.tf1.seq2seq.beam_search import (
    BeamSearchDecoder,
    BeamSearchDecoderOutput,
    BeamSearchDecoderState,
    BeamSearchDecoderV2,
    FinalBeamSearchDecoderOutput,
    tile_batch,
)
from npu_bridge.core.tf1.seq2seq.beam_search_ops import gather_tree
from npu_bridge.core.tf1.seq2seq.decoder import Decoder, dynamic_decode
from npu_bridge.core.tf1.seq2seq.helpers import (
    CustomHelper,
    GreedyEmbeddingHelper,
    Helper,
    InferenceHelper,
    SampleEmbeddingHelper,
    ScheduledEmbeddingTrainingHelper,
    ScheduledOutputTrainingHelper,
    TrainingHelper,
)
from npu_bridge.core.tf1.seq2seq.loss import sequence_loss
from npu_bridge.core.tf1.seq2seq.monotonic import (
    BahdanauMonotonicAttention,
    LuongMonotonicAttention,
    monotonic_attention,
    safe_cumprod,
)

__all__ = [
    "AttentionMechanism",
    "AttentionWrapper",
    "AttentionWrapperState",
    "BahdanauAttention",
    "BahdanauMonotonicAttention",
    "BasicDecoder",
    "BasicDecoderOutput",
    "BeamSearchDecoder",
    "BeamSearchDecoderOutput",
    "BeamSearchDecoderState",
    "BeamSearchDecoderV2",
    "CustomHelper",
    "Decoder",
    "FinalBeamSearchDecoderOutput",
    "GreedyEmbeddingHelper",
    "Helper",
    "InferenceHelper",
    "LuongAttention",
    "LuongMonotonicAttention",
    "SampleEmbeddingHelper",
    "ScheduledEmbeddingTrainingHelper",
    "ScheduledOutputTrainingHelper",
    "TrainingHelper",
    "dynamic_decode",
    "gather_tree",
    "hardmax",
    "monotonic_attention",
    "safe_cumprod",
    "sequence_loss",
    "tile_batch",
]
