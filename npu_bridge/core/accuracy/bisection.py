"""One ``npu-debug bisect`` session: the reference, the script's own precision, the search, the files it writes.

Runs, in order (each one line of progress):
  1. reference: ``precision_mode=must_keep_origin_dtype``, dumping the first step to find the candidate ops
     (``candidates``); its metric is the reference;
  2. the script's own precision: if its metric is already within tolerance, there is nothing to find;
  3. every candidate kept in float32 (``customize_dtypes``): if that is not within tolerance either, op precision
     does not explain the divergence;
  4. the search (``search.culprits``) over op types, then over the op names of the culprit types (``--by both``),
     or over one of them;
  5. with culprit op types, one run with them in a ``modify_mixlist`` black list instead (mixed precision modes
     only: a script in another mode rejects modify_mixlist, and then only ``customize_dtypes`` is written).
The customize_dtypes file written is the one of a run whose metric was within tolerance.
"""

import dataclasses
import os
from typing import List

from npu_bridge.core.accuracy import candidates, fix_files, metric, search
from npu_bridge.core.runtime import atomic_write, inert_text
from npu_bridge.core.runtime.errors import BisectError, shortened_text

REFERENCE_OPTIONS = {
    "precision_mode": "must_keep_origin_dtype",
    "precision_mode_v2": None,
    "modify_mixlist": None,
    "customize_dtypes": None,
}
FIXED_RUNS = 3  # the reference, the script's own precision, every candidate kept
BY = ("both", "name", "type")
CUSTOMIZE_FILE = "customize_dtypes.cfg"
MIXLIST_FILE = "modify_mixlist.json"
REPORT_FILE = "bisect_report.txt"
_TAIL_LINES = 15


@dataclasses.dataclass(frozen=True)
class Settings:
    """What to search and how (the command line's choices)."""

    pattern: object  # the compiled --metric regex
    rtol: float
    atol: float
    by: str
    max_culprits: int
    output_dir: str


@dataclasses.dataclass(frozen=True)
class Run:
    """One run: its number, what it kept in float32, its metric and whether that is within tolerance."""

    number: int
    label: str
    metric: float
    within: bool
    seconds: float


@dataclasses.dataclass
class Outcome:
    """What a bisection found.

    Attributes:
      status: "fixed" (culprits found, the files bring the metric back), "clean" (the script's own precision is
        within tolerance), "unexplained" (keeping every op in float32 is not), "partial" (the search stopped at
        --max-culprits, or the metric did not improve op by op).
      reference, baseline: the metric of the reference and of the script's own precision.
      ops: the candidate ops.
      culprit_types, culprit_names: what the search kept (``fix_files.Kept``).
      files: {what: path} of the files written.
      runs: every run.
      notes: sentences for the report.
      bound: the most runs the search could take, as announced.
    """

    status: str = ""
    reference: float = float("nan")
    baseline: float = float("nan")
    ops: list = dataclasses.field(default_factory=list)
    culprit_types: list = dataclasses.field(default_factory=list)
    culprit_names: list = dataclasses.field(default_factory=list)
    files: dict = dataclasses.field(default_factory=dict)
    runs: List[Run] = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)
    bound: int = 0


def run_bound(ops, by, culprits):
    """The most runs a bisection of ``ops`` takes to find ``culprits`` culprits."""
    types = len({op.type for op in ops})
    runs = FIXED_RUNS
    if by in ("both", "type"):
        runs += search.bound(types, culprits) + 1  # the modify_mixlist check
    if by in ("both", "name"):
        runs += search.bound(len(ops), culprits)
    return runs


