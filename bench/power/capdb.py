# SPDX-License-Identifier: MIT
"""What the bench/power scripts share: a word or float option taken out of an argument list, the
nvidia-smi samples of a clock-probe run, a k3sim capture opened as SQLite (an .xz one decompressed to a temporary file, removed on close), the
total length of a set of intervals (kernels that overlap counted once), and a report written to a
file or stdout (a file through a temporary one renamed into place)."""
import contextlib
import csv
import datetime
import lzma
import os
import sqlite3
import sys
import tempfile


def take_str(args, name, default, what="a value"):
    """The word after `name` in args (both removed); default where absent; a missing word exits with
    a message naming `what`."""
    if name in args:
        i = args.index(name)
        if i + 1 >= len(args):
            raise SystemExit("%s: expected %s after it" % (name, what))
        v = args[i + 1]
        del args[i:i + 2]
        return v
    return default


def take_float(args, name, default):
    """The value after `name` in args (both removed), as a float; default where absent."""
    v = take_str(args, name, None, "a number")
    if v is None:
        return default
    try:
        return float(v)
    except ValueError:
        raise SystemExit("%s: expected a number, not '%s'" % (name, v))


def number(x):
    """float(x), NaN where x is not a number."""
    try:
        return float(x)
    except ValueError:
        return float("nan")


def read_probe_smi(folder):
    """clock-probe.sh's nvidia-smi samples in folder/smi.csv (or smi.csv.xz), sorted by time: tuples
    (unix s, SM MHz, power.draw W, power.draw.instant W, temperature C, clock-event reasons as
    written); lines that are not samples are skipped."""
    path = os.path.join(folder, "smi.csv")
    f = lzma.open(path + ".xz", "rt") if not os.path.exists(path) and os.path.exists(path + ".xz") else open(path)
    rows = []
    with f:
        for r in csv.reader(f):
            if len(r) < 6:
                continue
            try:
                t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").replace(
                    tzinfo=datetime.timezone.utc).timestamp()
            except ValueError:
                continue
            rows.append((t, number(r[1]), number(r[2]), number(r[3]), number(r[4]), r[5].strip()))
    rows.sort()
    return rows


def read_probe_segments(out, tool):
    """clock-probe's batches.csv in folder out by segment: [name, [(start s, end s, TFLOP/s, probe
    MHz)]], a new segment where the batch number is 0 or the name changes; a row without a column or
    with a batch number that is not one exits with tool's name, the file and the line."""
    segs = []  # [name, [(start_s, end_s, tflops, probe_mhz)]]
    path = os.path.join(out, "batches.csv")
    num = number
    with open(path) as f:
        rows = csv.DictReader(f)
        for r in rows:
            try:
                if int(r["batch"]) == 0 or not segs or segs[-1][0] != r["segment"]:
                    segs.append([r["segment"], []])
                end = num(r["host_unix_s"])
                segs[-1][1].append((end - num(r["batch_ms"]) * 1e-3, end, num(r["tflops"]), num(r["probe_mhz"])))
            except KeyError as e:
                sys.exit("%s: %s:%d: no column %s" % (tool, path, rows.line_num, e))
            except (TypeError, ValueError):
                sys.exit("%s: %s:%d: a row short of columns or a batch number that is not one"
                         % (tool, path, rows.line_num))
    return segs


@contextlib.contextmanager
def open_capture(path):
    """A sqlite3 connection to the capture at path (DB or DB.xz)."""
    tmp = None
    try:
        if path.endswith(".xz"):
            fd, tmp = tempfile.mkstemp(suffix=".db")
            with os.fdopen(fd, "wb") as f, lzma.open(path) as src:
                f.write(src.read())
            path = tmp
        c = sqlite3.connect(path)
        try:
            yield c
        finally:
            c.close()
    finally:
        if tmp:
            os.unlink(tmp)


def union_ns(intervals):
    """The length of the union of (start, end) intervals."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def write_report(text, out, inputs=()):
    """text to the file out (written to out.tmp, then renamed over it), or to stdout where out is None;
    an out that is one of the files in inputs (the same file, by device and inode) is refused: the
    caller exits with a message and the input is left as it was."""
    for path in inputs:
        try:
            if os.path.exists(out or "") and os.path.samefile(out, path):
                raise SystemExit("%s: the output is an input (%s); not written" % (out, path))
        except OSError:
            pass
    if not out:
        import sys
        sys.stdout.write(text)
        return
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, out)
