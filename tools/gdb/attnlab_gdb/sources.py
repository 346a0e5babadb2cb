# Where gdb finds attnlab's sources. A Debug object names the checkout it was compiled in as
# /ATTNLAB_SOURCE (cmake/ccache.cmake passes -fdebug-prefix-map), so that clones at different
# paths share ccache's objects; this maps that name back to the checkout these printers were
# loaded from (tools/gdb/ of the clone whose build you debug: scripts/gdb and the Debug build's
# auto-load file both load their own clone's). By hand:
#
#   (gdb) set substitute-path /ATTNLAB_SOURCE /path/to/attnlab
import os

import gdb

PLACEHOLDER = "/ATTNLAB_SOURCE"


def register():
    here = os.path.dirname(os.path.abspath(__file__))  # <checkout>/tools/gdb/attnlab_gdb
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    # An installed copy (share/attnlab/gdb/) has no checkout above it: nothing to map.
    if not os.path.isfile(os.path.join(root, "CMakeLists.txt")):
        return
    gdb.execute('set substitute-path %s "%s"' % (PLACEHOLDER, root), to_string=True)
