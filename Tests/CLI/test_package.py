"""The Debian package (scripts/package-deb.sh) and the one version of a release.

The package is built once for this module from the release binary: `$GATEHOUSE_RELEASE_BIN` when set,
else `.build/dist/gatehouse`, else `$GATEHOUSE_BIN` when that is a release build, else `scripts/build-release.sh
.build/dist` builds it first (about 9 minutes on 2 cores; scripts/test therefore builds the release binary once). Then: lintian reports
no error; the control fields, conffiles, files and maintainer scripts are as deploy/README.md describes;
the unit passes `systemd-analyze verify`; and the package, extracted into a throwaway root, runs from
there (`--version`, `check` on the packaged configuration, `serve` generating its keys and database where
the packaged configuration puts them, moved under the root, and answering /readyz 200 once a provider file
is added and reloaded). As root, it is also installed with dpkg into this machine seen through an overlay
(`unshare --mount`, writes to a tmpfs): user, state directory, conffiles, upgrade, purge.

Needs dpkg-dev, binutils, lintian and systemd (systemd-analyze): scripts/test-setup installs them; the
installation test needs root (as scripts/test-setup does, for apt-get) and unshare.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import requests
import yaml

from conftest import REPO, clean_env, write_provider
from gatehouse_testkit import free_port, missing, stop_process, tail, wait_until

SWIFT_VERSION_FILE = REPO / "Sources" / "gatehouse" / "Gatehouse.swift"
BUILD_TIMEOUT = 40 * 60
TOOLS = ["dpkg-deb", "dpkg-shlibdeps", "strip", "lintian"]
CONFFILES = ["/etc/gatehouse/gatehouse.yaml", "/etc/gatehouse/Providers/README"]
# The sandbox of deploy/gatehouse.service that the package's unit keeps (DynamicUser and
# LoadCredential are replaced by the package's own user and generated keys).
SANDBOX_KEYS = ["NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices",
                "PrivateUsers", "ProtectHostname", "ProtectClock", "ProtectKernelTunables",
                "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups", "ProtectProc",
                "CapabilityBoundingSet", "AmbientCapabilities", "RestrictAddressFamilies",
                "RestrictNamespaces", "RestrictRealtime", "RestrictSUIDSGID", "LockPersonality",
                "MemoryDenyWriteExecute", "SystemCallArchitectures", "SystemCallFilter",
                "SystemCallErrorNumber", "UMask"]


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("timeout", 300)
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, stdin=subprocess.DEVNULL, **kwargs)


def source_version() -> str:
    match = re.search(r'static let version = "([^"]+)"', SWIFT_VERSION_FILE.read_text())
    assert match, f"no `static let version` in {SWIFT_VERSION_FILE}"
    return match.group(1)


def unit_settings(text: str) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")) and "=" in line:
            key, value = line.split("=", 1)
            settings.setdefault(key, []).append(value)
    return settings


def release_binary() -> Path:
    """`$GATEHOUSE_RELEASE_BIN`; else `.build/dist/gatehouse` when it is there; else `$GATEHOUSE_BIN` when that is
    a release build (the Swift runtime linked in: no libswiftCore.so needed); else `.build/dist/gatehouse`, to build."""
    if os.environ.get("GATEHOUSE_RELEASE_BIN"):
        return Path(os.environ["GATEHOUSE_RELEASE_BIN"])
    default = REPO / ".build" / "dist" / "gatehouse"
    gateway = os.environ.get("GATEHOUSE_BIN")
    if not default.exists() and gateway and Path(gateway).is_file():
        libraries = run(["ldd", gateway])
        if libraries.returncode == 0 and "libswiftCore" not in libraries.stdout:
            return Path(gateway)
    return default


# --- the package, built once ------------------------------------------------------------------

@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> Path:
    for tool in TOOLS:
        if not shutil.which(tool):
            missing(f"{tool} is not installed (scripts/test-setup installs dpkg-dev, binutils and lintian)")
    binary = release_binary()
    if not binary.exists():
        if os.environ.get("GATEHOUSE_RELEASE_BIN"):
            pytest.fail(f"GATEHOUSE_RELEASE_BIN names no file: {binary}")
        built = run(["bash", REPO / "scripts" / "build-release.sh", binary.parent], cwd=REPO, timeout=BUILD_TIMEOUT)
        assert built.returncode == 0, f"scripts/build-release.sh failed:\n{built.stdout[-4000:]}\n{built.stderr[-4000:]}"
    out = tmp_path_factory.mktemp("deb")
    made = run(["bash", REPO / "scripts" / "package-deb.sh", "--binary", binary, out], cwd=REPO)
    assert made.returncode == 0, f"scripts/package-deb.sh failed:\n{made.stdout}\n{made.stderr}"
    debs = sorted(out.glob("*.deb"))
    assert len(debs) == 1, f"expected one .deb in {out}: {debs}"
    return debs[0]


@pytest.fixture(scope="module")
def version(deb) -> str:
    return run(["dpkg-deb", "-f", deb, "Version"]).stdout.strip()


@pytest.fixture(scope="module")
def control_dir(deb, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("control")
    assert run(["dpkg-deb", "-e", deb, target]).returncode == 0
    return target


@pytest.fixture
def root(deb, tmp_path) -> Path:
    """The package extracted into a throwaway root (`dpkg-deb -x`)."""
    target = tmp_path / "root"
    extracted = run(["dpkg-deb", "-x", deb, target])
    assert extracted.returncode == 0, extracted.stderr
    return target


# --- the package --------------------------------------------------------------------------------

def test_lintian_reports_no_error(deb):
    result = run(["lintian", "--fail-on", "error", "--no-tag-display-limit", deb])
    errors = [line for line in result.stdout.splitlines() if line.startswith("E:")]
    assert result.returncode == 0 and not errors, f"lintian:\n{result.stdout}\n{result.stderr}"


def test_lintian_overrides_only_the_embedded_libraries(root):
    """The package's own overrides name only the C libraries two Swift packages link in (deploy/deb/lintian-overrides)."""
    overrides = (root / "usr/share/lintian/overrides/gatehouse").read_text().splitlines()
    tags = sorted(line for line in overrides if line.strip() and not line.startswith("#"))
    assert tags == ["embedded-library libyaml [usr/bin/gatehouse]", "embedded-library zlib [usr/bin/gatehouse]"], tags


