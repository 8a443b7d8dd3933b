# SPDX-License-Identifier: BSD-2-Clause
"""The MAP_IN pl_start rule of FreeBSD main's pmcstat, for the test checkers.

Written from its definition (docs/pmclog-format.md 10.2 and 11.5), apart from the
C code it checks: pmcstat's pi_vaddr V is p_vaddr & -p_align of the first PT_LOAD
with PF_X, for ET_EXEC and ET_DYN alike (0 otherwise), and a MAP_IN places its
image with load bias pl_start - V, so that link address = pc - (pl_start - V).
"""
import struct


def elf_info(path, cache={}):
    """(e_type, [(p_vaddr, p_memsz, p_flags, p_offset, p_align)] of PT_LOAD, e_entry) or None."""
    if path not in cache:
        try:
            with open(path, "rb") as f:
                eh = f.read(64)
                if eh[:4] != b"\x7fELF" or eh[4] != 2:
                    raise ValueError
                e_type = struct.unpack_from("<H", eh, 16)[0]
                e_entry, phoff = struct.unpack_from("<QQ", eh, 24)
                phentsize, phnum = struct.unpack_from("<HH", eh, 54)
                f.seek(phoff)
                ph = f.read(phentsize * phnum)
            loads = []
            for i in range(phnum):
                p_type, p_flags, p_offset, p_vaddr, _, _, p_memsz, p_align = \
                    struct.unpack_from("<IIQQQQQQ", ph, i * phentsize)
                if p_type == 1:
                    loads.append((p_vaddr, p_memsz, p_flags, p_offset, p_align))
            cache[path] = (e_type, loads, e_entry)
        except (OSError, ValueError, struct.error):
            cache[path] = None
    return cache[path]


def v_of(info):
    """V of the rule for elf_info() @info (None: 0)."""
    if not info or info[0] not in (2, 3):  # ET_EXEC, ET_DYN
        return 0
    for vaddr, _, flags, _, align in info[1]:
        if flags & 1:  # PF_X: the first one
            return vaddr & -align & 0xFFFFFFFFFFFFFFFF if align else 0
    return 0


def bias(path, pl_start):
    """The load bias of the file @path placed by a MAP_IN with @pl_start."""
    return (pl_start - v_of(elf_info(path))) & 0xFFFFFFFFFFFFFFFF
