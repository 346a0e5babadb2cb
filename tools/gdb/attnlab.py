# Loads attnlab's gdb support (tools/gdb/attnlab_gdb/) into gdb.
#
#   gdb -iex "source tools/gdb/attnlab.py" --args build/debug/attnlab run worked-example
#   scripts/gdb run worked-example        (the same, through the wrapper)
#
# The Debug build also writes build/debug/attnlab-gdb.py, which gdb auto-loads next to the binary
# once the build folder is trusted (see docs/autodiff.md, "Watching it in gdb").
import os
import sys

import gdb

_here = os.path.dirname(os.path.abspath(os.path.expanduser(__file__)))
if _here not in sys.path:
    sys.path.insert(0, _here)

import attnlab_gdb  # noqa: E402

attnlab_gdb.register()
