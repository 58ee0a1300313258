"""Local fake provider servers: real HTTP on 127.0.0.1 speaking each provider's wire format."""
