# `attn-tape`: prints this thread's tape from memory (no call into the program).
#
#   (gdb) attn-tape
#   tape: 6 records (* = needs a gradient)
#     #0    MatmulOp             (3,2)[X]* (2,2) -> (3,2)
#     ...
#
# `call attn::print_tape()` prints the same through the program itself; attn-tape also works on
# a core file and on machines where gdb cannot call functions.
import gdb

from . import memory
from . import model


def find_tape():
    """This thread's attn::Tape: the thread_local inside attn::tape(), or failing that the `this`
    of an attn::Tape member function on the stack (run_backward, ...)."""
    try:
        return gdb.parse_and_eval("'attn::tape()::t'")
    except gdb.error:
        pass
    frame = gdb.selected_frame()
    while frame is not None:
        fn = frame.function()
        if fn is not None and fn.name.startswith("attn::Tape::"):
            return frame.read_var("this").dereference()
        frame = frame.older()
    raise gdb.GdbError("attn-tape: cannot find the tape (is attnlab's Debug build loaded?)")


class TapeCommand(gdb.Command):
    """Print this thread's autodiff tape: one line per record, read from memory."""

    def __init__(self):
        super().__init__("attn-tape", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        try:
            text = model.tape_text(find_tape())
        except memory.READ_ERRORS as e:
            raise gdb.GdbError("attn-tape: " + memory.invalid_text("Tape", e))
        gdb.write(text + "\n")


_registered = False


def register():
    global _registered
    if not _registered:
        TapeCommand()
        _registered = True
