"""``tf.contrib.crf`` of the TF1 mode: TensorFlow 1.15's linear-chain conditional random field, on TensorFlow 2.21.

A linear-chain CRF scores a tag sequence y of a sequence of length L with unary scores u [L, num_tags] and a
transition matrix A [num_tags, num_tags] as s(y) = sum_t u[t, y_t] + sum_{t >= 1} A[y_{t-1}, y_t]. The log
likelihood of y is s(y) - log Z with log Z = logsumexp over all sequences of s, computed by the forward algorithm
(alpha_0 = u[0], alpha_t[j] = u[t, j] + logsumexp_i(alpha_{t-1}[i] + A[i, j]), log Z = logsumexp(alpha_{L-1})).
Decoding finds argmax_y s(y) by the Viterbi recursion (the same with max in place of logsumexp).

The tensor functions build graph ops that work with v1 and v2 control flow; ``viterbi_decode`` works on NumPy
arrays. Batches hold sequences of different lengths, padded to ``max_seq_len``: positions at or beyond a sequence's
length do not count. A sequence of length 0 has score 0 and log norm 0 (as in TensorFlow 1.15).
"""

import numpy as np
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError

__all__ = [
    "CrfForwardRnnCell",
    "crf_binary_score",
    "crf_decode",
    "crf_forward",
    "crf_log_likelihood",
    "crf_log_norm",
    "crf_multitag_sequence_score",
    "crf_sequence_score",
    "crf_unary_score",
    "viterbi_decode",
]


def crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params):
    """The unnormalized score of tag sequences: unary scores plus transition scores, up to each sequence's length.

    Args:
      inputs: [batch_size, max_seq_len, num_tags] float tensor of unary potentials.
      tag_indices: [batch_size, max_seq_len] int32 tensor of tags.
      sequence_lengths: [batch_size] integer tensor of sequence lengths.
      transition_params: [num_tags, num_tags] tensor of transition scores (from tag i to tag j at [i, j]).

    Returns:
      A [batch_size] tensor of scores.

    Raises:
      NpuArgumentError: a static shape does not fit the others.
      NpuArgumentTypeError: ``tag_indices`` or ``sequence_lengths`` is not an integer tensor.
    """
    inputs, tag_indices, sequence_lengths, transition_params = _checked(
        "crf_sequence_score", inputs, sequence_lengths, transition_params, tag_indices
    )
    return _unary_score(tag_indices, sequence_lengths, inputs) + _binary_score(
        tag_indices, sequence_lengths, transition_params
    )


def crf_multitag_sequence_score(inputs, tag_bitmap, sequence_lengths, transition_params):
    """The unnormalized score of every tag sequence a bitmap allows, summed in log space: logsumexp of s(y) over the
    sequences y with ``tag_bitmap[b, t, y_t]`` true at every position t < sequence_lengths[b].

    With one tag allowed per position (one-hot bitmaps) this is ``crf_sequence_score``. It is the log norm of the
    inputs with the forbidden tags' potentials set to -inf; when ``max_seq_len`` is 1 it is the logsumexp of the
    allowed potentials, whatever the length (as in TensorFlow 1.15).

    Args:
      inputs: [batch_size, max_seq_len, num_tags] float tensor of unary potentials.
      tag_bitmap: [batch_size, max_seq_len, num_tags] bool tensor: the tags allowed at each position.
      sequence_lengths: [batch_size] integer tensor of sequence lengths.
      transition_params: [num_tags, num_tags] tensor of transition scores.

    Returns:
      A [batch_size] tensor of scores (-inf for a sequence whose bitmap allows no tag at some position).

    Raises:
      NpuArgumentError: a static shape does not fit the others (``tag_bitmap``'s must be ``inputs``').
      NpuArgumentTypeError: ``tag_bitmap`` is not a bool tensor, or ``sequence_lengths`` not an integer tensor.
    """
    inputs, _, sequence_lengths, transition_params = _checked(
        "crf_multitag_sequence_score", inputs, sequence_lengths, transition_params
    )
    tag_bitmap = tf.convert_to_tensor(tag_bitmap, name="tag_bitmap")
    if tag_bitmap.dtype != tf.bool:
        raise NpuArgumentTypeError(
            f"crf_multitag_sequence_score: tag_bitmap has dtype {tag_bitmap.dtype.name}; it must be a bool tensor"
        )
    if not tag_bitmap.shape.is_compatible_with(inputs.shape):
        raise NpuArgumentError(
            f"crf_multitag_sequence_score: tag_bitmap has shape {tag_bitmap.shape}; it must be the shape of inputs "
            f"{inputs.shape} ([batch_size, max_seq_len, num_tags])"
        )
    allowed = tf.where(tag_bitmap, inputs, tf.fill(tf.shape(inputs), tf.constant(-np.inf, inputs.dtype)))

    def single():
        return tf.reduce_logsumexp(allowed, axis=[1, 2])

    def several():
        return _log_norm(allowed, sequence_lengths, transition_params)

    time = inputs.shape[1]
    if time is not None:
        return single() if time == 1 else several()
    return tf.cond(tf.equal(tf.shape(inputs)[1], 1), single, several)