def test_version_name_and_architecture_are_the_binarys(deb, version):
    assert version == source_version()
    assert deb.name == f"gatehouse_{version}_amd64.deb"
    fields = run(["dpkg-deb", "-f", deb, "Package", "Architecture"]).stdout
    assert "Package: gatehouse" in fields and "Architecture: amd64" in fields, fields


def test_depends_come_from_the_binarys_libraries(deb):
    depends = run(["dpkg-deb", "-f", deb, "Depends"]).stdout.strip()
    packages = {}
    for item in depends.split(","):
        match = re.match(r"\s*([a-z0-9][a-z0-9+.-]*)(?:\s*\(>=\s*([^)]+)\))?\s*$", item)
        assert match, f"unexpected Depends item {item!r} in {depends!r}"
        packages[match.group(1)] = match.group(2)
    # The release binary links glibc, SQLite and zlib (scripts/build-release.sh); postinst runs adduser; outbound
    # TLS (providers, https upstreams) trusts the system roots, which ca-certificates provides.
    for name in ["libc6", "libsqlite3-0", "zlib1g", "adduser", "ca-certificates"]:
        assert name in packages, f"{name} missing from Depends: {depends}"
    # DT_RELR (packed relocations) needs glibc 2.36.
    assert packages["libc6"], f"libc6 without a version in Depends: {depends}"
    assert run(["dpkg", "--compare-versions", packages["libc6"], "ge", "2.36"]).returncode == 0, depends


