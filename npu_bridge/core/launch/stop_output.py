"""What npu-run shows of a rank's stderr while it stops the job (Ctrl-C).

Until the launcher stops the job every line is passed on as it comes. From then on (``RankStderr.stop``):
  * TensorFlow's C++ log lines, with the lines its multi-line statuses go on with, are held back: aborted
    collectives, cancelled steps and start-up lines of ranks that are being stopped. The supervisor shows
    them (``held``) only for a rank that does not end as a stopped rank should, so real errors stay visible;
  * the Python traceback of an uncaught KeyboardInterrupt becomes the one line a rank running npu_bridge prints
    itself (``interrupt.interrupted_line``): that of a rank interrupted before it imported npu_bridge (a script
    still importing TensorFlow, say). A traceback that ends in anything else, or that is chained to another
    exception ("During handling of the above exception ..."), is passed on whole.
"""

import re

from npu_bridge.core.runtime import interrupt

# absl's format: "E0000 00:00:1795404316.569011   12771 ring_alg.cc:291] ...", and the line absl writes first.
_TF_LOG = re.compile(
    rb"[IWEF]\d{4} [\d:.]+ +\d+ [\w.+-]+:\d+\] |WARNING: All log messages before absl::InitializeLog\(\) is called"
)
_TF_LOG_CONTINUED = re.compile(
    rb"Additional GRPC error information|:[A-Z_]*:|:?\{|The error could be from a previous operation|\s|\[\[|"
    rb"To enable the following instructions"
)
_TRACEBACK = b"Traceback (most recent call last):"
_FRAME = re.compile(rb'  File "(.*)", line (\d+), in ')
_MARKERS = re.compile(rb"\s*[\^~]+\s*$")  # Python 3.11's "    ^^^^^" under a frame's source line
_INTERRUPT = re.compile(rb"KeyboardInterrupt(: .*)?$")
_CHAINED = (b"During handling of the above exception", b"The above exception was the direct cause")


class RankStderr:
    """Filters the stderr lines of one rank (see the module docstring); callers serialize the calls."""

    def __init__(self):
        self._reason = None  # the signal name the job is being stopped for; None until then
        self._in_log_record = False
        self._held = []
        self._traceback = None  # lines of a traceback being read, after the stop
        self._interrupt = None  # [traceback lines, the one line]: a KeyboardInterrupt traceback, unless chained
        self._chained = False

    def stop(self, signal_name):
        """From now on the job is being stopped because the launcher got ``signal_name`` (e.g. "SIGINT")."""
        self._reason = signal_name

    def held(self):
        """The TensorFlow log lines held back since the stop (and forgets them)."""
        held, self._held = self._held, []
        return held

    def feed(self, line):
        """Takes one line (bytes, ending in a newline); returns the lines to write now."""
        header = bool(_TF_LOG.match(line))
        continued = not header and self._in_log_record and bool(_TF_LOG_CONTINUED.match(line))
        if continued and self._traceback is not None and line.startswith(b" "):
            continued = False  # a line indented by spaces in a traceback belongs to the traceback
        self._in_log_record = header or continued
        if self._reason is None:
            return [line]
        if self._in_log_record:
            self._held.append(line)
            return []
        return self._python_output(line)

    def _python_output(self, line):
        if self._interrupt is not None:
            if not line.strip():
                self._interrupt[0].append(line)  # chained tracebacks are separated by an empty line
                return []
            lines, one_line = self._interrupt
            self._interrupt = None
            if line.startswith(_CHAINED):
                self._chained = True
                return lines + self._python_output(line)
            return [one_line] + self._python_output(line)
        if self._traceback is not None:
            self._traceback.append(line)
            if line.startswith(b" ") or not line.strip():  # a frame (Python may print a blank line in one)
                return []
            lines, self._traceback = self._traceback, None
            if self._chained or not _INTERRUPT.match(line.rstrip(b"\r\n")):
                self._chained = False
                return lines
            self._interrupt = [lines, self._one_line(lines)]
            return []
        if line.rstrip(b"\r\n") == _TRACEBACK:
            self._traceback = [line]
            return []
        return [line]

    def finish(self):
        """The rank's stderr ended: returns the lines still to write."""
        if self._interrupt is not None:
            lines, self._interrupt = [self._interrupt[1]], None
            return lines
        lines, self._traceback = self._traceback or [], None
        return lines

    def _one_line(self, lines):
        frames = []
        for i, line in enumerate(lines):
            match = _FRAME.match(line)
            if match:
                following = lines[i + 1] if i + 1 < len(lines) else b""
                code = following if following.startswith(b"    ") and not _MARKERS.match(following) else b""
                frames.append(
                    (match.group(1).decode("utf-8", "replace"), int(match.group(2)), code.decode("utf-8", "replace"))
                )
        text = interrupt.interrupted_line(self._reason, interrupt.place_of(frames))
        return text.encode("utf-8", "replace") + b"\n"