def crf_unary_score(tag_indices, sequence_lengths, inputs):
    """The unary part of the score: sum of inputs[b, t, tag_indices[b, t]] over t < sequence_lengths[b].

    Args:
      tag_indices: [batch_size, max_seq_len] int32 tensor of tags.
      sequence_lengths: [batch_size] integer tensor of sequence lengths.
      inputs: [batch_size, max_seq_len, num_tags] float tensor of unary potentials.

    Returns:
      A [batch_size] tensor of unary scores.

    Raises:
      NpuArgumentError: a static shape does not fit the others.
      NpuArgumentTypeError: ``tag_indices`` or ``sequence_lengths`` is not an integer tensor.
    """
    inputs, tag_indices, sequence_lengths, _ = _checked("crf_unary_score", inputs, sequence_lengths, None, tag_indices)
    return _unary_score(tag_indices, sequence_lengths, inputs)


def crf_binary_score(tag_indices, sequence_lengths, transition_params):
    """The transition part of the score: sum of transition_params[tag_{t-1}, tag_t] over 1 <= t < sequence_lengths[b].

    Args:
      tag_indices: [batch_size, max_seq_len] int32 tensor of tags.
      sequence_lengths: [batch_size] integer tensor of sequence lengths.
      transition_params: [num_tags, num_tags] tensor of transition scores.

    Returns:
      A [batch_size] tensor of transition scores.

    Raises:
      NpuArgumentError: a static shape does not fit the others.
      NpuArgumentTypeError: ``tag_indices`` or ``sequence_lengths`` is not an integer tensor.
    """
    _, tag_indices, sequence_lengths, transition_params = _checked(
        "crf_binary_score", None, sequence_lengths, transition_params, tag_indices
    )
    return _binary_score(tag_indices, sequence_lengths, transition_params)


def crf_log_norm(inputs, sequence_lengths, transition_params):
    """The log partition function log Z of each sequence, by the forward algorithm.

    Args:
      inputs: [batch_size, max_seq_len, num_tags] float tensor of unary potentials.
      sequence_lengths: [batch_size] integer tensor of sequence lengths.
      transition_params: [num_tags, num_tags] tensor of transition scores.

    Returns:
      A [batch_size] tensor: logsumexp of the scores of all tag sequences of each length (0 for length 0).

    Raises:
      NpuArgumentError: a static shape does not fit the others.
      NpuArgumentTypeError: ``sequence_lengths`` is not an integer tensor.
    """
    inputs, _, sequence_lengths, transition_params = _checked(
        "crf_log_norm", inputs, sequence_lengths, transition_params
    )
    return _log_norm(inputs, sequence_lengths, transition_params)


def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
    """The log likelihood of tag sequences under a linear-chain CRF.

    Args:
      inputs: [batch_size, max_seq_len, num_tags] float tensor of unary potentials.
      tag_indices: [batch_size, max_seq_len] int32 tensor of the gold tags.
      sequence_lengths: [batch_size] integer tensor of sequence lengths.
      transition_params: [num_tags, num_tags] tensor of transition scores; None creates the variable
        ``transitions`` with ``tf.compat.v1.get_variable`` in the current variable scope.

    Returns:
      (log_likelihood, transition_params): a [batch_size] tensor of sequence score - log norm, and the transition
      matrix used (the new variable when ``transition_params`` was None).

    Raises:
      NpuArgumentError: a static shape does not fit the others, or ``transition_params`` is None and the number of
        tags (the last dimension of ``inputs``) is not known statically.
      NpuArgumentTypeError: ``tag_indices`` or ``sequence_lengths`` is not an integer tensor.
    """
    inputs = _float_tensor("crf_log_likelihood", "inputs", inputs)
    if transition_params is None:
        num_tags = _dims(inputs, 3)[2] if inputs.shape.rank == 3 else None
        if num_tags is None:
            raise NpuArgumentError(
                f"crf_log_likelihood: inputs has shape {inputs.shape}; without transition_params its last dimension "
                "(num_tags) must be known to create the [num_tags, num_tags] 'transitions' variable; pass inputs "
                "of rank 3 with a static last dimension, or pass transition_params"
            )
        transition_params = tf.compat.v1.get_variable("transitions", [num_tags, num_tags])
    checked = _checked("crf_log_likelihood", inputs, sequence_lengths, transition_params, tag_indices)
    inputs, tag_indices, sequence_lengths, transitions = checked
    score = _unary_score(tag_indices, sequence_lengths, inputs) + _binary_score(
        tag_indices, sequence_lengths, transitions
    )
    return score - _log_norm(inputs, sequence_lengths, transitions), transition_params


