# SPDX-License-Identifier: MIT
"""The checks of the slice scripts' tests (tests/slice/test-*.py): one "ok - NAME" or "not ok - NAME"
line a check, the detail of a failure as "# " comment lines, and done() ends the test with exit 1
when any check failed; run_script() runs the script under test; write_smi() writes a clock-probe
run's nvidia-smi samples (tests/power)."""
import lzma
import os
import subprocess
import sys


def run_script(script, *args):
    """python3 script args...: (exit status, stdout, stderr)."""
    p = subprocess.run([sys.executable, script] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write_smi(folder, lines, xz=False):
    """lines into folder/smi.csv, or folder/smi.csv.xz (xz), as clock-probe.sh leaves them."""
    if xz:
        with lzma.open(os.path.join(folder, "smi.csv.xz"), "wt") as f:
            f.writelines(lines)
    else:
        with open(os.path.join(folder, "smi.csv"), "w") as f:
            f.writelines(lines)


class Tap:
    def __init__(self):
        self.fails = 0

    def check(self, name, cond, detail=""):
        print("%s - %s" % ("ok" if cond else "not ok", name))
        if not cond:
            self.fails += 1
            sys.stdout.write("# " + detail.replace("\n", "\n# ") + "\n")

    def done(self):
        print("# %d failed" % self.fails)
        sys.exit(1 if self.fails else 0)
