"""The built-in strategies; each module exposes STRATEGY or STRATEGIES for the registry."""
