"""The Debian package as operators run it: installed into a fresh Debian 12 and started as its unit says.

`.ci/run` runs this folder after `scripts/build-release.sh .build/dist`; it reuses that binary
(`$GATEHOUSE_RELEASE_BIN`, else `.build/dist/gatehouse`) and never builds one. Once per run:

  1. `debootstrap --variant=minbase bookworm` into a temp dir, from Debian's mirror (`$PACKAGE_TEST_MIRROR`,
     default http://deb.debian.org/debian), while `scripts/package-deb.sh --binary <that binary>` builds the
     package; then `apt-get install ./gatehouse_<version>_<arch>.deb` with the root's own apt, which resolves
     `Depends` there: nothing else is installed.
  2. A private CA (openssl, on this machine) and one leaf for 127.0.0.1 and localhost. The CA's certificate
     goes into the root's /usr/local/share/ca-certificates and `update-ca-certificates` runs there: an
     operator's configuration; the trust store itself comes from the package's `Depends`.
  3. On this machine (the root shares its network, so loopback is one): django-oauth-toolkit
     (Tests/Interop/dot_server, OpenID Connect) serving https with the leaf, a plain-http stub backend and an
     https stub upstream with the same leaf (Tests/Support/stub_backend.py).
  4. What an operator writes into /etc/gatehouse: gatehouse.yaml (the packaged file with `listen`,
     `public_url`, `backend` and an https entry of `upstreams:` set), Providers/dot.yaml (kind oidc, its
     secret as `${DOT_CLIENT_SECRET}`) and gatehouse.env (that secret, mode 0600, the unit's EnvironmentFile).
  5. The unit's ExecStartPre and ExecStart lines, read from the installed unit file, run in the root as
     systemd runs them (see `ServiceRunner`).

Every command in the root runs in a private mount namespace (`unshare --mount`) that holds the root's /proc,
/dev, /sys and a tmpfs on /run and /tmp: those mounts end with the command, so nothing stays mounted on this
machine, whatever happens to the test. The root is deleted at the end (unless PACKAGE_TEST_KEEP_ROOT=1).

Needs root (debootstrap, chroot, mounts), debootstrap, unshare, openssl, dpkg-dev and binutils (scripts/test-setup
installs them) and network access to the mirror. Missing any: a failure under GATEHOUSE_TEST_REQUIRE_ALL or CI,
a skip otherwise.
"""
from __future__ import annotations

import json
import os
import random
import re
import secrets
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import requests
import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "Tests" / "Support"))
sys.path.insert(0, str(REPO / "Tests" / "Interop"))
from gatehouse_testkit import free_port, missing, stop_process, tail, wait_until  # noqa: E402
from stub_backend import StubBackend  # noqa: E402

SUITE = "bookworm"
MIRROR = os.environ.get("PACKAGE_TEST_MIRROR", "http://deb.debian.org/debian")
KEEP_ROOT = os.environ.get("PACKAGE_TEST_KEEP_ROOT") == "1"
DEBOOTSTRAP_TIMEOUT = 6 * 60
APT_TIMEOUT = 4 * 60
STARTUP_TIMEOUT = 60
UNIT_PATH = "/lib/systemd/system/gatehouse.service"
PROVIDER_ID = "dot"
CA_NAME = "gatehouse-package-test-ca"
#: Directories of the root that are mounted over while a command runs there (never walked or compared).
MOUNTED = ("proc", "dev", "sys", "run", "tmp")
#: The environment systemd starts a service with, before User=, StateDirectory= and EnvironmentFile= add theirs.
SYSTEMD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"
ROOT_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
            "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive"}

#: Seconds each phase took, printed at the end of the run (the suite's budget in CI is 8 minutes).
PHASES: dict[str, float] = {}


class phase:
    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        self.start = time.monotonic()

    def __exit__(self, *exc):
        PHASES[self.name] = PHASES.get(self.name, 0.0) + time.monotonic() - self.start


