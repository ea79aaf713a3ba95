"""OS-level confinement of the kernel process: the second sandbox layer.

The first layer is the AST interpreter (:mod:`gradviz.core.sandbox`). This
layer assumes that interpreter has a hole and limits what a script that
escapes it can do to the machine. :func:`confine` applies, irreversibly and
to the calling process only:

1. **Resource limits** (wherever the ``resource`` module exists):
   ``RLIMIT_DATA`` = ``memory_bytes`` (private writable memory, so a memory
   bomb becomes a clean ``MemoryError``; ``RLIMIT_AS`` is not used because
   torch, glibc and CUDA reserve large ``PROT_NONE`` address ranges),
   ``RLIMIT_CORE`` = 0, ``RLIMIT_FSIZE`` = 64 MiB (a longer write fails with
   ``OSError(EFBIG)``; CPython ignores ``SIGXFSZ``). Limits are only ever
   lowered. ``RLIMIT_NPROC`` is not used: root ignores it and it counts
   threads, which torch creates lazily.
2. **Privileges** (Linux): ``PR_SET_NO_NEW_PRIVS``; when the process holds
   capabilities (it runs as root), every capability is dropped from the
   bounding, ambient, inheritable, permitted and effective sets, so the
   limits above cannot be raised again and root-only syscalls fail.
3. **Landlock** (Linux >= 5.13 with Landlock enabled; binding ``landlockpy``):
   every filesystem right the running ABI knows is handled. Granted: read
   (files and directory listings, never ``EXECUTE``) on the Python
   installation, the ``sys.path`` entries except the current directory, the
   directories of loaded packages and shared libraries, system library and
   data directories, a few ``/etc`` files, a narrow part of ``/proc`` and
   ``/sys``, and ``/dev/{null,zero,random,urandom}`` (``/dev/null`` writable);
   read/write/create/remove (no symlinks, FIFOs, sockets or device nodes, so
   the window never trips over one) beneath ``workdir`` only. With
   ``cuda=True``: ``/dev/nvidia*`` read/write (+ ``IOCTL_DEV`` from ABI 5),
   ``/proc/driver/nvidia`` and the PCI parts of ``/sys``. From ABI 4 TCP bind
   and connect are handled with no rule (no TCP at all; UDP too from ABI 10);
   from ABI 6 signals to and abstract UNIX sockets of processes outside the
   sandbox are denied. Before ABI 8 Landlock binds only the calling thread
   (and threads it starts later): threads that already exist keep their
   access, so call :func:`confine` before importing numpy (OpenBLAS starts its
   thread pool at import) or torch; the report names such threads.
4. **seccomp** (Linux; binding ``pyseccomp`` over the system ``libseccomp``),
   synchronised to every thread of the process: default allow, and deny with
   EPERM ``execve``/``execveat``, ``fork``/``vfork``, ``clone`` without
   ``CLONE_THREAD`` or with a namespace flag (``clone3`` gets ENOSYS so glibc
   falls back to ``clone``); ``socket`` (every domain, AF_UNIX included) with
   EACCES, and ``socketpair`` except AF_UNIX stream/seqpacket; signals to any
   process but this one; ``ptrace``, ``process_vm_*``, mount and namespace
   syscalls, module/kexec/bpf/perf/userfaultfd/io_uring/keyring syscalls,
   ``personality``, file handles, ``TIOCSTI``/``TIOCLINUX`` and the rest of
   :data:`DENIED_SYSCALLS`. Foreign syscall ABIs (x32, i386 ``int 0x80``)
   kill the process.

What is **not** enforced:

* Linux without Landlock (older than 5.13, or not in the LSM list): the
  filesystem is open to whatever the user may read and write; seccomp and
  the limits still apply, so no programs, no network, no new processes.
* Linux without ``libseccomp``/``pyseccomp``: no syscall filter. Landlock
  still refuses ``execve`` (no path is granted ``EXECUTE``) and, from ABI 4,
  TCP; but ``fork``, UDP and other socket families, named UNIX sockets
  (before ABI 9) and the syscalls listed above stay open.
* macOS: only the resource limits, and XNU does not reliably hold ``mmap``
  based ``malloc`` to ``RLIMIT_DATA``, so treat memory as not capped by this
  layer there (the interpreter's per-op guards still apply; a limit macOS
  refuses becomes a note, not an error). There is no filesystem,
  process or network confinement (Seatbelt's ``sandbox_init`` is deprecated
  and not used).
* Windows: nothing (no ``resource`` module; job objects and AppContainers
  are not used). The AST interpreter is the only sandbox there.
* Everywhere: the seccomp filter is a deny list, so a syscall newer than the
  installed ``libseccomp`` knows is allowed (capabilities are gone, which is
  what most dangerous new syscalls need). CPU time is not limited here: the
  window kills a kernel that runs too long.

Side effects: ``TMPDIR`` and :data:`tempfile.tempdir` point at ``workdir``,
the only place the process can still create files (with ``cuda=True``,
``CUDA_CACHE_PATH`` too, unless already set).
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

try:  # absent on Windows
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

MiB = 1024**2
FILE_SIZE_CAP = 64 * MiB
"""RLIMIT_FSIZE: the largest file the kernel can write (snapshots are far smaller)."""

# --- seccomp policy -------------------------------------------------------------------

DENIED_SYSCALLS: tuple[str, ...] = (
    # run programs
    "execve", "execveat", "uselib",
    # new processes (clone and clone3 get their own rules below)
    "fork", "vfork",
    # other processes' memory, state and signals
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp",
    "pidfd_getfd", "pidfd_send_signal", "tkill", "migrate_pages",
    # mounts, namespaces, root directory
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "fsopen", "fsconfig",
    "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    # the kernel itself
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "syslog", "acct", "quotactl", "quotactl_fd",
    "iopl", "ioperm", "modify_ldt", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "sethostname", "setdomainname", "vhangup", "lookup_dcookie",
    "nfsservctl", "_sysctl",
    # attack surface a numeric kernel never needs
    "bpf", "perf_event_open", "userfaultfd", "personality", "keyctl", "add_key",
    "request_key", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "name_to_handle_at", "open_by_handle_at", "fanotify_init", "fanotify_mark",
    "mknod", "mknodat",
)
"""Syscalls the filter answers with EPERM whatever their arguments."""

CLONE_THREAD = 0x00010000
CLONE_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
AF_UNIX = 1
SOCK_DGRAM = 2
SOCK_TYPE_MASK = 0xF
TIOCSTI = 0x5412
TIOCLINUX = 0x541C

# --- prctl / capabilities -------------------------------------------------------------

PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class ConfinementError(RuntimeError):
    """A layer that this platform supports could not be applied."""


@dataclass(frozen=True)
class ConfinementReport:
    """What :func:`confine` did, in plain words the window and README can show."""

    platform: str
    applied: tuple[str, ...]
    """Layers in force: ``rlimits``, ``no_new_privs``, ``capabilities``, ``landlock``,
    ``seccomp``, ``tmpdir``."""
    skipped: tuple[str, ...]
    """One line per layer that is not in force, and why."""
    notes: tuple[str, ...] = ()
    """Caveats about layers that are in force (e.g. threads Landlock cannot reach)."""
    landlock_abi: int = 0
    """The kernel's Landlock ABI version; 0 = no Landlock."""
    limits: dict[str, int] = field(default_factory=dict)
    """Resource limits set (soft = hard), by ``RLIMIT_*`` name."""
    read_paths: tuple[str, ...] = ()
    """Paths Landlock lets the process read (each with everything beneath it)."""
    write_paths: tuple[str, ...] = ()
    """Paths Landlock lets the process write, create and remove beneath."""
    denied_syscalls: tuple[str, ...] = ()
    """Syscalls the seccomp filter refuses (always or for some arguments)."""
    device_rights: tuple[str, ...] = ()
    """With ``cuda=True``: each right kept open while the driver starts, and whether
    :func:`close_device_door` took it back (see "CUDA, in two stages" below)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        text = "OS confinement: " + (", ".join(self.applied) or "none")
        if self.skipped:
            text += "; not applied: " + "; ".join(self.skipped)
        return text


def confine(
    workdir: str | os.PathLike[str],
    *,
    memory_bytes: int | None,
    extra_read: Iterable[str | os.PathLike[str]] = (),
    cuda: bool = False,
) -> ConfinementReport:
    """Confine the current process for good; see the module docstring.

    ``workdir`` (an existing directory) is the only place the process may write
    afterwards. ``memory_bytes`` caps private writable memory (None = no cap).
    ``extra_read`` adds read-only paths; ``cuda=True`` keeps the NVIDIA devices
    usable. A layer the platform lacks is skipped and named in the report; a
    layer the platform has but that fails raises :class:`ConfinementError`
    (the process may then be partly confined: do not run scripts in it).
    """
    work = Path(workdir).resolve()
    if not work.is_dir():
        raise ConfinementError(f"workdir {str(work)!r} is not a directory")
    applied: list[str] = []
    skipped: list[str] = []
    notes: list[str] = []
    linux = sys.platform.startswith("linux")

    # Everything that later needs a file, a subprocess (ctypes.util.find_library runs
    # ldconfig) or a syscall we deny must happen before the first layer goes on.
    seccomp_mod, seccomp_why = _load_seccomp() if linux else (None, "not Linux")
    landlock_mod, landlock_abi, landlock_why = _load_landlock() if linux else (None, 0, "not Linux")

    os.environ["TMPDIR"] = str(work)
    tempfile.tempdir = str(work)
    if cuda:  # the driver's JIT cache would go to ~/.nv, which is closed from now on
        os.environ.setdefault("CUDA_CACHE_PATH", str(work / ".nv"))
    applied.append("tmpdir")

    limits = _set_rlimits(memory_bytes, notes)
    if resource is not None:
        applied.append("rlimits")
    else:
        skipped.append("rlimits: the resource module is missing (Windows)")

    if not linux:
        skipped.append(f"landlock: Linux only (this is {sys.platform})")
        skipped.append(f"seccomp: Linux only (this is {sys.platform})")
        return ConfinementReport(sys.platform, tuple(applied), tuple(skipped), tuple(notes),
                                 limits=limits)

    libc = ctypes.CDLL(None, use_errno=True)
    _prctl(libc, PR_SET_NO_NEW_PRIVS, 1)
    applied.append("no_new_privs")

    read_paths: tuple[str, ...] = ()
    write_paths: tuple[str, ...] = ()
    if landlock_mod is None:
        skipped.append(f"landlock: {landlock_why}")
    else:
        read_paths, write_paths = _apply_landlock(
            landlock_mod, landlock_abi, work, extra_read, cuda, notes, proc_write=cuda
        )
        applied.append("landlock")

    # After Landlock (which needs no capability) and before seccomp.
    if _drop_capabilities(libc):
        applied.append("capabilities")
        if _other_threads():
            notes.append("capabilities: dropped on the calling thread only; threads started "
                         "before confine() keep theirs (seccomp still covers them)")

    denied: tuple[str, ...] = ()
    if seccomp_mod is None:
        skipped.append(f"seccomp: {seccomp_why}")
    else:
        denied = _apply_seccomp(seccomp_mod, unix_sockets=cuda)
        applied.append("seccomp")

    device_rights: tuple[str, ...] = ()
    if cuda:
        device_rights = tuple(
            right for right, layer in (
                ("socket(AF_UNIX) while the driver starts", seccomp_mod),
                ("write beneath /proc while the driver starts", landlock_mod),
            ) if layer is not None
        )
    _STAGE.update(
        landlock=landlock_mod, abi=landlock_abi, seccomp=seccomp_mod, open=bool(device_rights)
    )
    return ConfinementReport(
        platform=sys.platform,
        applied=tuple(applied),
        skipped=tuple(skipped),
        notes=tuple(notes),
        landlock_abi=landlock_abi,
        limits=limits,
        read_paths=read_paths,
        write_paths=write_paths,
        denied_syscalls=denied,
        device_rights=device_rights,
    )


# --- CUDA, in two stages ----------------------------------------------------------------
#
# NVIDIA's driver needs two things while it initialises that a script never does:
# ``socket(AF_UNIX, ...)`` (cuInit returns 304, CUDA_ERROR_OPERATING_SYSTEM, when
# seccomp refuses it) and writes beneath ``/proc`` (thread names: pthread_setname_np
# writes /proc/self/task/<tid>/comm; write rights on /sys, /tmp, /run, /dev/shm and
# the rest do not help). Measured on an H200 (driver 580, Landlock ABI 7). So with
# ``cuda=True`` :func:`confine` leaves those two open, the kernel starts the device
# before any request is read (no script has run: nothing untrusted can use them),
# and :func:`close_device_door` stacks a second seccomp filter that refuses every
# ``socket`` and a second Landlock ruleset without the ``/proc`` writes. Filters and
# rulesets only ever get stricter when stacked; the first stage cannot be reopened.
# Before Landlock ABI 8 a ruleset binds the calling thread and the threads it starts
# later: threads the driver started in between keep the first stage's /proc writes
# (they run the driver's code, never a script's); the report says so.

_STAGE: dict[str, Any] = {}


def close_device_door(report: ConfinementReport, start_device: Any = None) -> ConfinementReport:
    """Start the device (``start_device()``, e.g. ``torch.cuda.init()`` and one
    allocation), then take back the rights :func:`confine` kept for it.

    Whatever ``start_device`` does (it may fail: no GPU, no driver), the door is
    closed before this returns; only a failure to close raises
    :class:`ConfinementError`. Returns the report with ``device_rights`` saying
    what was kept and what was taken back."""
    if not _STAGE.get("open"):
        return report
    started = "the device started"
    try:
        said = start_device() if start_device is not None else None
        if isinstance(said, str):
            started = said
    except Exception as exc:  # noqa: BLE001 - the device may be absent; close all the same
        started = f"the device did not start ({type(exc).__name__}: {exc})"
    notes = list(report.notes)
    rights: list[str] = []
    if _STAGE.get("seccomp") is not None:
        _apply_socket_door(_STAGE["seccomp"])
        rights.append("socket(AF_UNIX): kept while the driver started, then refused")
    if _STAGE.get("landlock") is not None:
        # the rules were worked out before the first stage (paths are not listable
        # now); this ruleset stacks on the first, so access needs both
        _restrict_landlock(_STAGE["landlock"], _STAGE["abi"], _STAGE["landlock_rules"], [])
        rights.append("write beneath /proc: kept while the driver started, then refused")
        if _STAGE["abi"] < 8 and _other_threads():
            notes.append(
                f"landlock: {_other_threads()} thread(s) started before the second stage "
                f"(torch's, the driver's) keep writes beneath /proc (ABI {_STAGE['abi']} < 8 "
                "has no TSYNC); they run no script code"
            )
    _STAGE["open"] = False
    return ConfinementReport(
        platform=report.platform,
        applied=report.applied,
        skipped=report.skipped,
        notes=(*notes, f"cuda: {started} before the second stage"),
        landlock_abi=report.landlock_abi,
        limits=report.limits,
        read_paths=tuple(
            p for p in _STAGE.get("landlock_rules", {}) if p not in report.write_paths
        ) or report.read_paths,
        write_paths=report.write_paths,
        denied_syscalls=report.denied_syscalls,
        device_rights=tuple(rights),
    )


def _apply_socket_door(sc: Any) -> None:
    """The second seccomp stage: every ``socket`` refused (the first let AF_UNIX by)."""
    try:
        flt = sc.SyscallFilter(sc.ALLOW)
        flt.set_attr(sc.Attr.CTL_TSYNC, 1)
        flt.set_attr(sc.Attr.CTL_NNP, 1)
        flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
        flt.add_rule(sc.ERRNO(errno.EACCES), "socket")
        flt.load()
    except OSError as exc:
        raise ConfinementError(f"the second seccomp stage could not be loaded: {exc}") from exc


# --- resource limits ------------------------------------------------------------------


def _set_rlimits(memory_bytes: int | None, notes: list[str]) -> dict[str, int]:
    if resource is None:
        return {}
    wanted = {"RLIMIT_CORE": 0, "RLIMIT_FSIZE": FILE_SIZE_CAP}
    if memory_bytes is not None:
        if memory_bytes <= 0:
            raise ValueError("memory_bytes must be positive or None")
        wanted["RLIMIT_DATA"] = int(memory_bytes)
    done: dict[str, int] = {}
    for name, value in wanted.items():
        which = getattr(resource, name, None)
        if which is None:
            notes.append(f"rlimits: {name} does not exist here")
            continue
        _soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY and hard < value:
            value = hard  # only ever lower a limit
        try:
            resource.setrlimit(which, (value, value))
        except (OSError, ValueError) as exc:
            if sys.platform.startswith("linux"):
                raise ConfinementError(f"setrlimit({name}, {value}) failed: {exc}") from exc
            notes.append(f"rlimits: {name} could not be set here ({exc})")
            continue
        done[name] = value
    return done


# --- capabilities ---------------------------------------------------------------------


def _prctl(libc: ctypes.CDLL, option: int, arg2: int = 0) -> int:
    libc.prctl.restype = ctypes.c_int
    result = libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg2), ctypes.c_ulong(0),
                        ctypes.c_ulong(0), ctypes.c_ulong(0))
    if result == -1:
        err = ctypes.get_errno()
        raise ConfinementError(f"prctl({option}) failed: {os.strerror(err)}")
    return int(result)


def _capability_sets() -> dict[str, int]:
    sets = {}
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Cap"):
                key, _, value = line.partition(":")
                sets[key] = int(value.strip(), 16)
    return sets


def _drop_capabilities(libc: ctypes.CDLL) -> bool:
    """Drop every capability of the calling thread; False when it held none.

    An ordinary user holds none (only the bounding set is full, and with
    no_new_privs and no execve it can never be used).
    """
    held = _capability_sets()
    if not any(held.get(k) for k in ("CapEff", "CapPrm", "CapInh", "CapAmb")):
        return False
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    if held.get("CapEff", 0) & (1 << 8):  # CAP_SETPCAP: empty the bounding set too
        for cap in range(last + 1):
            libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0)
    libc.prctl(PR_CAP_AMBIENT, ctypes.c_ulong(PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header = Header(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        err = ctypes.get_errno()
        raise ConfinementError(f"capset() failed: {os.strerror(err)}")
    left = _capability_sets()
    if any(left.get(k) for k in ("CapEff", "CapPrm", "CapInh", "CapAmb")):
        raise ConfinementError(f"capabilities are still held after dropping: {left}")
    return True


def _other_threads() -> int:
    try:
        return max(0, len(os.listdir("/proc/self/task")) - 1)
    except OSError:
        return max(0, threading.active_count() - 1)


# --- Landlock -------------------------------------------------------------------------


def _load_landlock() -> tuple[Any, int, str]:
    try:
        import landlockpy
    except ImportError as exc:
        return None, 0, f"the landlockpy package is not installed ({exc})"
    try:
        abi = landlockpy.abi_version()
    except OSError as exc:
        return None, 0, f"the Landlock ABI probe failed: {exc}"
    if abi < 1:
        return None, 0, ("the kernel has no Landlock (Linux older than 5.13, "
                         "or landlock missing from the lsm= list)")
    return landlockpy, abi, ""


def _never_grant(work: Path) -> set[str]:
    """Directories too wide to read, even when sys.path names them (a script's
    folder is sys.path[0]): '/', the user's home, the shared temporary folders,
    and every ancestor of those and of ``workdir`` (its siblings are not ours)."""
    wide = [Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), work]
    try:
        wide.append(Path.home())
    except (RuntimeError, OSError):  # pragma: no cover - no home directory
        pass
    refused = {"/"}
    for path in wide:
        real = Path(os.path.realpath(path))
        refused.update(str(p) for p in (real, *real.parents))
    refused.discard(str(work))
    return refused


def _python_read_paths() -> list[str]:
    """What a Python + torch process may lazily read after confinement."""
    paths: list[str] = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    cwd = os.getcwd()
    # sys.path minus '' and the current directory ('python -m' puts it first): the
    # kernel's cwd may be the user's documents.
    paths += [p for p in sys.path if p and os.path.abspath(p) != cwd]
    try:
        import site

        paths += site.getsitepackages()
        paths.append(site.getusersitepackages())
    except (AttributeError, ImportError):  # pragma: no cover - embedded Pythons
        pass
    for module in list(sys.modules.values()):
        # A package's whole tree (lazy submodule imports); a plain module's own file.
        # Defensive: some modules (torch.classes, lazy loaders) fake these attributes.
        try:
            package_path = getattr(module, "__path__", None)
            file = getattr(module, "__file__", None)
            if isinstance(package_path, (list, tuple)) or type(package_path).__name__ == (
                "_NamespacePath"
            ):
                paths += [p for p in package_path or () if isinstance(p, str)]
            elif isinstance(file, str):
                paths.append(file)
        except Exception:  # noqa: BLE001 - a module's odd attribute must not stop us
            continue
    # Directories of loaded shared libraries: their siblings are dlopen()ed lazily.
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(maxsplit=5)
                if len(parts) == 6 and parts[5].startswith("/") and ".so" in parts[5]:
                    paths.append(os.path.dirname(parts[5].rstrip("\n")))
    except OSError:
        pass
    return paths


SYSTEM_READ_PATHS = (
    "/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/usr/share",
    "/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
    "/etc/ssl/openssl.cnf",
    "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/loadavg", "/proc/uptime",
    "/proc/version", "/proc/filesystems", "/proc/sys", "/proc/devices",
    "/sys/devices/system/cpu", "/sys/devices/system/node", "/sys/fs/cgroup",
    "/dev/zero", "/dev/urandom", "/dev/random",
)
"""Read-only system paths (missing ones are skipped). Only this process's own
``/proc/<pid>`` is readable, not other processes' entries."""

