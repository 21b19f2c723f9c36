#!/bin/sh
# Builds the ttanjit wheel with its generated gRPC stubs (the `make proto`
# step: stubs are never committed).  Used by the builder stage of
# deploy/Dockerfile and by tests/chart/test_image.py.
#   deploy/build-wheel.sh SOURCE_DIR WHEEL_DIR [pip wheel options…]
# SOURCE_DIR is a copy of the repository (pyproject.toml, proto/, services/):
# its services/ttanjit/v1/ is regenerated.
set -eu
src=$1
out=$2
shift 2
cd "$src"
rm -rf services/ttanjit/v1
mkdir -p services/ttanjit/v1
protos=$(find proto/ttanjit/v1 -name '*.proto' 2>/dev/null | sort)
if [ -n "$protos" ]; then
  # shellcheck disable=SC2086 # one argument per file
  python -m grpc_tools.protoc -Iproto --python_out=services --grpc_python_out=services \
    --pyi_out=services $protos
fi
touch services/ttanjit/v1/__init__.py
python -m pip wheel --no-deps --wheel-dir "$out" "$@" .