def pytest_terminal_summary(terminalreporter):
    if PHASES:
        parts = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in PHASES.items())
        terminalreporter.write_line(f"package suite phases: {parts}")


def run(args: list, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("timeout", 300)
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, stdin=subprocess.DEVNULL, **kwargs)


def release_binary() -> Path:
    """`$GATEHOUSE_RELEASE_BIN`, else `.build/dist/gatehouse` (what .ci/run builds just before this suite)."""
    return Path(os.environ.get("GATEHOUSE_RELEASE_BIN") or REPO / ".build" / "dist" / "gatehouse")


# ---------------------------------------------------------------- the root

# sh -c SCRIPT sh ROOT COMMAND...: the root's kernel file systems and a fresh /run and /tmp (as a booted system
# has, and as the unit's PrivateTmp= gives the service), in this command's own mount namespace, then chroot.
MOUNT_AND_CHROOT = r"""
set -e
root="$1"; shift
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$root/run"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/tmp"
exec chroot "$root" "$@"
"""


class DebianRoot:
    """A debootstrapped Debian 12 in `path`; `run` and `popen` execute commands in it (see MOUNT_AND_CHROOT)."""

    def __init__(self, path: Path):
        self.path = path

    def __truediv__(self, inside: str) -> Path:
        return self.path / inside.lstrip("/")

    def command(self, args: list[str], env: dict[str, str] | None = None) -> list[str]:
        environment = [f"{k}={v}" for k, v in (ROOT_ENV if env is None else env).items()]
        return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", MOUNT_AND_CHROOT, "sh",
                str(self.path), "/usr/bin/env", "-i", *environment, *[str(a) for a in args]]

    def run(self, args: list, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        return run(self.command(args, env), timeout=timeout)

    def popen(self, args: list, env: dict[str, str], log: Path) -> subprocess.Popen:
        with open(log, "ab") as out:
            return subprocess.Popen(self.command(args, env), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """Every path in the root (not under MOUNTED), with its owner and group."""
        found: dict[str, tuple[int, int]] = {}
        top = str(self.path)
        for directory, dirnames, filenames in os.walk(top):
            if directory == top:
                dirnames[:] = [d for d in dirnames if d not in MOUNTED]
            for name in dirnames + filenames:
                full = os.path.join(directory, name)
                info = os.lstat(full)
                found["/" + os.path.relpath(full, top)] = (info.st_uid, info.st_gid)
        return found

    def passwd(self, name: str) -> list[str] | None:
        for line in (self / "etc/passwd").read_text().splitlines():
            fields = line.split(":")
            if fields[0] == name:
                return fields
        return None

    def group(self, name: str) -> list[str] | None:
        for line in (self / "etc/group").read_text().splitlines():
            fields = line.split(":")
            if fields[0] == name:
                return fields
        return None

    def package_status(self, package: str) -> str:
        done = self.run(["dpkg-query", "-W", "-f=${db:Status-Status}", package])
        return done.stdout.strip() if done.returncode == 0 else "not-installed"

    def owned_by_packages(self) -> set[str]:
        """Every path that an installed package of the root lists (dpkg's info/*.list)."""
        owned: set[str] = set()
        for listing in (self / "var/lib/dpkg/info").glob("*.list"):
            owned.update(line for line in listing.read_text(errors="replace").splitlines() if line)
        return owned


def _mounts_under(path: Path) -> list[str]:
    prefix = str(path)
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    return [p for p in points if p == prefix or p.startswith(prefix + "/")]


def _processes_in(path: Path) -> list[int]:
    """Processes whose root directory is `path` (only ever ones this suite started there)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "root") == str(path):
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def remove_root(path: Path) -> None:
    """Deletes the root, never through a mount: anything still running in it is ended first, and a mount found
    under it (there should be none: the mounts live in the commands' own namespaces) is taken down or, failing
    that, the root is left where it is."""
    for pid in _processes_in(path):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    wait_until(lambda: not _processes_in(path), 10)
    for point in sorted(_mounts_under(path), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)
    if _mounts_under(path):
        pytest.fail(f"mounts remain under {path}: {_mounts_under(path)}; not deleting it")
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def prerequisites() -> None:
    if os.geteuid() != 0:
        missing("the package suite needs root (debootstrap, chroot, mounts)")
    for tool, package in [("debootstrap", "debootstrap"), ("unshare", "util-linux"), ("chroot", "coreutils"),
                          ("openssl", "openssl"), ("dpkg-deb", "dpkg"), ("dpkg-shlibdeps", "dpkg-dev"), ("strip", "binutils")]:
        if not shutil.which(tool):
            missing(f"{tool} is not installed (apt-get install {package}; scripts/test-setup installs it)")
    binary = release_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        missing(f"no release binary at {binary}: build it with `scripts/build-release.sh .build/dist` (.ci/run does) "
                f"or set GATEHOUSE_RELEASE_BIN")


@pytest.fixture(scope="session")
def workdir(prerequisites):
    path = Path(tempfile.mkdtemp(prefix="gatehouse-package-", dir="/var/tmp"))
    yield path
    if KEEP_ROOT:
        print(f"\n[package] kept {path}")
        return
    if (path / "root").exists():
        remove_root(path / "root")
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def built(workdir) -> tuple[DebianRoot, Path]:
    """(the debootstrapped root, the package built from the release binary): made side by side."""
    out = workdir / "deb"
    out.mkdir()
    started = time.monotonic()
    packaging = subprocess.Popen(["bash", str(REPO / "scripts" / "package-deb.sh"), "--binary", str(release_binary()), str(out)],
                                 cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    root = DebianRoot(workdir / "root")
    with phase("debootstrap"):
        # In a mount namespace of its own: the /proc and /sys debootstrap mounts in the root end with it, even when
        # it is stopped half-way. A second attempt, from scratch, when the mirror failed the first.
        for attempt in (1, 2):
            bootstrapped = run(["unshare", "--mount", "--propagation", "private", "--",
                                "debootstrap", "--variant=minbase", SUITE, root.path, MIRROR], timeout=DEBOOTSTRAP_TIMEOUT)
            if bootstrapped.returncode == 0 or attempt == 2:
                break
            print(f"[package] debootstrap failed, trying once more:\n{bootstrapped.stdout[-2000:]}\n{bootstrapped.stderr[-2000:]}")
            remove_root(root.path)
    try:
        packaged_output = packaging.communicate(timeout=max(60, DEBOOTSTRAP_TIMEOUT - (time.monotonic() - started)))[0]
    except subprocess.TimeoutExpired:
        packaging.kill()
        packaged_output = packaging.communicate()[0]
    assert bootstrapped.returncode == 0, (f"debootstrap --variant=minbase {SUITE} from {MIRROR} failed:\n"
                                          f"{bootstrapped.stdout[-3000:]}\n{bootstrapped.stderr[-3000:]}")
    text = packaged_output.decode(errors="replace")
    assert packaging.returncode == 0, f"scripts/package-deb.sh failed:\n{text}"
    debs = sorted(out.glob("*.deb"))
    assert len(debs) == 1, f"expected one .deb in {out}: {debs}\n{text}"
    return root, debs[0]


class Installed:
    def __init__(self, root: DebianRoot, deb: Path, before: dict, output: str):
        self.root = root
        self.deb = deb
        #: The root's paths before the package was installed.
        self.before = before
        self.output = output
        #: What the operator added (kept by a purge): paths in the root.
        self.operator_files: list[str] = []


@pytest.fixture(scope="session")
def installed(built) -> Installed:
    """`apt-get install ./gatehouse_….deb` in the root, as an operator installs it (the file then deleted)."""
    root, deb = built
    before = root.snapshot()
    inside = f"/var/tmp/{deb.name}"
    shutil.copy(deb, root / inside)
    os.chmod(root / inside, 0o644)
    with phase("apt-get install"):
        lists = list((root / "var/lib/apt/lists").glob("*_Packages"))
        if not lists:  # debootstrap keeps the index it used; fetch one only when it did not
            updated = root.run(["apt-get", "update"], timeout=APT_TIMEOUT)
            assert updated.returncode == 0, f"apt-get update in the root:\n{updated.stdout}\n{updated.stderr}"
        done = root.run(["sh", "-c", 'cd /var/tmp && exec apt-get install -y "./$1"', "sh", deb.name], timeout=APT_TIMEOUT)
    (root / inside).unlink()
    assert done.returncode == 0, f"apt-get install ./{deb.name} in a fresh {SUITE}:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    return Installed(root, deb, before, done.stdout + done.stderr)


# ---------------------------------------------------------------- certificates

def openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"openssl {' '.join(args)}:\n{done.stderr}"


class Certificates:
    """A private CA (`ca`) and one leaf it signed for 127.0.0.1 and localhost (`chain`, `key`)."""

    def __init__(self, directory: Path):
        directory.mkdir()
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
                "-out", "ca.pem", "-days", "2", "-subj", "/CN=Gatehouse package test CA", cwd=directory)
        (directory / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                                           "extendedKeyUsage=serverAuth\n")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key",
                "-out", "leaf.csr", "-subj", "/CN=127.0.0.1", cwd=directory)
        openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "leaf.crt", "-days", "1", "-extfile", "san.ext", cwd=directory)
        self.ca = directory / "ca.pem"
        self.chain = directory / "leaf-chain.pem"
        self.chain.write_text((directory / "leaf.crt").read_text() + self.ca.read_text())
        self.key = directory / "leaf.key"

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(self.chain), str(self.key))
        return context


@pytest.fixture(scope="session")
def certificates(workdir) -> Certificates:
    return Certificates(workdir / "tls")


# ---------------------------------------------------------------- the peers on this machine

@pytest.fixture(scope="session")
def gateway_port() -> int:
    """Chosen before DOT starts: DOT registers the gateway's callback. Below the kernel's ephemeral range: the peers
    started after this choice bind port 0, and one was once handed this very port (the http backend answered on the
    gateway's address, and the gateway found its port taken)."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for port in random.sample(range(10000, low), 200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    return free_port()


class Dot:
    def __init__(self, info: dict, log: Path):
        self.url: str = info["url"]
        self.issuer: str = info["issuer"]
        self.client_id: str = info["oidc_client_id"]
        self.client_secret: str = info["oidc_client_secret"]
        self.username: str = info["username"]
        self.password: str = info["password"]
        self.email: str = info["email"]
        self.subject: str = info["subject"]
        self.log = log


@pytest.fixture(scope="session")
def dot(workdir, certificates, gateway_port):
    """django-oauth-toolkit's OpenID Connect provider over https (the private CA's leaf)."""
    data = workdir / "dot"
    data.mkdir()
    out, log = workdir / "dot.stdout", workdir / "dot.log"
    env = dict(os.environ, DOT_DATA_DIR=str(data), DOT_PORT="0",
               DOT_OIDC_REDIRECT_URIS=f"http://127.0.0.1:{gateway_port}/v1/auth/{PROVIDER_ID}/callback",
               DOT_ACCESS_TOKEN_EXPIRE_SECONDS="600", DOT_TLS_CERT_FILE=str(certificates.chain),
               DOT_TLS_KEY_FILE=str(certificates.key), PYTHONUNBUFFERED="1")
    with open(out, "wb") as so, open(log, "wb") as se:
        proc = subprocess.Popen([sys.executable, str(REPO / "Tests" / "Interop" / "dot_server" / "run.py")],
                                stdout=so, stderr=se, stdin=subprocess.DEVNULL, env=env, cwd=str(data))
    try:
        info = None

        def ready() -> bool:
            nonlocal info
            for line in out.read_text(errors="replace").splitlines():
                if line.startswith("DOT_READY "):
                    info = json.loads(line[len("DOT_READY "):])
            return info is not None or proc.poll() is not None

        wait_until(ready, STARTUP_TIMEOUT, 0.2)
        if info is None:
            pytest.fail(f"DOT did not start (exit {proc.poll()}):\n{tail(log)}")
        assert info["issuer"].startswith("https://127.0.0.1:"), info
        yield Dot(info, log)
    finally:
        stop_process(proc)


@pytest.fixture(scope="session")
def http_backend():
    with StubBackend(probe=None) as backend:
        yield backend


@pytest.fixture(scope="session")
def https_upstream(certificates):
    with StubBackend(probe=None, tls=certificates.server_context()) as upstream:
        yield upstream


# ---------------------------------------------------------------- the operator's configuration

UPSTREAM_PREFIX = "/secure"


class Configured:
    def __init__(self, installed: Installed, url: str, client_secret: str):
        self.installed = installed
        self.root = installed.root
        self.url = url
        self.client_secret = client_secret


@pytest.fixture(scope="session")
def configured(installed, certificates, dot, http_backend, https_upstream, gateway_port) -> Configured:
    """What an operator does after installing: trust the private CA, then edit /etc/gatehouse."""
    root = installed.root
    with phase("configure"):
        # The CA into the root's trust store, with the tool the ca-certificates package provides.
        local_cas = root / "usr/local/share/ca-certificates"
        assert local_cas.is_dir(), "no /usr/local/share/ca-certificates: ca-certificates did not come with the package"
        shutil.copy(certificates.ca, local_cas / f"{CA_NAME}.crt")
        os.chmod(local_cas / f"{CA_NAME}.crt", 0o644)
        installed.operator_files.append(f"/usr/local/share/ca-certificates/{CA_NAME}.crt")
        updated = root.run(["update-ca-certificates"])
        assert updated.returncode == 0, f"update-ca-certificates:\n{updated.stdout}\n{updated.stderr}"
        assert "1 added" in updated.stdout, updated.stdout

        # gatehouse.yaml: the packaged file, with what the operator sets.
        config_path = root / "etc/gatehouse/gatehouse.yaml"
        config = yaml.safe_load(config_path.read_text())
        url = f"http://127.0.0.1:{gateway_port}"
        config["listen"] = f"127.0.0.1:{gateway_port}"
        config["public_url"] = url
        config["backend"]["url"] = http_backend.base
        config["upstreams"] = [{"name": "secure", "prefix": UPSTREAM_PREFIX, "url": https_upstream.base}]
        config_path.write_text("# Edited by the operator (Tests/Package).\n" + yaml.safe_dump(config, sort_keys=False))

        # The provider file, its secret in the unit's EnvironmentFile (root's, mode 0600).
        provider = root / f"etc/gatehouse/Providers/{PROVIDER_ID}.yaml"
        provider.write_text(
            f'id: "{PROVIDER_ID}"\nkind: "oidc"\nname: "django-oauth-toolkit"\n'
            f'issuer: {json.dumps(dot.issuer)}\nclient_id: {json.dumps(dot.client_id)}\n'
            f'client_secret: "${{DOT_CLIENT_SECRET}}"\n')
        os.chmod(provider, 0o644)
        environment = root / "etc/gatehouse/gatehouse.env"
        environment.write_text(f"# provider secrets of gatehouse.service\nDOT_CLIENT_SECRET={dot.client_secret}\n")
        os.chmod(environment, 0o600)
        installed.operator_files += [f"/etc/gatehouse/Providers/{PROVIDER_ID}.yaml", "/etc/gatehouse/gatehouse.env"]
    return Configured(installed, url, dot.client_secret)


# ---------------------------------------------------------------- the unit, run as systemd runs it

def unit_file(text: str) -> dict[str, dict[str, list[str]]]:
    """A unit file's settings by section and key, in order (continuation lines joined; an empty assignment resets
    the list, as systemd does)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        logical.append(line)
    for line in logical:
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None and "=" in line, f"unexpected unit line {line!r}"
        key, value = (part.strip() for part in line.split("=", 1))
        if value == "":
            current[key] = []
        else:
            current.setdefault(key, []).append(value)
    return sections


def environment_file(text: str) -> dict[str, str]:
    """KEY=VALUE lines as systemd's EnvironmentFile= reads them (comments, blank lines, quotes)."""
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        key, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key.strip()] = value
    return values


class ServiceRunner:
    """The [Service] section of the installed unit, carried out as systemd does what this suite can without
    systemd: StateDirectory= (made, owned by User=/Group=, StateDirectoryMode=), EnvironmentFile= (read as root;
    a leading `-` makes it optional) and Environment=, the environment systemd gives a service (PATH, HOME, USER,
    LOGNAME, SHELL, STATE_DIRECTORY, INVOCATION_ID), then each command line as User=/Group= with that user's
    groups (setpriv --init-groups), NoNewPrivileges=, an empty CapabilityBoundingSet= and AmbientCapabilities=,
    UMask= and WorkingDirectory=. The namespace sandbox (ProtectSystem=, PrivateUsers=, …, SystemCallFilter=) is
    systemd's and is not reproduced here: `systemd-analyze verify` checks those lines (Tests/CLI/test_package.py)."""

    SUPPORTED = {"Type", "User", "Group", "StateDirectory", "StateDirectoryMode", "WorkingDirectory", "EnvironmentFile",
                 "Environment", "ExecStartPre", "ExecStart", "ExecReload", "Restart", "RestartSec", "TimeoutStopSec",
                 "LimitNOFILE", "NoNewPrivileges", "CapabilityBoundingSet", "AmbientCapabilities", "UMask"}

    def __init__(self, root: DebianRoot):
        self.root = root
        self.text = (root / UNIT_PATH).read_text()
        self.service = unit_file(self.text)["Service"]

    def one(self, key: str, default: str | None = None) -> str | None:
        values = self.service.get(key)
        return values[-1] if values else default

    @staticmethod
    def argv(line: str) -> tuple[list[str], bool]:
        """A command line of the unit: (argv, whether a failure is ignored, a leading `-`)."""
        ignore = line.startswith("-")
        line = line.lstrip("-")
        assert not line.startswith(("@", "+", "!", ":")), f"prefix this runner does not carry out: {line!r}"
        assert "%" not in line and "$" not in line, f"specifiers or variables this runner does not expand: {line!r}"
        argv = shlex.split(line)
        assert argv and argv[0].startswith("/"), f"not an absolute command: {line!r}"
        return argv, ignore

    def prepare(self) -> tuple[dict[str, str], list[str]]:
        """What systemd does before the first command: (the environment, the setpriv prefix)."""
        user, group = self.one("User"), self.one("Group")
        assert user and group, "the unit names no User= and Group="
        account, team = self.root.passwd(user), self.root.group(group)
        assert account, f"no user {user} in the root's /etc/passwd (postinst makes it)"
        assert team, f"no group {group} in the root's /etc/group"
        uid, gid = int(account[2]), int(team[2])
        mode = int(self.one("StateDirectoryMode", "0755"), 8)
        for name in " ".join(self.service.get("StateDirectory", [])).split():
            state = self.root / f"/var/lib/{name}"
            state.mkdir(parents=True, exist_ok=True)
            os.chown(state, uid, gid)
            os.chmod(state, mode)
        env = {"PATH": SYSTEMD_PATH, "HOME": account[5], "USER": user, "LOGNAME": user, "SHELL": account[6],
               "INVOCATION_ID": secrets.token_hex(16)}
        if self.service.get("StateDirectory"):
            env["STATE_DIRECTORY"] = ":".join(f"/var/lib/{n}" for n in " ".join(self.service["StateDirectory"]).split())
        for entry in self.service.get("Environment", []):
            for pair in shlex.split(entry):
                key, value = pair.split("=", 1)
                env[key] = value
        for entry in self.service.get("EnvironmentFile", []):
            optional = entry.startswith("-")
            path = self.root / entry.lstrip("-")
            if path.exists():
                env.update(environment_file(path.read_text()))
            else:
                assert optional, f"EnvironmentFile {entry} is missing"
        prefix = ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={gid}", "--init-groups"]
        if self.one("NoNewPrivileges") == "yes":
            prefix.append("--no-new-privs")
        if self.service.get("CapabilityBoundingSet") == []:
            prefix.append("--bounding-set=-all")
        if self.service.get("AmbientCapabilities", []) == []:
            prefix.append("--inh-caps=-all")
        self.uid, self.gid = uid, gid
        return env, prefix

    def command(self, prefix: list[str], argv: list[str]) -> list[str]:
        umask = self.one("UMask", "0022")
        directory = self.one("WorkingDirectory", "/")
        assert not directory.startswith(("-", "~")), f"WorkingDirectory={directory} is not carried out here"
        return [*prefix, "--", "/bin/sh", "-c", 'umask "$1" && cd "$2" && shift 2 && exec "$@"', "sh", umask, directory, *argv]


class Service:
    def __init__(self, runner: ServiceRunner, proc: subprocess.Popen, url: str, log: Path, pre: list[subprocess.CompletedProcess]):
        self.runner = runner
        self.proc = proc
        self.url = url
        self.log = log
        self.pre = pre
        self.exit_code: int | None = None

    def log_tail(self) -> str:
        return tail(self.log)

    def stop(self) -> int:
        """As systemd stops it: SIGTERM, SIGKILL after TimeoutStopSec=. The exit status."""
        if self.exit_code is None:
            timeout = float(re.sub(r"s$", "", self.runner.one("TimeoutStopSec", "90s")))
            stop_process(self.proc, timeout=timeout)
            self.exit_code = self.proc.returncode
        return self.exit_code


@pytest.fixture(scope="session")
def service(configured, workdir):
    """ExecStartPre, then ExecStart, of the installed unit, in the root; stopped at the end."""
    root = configured.root
    runner = ServiceRunner(root)
    unknown = sorted(set(runner.service) - ServiceRunner.SUPPORTED - {
        "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices", "PrivateUsers", "RemoveIPC", "ProtectHostname",
        "ProtectClock", "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups",
        "ProtectProc", "RestrictAddressFamilies", "RestrictNamespaces", "RestrictRealtime", "RestrictSUIDSGID",
        "LockPersonality", "MemoryDenyWriteExecute", "SystemCallArchitectures", "SystemCallFilter", "SystemCallErrorNumber"})
    assert not unknown, f"the unit has settings this suite does not know how to carry out or leave to systemd: {unknown}"
    env, prefix = runner.prepare()
    log = workdir / "gatehouse.log"
    pre = []
    with phase("ExecStartPre"):
        for line in runner.service.get("ExecStartPre", []):
            argv, ignore = runner.argv(line)
            done = root.run(runner.command(prefix, argv), env=env, timeout=60)
            with open(log, "a") as f:
                f.write(f"$ {line}\n{done.stdout}{done.stderr}(exit {done.returncode})\n")
            assert ignore or done.returncode == 0, f"ExecStartPre={line} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
            pre.append(done)
    starts = runner.service.get("ExecStart", [])
    assert len(starts) == 1, f"Type={runner.one('Type')} takes one ExecStart=, the unit has {starts}"
    argv, _ = runner.argv(starts[0])
    with open(log, "a") as f:
        f.write(f"$ {starts[0]}\n")
    proc = root.popen(runner.command(prefix, argv), env, log)
    svc = Service(runner, proc, configured.url, log, pre)
    try:
        with phase("start"):
            def up() -> bool:
                if proc.poll() is not None:
                    return True
                try:
                    return requests.get(svc.url + "/healthz", timeout=2).status_code == 200
                except requests.RequestException:
                    return False

            wait_until(up, STARTUP_TIMEOUT, 0.2)
            assert proc.poll() is None, f"ExecStart exited with {proc.returncode}:\n{svc.log_tail()}"
        yield svc
    finally:
        svc.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        svc = getattr(item, "funcargs", {}).get("service")
        if isinstance(svc, Service):
            report.sections.append(("gateway log (tail)", svc.log_tail()))
