"""The Helm chart, rendered by a real helm and checked against Kubernetes schemas.

Issue 8: `helm lint --strict` and `helm template` for the default values and
every scenario under helm/ttanjit/ci/, each manifest validated offline with
kubernetes-validate, then assertions on the rendered objects: shard drain,
HPAs vs replicas, probes / resources / security context everywhere, env
contract (docs/protocol.md §6), monitoring toggles, schema rejections.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from chartlib import ALL_VALUES, CHART, ROOT, Manifest, by_kind, pod_specs, run_helm, values_args
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

Rendered = Callable[[str], list[Manifest]]
# The oldest Kubernetes the chart supports (Chart.yaml kubeVersion: gRPC probes
# are GA from 1.27) and the newest schema kubernetes-validate has.
KUBERNETES_VERSIONS = ("1.27.0", "1.37.0")
CRD_GROUPS = ("monitoring.coreos.com/",)  # no schema offline: checked by the tests below


@pytest.mark.parametrize("values", ALL_VALUES)
def test_lint_strict(helm: Path, values: str) -> None:
    done = run_helm(helm, "lint", "--strict", str(CHART), *values_args(values))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("values", ALL_VALUES)
def test_every_manifest_matches_the_kubernetes_schema(rendered: Rendered, values: str) -> None:
    manifests = rendered(values)
    kinds = {m["kind"] for m in manifests}
    assert {"Deployment", "StatefulSet", "Service", "PodDisruptionBudget"} <= kinds
    for m in manifests:
        if m["apiVersion"].startswith(CRD_GROUPS):
            continue
        for version in KUBERNETES_VERSIONS:
            kubernetes_validate.validate(m, version, strict=True)


@pytest.mark.parametrize("values", ALL_VALUES)
def test_notes_render(helm: Path, values: str) -> None:
    done = run_helm(helm, "install", "ttanjit", str(CHART), "--namespace", "games",
                    "--dry-run=client", *values_args(values))
    assert done.returncode == 0, done.stderr
    notes = done.stdout.split("NOTES:", 1)[1]
    assert "ttanjit-shard-0" in notes and "shard.replicas=N" in notes
    # the upgrade line works as pasted: helm upgrade looks in the current namespace
    assert "--namespace games --reuse-values --set shard.replicas=N" in notes
    assert "<no value>" not in notes


def test_shards_drain_before_they_stop(rendered: Rendered) -> None:
    manifests = rendered("default")
    sts = by_kind(manifests, "StatefulSet")["ttanjit-shard"]
    pod = sts["spec"]["template"]["spec"]
    (shard,) = pod["containers"]
    assert shard["command"] == ["python", "-m", "ttanjit.shard"]
    # `ttanjit drain`: gRPC Drain on the shard's own port (tests/integration/test_drain_cli.py).
    assert shard["lifecycle"]["preStop"]["exec"]["command"] == [
        "python", "-m", "ttanjit", "drain", "--timeout", "45"]
    assert pod["terminationGracePeriodSeconds"] == 60
    env = {e["name"]: e for e in shard["env"]}
    assert env["TTANJIT_DRAIN_TIMEOUT_S"]["value"] == "45"
    assert env["TTANJIT_SHARD_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert env["TTANJIT_ADVERTISE_HOST"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    # One shard at a time on upgrades, so the others take its games.
    assert sts["spec"]["updateStrategy"]["type"] == "RollingUpdate"
    assert sts["spec"]["replicas"] == 3
    headless = by_kind(manifests, "Service")[sts["spec"]["serviceName"]]
    assert headless["spec"]["clusterIP"] == "None"
    assert "ttanjit-shard" in by_kind(manifests, "PodDisruptionBudget")


def test_matchmaker_runs_replicated_behind_a_headless_service(rendered: Rendered) -> None:
    """Matchmaker replicas (leader through a JetStream KV lease, followers
    forward): 2 by default, rolled one at a time, at least one kept through
    disruptions, spread like the others; the gateways dial every replica
    through the headless Service (gRPC dns:///, a channel per replica)."""
    manifests = rendered("default")
    mm = by_kind(manifests, "Deployment")["ttanjit-matchmaker"]
    assert mm["spec"]["replicas"] == 2
    assert mm["spec"]["strategy"] == {"type": "RollingUpdate",
                                      "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    pod = mm["spec"]["template"]["spec"]
    spread = pod["topologySpreadConstraints"]
    assert {t["topologyKey"] for t in spread} == {"kubernetes.io/hostname",
                                                  "topology.kubernetes.io/zone"}
    assert all(t["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == "matchmaker"
               for t in spread)
    pdb = by_kind(manifests, "PodDisruptionBudget")["ttanjit-matchmaker"]
    assert pdb["spec"]["minAvailable"] == 1 and "maxUnavailable" not in pdb["spec"]
    assert pdb["spec"]["selector"]["matchLabels"] == mm["spec"]["selector"]["matchLabels"]
    services = by_kind(manifests, "Service")
    normal, headless = services["ttanjit-matchmaker"], services["ttanjit-matchmaker-headless"]
    assert normal["spec"]["type"] == "ClusterIP" and normal["spec"].get("clusterIP") != "None"
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["selector"] == mm["spec"]["selector"]["matchLabels"]
    assert [(p["name"], p["port"]) for p in headless["spec"]["ports"]] == [("grpc", 7200)]
    (gw,) = pod_specs(manifests)["Deployment/ttanjit-gateway"]["containers"]
    env = {e["name"]: e.get("value") for e in gw["env"]}
    assert env["TTANJIT_MATCHMAKER_ADDR"] == "dns:///ttanjit-matchmaker-headless:7200"
    (c,) = pod["containers"]
    mm_env = {e["name"]: e for e in c["env"]}  # the leader's address in the lease: its Pod IP
    assert mm_env["TTANJIT_ADVERTISE_HOST"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"


def test_gateway_metrics_are_not_on_its_public_port(rendered: Rendered) -> None:
    """/metrics on the gateway's own metrics port and an in-cluster Service;
    the public Service (maybe a LoadBalancer) and the Ingress carry only HTTP."""
    manifests = rendered("production-values.yaml")
    (gw,) = pod_specs(manifests)["Deployment/ttanjit-gateway"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in gw["ports"]}
    assert ports == {"http": 8080, "metrics": 9090}
    env = {e["name"]: e.get("value") for e in gw["env"]}
    assert env["TTANJIT_METRICS_PORT"] == "9090" and env["TTANJIT_HTTP_PORT"] == "8080"
    services = by_kind(manifests, "Service")
    assert [p["targetPort"] for p in services["ttanjit-gateway"]["spec"]["ports"]] == ["http"]
    scraped = services["ttanjit-gateway-metrics"]
    assert scraped["spec"]["type"] == "ClusterIP"
    assert [p["targetPort"] for p in scraped["spec"]["ports"]] == ["metrics"]
    (ingress,) = by_kind(manifests, "Ingress").values()
    backends = [p["backend"]["service"] for r in ingress["spec"]["rules"]
                for p in r["http"]["paths"]]
    assert backends == [{"name": "ttanjit-gateway", "port": {"name": "http"}}]


def test_gateway_believes_x_forwarded_for_only_behind_a_cluster_ip(
        template: Callable[..., Any]) -> None:
    """The client address keys the per-address limits (docs/websocket.md
    1.1): with a ClusterIP Service only the ingress or load balancer reaches
    the Pods, so X-Forwarded-For is believed from the cluster's private
    addresses, and the client is the last address a proxy appended, not
    the first, which the client writes itself (with "*", the default
    before, rotating it made every sign-up a new address); a NodePort or
    LoadBalancer Service may be reached by clients themselves, so it is
    not believed, unless the operator names the proxies."""
    def forwarded(*sets: str) -> str:
        done = template(*[a for s in sets for a in ("--set", s)])
        assert done.returncode == 0, done.stderr
        docs = [d for d in yaml.safe_load_all(done.stdout) if d]
        (gw,) = pod_specs(docs)["Deployment/ttanjit-gateway"]["containers"]
        return str({e["name"]: e.get("value") for e in gw["env"]}["TTANJIT_FORWARDED_ALLOW_IPS"])

    def client(allow: str, peer: str, header: str) -> str:
        """The client address the gateway's server (uvicorn, given the
        chart's value) makes of a request from ``peer`` with ``header``."""
        seen: list[str] = []

        async def app(scope: Any, receive: Any, send: Any) -> None:
            seen.append(scope["client"][0])

        scope = {"type": "http", "scheme": "http", "client": (peer, 40000),
                 "headers": [(b"x-forwarded-for", header.encode())]}
        asyncio.run(ProxyHeadersMiddleware(app, trusted_hosts=allow)(scope, None, None))  # type: ignore[arg-type]
        return seen[0]

    cluster = forwarded()
    # the client wrote "6.6.6.6"; the load balancer (10.0.3.1) and the
    # ingress Pod (10.42.0.7) appended the addresses they were reached from
    assert client(cluster, "10.42.0.7", "6.6.6.6, 203.0.113.9, 10.0.3.1") == "203.0.113.9"
    assert client(cluster, "10.42.0.7", "203.0.113.9") == "203.0.113.9"
    assert client(cluster, "203.0.113.50", "6.6.6.6") == "203.0.113.50"  # not a proxy
    assert forwarded("gateway.service.type=LoadBalancer") == "127.0.0.1"
    assert forwarded("gateway.service.type=NodePort") == "127.0.0.1"
    assert forwarded("gateway.service.type=LoadBalancer",
                     "gateway.forwardedAllowIps=10.0.0.0/8") == "10.0.0.0/8"


def test_shard_count_and_grace_follow_values(template: Callable[..., Any]) -> None:
    done = template("--set", "shard.replicas=7", "--set", "shard.terminationGracePeriodSeconds=90")
    assert done.returncode == 0, done.stderr
    sts = by_kind([d for d in yaml.safe_load_all(done.stdout) if d], "StatefulSet")["ttanjit-shard"]
    assert sts["spec"]["replicas"] == 7
    assert sts["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 90


def test_shard_capacity_is_a_value(template: Callable[..., Any], tmp_path: Path) -> None:
    """``shard.capacity``: the live games a shard takes (TTANJIT_CAPACITY,
    docs/capacity.md §3; the runbook's "raise the capacity"), rendered as the
    string Kubernetes wants, also for a number a values file gives (a float
    to helm); unset, no env and the shard's own default (2000) applies."""
    def shard_env(*args: str) -> dict[str, Any]:
        done = template(*args, "--show-only", "templates/shard.yaml")
        assert done.returncode == 0, done.stderr
        sts = by_kind([d for d in yaml.safe_load_all(done.stdout) if d], "StatefulSet")
        (c,) = sts["ttanjit-shard"]["spec"]["template"]["spec"]["containers"]
        return {e["name"]: e for e in c["env"]}

    assert shard_env("--set", "shard.capacity=3000")["TTANJIT_CAPACITY"] == {
        "name": "TTANJIT_CAPACITY", "value": "3000"}
    assert "TTANJIT_CAPACITY" not in shard_env()
    values = tmp_path / "capacity.yaml"
    values.write_text("shard:\n  capacity: 1000000\n")
    assert shard_env("-f", str(values))["TTANJIT_CAPACITY"]["value"] == "1000000"
    # the way before shard.capacity (extraEnv) would come after it and win
    done = template("--set", "shard.capacity=3000",
                    "--set", "shard.extraEnv[0].name=TTANJIT_CAPACITY",
                    "--set-string", "shard.extraEnv[0].value=2500")
    assert done.returncode != 0, "shard.capacity and extraEnv TTANJIT_CAPACITY rendered"
    assert "both set TTANJIT_CAPACITY" in done.stderr, done.stderr


@pytest.mark.parametrize("component", ["gateway", "matchmaker", "shard", "bots"])
def test_extra_env_values_must_be_strings(
        helm: Path, template: Callable[..., Any], component: str) -> None:
    """Kubernetes takes only strings as env values: ``--set
    <component>.extraEnv[0].value=3000`` (a number to helm) is refused by the
    schema at lint and template time, not by the API server at install;
    ``--set-string`` (or a quoted "3000" in a values file) renders, and so
    does ``valueFrom``."""
    name = f"{component}.extraEnv[0].name=TTANJIT_CAPACITY"
    number = f"{component}.extraEnv[0].value=3000"
    complaint = f"at '/{component}/extraEnv/0/value': got number, want string"
    done = template("--set", name, "--set", number)
    assert done.returncode != 0, f"{number} rendered"
    assert complaint in done.stderr, done.stderr
    done = run_helm(helm, "lint", "--strict", str(CHART), "--set", name, "--set", number)
    assert done.returncode != 0, f"{number} linted"
    assert complaint in done.stdout + done.stderr, done.stdout + done.stderr

    def env(*sets: str) -> dict[str, Any]:
        done = template("--set", name, *sets)
        assert done.returncode == 0, done.stderr
        docs = [d for d in yaml.safe_load_all(done.stdout) if d]
        kind = "StatefulSet" if component == "shard" else "Deployment"
        (c,) = pod_specs(docs)[f"{kind}/ttanjit-{component}"]["containers"]
        return {e["name"]: e for e in c["env"]}

    assert env("--set-string", number)["TTANJIT_CAPACITY"]["value"] == "3000"
    field = f"{component}.extraEnv[0].valueFrom.fieldRef.fieldPath=metadata.name"
    assert env("--set", field)["TTANJIT_CAPACITY"]["valueFrom"] == {
        "fieldRef": {"fieldPath": "metadata.name"}}


@pytest.mark.parametrize("values", ALL_VALUES)
def test_hpas_own_the_replica_count(rendered: Rendered, values: str) -> None:
    manifests = rendered(values)
    deployments = by_kind(manifests, "Deployment")
    hpas = by_kind(manifests, "HorizontalPodAutoscaler")
    scaled = set()
    for hpa in hpas.values():
        ref = hpa["spec"]["scaleTargetRef"]
        assert ref["kind"] == "Deployment" and ref["name"] in deployments
        assert "replicas" not in deployments[ref["name"]]["spec"], ref["name"]
        assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
        scaled.add(ref["name"])
    for name, dep in deployments.items():
        if name not in scaled:
            assert dep["spec"]["replicas"] >= 1, name
    autoscaling = values != "autoscaling-off-values.yaml"
    assert scaled == ({"ttanjit-gateway", "ttanjit-bots"} if autoscaling else set())


def _pod_security(pod: dict[str, Any], container: dict[str, Any]) -> dict[str, Any]:
    merged = dict(pod.get("securityContext", {}))
    merged.update(container.get("securityContext", {}))
    return merged


@pytest.mark.parametrize("values", ALL_VALUES)
def test_every_container_has_probes_resources_and_a_locked_down_context(
    rendered: Rendered, values: str
) -> None:
    specs = pod_specs(rendered(values))
    assert len(specs) == 4
    for workload, pod in specs.items():
        assert pod["automountServiceAccountToken"] is False, workload
        for c in pod.get("initContainers", []) + pod["containers"]:
            where = f"{workload}/{c['name']}"
            assert c.get("livenessProbe") and c.get("readinessProbe"), where
            requests = c["resources"]["requests"]
            assert requests.get("cpu") and requests.get("memory"), where
            assert c["resources"]["limits"].get("memory"), where
            sec = _pod_security(pod, c)
            assert sec["runAsNonRoot"] is True, where
            assert sec["allowPrivilegeEscalation"] is False, where
            assert sec["readOnlyRootFilesystem"] is True, where
            assert sec["capabilities"]["drop"] == ["ALL"], where
            assert not sec["capabilities"].get("add"), where
            assert sec["seccompProfile"]["type"] == "RuntimeDefault", where
            # The root file system is read-only: /tmp is an emptyDir.
            mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
            volumes = {v["name"]: v for v in pod["volumes"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], where
        if values == "autoscaling-off-values.yaml":
            assert "topologySpreadConstraints" not in pod
        else:
            keys = {t["topologyKey"] for t in pod["topologySpreadConstraints"]}
            assert keys == {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}


def test_grpc_services_have_grpc_probes_and_the_gateway_http_ones(rendered: Rendered) -> None:
    specs = pod_specs(rendered("default"))
    for workload, port in (("StatefulSet/ttanjit-shard", 7100),
                           ("Deployment/ttanjit-matchmaker", 7200)):
        (c,) = specs[workload]["containers"]
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            assert c[probe]["grpc"]["port"] == port, (workload, probe)
    # a draining shard is not ready (health "") but stays live: Kubernetes
    # must not restart it mid-drain (shard/grpc_api.py)
    (shard,) = specs["StatefulSet/ttanjit-shard"]["containers"]
    assert "service" not in shard["readinessProbe"]["grpc"]
    assert "service" not in shard["startupProbe"]["grpc"]
    assert shard["livenessProbe"]["grpc"]["service"] == "ttanjit.v1.ShardService.Liveness"
    (gw,) = specs["Deployment/ttanjit-gateway"]["containers"]
    assert gw["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert gw["readinessProbe"]["httpGet"]["path"] == "/readyz"
    # a bot worker is ready while connected to NATS (/healthz), live while
    # it runs (/metrics): a NATS outage must not restart every worker
    (bots,) = specs["Deployment/ttanjit-bots"]["containers"]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert bots[probe]["httpGet"]["port"] == "metrics"
    assert bots["startupProbe"]["httpGet"]["path"] == "/healthz"
    assert bots["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert bots["livenessProbe"]["httpGet"]["path"] == "/metrics"


def _protocol_env_names() -> set[str]:
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = text.split("## 6.", 1)[1]
    return set(re.findall(r"`(TTANJIT_[A-Z_]+)`", section))


@pytest.mark.parametrize("values", ALL_VALUES)
def test_configuration_follows_the_env_contract(rendered: Rendered, values: str) -> None:
    """docs/protocol.md §6: only the documented env vars, wired to real objects."""
    manifests = rendered(values)
    known = _protocol_env_names()
    services = by_kind(manifests, "Service")
    secrets = by_kind(manifests, "Secret")
    for workload, pod in pod_specs(manifests).items():
        (c,) = pod["containers"]
        env = {e["name"]: e for e in c["env"]}
        assert set(env) <= known, (workload, set(env) - known)
        nats = env["TTANJIT_NATS_URL"]
        if "valueFrom" in nats:  # (an address with a user in it: a Secret of the operator's)
            own = {"bots": "ttanjit-nats-bots", "gateway": "ttanjit-nats-gateway"}
            assert nats["valueFrom"]["secretKeyRef"]["name"] == own.get(
                workload.rpartition("-")[2], "ttanjit-nats")
        else:
            assert nats["value"].startswith("nats://")
        replicas = "1" if values == "single-nats-values.yaml" else "3"
        assert env["TTANJIT_JS_REPLICAS"]["value"] == replicas
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        if "metrics" in ports:
            assert env["TTANJIT_METRICS_PORT"]["value"] == str(ports["metrics"])
        if "grpc" in ports:
            assert env["TTANJIT_GRPC_PORT"]["value"] == str(ports["grpc"])
    (gw,) = pod_specs(manifests)["Deployment/ttanjit-gateway"]["containers"]
    env = {e["name"]: e for e in gw["env"]}
    host, port = env["TTANJIT_MATCHMAKER_ADDR"]["value"].removeprefix("dns:///").split(":")
    assert int(port) in {p["port"] for p in services[host]["spec"]["ports"]}
    assert services[host]["spec"]["clusterIP"] == "None"  # every replica's address
    ref = env["TTANJIT_TOKEN_SECRET"]["valueFrom"]["secretKeyRef"]
    if values == "external-nats-values.yaml":
        assert ref == {"name": "ttanjit-token", "key": "hmac"} and not secrets
    else:
        token = base64.b64decode(secrets[ref["name"]]["data"][ref["key"]]).decode()
        assert len(token) >= 32


def test_given_token_secret_is_used(template: Callable[..., Any]) -> None:
    secret = "s" * 40
    done = template("--set", f"auth.tokenSecret={secret}", "--show-only", "templates/secret.yaml")
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load(done.stdout)["data"]
    assert base64.b64decode(data["token-secret"]).decode() == secret


def test_a_nats_address_with_credentials_comes_from_a_secret(template: Callable[..., Any]) -> None:
    """Security audit: a user in nats.url was rendered as a plain value in
    every Deployment. With nats.existingSecret every service reads the
    address from that Secret, and no manifest holds it."""
    done = template("--set", "nats.url=nats://ttanjit:S3cret@nats:4222",
                    "--set", "nats.existingSecret=ttanjit-nats", "--set", "auth.tokenSecret=" + "s" * 40)
    assert done.returncode == 0, done.stderr
    assert "S3cret" not in done.stdout
    specs = pod_specs([d for d in yaml.safe_load_all(done.stdout) if d])
    assert len(specs) >= 4
    for workload, pod in specs.items():
        (c,) = pod["containers"]
        (url,) = [e for e in c["env"] if e["name"] == "TTANJIT_NATS_URL"]
        assert url == {"name": "TTANJIT_NATS_URL", "valueFrom": {"secretKeyRef": {
            "name": "ttanjit-nats", "key": "nats-url"}}}, workload
    assert template("--set", "nats.existingSecret=Not_A_Name").returncode != 0


@pytest.mark.parametrize("user", ["bots", "gateway"])
def test_the_bot_workers_and_gateways_can_have_a_nats_user_of_their_own(
        template: Callable[..., Any], user: str) -> None:
    """With nats.botsExistingSecret (nats.gatewayExistingSecret) the bot
    workers (the gateways) read their address — NATS's ttanjit-bots user,
    asks and answers only; ttanjit-gateway, publishing no records or
    results, making or deleting no streams (deploy/nats/values.yaml) — from that Secret, every
    other service from nats.existingSecret's; unset, they use the
    services' address."""
    def urls(*args: str) -> dict[str, Any]:
        done = template("--set", "auth.tokenSecret=" + "s" * 40, *args)
        assert done.returncode == 0, done.stderr
        specs = pod_specs([d for d in yaml.safe_load_all(done.stdout) if d])
        assert len(specs) >= 4
        return {w: next(e for e in pod["containers"][0]["env"] if e["name"] == "TTANJIT_NATS_URL")
                for w, pod in specs.items()}

    def secret(name: str) -> dict[str, Any]:
        return {"name": "TTANJIT_NATS_URL", "valueFrom": {"secretKeyRef": {
            "name": name, "key": "nats-url"}}}
    own = f"--set=nats.{user}ExistingSecret=ttanjit-nats-{user}"
    got = urls("--set", "nats.existingSecret=ttanjit-nats", own)
    (mine,) = [w for w in got if w.endswith(f"-{user}")]
    assert got.pop(mine) == secret(f"ttanjit-nats-{user}")
    assert all(e == secret("ttanjit-nats") for e in got.values()), got
    # without the services' Secret, the others keep nats.url
    got = urls(own)
    assert got.pop(mine) == secret(f"ttanjit-nats-{user}")
    assert all(e == {"name": "TTANJIT_NATS_URL", "value": "nats://nats:4222"}
               for e in got.values()), got
    assert all(e == {"name": "TTANJIT_NATS_URL", "value": "nats://nats:4222"}
               for e in urls().values())
    assert template(f"--set=nats.{user}ExistingSecret=Not_A_Name").returncode != 0


def test_the_shards_alone_get_the_record_key(template: Callable[..., Any]) -> None:
    """The shards sign the games' records with a key the gateways must not
    have (docs/protocol.md 5): from records.existingSecret, or
    records.signingKey put in a Secret of the release's; none given, no
    Pod has one (records unsigned, NOTES warn)."""
    def keys(*args: str) -> tuple[dict[str, Any], dict[str, Any]]:
        done = template("--set", "auth.tokenSecret=" + "s" * 40, *args)
        assert done.returncode == 0, done.stderr
        docs = [d for d in yaml.safe_load_all(done.stdout) if d]
        specs = pod_specs(docs)
        assert len(specs) >= 4
        got = {w: e for w, pod in specs.items() for e in pod["containers"][0]["env"]
               if e["name"] == "TTANJIT_RECORD_KEY"}
        return got, by_kind(docs, "Secret")

    got, _ = keys("--set", "records.existingSecret=ttanjit-records")
    assert got == {"StatefulSet/ttanjit-shard": {"name": "TTANJIT_RECORD_KEY", "valueFrom": {
        "secretKeyRef": {"name": "ttanjit-records", "key": "record-key"}}}}
    key = "k" * 40
    got, secrets = keys("--set", f"records.signingKey={key}")
    ref = got.pop("StatefulSet/ttanjit-shard")["valueFrom"]["secretKeyRef"]
    assert not got
    assert base64.b64decode(secrets[ref["name"]]["data"][ref["key"]]).decode() == key
    got, secrets = keys()
    assert got == {} and not [n for n in secrets if n.endswith("-record-key")]

    def rolled(*args: str) -> str:  # the shards' Pods change with the key: they roll
        done = template("--set", "auth.tokenSecret=" + "s" * 40, *args)
        assert done.returncode == 0, done.stderr
        sts = by_kind([d for d in yaml.safe_load_all(done.stdout) if d], "StatefulSet")
        (shard,) = sts.values()
        return str(shard["spec"]["template"]["metadata"]["annotations"]["checksum/records"])
    assert len({rolled(), rolled(f"--set=records.signingKey={key}"),
                rolled(f"--set=records.signingKey={'n' * 40}\\,{key}")}) == 3


def _labels_match(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


@pytest.mark.parametrize("values", ALL_VALUES)
def test_services_and_budgets_select_pods(rendered: Rendered, values: str) -> None:
    manifests = rendered(values)
    pods = [m["spec"]["template"] for m in manifests if m["kind"] in ("Deployment", "StatefulSet")]
    for svc in by_kind(manifests, "Service").values():
        matched = [p for p in pods if _labels_match(svc["spec"]["selector"], p["metadata"]["labels"])]
        assert len(matched) == 1, svc["metadata"]["name"]
        names = {p["name"] for c in matched[0]["spec"]["containers"] for p in c["ports"]}
        assert {p["targetPort"] for p in svc["spec"]["ports"]} <= names
    for pdb in by_kind(manifests, "PodDisruptionBudget").values():
        sel = pdb["spec"]["selector"]["matchLabels"]
        assert any(_labels_match(sel, p["metadata"]["labels"]) for p in pods)


def test_monitoring_is_off_by_default(rendered: Rendered) -> None:
    kinds = {m["kind"] for m in rendered("default")}
    assert not kinds & {"ServiceMonitor", "PrometheusRule", "ConfigMap"}


def test_monitoring_on_renders_monitors_rules_and_dashboards(rendered: Rendered) -> None:
    manifests = rendered("monitoring-on-values.yaml")
    services = by_kind(manifests, "Service")
    monitors = by_kind(manifests, "ServiceMonitor")
    assert set(monitors) == {f"ttanjit-{c}" for c in ("gateway", "matchmaker", "shard", "bots")}
    for monitor in monitors.values():
        assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
        sel = monitor["spec"]["selector"]["matchLabels"]
        (svc,) = [s for s in services.values() if _labels_match(sel, s["metadata"]["labels"])]
        (endpoint,) = monitor["spec"]["endpoints"]
        assert endpoint["port"] == "metrics"
        assert endpoint["port"] in {p["name"] for p in svc["spec"]["ports"]}
        assert svc["spec"].get("type", "ClusterIP") == "ClusterIP", svc["metadata"]["name"]
    gateway_sel = monitors["ttanjit-gateway"]["spec"]["selector"]["matchLabels"]
    assert _labels_match(gateway_sel, services["ttanjit-gateway-metrics"]["metadata"]["labels"])
    (rule,) = by_kind(manifests, "PrometheusRule").values()
    assert rule["spec"] == release_alerts("ttanjit")
    dashboards = by_kind(manifests, "ConfigMap")
    files = sorted((ROOT / "deploy" / "grafana").glob("*.json"))
    assert len(dashboards) == len(files) >= 3
    for cm in dashboards.values():
        assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
        assert cm["metadata"]["namespace"] == "monitoring"
        ((name, body),) = cm["data"].items()
        assert json.loads(body) == json.loads((ROOT / "deploy" / "grafana" / name).read_text())


def release_alerts(fullname: str) -> Any:
    """The rule file as a release's PrometheusRule carries it: its
    kube-state-metrics alerts match that release's workloads only."""
    text = (ROOT / "deploy" / "prometheus" / "ttanjit-alerts.yaml").read_text()
    text = text.replace('=~".*ttanjit.*-(', f'=~"{fullname}-(')
    return yaml.safe_load(text.replace('=~".*ttanjit.*-shard"', f'=~"{fullname}-shard"'))


def test_draining_pods_are_still_scraped(rendered: Rendered) -> None:
    """Operator audit: a terminating Pod leaves its Service's Endpoints when
    preStop starts, and the ServiceMonitors scrape Endpoints: a draining
    shard's games going to 0 and its handovers (README, "Watch it
    happen") were never seen. The metrics Services of the shards and
    gateways keep not-ready Pods; the matchmaker's, whose DNS names the
    replicas the gateways call, does not."""
    services = by_kind(rendered("monitoring-on-values.yaml"), "Service")
    for name in ("ttanjit-shard-headless", "ttanjit-gateway-metrics"):
        assert services[name]["spec"].get("publishNotReadyAddresses") is True, name
    assert not services["ttanjit-matchmaker-headless"]["spec"].get("publishNotReadyAddresses")
    assert not services["ttanjit-gateway"]["spec"].get("publishNotReadyAddresses")


def test_the_rules_match_the_releases_own_workloads(template: Callable[..., Any]) -> None:
    """Operator audit: the kube-state-metrics alerts matched any Deployment
    whose name held "gateway" (a critical page for istio-ingressgateway)
    and any StatefulSet with "shard" (mongodb-shard0), in any namespace.
    The file matches names with "ttanjit" in them; a release's rule, its
    own workloads' names, whatever its fullname."""
    done = template("--set", "monitoring.prometheusRule.enabled=true",
                    "--set", "fullnameOverride=games")
    assert done.returncode == 0, done.stderr
    manifests = list(yaml.safe_load_all(done.stdout))
    (rule,) = by_kind(manifests, "PrometheusRule").values()
    assert rule["spec"] == release_alerts("games")
    exprs = " ".join(r["expr"] for g in rule["spec"]["groups"] for r in g["rules"])
    assert 'deployment=~"games-(gateway|matchmaker|bots)"' in exprs
    assert 'statefulset=~"games-shard"' in exprs and ".*" not in exprs.replace('"(.*ttanjit.*-)?shard"', "")
    assert {"games-gateway", "games-matchmaker", "games-bots"} <= set(by_kind(manifests, "Deployment"))
    assert "games-shard" in by_kind(manifests, "StatefulSet")


def test_runbook_links_open_where_the_readme_is_served(
        template: Callable[..., Any]) -> None:
    """``monitoring.prometheusRule.runbookBaseUrl``: every alert's runbook is
    its README section at that address (a relative "README.md#…" opens
    nowhere from Alertmanager or Grafana); the rules are otherwise the file's."""
    base = "https://git.example.com/games/ttanjit/-/blob/main/README.md"
    done = template("--set", "monitoring.prometheusRule.enabled=true",
                    "--set", f"monitoring.prometheusRule.runbookBaseUrl={base}")
    assert done.returncode == 0, done.stderr
    (rule,) = by_kind(list(yaml.safe_load_all(done.stdout)), "PrometheusRule").values()
    alerts = release_alerts("ttanjit")
    theirs = [r for g in rule["spec"]["groups"] for r in g["rules"]]
    ours = [r for g in alerts["groups"] for r in g["rules"]]
    assert len(theirs) == len(ours) >= 6
    for got, want in zip(theirs, ours, strict=True):
        page, _, anchor = want["annotations"]["runbook_url"].partition("#")
        assert got["annotations"]["runbook_url"] == f"{base}#{anchor}"
        assert {**got["annotations"], "runbook_url": ""} == {**want["annotations"],
                                                             "runbook_url": ""}
        assert got["expr"] == want["expr"]


def test_network_policies_let_each_component_reach_only_what_it_serves(rendered: Rendered) -> None:
    # on by default (a peer that reaches a shard's link port can act for
    # any player: fuzz finding); off only when asked
    assert set(by_kind(rendered("default"), "NetworkPolicy")) == set(
        by_kind(rendered("network-policy-values.yaml"), "NetworkPolicy"))
    assert not by_kind(rendered("open-network-values.yaml"), "NetworkPolicy")
    manifests = rendered("network-policy-values.yaml")
    policies = by_kind(manifests, "NetworkPolicy")
    pods = {m["metadata"]["name"]: m["spec"]["template"] for m in manifests
            if m["kind"] in ("Deployment", "StatefulSet")}
    assert set(policies) == set(pods)
    monitoring = {"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "monitoring"}}}

    def component(peer: dict[str, Any]) -> str | None:
        labels = peer.get("podSelector", {}).get("matchLabels", {})
        return labels.get("app.kubernetes.io/component")

    allowed: dict[tuple[str, str], list[Any]] = {}
    for name, policy in policies.items():
        pod = pods[name]
        assert _labels_match(policy["spec"]["podSelector"]["matchLabels"], pod["metadata"]["labels"])
        ports = {p["name"] for c in pod["spec"]["containers"] for p in c["ports"]}
        for rule in policy["spec"]["ingress"]:
            for port in rule["ports"]:
                assert port["port"] in ports, (name, port)
                peers = [component(p) or p for p in rule["from"]]
                allowed.setdefault((name.removeprefix("ttanjit-"), port["port"]), []).extend(peers)
    assert allowed[("matchmaker", "grpc")] == ["gateway", "matchmaker"]  # followers forward
    assert sorted(allowed[("shard", "grpc")]) == ["gateway", "matchmaker", "shard"]
    for metrics in (("shard", "metrics"), ("matchmaker", "metrics"), ("bots", "metrics"),
                    ("gateway", "metrics")):
        assert monitoring in allowed[metrics], metrics
    assert monitoring not in allowed[("gateway", "http")]  # /metrics is not there
    assert {"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "ingress-nginx"}}} in allowed[("gateway", "http")]


BAD_VALUES = [
    ("shard.replicas=0", "/shard/replicas"),
    ("shard.terminationGracePeriodSeconds=5", "/shard/terminationGracePeriodSeconds"),
    ("shard.replicas=three", "/shard/replicas"),
    ("shard.capacity=0", "/shard/capacity"),
    ("shard.capacity=lots", "/shard/capacity"),
    ("shard.extraEnv[0].name=A,shard.extraEnv[0].vaule=1", "/shard/extraEnv/0"),
    ("securityContext.allowPrivilegeEscalation=true", "/securityContext/allowPrivilegeEscalation"),
    ("securityContext.runAsNonRoot=false", "/securityContext/runAsNonRoot"),
    ("podSecurityContext.runAsNonRoot=false", "/podSecurityContext/runAsNonRoot"),
    ("nats.url=http://nats:4222", "/nats/url"),
    ("nats.jetstreamReplicas=2", "/nats/jetstreamReplicas"),
    ("gateway.port=70000", "/gateway/port"),
    ("gateway.replicaz=3", "/gateway"),
    ("image.pullPolicy=Sometimes", "/image/pullPolicy"),
    ("logLevel=loud", "/logLevel"),
    ("matchmaker.replicas=0", "/matchmaker/replicas"),
    ("matchmaker.replicas=1", "matchmaker.pdb.minAvailable"),
    ("matchmaker.pdb.minAvailable=100%", "matchmaker.pdb.minAvailable (100%)"),
    ("matchmaker.replicas=3,matchmaker.pdb.minAvailable=70%", "must keep fewer than"),
    ("gateway.metricsPort=8080", "gateway.port and gateway.metricsPort are both 8080"),
    ("shard.metricsPort=7100", "shard.grpcPort and shard.metricsPort are both 7100"),
    ("shard.linkPort=7100", "shard.grpcPort and shard.linkPort are both 7100"),
    ("matchmaker.metricsPort=7200", "matchmaker.grpcPort and matchmaker.metricsPort"),
    ("monitoring.prometheusRule.runbookBaseUrl=README.md", "/monitoring/prometheusRule"),
    ("matchmaker.pdb.maxUnavailable=1", "/matchmaker/pdb"),
    ("gateway.metricsPort=0", "/gateway/metricsPort"),
    ("bots.autoscaling.targetCPUUtilizationPercentage=150", "/bots/autoscaling"),
    ("gateway.resources.requests.cpu=lots", "/gateway/resources/requests/cpu"),
    ("gateway.autoscaling.minReplicas=9,gateway.autoscaling.maxReplicas=3", "minReplicas"),
    ("auth.tokenSecret=short", "auth.tokenSecret"),
    ("records.signingKey=short", "records.signingKey"),
    ("records.signingKey=" + "k" * 40 + "\\,short", "records.signingKey"),
    ("records.signingKey=" + "k" * 40 + ",records.existingSecret=r", "not both"),
    ("shard.drain.timeoutSeconds=60", "must leave 10 s of shard.terminationGracePeriodSeconds"),
    # the SIGTERM drain's 5 s after a preStop drain of 59 outlast 60 (operator audit)
    ("shard.drain.timeoutSeconds=51", "must leave 10 s of shard.terminationGracePeriodSeconds (60)"),
    ("shard.drain.command=null", "/shard/drain"),
    ("bots.livenessPath=healthz", "/bots/livenessPath"),
    ("gateway.forwardedAllowIps=proxy;rm", "/gateway/forwardedAllowIps"),
    ("gateway.maxConnections=-1", "/gateway/maxConnections"),
]


@pytest.mark.parametrize(("setting", "complaint"), BAD_VALUES)
def test_bad_values_are_rejected(template: Callable[..., Any], setting: str, complaint: str) -> None:
    done = template("--set", setting)
    assert done.returncode != 0, f"{setting} rendered"
    assert complaint in done.stderr, done.stderr


def test_an_upgrade_that_reuses_a_releases_values_renders(helm: Path, tmp_path: Path) -> None:
    """README's upgrade (`--reuse-values`) keeps the release's values, not
    the new chart's defaults: values from before `gateway.signupLimit`
    existed failed to render (review finding). The gateway gets the
    defaults then; a burst of 0 (no limit) stays 0. So with
    `gateway.maxConnections` (12,000; 0 = no cap)."""
    chart = tmp_path / "ttanjit"
    shutil.copytree(CHART, chart)
    old = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    del old["gateway"]["signupLimit"]  # the values of a release from before it
    del old["gateway"]["maxConnections"]
    del old["records"]  # (no record key then: unsigned, as that release's)
    (chart / "values.yaml").write_text(yaml.safe_dump(old), encoding="utf-8")

    def gw_env(path: Path, *args: str) -> dict[str, str]:
        done = run_helm(helm, "template", "ttanjit", str(path), "--namespace", "games", *args)
        assert done.returncode == 0, done.stderr
        (gw,) = pod_specs([d for d in yaml.safe_load_all(done.stdout) if d])[
            "Deployment/ttanjit-gateway"]["containers"]
        return {e["name"]: e["value"] for e in gw["env"]
                if e["name"].startswith(("TTANJIT_SIGNUP_", "TTANJIT_MAX_CONNECTIONS"))}

    assert gw_env(chart) == {"TTANJIT_SIGNUP_BURST": "30", "TTANJIT_SIGNUP_PER_MIN": "30",
                             "TTANJIT_MAX_CONNECTIONS": "12000"}
    assert gw_env(CHART) == gw_env(chart)
    assert gw_env(CHART, "--set", "gateway.signupLimit.burst=0")["TTANJIT_SIGNUP_BURST"] == "0"
    assert gw_env(CHART, "--set", "gateway.maxConnections=0")["TTANJIT_MAX_CONNECTIONS"] == "0"
