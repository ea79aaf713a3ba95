"""The OS-level layer (gradviz.core.confine), checked from inside a confined process.

Each test starts a fresh Python that calls ``confine()`` and then, from plain test
code in that process (no script interpreter, no product hook), tries what an
escaped script would try. The child prints one JSON line of findings; the test
asserts on it. A layer the platform lacks skips the tests that need it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradviz.kernel import memory_cap

REPO = Path(__file__).resolve().parents[1]
MEMORY = 1024**3
"""RLIMIT_DATA for the children: torch with a dispatch mode needs about 320 MiB."""
TIMEOUT = 180

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason=f"Landlock and seccomp exist only on Linux (this is {sys.platform})",
)


def _landlock_abi() -> tuple[int, str]:
    try:
        import landlockpy
    except ImportError as exc:
        return 0, f"the landlockpy binding is not installed ({exc})"
    abi = landlockpy.abi_version()
    if abi < 1:
        return 0, "the kernel has no Landlock (Linux < 5.13 or landlock not in lsm=)"
    return abi, ""


def _seccomp_missing() -> str:
    try:
        import pyseccomp  # noqa: F401
    except ImportError as exc:
        return f"the pyseccomp binding is not installed ({exc})"
    except (OSError, RuntimeError) as exc:
        return f"libseccomp cannot be loaded ({exc})"
    return ""


LANDLOCK_ABI, NO_LANDLOCK = _landlock_abi() if sys.platform.startswith("linux") else (0, "")
NO_SECCOMP = _seccomp_missing() if sys.platform.startswith("linux") else ""
needs_landlock = pytest.mark.skipif(LANDLOCK_ABI < 1, reason=NO_LANDLOCK or "no Landlock")
needs_seccomp = pytest.mark.skipif(bool(NO_SECCOMP), reason=NO_SECCOMP or "no seccomp")

PRELUDE = """
import json, os, sys
out = {}

def attempt(name, fn):
    try:
        out[name] = ["ok", repr(fn())]
    except BaseException as exc:
        out[name] = [type(exc).__name__, str(exc)]
