"""Every write of the assistant goes through a service here."""
