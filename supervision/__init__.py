"""OTP-style supervision on anyio: strategies, restart types, intensity, backoff and escalation."""
