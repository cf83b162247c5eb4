"""Outbound HTTP for engines, judges and webhooks: the transport, the network backend, the
allowed-hosts and private-address policy, the destinations check and one retry loop."""
