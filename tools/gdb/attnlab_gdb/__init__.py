# attnlab's gdb support: pretty-printers, xmethods and the attn-tape command.
#
#   (gdb) source tools/gdb/attnlab.py      (scripts/gdb and the Debug build's auto-load file do this)
#
# Everything reads the program's memory and never calls into it, so it works on core files.
from . import commands
from . import printers
from . import settings
from . import sources
from . import xmethods


def register(objfile=None):
    settings.register()
    sources.register()
    printers.register(objfile)
    xmethods.register(objfile)
    commands.register()
