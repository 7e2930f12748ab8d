"""python -m tpevent.compare OLD.json NEW.json: did NEW get slower than OLD.

    python -m tpevent.compare [--min-effect F] [--fail-on-slower] [--json] OLD NEW

OLD and NEW are saved results (schema "tpevent-results/1": ``python -m
tpevent.timeit --json``, ``tpevent bench --json``). Each entry is matched by name,
device and hot/cold with the other file's and given a verdict, as nvbench_compare
does for two nvbench runs: the change of the median, its interval (from the two
medians' 95 % intervals: [new_low / old_high, new_high / old_low]) and ``same``
(the interval within ± min_effect), ``faster`` or ``slower`` (wholly outside it) or
``undecided`` (tpevent.results says why). Entries of one file only are listed as
such. ``--json`` prints the rows as one JSON object instead of the table.

Exit status: 0; 1 with --fail-on-slower when an entry is ``slower`` (for regression
CI); 2 for a bad option or a file that is not such a document.

Importing this module (``import tpevent.compare``) makes the package's attribute
``compare`` this module, which would hide the function ``tpevent.compare``: the module
is therefore callable, as that function.
"""

import argparse
import json
import sys
import types

from . import _measure, results


def _effect(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: it must be a fraction in (0, 1)")
    return value


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m tpevent.compare",
        description="Compare two saved tpevent results (schema %s) entry by entry: faster, slower, same "
                    "or undecided, from the two medians' confidence intervals." % results.SCHEMA,
        epilog="exit status: 0; 1 with --fail-on-slower when an entry is slower; 2 for a bad option or file.",
    )
    parser.add_argument("old", metavar="OLD.json", help="the reference run")
    parser.add_argument("new", metavar="NEW.json", help="the run to judge")
    parser.add_argument("--min-effect", type=_effect, default=results.MIN_EFFECT, metavar="F",
                        help="the least relative change that is not 'same' (default %g: two runs apart share "
                             "no drift, unlike tpevent.compare's interleaved stretches)" % results.MIN_EFFECT)
    parser.add_argument("--fail-on-slower", action="store_true",
                        help="exit with status 1 when an entry is slower (regression CI)")
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON object")
    return parser


def main(argv=None):
    parser = _parser()
    options = parser.parse_args(argv)
    try:
        old, new = results.load(options.old), results.load(options.new)
    except results.ResultsError as failure:
        parser.error(str(failure))
    rows = results.compare(old, new, options.min_effect)
    if options.json:
        print(json.dumps({"schema": results.SCHEMA, "old": options.old, "new": options.new,
                          "min_effect": options.min_effect, "rows": rows}, ensure_ascii=False))
    else:
        print(results.table(rows, options.min_effect))
    slower = any(row["verdict"] == "slower" for row in rows)
    return 1 if options.fail_on_slower and slower else 0


class _CallableModule(types.ModuleType):
    """``tpevent.compare(a, b, ...)`` still works once this module was imported."""

    def __call__(self, *args, **kwargs):
        return _measure.compare(*args, **kwargs)


if __name__ == "__main__":
    sys.exit(main())
else:
    sys.modules[__name__].__class__ = _CallableModule
