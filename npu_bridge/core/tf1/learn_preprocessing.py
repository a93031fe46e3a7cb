"""``tf.contrib.learn.preprocessing`` of TensorFlow 1.15 (deprecated there): ``VocabularyProcessor``, the word
vocabulary of TF1-era text models, with its ``CategoricalVocabulary`` and ``tokenizer``.

Plain Python and numpy, as upstream: documents are split into tokens by ``TOKENIZER_RE``, tokens get ids in the
order they are first seen (0 is the unknown token ``<UNK>``), and ``transform`` gives each document
``max_document_length`` ids, cut or padded with 0. ``save`` / ``restore`` pickle the processor.
"""

import collections
import pickle
import re

import numpy as np
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, NpuUsageError

__all__ = ["CategoricalVocabulary", "TOKENIZER_RE", "VocabularyProcessor", "tokenizer"]

# runs of capitals (an acronym), a capitalized word followed by a capital, or a run of word characters, ' and -
TOKENIZER_RE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z][a-z]+(?=[A-Z])|[\'\w\-]+", re.UNICODE)


def tokenizer(iterator):
    """Splits each string of ``iterator`` into its tokens.

    Args:
      iterator: an iterable of strings.
    Yields:
      The list of tokens of each string.
    Raises:
      NpuArgumentTypeError: an element is not a string.
    """
    for value in iterator:
        if not isinstance(value, str):
            raise NpuArgumentTypeError(f"tokenizer: documents must be strings, given: {value!r}")
        yield TOKENIZER_RE.findall(value)


class CategoricalVocabulary:
    """Ids for categories (words), in the order they are first added; id 0 is ``unknown_token``.

    Args:
      unknown_token: the category of id 0, which unknown categories get once the vocabulary is frozen.
      support_reverse: whether ``reverse`` (id -> category) is kept.
    """

    def __init__(self, unknown_token="<UNK>", support_reverse=True):
        self._unknown_token = unknown_token
        self._support_reverse = support_reverse
        self._mapping = {unknown_token: 0}
        self._reverse_mapping = [unknown_token] if support_reverse else None
        self._freq = collections.defaultdict(int)
        self._freeze = False

    def __len__(self):
        """The number of ids, the unknown token's included."""
        return len(self._mapping)

    def freeze(self, freeze=True):
        """Freezes the vocabulary (new categories then get id 0), or unfreezes it."""
        self._freeze = freeze

    def get(self, category):
        """The id of ``category``; an unknown one gets the next id, or 0 when the vocabulary is frozen."""
        found = self._mapping.get(category)
        if found is not None:
            return found
        if self._freeze:
            return 0
        self._mapping[category] = len(self._mapping)
        if self._support_reverse:
            self._reverse_mapping.append(category)
        return self._mapping[category]

    def add(self, category, count=1):
        """Counts ``count`` occurrences of ``category`` (giving it an id if it has none and the vocabulary is open)."""
        if self.get(category) > 0:
            self._freq[category] += count

    def trim(self, min_frequency, max_frequency=-1):
        """Keeps the categories seen more than ``min_frequency`` times (and, when ``max_frequency`` > 0, fewer than
        ``max_frequency`` times), renumbered 1.. by decreasing count, ties in sorted order."""
        by_name = sorted(self._freq.items(), key=lambda item: (isinstance(item[0], str), item[0]))
        ordered = sorted(by_name, key=lambda item: item[1], reverse=True)
        self._mapping = {self._unknown_token: 0}
        if self._support_reverse:
            self._reverse_mapping = [self._unknown_token]
        kept = {}
        for category, count in ordered:
            if max_frequency > 0 and count >= max_frequency:
                continue
            if count <= min_frequency:
                break
            self._mapping[category] = len(self._mapping)
            if self._support_reverse:
                self._reverse_mapping.append(category)
            kept[category] = count
        self._freq = kept

    def reverse(self, class_id):
        """The category of id ``class_id``.

        Raises:
          NpuUsageError: the vocabulary was made with ``support_reverse=False``.
        """
        if not self._support_reverse:
            raise NpuUsageError("CategoricalVocabulary.reverse needs a vocabulary made with support_reverse=True")
        return self._reverse_mapping[class_id]


class VocabularyProcessor:
    """Maps documents to sequences of word ids.

    Args:
      max_document_length: the number of ids per document: longer documents are cut, shorter ones padded with 0.
      min_frequency: ``fit`` keeps only words seen more than this many times (0: every word).
      vocabulary: a ``CategoricalVocabulary`` to use (default: a new one).
      tokenizer_fn: a function from an iterable of documents to an iterable of token lists (default ``tokenizer``).
    Raises:
      NpuArgumentError: ``max_document_length`` is not a positive int, ``min_frequency`` is negative.
    """

    def __init__(self, max_document_length, min_frequency=0, vocabulary=None, tokenizer_fn=None):
        if isinstance(max_document_length, bool) or not isinstance(max_document_length, (int, np.integer)):
            raise NpuArgumentError(
                f"VocabularyProcessor: max_document_length must be a positive int, given: {max_document_length!r}"
            )
        if max_document_length <= 0:
            raise NpuArgumentError(
                f"VocabularyProcessor: max_document_length must be a positive int, given: {max_document_length!r}"
            )
        if min_frequency < 0:
            raise NpuArgumentError(f"VocabularyProcessor: min_frequency must be >= 0, given: {min_frequency!r}")
        self.max_document_length = int(max_document_length)
        self.min_frequency = min_frequency
        self.vocabulary_ = vocabulary if vocabulary else CategoricalVocabulary()
        self._tokenizer = tokenizer_fn if tokenizer_fn else tokenizer

    def fit(self, raw_documents, unused_y=None):
        """Learns the vocabulary of ``raw_documents`` (an iterable of strings), then freezes it.

        Returns:
          self.
        """
        for tokens in self._tokenizer(raw_documents):
            for token in tokens:
                self.vocabulary_.add(token)
        if self.min_frequency > 0:
            self.vocabulary_.trim(self.min_frequency)
        self.vocabulary_.freeze()
        return self

    def fit_transform(self, raw_documents, unused_y=None):
        """``fit`` then ``transform`` (``raw_documents`` must be iterable twice, e.g. a list).

        Returns:
          An iterator of int64 arrays [max_document_length].
        """
        self.fit(raw_documents)
        return self.transform(raw_documents)

    def transform(self, raw_documents):
        """The word ids of each document: ``max_document_length`` int64 ids, unknown words and padding 0.

        Yields:
          One int64 array [max_document_length] per document.
        """
        for tokens in self._tokenizer(raw_documents):
            ids = np.zeros(self.max_document_length, np.int64)
            for index, token in enumerate(tokens[: self.max_document_length]):
                ids[index] = self.vocabulary_.get(token)
            yield ids

    def reverse(self, documents):
        """The words of id sequences, joined by spaces (id 0 is ``<UNK>``).

        Yields:
          One string per sequence.
        """
        for item in documents:
            yield " ".join(self.vocabulary_.reverse(class_id) for class_id in item)

    def save(self, filename):
        """Pickles the processor to ``filename`` (any path ``tf.io.gfile`` writes)."""
        with tf.io.gfile.GFile(filename, "wb") as f:
            f.write(pickle.dumps(self))

    @classmethod
    def restore(cls, filename):
        """The processor ``save`` wrote to ``filename`` (unpickled: load only files you trust)."""
        with tf.io.gfile.GFile(filename, "rb") as f:
            return pickle.loads(f.read())
