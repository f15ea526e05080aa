"""A small seccomp filter for the bubblewrap sandbox: no new processes, no kernel escape hatches.

``bwrap --seccomp FD`` loads a compiled classic-BPF program (an array of
``struct sock_filter``, as ``seccomp_export_bpf`` writes) just before it
starts the worker. This one, for x86-64 and AArch64:

- kills the process for any other syscall ABI (i386 ``int 0x80``), and
  refuses x32 syscall numbers (``nr >= 0x40000000``) on x86-64, the usual
  bypasses of a per-architecture filter;
- refuses with ``EPERM`` process creation (``fork``, ``vfork``, ``clone``
  without ``CLONE_THREAD``: ``os.fork``, ``subprocess``, ``posix_spawn``,
  ``_posixsubprocess.fork_exec``, ``pty.spawn``), while threads still start;
- answers ``clone3`` with ``ENOSYS`` (its flags sit in memory a filter cannot
  read; glibc then falls back to ``clone`` for threads, which is checked);
- refuses with ``EPERM`` tracing and cross-process memory access
  (``ptrace``, ``process_vm_readv/writev``), namespace and mount changes,
  ``open_by_handle_at`` (the classic container escape), keyrings, ``bpf``,
  ``perf_event_open``, ``userfaultfd``, ``io_uring``, module and kexec loads.

Everything else is allowed (the namespaces and the empty filesystem are the
boundary; this removes ways to spread or poke the kernel inside it).
Sources: Linux ``Documentation/userspace-api/seccomp_filter.rst``,
``include/uapi/linux/{seccomp,filter,audit}.h``, the syscall tables
``arch/x86/entry/syscalls/syscall_64.tbl`` and
``include/uapi/asm-generic/unistd.h`` (AArch64).
"""

from __future__ import annotations

import errno
import platform
import struct

_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_RET_KILL_PROCESS, _RET_ALLOW, _RET_ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
_OFF_NR, _OFF_ARCH, _OFF_ARG0_LOW = 0, 4, 16  # struct seccomp_data, little-endian
_CLONE_THREAD = 0x00010000
_X32_BIT = 0x40000000

#: machine -> (AUDIT_ARCH_*, {syscall name: number})
_TABLES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, {
        "clone": 56, "fork": 57, "vfork": 58, "clone3": 435, "ptrace": 101, "process_vm_readv": 310,
        "process_vm_writev": 311, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
        "chroot": 161, "open_by_handle_at": 304, "name_to_handle_at": 303, "keyctl": 250, "add_key": 248,
        "request_key": 249, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "kexec_load": 246, "kexec_file_load": 320,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "fsopen": 430, "fsmount": 432,
        "open_tree": 428, "move_mount": 429, "pidfd_getfd": 438,
    }),
    "aarch64": (0xC00000B7, {
        "clone": 220, "clone3": 435, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
        "open_by_handle_at": 265, "name_to_handle_at": 264, "keyctl": 219, "add_key": 217, "request_key": 218,
        "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105,
        "finit_module": 273, "delete_module": 106, "fsopen": 430, "fsmount": 432, "open_tree": 428,
        "move_mount": 429, "pidfd_getfd": 438,
    }),
}


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def filter_program(machine: str | None = None) -> bytes | None:
    """The compiled filter for ``machine`` (default: this one), or None when unsupported.

    Returns:
        Bytes of ``struct sock_filter[]`` (8 bytes each, little-endian).
    """
    machine = (machine or platform.machine()).lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if machine not in _TABLES:
        return None
    arch, nr = _TABLES[machine]
    eperm, enosys = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    prog = [_ins(_LD_W_ABS, _OFF_ARCH), _ins(_JEQ, arch, 1, 0), _ins(_RET, _RET_KILL_PROCESS), _ins(_LD_W_ABS, _OFF_NR)]
    if machine == "x86_64":
        prog += [_ins(_JGE, _X32_BIT, 0, 1), _ins(_RET, eperm)]
    for name, number in nr.items():
        if name != "clone":
            prog += [_ins(_JEQ, number, 0, 1), _ins(_RET, enosys if name == "clone3" else eperm)]
    prog += [
        _ins(_JEQ, nr["clone"], 0, 3),  # not clone: allow
        _ins(_LD_W_ABS, _OFF_ARG0_LOW),  # clone's flags (low 32 bits)
        _ins(_JSET, _CLONE_THREAD, 1, 0),  # a thread: allow
        _ins(_RET, eperm),  # a new process: refused
        _ins(_RET, _RET_ALLOW),
    ]
    return b"".join(prog)


__all__ = ["filter_program"]