CUDA_READ_PATHS = ("/proc/driver/nvidia", "/proc/modules", "/sys/bus/pci", "/sys/devices")


def _apply_landlock(
    landlockpy: Any,
    abi: int,
    work: Path,
    extra_read: Iterable[str | os.PathLike[str]],
    cuda: bool,
    notes: list[str],
    proc_write: bool = False,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    fs = landlockpy.AccessFS
    handled_fs = landlockpy.fs_for_abi(abi)
    file_rights = (fs.EXECUTE | fs.WRITE_FILE | fs.READ_FILE | fs.TRUNCATE | fs.IOCTL_DEV)
    read = fs.READ_FILE | fs.READ_DIR
    write = (read | fs.WRITE_FILE | fs.TRUNCATE | fs.REMOVE_FILE | fs.REMOVE_DIR
             | fs.MAKE_REG | fs.MAKE_DIR | fs.REFER)
    device_rw = fs.READ_FILE | fs.WRITE_FILE | fs.IOCTL_DEV

    refused = _never_grant(work)
    rules: dict[str, Any] = {}  # resolved path -> rights

    def want(path: str | os.PathLike[str], rights: Any, *, wide_ok: bool = False) -> None:
        try:
            real = os.path.realpath(path)
            mode = os.stat(real).st_mode
        except (OSError, ValueError):
            return
        if not wide_ok and stat.S_ISDIR(mode) and real in refused:
            notes.append(f"landlock: refused to grant {real!r} (too wide)")
            return
        rights = rights & handled_fs
        if not stat.S_ISDIR(mode):
            rights &= file_rights
        if rights:
            rules[real] = rules.get(real, fs.NONE) | rights

    for p in [*_python_read_paths(), *SYSTEM_READ_PATHS]:
        want(p, read)
    want(f"/proc/{os.getpid()}", read)  # /proc/self and /proc/thread-self resolve here
    want("/dev/null", fs.READ_FILE | fs.WRITE_FILE | fs.TRUNCATE)
    for extra in extra_read:
        p = os.fspath(extra)
        if not os.path.exists(p):
            notes.append(f"landlock: extra_read path {os.fspath(p)!r} does not exist")
        want(p, read)
    if cuda:
        for p in CUDA_READ_PATHS:
            want(p, read)
        for name in sorted(os.listdir("/dev")) if os.path.isdir("/dev") else ():
            if name.startswith("nvidia"):
                want(f"/dev/{name}", read | device_rw)
    want(work, write, wide_ok=True)
    if proc_write:  # the first CUDA stage; the second is these rules without it
        _STAGE["landlock_rules"] = _without_implied(dict(rules), fs)
        want("/proc", read | fs.WRITE_FILE | fs.TRUNCATE, wide_ok=True)
    kept = _without_implied(rules, fs)
    _restrict_landlock(landlockpy, abi, kept, notes)
    if abi < 4:
        notes.append(f"landlock: ABI {abi} < 4 cannot restrict TCP (seccomp still does)")
    writable = str(work)
    return tuple(p for p in kept if p != writable), (writable,)


def _without_implied(rules: dict[str, Any], fs: Any) -> dict[str, Any]:
    """Drop rules already implied by an ancestor's rule (rules apply beneath a path)."""
    kept: dict[str, Any] = {}
    for real in sorted(rules, key=len):
        rights = rules[real]
        covered = fs.NONE
        for parent in Path(real).parents:
            covered |= kept.get(str(parent), fs.NONE)
        if rights & ~covered:
            kept[real] = rights
    return kept


def _restrict_landlock(landlockpy: Any, abi: int, kept: dict[str, Any], notes: list[str]) -> None:
    handled_fs = landlockpy.fs_for_abi(abi)
    before = _other_threads()
    restrict = landlockpy.RestrictFlag.NONE
    if abi >= 8:
        restrict |= landlockpy.RestrictFlag.TSYNC
    elif before:
        notes.append(
            f"landlock: {before} thread(s) started before confine() are not restricted "
            f"(ABI {abi} < 8 has no TSYNC); confine before importing numpy or torch")
    try:
        with landlockpy.Ruleset(
            handled_fs=handled_fs,
            handled_net=landlockpy.net_for_abi(abi),
            scoped=landlockpy.scope_for_abi(abi),
        ) as ruleset:
            for real, rights in kept.items():
                ruleset.allow_path(real, rights)
            ruleset.restrict(restrict)
    except OSError as exc:
        raise ConfinementError(f"Landlock could not be applied: {exc}") from exc


# --- seccomp --------------------------------------------------------------------------


def _load_seccomp() -> tuple[Any, str]:
    try:
        import pyseccomp
    except ImportError as exc:
        return None, f"the pyseccomp package is not installed ({exc})"
    except (OSError, RuntimeError) as exc:  # pyseccomp raises RuntimeError without libseccomp
        return None, f"libseccomp could not be loaded ({exc})"
    return pyseccomp, ""


def _apply_seccomp(sc: Any, unix_sockets: bool = False) -> tuple[str, ...]:
    eperm = sc.ERRNO(errno.EPERM)
    eacces = sc.ERRNO(errno.EACCES)
    pid = os.getpid()  # fork is denied, so it never changes
    try:
        flt = sc.SyscallFilter(sc.ALLOW)
        flt.set_attr(sc.Attr.CTL_TSYNC, 1)  # every thread, including torch's pools
        flt.set_attr(sc.Attr.CTL_NNP, 1)
        flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)  # x32 / int 0x80 tricks
        denied: list[str] = []

        def rule(action: int, name: str, *args: Any) -> None:
            if sc.resolve_syscall(sc.Arch.NATIVE, name) == -1:  # unknown to libseccomp
                return
            flt.add_rule(action, name, *args)
            if name not in denied:
                denied.append(name)

        for name in DENIED_SYSCALLS:
            rule(eperm, name)
        # Threads only: clone must carry CLONE_THREAD and no namespace flag.
        rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
        for flag in CLONE_NAMESPACE_FLAGS:
            rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        rule(sc.ERRNO(errno.ENOSYS), "clone3")  # glibc then falls back to clone
        # No network: no socket() at all. AF_UNIX too: Landlock before ABI 9 cannot
        # stop connect() to a named socket (a root kernel + /run/docker.sock = root).
        if unix_sockets:  # the first CUDA stage only (see close_device_door)
            rule(eacces, "socket", sc.Arg(0, sc.NE, AF_UNIX))
        else:
            rule(eacces, "socket")
        rule(eacces, "socketpair", sc.Arg(0, sc.NE, AF_UNIX))
        # A datagram pair could still sendto() any named datagram socket.
        rule(eacces, "socketpair", sc.Arg(1, sc.MASKED_EQ, SOCK_TYPE_MASK, SOCK_DGRAM))
        # Signals only to this process (kill(-1) as root would end every process).
        for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
            rule(eperm, name, sc.Arg(0, sc.NE, pid))
        # Typing into the terminal that started us (the kernel's 32-bit cmd word).
        for cmd in (TIOCSTI, TIOCLINUX):
            rule(eperm, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, cmd))
        flt.load()
    except OSError as exc:
        raise ConfinementError(f"the seccomp filter could not be loaded: {exc}") from exc
    return tuple(denied)