"""


def run_confined(body: str, workdir: Path, *, before: str = "", memory: int | None = MEMORY,
                 **params) -> dict:
    """Run ``before``, then confine(workdir), then ``body`` in a fresh Python; return ``out``."""
    code = "\n".join([
        PRELUDE,
        f"WORKDIR = {str(workdir)!r}",
        f"MEMORY = {memory!r}",
        *(f"{k.upper()} = {v!r}" for k, v in params.items()),
        textwrap.dedent(before),
        "from gradviz.core.confine import confine",
        "report = confine(WORKDIR, memory_bytes=MEMORY)",
        "out['report'] = report.to_json()",
        textwrap.dedent(body),
        "print('RESULT ' + json.dumps(out))",
    ])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=workdir, env=env)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (
        f"child failed (rc {proc.returncode})\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return json.loads(lines[-1][len("RESULT "):])


@pytest.fixture
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("work")


def test_report_says_what_was_applied(workdir):
    out = run_confined("""
        import ctypes, resource
        out['data_limit'] = resource.getrlimit(resource.RLIMIT_DATA)
        out['core_limit'] = resource.getrlimit(resource.RLIMIT_CORE)
        libc = ctypes.CDLL(None, use_errno=True)
        out['no_new_privs'] = libc.prctl(39, 0, 0, 0, 0)  # PR_GET_NO_NEW_PRIVS
        out['cap_eff'] = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')]
        out['summary'] = report.summary()
    """, workdir)
    report = out["report"]
    assert {"tmpdir", "rlimits", "no_new_privs"} <= set(report["applied"])
    assert report["limits"] == {"RLIMIT_CORE": 0, "RLIMIT_FSIZE": 64 * 1024**2,
                                "RLIMIT_DATA": MEMORY}
    assert out["data_limit"] == [MEMORY, MEMORY]
    assert out["core_limit"] == [0, 0]
    assert out["no_new_privs"] == 1
    assert out["cap_eff"] == ["0000000000000000"]
    assert out["summary"].startswith("OS confinement: tmpdir, rlimits, no_new_privs")
    assert report["landlock_abi"] == LANDLOCK_ABI
    if LANDLOCK_ABI:
        assert "landlock" in report["applied"]
        assert report["write_paths"] == [str(workdir.resolve())]
        assert sys.base_prefix in report["read_paths"] or any(
            sys.base_prefix.startswith(p + "/") for p in report["read_paths"])
        assert not any(p in report["read_paths"] for p in ("/", "/tmp", str(Path.home())))
    else:
        assert any(s.startswith("landlock: ") for s in report["skipped"])
    if not NO_SECCOMP:
        assert "seccomp" in report["applied"]
        assert {"execve", "fork", "clone", "clone3", "socket", "ptrace", "bpf",
                "io_uring_setup"} <= set(report["denied_syscalls"])
    else:
        assert any(s.startswith("seccomp: ") for s in report["skipped"])


@needs_landlock
def test_files_outside_workdir_are_closed(workdir, tmp_path_factory):
    secret_dir = tmp_path_factory.mktemp("secret")
    secret = secret_dir / "secret.txt"
    secret.write_text("s3cret")
    out = run_confined("""
        import tempfile
        attempt('read_secret', lambda: open(SECRET).read())
        attempt('write_secret', lambda: open(SECRET, 'w'))
        attempt('list_secret_dir', lambda: os.listdir(os.path.dirname(SECRET)))
        attempt('shadow', lambda: open('/etc/shadow').read(1))
        attempt('home', lambda: os.listdir(os.path.expanduser('~')))
        attempt('other_proc_environ', lambda: open('/proc/1/environ', 'rb').read(1))

        def inside():
            path = os.path.join(WORKDIR, 'sub', 'note.txt')
            os.makedirs(os.path.dirname(path))
            with open(path, 'w') as f:
                f.write('hello')
            with open(path) as f:
                text = f.read()
            os.replace(path, os.path.join(WORKDIR, 'moved.txt'))
            os.remove(os.path.join(WORKDIR, 'moved.txt'))
            return text
        attempt('inside', inside)

        def temp():
            with tempfile.NamedTemporaryFile('w+') as f:
                f.write('x'); f.flush(); f.seek(0)
                return os.path.dirname(f.name), f.read()
        attempt('tempfile', temp)
        attempt('symlink', lambda: os.symlink('/etc/passwd', os.path.join(WORKDIR, 'link')))
    """, workdir, secret=str(secret))
    assert out["read_secret"][0] == "PermissionError", out["read_secret"]
    assert out["write_secret"][0] == "PermissionError"
    assert out["list_secret_dir"][0] == "PermissionError"
    assert secret.read_text() == "s3cret"
    if Path("/etc/shadow").exists():
        assert out["shadow"][0] == "PermissionError"
    assert out["home"][0] == "PermissionError"
    assert out["other_proc_environ"][0] in ("PermissionError", "FileNotFoundError")
    assert out["inside"] == ["ok", "'hello'"]
    assert out["tempfile"] == ["ok", repr((str(workdir.resolve()), "x"))]
    assert out["symlink"][0] == "PermissionError"  # nothing for the window to trip over


@needs_seccomp
def test_no_programs_and_no_new_processes(workdir):
    out = run_confined("""
        import subprocess, threading
        out['system'] = os.system('true')
        attempt('subprocess', lambda: subprocess.run(['true']))
        def fork():
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            return pid
        attempt('fork', fork)
        attempt('execv', lambda: os.execv('/bin/true', ['true']))
        attempt('kill_init', lambda: os.kill(1, 0))  # signal 0: a permission probe only
        box = []
        t = threading.Thread(target=lambda: box.append(1)); t.start(); t.join()
        out['thread'] = box
    """, workdir)
    assert out["system"] != 0
    assert out["subprocess"][0] == "PermissionError", out["subprocess"]
    assert out["fork"][0] == "PermissionError", out["fork"]
    assert out["execv"][0] == "PermissionError", out["execv"]
    assert out["kill_init"][0] == "PermissionError", out["kill_init"]
    assert out["thread"] == [1]


@pytest.mark.skipif(bool(NO_SECCOMP) and LANDLOCK_ABI < 4,
                    reason="neither seccomp nor Landlock ABI >= 4 (TCP rules) is available")
def test_network_is_closed(workdir):
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    try:
        out = run_confined("""
            import socket
            def connect():
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                try:
                    s.settimeout(5)
                    s.connect(('127.0.0.1', PORT))
                finally:
                    s.close()
            attempt('tcp', connect)
            attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
            def pair():
                a, b = socket.socketpair()
                a.sendall(b'ping')
                return b.recv(4)
            attempt('socketpair', pair)
        """, workdir, before="""
            import socket
            s = socket.create_connection(('127.0.0.1', PORT), timeout=5)  # the port is open
            s.close()
        """, port=port)
    finally:
        server.close()
    assert out["tcp"][0] == "PermissionError", out["tcp"]
    if not NO_SECCOMP:
        assert out["udp"][0] == "PermissionError", out["udp"]
    assert out["socketpair"] == ["ok", "b'ping'"]


def test_memory_bomb_is_a_memory_error(workdir):
    out = run_confined("""
        def bomb():
            return len(bytearray(MEMORY * 2))
        attempt('bomb', bomb)
        out['alive'] = len(bytearray(1024 * 1024))  # and it lives on
        import resource
        attempt('raise_limit', lambda: resource.setrlimit(
            resource.RLIMIT_DATA, (MEMORY * 4, MEMORY * 4)))
    """, workdir)
    assert out["bomb"][0] == "MemoryError", out["bomb"]
    assert out["alive"] == 1024 * 1024
    assert out["raise_limit"][0] == "ValueError", out["raise_limit"]  # even as root


def test_torch_threads_and_lazy_imports_still_work(workdir):
    out = run_confined("""
        import numpy as np
        import torch
        torch.set_num_threads(2)
        x = torch.randn(300, 300, requires_grad=True)
        (x @ x).relu().sum().backward()
        out['grad'] = list(x.grad.shape)
        a = torch.randn(1000, 1000)
        out['parallel'] = bool(torch.allclose((a @ a).sum(0), (a @ a).sum(0)))
        out['threads'] = torch.get_num_threads()
        out['numpy'] = float(np.linalg.solve(np.eye(3) * 2, np.ones(3)).sum())
        # Lazy imports after confinement: the first dispatch mode imports torch._dynamo,
        # and decimal dlopen()s a C extension that nothing loaded yet.
        from torch.utils._python_dispatch import TorchDispatchMode
        class Passthrough(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        out['dynamo_before'] = 'torch._dynamo' in sys.modules
        with Passthrough():
            out['dispatch'] = (torch.ones(2) + 1).tolist()
        out['dynamo_after'] = 'torch._dynamo' in sys.modules
        import decimal
        out['decimal'] = str(decimal.Decimal(1) / 4)
        path = os.path.join(WORKDIR, 't.pt')
        torch.save(x.detach(), path)
        out['roundtrip'] = bool(torch.equal(torch.load(path), x.detach()))
    """, workdir, memory=memory_cap())  # the kernel's own cap: torch's CUDA build maps
    # more than MEMORY (1 GiB) of writable segments at import ("failed to map segment")
    assert out["grad"] == [300, 300]
    assert out["parallel"] is True
    assert out["threads"] == 2
    assert out["numpy"] == 1.5
    assert out["dynamo_before"] is False and out["dynamo_after"] is True
    assert out["dispatch"] == [2.0, 2.0]
    assert out["decimal"] == "0.25"
    assert out["roundtrip"] is True


@needs_landlock
def test_report_names_threads_landlock_cannot_reach(workdir):
    # numpy's OpenBLAS starts worker threads at import; before Landlock ABI 8 (TSYNC)
    # those keep their access, and the report must say so.
    out = run_confined("", workdir, before="import numpy\nout['threads'] = len(os.listdir('/proc/self/task'))")
    notes = " ".join(out["report"]["notes"])
    if LANDLOCK_ABI < 8 and out["threads"] > 1:
        assert "not restricted" in notes
    else:
        assert "not restricted" not in notes


@needs_landlock
def test_landlock_alone_blocks_programs_and_tcp(workdir):
    # Without the seccomp binding (hidden here), Landlock still refuses execve (no
    # path grants EXECUTE) and, from ABI 4, TCP; the report says seccomp is missing.
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        out = run_confined("""
            import socket
            def connect():
                with socket.create_connection(('127.0.0.1', PORT), timeout=5):
                    pass
            attempt('tcp', connect)
            attempt('execv', lambda: os.execv('/bin/true', ['true']))
        """, workdir, before="sys.modules['pyseccomp'] = None", port=server.getsockname()[1])
    finally:
        server.close()
    report = out["report"]
    assert "seccomp" not in report["applied"]
    assert any(s.startswith("seccomp: the pyseccomp package is not installed")
               for s in report["skipped"])
    assert out["execv"][0] == "PermissionError", out["execv"]
    if LANDLOCK_ABI >= 4:
        assert out["tcp"][0] == "PermissionError", out["tcp"]


# --- CUDA in two stages: what the driver needs at start, then the strict layer ----------

TWO_STAGES = r"""
import ctypes, errno, json, os, socket, sys, threading
sys.path.insert(0, {root!r})
from gradviz.core.confine import confine, close_device_door

work = sys.argv[1]
report = confine(work, memory_bytes=None, cuda=True)
seen = {{}}

def try_socket():
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))