class Bisection:
    """Runs one bisection with a ``script_runs.ScriptRunner``, printing a line per run through ``echo``."""

    def __init__(self, settings, runner, work_dir, echo=inert_text.echo):
        self.settings = settings
        self.runner = runner
        self.work_dir = work_dir
        self.echo = echo
        self.outcome = Outcome()
        self._tried = {}  # customize_dtypes text -> Run

    def run(self):
        """Returns the ``Outcome``; writes the files into the output directory.

        Raises:
          BisectError: the command fails, or prints no metric, in a run (the message says which run and why).
        """
        out = self.outcome
        dump_dir = os.path.join(self.work_dir, "dump")
        os.makedirs(dump_dir, mode=0o700)
        dump = {"enable_dump": True, "dump_path": dump_dir, "dump_step": "0", "dump_mode": "output"}
        out.reference = self._measure(
            "reference (must_keep_origin_dtype)",
            {**REFERENCE_OPTIONS, **dump},
            {"NPU_BRIDGE_DUMP_GOLDEN": "0"},
            is_reference=True,
        ).metric
        if out.reference != out.reference or out.reference in (float("inf"), float("-inf")):
            raise BisectError(f"the reference run's metric is {out.reference}: a reference must be a finite number")
        out.ops = candidates.discover(dump_dir)
        types = fix_files.by_type(out.ops)
        out.bound = run_bound(out.ops, self.settings.by, self.settings.max_culprits)
        self.echo(
            f"npu-debug bisect: {len(out.ops)} candidate ops of {len(types)} types; at most "
            f"{run_bound(out.ops, self.settings.by, 1)} runs to find one culprit, {out.bound} for up to "
            f"{self.settings.max_culprits} (--max-culprits)"
        )
        baseline = self._measure("the script's own precision", {})
        out.baseline = baseline.metric
        if baseline.within:
            out.status = "clean"
            out.notes.append("The script's own precision mode gives the reference's metric: nothing to keep.")
            return out
        everything = types if self.settings.by in ("both", "type") else fix_files.by_name(out.ops)
        if not self._good(everything, f"every {'op type' if everything is types else 'op'}"):
            out.status = "unexplained"
            out.notes.append(
                "Keeping every op in float32 does not bring the metric within tolerance: the divergence does not "
                "come from op precision (compare the reference's and the script's other settings)."
            )
            return out
        complete = True
        if self.settings.by in ("both", "type"):
            out.culprit_types, complete = search.culprits(types, self._good, self.settings.max_culprits)
        if self.settings.by in ("both", "name") and complete:
            chosen = {kept.target for kept in out.culprit_types}
            ops = [op for op in out.ops if op.type in chosen] if chosen else out.ops
            names, complete = search.culprits(fix_files.by_name(ops), self._good, self.settings.max_culprits)
            if complete or not out.culprit_types:
                out.culprit_names = names
            else:
                out.notes.append("Keeping single ops did not suffice; the op types are the answer.")
                complete = True
        out.status = "fixed" if complete else "partial"
        if not complete:
            out.notes.append(
                "The search stopped before the metric came back (--max-culprits reached, or the metric does not "
                "improve op by op); the files keep what was found so far."
            )
        self._write_files()
        return out

    def _write_files(self):
        out = self.outcome
        os.makedirs(self.settings.output_dir, exist_ok=True)
        kept = out.culprit_names or out.culprit_types
        path = os.path.join(self.settings.output_dir, CUSTOMIZE_FILE)
        atomic_write.write_output(path, fix_files.customize_dtypes(kept), "customize_dtypes file")
        out.files["customize_dtypes"] = path
        if out.culprit_types and out.status == "fixed":
            text = fix_files.modify_mixlist(entry.target for entry in out.culprit_types)
            trial = os.path.join(self.work_dir, MIXLIST_FILE)
            atomic_write.write_text(trial, text)
            result = self._measure(
                "the culprit op types in a modify_mixlist black list",
                {"modify_mixlist": trial, "customize_dtypes": None},
                required=False,
            )
            if result is None:
                out.notes.append(
                    "modify_mixlist is not written: the script rejected it (modify_mixlist needs a mixed precision "
                    "mode, allow_mix_precision* or mixed_*); use customize_dtypes."
                )
            elif not result.within:
                out.notes.append("modify_mixlist is not written: black-listing the op types did not suffice.")
            else:
                path = os.path.join(self.settings.output_dir, MIXLIST_FILE)
                atomic_write.write_output(path, text, "modify_mixlist file")
                out.files["modify_mixlist"] = path

    def _good(self, kept, label=None):
        """Runs the script with ``kept`` in float32 (once per distinct file); True when within tolerance."""
        text = fix_files.customize_dtypes(kept)
        if text not in self._tried:
            path = os.path.join(self.work_dir, f"kept_{self.runner.count + 1}.cfg")
            atomic_write.write_text(path, text)
            if label is None:
                label = _describe(kept)
            self._tried[text] = self._measure(f"keeping {label} in float32", {"customize_dtypes": path})
        return self._tried[text].within

    def _measure(self, label, options, extra_env=None, required=True, is_reference=False):
        """Runs the script once; returns its ``Run`` (None for a failed run that is not ``required``).

        Raises:
          BisectError: a required run fails, times out or prints no metric.
        """
        number = self.runner.count + 1
        try:
            result = self.runner.run(options, extra_env)
        except OSError as e:
            raise BisectError(
                f"cannot start the command {shortened_text(' '.join(self.runner.command))}: {e.strerror or e}"
            ) from None
        where = f"run {number} ({label})"
        if result.timed_out or result.returncode != 0:
            if not required:
                self._progress(number, label, None, False, result.seconds)
                return None
            status = "timed out" if result.timed_out else f"exited with status {result.returncode}"
            raise BisectError(f"the command {status} in {where}; the end of its output:\n{_tail(result)}")
        value = metric.find(self.settings.pattern, result.stdout, result.stderr)
        if value is None and not required:
            self._progress(number, label, None, False, result.seconds)
            return None
        if value is None:
            raise BisectError(
                f"the command printed no line matching --metric {shortened_text(self.settings.pattern.pattern)} in "
                f"{where}; the end of its output:\n{_tail(result)}"
            )
        within = is_reference or metric.within(value, self.outcome.reference, self.settings.rtol, self.settings.atol)
        run = Run(number, label, value, within, result.seconds)
        self.outcome.runs.append(run)
        self._progress(number, label, value, None if is_reference else within, result.seconds)
        return run

    def _progress(self, number, label, value, within, seconds):
        total = f" of at most {self.outcome.bound}" if self.outcome.bound else ""
        if value is None:
            shown = "failed"
        elif within is None:
            shown = f"metric {value:.6g}"
        else:
            verdict = "within tolerance" if within else "off"
            shown = f"metric {value:.6g} ({verdict}; reference {self.outcome.reference:.6g})"
        self.echo(f"run {number}{total}: {inert_text.value(label)}: {shown} [{seconds:.1f} s]")


def _describe(kept):
    if not kept:
        return "no op"
    if len(kept) == 1:
        return kept[0].describe()
    word = "op types" if kept[0].selector == fix_files.TYPE else "ops"
    return f"{len(kept)} {word}"


def _tail(result):
    lines = (result.stderr.strip() or result.stdout.strip()).splitlines()[-_TAIL_LINES:]
    return "\n".join("  " + inert_text.value(line) for line in lines) or "  (no output)"
