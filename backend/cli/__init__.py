"""`python -m backend <feature> <action> ... [--json]`: the pages' computations, headless.

Each feature contributes `add_commands(subparsers)`; a command handler returns a JSON-able value
(printed as JSON with --json, else as readable text). A UserError exits with status 2.
"""
