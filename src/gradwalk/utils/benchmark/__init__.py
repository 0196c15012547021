"""``torch.utils.benchmark``: ``Timer`` (real timings with ``timeit``) and ``Compare``, printing
what PyTorch's print: a ``Measurement``'s median, IQR and warnings, and the comparison table.

    >>> t = Timer("x * 2", globals={"x": gradwalk.ones(3)})
    >>> m = t.blocked_autorange(min_run_time=0.01)
    >>> m.median > 0
    True
"""
import math
import textwrap
import timeit

import numpy as np

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25
_MIN_CONFIDENCE_INTERVAL = 25e-9
_MAX_SIGNIFICANT_FIGURES = 4
_UNITS = {-3: "ns", -2: "us", -1: "ms"}
_SCALES = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}
_ENGLISH = {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}


def select_unit(t):
    unit = _UNITS.get(int(math.log10(t) // 3), "s") if t > 0 else "s"
    return unit, _SCALES[unit]


def trim_sigfig(x, n):
    magnitude = int(math.ceil(math.log10(abs(x)))) if x else 0
    scale = 10 ** (magnitude - n)
    return float(np.round(x / scale) * scale)


class TaskSpec:
    def __init__(self, stmt, setup, label=None, sub_label=None, description=None, env=None,
                 num_threads=1):
        self.stmt, self.setup = stmt, setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if self.setup in ("pass", ""):
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


class Measurement:
    """The times of one statement: ``raw_times`` per block of ``number_per_run`` runs."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata
        sorted_times = np.sort(np.asarray(self.times, dtype=np.float64))
        self._sorted_times = tuple(sorted_times.tolist())
        self._median = float(np.quantile(sorted_times, 0.5))
        self._mean = float(sorted_times.mean())
        self._p25 = float(np.quantile(sorted_times, 0.25))
        self._p75 = float(np.quantile(sorted_times, 0.75))
        self._warnings = ()
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, msg):
        rel_iqr = self.iqr / self.median * 100
        self._warnings += (f"  WARNING: Interquartile range is {rel_iqr:.1f}% of the median "
                           f"measurement.\n           {msg}",)

    def __getattr__(self, name):  # stmt, label, sub_label, description, num_threads, env, ...
        if name in ("stmt", "setup", "label", "sub_label", "description", "env", "num_threads", "title"):
            return getattr(self.__dict__["task_spec"], name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        return self._median

    @property
    def mean(self):
        return self._mean

    @property
    def iqr(self):
        return self._p75 - self._p25

    @property
    def has_warnings(self):
        return bool(self._warnings)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def significant_figures(self):
        n = len(self._sorted_times)
        middle = np.asarray(self._sorted_times[n // 4:int(math.ceil(3 * n / 4))])
        std = float(middle.std()) if middle.size else 0.0
        ci = max(1.645 * std / math.sqrt(max(middle.size, 1)), _MIN_CONFIDENCE_INTERVAL)
        figures = int(math.floor(math.log10(self._median / ci)))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def as_row_name(self):
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    def __repr__(self):
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [f"<torch.utils.benchmark.utils.common.Measurement object at {hex(id(self))}>",
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to "
                         f"{self._p75 / scale:.2f})")
        threads = self.task_spec.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()


class Timer:
    """Time ``stmt`` (a string run with ``globals``, after ``setup``), as PyTorch's Timer."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timeit.default_timer,
                 globals=None, label=None, sub_label=None, description=None, env=None,  # noqa: A002
                 num_threads=1, language="python"):
        if language not in ("python", "py"):
            raise NotImplementedError("gradwalk: torch.utils.benchmark.Timer times Python statements only")
        self._globals = dict(globals or {})
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=textwrap.dedent(stmt).strip(), setup=textwrap.dedent(setup).strip(),
                                   label=label, sub_label=sub_label, description=description, env=env,
                                   num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        self._timeit(max(number // 100, 2))  # warm up
        return Measurement(number, [self._timeit(number)], self._task_spec)

    def _estimate_block_size(self, min_run_time):
        overhead = float(np.median([self._timeit(0) for _ in range(5)]))
        number = 1
        while True:
            taken = self._timeit(number)
            if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                return number
            if number * 10 > 2147483647:
                return number
            number *= 10

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        number = self._estimate_block_size(min_run_time)
        times, total = [], 0.0
        while total < min_run_time:
            spent = self._timeit(number)
            times.append(spent)
            total += spent
            if callback:
                callback(number, spent)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        number = self._estimate_block_size(min_run_time=0.05)
        times, total = [], 0.0
        while total < max_run_time:
            spent = self._timeit(number)
            times.append(spent)
            total += spent
            if callback:
                callback(number, spent)
            if total >= min_run_time and len(times) > 3 and \
                    Measurement(number, times, self._task_spec).meets_confidence(threshold):
                break
        return Measurement(number, times, self._task_spec)


class Compare:
    """A table of measurements: one block per label, a row per sub_label (or stmt), a column
    per description, times in one unit trimmed to their significant figures."""

    def __init__(self, results):
        self._results = list(results)
        self._trim = True

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        pass  # gradwalk prints plain text

    def highlight_warnings(self):
        pass

    def extend_results(self, results):
        self._results.extend(results)

    def print(self):
        print(str(self))

    def __str__(self):
        labels = list(dict.fromkeys(r.task_spec.label for r in self._results))
        return "\n".join(self._render(label) for label in labels)

    def _render(self, label):
        results = [r for r in self._results if r.task_spec.label == label]
        unit, scale = select_unit(min(r.median for r in results))
        row_keys = list(dict.fromkeys((r.task_spec.num_threads, r.as_row_name) for r in results))
        row_keys.sort(key=lambda k: k[0])
        col_keys = list(dict.fromkeys(r.task_spec.description for r in results))
        cells = {((r.task_spec.num_threads, r.as_row_name), r.task_spec.description): r for r in results}
        columns = []
        for col in col_keys:
            col_results = [cells.get((row, col)) for row in row_keys]
            digits = [int(math.ceil(math.log10(r.median / scale))) if r else None for r in col_results]
            unit_digits = max(d for d in digits if d is not None)
            decimals = min(max(r.significant_figures - d, 0) for d, r in zip(digits, col_results) if r)
            width = unit_digits + decimals + (1 if decimals else 0)
            columns.append([(f"{trim_sigfig(r.median / scale, r.significant_figures):>{width}.{decimals}f}"
                             if r else " " * width) for r in col_results])
        string_rows = [[""] + [c or "" for c in col_keys]]
        for i, (threads, name) in enumerate(row_keys):
            string_rows.append(["      " + name] + [col[i] for col in columns])  # "  " + the env column
        widths = [max(len(row[k]) for row in string_rows) for k in range(len(string_rows[0]))]
        header = "  |  ".join(c.center(w) for c, w in zip(string_rows[0], widths))
        lines = [header]
        prior_threads = None
        for (threads, _), row in zip(row_keys, string_rows[1:]):
            if threads != prior_threads:
                lines.append(f"{threads} threads: ".ljust(len(header), "-"))
                prior_threads = threads
            lines.append("  |  ".join([row[0].ljust(widths[0])] + [c.center(w) for c, w in zip(row[1:], widths[1:])]))
        title = f"[{(' ' + (label or '') + ' ').center(len(header) - 2, '-')}]"
        return f"{title}\n" + "\n".join(lines) + f"\n\nTimes are in {_ENGLISH[unit]}s ({unit}).\n"


__all__ = ["Timer", "Measurement", "Compare", "TaskSpec", "select_unit"]
