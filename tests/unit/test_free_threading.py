"""The native module keeps the GIL: it declares ``Py_mod_gil = Py_MOD_GIL_USED`` (CPython 3.13+),
so a free-threaded interpreter turns the GIL back on while ferrokafka is loaded. Its objects keep
per-object state (decoders, batch builders, ``RecordFuture``, the arena cache) that has not been
tested from two threads at once (no free-threaded interpreter is on the machines the tests run
on). The flag is read from the built module's definition: the ``PyModuleDef`` its
``PyInit__native`` returns (multi-phase initialisation, so calling it again only returns the
same definition)."""

from __future__ import annotations

import ctypes
import subprocess
import sys

from ferrokafka import _native

PY_MOD_GIL = 4  # the slot id (Include/moduleobject.h)
PY_MOD_GIL_USED = 0  # its value meaning "keep the GIL" (Py_MOD_GIL_NOT_USED is 1)


class _ModuleDefSlot(ctypes.Structure):
    _fields_ = [("slot", ctypes.c_int), ("value", ctypes.c_void_p)]


class _ModuleDef(ctypes.Structure):
    # PyModuleDef on a GIL build: PyModuleDef_Base (the object head, m_init, m_index, m_copy),
    # then m_name, m_doc, m_size, m_methods, m_slots.
    _fields_ = [
        ("ob_refcnt", ctypes.c_ssize_t),
        ("ob_type", ctypes.c_void_p),
        ("m_init", ctypes.c_void_p),
        ("m_index", ctypes.c_ssize_t),
        ("m_copy", ctypes.c_void_p),
        ("m_name", ctypes.c_char_p),
        ("m_doc", ctypes.c_char_p),
        ("m_size", ctypes.c_ssize_t),
        ("m_methods", ctypes.c_void_p),
        ("m_slots", ctypes.POINTER(_ModuleDefSlot)),
    ]


def _module_slots() -> dict[int, int | None]:
    library = ctypes.PyDLL(_native.__file__)
    library.PyInit__native.restype = ctypes.POINTER(_ModuleDef)
    definition = library.PyInit__native().contents
    assert definition.m_name == b"_native", "not a PyModuleDef: the layout read is wrong"
    slots: dict[int, int | None] = {}
    for entry in definition.m_slots:
        if entry.slot == 0:
            return slots
        slots[entry.slot] = entry.value
    raise AssertionError("unreachable")  # pragma: no cover


def test_the_module_declares_that_it_uses_the_gil() -> None:
    slots = _module_slots()
    if sys.version_info >= (3, 13):
        assert PY_MOD_GIL in slots, f"no Py_mod_gil slot: {slots}"
        assert (slots[PY_MOD_GIL] or 0) == PY_MOD_GIL_USED, "declared safe without the GIL"
    else:
        # Before 3.13 there is no free-threaded CPython and no slot to declare it with.
        assert PY_MOD_GIL not in slots, slots


def test_the_module_refuses_an_interpreter_running_without_the_gil() -> None:
    # What a free-threaded interpreter started with PYTHON_GIL=0 reports (sys._is_gil_enabled,
    # 3.13+), faked in a fresh process before the import: the per-record classes keep their
    # state for one thread at a time, so the import must fail, saying why.
    code = (
        "import sys\n"
        "sys._is_gil_enabled = lambda: False\n"
        "try:\n"
        "    import ferrokafka._native\n"
        "except ImportError as exc:\n"
        "    print('refused:', exc)\n"
        "else:\n"
        "    print('loaded')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.startswith("refused:") and "PYTHON_GIL=0" in out.stdout, out.stdout
    # With the GIL on, the same check lets it load.
    on = code.replace("lambda: False", "lambda: True")
    out = subprocess.run(
        [sys.executable, "-c", on], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "loaded", out.stdout