def test_files_conffiles_and_maintainer_scripts(deb, control_dir):
    listing = run(["dpkg-deb", "-c", deb]).stdout
    entries = {}
    for line in listing.splitlines():
        fields = line.split(None, 5)
        entries[fields[5].split(" -> ")[0].removeprefix(".")] = (fields[0], fields[1], fields[5])
    for path in ["/usr/bin/gatehouse", "/lib/systemd/system/gatehouse.service", "/etc/gatehouse/gatehouse.yaml",
                 "/etc/gatehouse/Providers/README", "/usr/share/doc/gatehouse/copyright",
                 "/usr/share/man/man1/gatehouse.1.gz", "/usr/share/doc/gatehouse/examples/gatehouse.example.yaml"]:
        assert path in entries, f"{path} not in the package:\n{listing}"
    assert entries["/usr/bin/gatehouse"][:2] == ("-rwxr-xr-x", "root/root"), entries["/usr/bin/gatehouse"]
    assert entries["/etc/gatehouse/data"][2].endswith("-> /var/lib/gatehouse"), entries.get("/etc/gatehouse/data")
    # State is made at run time (StateDirectory=), never shipped.
    assert not [p for p in entries if p.startswith("/var/")], listing

    assert (control_dir / "conffiles").read_text().split() == CONFFILES
    for script in ["postinst", "prerm", "postrm"]:
        path = control_dir / script
        assert os.access(path, os.X_OK), f"{script} is not executable"
        syntax = run(["sh", "-n", path])
        assert syntax.returncode == 0, f"{script}: {syntax.stderr}"
    postinst = (control_dir / "postinst").read_text()
    assert "adduser --system --group --home /var/lib/gatehouse" in postinst
    assert "deb-systemd-helper enable 'gatehouse.service'" in postinst
    # Installing where systemd does not run (a chroot) starts nothing.
    assert "[ -d /run/systemd/system ]" in postinst


