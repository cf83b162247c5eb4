"""Watching a case over time: schedules, alerts, webhooks, annotations and the dashboard."""
