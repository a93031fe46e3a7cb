"""Reading a call's arguments out of a model's source text."""


def call_arguments(code, start, reach):
    """The text between the parenthesis opened just before ``start`` and the one that closes it, looking at most
    ``reach`` characters ahead; None when it does not close within them."""
    depth = 1
    for index in range(start, min(len(code), start + reach)):
        depth += {"(": 1, ")": -1}.get(code[index], 0)
        if depth == 0:
            return code[start:index]
    return None
