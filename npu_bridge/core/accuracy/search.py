"""The search: the smallest set of candidates whose float32 brings the metric back, one culprit at a time.

``good(kept)`` runs the script with the ops of ``kept`` in float32 and says whether its metric is within tolerance
of the reference. Given that keeping every candidate is good and keeping none is not, ``culprits`` binary-searches
the shortest good prefix of the ordered candidates: its last element is a culprit. The culprit stays kept and the
search goes on among the candidates before it, until the culprits found are good on their own. Each culprit costs
at most ``ceil(log2(n)) + 1`` runs for ``n`` candidates (``bound``). The metric is assumed to get better as more ops
are kept, as it does when each culprit's error is independent of the others'.
"""

import math


def bound(candidates, culprits=1):
    """The most runs ``culprits`` takes to find ``culprits`` culprits among ``candidates`` candidates."""
    if candidates <= 0:
        return 0
    return culprits * (math.ceil(math.log2(candidates)) + 1)


def culprits(items, good, max_culprits):
    """Returns (culprits in the order found, complete).

    Args:
      items: the ordered candidates; ``good(items)`` is true and ``good([])`` is false (the caller checked both).
      good: list of items -> bool.
      max_culprits: stop after this many.
    Returns:
      ``complete`` is True when the culprits alone are good; False when ``max_culprits`` were found first, or
      when no candidate is left and they are still not good (the metric does not improve op by op).
    """
    found = []
    high = len(items)  # invariant: good(found + items[:high]); good(found) is false
    while high > 0:
        low = 1
        while low < high:
            middle = (low + high) // 2
            if good(found + list(items[:middle])):
                high = middle
            else:
                low = middle + 1
        found.append(items[high - 1])
        high -= 1
        if good(found):
            return found, True
        if len(found) >= max_culprits:
            break
    return found, False
