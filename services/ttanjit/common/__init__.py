"""Helpers shared by the services: config, NATS/JetStream, gRPC, metrics, logging."""