def crf_forward(inputs, state, transition_params, sequence_lengths):
    """The forward algorithm's alpha values at the last position of each sequence.

    Args:
      inputs: [batch_size, max_seq_len - 1, num_tags] float tensor: the unary potentials from position 1 on.
      state: [batch_size, num_tags] float tensor: the alpha values at position 0 (the unary potentials there).
      transition_params: [num_tags, num_tags] tensor of transition scores.
      sequence_lengths: [batch_size] integer tensor of the sequence lengths (counting position 0).

    Returns:
      A [batch_size, num_tags] tensor: alpha at position max(sequence_lengths - 1, 0) of each sequence.

    Raises:
      NpuArgumentError: a static shape does not fit the others.
      NpuArgumentTypeError: ``sequence_lengths`` is not an integer tensor.
    """
    inputs, _, sequence_lengths, transition_params = _checked(
        "crf_forward", inputs, sequence_lengths, transition_params
    )
    state = _float_tensor("crf_forward", "state", state)
    num_tags = _dims(inputs, 3)[2]
    if state.shape.rank is not None and not _fits(_dims(state, 2), [None, num_tags]):
        raise NpuArgumentError(
            f"crf_forward: state has shape {state.shape}; it must be [batch_size, num_tags] with num_tags = "
            f"{num_tags} (the last dimension of inputs)"
        )
    return _forward(inputs, state, transition_params, sequence_lengths)


class CrfForwardRnnCell(tf.compat.v1.nn.rnn_cell.RNNCell):
    """One step of the forward algorithm as an RNN cell: state alpha_{t-1} -> alpha_t (also the output).

    alpha_t[b, j] = inputs[b, j] + logsumexp_i(alpha_{t-1}[b, i] + transition_params[i, j]). Run it with
    ``tf.compat.v1.nn.dynamic_rnn`` over the unary potentials from position 1 on, with the potentials at position 0
    as the initial state and ``sequence_length`` = lengths - 1: the final state is alpha at each sequence's end.

    Args:
      transition_params: [num_tags, num_tags] tensor of transition scores.

    Raises:
      NpuArgumentError: ``transition_params`` is not a square matrix.
    """

    def __init__(self, transition_params):
        super().__init__()
        self._transition_params = _transitions("CrfForwardRnnCell", transition_params)
        self._num_tags = _dims(self._transition_params, 2)[0]

    @property
    def state_size(self):
        return self._num_tags

    @property
    def output_size(self):
        return self._num_tags

    def __call__(self, inputs, state, scope=None):
        """One step.

        Args:
          inputs: [batch_size, num_tags] unary potentials at position t.
          state: [batch_size, num_tags] alpha values at position t - 1.
          scope: unused (the cell has no variables).

        Returns:
          (new_alphas, new_alphas): the [batch_size, num_tags] alpha values at position t, as output and state.
        """
        new_alphas = _forward_step(state, inputs, self._transition_params)
        return new_alphas, new_alphas


def viterbi_decode(score, transition_params):
    """The best tag sequence of one sequence, in NumPy (outside the graph).

    Args:
      score: [seq_len, num_tags] array of unary potentials.
      transition_params: [num_tags, num_tags] array of transition scores.

    Returns:
      (viterbi, viterbi_score): the best tags as a list of seq_len ints, and its score as a float.

    Raises:
      NpuArgumentError: ``score`` is not a non-empty [seq_len, num_tags] array, or ``transition_params`` is not a
        [num_tags, num_tags] array.
    """
    score = np.asarray(score)
    transition_params = np.asarray(transition_params)
    if score.ndim != 2 or score.shape[0] == 0:
        raise NpuArgumentError(
            f"viterbi_decode: score has shape {score.shape}; it must be [seq_len, num_tags] with seq_len >= 1"
        )
    num_tags = score.shape[1]
    if transition_params.shape != (num_tags, num_tags):
        raise NpuArgumentError(
            f"viterbi_decode: transition_params has shape {transition_params.shape}; it must be "
            f"[num_tags, num_tags] = {(num_tags, num_tags)} (num_tags is the last dimension of score)"
        )
    best = score[0]
    backpointers = []
    for unary in score[1:]:
        candidates = best[:, None] + transition_params  # [previous tag, tag]
        backpointers.append(np.argmax(candidates, axis=0))
        best = unary + np.max(candidates, axis=0)
    tags = [int(np.argmax(best))]
    for pointers in reversed(backpointers):
        tags.append(int(pointers[tags[-1]]))
    tags.reverse()
    return tags, float(np.max(best))