def test_postinst_without_systemd_only_creates_the_user(control_dir, tmp_path):
    """postinst in an environment without systemd: its commands are stubs that record their arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    for command in ["adduser", "getent", "deb-systemd-helper", "deb-systemd-invoke", "systemctl", "install", "chown"]:
        stub = bin_dir / command
        exit_code = 2 if command == "getent" else 0   # the user does not exist yet
        stub.write_text(f'#!/bin/sh\necho "{command} $*" >>"{log}"\nexit {exit_code}\n')
        stub.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    result = run(["sh", control_dir / "postinst", "configure", ""], env=env)
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert any(c.startswith("adduser --system --group --home /var/lib/gatehouse --no-create-home") and c.endswith(" gatehouse")
               for c in calls), calls
    assert "deb-systemd-helper enable gatehouse.service" in calls, calls
    if not Path("/run/systemd/system").is_dir():
        assert not [c for c in calls if c.startswith(("deb-systemd-invoke", "systemctl"))], calls


def test_unit_runs_as_its_own_user_with_state_in_var_lib(root):
    unit = (root / "lib/systemd/system/gatehouse.service").read_text()
    settings = unit_settings(unit)
    assert settings["User"] == ["gatehouse"] and settings["Group"] == ["gatehouse"]
    assert "DynamicUser" not in settings
    assert settings["StateDirectory"] == ["gatehouse"]
    assert settings["ExecStart"] == ["/usr/bin/gatehouse serve --config /etc/gatehouse/gatehouse.yaml"]
    assert settings["ExecStartPre"] == ["/usr/bin/gatehouse check --config /etc/gatehouse/gatehouse.yaml"]
    assert settings["WantedBy"] == ["multi-user.target"]
    hand_made = unit_settings((REPO / "deploy" / "gatehouse.service").read_text())
    for key in SANDBOX_KEYS:
        assert settings.get(key) == hand_made.get(key), f"{key}: {settings.get(key)} (package) != {hand_made.get(key)} (deploy/gatehouse.service)"


def test_unit_passes_systemd_analyze_verify(root, tmp_path):
    if not shutil.which("systemd-analyze"):
        missing("systemd-analyze is not installed (scripts/test-setup installs systemd)")
    # As scripts/check-deploy.sh does: a root with the units it pulls in and the programs it runs.
    verify_root = tmp_path / "verify"
    (verify_root / "etc/systemd/system").mkdir(parents=True)
    (verify_root / "usr/lib/systemd").mkdir(parents=True)
    (verify_root / "usr/bin").mkdir(parents=True)
    (verify_root / "bin").symlink_to("usr/bin")
    shutil.copytree("/usr/lib/systemd/system", verify_root / "usr/lib/systemd/system", symlinks=True)
    shutil.copy(root / "lib/systemd/system/gatehouse.service", verify_root / "etc/systemd/system/")
    shutil.copy(root / "usr/bin/gatehouse", verify_root / "usr/bin/gatehouse")
    (verify_root / "usr/bin/kill").write_text("#!/bin/sh\nexit 0\n")
    (verify_root / "usr/bin/kill").chmod(0o755)
    # --man=no: Documentation=man:gatehouse(1) exists once the package is installed, not on this machine.
    result = run(["systemd-analyze", "verify", "--man=no", f"--root={verify_root}", "gatehouse.service"])
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), result.stdout + result.stderr


def test_copyright_is_machine_readable_apache_2(root):
    assert "Apache License" in (REPO / "LICENSE").read_text() and "Version 2.0, January 2004" in (REPO / "LICENSE").read_text()
    text = (root / "usr/share/doc/gatehouse/copyright").read_text()
    assert text.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"), text[:200]
    assert "\nFiles: *\n" in text and "\nLicense: Apache-2.0\n" in text, text
    assert "/usr/share/common-licenses/Apache-2.0" in text


# --- run from a throwaway root ------------------------------------------------------------------

def test_binary_runs_from_the_root(root, version):
    binary = root / "usr/bin/gatehouse"
    result = run([binary, "--version"])
    assert result.returncode == 0 and result.stdout.strip() == f"gatehouse {version}", result
    libraries = run(["ldd", binary]).stdout
    assert "not found" not in libraries, libraries
    assert "libswift" not in libraries, f"the Swift runtime must be linked in:\n{libraries}"


def test_packaged_configuration_checks_and_serves(root, tmp_path):
    config = root / "etc/gatehouse/gatehouse.yaml"
    settings = yaml.safe_load(config.read_text())
    assert settings["listen"] == "127.0.0.1:8080"
    assert settings["store"] == {"kind": "sqlite", "path": "/var/lib/gatehouse/gatehouse.sqlite3"}
    assert settings["providers_dir"] == "/etc/gatehouse/Providers"
    assert "keys" not in settings, "keys are generated in data/ (-> /var/lib/gatehouse) on first start"

    # The packaged file unchanged; its two absolute paths moved under the root by the environment, and
    # data/ (-> /var/lib/gatehouse, where the keys are generated) pointed at the root's /var/lib/gatehouse.
    state = root / "var/lib/gatehouse"
    state.mkdir(parents=True)
    data = root / "etc/gatehouse/data"
    assert os.readlink(data) == "/var/lib/gatehouse"
    data.unlink()
    data.symlink_to(state)
    env = clean_env({"GATEHOUSE_STORE_PATH": str(state / "gatehouse.sqlite3"),
                     "GATEHOUSE_PROVIDERS_DIR": str(root / "etc/gatehouse/Providers")})
    binary = root / "usr/bin/gatehouse"

    checked = run([binary, "check", "--config", config], env=env, cwd=state, timeout=60)
    assert checked.returncode == 0, f"check failed:\n{checked.stdout}\n{checked.stderr}"
    assert "configuration OK" in checked.stdout + checked.stderr

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(binary), "serve", "--config", str(config), "--listen", f"127.0.0.1:{port}"],
                                cwd=str(state), env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        def answers(path: str, status: int) -> bool:
            if proc.poll() is not None:
                return True
            try:
                return requests.get(url + path, timeout=1).status_code == status
            except requests.RequestException:
                return False

        wait_until(lambda: answers("/healthz", 200), 30, 0.1)
        assert proc.poll() is None, f"serve exited with {proc.returncode}:\n{tail(log)}"
        # As installed, no provider yet: alive, and not ready until one is added.
        response = requests.get(url + "/readyz", timeout=5)
        assert (response.status_code, response.json().get("code")) == (503, "no_providers"), response.text
        generated = sorted(p.name for p in state.iterdir())
        assert {"sealing-k1.key", "signing-s1.pem", "gatehouse.sqlite3"} <= set(generated), generated
        assert (state / "sealing-k1.key").stat().st_mode & 0o077 == 0, "key files are the owner's only"

        # A provider file into /etc/gatehouse/Providers, then `systemctl reload` (SIGHUP): ready.
        write_provider(root / "etc/gatehouse", "example")
        proc.send_signal(signal.SIGHUP)
        wait_until(lambda: answers("/readyz", 200), 15, 0.1)
        response = requests.get(url + "/readyz", timeout=5)
        assert response.status_code == 200, f"/readyz {response.status_code}: {response.text}\n{tail(log)}"
        assert response.json()["providers"] == 1, response.text
    finally:
        stop_process(proc)


INSTALL_SCRIPT = r"""
set -eu
# A private mount namespace (unshare --mount): / seen through an overlay whose writes go to a tmpfs,
# so dpkg, adduser and the maintainer scripts run for real and nothing of this machine changes.
mount -t tmpfs tmpfs "$OVERLAY"
mkdir "$OVERLAY/upper" "$OVERLAY/work" "$OVERLAY/merged"
mount -t overlay overlay -o "lowerdir=/,upperdir=$OVERLAY/upper,workdir=$OVERLAY/work" "$OVERLAY/merged"
mount -t proc proc "$OVERLAY/merged/proc"
mount --bind /dev "$OVERLAY/merged/dev"
cp "$DEB" "$OVERLAY/merged/$PACKAGE"
exec chroot "$OVERLAY/merged" /bin/sh -eu -c '
export DEBIAN_FRONTEND=noninteractive
dpkg -i "/$PACKAGE" >/dev/null
echo "user: $(getent passwd gatehouse | cut -d: -f6,7)"
echo "state: $(stat -c "%U:%G %a" /var/lib/gatehouse)"
dpkg-query -W -f="\${Conffiles}\n" gatehouse | sed -n "s/^ \(\/[^ ]*\) .*/conffile: \1/p"
[ -L /etc/systemd/system/multi-user.target.wants/gatehouse.service ] && echo "enabled: yes"
cd /var/lib/gatehouse
runuser -u gatehouse -- gatehouse check --config /etc/gatehouse/gatehouse.yaml >/dev/null 2>&1 && echo "check: ok"
runuser -u gatehouse -- gatehouse serve --config /etc/gatehouse/gatehouse.yaml --listen "127.0.0.1:$PORT" >/tmp/serve.log 2>&1 &
for i in $(seq 300); do
    [ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$PORT/healthz")" = 200 ] && break
    sleep 0.1