def try_comm():
    try:
        # as pthread_setname_np does it
        fd = os.open(f"/proc/self/task/{{threading.get_native_id()}}/comm", os.O_RDWR)
        try:
            os.write(fd, b"gradviz-test")
        finally:
            os.close(fd)
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))

def start():
    seen["stage1_socket"] = try_socket()
    seen["stage1_comm"] = try_comm()

report = close_device_door(report, start)
seen["stage2_socket"] = try_socket()
seen["stage2_comm"] = try_comm()
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    seen["stage2_inet"] = "ok"
except OSError as exc:
    seen["stage2_inet"] = errno.errorcode.get(exc.errno, str(exc.errno))
seen["applied"] = list(report.applied)
seen["device_rights"] = list(report.device_rights)
print(json.dumps(seen))
"""


def test_cuda_confinement_opens_the_driver_door_only_until_the_device_started(tmp_path):
    import json
    import subprocess

    from gradviz.core.confine import _load_landlock, _load_seccomp

    if not sys.platform.startswith("linux"):
        pytest.skip("the OS layers are Linux-only")
    if _load_seccomp()[0] is None or _load_landlock()[0] is None:
        pytest.skip("this machine lacks seccomp or Landlock")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = tmp_path / "stages.py"
    script.write_text(TWO_STAGES.format(root=root))
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run([sys.executable, str(script), str(work)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {"landlock", "seccomp"} <= set(seen["applied"])
    # what the driver needs while it starts (measured on an H200: cuInit fails without)
    assert seen["stage1_socket"] == "ok"
    assert seen["stage1_comm"] == "ok"
    # and what a script finds afterwards: both refused
    assert seen["stage2_socket"] == "EACCES"
    assert seen["stage2_inet"] == "EACCES"
    assert seen["stage2_comm"] == "EACCES"
    assert len(seen["device_rights"]) == 2
    assert all("then refused" in r for r in seen["device_rights"])
