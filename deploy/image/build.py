"""Build the ttanjit image with no image registry — `make image`.

1. Installs what it needs from Debian's packages (podman, buildah, runc,
   mmdebstrap, iptables, netavark, aardvark-dns) when missing.
2. Makes the base images from Debian packages with mmdebstrap and imports
   them with ``podman import`` (no registry): ``python`` (Debian's python3
   in a venv at /opt/python, first on PATH, so ``python`` and ``pip`` are what
   the official python image has) and ``node`` (Debian's nodejs and npm,
   only for the Dockerfile's web stage).  Each is tagged by a hash of its
   recipe, so it is made once per machine.
3. Builds deploy/Dockerfile with them through its PYTHON_IMAGE / NODE_IMAGE
   build arguments, the host's CA bundle as the build secret ``cacert`` (for a
   network that intercepts TLS; never in a layer), and tags
   ``ttanjit/ttanjit:<version>`` (the chart's appVersion).  The image carries
   a label with a hash of everything the build reads; when that hash is the
   one of the image already there, nothing is built.

Runs as root (a rootful podman).  This kernel mixes cgroup v1 and v2: crun
refuses, runc works, so every podman call here says ``--runtime runc``;
RLIMIT_NOFILE above 20,000 or NPROC above 32,768 is refused, so the build
and the containers get lower ulimits (``ULIMITS``).

    python3 deploy/image/build.py            # build (or say it is up to date)
    python3 deploy/image/build.py --print    # the tag and the content hash
    python3 deploy/image/build.py --check    # exit 3 if no container can run here
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import fnmatch
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
REPOSITORY = "ttanjit/ttanjit"
LABEL = "io.ttanjit.source-hash"
LOCK = Path(tempfile.gettempdir()) / "ttanjit-image-build.lock"
RUNTIME = ["--runtime", "runc"]
ULIMITS = ["--ulimit", "nofile=16384:16384", "--ulimit", "nproc=16384:16384"]
NO_RUNTIME = 3  # exit code of --check (and of a build) where no container can run

PACKAGES = {  # Debian package -> a file it installs
    "podman": "/usr/bin/podman",
    "buildah": "/usr/bin/buildah",
    "runc": "/usr/bin/runc",
    "mmdebstrap": "/usr/bin/mmdebstrap",
    "iptables": "/usr/sbin/iptables",
    "netavark": "/usr/lib/podman/netavark",
    "aardvark-dns": "/usr/lib/podman/aardvark-dns",
    "catatonit": "/usr/bin/catatonit",
}

SUITE = "bookworm"
MIRRORS = [
    f"deb http://deb.debian.org/debian {SUITE} main",
    f"deb http://deb.debian.org/debian {SUITE}-updates main",
    f"deb http://deb.debian.org/debian-security {SUITE}-security main",
]
SLIM = [  # what the slim images leave out too
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/info/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
]
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BASES: dict[str, dict[str, object]] = {
    # Debian 12's python3 is 3.11, the official image's python:3.11-slim-bookworm
    "python": {
        "include": ["python3", "python3-venv", "passwd", "ca-certificates"],
        "hooks": ['chroot "$1" python3 -m venv /opt/python'],
        "changes": [f"ENV PATH=/opt/python/bin:{PATH}", "ENV LANG=C.UTF-8",
                    'CMD ["python"]'],
        "arg": "PYTHON_IMAGE",
    },
    "node": {
        "include": ["nodejs", "npm", "ca-certificates"],
        "hooks": [],
        "changes": [f"ENV PATH={PATH}", "ENV LANG=C.UTF-8", 'CMD ["node"]'],
        "arg": "NODE_IMAGE",
    },
}
CA_BUNDLE = Path(os.environ.get("TTANJIT_BUILD_CA", "/etc/ssl/certs/ca-certificates.crt"))


def log(msg: str) -> None:
    print(f"image: {msg}", file=sys.stderr, flush=True)


def run(*cmd: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, text=True, **kw)  # type: ignore[call-overload, no-any-return]


def version() -> str:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def tag() -> str:
    return f"{REPOSITORY}:{version()}"


# --- what the build reads ------------------------------------------------------

def _ignored(rel: str, patterns: list[tuple[bool, str]]) -> bool:
    parts = rel.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))] + parts
    hit = False
    for negate, pattern in patterns:
        if any(fnmatch.fnmatch(p, pattern) for p in prefixes):
            hit = not negate
    return hit


def context_files() -> list[str]:
    """Files of the build context the Dockerfile copies (the COPY sources,
    less .dockerignore), plus the Dockerfile and this recipe."""
    patterns = []
    for raw in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            patterns.append((line.startswith("!"), line.lstrip("!").rstrip("/").removeprefix("**/")))
    roots = ["pyproject.toml", "constraints.txt", "proto", "services", "deploy/build-wheel.sh",
             "deploy/Dockerfile", "deploy/image", ".dockerignore"]
    out: list[str] = []
    for top in roots:
        path = ROOT / top
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            rel = f.relative_to(ROOT).as_posix()
            if top in ("deploy/Dockerfile", "deploy/image", ".dockerignore") or not _ignored(
                    rel, patterns):
                if "__pycache__" not in rel:
                    out.append(rel)
    return out


def source_hash() -> str:
    h = hashlib.sha256()
    for rel in context_files():
        h.update(rel.encode() + b"\0")
        h.update((ROOT / rel).read_bytes())
        h.update(b"\0")
    h.update(repr(sorted(BASES.items())).encode())
    return h.hexdigest()[:16]


def base_tag(name: str) -> str:
    recipe = repr((SUITE, MIRRORS, SLIM, BASES[name])).encode()
    return f"localhost/ttanjit-base/{name}:{SUITE}-{hashlib.sha256(recipe).hexdigest()[:12]}"


# --- the tools -----------------------------------------------------------------

def ensure_packages() -> None:
    missing = [pkg for pkg, path in PACKAGES.items() if not Path(path).exists()]
    if not missing:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        log(f"cannot install {' '.join(missing)}: needs root and apt-get (Debian)")
        raise SystemExit(NO_RUNTIME)
    log(f"installing {' '.join(missing)} from Debian")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run("apt-get", "update", "-qq", check=True, env=env)
    run("apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing,
        check=True, env=env, stdout=subprocess.DEVNULL)


def image_exists(ref: str) -> bool:
    return run("podman", "image", "exists", ref).returncode == 0


def image_label(ref: str, label: str) -> str:
    done = run("podman", "image", "inspect", ref, "--format",
               "{{index .Labels \"" + label + "\"}}", capture_output=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def runtime_works(image: str) -> bool:
    done = run("podman", "run", "--rm", *RUNTIME, *ULIMITS, "--network", "none", image,
               "true", capture_output=True)
    if done.returncode != 0:
        log(f"a container does not run here: {done.stderr.strip()[-500:]}")
    return done.returncode == 0


def make_base(name: str) -> str:
    ref = base_tag(name)
    if image_exists(ref):
        return ref
    spec = BASES[name]
    t0 = time.monotonic()
    log(f"making base image {ref} with mmdebstrap (Debian {SUITE})")
    with tempfile.TemporaryDirectory(prefix="ttanjit-base-") as tmp:
        tar = Path(tmp) / f"{name}.tar"
        cmd = ["mmdebstrap", "--quiet", "--variant=minbase",
               "--include=" + ",".join(spec["include"]),  # type: ignore[arg-type]
               *SLIM,
               *[f"--customize-hook={h}" for h in spec["hooks"]],  # type: ignore[attr-defined]
               SUITE, str(tar), *MIRRORS]
        run(*cmd, check=True)
        changes = [a for c in spec["changes"] for a in ("--change", c)]  # type: ignore[attr-defined]
        run("podman", "import", "--quiet", *changes, str(tar), ref, check=True,
            stdout=subprocess.DEVNULL)
    log(f"base image {ref} in {time.monotonic() - t0:.0f} s")
    return ref


@contextlib.contextmanager
def one_build_at_a_time() -> Iterator[None]:
    """Builds on one machine wait for each other (images, base images and the
    apt-get that installs podman are the machine's): the second one then
    finds the image up to date instead of building it again beside the first."""
    with open(LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build(force: bool = False) -> str:
    with one_build_at_a_time():
        return _build(force)


def _build(force: bool) -> str:
    ensure_packages()
    ref, digest = tag(), source_hash()
    if not force and image_label(ref, LABEL) == digest:
        log(f"{ref} is up to date (source hash {digest})")
        return ref
    old = image_id(ref)
    bases = {name: make_base(name) for name in BASES}
    if not runtime_works(bases["python"]):
        raise SystemExit(NO_RUNTIME)
    t0 = time.monotonic()
    log(f"building {ref} from deploy/Dockerfile (source hash {digest})")
    args = [a for name, spec in BASES.items()
            for a in ("--build-arg", f"{spec['arg']}={bases[name]}")]
    args += ["--build-arg", f"SOURCE_HASH={digest}"]
    secret = ["--secret", f"id=cacert,src={CA_BUNDLE}"] if CA_BUNDLE.is_file() else []
    with tempfile.TemporaryFile("w+") as out:  # the build's log, shown if it fails
        done = run("podman", "build", *RUNTIME, *ULIMITS, "--network", "host", "--layers",
                   "-f", str(DOCKERFILE), *args, *secret, "--label", f"{LABEL}={digest}",
                   "-t", ref, str(ROOT), stdout=out, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            out.seek(0)
            sys.stderr.write(out.read()[-12000:])
            raise SystemExit(f"image: podman build failed (exit {done.returncode})")
    log(f"built {ref} in {time.monotonic() - t0:.0f} s")
    if old and old != image_id(ref):  # the image it replaces, now untagged
        run("podman", "rmi", old, capture_output=True)
    # untagged stages of builds older than a week (the layer cache of recent
    # builds stays)
    run("podman", "image", "prune", "-f", "--filter", "until=168h", capture_output=True)
    return ref


def image_id(ref: str) -> str:
    done = run("podman", "image", "inspect", ref, "--format", "{{.Id}}", capture_output=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--print", action="store_true", help="print the tag and source hash")
    p.add_argument("--check", action="store_true",
                   help=f"exit {NO_RUNTIME} unless a container can run here")
    p.add_argument("--force", action="store_true", help="build even when up to date")
    args = p.parse_args()
    if args.print:
        print(tag(), source_hash())
        return 0
    if args.check:
        with one_build_at_a_time():
            ensure_packages()
            return 0 if runtime_works(make_base("python")) else NO_RUNTIME
    build(force=args.force)
    print(tag())
    return 0


if __name__ == "__main__":
    sys.exit(main())