def crf_decode(potentials, transition_params, sequence_length):
    """The best tag sequences of a batch, by the Viterbi algorithm in the graph.

    Args:
      potentials: [batch_size, max_seq_len, num_tags] float tensor of unary potentials.
      transition_params: [num_tags, num_tags] tensor of transition scores.
      sequence_length: [batch_size] integer tensor of sequence lengths.

    Returns:
      (decode_tags, best_score): a [batch_size, max_seq_len] int32 tensor of the best tags (0 at and beyond each
      sequence's length) and a [batch_size] tensor of their scores (0 for length 0).

    Raises:
      NpuArgumentError: a static shape does not fit the others.
      NpuArgumentTypeError: ``sequence_length`` is not an integer tensor.
    """
    potentials, _, lengths, transition_params = _checked(
        "crf_decode", potentials, sequence_length, transition_params, names=("potentials", "sequence_length")
    )
    num_tags = tf.shape(potentials)[2]
    identity = tf.range(num_tags)[None, :]  # a back pointer that keeps the tag, for position 0 and the padding
    time_major = tf.transpose(potentials, [1, 0, 2])
    positions = tf.range(tf.shape(potentials)[1])

    def forward(carry, elems):
        previous, _ = carry
        unary, t = elems
        candidates = previous[:, :, None] + transition_params[None]  # [batch, previous tag, tag]
        best = tf.where(tf.equal(t, 0), unary, unary + tf.reduce_max(candidates, axis=1))
        pointers = tf.where(tf.equal(t, 0), identity, tf.argmax(candidates, axis=1, output_type=tf.int32))
        valid = (t < lengths)[:, None]
        return tf.where(valid, best, previous), tf.where(valid, pointers, identity)

    batch = tf.shape(potentials)[0]
    initial = (tf.zeros_like(potentials[:, 0, :]), tf.zeros([batch, num_tags], tf.int32))
    scores, pointers = tf.scan(forward, (time_major, positions), initializer=initial)
    final = scores[-1]
    # tags[t] = pointers[t + 1][tags[t + 1]]; past the end the pointers are the identity, so the last position holds
    # the best last tag; scanning backwards over pointers[1:] followed by the identity yields tags[T-1], ..., tags[0].
    shifted = tf.concat([pointers[1:], tf.broadcast_to(identity, [1, batch, num_tags])], axis=0)

    def backward(tags, pointers_after):
        return tf.gather(pointers_after, tags, batch_dims=1)

    last = tf.argmax(final, axis=1, output_type=tf.int32)
    tags = tf.transpose(tf.scan(backward, shifted, initializer=last, reverse=True))
    mask = tf.sequence_mask(lengths, tf.shape(potentials)[1])
    decode_tags = tf.where(mask, tags, tf.zeros_like(tags))
    best_score = tf.where(lengths > 0, tf.reduce_max(final, axis=1), tf.zeros_like(final[:, 0]))
    return decode_tags, best_score


# -- implementation ------------------------------------------------------------------------------------------------


def _unary_score(tag_indices, lengths, inputs):
    chosen = tf.gather(inputs, tag_indices, batch_dims=2)  # [batch, max_seq_len]
    mask = tf.sequence_mask(lengths, tf.shape(inputs)[1], dtype=inputs.dtype)
    return tf.reduce_sum(chosen * mask, axis=1)


def _binary_score(tag_indices, lengths, transition_params):
    pairs = tf.stack([tag_indices[:, :-1], tag_indices[:, 1:]], axis=2)  # [batch, max_seq_len - 1, 2]
    chosen = tf.gather_nd(transition_params, pairs)
    mask = tf.sequence_mask(lengths, tf.shape(tag_indices)[1], dtype=transition_params.dtype)[:, 1:]
    return tf.reduce_sum(chosen * mask, axis=1)


def _log_norm(inputs, lengths, transition_params):
    alphas = _forward(inputs[:, 1:, :], inputs[:, 0, :], transition_params, lengths)
    log_norm = tf.reduce_logsumexp(alphas, axis=1)
    return tf.where(lengths > 0, log_norm, tf.zeros_like(log_norm))


