"""kruise-manager: controllers (while leading) and admission webhooks (always)."""
