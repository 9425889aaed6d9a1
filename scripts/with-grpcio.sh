#!/usr/bin/env bash
# Runs a command with gRPC's own C-core client available to Python (`import grpc`): Python's
# `grpcio`, installed from PyPI into target/pydeps when it is missing.
#
#   bash scripts/with-grpcio.sh cargo run --example grpc_conformance --features tower,tonic
set -euo pipefail
cd "$(dirname "$0")/.."
deps="$PWD/target/pydeps"
export PYTHONPATH="$deps${PYTHONPATH:+:$PYTHONPATH}"
if ! python3 -c "import grpc" 2>/dev/null; then
    echo "grpcio is missing: installing it into $deps" >&2
    python3 -m pip install --quiet --disable-pip-version-check --target "$deps" grpcio
fi
exec "$@"
