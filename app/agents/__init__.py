"""Agents: Relevo's tools over the Model Context Protocol (API.md "Agents")."""
