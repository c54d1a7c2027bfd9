"""The demo's moving parts: a traffic simulator (Prometheus exporter) and a Prometheus runner."""
