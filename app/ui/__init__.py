"""Small reusable widgets: model picker, guarded runs with progress, downloads."""
