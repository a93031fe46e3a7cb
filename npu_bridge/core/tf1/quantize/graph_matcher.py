"""Tree patterns over a ``tf.Graph`` (``tf.contrib.quantize.python.graph_matcher`` of TensorFlow 1.15's API).

A pattern describes an op and, optionally, the ops producing its inputs: ``OpTypePattern("Relu",
inputs=[OpTypePattern("BiasAdd")])``. ``GraphMatcher(pattern).match_graph(graph)`` yields a ``MatchResult`` for
every op the pattern matches when rooted there; the result maps each sub-pattern (or its ``name``) to the op it
matched and the tensor through which the op was reached.
"""

import itertools

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError

_MAX_UNORDERED_INPUTS = 8  # permutations of more inputs would be too many to try


class Pattern:
    """What every pattern is: ``match(op, tensor)`` gives a ``MatchResult`` or None."""

    name = None

    def match(self, op, tensor):
        raise NotImplementedError(f"{type(self).__name__} must implement match(op, tensor)")


class OpTypePattern(Pattern):
    """Matches an op by its type and, when ``inputs`` is given, its inputs' producers.

    Args:
      op_type: an op type ("Conv2D"), several separated by "|" ("Relu|Relu6"), or "*" for any.
      name: a name to look the match up by in the ``MatchResult`` (optional).
      inputs: None (any inputs), or one pattern (or op type string) per input of the op; the op must have exactly
        that many inputs.
      ordered_inputs: False: any order of the inputs matches.
    Raises:
      NpuArgumentError: more than 8 inputs with ``ordered_inputs=False``.
      NpuArgumentTypeError: ``op_type`` is not a string.
    """

    def __init__(self, op_type, name=None, inputs=None, ordered_inputs=True):
        if not isinstance(op_type, str):
            raise NpuArgumentTypeError(f"OpTypePattern: op_type must be a string such as 'Conv2D', given {op_type!r}")
        inputs = list(inputs or [])
        if not ordered_inputs and len(inputs) > _MAX_UNORDERED_INPUTS:
            raise NpuArgumentError(
                f"OpTypePattern: at most {_MAX_UNORDERED_INPUTS} inputs are allowed when ordered_inputs is False, "
                f"given {len(inputs)}"
            )
        self._types = None if op_type == "*" else frozenset(op_type.split("|"))
        self._op_type = op_type
        self.name = name
        self._inputs = [each if isinstance(each, Pattern) else OpTypePattern(each) for each in inputs]
        self._ordered = ordered_inputs

    def match(self, op, tensor):
        if self._types is not None and op.type not in self._types:
            return None
        result = MatchResult()
        result.add(self, op, tensor)
        if not self._inputs:
            return result
        if len(op.inputs) != len(self._inputs):
            return None
        orders = [self._inputs] if self._ordered else itertools.permutations(self._inputs)
        for order in orders:
            combined = _match_inputs(op, order)
            if combined is not None:
                result.merge_from(combined)
                return result
        return None

    def __repr__(self):
        return f"OpTypePattern({self._op_type!r})"


class OneofPattern(Pattern):
    """Matches the first of ``sub_patterns`` that matches.

    Args:
      sub_patterns: a list of patterns.
    """

    def __init__(self, sub_patterns):
        self._sub_patterns = list(sub_patterns)

    def match(self, op, tensor):
        for pattern in self._sub_patterns:
            result = pattern.match(op, tensor)
            if result is not None:
                return result
        return None


class MatchResult:
    """The ops and tensors a match bound to its patterns.

    ``get_op(pattern_or_name)`` / ``get_tensor(pattern_or_name)`` give None for a pattern the match did not use
    (a branch of a ``OneofPattern`` not taken). The tensor of a pattern is the output of its op that the op of the
    enclosing pattern reads (None for the root).
    """

    def __init__(self):
        self._bound = {}
        self._names = {}

    def add(self, pattern, op, tensor):
        """Binds ``pattern`` to ``op`` and ``tensor``.

        Raises:
          NpuArgumentError: another pattern already has ``pattern``'s name.
        """
        self._bound[pattern] = (op, tensor)
        if pattern.name is not None:
            if self._names.get(pattern.name, pattern) is not pattern:
                raise NpuArgumentError(f"MatchResult: name {pattern.name!r} is already bound to another pattern")
            self._names[pattern.name] = pattern

    def get_op(self, pattern_or_name):
        bound = self._lookup(pattern_or_name)
        return bound[0] if bound else None

    def get_tensor(self, pattern_or_name):
        bound = self._lookup(pattern_or_name)
        return bound[1] if bound else None

    def merge_from(self, other):
        self._bound.update(other._bound)
        self._names.update(other._names)

    def _lookup(self, pattern_or_name):
        if isinstance(pattern_or_name, str):
            pattern_or_name = self._names.get(pattern_or_name)
            if pattern_or_name is None:
                return None
        elif not isinstance(pattern_or_name, Pattern):
            raise NpuArgumentTypeError(
                f"MatchResult: expected a Pattern or a pattern's name, given {type(pattern_or_name).__name__}"
            )
        return self._bound.get(pattern_or_name)


class GraphMatcher:
    """Finds where ``pattern`` matches.

    Args:
      pattern: the ``Pattern`` to look for, rooted at each op tried.
    """

    def __init__(self, pattern):
        if not isinstance(pattern, Pattern):
            raise NpuArgumentTypeError(f"GraphMatcher: pattern must be a Pattern, given {pattern!r}")
        self._pattern = pattern

    def match_op(self, op):
        """The ``MatchResult`` of ``pattern`` rooted at ``op``, or None."""
        return self._pattern.match(op, None)

    def match_ops(self, ops):
        """Yields the ``MatchResult`` of every op of ``ops`` the pattern matches, in order."""
        for op in ops:
            result = self.match_op(op)
            if result is not None:
                yield result

    def match_graph(self, graph):
        """Yields the ``MatchResult`` of every op of ``graph`` the pattern matches, in creation order."""
        yield from self.match_ops(graph.get_operations())


def _match_inputs(op, patterns):
    combined = MatchResult()
    for tensor, pattern in zip(op.inputs, patterns):
        result = pattern.match(tensor.op, tensor)
        if result is None:
            return None
        combined.merge_from(result)
    return combined
