# Two gdb settings for the printers:
#
#   (gdb) set attnlab-values 32     how many values a Tensor shows (default 12)
#   (gdb) set attnlab-records 200   how many records the tape shows (default 64)
import gdb


class _Limit(gdb.Parameter):
    def __init__(self, name, default, doc):
        self.__doc__ = doc
        self.set_doc = doc
        self.show_doc = doc
        super().__init__(name, gdb.COMMAND_DATA, gdb.PARAM_ZUINTEGER)
        self.value = default

    def get_set_string(self):
        return ""

    def get_show_string(self, svalue):
        return svalue


_values = None
_records = None


def register():
    global _values, _records
    if _values is None:
        _values = _Limit("attnlab-values", 12, "How many values an attn::Tensor shows in gdb.")
        _records = _Limit("attnlab-records", 64, "How many records the attn::Tape shows in gdb.")


def max_values():
    return int(_values.value) if _values is not None else 12


def max_records():
    return int(_records.value) if _records is not None else 64
