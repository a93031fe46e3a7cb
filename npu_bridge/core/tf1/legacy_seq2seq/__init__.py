"""``tf.contrib.legacy_seq2seq`` of TensorFlow 1.15 for the TF1 mode, written here: ``decoders`` (``rnn_decoder``,
``attention_decoder`` and their embedding versions), ``models`` (the seq2seq models built on them), ``losses``
(``sequence_loss``, ``sequence_loss_by_example``, ``model_with_buckets``) and ``wrappers`` (contrib.rnn's
``EmbeddingWrapper`` and ``OutputProjectionWrapper`` the models use). Variable names are TensorFlow 1.15's. The
package is also upstream's module ``contrib.legacy_seq2seq.python.ops.seq2seq``.
"""

from npu_bridge.core.tf1.legacy_seq2seq.decoders import (
    attention_decoder,
    embedding_attention_decoder,
    embedding_rnn_decoder,
    rnn_decoder,
)
from npu_bridge.core.tf1.legacy_seq2seq.losses import model_with_buckets, sequence_loss, sequence_loss_by_example
from npu_bridge.core.tf1.legacy_seq2seq.models import (
    basic_rnn_seq2seq,
    embedding_attention_seq2seq,
    embedding_rnn_seq2seq,
    embedding_tied_rnn_seq2seq,
    one2many_rnn_seq2seq,
    tied_rnn_seq2seq,
)

__all__ = [
    "attention_decoder",
    "basic_rnn_seq2seq",
    "embedding_attention_decoder",
    "embedding_attention_seq2seq",
    "embedding_rnn_decoder",
    "embedding_rnn_seq2seq",
    "embedding_tied_rnn_seq2seq",
    "model_with_buckets",
    "one2many_rnn_seq2seq",
    "rnn_decoder",
    "sequence_loss",
    "sequence_loss_by_example",
    "tied_rnn_seq2seq",
]
