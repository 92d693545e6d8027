class UserError(Exception):
    """An error the user caused (bad input, unknown model, over budget); its message is shown as is."""
