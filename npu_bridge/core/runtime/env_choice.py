"""Environment variables that take one of a few words."""

from npu_bridge.core.runtime.errors import EnvironmentVariableError, shortened


def one_of(environ, name, choices, meaning):
    """Returns the value of variable ``name`` (spaces around it removed), ``choices[0]`` when unset or empty.

    Args:
      environ: mapping of environment variables.
      name: the variable.
      choices: the words allowed, the default first.
      meaning: what the words mean, for the error message.
    Raises:
      EnvironmentVariableError: another value, named with the words allowed.
    """
    text = environ.get(name, "").strip()
    if not text:
        return choices[0]
    if text not in choices:
        raise EnvironmentVariableError(
            f"{name} has invalid value {shortened(environ[name])}: must be one of {', '.join(choices)} ({meaning})"
        )
    return text
