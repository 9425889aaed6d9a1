#!/usr/bin/env python3
"""gRPC's own C-core client (Python's `grpcio`) making one unary call with a service config:
what `examples/grpc_conformance.rs` compares `ServiceConfigLayer` with, call by call.

    python3 scripts/grpc_cclient.py TARGET PATH CONFIG_JSON

Sends the bytes `foo` to PATH on TARGET (`127.0.0.1:PORT`, plaintext) over a new channel
carrying CONFIG_JSON as its service config, and prints the call's final status code name
(`OK`, `ABORTED`, …). The server counts the attempts.
"""
import sys

import grpc


def main():
    target, path, config = sys.argv[1], sys.argv[2], sys.argv[3]
    options = [
        ("grpc.service_config", config),
        ("grpc.enable_retries", 1),
        # The config is the one given, not one resolved by DNS.
        ("grpc.service_config_disable_resolution", 1),
    ]
    with grpc.insecure_channel(target, options=options) as channel:
        call = channel.unary_unary(path)
        try:
            call(b"foo", timeout=20)
            print("OK")
        except grpc.RpcError as error:
            print(error.code().name)


if __name__ == "__main__":
    main()