done
echo "readyz: $(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$PORT/readyz")"
kill $! || true
wait $! || true
echo "keys: $(stat -c "%n %U %a" sealing-k1.key signing-s1.pem | tr "\n" " ")"
echo "# changed here" >>/etc/gatehouse/gatehouse.yaml
dpkg -i "/$PACKAGE" >/dev/null </dev/null
echo "after upgrade: $(tail -n 1 /etc/gatehouse/gatehouse.yaml)"
[ -e /var/lib/gatehouse/sealing-k1.key ] && echo "state kept: yes"
dpkg --purge gatehouse >/dev/null
[ ! -e /var/lib/gatehouse ] && [ ! -e /etc/gatehouse ] && [ ! -e /usr/bin/gatehouse ] && echo "purged: yes"
'
"""


def test_installs_upgrades_and_purges_in_an_overlay_of_this_system(deb, tmp_path):
    """dpkg -i on this machine seen through an overlay (a private mount namespace, writes to a tmpfs): the
    maintainer scripts create the user and state directory, the unit is enabled (nothing starts: no systemd
    runs here), the binary serves as that user, an upgrade keeps a changed conffile, purge removes it all."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        missing("installing into an overlay of / needs root and unshare (util-linux)")
    # A machine that is root in a container without CAP_SYS_ADMIN cannot make the mount namespace: that is
    # the sandbox's limit, not the package's; the tests above still install it into a throwaway root.
    probe = run(["unshare", "--mount", "--propagation", "private", "sh", "-c", "mount -t tmpfs none /mnt && umount /mnt"], timeout=30)
    if probe.returncode != 0:
        import warnings
        warnings.warn(f"no private mount namespace here ({probe.stderr.strip()}): the install into an overlay was not run")
        return
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    env = {**clean_env(), "OVERLAY": str(overlay), "DEB": str(deb), "PACKAGE": "var/cache/gatehouse-under-test.deb", "PORT": str(free_port())}
    result = run(["unshare", "--mount", "--propagation", "private", "sh", "-c", INSTALL_SCRIPT], env=env, timeout=180)
    lines = result.stdout.splitlines()
    report = f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    assert result.returncode == 0, report
    assert "user: /var/lib/gatehouse:/usr/sbin/nologin" in lines, report
    assert "state: gatehouse:gatehouse 700" in lines, report
    assert [line for line in lines if line.startswith("conffile: ")] == [f"conffile: {c}" for c in CONFFILES], report
    assert "enabled: yes" in lines, report
    assert "check: ok" in lines, report
    assert "readyz: 503" in lines, report   # alive, no provider file yet (see the test above for 200)
    assert "keys: sealing-k1.key gatehouse 600 signing-s1.pem gatehouse 600 " in lines, report
    assert "after upgrade: # changed here" in lines, report
    assert "state kept: yes" in lines, report
    assert "purged: yes" in lines, report