def _forward_step(alphas, unary, transition_params):
    return unary + tf.reduce_logsumexp(alphas[:, :, None] + transition_params[None], axis=1)


def _forward(rest, first, transition_params, lengths):
    def step(alphas, elems):
        unary, t = elems
        # rest[:, t] is position t + 1: sequences that ended before it keep their alphas
        return tf.where((t + 1 < lengths)[:, None], _forward_step(alphas, unary, transition_params), alphas)

    time_major = tf.transpose(rest, [1, 0, 2])
    # foldl, not scan: a batch of length-1 sequences leaves no steps, and foldl then returns the initial alphas
    return tf.foldl(step, (time_major, tf.range(tf.shape(rest)[1])), initializer=first)


def _float_tensor(function, name, value):
    tensor = tf.convert_to_tensor(value, name=name)
    if not tensor.dtype.is_floating:
        raise NpuArgumentTypeError(f"{function}: {name} has dtype {tensor.dtype.name}; it must be a float tensor")
    return tensor


def _integer_tensor(function, name, value):
    tensor = tf.convert_to_tensor(value, name=name)
    if not tensor.dtype.is_integer:
        raise NpuArgumentTypeError(
            f"{function}: {name} has dtype {tensor.dtype.name}; it must be an integer tensor (int32 or int64)"
        )
    return tensor


def _transitions(function, value):
    transitions = _float_tensor(function, "transition_params", value)
    rank = transitions.shape.rank
    if rank is not None and (rank != 2 or not _fits(_dims(transitions, 2)[:1], _dims(transitions, 2)[1:])):
        raise NpuArgumentError(
            f"{function}: transition_params has shape {transitions.shape}; it must be a square "
            "[num_tags, num_tags] matrix"
        )
    return transitions


def _dims(tensor, rank):
    """The static dimensions of ``tensor`` as ints or None ([None] * rank when its rank is unknown)."""
    return tensor.shape.as_list() if tensor.shape.rank is not None else [None] * rank


def _fits(dims, wanted):
    return len(dims) == len(wanted) and all(a is None or b is None or a == b for a, b in zip(dims, wanted))


def _checked(function, inputs, lengths, transition_params, tag_indices=None, names=("inputs", "sequence_lengths")):
    """The arguments as tensors (int32 tags and lengths), after checking the static shapes fit one another."""
    inputs_name, lengths_name = names
    lengths = tf.cast(_integer_tensor(function, lengths_name, lengths), tf.int32)
    if lengths.shape.rank not in (None, 1):
        raise NpuArgumentError(
            f"{function}: {lengths_name} has shape {lengths.shape}; it must be a [batch_size] vector"
        )
    batch, time, num_tags = _dims(lengths, 1)[0], None, None
    if inputs is not None:
        inputs = _float_tensor(function, inputs_name, inputs)
        if inputs.shape.rank not in (None, 3):
            raise NpuArgumentError(
                f"{function}: {inputs_name} has shape {inputs.shape}; it must be [batch_size, max_seq_len, num_tags]"
            )
        dims = _dims(inputs, 3)
        if not _fits(dims[:1], [batch]):
            raise NpuArgumentError(
                f"{function}: {inputs_name} has shape {inputs.shape} and {lengths_name} has shape "
                f"{lengths.shape}; their first dimensions (batch_size) must be equal"
            )
        batch, time, num_tags = batch if dims[0] is None else dims[0], dims[1], dims[2]
    if tag_indices is not None:
        tag_indices = tf.cast(_integer_tensor(function, "tag_indices", tag_indices), tf.int32)
        if tag_indices.shape.rank is not None and not _fits(_dims(tag_indices, 2), [batch, time]):
            raise NpuArgumentError(
                f"{function}: tag_indices has shape {tag_indices.shape}; it must be [batch_size, max_seq_len] = "
                f"{[batch, time]} (None: any)"
            )
    if transition_params is not None:
        transition_params = _transitions(function, transition_params)
        if not _fits(_dims(transition_params, 2), [num_tags, num_tags]):
            raise NpuArgumentError(
                f"{function}: transition_params has shape {transition_params.shape}; it must be "
                f"[num_tags, num_tags] with num_tags = {num_tags} (the last dimension of {inputs_name})"
            )
    if inputs is not None and transition_params is not None and transition_params.dtype != inputs.dtype:
        raise NpuArgumentTypeError(
            f"{function}: transition_params has dtype {transition_params.dtype.name} and {inputs_name} "
            f"{inputs.dtype.name}; they must be the same"
        )
    return inputs, tag_indices, lengths, transition_params
