# SPDX-License-Identifier: MIT
"""What the slice's report scripts (validate-slice.py, slice-routing.py) share: decompressing a
committed capture and writing a report without ever leaving a half-written file."""
import lzma
import os
import shutil
import sys


def unxz(src, dst, die):
    """Decompress src (.xz) into dst; on a bad or missing file, die(message)."""
    try:
        with lzma.open(src) as f, open(dst, "wb") as g:
            shutil.copyfileobj(f, g)
    except (OSError, lzma.LZMAError) as e:
        die("%s: %s" % (src, e))


def refuse_input_as_output(path, inputs, die):
    """die(message) when the report path is one of the inputs (the same file, by inode): the
    report would replace what it was made from."""
    if not path or not os.path.exists(path):
        return
    for f in inputs:
        if f and os.path.exists(f) and os.path.samefile(path, f):
            die("%s is an input (%s); write the report elsewhere" % (path, f))


def write_report(text, path):
    """text to path through a temporary file and a rename (the old report stays whole until the
    new one is), or to standard output when path is empty."""
    if not path:
        sys.stdout.write(text)
        return
    if os.path.lexists(path) and not (os.path.isfile(path) and not os.path.islink(path)):
        # the rename would replace it: a device (/dev/null, as root), a directory, a link
        sys.exit("%s: not a regular file; the report is written by renaming a new file over it" % path)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
