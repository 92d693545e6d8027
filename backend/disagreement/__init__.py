"""Base vs. reasoning model: training the reasoning adapter and measuring where the two disagree."""