def test_missing_binary_is_refused(tmp_path):
    result = run(["bash", REPO / "scripts" / "package-deb.sh", "--binary", tmp_path / "none", tmp_path], cwd=REPO)
    assert result.returncode != 0
    assert "not an executable" in result.stderr, result.stderr
    assert not list(tmp_path.glob("*.deb"))


# --- one version everywhere ---------------------------------------------------------------------

def deployment_versions() -> dict[str, list[str]]:
    """Every Gatehouse image tag the deployment files name, per file."""
    found: dict[str, list[str]] = {}
    for path in sorted((REPO / "deploy").rglob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            stack = [document]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    image = node.get("image")
                    if isinstance(image, str) and re.search(r"(^|/)gatehouse:", image):
                        found.setdefault(str(path.relative_to(REPO)), []).append(image.rsplit(":", 1)[1])
                    if isinstance(node.get("name"), str) and re.search(r"(^|/)gatehouse$", node["name"]) and "newTag" in node:
                        found.setdefault(str(path.relative_to(REPO)), []).append(str(node["newTag"]))
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
    return found


def test_one_version_everywhere():
    version = source_version()
    found = deployment_versions()
    # Each place that names the image: the Deployment, its kustomization and compose.
    for expected in ["deploy/kubernetes/deployment.yaml", "deploy/kubernetes/kustomization.yaml", "deploy/compose.yaml"]:
        assert expected in found, f"no gatehouse image tag found in {expected}: {found}"
    wrong = {path: tags for path, tags in found.items() if any(tag != version for tag in tags)}
    assert not wrong, f"image tags that are not the binary's version {version}: {wrong}"


def packaged_doc_paths() -> set[str]:
    """The paths scripts/package-deb.sh installs under /usr/share/doc/gatehouse (files, and the directories it
    creates), read from its `install` lines, without building the package."""
    script = (REPO / "scripts" / "package-deb.sh").read_text()
    paths: set[str] = set()
    for target in re.findall(r'"\$root(/usr/share/doc/\$package/[^"]*)"', script):
        path = target.replace("$package", "gatehouse")
        paths.add(path.rstrip("/"))
        parts = path.rstrip("/").split("/")
        paths.update("/".join(parts[:i]) for i in range(5, len(parts)))  # its parents below /usr/share/doc
    for source, target in re.findall(r'install -m \d+ (\S+) "\$root(/usr/share/doc/\$package/[^"]*/)"', script):
        directory = target.replace("$package", "gatehouse")
        if "*" in source:
            paths.update(directory + p.name for p in REPO.glob(source))
    return paths


def test_the_packaged_files_name_the_documentation_paths_the_package_installs():
    """Issue 38: the packaged /etc/gatehouse/gatehouse.yaml sent readers to /usr/share/doc/gatehouse/gatehouse.example.yaml,
    which the package installs as …/examples/gatehouse.example.yaml. Every /usr/share/doc/gatehouse/… path that the
    package's own files (deploy/deb/) name is one package-deb.sh installs."""
    installed = packaged_doc_paths()
    assert "/usr/share/doc/gatehouse/examples/gatehouse.example.yaml" in installed, sorted(installed)
    named = {}
    for source in sorted((REPO / "deploy" / "deb").iterdir()):
        for path in re.findall(r"/usr/share/doc/gatehouse(?:/[A-Za-z0-9_.\-]+)*/?", source.read_text()):
            named.setdefault(path.rstrip("/"), source.name)
    assert named, "deploy/deb names no /usr/share/doc/gatehouse path"
    wrong = {path: source for path, source in named.items() if path not in installed}
    assert not wrong, f"paths deploy/deb names that the package does not install: {wrong}; installed: {sorted(installed)}"
